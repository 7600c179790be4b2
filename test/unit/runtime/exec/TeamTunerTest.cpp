//===- TeamTunerTest.cpp - choosing the CPU team size by step times -------===//

#include "TeamTuner.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

namespace embc::runtime {
namespace {

/// Feeds the tuner steps whose time depends on the team size in use, until
/// `seconds` of training have passed; returns the size it ends with.
int train(TeamTuner &tuner, double seconds, const std::function<double(int)> &stepTime) {
  double elapsed = 0;
  while (elapsed < seconds) {
    const double t = stepTime(tuner.current());
    elapsed += t;
    tuner.stepTimed(t);
  }
  return tuner.current();
}

TEST(TeamTuner, KeepsTheLargestTeamWhenItIsFastest) {
  TeamTuner tuner(8, true);
  EXPECT_EQ(tuner.current(), 8);
  // 10 ms on one thread, perfect scaling.
  EXPECT_EQ(train(tuner, 5, [](int n) { return 0.010 / n; }), 8);
  EXPECT_NE(tuner.decision().find("cpu team: 8 thread(s)"), std::string::npos)
      << tuner.decision();
}

TEST(TeamTuner, ChoosesTheFastestSmallerTeam) {
  TeamTuner tuner(4, true);
  // Tiny steps: every extra thread costs more than it brings.
  const std::map<int, double> times{{4, 300e-6}, {2, 200e-6}, {1, 100e-6}};
  EXPECT_EQ(train(tuner, 2, [&](int n) { return times.at(n); }), 1);
  EXPECT_NE(tuner.decision().find("4: 0.3 ms, 2: 0.2 ms, 1: 0.1 ms"), std::string::npos)
      << tuner.decision();
}

TEST(TeamTuner, ASmallerTeamMustWinByTheMargin) {
  TeamTuner tuner(2, true);
  // One thread only 1 % faster: noise, not a reason to give up a thread.
  EXPECT_EQ(train(tuner, 2, [](int n) { return n == 2 ? 1.00e-3 : 0.99e-3; }), 2);
}

TEST(TeamTuner, MeasuresAgainWhenTheMachineChanges) {
  TeamTuner tuner(2, true);
  // Idle machine: two threads are faster.
  EXPECT_EQ(train(tuner, 10, [](int n) { return n == 2 ? 5e-3 : 9e-3; }), 2);
  // A neighbour takes a core: one thread is now faster. Noticed at the next
  // trial, within kRetuneSeconds (plus the trial itself).
  EXPECT_EQ(train(tuner, TeamTuner::kRetuneSeconds + 2,
                  [](int n) { return n == 2 ? 14e-3 : 10e-3; }),
            1);
}

TEST(TeamTuner, UsesTheMeanOfBimodalSteps) {
  TeamTuner tuner(2, true);
  // Two threads alternate fast and slow steps (the data threads fall
  // behind every other step): mean 10 ms, median-like view 14 ms; one
  // thread steady at 12 ms. Throughput favours two.
  int step = 0;
  EXPECT_EQ(train(tuner, 5, [&](int n) { return n == 1 ? 12e-3 : (++step % 2 ? 6e-3 : 14e-3); }),
            2);
}

TEST(TeamTuner, ComparesTimePerUnitOfWork) {
  // Dynamic padding with length buckets: the steps of the one-thread turns
  // happen to be short batches (a quarter of the work), the two-thread
  // turns' long ones. Per unit of work two threads are faster (5 ms
  // against 9 ms a full step), though their steps take longer.
  TeamTuner tuner(2, true);
  double elapsed = 0;
  while (elapsed < 10) {
    const bool two = tuner.current() == 2;
    const double work = two ? 1.0 : 0.25, t = (two ? 5e-3 : 9e-3) * work;
    elapsed += t;
    tuner.stepTimed(t, work);
  }
  EXPECT_EQ(tuner.current(), 2) << tuner.decision();
  // The retune clock counts seconds, not work: one trial after the first
  // in the next kRetuneSeconds of short steps.
  const int64_t trials = tuner.trials();
  for (double t = 0; t < TeamTuner::kRetuneSeconds + 1; t += 5e-3 * 0.25)
    tuner.stepTimed(5e-3 * 0.25, 0.25);
  EXPECT_EQ(tuner.trials(), trials + 1);
}

TEST(TeamTuner, DisabledOrSingleThreadNeverMoves) {
  TeamTuner off(4, false), single(1, true);
  EXPECT_EQ(train(off, 30, [](int n) { return n == 1 ? 1e-4 : 1e-3; }), 4);
  EXPECT_EQ(train(single, 30, [](int) { return 1e-3; }), 1);
  EXPECT_EQ(off.decision(), "");
}

} // namespace
} // namespace embc::runtime
