//===- CudaCollectivesTest.cpp - collective launches on a Device ----------===//
//
// CudaCollectives on the emulated device with a one-rank job: what prepare()
// refuses in a launch (naming where), and what each collective leaves in
// device memory and the length cells. The exchanges between several ranks
// are e2e.distributed's (mpirun on the emulated device, against one
// process).
//
//===----------------------------------------------------------------------===//

#include "CudaCollectives.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace embc::runtime;
using namespace embc::runtime::cuda;

namespace {

CudaArg bufferArg(int32_t b) {
  CudaArg a;
  a.buffer = b;
  return a;
}
CudaArg lengthArg(int32_t b) {
  CudaArg a;
  a.length = b;
  return a;
}
CudaArg scratchArg(int64_t at) {
  CudaArg a;
  a.scratch = at;
  return a;
}

CudaLaunch collective(const std::string &entry, std::vector<CudaArg> args,
                      nlohmann::json params) {
  CudaLaunch l;
  l.kind = "collective";
  l.entry = entry;
  l.args = std::move(args);
  l.params = std::move(params);
  return l;
}

/// A plan of one rank with a dense gradient (buffer 0, 8 floats) and a
/// sparse gradient (row ids, buffer 1, and rows of dim 2, buffer 2;
/// capacity 4).
Plan onePlan() {
  Plan plan;
  plan.config.dataParallel = 1;
  auto add = [&](const char *name, DType type, std::vector<int64_t> shape, bool dynamic) {
    Buffer b;
    b.name = name;
    b.dtype = type;
    b.shape = shape;
    b.dynamic = dynamic;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    b.bytes = n * (type == DType::I64 ? 8 : 4);
    plan.buffers.push_back(b);
  };
  add("grad", DType::F32, {8}, false);
  add("grad_rows", DType::I64, {4}, true);
  add("grad_values", DType::F32, {4, 2}, true);
  return plan;
}

struct Fixture : ::testing::Test {
  void SetUp() override {
    device = createEmulatedDevice();
    self = comm::createSelfCommunicator();
    state.plan = &plan;
    state.length.assign(plan.buffers.size(), 0);
    state.comm = self.get();
  }
  Plan plan = onePlan();
  std::unique_ptr<Device> device;
  std::unique_ptr<comm::Communicator> self;
  ExecState state;
};

using CudaCollectivesTest = Fixture;

TEST_F(CudaCollectivesTest, PrepareRefusesMalformedLaunches) {
  CudaCollectives c(*device, nullptr);
  auto refusal = [&](const CudaLaunch &l) {
    try {
      c.prepare(plan, l, "step kernel 3 'x'");
    } catch (const PlanError &e) {
      return std::string(e.what());
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(refusal(collective("all_reduce_start", {bufferArg(0)}, {{"offset", 0}})),
            "step kernel 3 'x': collective 'all_reduce_start' needs integer param 'count'");
  EXPECT_EQ(refusal(collective("all_reduce_start", {bufferArg(0)}, {{"offset", 4}, {"count", 5}})),
            "step kernel 3 'x': slice [4, +5) lies outside gradient 'grad'");
  EXPECT_EQ(refusal(collective("all_reduce_wait", {}, nlohmann::json::object())),
            "step kernel 3 'x': collective 'all_reduce_wait' takes 1 args, the plan gives 0");
  EXPECT_EQ(refusal(collective("shard_pool", {bufferArg(0), bufferArg(0)},
                               {{"block", 4}, {"owner", 1}})),
            "step kernel 3 'x': owner rank 1 is not a rank of the job");
  EXPECT_EQ(refusal(collective("shard_ids", {bufferArg(1), bufferArg(1), lengthArg(1),
                                             bufferArg(1), bufferArg(1), lengthArg(1)},
                               {{"rows", 10}, {"bags", 2}, {"capacity", 4}, {"bounds", {0, 5, 10}}})),
            "step kernel 3 'x': 3 shard bounds for a job of 1 ranks");
  EXPECT_EQ(refusal(collective("scatter", {}, nlohmann::json::object())),
            "step kernel 3 'x': unknown collective 'scatter'");
}

TEST_F(CudaCollectivesTest, OneRankGatherKeepsTheRowsAndSetsTheLengths) {
  CudaCollectives c(*device, nullptr);
  int32_t h = c.prepare(plan,
                        collective("gather_rows",
                                   {bufferArg(1), bufferArg(2), lengthArg(1), lengthArg(2),
                                    scratchArg(0)},
                                   {{"dim", 2}, {"capacity", 4}}),
                        "update kernel 0 'gather_rows'");
  std::byte *memory = device->allocate(1024);
  auto *rows = reinterpret_cast<int64_t *>(memory);
  auto *values = reinterpret_cast<float *>(memory + 64);
  auto *cells = reinterpret_cast<int64_t *>(memory + 128);
  std::byte *staging = memory + 256;
  int64_t ids[3] = {7, 3, 9};
  float rowValues[6] = {1, 2, 3, 4, 5, 6};
  std::memcpy(rows, ids, sizeof ids);
  std::memcpy(values, rowValues, sizeof rowValues);
  cells[0] = 3;
  void *args[5] = {rows, values, &cells[0], &cells[1], staging};
  c.run(h, args, state, "gather_rows");
  EXPECT_EQ(cells[0], 3);
  EXPECT_EQ(cells[1], 3);
  EXPECT_EQ(state.length[1], 3);
  EXPECT_EQ(std::vector<int64_t>(rows, rows + 3), std::vector<int64_t>(ids, ids + 3));
  EXPECT_EQ(std::vector<float>(values, values + 6), std::vector<float>(rowValues, rowValues + 6));
}

TEST_F(CudaCollectivesTest, AllReduceStartAndWaitOnOneRankLeaveTheGradient) {
  CudaCollectives c(*device, nullptr);
  int32_t start = c.prepare(plan, collective("all_reduce_start", {bufferArg(0)},
                                             {{"offset", 2}, {"count", 4}}),
                            "step kernel 9");
  int32_t wait = c.prepare(plan, collective("all_reduce_wait", {bufferArg(0)},
                                            nlohmann::json::object()),
                           "update kernel 0");
  float grad[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  void *args[1] = {grad};
  c.run(start, args, state, "grad_all_reduce_start");
  c.run(wait, args, state, "grad_all_reduce_wait");
  EXPECT_EQ(grad[2], 3.0f);
  EXPECT_EQ(grad[7], 8.0f);
}

TEST_F(CudaCollectivesTest, APlanForMoreRanksNamesTheMpirunItNeeds) {
  plan.config.dataParallel = 2;
  CudaCollectives c(*device, nullptr);
  int32_t wait = c.prepare(plan, collective("all_reduce_wait", {bufferArg(0)},
                                            nlohmann::json::object()),
                           "update kernel 0");
  float grad[8] = {};
  void *args[1] = {grad};
  try {
    c.run(wait, args, state, "grad_all_reduce_wait");
    ADD_FAILURE() << "a one-rank job ran a plan for 2 ranks";
  } catch (const PlanError &e) {
    EXPECT_NE(std::string(e.what()).find("run it with mpirun -np 2"), std::string::npos)
        << e.what();
  }
}

} // namespace
