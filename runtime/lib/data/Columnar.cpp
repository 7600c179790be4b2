//===- Columnar.cpp - line-per-example files held by column ---------------===//
//
// Parsing keeps file order and line numbers: each chunk numbers its lines
// from 1, and the chunks' line counts are added up once all are parsed. With
// BadDataPolicy::Fail a chunk stops at its first malformed line; the earliest
// chunk with a problem holds the file's first malformed line, and every chunk
// before it was parsed whole, so its line number is exact.
//
//===----------------------------------------------------------------------===//

#include "Columnar.h"

#include <algorithm>
#include <cstring>

using namespace embc::runtime::data;

namespace {

using Kind = ColumnInfo::Kind;

/// The smallest vocab of the features reading an id column, and who has it:
/// an id must fit every feature that reads it.
struct IdLimit {
  int64_t vocab = 0; ///< 0: unbounded
  std::string feature;
};

/// Feature `feature` reads `column`.
struct Binding {
  size_t feature;
  ColumnInfo column;
};

std::string describeColumn(const ColumnInfo &column) {
  switch (column.kind) {
  case Kind::Label: {
    std::string kinds;
    for (LabelKind kind : column.labelKinds)
      kinds += (kinds.empty() ? "" : " or ") + enumString(kind);
    return "a label (" + kinds + ")";
  }
  case Kind::Dense:
    return "dense (width " + std::to_string(column.width) + ")";
  case Kind::Ids:
    return "sparse (0 or 1 id per example, no weights)";
  }
  return "";
}

bool kindsMatch(FeatureKind feature, Kind column) {
  return (feature == FeatureKind::Dense && column == Kind::Dense) ||
         (feature == FeatureKind::Sparse && column == Kind::Ids) ||
         (feature == FeatureKind::Label && column == Kind::Label);
}

std::vector<Binding> bindColumns(const ColumnarLayout &layout,
                                 const std::vector<FeatureSpec> &features,
                                 const std::string &path) {
  std::string where = layout.reader + " data " + path;
  std::vector<Binding> bindings;
  for (size_t f = 0; f < features.size(); ++f) {
    const FeatureSpec &spec = features[f];
    std::string feature = "feature '" + spec.name + "'";
    auto column = std::find_if(layout.columns.begin(), layout.columns.end(),
                               [&](const ColumnInfo &c) { return c.name == spec.column(); });
    if (column == layout.columns.end())
      throw DataError(feature + " reads column '" + spec.column() + "', which " + where +
                      " does not have (columns: " + layout.columnList + ")");
    std::string theColumn = "column '" + column->name + "' of " + where;
    if (!kindsMatch(spec.kind, column->kind))
      throw DataError(feature + " is " + featureKindName(spec.kind) + " but " + theColumn +
                      " is " + describeColumn(*column) + " (columns: " + layout.columnList +
                      ")");
    if (spec.kind == FeatureKind::Dense && spec.width != column->width)
      throw DataError(feature + " has width " + std::to_string(spec.width) + " but " +
                      theColumn + " has width " + std::to_string(column->width));
    if (spec.kind == FeatureKind::Sparse && spec.weighted)
      throw DataError(feature + " is weighted but " + theColumn +
                      " has no per-id weights");
    if (spec.kind == FeatureKind::Label) {
      if (std::find(column->labelKinds.begin(), column->labelKinds.end(), spec.labelKind) ==
          column->labelKinds.end())
        throw DataError(feature + " wants a " + enumString(spec.labelKind) + " label but " + theColumn +
                        " is " + describeColumn(*column));
    }
    bindings.push_back({f, *column});
  }
  return bindings;
}

std::vector<IdLimit> idLimits(const ColumnarLayout &layout,
                              const std::vector<FeatureSpec> &features,
                              const std::vector<Binding> &bindings) {
  std::vector<IdLimit> limits(layout.idColumns);
  for (const Binding &binding : bindings) {
    const FeatureSpec &spec = features[binding.feature];
    if (binding.column.kind != Kind::Ids || spec.vocab <= 0)
      continue;
    IdLimit &limit = limits[binding.column.offset];
    if (limit.vocab == 0 || spec.vocab < limit.vocab)
      limit = {spec.vocab, spec.name};
  }
  return limits;
}

/// The rows of one chunk of the file, with chunk-local line numbers.
struct ParsedChunk {
  std::vector<uint64_t> lines;
  std::vector<float> labels, dense;
  std::vector<int64_t> ids;
  std::vector<LineProblem> problems;
  uint64_t lineCount = 0;
};

/// Rows of the whole file, one per valid line, in file order.
struct ColumnarData {
  std::vector<uint64_t> lines;
  std::vector<float> labels, dense;
  std::vector<int64_t> ids;
};

void parseChunk(std::string_view text, const ColumnarLayout &layout,
                const LineParser &parseLine, const std::vector<IdLimit> &limits,
                BadDataPolicy policy, uint64_t headerLines, ParsedChunk &chunk) {
  ParsedRow row;
  size_t pos = 0;
  while (pos < text.size()) {
    const char *newline =
        static_cast<const char *>(std::memchr(text.data() + pos, '\n', text.size() - pos));
    size_t end = newline ? static_cast<size_t>(newline - text.data()) : text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++chunk.lineCount;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (chunk.lineCount <= headerLines)
      continue;

    row.dense.assign(layout.denseWidth, 0.0f);
    row.ids.assign(layout.idColumns, -1);
    LineProblem problem;
    bool ok = false;
    if (line.empty()) {
      problem.category = "empty line";
      problem.reason = "empty line";
    } else if (parseLine(line, row, problem)) {
      ok = true;
      for (int64_t c = 0; c < layout.idColumns && ok; ++c) {
        if (limits[c].vocab > 0 && row.ids[c] >= limits[c].vocab) {
          problem.category = "id out of range";
          problem.reason = "id " + std::to_string(row.ids[c]) + " out of range for feature '" +
                           limits[c].feature + "' (vocab " + std::to_string(limits[c].vocab) +
                           ")";
          ok = false;
        }
      }
    }
    if (!ok) {
      problem.line = chunk.lineCount;
      problem.content = excerptOfLine(line);
      chunk.problems.push_back(std::move(problem));
      if (policy == BadDataPolicy::Fail)
        return;
      continue;
    }
    chunk.lines.push_back(chunk.lineCount);
    chunk.labels.push_back(row.label);
    chunk.dense.insert(chunk.dense.end(), row.dense.begin(), row.dense.end());
    chunk.ids.insert(chunk.ids.end(), row.ids.begin(), row.ids.end());
  }
}

ColumnarData parseFile(const StreamOptions &options, const ColumnarLayout &layout,
                       const LineParser &parseLine, const std::vector<IdLimit> &limits,
                       DataStats &stats) {
  const std::string &path = options.path;
  std::string text = readWholeFile(path);
  auto ranges = splitIntoChunks(text, resolveThreads(options.threads), isNewline);
  std::vector<ParsedChunk> chunks(ranges.size());
  runInParallel(static_cast<int>(ranges.size()), [&](int c) {
    std::string_view piece(text.data() + ranges[c].first, ranges[c].second - ranges[c].first);
    parseChunk(piece, layout, parseLine, limits, options.onBadData,
               c == 0 ? uint64_t(layout.headerLines) : 0, chunks[c]);
  });

  uint64_t linesBefore = 0, totalLines = 0;
  for (ParsedChunk &chunk : chunks) {
    for (uint64_t &line : chunk.lines)
      line += linesBefore;
    for (LineProblem &problem : chunk.problems)
      problem.line += linesBefore;
    if (options.onBadData == BadDataPolicy::Fail && !chunk.problems.empty())
      throw DataError(describeProblem(path, chunk.problems.front()));
    linesBefore += chunk.lineCount;
  }
  totalLines = linesBefore;

  ColumnarData data;
  for (ParsedChunk &chunk : chunks) {
    data.lines.insert(data.lines.end(), chunk.lines.begin(), chunk.lines.end());
    data.labels.insert(data.labels.end(), chunk.labels.begin(), chunk.labels.end());
    data.dense.insert(data.dense.end(), chunk.dense.begin(), chunk.dense.end());
    data.ids.insert(data.ids.end(), chunk.ids.begin(), chunk.ids.end());
    recordSkipped(path, chunk.problems, stats);
    chunk = ParsedChunk(); // free as we go: the file may be large
  }
  stats.examples = static_cast<int64_t>(data.lines.size());
  if (data.lines.empty())
    throw DataError(path + ": no valid examples in " + std::to_string(totalLines) +
                    " lines" +
                    (stats.skipped ? " (all malformed; first: " + stats.firstProblem + ")"
                                   : ""));
  stats.description = layout.reader + " " + path + ": " + std::to_string(stats.examples) +
                      " examples from " + std::to_string(totalLines) + " lines, " +
                      std::to_string(stats.skipped) + " malformed lines skipped";
  return data;
}

class ColumnarSource final : public ExampleSource {
public:
  ColumnarSource(const ColumnarLayout &layout, std::vector<Binding> bindings,
                 ColumnarData data, DataStats stats)
      : denseWidth_(layout.denseWidth), idColumns_(layout.idColumns),
        bindings_(std::move(bindings)), data_(std::move(data)), stats_(std::move(stats)) {}

  uint64_t size() const override { return data_.lines.size(); }
  bool shufflesEpochs() const override { return true; }
  const DataStats &stats() const override { return stats_; }

  void fill(const std::vector<uint64_t> &examples, const std::vector<uint64_t> &,
            Batch &out) const override {
    size_t rows = examples.size();
    for (const Binding &binding : bindings_) {
      const ColumnInfo &column = binding.column;
      FeatureBatch &feature = out.features[binding.feature];
      switch (column.kind) {
      case Kind::Label:
        for (size_t r = 0; r < rows; ++r)
          feature.label[r] = data_.labels[examples[r]];
        break;
      case Kind::Dense:
        for (size_t r = 0; r < rows; ++r)
          std::copy_n(&data_.dense[examples[r] * denseWidth_ + column.offset], column.width,
                      &feature.dense[r * column.width]);
        break;
      case Kind::Ids:
        for (size_t r = 0; r < rows; ++r) {
          int64_t id = data_.ids[examples[r] * idColumns_ + column.offset];
          if (id >= 0)
            feature.ids.push_back(id);
          closeBag(feature);
        }
        break;
      }
    }
  }

private:
  int64_t denseWidth_, idColumns_;
  std::vector<Binding> bindings_;
  ColumnarData data_;
  DataStats stats_;
};

} // namespace

std::shared_ptr<const ExampleSource>
embc::runtime::data::openColumnarSource(const StreamOptions &options,
                                        const std::vector<FeatureSpec> &features,
                                        const ColumnarLayout &layout,
                                        const LineParser &parseLine) {
  std::vector<Binding> bindings = bindColumns(layout, features, options.path);
  std::vector<IdLimit> limits = idLimits(layout, features, bindings);
  DataStats stats;
  ColumnarData data = parseFile(options, layout, parseLine, limits, stats);
  return std::make_shared<ColumnarSource>(layout, std::move(bindings), std::move(data),
                                          std::move(stats));
}

size_t embc::runtime::data::splitFields(std::string_view line, std::string_view separator,
                                        std::vector<std::string_view> &fields) {
  size_t count = 0, pos = 0;
  while (true) {
    size_t end = line.find(separator, pos);
    std::string_view field =
        line.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (count < fields.size())
      fields[count] = field;
    ++count;
    if (end == std::string_view::npos)
      return count;
    pos = end + separator.size();
  }
}
