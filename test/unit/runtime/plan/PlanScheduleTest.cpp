//===- PlanScheduleTest.cpp - the runtime's re-check of Plan.schedule -----===//

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

using namespace embc::runtime;
using namespace embc::runtime::testing;

namespace {

/// The sample plan run as 2 micro-batches on one stage.
Plan scheduled() {
  Plan plan = samplePlan();
  plan.config.batchSize = 4;
  plan.config.microBatches = 2;
  for (int32_t mb = 0; mb < 2; ++mb)
    for (const char *kind : {"load", "forward", "backward"})
      plan.schedule.push_back({kind, 0, mb, -1, {}});
  plan.schedule.push_back({"reduce", 0, -1, -1, {}});
  plan.schedule.push_back({"step", 0, -1, -1, {}});
  return plan;
}

} // namespace

TEST(PlanSchedule, AScheduleIsValidAndRoundTrips) {
  Plan plan = scheduled();
  EXPECT_EQ(errorFor(plan), "<accepted>");
  std::string error;
  std::optional<Plan> back = deserializePlan(serializePlan(plan), error);
  ASSERT_TRUE(back) << error;
  ASSERT_EQ(back->schedule.size(), plan.schedule.size());
  EXPECT_EQ(back->schedule[4].kind, "forward");
  EXPECT_EQ(back->schedule[4].microBatch, 1);
  EXPECT_EQ(back->config.microBatches, 2);
}

TEST(PlanSchedule, MicroBatchesMustDivideTheBatch) {
  Plan plan = scheduled();
  plan.config.microBatches = 3;
  EXPECT_EQ(errorFor(plan), "config.micro_batches: 3 micro-batches do not divide the batch of 4");
}

TEST(PlanSchedule, BackwardBeforeForwardIsRefused) {
  Plan plan = scheduled();
  std::swap(plan.schedule[1], plan.schedule[2]);
  EXPECT_EQ(errorFor(plan),
            "schedule[1]: backward of micro-batch 0 on stage 0 before its forward");
}

TEST(PlanSchedule, RecvBeforeItsSendIsRefused) {
  Plan plan = scheduled();
  plan.config.pipelineStages = 2;
  plan.schedule = {{"load", 0, 0, -1, {}},  {"recv", 1, 0, 0, {1}},    {"forward", 0, 0, -1, {}},
                   {"send", 0, 0, 1, {1}},  {"forward", 1, 0, -1, {}}, {"backward", 1, 0, -1, {}},
                   {"backward", 0, 0, -1, {}}, {"step", 0, -1, -1, {}}, {"step", 1, -1, -1, {}}};
  plan.config.microBatches = 1;
  EXPECT_EQ(errorFor(plan), "schedule[1]: recv of micro-batch 0 from stage 0 before any matching send");
}

TEST(PlanSchedule, AMissingScheduleIsRefusedForSeveralMicroBatches) {
  Plan plan = scheduled();
  plan.schedule.clear();
  EXPECT_EQ(errorFor(plan), "schedule: is empty, but the plan has 2 micro-batch(es) and 1 stage(s)");
}

namespace {

/// Two stages, one micro-batch, buffer 1 crossing between them.
Plan twoStages() {
  Plan plan = scheduled();
  plan.config.pipelineStages = 2;
  plan.config.microBatches = 1;
  plan.schedule = {{"load", 0, 0, -1, {}},    {"forward", 0, 0, -1, {}},  {"send", 0, 0, 1, {1}},
                   {"recv", 1, 0, 0, {1}},    {"forward", 1, 0, -1, {}},  {"backward", 1, 0, -1, {}},
                   {"backward", 0, 0, -1, {}}, {"step", 0, -1, -1, {}},   {"step", 1, -1, -1, {}}};
  return plan;
}

} // namespace

TEST(PlanSchedule, StagesOnRanksRoundTrip) {
  Plan plan = twoStages();
  plan.config.stageRanks = {0, 1};
  EXPECT_EQ(errorFor(plan), "<accepted>");
  std::string error;
  std::optional<Plan> back = deserializePlan(serializePlan(plan), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->config.stageRanks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(back->config.pipelineRanks(), 2);
  EXPECT_EQ(back->config.jobRanks(), 2);
  EXPECT_EQ(back->config.rankOfStage(1), 1);
  // Both stages on rank 0 is one device by another name: still valid.
  plan.config.stageRanks = {0, 0};
  EXPECT_EQ(errorFor(plan), "<accepted>");
}

TEST(PlanSchedule, StageRanksAreContiguousAndOnePerStage) {
  Plan plan = twoStages();
  plan.config.stageRanks = {0};
  EXPECT_EQ(errorFor(plan), "config.stage_ranks: places 1 stage(s), but the plan has 2");
  plan.config.stageRanks = {1, 1};
  EXPECT_EQ(errorFor(plan), "config.stage_ranks[0]: rank 1 after rank 0: ranks start at 0 and "
                            "take contiguous stages in order");
  plan.config.stageRanks = {0, 2};
  EXPECT_EQ(errorFor(plan), "config.stage_ranks[1]: rank 2 after rank 0: ranks start at 0 and "
                            "take contiguous stages in order");
  plan.config.stageRanks = {0, 1};
  plan.config.dataParallel = 2;
  EXPECT_EQ(errorFor(plan),
            "config.stage_ranks: stages on ranks with data_parallel 2 are not supported");
}
