//===- SyntheticTest.cpp - the planted-signal generator -------------------===//
//
// The generator must be learnable (the Bayes-optimal AUC of its labels, the
// AUC of the true logits, is at least 0.85), produce every feature kind
// within its bounds, and be a pure function of (seed, example index).
//
//===----------------------------------------------------------------------===//

#include "DataTestUtil.h"

#include "embc/runtime/data/Synthetic.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

/// Area under the ROC curve of `scores` for 0/1 `labels` (Mann-Whitney).
double areaUnderCurve(const std::vector<double> &scores, const std::vector<float> &labels) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double positives = 0, rankSum = 0;
  for (size_t rank = 0; rank < order.size(); ++rank)
    if (labels[order[rank]] > 0.5f) {
      positives += 1;
      rankSum += static_cast<double>(rank + 1);
    }
  double negatives = static_cast<double>(scores.size()) - positives;
  return (rankSum - positives * (positives + 1) / 2) / (positives * negatives);
}

/// A DLRM-like feature set: 13 dense floats, 26 categorical features.
std::vector<FeatureSpec> dlrmFeatures() {
  std::vector<FeatureSpec> features{denseFeature("dense", 13)};
  for (int c = 1; c <= 26; ++c)
    features.push_back(sparseFeature("C" + std::to_string(c), c % 2 ? 100000 : 0));
  features.push_back(labelFeature("label", "binary"));
  return features;
}

/// The true scores and the labels of examples [0, count) of a stream.
void scoresAndLabels(const std::vector<FeatureSpec> &features, uint64_t seed, int64_t count,
                     std::vector<double> &scores, std::vector<float> &labels) {
  SyntheticGenerator generator(features, seed);
  StreamOptions options = streamOptions("synthetic", "", 1000, true, seed, 2);
  auto stream = openStream(options, features);
  Batch batch;
  size_t label = features.size() - 1;
  for (int64_t start = 0; start < count; start += options.batchSize) {
    ASSERT_TRUE(stream->next(batch));
    for (int64_t r = 0; r < batch.size; ++r) {
      scores.push_back(generator.trueScore(start + r));
      labels.push_back(batch.features[label].label[r]);
    }
  }
}

} // namespace

TEST(Synthetic, BayesAucOfDlrmLikeFeaturesIsAtLeast085) {
  std::vector<double> scores;
  std::vector<float> labels;
  scoresAndLabels(dlrmFeatures(), 3, 40000, scores, labels);
  double rate = std::accumulate(labels.begin(), labels.end(), 0.0) / labels.size();
  EXPECT_GT(rate, 0.4);
  EXPECT_LT(rate, 0.6);
  double auc = areaUnderCurve(scores, labels);
  EXPECT_GE(auc, 0.85);
  EXPECT_LE(auc, 0.97); // not trivially separable either
}

TEST(Synthetic, BayesAucOfTwoSparseFeaturesIsAtLeast085) {
  // Matrix-factorisation shape: the signal comes from ids alone.
  std::vector<FeatureSpec> features{sparseFeature("user", 1000), sparseFeature("item", 2000),
                                    labelFeature("click", "binary")};
  std::vector<double> scores;
  std::vector<float> labels;
  scoresAndLabels(features, 11, 40000, scores, labels);
  EXPECT_GE(areaUnderCurve(scores, labels), 0.85);
}

TEST(Synthetic, BayesAucOfMultiHotWeightedFeatureIsAtLeast085) {
  std::vector<FeatureSpec> features{sparseFeature("tags", 5000, 4), denseFeature("x", 3),
                                    labelFeature("y", "")};
  features[0].weighted = true;
  std::vector<double> scores;
  std::vector<float> labels;
  scoresAndLabels(features, 5, 40000, scores, labels);
  EXPECT_GE(areaUnderCurve(scores, labels), 0.85);
}

TEST(Synthetic, EveryKindStaysWithinItsSpec) {
  std::vector<FeatureSpec> features{denseFeature("d", 4), sparseFeature("s", 50, 3),
                                    sparseFeature("h", 0), negativesFeature("n", 5, 20),
                                    labelFeature("l", "binary")};
  features[1].weighted = true;
  auto stream = openStream(streamOptions("synthetic", "", 256, true), features);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.size, 256);
  EXPECT_EQ(batch.valid, 256);
  EXPECT_EQ(batch.position, 256u);
  ASSERT_EQ(batch.features.size(), 5u);
  EXPECT_EQ(batch.features[0].dense.size(), 256u * 4);
  double sum = 0, squares = 0;
  for (float x : batch.features[0].dense) {
    sum += x;
    squares += x * x;
  }
  EXPECT_NEAR(sum / 1024, 0.0, 0.15);
  EXPECT_NEAR(squares / 1024, 1.0, 0.15);

  const FeatureBatch &bags = batch.features[1];
  ASSERT_EQ(bags.offsets.size(), 257u);
  EXPECT_EQ(bags.offsets[0], 0);
  std::set<int64_t> bagSizes;
  for (int64_t r = 0; r < 256; ++r)
    bagSizes.insert(bags.offsets[r + 1] - bags.offsets[r]);
  EXPECT_EQ(bagSizes, (std::set<int64_t>{1, 2, 3}));
  EXPECT_EQ(bags.offsets.back(), static_cast<int64_t>(bags.ids.size()));
  ASSERT_EQ(bags.weights.size(), bags.ids.size());
  for (size_t i = 0; i < bags.ids.size(); ++i) {
    EXPECT_GE(bags.ids[i], 0);
    EXPECT_LT(bags.ids[i], 50);
    EXPECT_GE(bags.weights[i], 0.5f);
    EXPECT_LT(bags.weights[i], 1.5f);
  }

  const FeatureBatch &hashed = batch.features[2];
  ASSERT_EQ(hashed.ids.size(), 256u);
  EXPECT_TRUE(hashed.weights.empty());
  for (int64_t id : hashed.ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, SyntheticGenerator::kDefaultVocab);
  }

  ASSERT_EQ(batch.features[3].negatives.size(), 256u * 5);
  for (int64_t id : batch.features[3].negatives) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 20);
  }
  for (float y : batch.features[4].label)
    EXPECT_TRUE(y == 0.0f || y == 1.0f);
}

TEST(Synthetic, IdsAreZipfLike) {
  // The head of the distribution is heavy: id frequencies fall with rank.
  std::vector<FeatureSpec> features{sparseFeature("s", 100000), labelFeature("l", "binary")};
  auto stream = openStream(streamOptions("synthetic", "", 20000, true), features);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  std::map<int64_t, int> counts;
  for (int64_t id : batch.features[0].ids)
    ++counts[id];
  std::vector<int> frequencies;
  for (auto &[id, count] : counts)
    frequencies.push_back(count);
  std::sort(frequencies.rbegin(), frequencies.rend());
  EXPECT_GT(frequencies[0], 20 * frequencies[frequencies.size() / 2]);
  EXPECT_GT(counts.size(), 2000u); // and a long tail
}

TEST(Synthetic, RealAndClassLabelsFollowTheScore) {
  std::vector<FeatureSpec> features{sparseFeature("user", 500), sparseFeature("item", 500),
                                    labelFeature("rating", "real"),
                                    labelFeature("genre", "class")};
  SyntheticGenerator generator(features, 9);
  auto stream = openStream(streamOptions("synthetic", "", 20000, true, 9), features);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  std::vector<int> perClass(10);
  double errorSquares = 0;
  for (int64_t r = 0; r < batch.size; ++r) {
    double score = generator.trueScore(r);
    errorSquares += std::pow(batch.features[2].label[r] - score, 2);
    float cls = batch.features[3].label[r];
    ASSERT_EQ(cls, std::floor(cls));
    ASSERT_GE(cls, 0);
    ASSERT_LT(cls, 10);
    ++perClass[static_cast<int>(cls)];
  }
  EXPECT_NEAR(std::sqrt(errorSquares / batch.size), 0.1, 0.01); // score + N(0, 0.1^2)
  for (int count : perClass) {                                   // roughly balanced
    EXPECT_GT(count, 800);
    EXPECT_LT(count, 3500);
  }
}

TEST(Synthetic, ClassCountComesFromTheSpec) {
  std::vector<FeatureSpec> features{denseFeature("x", 2), labelFeature("y", "class")};
  features[1].classes = 3;
  auto stream = openStream(streamOptions("synthetic", "", 3000, true), features);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  std::set<float> classes(batch.features[1].label.begin(), batch.features[1].label.end());
  EXPECT_EQ(classes, (std::set<float>{0, 1, 2}));
}

TEST(Synthetic, SkipGramTopicsMakeCoOccurrenceLearnable) {
  // Ids of one example share a hidden topic (id mod 16) 3/4 of the time.
  std::vector<FeatureSpec> features{sparseFeature("center", 10000),
                                    sparseFeature("context", 10000),
                                    negativesFeature("negatives", 4, 10000)};
  auto stream = openStream(streamOptions("synthetic", "", 10000, true), features);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  int sameTopicPairs = 0, sameTopicNegatives = 0;
  for (int64_t r = 0; r < batch.size; ++r) {
    int64_t center = batch.features[0].ids[r];
    sameTopicPairs += center % 16 == batch.features[1].ids[r] % 16;
    sameTopicNegatives += center % 16 == batch.features[2].negatives[r * 4] % 16;
  }
  EXPECT_GT(sameTopicPairs, 5000);    // about 0.75^2 + 0.25^2 / 16 of pairs
  EXPECT_LT(sameTopicNegatives, 2000); // about 1/16
}

TEST(Synthetic, SameSeedSameBatchesOtherSeedOthers) {
  std::vector<FeatureSpec> features = dlrmFeatures();
  auto a = openStream(streamOptions("synthetic", "", 64, true, 1), features);
  auto b = openStream(streamOptions("synthetic", "", 64, true, 1), features);
  auto c = openStream(streamOptions("synthetic", "", 64, true, 2), features);
  std::vector<Batch> first = takeBatches(*a, 3), second = takeBatches(*b, 3),
                     other = takeBatches(*c, 3);
  EXPECT_TRUE(sameBatches(first, second));
  EXPECT_FALSE(sameBatch(first[0], other[0]));
  EXPECT_NE(first[0].features[0].dense, other[0].features[0].dense);
}

TEST(Synthetic, EvaluationIsAFixedHeldOutPass) {
  std::vector<FeatureSpec> features{denseFeature("x", 2), labelFeature("y", "binary")};
  auto train = openStream(streamOptions("synthetic", "", 32, true), features);
  auto eval = openStream(streamOptions("synthetic", "", 32, false), features);
  EXPECT_EQ(train->examplesPerEpoch(), 1000000u);
  EXPECT_EQ(eval->examplesPerEpoch(), 16u * 32);
  std::vector<Batch> evalBatches = takeBatches(*eval, 100);
  ASSERT_EQ(evalBatches.size(), 16u);
  EXPECT_EQ(evalBatches.back().position, 512u);
  EXPECT_EQ(evalBatches.back().valid, 32);
  Batch batch;
  EXPECT_FALSE(eval->next(batch));
  EXPECT_FALSE(eval->next(batch)); // stays at the end
  std::vector<Batch> trainBatches = takeBatches(*train, 1);
  EXPECT_NE(trainBatches[0].features[0].dense, evalBatches[0].features[0].dense);

  StreamOptions sized = streamOptions("synthetic", "", 32, false);
  sized.evalExamples = 70; // 2 full batches and 6 examples padded to 32
  auto padded = openStream(sized, features);
  std::vector<Batch> batches = takeBatches(*padded, 10);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2].valid, 6);
  EXPECT_EQ(batches[2].position, 70u);
  for (int64_t r = 6; r < 32; ++r) {
    EXPECT_EQ(batches[2].features[0].dense[2 * r], batches[2].features[0].dense[2 * 5]);
    EXPECT_EQ(batches[2].features[1].label[r], batches[2].features[1].label[5]);
  }
  // The same held-out examples whatever the training seed's stream did.
  auto again = openStream(streamOptions("synthetic", "", 32, false), features);
  EXPECT_TRUE(sameBatches(takeBatches(*again, 100), evalBatches));
}
