//===- EvalMetricsTest.cpp - AUC, RMSE, accuracy against hand results -----===//
//
// Each expected value is worked out by hand from the pair-counting
// definition of AUC (ties count one half), so the sort-and-count
// implementation is checked against an independent computation.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace embc::runtime;

namespace {

TEST(AucTest, PerfectAndInverseRanking) {
  EXPECT_DOUBLE_EQ(computeAuc({0.1f, 0.2f, 0.8f, 0.9f}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(computeAuc({0.9f, 0.8f, 0.2f, 0.1f}, {0, 0, 1, 1}), 0.0);
}

TEST(AucTest, HandComputedMixedRanking) {
  // Positives 0.35, 0.8; negatives 0.1, 0.4. Correct pairs: (0.35>0.1),
  // (0.8>0.1), (0.8>0.4) = 3 of 4.
  EXPECT_DOUBLE_EQ(computeAuc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}), 0.75);
  // Positives 0.5, 0.2, 0.9; negatives 0.3, 0.6: pairs won 1 + 0 + 2 = 3 of 6.
  EXPECT_DOUBLE_EQ(computeAuc({0.5f, 0.3f, 0.2f, 0.6f, 0.9f}, {1, 0, 1, 0, 1}),
                   0.5);
}

TEST(AucTest, TiesCountOneHalf) {
  // All scores equal: every pair is a tie.
  EXPECT_DOUBLE_EQ(computeAuc({0.5f, 0.5f, 0.5f, 0.5f}, {0, 1, 0, 1}), 0.5);
  // Positive 0.5 ties negative 0.5 and beats negative 0.1; positive 0.9 beats
  // both: (1 + 0.5) + 2 = 3.5 of 4.
  EXPECT_DOUBLE_EQ(computeAuc({0.1f, 0.5f, 0.5f, 0.9f}, {0, 0, 1, 1}), 0.875);
  // A tie group with two positives and one negative above a negative:
  // each positive: 1 (beats 0.2) + 0.5 (ties) -> 3 of 4.
  EXPECT_DOUBLE_EQ(computeAuc({0.2f, 0.7f, 0.7f, 0.7f}, {0, 1, 1, 0}), 0.75);
}

/// AUC by its definition: the (positive, negative) pairs ordered correctly,
/// ties counting one half, over all pairs.
double pairCountingAuc(const std::vector<float> &scores, const std::vector<float> &labels) {
  double won = 0, pairs = 0;
  for (size_t p = 0; p < scores.size(); ++p)
    for (size_t n = 0; n < scores.size(); ++n)
      if (labels[p] == 1 && labels[n] == 0) {
        pairs += 1;
        won += scores[p] > scores[n] ? 1.0 : scores[p] == scores[n] ? 0.5 : 0.0;
      }
  return won / pairs;
}

TEST(AucTest, MatchesPairCountingOnRandomData) {
  std::mt19937 random(3);
  std::uniform_int_distribution<int> coarseScore(0, 9); // many ties
  std::bernoulli_distribution coin(0.3);
  std::vector<float> scores(400), labels(400);
  for (size_t i = 0; i < scores.size(); ++i) {
    scores[i] = static_cast<float>(coarseScore(random));
    labels[i] = coin(random) ? 1.0f : 0.0f;
  }
  EXPECT_NEAR(computeAuc(scores, labels), pairCountingAuc(scores, labels), 1e-12);
}

// Signed scores, -0 beside +0 (equal, a tie), infinities and denormals:
// the radix sort's float-to-key order must be the floats' own.
TEST(AucTest, MatchesPairCountingAcrossSignsZerosAndInfinities) {
  std::mt19937 random(7);
  const float specials[] = {-0.0f, 0.0f, INFINITY, -INFINITY, 1e-42f, -1e-42f, -2.5f, 2.5f};
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::bernoulli_distribution coin(0.4), special(0.3);
  std::vector<float> scores(600), labels(600);
  for (size_t i = 0; i < scores.size(); ++i) {
    scores[i] = special(random) ? specials[random() % 8] : normal(random);
    labels[i] = coin(random) ? 1.0f : 0.0f;
  }
  EXPECT_NEAR(computeAuc(scores, labels), pairCountingAuc(scores, labels), 1e-12);
}

TEST(AucTest, UndefinedCasesGiveNaN) {
  EXPECT_TRUE(std::isnan(computeAuc({0.1f, 0.9f}, {1, 1})));
  EXPECT_TRUE(std::isnan(computeAuc({0.1f, 0.9f}, {0, 0})));
  EXPECT_TRUE(std::isnan(computeAuc({}, {})));
  EXPECT_TRUE(std::isnan(computeAuc({0.1f, NAN}, {0, 1})));
}

TEST(AucTest, RejectsBadInput) {
  EXPECT_THROW(computeAuc({0.1f, 0.2f}, {0}), std::invalid_argument);
  try {
    computeAuc({0.1f, 0.2f}, {0, 0.5f});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("label 1 is 0.5"), std::string::npos)
        << e.what();
  }
}

TEST(RmseTest, HandComputed) {
  // Errors 1, -1, 3, -1: mean square (1 + 1 + 9 + 1) / 4 = 3.
  EXPECT_DOUBLE_EQ(computeRmse({2, 3, 7, 4}, {1, 4, 4, 5}), std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(computeRmse({1.5f, -2}, {1.5f, -2}), 0.0);
  EXPECT_TRUE(std::isnan(computeRmse({}, {})));
  EXPECT_THROW(computeRmse({1, 2}, {1}), std::invalid_argument);
}

TEST(AccuracyTest, LogitsAboveZeroArePositive) {
  // Correct: 2.0->1, -1.0->0, 0.0->0 (not > 0); wrong: 0.5->0, -3->1.
  EXPECT_DOUBLE_EQ(
      computeAccuracy({2.0f, -1.0f, 0.0f, 0.5f, -3.0f}, {1, 0, 0, 0, 1}), 0.6);
  EXPECT_TRUE(std::isnan(computeAccuracy({}, {})));
  EXPECT_THROW(computeAccuracy({1}, {2}), std::invalid_argument);
}

TEST(PeakMemoryTest, GrowsWhenMemoryIsTouched) {
  size_t before = peakResidentBytes();
  EXPECT_GT(before, 0u);
  // Touch 64 MiB more than the process has ever had resident.
  size_t extra = 64u << 20;
  std::vector<char> block(before + extra, 1);
  volatile char sink = block[block.size() - 1];
  (void)sink;
  EXPECT_GE(peakResidentBytes(), before + extra / 2);
}

} // namespace
