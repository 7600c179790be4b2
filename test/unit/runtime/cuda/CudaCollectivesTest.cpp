//===- CudaCollectivesTest.cpp - collective launches on a Device ----------===//
//
// CudaCollectives in a one-rank job: what prepare() refuses in a launch
// (naming where), and what each collective leaves in device memory and the
// length cells, on the emulated device and, where a GPU is present, on it
// over a one-rank NCCL communicator (skipped elsewhere). The exchanges
// between several ranks are e2e.distributed's (mpirun on the emulated
// device, against one process).
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
  // The groups of -emb-batch-exchanges.
  nlohmann::json two = {{{"block", 4}, {"owner", -1}}, {{"block", 4}, {"owner", -1}}};
  std::vector<CudaArg> fiveArgs = {bufferArg(0), bufferArg(0), bufferArg(0), bufferArg(0),
                                   scratchArg(0)};
  EXPECT_EQ(refusal(collective("shard_pool_group", fiveArgs, {{"staging", 8}})),
            "step kernel 3 'x': collective 'shard_pool_group' needs its 'members'");
  EXPECT_EQ(refusal(collective("shard_pool_group", fiveArgs, {{"members", two}, {"staging", 2}})),
            "step kernel 3 'x': collective 'shard_pool_group' stages 8 floats twice in its "
            "last arg (scratch), the plan gives 2");
  EXPECT_EQ(refusal(collective("shard_pool_grad_group", {bufferArg(0), bufferArg(0), scratchArg(0)},
                               {{"members", two}, {"staging", 8}})),
            "step kernel 3 'x': collective 'shard_pool_grad_group' takes 5 args, the plan gives 3");
  EXPECT_EQ(refusal(collective("shard_pool_group", fiveArgs,
                               {{"members", {{{"block", 0}, {"owner", -1}}, two[1]}},
                                {"staging", 8}})),
            "step kernel 3 'x': a member of collective 'shard_pool_group' has block 0 and owner -1");
  EXPECT_EQ(refusal(collective("shard_ids_group",
                               {bufferArg(1), bufferArg(1), lengthArg(1), bufferArg(1),
                                bufferArg(1)},
                               {{"members",
                                 {{{"rows", 10}, {"bags", 2}, {"capacity", 4}, {"bounds", {0, 10}}}}}})),
            "step kernel 3 'x': collective 'shard_ids_group' takes 6 args, the plan gives 5");
}

// One rank: a group's pooled rows come back as they went (a table_wise
// member owned by rank 0 and two row_wise ones packed through the scratch),
// and the gradients likewise.
TEST_F(CudaCollectivesTest, PooledGroupsOnOneRankGiveEachMemberItsRows) {
  CudaCollectives c(*device, nullptr);
  nlohmann::json members = {{{"block", 3}, {"owner", 0}},
                            {{"block", 2}, {"owner", -1}},
                            {{"block", 4}, {"owner", -1}}};
  for (const char *entry : {"shard_pool_group", "shard_pool_grad_group"}) {
    int32_t h = c.prepare(plan,
                          collective(entry,
                                     {bufferArg(0), bufferArg(0), bufferArg(0), bufferArg(0),
                                      bufferArg(0), bufferArg(0), scratchArg(0)},
                                     {{"members", members}, {"staging", 6}}),
                          "step kernel 0");
    float a[3] = {1, 2, 3}, b[2] = {4, 5}, d[4] = {6, 7, 8, 9};
    float oa[3] = {}, ob[2] = {}, od[4] = {}, staging[12] = {};
    void *args[7] = {a, b, d, oa, ob, od, staging};
    c.run(h, args, state, entry);
    EXPECT_EQ(std::vector<float>(oa, oa + 3), std::vector<float>(a, a + 3)) << entry;
    EXPECT_EQ(std::vector<float>(ob, ob + 2), std::vector<float>(b, b + 2)) << entry;
    EXPECT_EQ(std::vector<float>(od, od + 4), std::vector<float>(d, d + 4)) << entry;
  }
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

/// Every collective of a one-rank job, on the emulated device (the job's
/// self communicator on its memory) and, where there is a GPU, on the GPU
/// over a one-rank NCCL communicator: the same launches must leave the same
/// bytes. Device memory is written and read through the Device only.
class OneRank : public Fixture, public ::testing::WithParamInterface<const char *> {
protected:
  void SetUp() override {
    Fixture::SetUp();
    if (std::string(GetParam()) == "cuda") {
      std::string why;
      if (!cudaDeviceAvailable(why))
        GTEST_SKIP() << "no GPU: " << why;
      device = createCudaDevice(0);
      try {
        nccl = comm::createNcclCommunicator(*self, 0, device->nativeStream());
      } catch (const comm::CommError &e) {
        // A build without NCCL cannot test it; any other failure is one.
        if (std::string(e.what()).find("built without NCCL") == std::string::npos)
          throw;
        GTEST_SKIP() << e.what();
      }
    }
    memory = device->allocate(4096);
  }
  template <class T> void put(int64_t at, const std::vector<T> &values) {
    device->toDevice(memory + at, values.data(), values.size() * sizeof(T));
  }
  template <class T> std::vector<T> get(int64_t at, size_t n) {
    std::vector<T> values(n);
    device->toHost(values.data(), memory + at, n * sizeof(T));
    return values;
  }
  void *at(int64_t offset) { return memory + offset; }

  std::unique_ptr<comm::Communicator> nccl;
  std::byte *memory = nullptr;
};

TEST_P(OneRank, GatherRowsKeepsTheRowsAndSetsTheLengths) {
  CudaCollectives c(*device, std::move(nccl));
  int32_t h = c.prepare(plan,
                        collective("gather_rows",
                                   {bufferArg(1), bufferArg(2), lengthArg(1), lengthArg(2),
                                    scratchArg(0)},
                                   {{"dim", 2}, {"capacity", 4}}),
                        "update kernel 0 'gather_rows'");
  put<int64_t>(0, {7, 3, 9});
  put<float>(64, {1, 2, 3, 4, 5, 6});
  put<int64_t>(128, {3, 0});
  void *args[5] = {at(0), at(64), at(128), at(136), at(256)};
  c.run(h, args, state, "gather_rows");
  EXPECT_EQ(get<int64_t>(128, 2), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(state.length[1], 3);
  EXPECT_EQ(get<int64_t>(0, 3), (std::vector<int64_t>{7, 3, 9}));
  EXPECT_EQ(get<float>(64, 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_P(OneRank, AllReduceStartAndWaitLeaveTheGradient) {
  CudaCollectives c(*device, std::move(nccl));
  int32_t start = c.prepare(plan, collective("all_reduce_start", {bufferArg(0)},
                                             {{"offset", 2}, {"count", 4}}),
                            "step kernel 9");
  int32_t wait = c.prepare(plan, collective("all_reduce_wait", {bufferArg(0)},
                                            nlohmann::json::object()),
                           "update kernel 0");
  std::vector<float> grad = {1, 2, 3, 4, 5, 6, 7, 8};
  put(0, grad);
  void *args[1] = {at(0)};
  c.run(start, args, state, "grad_all_reduce_start");
  c.run(wait, args, state, "grad_all_reduce_wait");
  EXPECT_EQ(get<float>(0, 8), grad);
}

TEST_P(OneRank, ShardPoolAndItsGradientAreCopiesOnOneRank) {
  CudaCollectives c(*device, std::move(nccl));
  for (const char *entry : {"shard_pool", "shard_pool_grad"})
    for (int owner : {-1, 0}) {
      int32_t h = c.prepare(plan, collective(entry, {bufferArg(0), bufferArg(0)},
                                             {{"block", 4}, {"owner", owner}}),
                            "step kernel 1");
      put<float>(0, {1, 2, 3, 4});
      put<float>(64, {0, 0, 0, 0});
      void *args[2] = {at(0), at(64)};
      c.run(h, args, state, entry);
      EXPECT_EQ(get<float>(64, 4), (std::vector<float>{1, 2, 3, 4})) << entry << " owner " << owner;
    }
}

TEST_P(OneRank, ShardIdsMakeLocalBagsWithMeanWeights) {
  // Ids [1, 4 | 8] in two bags of a 10-row table on one rank; per-bag mean
  // weights: 1/2, 1/2, 1.
  plan.buffers[1].shape = {8};
  CudaCollectives c(*device, std::move(nccl));
  int32_t h = c.prepare(plan,
                        collective("shard_ids",
                                   {bufferArg(1), bufferArg(1), lengthArg(1), bufferArg(1),
                                    bufferArg(1), lengthArg(1), bufferArg(2), lengthArg(2)},
                                   {{"table", "t"},
                                    {"rows", 10},
                                    {"bounds", {0, 10}},
                                    {"bags", 2},
                                    {"capacity", 8},
                                    {"weighted", false},
                                    {"weights_out", true},
                                    {"per_bag_mean", true}}),
                        "step kernel 0 'shard_ids'");
  put<int64_t>(0, {1, 4, 8});       // ids
  put<int64_t>(64, {0, 2, 3});      // offsets
  put<int64_t>(128, {3, 0, 0});     // cells: ids, local ids, local weights
  void *args[8] = {at(0), at(64), at(128), at(256), at(512), at(136), at(768), at(144)};
  c.run(h, args, state, "shard_ids");
  EXPECT_EQ(get<int64_t>(256, 3), (std::vector<int64_t>{1, 4, 8}));
  EXPECT_EQ(get<int64_t>(512, 3), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(get<float>(768, 3), (std::vector<float>{0.5f, 0.5f, 1.0f}));
  EXPECT_EQ(get<int64_t>(128, 3), (std::vector<int64_t>{3, 3, 3}));
  // An id outside the table is a data error, as on the CPU.
  put<int64_t>(0, {1, 40, 8});
  EXPECT_THROW(c.run(h, args, state, "shard_ids"), data::DataError);
}

INSTANTIATE_TEST_SUITE_P(Devices, OneRank, ::testing::Values("emulated", "cuda"),
                         [](const ::testing::TestParamInfo<const char *> &info) {
                           return std::string(info.param);
                         });

} // namespace
