//===- PlanPlacementTest.cpp - tables' placement in the plan (format v12) -===//
//
// TABLE and TABLE_BATCH `placement` (docs/plan-format.md, "Table
// placement"): written only when not device, read back with device as the
// default; a disk table's buffers of their own start on a page
// (kDiskPageBytes) and own their pages whole; a placed table is not
// sharded; a batch's members share its placement.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "../PlanBuffers.h"

#include <gtest/gtest.h>

using namespace embc::runtime;
using namespace embc::runtime::testing;
using nlohmann::json;

namespace {

/// The sample plan with its table on disk: the table's rows and its
/// accumulator moved to pages of their own past the other buffers.
Plan diskSample() {
  Plan plan = samplePlan();
  plan.tables[0].placement = Placement::Disk;
  const int64_t page = (plan.arenaBytes + kDiskPageBytes - 1) / kDiskPageBytes * kDiskPageBytes;
  plan.buffers[kTable].offset = page;
  plan.buffers[kTableAccumulator].offset = page + kDiskPageBytes;
  plan.arenaBytes = page + 2 * kDiskPageBytes;
  return plan;
}

/// The sample plan with its table in a batch of one (the batch's rows and
/// accumulator new buffers, the table's views into them at offset 0).
Plan batchedSample(Placement batchPlacement, Placement tablePlacement) {
  Plan plan = samplePlan();
  const int32_t rows = addBuffer(plan, "batch_rows", BufferRole::Table, DType::F32, {10, 8});
  const int32_t acc = addBuffer(plan, "batch_acc", BufferRole::OptimizerState, DType::F32, {10});
  plan.buffers[kTable].parent = rows;
  plan.buffers[kTable].offset = plan.buffers[rows].offset;
  plan.buffers[kTableAccumulator].parent = acc;
  plan.buffers[kTableAccumulator].offset = plan.buffers[acc].offset;
  TableBatch batch;
  batch.name = "batch";
  batch.rows = 10;
  batch.dim = 8;
  batch.buffer = rows;
  batch.gradRows = kTableGradRows;
  batch.gradValues = kTableGradValues;
  batch.state = {acc};
  batch.members = {0};
  batch.rowOffsets = {0};
  batch.optimizer = plan.tables[0].optimizer;
  batch.placement = batchPlacement;
  plan.tableBatches.push_back(batch);
  plan.tables[0].placement = tablePlacement;
  return plan;
}

template <class F> std::string errorAfter(Plan plan, F change) {
  change(plan);
  return errorFor(plan);
}

} // namespace

TEST(PlanPlacement, WrittenOnlyWhenNotDevice) {
  json device = planToJson(samplePlan());
  EXPECT_FALSE(device["tables"][0].contains("placement"));
  json disk = planToJson(diskSample());
  EXPECT_EQ(disk["tables"][0]["placement"], "disk");
  json batched = planToJson(batchedSample(Placement::Host, Placement::Host));
  EXPECT_EQ(batched["table_batches"][0]["placement"], "host");
  EXPECT_EQ(batched["tables"][0]["placement"], "host");
  EXPECT_FALSE(planToJson(batchedSample(Placement::Device, Placement::Device))["table_batches"][0]
                   .contains("placement"));
}

TEST(PlanPlacement, RoundTripsAndDefaultsToDevice) {
  for (Plan plan : {diskSample(), batchedSample(Placement::Host, Placement::Host),
                    batchedSample(Placement::Device, Placement::Device)}) {
    std::string error;
    std::optional<Plan> back = deserializePlan(serializePlan(plan), error);
    ASSERT_TRUE(back) << error;
    expectSamePlan(plan, *back);
    ASSERT_EQ(back->tableBatches.size(), plan.tableBatches.size());
    for (size_t i = 0; i < plan.tableBatches.size(); ++i)
      EXPECT_EQ(back->tableBatches[i].placement, plan.tableBatches[i].placement);
  }
  // A body without the key reads as device.
  std::string error;
  std::optional<Plan> device = deserializePlan(serializePlan(samplePlan()), error);
  ASSERT_TRUE(device) << error;
  EXPECT_EQ(device->tables[0].placement, Placement::Device);
}

TEST(PlanPlacement, BufferPlacementsFollowTheOwners) {
  Plan plan = batchedSample(Placement::Disk, Placement::Disk);
  std::vector<Placement> placement = plan.bufferPlacements();
  ASSERT_EQ(placement.size(), plan.buffers.size());
  const int32_t rows = plan.tableBatches[0].buffer, acc = plan.tableBatches[0].state[0];
  for (int32_t b : {rows, acc, int32_t(kTable), int32_t(kTableAccumulator)})
    EXPECT_EQ(placement[size_t(b)], Placement::Disk) << plan.buffers[size_t(b)].name;
  // The sparse gradient and everything else stay on the device.
  for (int32_t b : {int32_t(kTableGradRows), int32_t(kTableGradValues), int32_t(kWeight),
                    int32_t(kPooled)})
    EXPECT_EQ(placement[size_t(b)], Placement::Device) << plan.buffers[size_t(b)].name;
}

TEST(PlanPlacement, UnknownWordIsRefused) {
  std::string error =
      errorFor(sampleWithBodyEdit([](json &body) { body["tables"][0]["placement"] = "ssd"; }));
  EXPECT_EQ(error, "tables[0].placement: unknown placement 'ssd' (expected device, host or disk)");
}

TEST(PlanPlacement, DiskBuffersOwnWholePages) {
  EXPECT_EQ(errorFor(diskSample()), "<accepted>");
  // Off a page.
  const int64_t off = diskSample().buffers[kTableAccumulator].offset + 64;
  EXPECT_EQ(errorAfter(diskSample(), [](Plan &p) { p.buffers[kTableAccumulator].offset += 64; }),
            "buffers[3].offset: " + std::to_string(off) +
                " is not a multiple of 4096: buffer 'emb_accumulator' of a disk table is mapped "
                "from a file page by page");
  // The last page (40 bytes, rounded up to 4096) past the arena.
  std::string past = errorAfter(diskSample(), [](Plan &p) { p.arenaBytes -= kDiskPageBytes - 64; });
  EXPECT_EQ(past.rfind("buffers[3].offset: buffer 'emb_accumulator' of a disk table at offset ", 0),
            0u)
      << past;
  EXPECT_NE(past.find("rounded up to whole pages (4096 bytes) ends past the arena"),
            std::string::npos)
      << past;
  // Another buffer in the rest of the table's page (its 320 bytes end at
  // byte 320 of the page).
  std::string shared = errorAfter(diskSample(), [](Plan &p) {
    p.buffers[kScratch].offset = p.buffers[kTable].offset + 320;
  });
  EXPECT_NE(shared.find("must not share memory"), std::string::npos) << shared;
  // A device table may lie anywhere: the same offsets are fine.
  EXPECT_EQ(errorAfter(diskSample(),
                       [](Plan &p) {
                         p.tables[0].placement = Placement::Device;
                         p.buffers[kScratch].offset = p.buffers[kTable].offset + 320;
                       }),
            "<accepted>");
}

TEST(PlanPlacement, ShardedTablesStayOnTheDevice) {
  EXPECT_EQ(errorAfter(samplePlan(),
                       [](Plan &p) {
                         p.config.dataParallel = 2;
                         p.tables[0].shardRows = {0, 10, 10};
                         p.tables[0].placement = Placement::Host;
                       }),
            "tables[0].placement: table 'emb' is sharded but has placement host: a sharded "
            "table lives on its ranks' devices");
}

TEST(PlanPlacement, BatchMembersShareThePlacement) {
  EXPECT_EQ(errorFor(batchedSample(Placement::Host, Placement::Host)), "<accepted>");
  EXPECT_EQ(errorFor(batchedSample(Placement::Host, Placement::Device)),
            "table_batches[0].members[0]: table 'emb' has placement device, the batch host: a "
            "batch's members share one placement");
  // A disk table outside any batch must own its buffers (these are views).
  EXPECT_EQ(errorAfter(batchedSample(Placement::Device, Placement::Disk),
                       [](Plan &p) { p.tableBatches.clear(); }),
            "tables[0].placement: disk table 'emb' is in no batch, but its buffer "
            "'emb_accumulator' is a view into 'batch_acc'");
}
