//===- TextReader.cpp - skip-gram pairs from plain text -------------------===//
//
// A first pass splits the file into words (runs of non-whitespace) and lines
// (sentences: windows never cross a line end, as in word2vec) and counts the
// words. The vocabulary is the words by descending count, ties by first
// appearance, capped at the smallest nonzero `vocab` of the features that read
// `center`, `context` or `negatives`, less the words seen fewer than
// `textMinCount` times; words outside it are dropped from the text before
// windows are drawn (word2vec does the same with rare words). With
// `textSample` s > 0, frequent words are subsampled as in word2vec: an
// occurrence of a word of frequency f (its share of the in-vocabulary words)
// stays with probability (sqrt(f / s) + 1) s / f, drawn from (seed, its
// place in the file) once for the run (word2vec draws again every epoch).
//
// Examples are (centre, context) pairs: centre word i sees the words up to
// b_i places away on each side within its line, b_i in [1, window] drawn from
// (seed, i), word2vec's shrinking window. The pairs are fixed for a seed and
// numbered centre by centre; an example index finds its centre in the
// running pair counts, between the centres of its block of 64 pairs, so a
// pair costs a few cache lines and nothing per pair is stored.
//
// Negatives: `count` ids from unigram^power over the vocabulary (an alias
// table), keyed by (seed, stream position, slot), so every epoch draws new
// ones and a resumed stream draws the same. A draw equal to the context word
// is redrawn, up to 8 times (only a vocabulary dominated by one word ends
// with it).
//
//===----------------------------------------------------------------------===//

#include "AliasTable.h"
#include "ExampleSource.h"
#include "FileInput.h"

#include "embc/runtime/data/CounterRandom.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

using namespace embc::runtime::data;

namespace {

enum Tag : uint64_t { kWindowTag = 101, kNegativeTag, kSubsampleTag };
/// Pairs per block of the pair index (TextSource::pairAt).
constexpr int kPairBlockBits = 6;
constexpr int kNegativeAttempts = 8;

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

enum class TextColumn { Center, Context, Negatives };

struct TextBinding {
  size_t feature;
  TextColumn column;
  size_t aliasTable = 0; ///< Negatives: index into the source's tables
};

/// Words of one chunk of the file, before the vocabulary exists.
struct WordChunk {
  std::vector<std::string_view> words;
  std::vector<size_t> lineStarts; ///< local word indices that begin a new line
  struct Count {
    uint64_t count = 0, first = 0; ///< first: local word index
  };
  std::unordered_map<std::string_view, Count> counts;
};

void splitWords(std::string_view text, WordChunk &chunk) {
  bool newline = false;
  size_t pos = 0;
  while (pos < text.size()) {
    if (isSpace(text[pos])) {
      newline |= text[pos] == '\n';
      ++pos;
      continue;
    }
    size_t start = pos;
    while (pos < text.size() && !isSpace(text[pos]))
      ++pos;
    if (newline)
      chunk.lineStarts.push_back(chunk.words.size());
    newline = false;
    std::string_view word = text.substr(start, pos - start);
    WordChunk::Count &count = chunk.counts[word];
    if (count.count++ == 0)
      count.first = chunk.words.size();
    chunk.words.push_back(word);
  }
  if (newline) // the next chunk's first word begins a line
    chunk.lineStarts.push_back(chunk.words.size());
}

class TextSource final : public ExampleSource {
public:
  TextSource(const StreamOptions &options, const std::vector<FeatureSpec> &features)
      : seed_(options.seed), window_(options.textWindow), minCount_(options.textMinCount),
        sample_(options.textSample) {
    int64_t vocabCap = bind(options.path, features);
    read(options, vocabCap);
    countPairs();
    if (pairOffsets_.back() == 0)
      throw DataError(options.path + ": no (center, context) pairs: no line has two "
                                     "in-vocabulary words");
    buildNegativeTables(features);
    stats_.examples = static_cast<int64_t>(pairOffsets_.back());
    stats_.description += ", " + std::to_string(stats_.examples) +
                          " (center, context) pairs (window up to " +
                          std::to_string(window_) + ")";
  }

  uint64_t size() const override { return pairOffsets_.back(); }
  bool shufflesEpochs() const override { return true; }
  const DataStats &stats() const override { return stats_; }
  const std::vector<std::string> *vocabulary() const override { return &words_; }

  void fill(const std::vector<uint64_t> &examples, const std::vector<uint64_t> &positions,
            Batch &out) const override {
    size_t rows = examples.size();
    std::vector<uint32_t> centers(rows), contexts(rows);
    for (size_t r = 0; r < rows; ++r)
      pairAt(examples[r], centers[r], contexts[r]);
    for (const TextBinding &binding : bindings_) {
      FeatureBatch &feature = out.features[binding.feature];
      switch (binding.column) {
      case TextColumn::Center:
      case TextColumn::Context:
        for (size_t r = 0; r < rows; ++r) {
          feature.ids.push_back(binding.column == TextColumn::Center ? centers[r] : contexts[r]);
          closeBag(feature);
        }
        break;
      case TextColumn::Negatives: {
        // hashOf(seed, tag, position, feature, j, attempt), folded in steps:
        // the words shared by a row once, the slot's and the attempt's mixed
        // words once per batch (the same keys, a fifth of the mixing).
        const AliasTable &table = negativeTables_[binding.aliasTable];
        size_t count = feature.negatives.size() / rows;
        thread_local std::vector<uint64_t> slotWords;
        slotWords.resize(count);
        for (size_t j = 0; j < count; ++j)
          slotWords[j] = hashWord(j);
        uint64_t attemptWords[kNegativeAttempts];
        for (int attempt = 0; attempt < kNegativeAttempts; ++attempt)
          attemptWords[attempt] = hashWord(uint64_t(attempt));
        const uint64_t prefix = hashOf(seed_, kNegativeTag);
        for (size_t r = 0; r < rows; ++r) {
          const uint64_t row = hashMore(hashMore(prefix, positions[r]), binding.feature);
          for (size_t j = 0; j < count; ++j) {
            const uint64_t slot = hashFold(row, slotWords[j]);
            uint32_t id = 0;
            for (int attempt = 0; attempt < kNegativeAttempts; ++attempt) {
              id = table.draw(hashFold(slot, attemptWords[attempt]));
              if (id != contexts[r])
                break;
            }
            feature.negatives[r * count + j] = id;
          }
        }
        break;
      }
      }
    }
  }

private:
  /// Binds the features; returns the vocabulary cap (0: none).
  int64_t bind(const std::string &path, const std::vector<FeatureSpec> &features) {
    int64_t cap = 0;
    for (size_t f = 0; f < features.size(); ++f) {
      const FeatureSpec &spec = features[f];
      const std::string &name = spec.column();
      std::string feature = "feature '" + spec.name + "'";
      std::string where = "text data " + path;
      TextColumn column;
      if (name == "center" || name == "context") {
        column = name == "center" ? TextColumn::Center : TextColumn::Context;
        if (spec.kind != FeatureKind::Sparse)
          throw DataError(feature + " is " + featureKindName(spec.kind) + " but column '" +
                          name + "' of " + where +
                          " is sparse (1 id per example) (columns: center, context, "
                          "negatives)");
        if (spec.weighted)
          throw DataError(feature + " is weighted but column '" + name + "' of " + where +
                          " has no per-id weights");
      } else if (name == "negatives") {
        column = TextColumn::Negatives;
        if (spec.kind != FeatureKind::Negatives)
          throw DataError(feature + " is " + featureKindName(spec.kind) +
                          " but column 'negatives' of " + where +
                          " is negatives (sampled ids) (columns: center, context, negatives)");
      } else {
        throw DataError(feature + " reads column '" + name + "', which " + where +
                        " does not have (columns: center, context, negatives)");
      }
      if (spec.vocab > 0 && (cap == 0 || spec.vocab < cap))
        cap = spec.vocab;
      bindings_.push_back({f, column});
    }
    return cap;
  }

  /// Reads the words, builds the vocabulary and the in-vocabulary text.
  void read(const StreamOptions &options, int64_t vocabCap) {
    const std::string &path = options.path;
    std::string text = readWholeFile(path);
    auto ranges = splitIntoChunks(text, resolveThreads(options.threads), isSpace);
    std::vector<WordChunk> chunks(ranges.size());
    runInParallel(static_cast<int>(ranges.size()), [&](int c) {
      splitWords(std::string_view(text).substr(ranges[c].first,
                                               ranges[c].second - ranges[c].first),
                 chunks[c]);
    });

    // Merge the counts in file order, so "first appearance" is global.
    std::unordered_map<std::string_view, WordChunk::Count> counts;
    uint64_t wordsBefore = 0;
    for (WordChunk &chunk : chunks) {
      for (auto &[word, local] : chunk.counts) {
        auto [it, inserted] = counts.try_emplace(word, WordChunk::Count{0, wordsBefore + local.first});
        it->second.count += local.count;
      }
      chunk.counts.clear();
      wordsBefore += chunk.words.size();
    }
    if (wordsBefore == 0)
      throw DataError(path + ": no words (the file is only whitespace)");

    std::vector<std::pair<std::string_view, WordChunk::Count>> ranked(counts.begin(),
                                                                       counts.end());
    std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
      return a.second.count != b.second.count ? a.second.count > b.second.count
                                              : a.second.first < b.second.first;
    });
    std::unordered_map<std::string_view, uint32_t> ids;
    std::vector<uint64_t> wordCounts;
    size_t vocabSize = 0;
    if (options.textVocabulary) {
      // Given (the training stream's): its ids, this file's counts.
      words_ = *options.textVocabulary;
      vocabSize = words_.size();
      ids.reserve(vocabSize);
      for (size_t i = 0; i < vocabSize; ++i)
        ids.emplace(words_[i], static_cast<uint32_t>(i));
      wordCounts.assign(vocabSize, 0);
      for (const auto &[word, count] : ranked)
        if (auto it = ids.find(word); it != ids.end())
          wordCounts[it->second] = count.count;
    } else {
      vocabSize = vocabCap > 0 ? std::min<size_t>(ranked.size(), vocabCap) : ranked.size();
      while (vocabSize > 0 && ranked[vocabSize - 1].second.count < uint64_t(minCount_))
        --vocabSize; // ranked by count: the rare words are last
      if (vocabSize == 0)
        throw DataError(path + ": no word occurs at least " + std::to_string(minCount_) +
                        " times (the text minimum count)");
      ids.reserve(vocabSize);
      for (size_t i = 0; i < vocabSize; ++i) {
        words_.emplace_back(ranked[i].first);
        ids.emplace(ranked[i].first, static_cast<uint32_t>(i));
        wordCounts.push_back(ranked[i].second.count);
      }
    }
    wordCounts_ = std::move(wordCounts);

    // Map words to ids in parallel, then join the chunks in order, dropping
    // out-of-vocabulary words and keeping line starts.
    std::vector<std::vector<int64_t>> mapped(chunks.size());
    runInParallel(static_cast<int>(chunks.size()), [&](int c) {
      mapped[c].reserve(chunks[c].words.size());
      for (std::string_view word : chunks[c].words) {
        auto it = ids.find(word);
        mapped[c].push_back(it == ids.end() ? -1 : static_cast<int64_t>(it->second));
      }
    });
    // The keep probability of each word, for subsampling (1: keep all).
    std::vector<double> keep;
    if (sample_ > 0) {
      uint64_t inVocabulary = 0;
      for (uint64_t c : wordCounts_)
        inVocabulary += c;
      for (uint64_t c : wordCounts_) {
        const double f = double(c) / double(inVocabulary);
        keep.push_back(std::min(1.0, (std::sqrt(f / sample_) + 1) * sample_ / f));
      }
    }
    uint64_t dropped = 0, subsampled = 0, place = 0;
    bool lineStartPending = false;
    lineStarts_.push_back(0);
    for (size_t c = 0; c < chunks.size(); ++c) {
      const std::vector<size_t> &starts = chunks[c].lineStarts;
      size_t next = 0;
      for (size_t i = 0; i < mapped[c].size(); ++i, ++place) {
        for (; next < starts.size() && starts[next] == i; ++next)
          lineStartPending = true;
        if (mapped[c][i] < 0) {
          ++dropped;
          continue;
        }
        if (!keep.empty() && keep[size_t(mapped[c][i])] < 1 &&
            uniform01(hashOf(seed_, kSubsampleTag, place)) >= keep[size_t(mapped[c][i])]) {
          ++subsampled;
          continue;
        }
        if (lineStartPending && !tokens_.empty() && lineStarts_.back() != tokens_.size())
          lineStarts_.push_back(tokens_.size());
        lineStartPending = false;
        tokens_.push_back(static_cast<uint32_t>(mapped[c][i]));
      }
      if (next < starts.size()) // a line end after the chunk's last word
        lineStartPending = true;
    }
    stats_.description = "text " + path + ": " + std::to_string(wordsBefore) + " words, " +
                         std::to_string(ranked.size()) + " distinct, vocabulary " +
                         std::to_string(vocabSize) +
                         (options.textVocabulary ? " (" + options.textVocabularyFrom + ")"
                          : vocabCap > 0 ? " (capped at " + std::to_string(vocabCap) + ")"
                                         : "") +
                         (minCount_ > 1 ? ", min count " + std::to_string(minCount_) : "") +
                         ", " + std::to_string(dropped) + " out-of-vocabulary words dropped" +
                         (sample_ > 0 ? ", " + std::to_string(subsampled) +
                                            " subsampled away (sample " +
                                            std::to_string(sample_) + ")"
                                      : "");
  }

  /// The window of centre i: b in [1, window_].
  uint64_t windowOf(uint64_t center) const {
    return 1 + hashOf(seed_, kWindowTag, center) % static_cast<uint64_t>(window_);
  }

  /// First context position of centre i (its window clipped to its line).
  uint64_t firstContext(uint64_t i, uint64_t lineBegin) const {
    uint64_t b = windowOf(i);
    return i - lineBegin > b ? i - b : lineBegin;
  }

  void countPairs() {
    pairOffsets_.assign(tokens_.size() + 1, 0);
    contextsBefore_.assign(tokens_.size(), 0);
    for (size_t line = 0; line < lineStarts_.size(); ++line) {
      uint64_t begin = lineStarts_[line];
      uint64_t end = line + 1 < lineStarts_.size() ? lineStarts_[line + 1] : tokens_.size();
      for (uint64_t i = begin; i < end; ++i) {
        uint64_t b = windowOf(i);
        uint64_t lo = firstContext(i, begin);
        uint64_t hi = std::min(end - 1, i + b);
        pairOffsets_[i + 1] = pairOffsets_[i] + (hi - lo);
        contextsBefore_[i] = static_cast<uint16_t>(i - lo); // <= window <= 65535
      }
    }
    // blockCentre_[j]: the centre of pair j * 2^kPairBlockBits, for every
    // block that holds a pair (with one more, the end of the pairs when their
    // count is a multiple of the block, was a centre past the last token,
    // and pairAt searched one entry past pairOffsets_: found by ASan).
    const uint64_t pairs = pairOffsets_.back();
    blockCentre_.resize(size_t((pairs + (uint64_t(1) << kPairBlockBits) - 1) >> kPairBlockBits));
    uint64_t i = 0;
    for (uint64_t j = 0; j < blockCentre_.size(); ++j) {
      const uint64_t k = j << kPairBlockBits;
      while (i + 1 < pairOffsets_.size() && pairOffsets_[i + 1] <= k)
        ++i;
      blockCentre_[size_t(j)] = i;
    }
  }

  /// The centre and context word ids of pair `k` (< the pair count): its
  /// centre i has pairOffsets_[i] <= k < pairOffsets_[i + 1], and lies
  /// between the centres of k's block and the next block's.
  void pairAt(uint64_t k, uint32_t &center, uint32_t &context) const {
    const uint64_t block = k >> kPairBlockBits;
    const uint64_t lo = blockCentre_[size_t(block)];
    const uint64_t hi = block + 1 < blockCentre_.size()
                            ? std::min<uint64_t>(blockCentre_[size_t(block + 1)] + 1, tokens_.size())
                            : tokens_.size();
    const uint64_t i =
        uint64_t(std::upper_bound(pairOffsets_.begin() + int64_t(lo) + 1,
                                  pairOffsets_.begin() + int64_t(hi) + 1, k) -
                 pairOffsets_.begin()) - 1;
    uint64_t position = i - contextsBefore_[i] + (k - pairOffsets_[i]);
    if (position >= i)
      ++position; // skip the centre itself
    center = tokens_[i];
    context = tokens_[position];
  }

  void buildNegativeTables(const std::vector<FeatureSpec> &features) {
    std::vector<double> powers;
    for (TextBinding &binding : bindings_) {
      if (binding.column != TextColumn::Negatives)
        continue;
      double power = features[binding.feature].power;
      auto it = std::find(powers.begin(), powers.end(), power);
      binding.aliasTable = it - powers.begin();
      if (it != powers.end())
        continue;
      powers.push_back(power);
      std::vector<double> weights(wordCounts_.size());
      for (size_t w = 0; w < weights.size(); ++w)
        weights[w] = std::pow(static_cast<double>(wordCounts_[w]), power);
      negativeTables_.emplace_back(weights);
    }
  }

  uint64_t seed_;
  int window_;
  int64_t minCount_;
  double sample_;
  std::vector<TextBinding> bindings_;
  std::vector<std::string> words_;      ///< id -> word
  std::vector<uint64_t> wordCounts_;    ///< id -> occurrences
  std::vector<uint32_t> tokens_;        ///< the in-vocabulary text, as ids
  std::vector<uint64_t> lineStarts_;    ///< first token of each line, ascending, [0] = 0
  std::vector<uint64_t> pairOffsets_;   ///< pairs of the centres before i; tokens + 1 entries
  std::vector<uint16_t> contextsBefore_; ///< i - centre i's first context
  std::vector<uint64_t> blockCentre_;   ///< the centre of pair j << kPairBlockBits
  std::vector<AliasTable> negativeTables_; ///< one per distinct power
  DataStats stats_;
};

} // namespace

std::shared_ptr<const ExampleSource>
embc::runtime::data::openTextSource(const StreamOptions &options,
                                    const std::vector<FeatureSpec> &features) {
  if (readsTextLines(features))
    return openTextLinesSource(options, features);
  return std::make_shared<TextSource>(options, features);
}
