//===- Synthetic.h - generated examples with a planted signal ---*- C++ -*-===//
//
// The default data source: no file, any feature set, and a hidden "true"
// model that the labels follow, so training measurably learns. Example i is a
// pure function of (seed, i) built from counter-based draws, so streams are
// deterministic, resumable and assembled in parallel.
//
// How example i is made (K = min(16, V) topics, V = vocab or kDefaultVocab = 10,000):
//   - a hidden topic t in [0, 16) shared by all sparse features of the example;
//   - dense features: every value ~ N(0, 1);
//   - sparse features: a bag of 1..hotness ids; each id has topic t with
//     probability 3/4 (else a random topic) and is r*K + topic with r
//     Zipf-like (P(r) ~ 1/(r+1)), so a few ids are frequent and ids of one
//     topic co-occur (skip-gram models learn the topics); weighted features
//     get weights uniform in [0.5, 1.5);
//   - negatives: ids drawn from the power law P(id) ~ (id+1)^-power over
//     [0, V), close to the sparse ids' own unigram^power, independent of the
//     example;
//   - the hidden score s = (sum of the contributions of the dense and sparse
//     features) / sqrt(their number), where a dense feature contributes
//     w . x (w a random unit vector, fixed per column) and a sparse feature the
//     (weighted) mean of its ids' latent weights (N(0, 1), a hash of
//     (seed, column, id)); s is roughly N(0, 1) (a feature with a handful
//     of ids has only that many latent weights, so its share varies by seed);
//   - labels: binary ~ Bernoulli(sigmoid(kLogitScale * s)); real = s + N(0, 0.1^2);
//     class = the bin of Phi(s + noise) among `classes` (default 10)
//     equally likely bins, so classes are ordered and balanced.
// Columns are keyed by name: two features reading one column get one value.
//
// Training example i is stream position i (no epochs: every example is new;
// examplesPerEpoch() is a nominal 1,000,000). Evaluation example i is
// 2^40 + i, so held-out data never repeats a training example (a training
// run would need 2^40 examples to reach them); an evaluation pass holds
// StreamOptions::evalExamples examples, 16 batches by default.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_DATA_SYNTHETIC_H
#define EMBC_RUNTIME_DATA_SYNTHETIC_H

#include "embc/runtime/data/Data.h"

#include <cstdint>
#include <vector>

namespace embc::runtime::data {

class SyntheticGenerator {
public:
  /// Logit = kLogitScale * score: a Bayes-optimal AUC of about 0.94 when the
  /// features carry the signal evenly, leaving a model that cannot learn the
  /// rare ids well room to reach 0.85.
  static constexpr double kLogitScale = 4.0;
  /// Ids are drawn from [0, kDefaultVocab) for features with vocab 0.
  static constexpr int64_t kDefaultVocab = 10000;
  static constexpr int64_t kDefaultClasses = 10;
  static constexpr int64_t kTopics = 16;
  /// The nominal training epoch (only paces epoch counters and logs).
  static constexpr uint64_t kTrainingEpoch = 1000000;
  /// Evaluation example i is example kEvalOffset + i.
  static constexpr uint64_t kEvalOffset = uint64_t(1) << 40;

  /// `features` must already be checked (openStream does).
  SyntheticGenerator(std::vector<FeatureSpec> features, uint64_t seed);

  /// Writes example `index` into row `row` of every feature of `out`, whose
  /// dense, negatives and label vectors are sized for the batch. Sparse bags
  /// are appended, so rows must be written in order.
  void writeExample(uint64_t index, Batch &out, int64_t row) const;

  /// The hidden score s of example `index` (see above).
  double trueScore(uint64_t index) const;

  /// The label a feature of `labelKind` gets for score `s` of example `index`.
  float labelFor(const FeatureSpec &label, double score, uint64_t index) const;

private:
  struct Column {
    uint64_t key;   ///< hash of the column name
    int64_t vocab;  ///< ids are drawn from [0, vocab)
    int64_t topics; ///< min(kTopics, vocab)
    std::vector<double> denseWeights; ///< Dense: the hidden w (fixed per column)
    std::vector<double> logTopicRange; ///< Sparse: log(1 + ids of topic t), per t
    /// Sparse, a small vocabulary: every id's latent value, as
    /// standardNormal computes it (empty: computed per draw, cached).
    std::vector<double> latent;
    // hashOf's fold over (seed, tag, key), shared by every draw of the
    // column: the per-draw words are folded onto these (CounterRandom.h).
    uint64_t bagPrefix = 0, idPrefix = 0, latentPrefix = 0, densePrefix = 0;
  };
  /// How many ids of [0, vocab) have topic `topic` (are topic mod topics).
  static int64_t idsOfTopic(const Column &column, int64_t topic);
  /// Draws the bag of sparse feature `f` and returns its contribution to s;
  /// appends ids (and weights) to `out` when it is not null.
  double sparseBag(size_t f, uint64_t index, uint64_t topic, FeatureBatch *out) const;
  /// Fills Column::latent of the small vocabularies (kPrecomputedVocab ids
  /// or fewer, kPrecomputedLatents values in all).
  void precomputeLatents();
  /// The contribution of dense feature `f`; writes its values to `out` if set.
  double denseValues(size_t f, uint64_t index, float *out) const;
  void sampleNegatives(size_t f, uint64_t index, int64_t *out) const;
  double score(uint64_t index, Batch *out, int64_t row) const;

  std::vector<FeatureSpec> features_;
  std::vector<Column> columns_; ///< per feature
  uint64_t seed_;
  double scoreNorm_; ///< 1 / sqrt(number of dense and sparse features)
};

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_DATA_SYNTHETIC_H
