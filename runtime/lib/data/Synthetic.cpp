//===- Synthetic.cpp - generated examples with a planted signal -----------===//
//
// The generator of Synthetic.h and the stream source around it. Every value
// is a counter-based draw keyed by (seed, purpose tag, column, example, slot),
// so an example never depends on which examples were made before it.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/data/Synthetic.h"

#include "ExampleSource.h"

#include "embc/runtime/data/CounterRandom.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace embc::runtime::data;

namespace {

// Purpose tags: distinct draws never share a key.
enum Tag : uint64_t {
  kTopicTag = 1, kDenseTag, kWeightTag, kBagTag, kIdTag, kLatentTag,
  kNegativeTag, kLabelTag, kNoiseTag,
};

constexpr double kSameTopic = 0.75;    ///< chance that an id has the example's topic
constexpr double kRealNoise = 0.1;     ///< std of the noise on real labels
constexpr double kClassNoise = 0.3;    ///< std of the noise before class binning
/// The latent values of a vocabulary this small are computed once, when the
/// generator is made, up to this many values in all (8 MB): a draw then
/// reads its value instead of looking it up in the per-thread cache, whose
/// misses (26 columns share its 8192 entries) and Box-Muller transforms were
/// a quarter of the MLPerf DLRM's batch generation.
constexpr int64_t kPrecomputedVocab = int64_t(1) << 16;
constexpr int64_t kPrecomputedLatents = int64_t(1) << 20;

/// r in [0, range) with P(r) ~ log((r+2)/(r+1)), close to Zipf 1/(r+1);
/// `logRange` is log(range + 1).
int64_t zipfLike(int64_t range, double logRange, double u) {
  double x = std::exp(u * logRange);
  return std::clamp<int64_t>(static_cast<int64_t>(x) - 1, 0, range - 1);
}

/// id in [0, vocab) with P(id) ~ (id+1)^-power (inverse CDF of the
/// continuous power law on [1, vocab+1)).
int64_t powerLaw(int64_t vocab, double power, double u) {
  double top = static_cast<double>(vocab) + 1.0, x;
  double exponent = 1.0 - power;
  if (std::abs(exponent) < 1e-9)
    x = std::exp(u * std::log(top));
  else
    x = std::pow(1.0 + u * (std::pow(top, exponent) - 1.0), 1.0 / exponent);
  return std::clamp<int64_t>(static_cast<int64_t>(x) - 1, 0, vocab - 1);
}

/// standardNormal(h), remembered per thread in a direct-mapped cache keyed
/// by h itself. An id's latent value is a pure function of (seed, column,
/// id), and the Zipf-like ids repeat a lot, so most draws skip the log, cos
/// and sqrt of the Box-Muller transform (they were a third of dlrm_small's
/// batch assembly). Values are the uncached ones exactly.
double cachedNormal(uint64_t h) {
  struct Entry {
    uint64_t key = 0;
    double value = 0;
    bool filled = false;
  };
  constexpr size_t kEntries = size_t(1) << 13; // 8192 x 24 bytes: in L2
  thread_local std::vector<Entry> cache(kEntries);
  Entry &e = cache[size_t(h) & (kEntries - 1)];
  if (!e.filled || e.key != h) {
    e.key = h;
    e.value = standardNormal(h);
    e.filled = true;
  }
  return e.value;
}

} // namespace

int64_t SyntheticGenerator::idsOfTopic(const Column &column, int64_t topic) {
  return (column.vocab - topic + column.topics - 1) / column.topics;
}

SyntheticGenerator::SyntheticGenerator(std::vector<FeatureSpec> features, uint64_t seed)
    : features_(std::move(features)), seed_(seed) {
  int signalFeatures = 0;
  for (const FeatureSpec &spec : features_) {
    int64_t vocab = spec.vocab > 0 ? spec.vocab : kDefaultVocab;
    columns_.push_back({hashName(spec.column()), vocab, std::min(kTopics, vocab), {}, {}});
    Column &column = columns_.back();
    if (spec.kind == FeatureKind::Dense) {
      // A random direction of unit length: w . x is then exactly N(0, 1),
      // however few columns the feature has.
      double norm = 0;
      for (int64_t j = 0; j < spec.width; ++j) {
        column.denseWeights.push_back(standardNormal(hashOf(seed_, kWeightTag, column.key, j)));
        norm += column.denseWeights.back() * column.denseWeights.back();
      }
      for (double &weight : column.denseWeights)
        weight /= std::sqrt(norm);
    }
    if (spec.kind == FeatureKind::Sparse)
      for (int64_t topic = 0; topic < column.topics; ++topic)
        column.logTopicRange.push_back(
            std::log(static_cast<double>(idsOfTopic(column, topic)) + 1.0));
    if (spec.kind == FeatureKind::Dense || spec.kind == FeatureKind::Sparse)
      ++signalFeatures;
    const uint64_t start = hashStart(seed_);
    column.bagPrefix = hashMore(hashMore(start, kBagTag), column.key);
    column.idPrefix = hashMore(hashMore(start, kIdTag), column.key);
    column.latentPrefix = hashMore(hashMore(start, kLatentTag), column.key);
    column.densePrefix = hashMore(hashMore(start, kDenseTag), column.key);
  }
  scoreNorm_ = signalFeatures ? 1.0 / std::sqrt(static_cast<double>(signalFeatures)) : 0.0;
  precomputeLatents();
}

void SyntheticGenerator::precomputeLatents() {
  // Smallest vocabularies first: they gain most (every draw hits) and cost
  // least (the MLPerf DLRM's 18 columns under 40k ids take 1.1 MB).
  std::vector<size_t> small;
  for (size_t f = 0; f < features_.size(); ++f)
    if (features_[f].kind == FeatureKind::Sparse && columns_[f].vocab <= kPrecomputedVocab)
      small.push_back(f);
  std::sort(small.begin(), small.end(),
            [&](size_t a, size_t b) { return columns_[a].vocab < columns_[b].vocab; });
  int64_t room = kPrecomputedLatents;
  for (size_t f : small) {
    Column &column = columns_[f];
    if (column.vocab > room)
      break;
    room -= column.vocab;
    column.latent.resize(size_t(column.vocab));
    for (int64_t id = 0; id < column.vocab; ++id)
      column.latent[size_t(id)] = standardNormal(hashMore(column.latentPrefix, uint64_t(id)));
  }
}

double SyntheticGenerator::denseValues(size_t f, uint64_t index, float *out) const {
  const Column &column = columns_[f];
  double contribution = 0;
  const uint64_t example = hashMore(column.densePrefix, index); // hashOf(seed_, kDenseTag, key, index, ...)
  for (size_t j = 0; j < column.denseWeights.size(); ++j) {
    double x = standardNormal(hashMore(example, j));
    contribution += column.denseWeights[j] * x;
    if (out)
      out[j] = static_cast<float>(x);
  }
  return contribution;
}

double SyntheticGenerator::sparseBag(size_t f, uint64_t index, uint64_t topic,
                                     FeatureBatch *out) const {
  const FeatureSpec &spec = features_[f];
  const Column &column = columns_[f];
  // hashOf(seed_, kBagTag, key, index) % hotness: always 0 for one-hot bags.
  int64_t bag = spec.hotness == 1
                    ? 1
                    : 1 + static_cast<int64_t>(hashMore(column.bagPrefix, index) %
                                               static_cast<uint64_t>(spec.hotness));
  double sum = 0;
  const uint64_t example = hashMore(column.idPrefix, index); // hashOf(seed_, kIdTag, key, index, ...)
  for (int64_t k = 0; k < bag; ++k) {
    uint64_t h = hashMore(example, uint64_t(k));
    int64_t idTopic = uniform01(mix64(h ^ 1)) < kSameTopic
                          ? static_cast<int64_t>(topic) % column.topics
                          : static_cast<int64_t>(mix64(h ^ 2) % column.topics);
    int64_t r = zipfLike(idsOfTopic(column, idTopic), column.logTopicRange[idTopic],
                         uniform01(mix64(h ^ 3)));
    int64_t id = r * column.topics + idTopic;
    double weight = spec.weighted ? 0.5 + uniform01(mix64(h ^ 4)) : 1.0;
    sum += weight * (column.latent.empty()
                         ? cachedNormal(hashMore(column.latentPrefix, uint64_t(id)))
                         : column.latent[size_t(id)]);
    if (out) {
      out->ids.push_back(id);
      if (spec.weighted)
        out->weights.push_back(static_cast<float>(weight));
    }
  }
  if (out)
    closeBag(*out);
  return sum / static_cast<double>(bag);
}

void SyntheticGenerator::sampleNegatives(size_t f, uint64_t index, int64_t *out) const {
  const FeatureSpec &spec = features_[f];
  const Column &column = columns_[f];
  for (int64_t j = 0; j < spec.count; ++j)
    out[j] = powerLaw(column.vocab, spec.power,
                      uniform01(hashOf(seed_, kNegativeTag, column.key, index, j)));
}

float SyntheticGenerator::labelFor(const FeatureSpec &label, double score,
                                   uint64_t index) const {
  uint64_t key = hashName(label.column());
  if (label.labelKind == LabelKind::Real)
    return static_cast<float>(score +
                              kRealNoise * standardNormal(hashOf(seed_, kNoiseTag, key, index)));
  if (label.labelKind == LabelKind::Class) {
    int64_t classes = label.classes > 0 ? label.classes : kDefaultClasses;
    double noisy = (score + kClassNoise * standardNormal(hashOf(seed_, kNoiseTag, key, index))) /
                   std::sqrt(1.0 + kClassNoise * kClassNoise);
    double quantile = 0.5 * std::erfc(-noisy / std::sqrt(2.0));
    return static_cast<float>(std::clamp<int64_t>(
        static_cast<int64_t>(quantile * static_cast<double>(classes)), 0, classes - 1));
  }
  double probability = 1.0 / (1.0 + std::exp(-kLogitScale * score));
  return uniform01(hashOf(seed_, kLabelTag, key, index)) < probability ? 1.0f : 0.0f;
}

double SyntheticGenerator::score(uint64_t index, Batch *out, int64_t row) const {
  uint64_t topic = hashOf(seed_, kTopicTag, index) % kTopics;
  double sum = 0;
  for (size_t f = 0; f < features_.size(); ++f) {
    const FeatureSpec &spec = features_[f];
    FeatureBatch *feature = out ? &out->features[f] : nullptr;
    switch (spec.kind) {
    case FeatureKind::Dense:
      sum += denseValues(f, index, feature ? &feature->dense[row * spec.width] : nullptr);
      break;
    case FeatureKind::Sparse:
      sum += sparseBag(f, index, topic, feature);
      break;
    case FeatureKind::Negatives:
      if (feature)
        sampleNegatives(f, index, &feature->negatives[row * spec.count]);
      break;
    case FeatureKind::Label:
      break; // needs the score: below
    }
  }
  double s = sum * scoreNorm_;
  if (out)
    for (size_t f = 0; f < features_.size(); ++f)
      if (features_[f].kind == FeatureKind::Label)
        out->features[f].label[row] = labelFor(features_[f], s, index);
  return s;
}

void SyntheticGenerator::writeExample(uint64_t index, Batch &out, int64_t row) const {
  score(index, &out, row);
}

double SyntheticGenerator::trueScore(uint64_t index) const {
  return score(index, nullptr, 0);
}

namespace {

class SyntheticSource final : public ExampleSource {
public:
  SyntheticSource(const StreamOptions &options, const std::vector<FeatureSpec> &features)
      : generator_(features, options.seed), training_(options.training) {
    examples_ = training_ ? SyntheticGenerator::kTrainingEpoch
                : options.evalExamples > 0 ? static_cast<uint64_t>(options.evalExamples)
                                           : 16 * static_cast<uint64_t>(options.batchSize);
    stats_.examples = static_cast<int64_t>(examples_);
    stats_.description = std::string("synthetic data (planted signal), seed ") +
                         std::to_string(options.seed) + ", " +
                         (training_ ? "training: a nominal epoch of "
                                    : "evaluation: one pass of ") +
                         std::to_string(examples_) + " examples";
  }

  uint64_t size() const override { return examples_; }
  bool shufflesEpochs() const override { return false; }
  const DataStats &stats() const override { return stats_; }

  void fill(const std::vector<uint64_t> &examples, const std::vector<uint64_t> &,
            Batch &out) const override {
    uint64_t offset = training_ ? 0 : SyntheticGenerator::kEvalOffset;
    for (size_t r = 0; r < examples.size(); ++r)
      generator_.writeExample(offset + examples[r], out, static_cast<int64_t>(r));
  }

private:
  SyntheticGenerator generator_;
  bool training_;
  uint64_t examples_;
  DataStats stats_;
};

} // namespace

std::shared_ptr<const ExampleSource>
embc::runtime::data::openSyntheticSource(const StreamOptions &options,
                                         const std::vector<FeatureSpec> &features) {
  return std::make_shared<SyntheticSource>(options, features);
}
