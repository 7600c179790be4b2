//===- ReservoirSampleTest.cpp - the bounded sample of a training interval -===//
//
// A training interval's AUC/RMSE comes from at most 2^20 (score, label)
// pairs per rank (Trainer.cpp's Outcomes): every pair up to the limit, a
// uniform sample past it, the same sample on a rerun.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace embc::runtime;

TEST(ReservoirSample, KeepsEverythingUpToTheLimit) {
  ReservoirSample s(100);
  for (int i = 0; i < 100; ++i)
    s.offer(float(i), float(i % 2));
  ASSERT_EQ(s.scores().size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(s.scores()[size_t(i)], float(i));
    EXPECT_EQ(s.labels()[size_t(i)], float(i % 2));
  }
  ReservoirSample unlimited;
  for (int i = 0; i < 5000; ++i)
    unlimited.offer(float(i), 0);
  EXPECT_EQ(unlimited.scores().size(), 5000u);
}

TEST(ReservoirSample, StaysBoundedAndUniformPastTheLimit) {
  // 1,000 slots over 100,000 offers: each offer kept with probability 1/100.
  // Counted per tenth of the stream, each holds 100 +- a few sqrt(90).
  const int limit = 1000, n = 100000;
  ReservoirSample s(limit);
  for (int i = 0; i < n; ++i)
    s.offer(float(i), float(i) + 0.5f); // the label travels with its score
  ASSERT_EQ(s.scores().size(), size_t(limit));
  EXPECT_EQ(s.offered(), uint64_t(n));
  std::vector<int> perTenth(10, 0);
  for (size_t k = 0; k < s.scores().size(); ++k) {
    EXPECT_EQ(s.labels()[k], s.scores()[k] + 0.5f);
    ++perTenth[size_t(s.scores()[k]) / (n / 10)];
  }
  for (int t = 0; t < 10; ++t)
    EXPECT_NEAR(perTenth[size_t(t)], limit / 10, 5 * std::sqrt(90.0)) << "tenth " << t;
  // The same offers, the same sample.
  ReservoirSample again(limit);
  for (int i = 0; i < n; ++i)
    again.offer(float(i), float(i) + 0.5f);
  EXPECT_EQ(again.scores(), s.scores());
}

TEST(ReservoirSample, GatheredSamplesKeepEveryPair) {
  ReservoirSample all = ReservoirSample::of({1, 2, 3}, {0, 1, 0});
  EXPECT_EQ(all.scores(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(all.labels(), (std::vector<float>{0, 1, 0}));
  EXPECT_EQ(all.offered(), 3u);
}
