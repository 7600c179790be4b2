//===- TextLinesReader.cpp - one example per line of text -----------------===//
//
// The text reader for sequence models: every non-empty line is an example,
// its words (runs of non-whitespace) in order are the `tokens` column, read
// by a sparse or sequence feature, one id per word. With a `label` column the
// line is `label<TAB>text`: 0/1 for a binary label, a number for a real one,
// a class index (0 .. classes - 1) for a class label.
//
// The vocabulary is built from the file as the skip-gram reader builds it
// (words by descending count, ties by first appearance, at least
// `textMinCount` occurrences) with id 0 kept for the unknown word `<unk>`,
// which every other word maps to: the cap is the smallest `vocab` of the
// features reading `tokens`, unknown word included. An evaluation file reads
// through the training vocabulary (StreamOptions::textVocabulary). A line
// with more words than the feature's hotness (a sequence's max_len) keeps
// its first words; the count of such lines is in the description.
//
//===----------------------------------------------------------------------===//

#include "ExampleSource.h"
#include "FileInput.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

using namespace embc::runtime::data;

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/// The words of `text`, in order.
std::vector<std::string_view> wordsOf(std::string_view text) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    if (isSpace(text[pos])) {
      ++pos;
      continue;
    }
    const size_t start = pos;
    while (pos < text.size() && !isSpace(text[pos]))
      ++pos;
    words.push_back(text.substr(start, pos - start));
  }
  return words;
}

enum class LinesColumn { Tokens, Label };

struct LinesBinding {
  size_t feature;
  LinesColumn column;
  int64_t hotness = 0; ///< Tokens: the most ids an example keeps
};

class TextLinesSource final : public ExampleSource {
public:
  TextLinesSource(const StreamOptions &options, const std::vector<FeatureSpec> &features)
      : path_(options.path) {
    const int64_t cap = bind(features);
    read(options, cap);
  }

  uint64_t size() const override { return starts_.size() - 1; }
  bool shufflesEpochs() const override { return true; }
  const DataStats &stats() const override { return stats_; }
  const std::vector<std::string> *vocabulary() const override { return &words_; }
  int64_t length(uint64_t e) const override {
    int64_t longest = -1; // the most any tokens feature keeps
    for (const LinesBinding &binding : bindings_)
      if (binding.column == LinesColumn::Tokens)
        longest = std::max(longest, binding.hotness);
    return longest < 0 ? -1 : std::min<int64_t>(int64_t(starts_[e + 1] - starts_[e]), longest);
  }

  void fill(const std::vector<uint64_t> &examples, const std::vector<uint64_t> &,
            Batch &out) const override {
    for (const LinesBinding &binding : bindings_) {
      FeatureBatch &feature = out.features[binding.feature];
      for (size_t r = 0; r < examples.size(); ++r) {
        const uint64_t e = examples[r];
        if (binding.column == LinesColumn::Label) {
          feature.label[r] = labels_[e];
          continue;
        }
        const uint64_t begin = starts_[e];
        const uint64_t end = std::min<uint64_t>(starts_[e + 1], begin + uint64_t(binding.hotness));
        for (uint64_t i = begin; i < end; ++i)
          feature.ids.push_back(tokens_[i]);
        closeBag(feature);
      }
    }
  }

private:
  static constexpr const char *kColumns = "(columns: tokens, label)";

  /// Binds the features; returns the vocabulary cap (0: none).
  int64_t bind(const std::vector<FeatureSpec> &features) {
    int64_t cap = 0;
    for (size_t f = 0; f < features.size(); ++f) {
      const FeatureSpec &spec = features[f];
      const std::string &name = spec.column();
      const std::string feature = "feature '" + spec.name + "'";
      const std::string where = "text data " + path_;
      if (name == "tokens") {
        if (spec.kind != FeatureKind::Sparse)
          throw DataError(feature + " is " + featureKindName(spec.kind) +
                          " but column 'tokens' of " + where + " is the line's word ids " +
                          kColumns);
        if (spec.weighted)
          throw DataError(feature + " is weighted but column 'tokens' of " + where +
                          " has no per-id weights");
        if (spec.vocab > 0 && spec.vocab < 2)
          throw DataError(feature + " has vocab " + std::to_string(spec.vocab) +
                          ": column 'tokens' needs 2 ids at least, the unknown word and one "
                          "word");
        if (spec.vocab > 0 && (cap == 0 || spec.vocab < cap))
          cap = spec.vocab;
        bindings_.push_back({f, LinesColumn::Tokens, spec.hotness});
      } else if (name == "label") {
        if (spec.kind != FeatureKind::Label)
          throw DataError(feature + " is " + featureKindName(spec.kind) +
                          " but column 'label' of " + where + " is a label " + kColumns);
        bindings_.push_back({f, LinesColumn::Label});
        hasLabel_ = true;
        labelKind_ = spec.labelKind;
        classes_ = spec.classes > 0 ? spec.classes : 10;
      } else {
        throw DataError(feature + " reads column '" + name + "', which " + where +
                        " does not have " + kColumns);
      }
    }
    return cap;
  }

  /// The label field of `line` (1-based) as the bound label's kind wants it.
  float parseLabel(std::string_view field, uint64_t line) const {
    auto fail = [&](const std::string &why) {
      throw DataError(describeProblem(
          path_, {line, "bad label", why, excerptOfLine(field)}));
    };
    double value = 0;
    if (!parseDouble(field, value))
      fail("the label '" + std::string(field.substr(0, 40)) + "' is not a number");
    switch (labelKind_) {
    case LabelKind::Binary:
      if (value != 0 && value != 1)
        fail("a binary label is 0 or 1, got " + std::string(field));
      break;
    case LabelKind::Real:
      break;
    case LabelKind::Class:
      if (value != std::floor(value) || value < 0 || value >= double(classes_))
        fail("a class label is an integer in [0, " + std::to_string(classes_) + "), got " +
             std::string(field));
      break;
    }
    return float(value);
  }

  void read(const StreamOptions &options, int64_t cap) {
    const std::string text = readWholeFile(path_);
    // Lines: [begin, end) of each non-empty line's text (after the label).
    // The words of each non-empty line's text (after the label), split once.
    std::vector<std::vector<std::string_view>> lineWords;
    uint64_t number = 0, numberTabLines = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos)
        end = text.size();
      std::string_view line(text.data() + pos, end - pos);
      ++number;
      pos = end + 1;
      if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
      if (std::all_of(line.begin(), line.end(), isSpace))
        continue; // blank lines separate nothing: skip them
      if (hasLabel_) {
        const size_t tab = line.find('\t');
        if (tab == std::string_view::npos)
          throw DataError(describeProblem(
              path_, {number, "no label", "expected 'label<TAB>text'", excerptOfLine(line)}));
        labels_.push_back(parseLabel(line.substr(0, tab), number));
        line = line.substr(tab + 1);
      } else {
        numberTabLines += startsWithNumberAndTab(line);
      }
      lineWords.push_back(wordsOf(line));
    }
    if (lineWords.empty())
      throw DataError(path_ + ": no lines with words");

    // Counts, in file order for "first appearance".
    struct Count {
      uint64_t count = 0, first = 0;
    };
    std::unordered_map<std::string_view, Count> counts;
    uint64_t words = 0;
    for (const std::vector<std::string_view> &ws : lineWords) {
      for (std::string_view w : ws) {
        Count &c = counts[w];
        if (c.count++ == 0)
          c.first = words;
        ++words;
      }
    }
    std::unordered_map<std::string_view, uint32_t> ids;
    if (options.textVocabulary) {
      words_ = *options.textVocabulary;
      if (words_.empty() || words_[0] != kUnknown)
        throw DataError(path_ + ": the training vocabulary has no '" + std::string(kUnknown) +
                        "' at id 0; it is not a line-text vocabulary");
    } else {
      std::vector<std::pair<std::string_view, Count>> ranked(counts.begin(), counts.end());
      std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
        return a.second.count != b.second.count ? a.second.count > b.second.count
                                                : a.second.first < b.second.first;
      });
      size_t size = cap > 0 ? std::min<size_t>(ranked.size(), size_t(cap - 1)) : ranked.size();
      while (size > 0 && ranked[size - 1].second.count < uint64_t(options.textMinCount))
        --size;
      words_.emplace_back(kUnknown);
      for (size_t i = 0; i < size; ++i)
        words_.emplace_back(ranked[i].first);
    }
    for (size_t i = 1; i < words_.size(); ++i)
      ids.emplace(words_[i], uint32_t(i));

    uint64_t unknown = 0, truncated = 0;
    int64_t longest = 0;
    for (const LinesBinding &b : bindings_)
      if (b.column == LinesColumn::Tokens)
        longest = std::max(longest, b.hotness);
    starts_.push_back(0);
    for (const std::vector<std::string_view> &ws : lineWords) {
      for (std::string_view w : ws) {
        auto it = ids.find(w);
        unknown += it == ids.end();
        tokens_.push_back(it == ids.end() ? 0 : it->second);
      }
      truncated += longest > 0 && int64_t(ws.size()) > longest;
      starts_.push_back(tokens_.size());
    }
    stats_.examples = int64_t(lineWords.size());
    stats_.description =
        "text lines " + path_ + ": " + std::to_string(lineWords.size()) + " lines" +
        (hasLabel_ ? " (label<TAB>text)" : "") + ", " + std::to_string(words) + " words, " +
        std::to_string(counts.size()) + " distinct, vocabulary " +
        std::to_string(words_.size()) + " with " + kUnknown +
        (options.textVocabulary ? " (" + options.textVocabularyFrom + ")"
         : cap > 0              ? " (capped at " + std::to_string(cap) + ")"
                                : "") +
        (options.textMinCount > 1 ? ", min count " + std::to_string(options.textMinCount) : "") +
        ", " + std::to_string(unknown) + " unknown words, " + std::to_string(truncated) +
        " lines longer than " + std::to_string(longest) + " words cut";
    // A labelled file given to a model without a label (a language model
    // on text_passages.py's train.txt) reads its labels as words.
    if (numberTabLines == lineWords.size())
      stats_.description += ". Warning: every line starts with a number and a tab, as "
                            "label<TAB>text lines do, but no feature reads 'label': the "
                            "numbers are read as words (for a language model, give it the "
                            "text without labels, such as text_passages.py's train_text.txt)";
  }

  /// Whether `line` is `<number><TAB>...`, a labelled line's form.
  static bool startsWithNumberAndTab(std::string_view line) {
    const size_t tab = line.find('\t');
    if (tab == 0 || tab == std::string_view::npos)
      return false;
    const std::string field(line.substr(0, tab));
    char *end = nullptr;
    std::strtod(field.c_str(), &end);
    return end == field.c_str() + field.size();
  }

  static constexpr const char *kUnknown = "<unk>";
  std::string path_;
  bool hasLabel_ = false;
  LabelKind labelKind_ = LabelKind::Binary;
  int64_t classes_ = 10;
  std::vector<LinesBinding> bindings_;
  std::vector<std::string> words_; ///< id -> word; 0 is <unk>
  std::vector<uint32_t> tokens_;   ///< every line's word ids, in order
  std::vector<uint64_t> starts_;   ///< line e's tokens: [starts_[e], starts_[e + 1])
  std::vector<float> labels_;      ///< per line, with a label column
  DataStats stats_;
};

} // namespace

std::shared_ptr<const ExampleSource>
embc::runtime::data::openTextLinesSource(const StreamOptions &options,
                                         const std::vector<FeatureSpec> &features) {
  return std::make_shared<TextLinesSource>(options, features);
}

bool embc::runtime::data::readsTextLines(const std::vector<FeatureSpec> &features) {
  for (const FeatureSpec &spec : features)
    if (spec.column() == "tokens" || spec.column() == "label")
      return true;
  return false;
}
