//===- EarlyStopTest.cpp - --stop-at, --patience and --monitor ------------===//
//
// EarlyStop (runtime/lib/exec/EarlyStop.h) over a sequence of evaluations:
// which is the best by the monitored metric (in its direction), when
// patience runs out (ties and NaN are no improvement), when a target is
// met, and the error naming the metrics an evaluation has.
//
//===----------------------------------------------------------------------===//

#include "EarlyStop.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace embc::runtime;

namespace {
using Eval = std::map<std::string, double>;
} // namespace

TEST(EarlyStop, PatienceCountsEvaluationsWithoutABetterValue) {
  EarlyStop stop(std::nullopt, 2, "eval_loss");
  EXPECT_TRUE(stop.observe(10, {{"eval_loss", 0.7}}).best);
  EXPECT_TRUE(stop.observe(20, {{"eval_loss", 0.6}}).best);
  EarlyStop::Verdict tie = stop.observe(30, {{"eval_loss", 0.6}});
  EXPECT_FALSE(tie.best);
  EXPECT_EQ(tie.stop, "");
  EarlyStop::Verdict nan = stop.observe(40, {{"eval_loss", std::nan("")}});
  EXPECT_FALSE(nan.best);
  EXPECT_EQ(nan.stop, "2 evaluations without a better eval_loss (best 0.6 at step 20)");
  EXPECT_EQ(stop.bestStep(), 20);
  EXPECT_EQ(stop.bestValue(), 0.6);
}

TEST(EarlyStop, HigherIsBetterForAucAndAccuracy) {
  EXPECT_TRUE(higherIsBetter("eval_auc"));
  EXPECT_TRUE(higherIsBetter("eval_accuracy"));
  EXPECT_FALSE(higherIsBetter("eval_rmse"));
  EXPECT_FALSE(higherIsBetter("eval_perplexity"));
  EarlyStop stop(std::nullopt, 1, "eval_auc");
  stop.observe(1, {{"eval_auc", 0.7}});
  EXPECT_TRUE(stop.observe(2, {{"eval_auc", 0.71}}).best);
  EXPECT_NE(stop.observe(3, {{"eval_auc", 0.70}}).stop, "");
  EXPECT_EQ(stop.bestStep(), 2);
}

TEST(EarlyStop, ATargetStopsAtTheFirstEvaluationThatMeetsIt) {
  EarlyStop stop(StopTarget{"eval_auc", true, 0.8025}, 0, "eval_loss");
  EXPECT_EQ(stop.observe(1, {{"eval_auc", 0.8024}, {"eval_loss", 0.5}}).stop, "");
  EarlyStop::Verdict met = stop.observe(2, {{"eval_auc", 0.8025}, {"eval_loss", 0.51}});
  EXPECT_EQ(met.stop, "eval_auc 0.8025 >= 0.8025");
  EXPECT_FALSE(met.best); // by the monitored loss, step 1 stays the best
  EarlyStop low(StopTarget{"eval_rmse", false, 0.9}, 0, "eval_rmse");
  EXPECT_EQ(low.observe(1, {{"eval_rmse", 0.95}}).stop, "");
  EXPECT_EQ(low.observe(2, {{"eval_rmse", 0.9}}).stop, "eval_rmse 0.9 <= 0.9");
}

TEST(EarlyStop, AMissingMetricNamesWhatTheEvaluationHas) {
  EarlyStop stop(std::nullopt, 3, "eval_auc");
  try {
    stop.observe(1, {{"eval_loss", 1.0}, {"eval_rmse", 0.5}, {"examples", 10}});
    FAIL() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "--monitor eval_auc: the evaluation reports eval_loss, eval_rmse");
  }
}
