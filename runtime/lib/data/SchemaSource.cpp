//===- SchemaSource.cpp - any data set through a schema, streamed --------===//
//
// Opening reads the data set once, in blocks of M valid rows (RecordParts),
// to count its examples, report or count malformed records, and note where
// each block starts. Example e is then row e % M of block e / M, and a block
// is parsed again from its start whenever it is needed and not held, so a
// batch stays a pure function of the example indices (resume, thread counts
// and eviction change nothing).
//
// Which blocks are held depends on the order the stream visits:
//   resident   data whose rows fit StreamOptions::residentBudget (1 GiB) is
//              kept whole after the first read: the whole-epoch shuffle of
//              the in-memory readers, parsed once;
//   windowed   larger data is shuffled in windows of N examples (--shuffle
//              buffer:N, or N = windowBudget's worth); the blocks of the
//              window in use and of the next one are held, and a loader
//              thread parses the next window's blocks while this one trains;
//   sequential file order (evaluation, --shuffle none): the block in use
//              and the next.
// Reading memory is thus bounded by the window, whatever the file's size.
//
//===----------------------------------------------------------------------===//

#include "ExampleSource.h"
#include "RecordParts.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

using namespace embc::runtime;
using namespace embc::runtime::data;

namespace {

/// A feature and the slot of the column it reads.
struct Binding {
  size_t feature;
  size_t slot;
};

std::shared_ptr<const std::unordered_map<std::string, int64_t>>
loadVocabulary(const SchemaColumn &column, const std::string &dataPath) {
  std::string path = column.vocabFile;
  if (!path.empty() && path[0] != '/') {
    const size_t slash = dataPath.rfind('/');
    path = (slash == std::string::npos ? std::string() : dataPath.substr(0, slash + 1)) + path;
  }
  std::ifstream file(path);
  if (!file)
    throw DataError(columnWhere(column) + ": cannot read its vocabulary file " + path);
  auto words = std::make_shared<std::unordered_map<std::string, int64_t>>();
  std::string line;
  for (int64_t number = 1; std::getline(file, line); ++number) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (!words->emplace(line, number).second)
      throw DataError(path + ":" + std::to_string(number) + ": '" + excerptOfLine(line) +
                      "' is already on line " + std::to_string(words->at(line)) +
                      " (a vocabulary lists each string once)");
  }
  if (words->empty())
    throw DataError(columnWhere(column) + ": its vocabulary file " + path + " is empty");
  return words;
}

/// Binds each feature to its column's slot; a slot per column read.
RowLayout bindFeatures(const DataSchema &schema, const std::vector<FeatureSpec> &features,
                       const std::string &dataPath, std::vector<Binding> &bindings) {
  RowLayout layout;
  std::map<std::string, size_t> slotOf;
  layout.slots.reserve(schema.columns.size()); // slots keep their address
  for (size_t f = 0; f < features.size(); ++f) {
    const FeatureSpec &spec = features[f];
    const SchemaColumn *column = schema.find(spec.column());
    const std::string feature = "feature '" + spec.name + "'";
    const std::string origin = schema.origin + " " + dataPath;
    if (!column)
      throw DataError(feature + " reads column '" + spec.column() + "', which " + origin +
                      " does not have (columns: " + schema.columnList() + ")");
    if (std::optional<std::string> problem = bindingProblem(*column, spec))
      throw DataError(feature + " cannot read column '" + column->name + "' of " + origin +
                      ": " + *problem);
    auto [it, added] = slotOf.emplace(column->name, layout.slots.size());
    if (added) {
      ColumnSlot slot;
      slot.column = column;
      slot.field = column->field;
      switch (column->type) {
      case ColumnType::Label:
        slot.index = layout.labels++;
        break;
      case ColumnType::Dense:
        slot.index = size_t(layout.denseWidth);
        layout.denseWidth += column->width;
        break;
      case ColumnType::Categorical:
        slot.index = layout.bags++;
        if (column->encoding == IdEncoding::Vocab)
          slot.vocabulary = loadVocabulary(*column, dataPath);
        break;
      }
      layout.slots.push_back(slot);
    }
    ColumnSlot &slot = layout.slots[it->second];
    if (spec.kind == FeatureKind::Sparse) {
      if (spec.vocab > 0 && (slot.vocab == 0 || spec.vocab < slot.vocab))
        slot.vocab = spec.vocab, slot.feature = spec.name;
      if (slot.hotness == 0 || spec.hotness < slot.hotness) {
        slot.hotness = spec.hotness;
        if (slot.feature.empty() || spec.vocab == 0)
          slot.feature = spec.name;
      }
    }
    if (spec.kind == FeatureKind::Label && spec.labelKind == LabelKind::Class)
      slot.classes = spec.classes > 0 ? spec.classes : 10;
    bindings.push_back({f, it->second});
  }
  return layout;
}

/// A rough size of one row, to size blocks before any is read.
size_t estimatedRowBytes(const RowLayout &layout) {
  size_t bytes = 4 * layout.labels + 4 * size_t(layout.denseWidth);
  for (const ColumnSlot &slot : layout.slots)
    if (slot.column->type == ColumnType::Categorical)
      bytes += 8 + size_t(std::clamp<int64_t>(slot.hotness, 1, 8)) *
                       (slot.column->weighted ? 12 : 8);
  return std::max<size_t>(bytes, 4);
}

class SchemaSource final : public ExampleSource {
public:
  SchemaSource(const StreamOptions &options, const std::vector<FeatureSpec> &features,
               DataSchema schema, std::vector<std::string> paths)
      : schema_(std::move(schema)) {
    layout_ = bindFeatures(schema_, features, paths.front(), bindings_);
    const int threads = resolveThreads(options.threads);
    const bool text = schema_.format == DataFormat::Csv || schema_.format == DataFormat::Tsv;
    parts_ = text ? openTextParts(schema_, std::move(paths), layout_, threads)
                  : openFixedParts(schema_, std::move(paths), layout_, threads);
    blockRows_ = options.readBlockRows > 0
                     ? uint64_t(options.readBlockRows)
                     : std::clamp<uint64_t>((8u << 20) / estimatedRowBytes(layout_), 1024,
                                            1u << 20);
    indexPass(options);
    if (loaderNeeded_)
      loader_ = std::thread([this] { loadAhead(); });
  }

  ~SchemaSource() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (loader_.joinable())
      loader_.join();
  }

  uint64_t size() const override { return rows_; }
  bool shufflesEpochs() const override { return true; }
  const DataStats &stats() const override { return stats_; }
  uint64_t shuffleWindow(uint64_t) const override { return window_; }

  /// For length bucketing: the most ids any multi-id feature (hotness not 1:
  /// a token sequence, a bag) keeps of example `e`; -1 without one.
  int64_t length(uint64_t e) const override {
    int64_t longest = -1;
    std::shared_ptr<const RowBlock> held;
    const uint8_t *row = nullptr;
    for (const Binding &binding : bindings_) {
      const ColumnSlot &slot = layout_.slots[binding.slot];
      if (slot.column->type != ColumnType::Categorical || slot.hotness == 1)
        continue;
      if (!row) {
        held = resident_ ? resident_[e / blockRows_] : block(e / blockRows_);
        row = held->row(e % blockRows_);
      }
      const size_t bagEnds = 4 * (layout_.labels + size_t(layout_.denseWidth)),
                   endAt = bagEnds + 4 * slot.index;
      uint32_t begin = uint32_t(bagEnds + 4 * layout_.bags), end;
      if (slot.index > 0)
        std::memcpy(&begin, row + endAt - 4, 4);
      std::memcpy(&end, row + endAt, 4);
      const int64_t ids = int64_t(end - begin) / (slot.column->weighted ? 12 : 8);
      longest = std::max(longest, slot.hotness > 0 ? std::min(ids, slot.hotness) : ids);
    }
    return longest;
  }

  void fill(const std::vector<uint64_t> &examples, const std::vector<uint64_t> &,
            Batch &out) const override {
    const size_t rows = examples.size();
    // Each distinct block once (a lock and a lookup), then a pointer a row.
    thread_local std::vector<uint64_t> distinct;
    thread_local std::vector<std::shared_ptr<const RowBlock>> held;
    thread_local std::vector<const RowBlock *> blocks;
    blocks.resize(rows);
    if (resident_) {
      for (size_t r = 0; r < rows; ++r)
        blocks[r] = resident_[examples[r] / blockRows_].get();
    } else {
      distinct.resize(rows);
      for (size_t r = 0; r < rows; ++r)
        distinct[r] = examples[r] / blockRows_;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      held.clear();
      for (uint64_t b : distinct)
        held.push_back(block(b));
      for (size_t r = 0; r < rows; ++r)
        blocks[r] = held[size_t(std::lower_bound(distinct.begin(), distinct.end(),
                                                 examples[r] / blockRows_) -
                                distinct.begin())]
                        .get();
    }
    thread_local std::vector<const uint8_t *> rowAt;
    rowAt.resize(rows);
    for (size_t r = 0; r < rows; ++r)
      rowAt[r] = blocks[r]->row(examples[r] % blockRows_);
    // Feature by feature, row by row: tight loops over rows that sit in
    // cache after the first feature touched them.
    const size_t bagEnds = 4 * (layout_.labels + size_t(layout_.denseWidth));
    for (const Binding &binding : bindings_) {
      const ColumnSlot &slot = layout_.slots[binding.slot];
      FeatureBatch &feature = out.features[binding.feature];
      switch (slot.column->type) {
      case ColumnType::Label:
        for (size_t r = 0; r < rows; ++r)
          std::memcpy(&feature.label[r], rowAt[r] + 4 * slot.index, 4);
        break;
      case ColumnType::Dense: {
        const size_t width = size_t(slot.column->width);
        for (size_t r = 0; r < rows; ++r)
          std::memcpy(&feature.dense[r * width], rowAt[r] + 4 * (layout_.labels + slot.index),
                      4 * width);
        break;
      }
      case ColumnType::Categorical: {
        const bool weighted = slot.column->weighted;
        const size_t endAt = bagEnds + 4 * slot.index;
        for (size_t r = 0; r < rows; ++r) {
          uint32_t begin = uint32_t(bagEnds + 4 * layout_.bags), end;
          if (slot.index > 0)
            std::memcpy(&begin, rowAt[r] + endAt - 4, 4);
          std::memcpy(&end, rowAt[r] + endAt, 4);
          if (!weighted && end - begin <= 8) { // no id or one: the common cases
            if (end > begin) {
              int64_t id;
              std::memcpy(&id, rowAt[r] + begin, 8);
              feature.ids.push_back(id);
            }
            closeBag(feature);
            continue;
          }
          const size_t count = weighted ? (end - begin) / 12 : (end - begin) / 8;
          const size_t ids = feature.ids.size();
          feature.ids.resize(ids + count);
          std::memcpy(feature.ids.data() + ids, rowAt[r] + begin, 8 * count);
          if (weighted) {
            const size_t weights = feature.weights.size();
            feature.weights.resize(weights + count);
            std::memcpy(feature.weights.data() + weights, rowAt[r] + begin + 8 * count,
                        4 * count);
          }
          closeBag(feature);
        }
        break;
      }
      }
    }
    held.clear(); // (do not keep blocks alive past the fill)
  }

private:
  void indexPass(const StreamOptions &options);
  /// Block `b`, parsed now if it is not held (waiting if another thread is
  /// parsing it); asks the loader for the blocks that come next.
  std::shared_ptr<const RowBlock> block(uint64_t b) const;
  std::shared_ptr<const RowBlock> parseBlock(uint64_t b) const;
  /// Parses block b with the mutex released and holds it (`lock` held on
  /// entry and on return, also when parsing throws).
  std::shared_ptr<const RowBlock> parseAndHold(uint64_t b,
                                               std::unique_lock<std::mutex> &lock) const;
  /// Holds `block` as block b, evicting the least recently used beyond the
  /// capacity (mutex held).
  void hold(uint64_t b, std::shared_ptr<const RowBlock> block) const;
  /// The blocks to parse ahead once block b is in use (mutex held).
  void planAhead(uint64_t b) const;
  void loadAhead();

  DataSchema schema_;
  RowLayout layout_;
  std::vector<Binding> bindings_;
  std::unique_ptr<RecordParts> parts_;
  DataStats stats_;
  uint64_t rows_ = 0, blockRows_ = 0, window_ = 0;
  std::vector<Cursor> starts_; ///< where each block starts
  /// Every block, when all are held for good (the whole epoch in memory):
  /// read without a lock.
  std::unique_ptr<std::shared_ptr<const RowBlock>[]> resident_;
  uint64_t capacity_ = 0;      ///< blocks held
  uint64_t aheadFrom_ = 0, aheadBlocks_ = 0; ///< the blocks planAhead last asked for
  bool loaderNeeded_ = false;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable std::list<uint64_t> recency_; ///< held blocks, most recent first
  mutable std::unordered_map<uint64_t, std::pair<std::shared_ptr<const RowBlock>,
                                                 std::list<uint64_t>::iterator>>
      held_;
  mutable std::set<uint64_t> parsing_;
  mutable std::deque<uint64_t> wanted_; ///< the loader's queue
  mutable uint64_t plannedWindow_ = UINT64_MAX;
  bool stopping_ = false;
  std::thread loader_;
};

void SchemaSource::indexPass(const StreamOptions &options) {
  const auto began = std::chrono::steady_clock::now();
  const bool fail = options.onBadData == BadDataPolicy::Fail;
  std::vector<std::pair<uint64_t, std::shared_ptr<const RowBlock>>> kept;
  size_t keptBytes = 0;
  bool keepAll = true;
  Cursor at;
  uint64_t records = 0;
  while (true) {
    auto block = std::make_shared<RowBlock>();
    block->reset();
    std::vector<PartProblem> problems;
    const Cursor start = at;
    at = parts_->parse(at, blockRows_, *block, problems, fail);
    for (const PartProblem &p : problems) {
      if (fail)
        throw DataError(describeProblem(parts_->path(p.part), p.problem));
      recordSkipped(parts_->path(p.part), {p.problem}, stats_);
    }
    if (block->rows == 0)
      break;
    starts_.push_back(start);
    rows_ += block->rows;
    // Hold the blocks while the whole data set looks like it fits: the
    // bytes held so far, scaled by how much of the data they came from.
    const double projected = double(keptBytes + block->bytes()) *
                             double(parts_->totalUnits()) /
                             double(std::max<uint64_t>(1, parts_->unitsBefore(at)));
    if (keepAll && options.shuffleWindow != kWholeEpoch &&
        projected > double(options.residentBudget))
      keepAll = false;
    if (keepAll) {
      keptBytes += block->bytes();
      kept.emplace_back(starts_.size() - 1, std::move(block));
    } else {
        if (kept.size() > 4) // enough for the first batches; the rest is re-read
        kept.resize(4);
    }
    if (at.part >= parts_->parts())
      break;
  }
  records = rows_ + uint64_t(stats_.skipped);
  stats_.examples = int64_t(rows_);
  const std::string where = parts_->parts() == 1
                                ? parts_->path(0)
                                : parts_->path(0) + " and " +
                                      std::to_string(parts_->parts() - 1) + " more files";
  if (rows_ == 0)
    throw DataError(where + ": no valid examples in " + std::to_string(records) + " " +
                    parts_->unit() + "s" +
                    (stats_.skipped ? " (all malformed; first: " + stats_.firstProblem + ")"
                                    : ""));
  const uint64_t blocks = starts_.size();
  const bool shuffled = options.training && options.shuffle;
  const uint64_t asked = options.shuffleWindow;
  std::string how;
  if (keepAll) {
    // All of it is held already: any order reads it from memory.
    window_ = asked == kWholeEpoch ? 0 : asked;
    capacity_ = blocks;
    how = "held in memory";
  } else if (shuffled && (asked == kWholeEpoch || (asked > 0 && asked >= rows_))) {
    window_ = 0;
    capacity_ = blocks;
    how = "held in memory as it is read (--shuffle epoch)";
  } else if (shuffled) {
    const double rowBytes = kept.empty() ? double(estimatedRowBytes(layout_))
                                         : double(kept[0].second->bytes()) /
                                               double(std::max<uint64_t>(1, kept[0].second->rows));
    window_ = asked > 0 ? asked
                        : std::max<uint64_t>(blockRows_,
                                             uint64_t(double(options.windowBudget) / rowBytes));
    const uint64_t perWindow = (window_ + blockRows_ - 1) / blockRows_ + 1;
    capacity_ = 2 * perWindow + 2;
    loaderNeeded_ = true;
    how = "streamed, shuffled in windows of " + std::to_string(window_) + " examples";
  } else {
    window_ = 0;
    capacity_ = 3;
    loaderNeeded_ = true;
    how = "streamed in file order";
  }
  if (capacity_ >= blocks) {
    capacity_ = blocks;
    loaderNeeded_ = false;
  }
  // How fast the first read went: the rate a streamed epoch reads at too.
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  char rate[96];
  if (std::string(parts_->unit()) == "line")
    std::snprintf(rate, sizeof rate, "read in %.2f s (%.0f MB/s)", seconds,
                  double(parts_->totalUnits()) / 1e6 / std::max(seconds, 1e-9));
  else
    std::snprintf(rate, sizeof rate, "read in %.2f s (%.2f M records/s)", seconds,
                  double(parts_->totalUnits()) / 1e6 / std::max(seconds, 1e-9));
  stats_.description = schema_.origin + " " + where + ": " + std::to_string(rows_) +
                       " examples from " + std::to_string(records) + " " + parts_->unit() +
                       "s, " + std::to_string(stats_.skipped) + " malformed " +
                       parts_->unit() + "s skipped; " + how + "; " + rate;
  std::lock_guard<std::mutex> lock(mutex_);
  if (keepAll) {
    resident_.reset(new std::shared_ptr<const RowBlock>[blocks]);
    for (auto &[b, block] : kept)
      resident_[b] = std::move(block);
    return;
  }
  for (auto &[b, block] : kept)
    if (held_.size() < capacity_)
      hold(b, std::move(block));
}

std::shared_ptr<const RowBlock> SchemaSource::parseBlock(uint64_t b) const {
  auto block = std::make_shared<RowBlock>();
  block->reset();
  std::vector<PartProblem> problems;
  const uint64_t want = std::min(blockRows_, rows_ - b * blockRows_);
  parts_->parse(starts_[b], want, *block, problems, false);
  if (block->rows != want)
    throw DataError(parts_->path(starts_[b].part) + ": the data changed since it was opened (" +
                    std::to_string(block->rows) + " examples where " + std::to_string(want) +
                    " were)");
  return block;
}

void SchemaSource::hold(uint64_t b, std::shared_ptr<const RowBlock> block) const {
  recency_.push_front(b);
  held_[b] = {std::move(block), recency_.begin()};
  bool evicted = false;
  while (held_.size() > capacity_) {
    const uint64_t oldest = recency_.back();
    recency_.pop_back();
    held_.erase(oldest);
    evicted = true;
  }
  // A streamed block is freed as another is parsed, over and over: hand the
  // freed pages back, or the allocator keeps them and resident memory
  // creeps up with every window (glibc raises its mmap threshold after the
  // first large free, so later blocks come from arenas it does not trim).
  if (evicted)
    malloc_trim(0);
}

void SchemaSource::planAhead(uint64_t b) const {
  if (!loaderNeeded_)
    return;
  const uint64_t blocks = starts_.size();
  uint64_t from, count;
  if (window_ > 0) {
    // The next window's blocks (the first window after the last).
    const uint64_t window = b * blockRows_ / window_;
    if (window == plannedWindow_)
      return;
    plannedWindow_ = window;
    const uint64_t next = (window + 1) * window_ >= rows_ ? 0 : (window + 1) * window_;
    from = next / blockRows_;
    const uint64_t last = std::min(rows_, next + window_) - 1;
    count = last / blockRows_ - from + 1;
  } else {
    from = (b + 1) % blocks, count = 1;
  }
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t n = (from + k) % blocks;
    if (!held_.count(n) && !parsing_.count(n) &&
        std::find(wanted_.begin(), wanted_.end(), n) == wanted_.end())
      wanted_.push_back(n);
  }
  changed_.notify_all();
}

std::shared_ptr<const RowBlock> SchemaSource::block(uint64_t b) const {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (auto it = held_.find(b); it != held_.end()) {
      recency_.splice(recency_.begin(), recency_, it->second.second);
      planAhead(b);
      return it->second.first;
    }
    if (!parsing_.count(b))
      break;
    changed_.wait(lock);
  }
  std::shared_ptr<const RowBlock> parsed = parseAndHold(b, lock);
  planAhead(b);
  return parsed;
}

std::shared_ptr<const RowBlock>
SchemaSource::parseAndHold(uint64_t b, std::unique_lock<std::mutex> &lock) const {
  parsing_.insert(b);
  lock.unlock();
  std::shared_ptr<const RowBlock> parsed;
  try {
    parsed = parseBlock(b);
  } catch (...) {
    lock.lock();
    parsing_.erase(b);
    changed_.notify_all();
    throw;
  }
  lock.lock();
  parsing_.erase(b);
  hold(b, parsed);
  changed_.notify_all();
  return parsed;
}

void SchemaSource::loadAhead() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !wanted_.empty(); });
    if (stopping_)
      return;
    const uint64_t b = wanted_.front();
    wanted_.pop_front();
    if (held_.count(b) || parsing_.count(b))
      continue;
    try {
      parseAndHold(b, lock);
    } catch (...) {
      // The thread that needs the block parses it again and reports why.
    }
  }
}

} // namespace

std::shared_ptr<const ExampleSource>
embc::runtime::data::openSchemaSource(const StreamOptions &options,
                                      const std::vector<FeatureSpec> &features,
                                      const DataSchema &schema) {
  return std::make_shared<SchemaSource>(options, features, schema,
                                        expandDataPaths(options.path));
}
