//===- PlanCudaTest.cpp - the plan's CUDA program (`cuda`, format v4) -----===//
//
// The CUDA program round-trips field for field, is optional, and the reader
// refuses launches the CUDA backend could not run, naming the JSON path.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

using namespace embc::runtime;
using namespace embc::runtime::testing;

namespace {

/// The sample plan with one generated kernel per plan kernel, all reading
/// the ids, their length cell and some scratch.
Plan withCuda() {
  Plan plan = samplePlan();
  plan.cuda.source = "extern \"C\" __global__ void emb_0_k(EmbArgs a) {}\n";
  plan.cuda.scratchBytes = 512;
  plan.cuda.errors = {"ids of table 'emb' outside [0, 10)"};
  auto lower = [](const std::vector<Kernel> &kernels) {
    std::vector<CudaKernel> out;
    for (size_t i = 0; i < kernels.size(); ++i) {
      CudaLaunch l;
      l.kind = "kernel";
      l.entry = "emb_0_k";
      CudaArg ids, length, scratch;
      ids.buffer = kIdsInput;
      length.length = kIdsInput;
      scratch.scratch = 256;
      l.args = {ids, length, scratch};
      l.grid[0] = 3;
      l.block = 128;
      l.shared = 1024;
      l.params = {{"note", int(i)}};
      out.push_back({{l}});
    }
    return out;
  };
  plan.cuda.step = lower(plan.step);
  plan.cuda.update = lower(plan.update);
  return plan;
}

template <class F> std::string errorAfter(F change) {
  Plan plan = withCuda();
  change(plan);
  return errorFor(plan);
}

} // namespace

TEST(PlanCuda, RoundTripsAndIsOptional) {
  Plan plan = withCuda();
  std::string error;
  std::optional<Plan> back = deserializePlan(serializePlan(plan), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(planToJson(*back), planToJson(plan));
  EXPECT_EQ(back->cuda.step.at(0).launches.at(0).args.at(1).length, kIdsInput);
  EXPECT_EQ(back->cuda.update.size(), plan.update.size());
  // Without a program the field is absent and reads back empty.
  Plan cpuOnly = samplePlan();
  EXPECT_FALSE(planToJson(cpuOnly).contains("cuda"));
  back = deserializePlan(serializePlan(cpuOnly), error);
  ASSERT_TRUE(back) << error;
  EXPECT_TRUE(back->cuda.source.empty());
}

TEST(PlanCuda, LaunchListsMatchTheKernels) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.step.pop_back(); }),
            "cuda.step: has " + std::to_string(samplePlan().step.size() - 1) +
                " kernels, the plan's step has " + std::to_string(samplePlan().step.size()));
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.update[0].launches.clear(); }),
            "cuda.update[0]: has no launch");
}

// Length variants (format v10) belong to a plan with one sequence feature;
// their positive path is every compiled token model (e2e tests).
TEST(PlanCuda, LengthVariantsNeedASequence) {
  EXPECT_EQ(errorAfter([](Plan &p) {
              CudaLengthVariant v;
              v.length = 8;
              p.cuda.lengths.push_back(v);
            }),
            "cuda.lengths: length variants need a plan with one sequence feature whose kernels "
            "all pad per batch");
}

TEST(PlanCuda, LaunchesAreRunnable) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.step[0].launches[0].kind = "host"; }),
            "cuda.step[0][0].kind: unknown launch kind 'host' (expected kernel, gemm, library, "
            "memset or collective)");
  // A collective names one the backend runs (format v8).
  EXPECT_EQ(errorAfter([](Plan &p) {
              p.cuda.step[0].launches[0].kind = "collective";
              p.cuda.step[0].launches[0].entry = "all_reduce_start";
            }),
            "<accepted>");
  EXPECT_EQ(errorAfter([](Plan &p) {
              p.cuda.step[0].launches[0].kind = "collective";
              p.cuda.step[0].launches[0].entry = "broadcast";
            }),
            "cuda.step[0][0].entry: unknown collective 'broadcast' (expected all_reduce_start, "
            "all_reduce_wait, gather_rows, shard_ids, shard_pool, shard_pool_grad, "
            "shard_ids_group, shard_pool_group or shard_pool_grad_group)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.step[0].launches[0].entry = "emb_9_gone"; }),
            "cuda.step[0][0].entry: 'emb_9_gone' is not defined in cuda.source");
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.step[0].launches[0].args[2].scratch = 512; }),
            "cuda.step[0][0].args[2].scratch: 512 is outside the scratch's 512 bytes");
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.step[0].launches[0].args[1].length = kLogits; }),
            "cuda.step[0][0].args[1].length: buffer " + std::to_string(kLogits) +
                " is not dynamic: it has no length cell");
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.step[0].launches[0].args[0].buffer = 999; }).find(
                "cuda.step[0][0].args[0].buffer"),
            0u);
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.step[0].launches[0].block = 2048; }),
            "cuda.step[0][0].block: must be 1..1024 threads, got 2048");
  EXPECT_EQ(errorAfter([](Plan &p) { p.cuda.step[0].launches[0].grid[1] = 0; }),
            "cuda.step[0][0].grid: grid dimension out of range: 0");
}
