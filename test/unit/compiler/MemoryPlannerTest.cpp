//===- MemoryPlannerTest.cpp - -emb-plan-memory's planner on plain plans --===//
//
// The planner works on the runtime's Plan and on bare interval sets, so
// these tests need no MLIR: random interval sets (no two blocks that are
// live together share a byte; the peak is never below the lower bound; the
// greedy layout never needs more than the sequential one), the lifetime
// rules on small hand-made plans, and a planned plan passing the runtime's
// validation (which refuses overlapping live buffers).
//
//===----------------------------------------------------------------------===//

#include "MemoryPlanner.h"

#include "../runtime/PlanBuffers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace embc::memory;
namespace rt = embc::runtime;

namespace {

/// Fails the test if two blocks live at the same position share a byte (of
/// their reserved bytes: a page-aligned block's whole pages), or a block is
/// off its alignment.
void expectNoOverlap(const std::vector<Block> &blocks, const Layout &layout) {
  ASSERT_EQ(layout.offsets.size(), blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(layout.offsets[i] % kAlignment, 0) << "block " << i;
    EXPECT_EQ(layout.offsets[i] % blocks[i].align, 0) << "block " << i;
    EXPECT_LE(layout.offsets[i] + blocks[i].reserved(), layout.arenaBytes) << "block " << i;
    for (size_t j = i + 1; j < blocks.size(); ++j) {
      bool together = blocks[i].first <= blocks[j].last && blocks[j].first <= blocks[i].last;
      bool share = layout.offsets[i] < layout.offsets[j] + blocks[j].reserved() &&
                   layout.offsets[j] < layout.offsets[i] + blocks[i].reserved();
      EXPECT_FALSE(together && share) << "blocks " << i << " and " << j << " overlap";
    }
  }
}

std::vector<Block> randomBlocks(std::mt19937_64 &rng, int count, int positions) {
  std::uniform_int_distribution<int64_t> size(1, 5000), pos(0, positions - 1);
  std::bernoulli_distribution whole(0.15);
  std::vector<Block> blocks;
  for (int i = 0; i < count; ++i) {
    Block b;
    b.bytes = size(rng);
    if (whole(rng)) {
      b.first = 0, b.last = positions - 1;
    } else {
      b.first = pos(rng);
      b.last = std::min<int64_t>(positions - 1, b.first + pos(rng) / 4);
    }
    blocks.push_back(b);
  }
  return blocks;
}

TEST(MemoryPlanner, RandomIntervalsNeverOverlap) {
  std::mt19937_64 rng(20240605);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Block> blocks = randomBlocks(rng, 1 + trial % 60, 1 + trial % 40);
    Layout greedy = layoutBlocks(blocks, Strategy::GreedyBySize);
    Layout sequential = layoutBlocks(blocks, Strategy::Sequential);
    expectNoOverlap(blocks, greedy);
    expectNoOverlap(blocks, sequential);
    int64_t bound = liveBytesLowerBound(blocks);
    EXPECT_GE(greedy.arenaBytes, bound) << "trial " << trial;
    EXPECT_LE(greedy.arenaBytes, sequential.arenaBytes) << "trial " << trial;
    if (HasFailure())
      return;
  }
}

/// Greedy by size as first written: for each block, biggest first, the
/// placed blocks it meets sorted by offset and walked to the first gap (the
/// candidate kept on the block's alignment, each block keeping its reserved
/// bytes). The planner's chunked index must give exactly these offsets.
Layout referenceGreedy(const std::vector<Block> &blocks) {
  auto align = [](int64_t b, int64_t to = kAlignment) { return (b + to - 1) / to * to; };
  auto meet = [](const Block &a, const Block &b) {
    return (a.rank < 0 || b.rank < 0 || a.rank == b.rank) && a.first <= b.last &&
           b.first <= a.last;
  };
  Layout layout;
  layout.offsets.assign(blocks.size(), 0);
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Block &x = blocks[a], &y = blocks[b];
    if (x.bytes != y.bytes)
      return x.bytes > y.bytes;
    if (x.first != y.first)
      return x.first < y.first;
    return x.last > y.last;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    std::vector<size_t> met;
    for (size_t j : placed)
      if (meet(blocks[i], blocks[j]))
        met.push_back(j);
    std::sort(met.begin(), met.end(),
              [&](size_t a, size_t b) { return layout.offsets[a] < layout.offsets[b]; });
    int64_t offset = 0;
    for (size_t j : met) {
      if (offset + blocks[i].reserved() <= layout.offsets[j])
        break;
      offset = align(std::max(offset, align(layout.offsets[j] + blocks[j].reserved())),
                     blocks[i].align);
    }
    layout.offsets[i] = offset;
    layout.arenaBytes = std::max(layout.arenaBytes, align(offset + blocks[i].reserved()));
    placed.push_back(i);
  }
  return layout;
}

// Many blocks (past several chunks of the index), a few sizes so that equal
// offsets and whole-run stacks are common, and some blocks of one rank.
TEST(MemoryPlanner, GreedyEqualsTheReferenceOnLargeInputs) {
  std::mt19937_64 rng(20261127);
  for (int trial = 0; trial < 12; ++trial) {
    int positions = 1 + trial * 37;
    std::vector<Block> blocks = randomBlocks(rng, 300 + trial * 250, positions);
    std::uniform_int_distribution<int> pick(0, 5);
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (trial % 2)
        blocks[i].bytes = int64_t(64) << pick(rng); // few distinct sizes
      if (trial % 3 == 2 && pick(rng) == 0)
        blocks[i].rank = pick(rng) % 3;
    }
    Layout fast = layoutBlocks(blocks, Strategy::GreedyBySize);
    Layout reference = referenceGreedy(blocks);
    ASSERT_EQ(fast.arenaBytes, reference.arenaBytes) << "trial " << trial;
    ASSERT_EQ(fast.offsets, reference.offsets) << "trial " << trial;
  }
}

// A disk table's buffers (Block::align a page): on page boundaries, with
// their last page to themselves, among ordinary blocks of any lifetime; the
// chunked index still gives the reference's offsets.
TEST(MemoryPlanner, PageAlignedBlocksOwnWholePages) {
  std::mt19937_64 rng(20261203);
  for (int trial = 0; trial < 60; ++trial) {
    int positions = 1 + trial % 30;
    std::vector<Block> blocks = randomBlocks(rng, 20 + trial * 7, positions);
    std::bernoulli_distribution paged(0.2);
    for (Block &b : blocks)
      if (paged(rng)) { // whole run, as a table's buffers
        b.first = 0, b.last = positions - 1;
        b.align = rt::kDiskPageBytes;
      }
    for (Strategy strategy : {Strategy::GreedyBySize, Strategy::Sequential})
      expectNoOverlap(blocks, layoutBlocks(blocks, strategy));
    Layout fast = layoutBlocks(blocks, Strategy::GreedyBySize);
    Layout reference = referenceGreedy(blocks);
    ASSERT_EQ(fast.offsets, reference.offsets) << "trial " << trial;
    ASSERT_EQ(fast.arenaBytes, reference.arenaBytes) << "trial " << trial;
    EXPECT_GE(fast.arenaBytes, liveBytesLowerBound(blocks));
    if (HasFailure())
      return;
  }
  // Two whole-run pages blocks of 5000 and 100 bytes and a 64-byte block:
  // 8192 + 4096 bytes of pages, the small block after them.
  std::vector<Block> blocks = {{5000, 0, 3}, {64, 0, 3}, {100, 0, 3}};
  blocks[0].align = blocks[2].align = rt::kDiskPageBytes;
  Layout greedy = layoutBlocks(blocks, Strategy::GreedyBySize);
  EXPECT_EQ(greedy.offsets, (std::vector<int64_t>{0, 12288, 8192}));
  EXPECT_EQ(greedy.arenaBytes, 12288 + 64);
  Layout sequential = layoutBlocks(blocks, Strategy::Sequential);
  EXPECT_EQ(sequential.offsets, (std::vector<int64_t>{0, 8192, 12288}));
  EXPECT_EQ(sequential.arenaBytes, 16384);
  // The lower bound counts bytes, not pages.
  EXPECT_EQ(liveBytesLowerBound(blocks), 5164);
}

TEST(MemoryPlanner, DisjointLifetimesShareOneOffset) {
  // A chain of activations, each read only by the next kernel: two slots
  // suffice, and the peak is exactly two (aligned) buffers.
  std::vector<Block> chain;
  for (int64_t p = 0; p < 8; ++p)
    chain.push_back({1024, p, p + 1});
  Layout greedy = layoutBlocks(chain, Strategy::GreedyBySize);
  expectNoOverlap(chain, greedy);
  EXPECT_EQ(greedy.arenaBytes, 2048);
  EXPECT_EQ(liveBytesLowerBound(chain), 2048);
  EXPECT_EQ(layoutBlocks(chain, Strategy::Sequential).arenaBytes, 8 * 1024);
  EXPECT_EQ(greedy.offsets[0], greedy.offsets[2]);
}

TEST(MemoryPlanner, BlocksOfDifferentRanksShareBytes) {
  // Three whole-run table_wise tables: two owned by rank 0, one by rank 1,
  // and a replicated buffer every rank has. Rank 1's table lies on rank 0's
  // bytes; the arena is the larger rank's share plus the replicated block.
  std::vector<Block> blocks = {{4096, 0, 9, 0}, {1024, 0, 9, 0}, {4096, 0, 9, 1},
                               {512, 0, 9, -1}};
  Layout greedy = layoutBlocks(blocks, Strategy::GreedyBySize);
  EXPECT_EQ(greedy.offsets[0], greedy.offsets[2]);
  EXPECT_EQ(greedy.arenaBytes, 4096 + 1024 + 512);
  EXPECT_EQ(liveBytesLowerBound(blocks), 4096 + 1024 + 512);
  // Each rank's blocks and the replicated one never overlap.
  for (int32_t rank : {0, 1}) {
    std::vector<Block> mine;
    Layout seen;
    seen.arenaBytes = greedy.arenaBytes;
    for (size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].rank < 0 || blocks[i].rank == rank) {
        mine.push_back(blocks[i]);
        seen.offsets.push_back(greedy.offsets[i]);
      }
    expectNoOverlap(mine, seen);
  }
}

TEST(MemoryPlanner, LiveBytesPerPosition) {
  std::vector<Block> blocks = {{100, 0, 3}, {50, 1, 1}, {10, 2, 4}};
  EXPECT_EQ(liveBytesPerPosition(blocks, 5), (std::vector<int64_t>{100, 150, 110, 110, 10}));
  EXPECT_EQ(liveBytesLowerBound(blocks), 150);
}

TEST(MemoryPlanner, StrategyNames) {
  EXPECT_EQ(parseStrategy("greedy_by_size"), Strategy::GreedyBySize);
  EXPECT_EQ(parseStrategy("sequential"), Strategy::Sequential);
  EXPECT_FALSE(parseStrategy("best_fit").has_value());
  EXPECT_STREQ(strategyName(Strategy::GreedyBySize), "greedy_by_size");
}

/// A three-kernel step (a = f(x); b = g(a); loss = h(b)) and a one-kernel
/// update on a parameter; buffers in the order given.
rt::Plan chainPlan() {
  rt::Plan plan;
  auto add = [&](const char *name, rt::BufferRole role, std::vector<int64_t> shape) {
    rt::Buffer b;
    b.name = name;
    b.role = role;
    b.shape = shape;
    b.bytes = 4;
    for (int64_t d : shape)
      b.bytes *= d;
    plan.buffers.push_back(b);
    return int32_t(plan.buffers.size() - 1);
  };
  // Shapes the reader's operand checks accept (a = x w is 32 x 8).
  int32_t w = add("param/w", rt::BufferRole::Param, {2, 8});
  int32_t g = add("grad/w", rt::BufferRole::Grad, {2, 8});
  int32_t x = add("input/x", rt::BufferRole::Input, {32, 2});
  int32_t a = add("act/a", rt::BufferRole::Activation, {32, 8});
  int32_t b = add("act/b", rt::BufferRole::Activation, {256, 1});
  int32_t c = add("act/c", rt::BufferRole::Activation, {32, 8});
  int32_t loss = add("act/loss", rt::BufferRole::Activation, {1});
  int32_t scratch = add("workspace/s", rt::BufferRole::Workspace, {1});
  // Catalogue kernels (the reader validates them); only their operands
  // matter to the planner.
  using rt::testing::makeKernel;
  const nlohmann::json relu = {{"kind", "relu"}}, clip = {{"max_norm", 1.0}, {"grad_scale", 1.0}};
  plan.step = {makeKernel("dense", {x, w}, {a}), makeKernel("activation", {a}, {b}, relu),
               makeKernel("activation", {b}, {c}, relu),
               makeKernel("loss", {c, c}, {loss}, {{"kind", "mse"}}),
               makeKernel("dense_grad_weight", {x, c}, {g})};
  plan.update = {makeKernel("clip_grad_norm", {g}, {scratch}, clip),
                 makeKernel("clip_grad_norm", {g, scratch}, {scratch}, clip)};
  plan.forwardKernels = 4;
  plan.lossBuffer = plan.predictionBuffer = loss;
  rt::Input input; // the reader refuses a plan that reads nothing
  input.feature = "x";
  input.buffer = x;
  input.width = 2;
  plan.inputs.push_back(input);
  return plan;
}

TEST(MemoryPlanner, LifetimesFollowTheKernels) {
  rt::Plan plan = chainPlan();
  computeLifetimes(plan);
  auto life = [&](int i) {
    return std::pair<int64_t, int64_t>{plan.buffers[i].firstUse, plan.buffers[i].lastUse};
  };
  EXPECT_EQ(life(0), std::make_pair(int64_t(-1), int64_t(-1))); // parameter: whole run
  EXPECT_EQ(life(1), std::make_pair(int64_t(-1), int64_t(-1))); // gradient: whole run
  EXPECT_EQ(life(2), std::make_pair(int64_t(0), int64_t(4)));   // input: from the start
  EXPECT_EQ(life(3), std::make_pair(int64_t(0), int64_t(1)));
  EXPECT_EQ(life(4), std::make_pair(int64_t(1), int64_t(2)));
  EXPECT_EQ(life(5), std::make_pair(int64_t(2), int64_t(4)));
  EXPECT_EQ(life(6), std::make_pair(int64_t(3), int64_t(4))); // loss: to the step's end
  EXPECT_EQ(life(7), std::make_pair(int64_t(5), int64_t(6))); // written by the update
}

TEST(MemoryPlanner, CarriedValuesAndSlotsLiveLonger) {
  rt::Plan plan = chainPlan();
  // act/b read by the first kernel before anything writes it: it carries a
  // value from the previous step, so it must live for the whole run.
  plan.step[0].inputs.push_back(4);
  // Two micro-batch copies of act/a: live for the whole step.
  plan.buffers[3].slots = 2;
  computeLifetimes(plan);
  EXPECT_EQ(plan.buffers[4].firstUse, -1);
  EXPECT_EQ(plan.buffers[3].firstUse, 0);
  EXPECT_EQ(plan.buffers[3].lastUse, 4);
  EXPECT_EQ(footprint(plan.buffers[3]), 2 * 1024);
}

TEST(MemoryPlanner, PlannedPlanReusesAndValidates) {
  rt::Plan plan = chainPlan();
  plan.model = "chain";
  plan.config.batchSize = 1;
  plan.config.loss = embc::runtime::LossKind::Mse;
  planMemory(plan, Strategy::Sequential);
  int64_t sequential = plan.arenaBytes;
  planMemory(plan, Strategy::GreedyBySize);
  EXPECT_EQ(plan.memory.strategy, "greedy_by_size");
  EXPECT_EQ(plan.memory.peakBytes, plan.arenaBytes);
  EXPECT_LT(plan.arenaBytes, sequential);
  EXPECT_GE(plan.arenaBytes, plan.memory.lowerBoundBytes);
  // act/a [0, 1] and act/c [2, 4] never meet: the biggest ones share.
  EXPECT_EQ(plan.buffers[3].offset, plan.buffers[5].offset);
  // The runtime's reader accepts the layout, keeps the fields and derives
  // the same figures.
  plan.buffers[5].origin = "emb-autodiff";
  plan.buffers[5].slots = 1;
  std::string error;
  std::optional<rt::Plan> back = rt::deserializePlan(rt::serializePlan(plan), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->memory.lowerBoundBytes, plan.memory.lowerBoundBytes);
  EXPECT_EQ(back->buffers[5].firstUse, 2);
  EXPECT_EQ(back->buffers[5].lastUse, 4);
  EXPECT_EQ(back->buffers[5].origin, "emb-autodiff");
  EXPECT_EQ(back->memory.strategy, "greedy_by_size");
  EXPECT_EQ(back->memory.peakBytes, plan.arenaBytes);
  // ...and refuses the same offsets once the two lifetimes meet.
  plan.buffers[5].firstUse = 1;
  EXPECT_FALSE(rt::deserializePlan(rt::serializePlan(plan), error));
  EXPECT_NE(error.find("must not share memory"), std::string::npos) << error;
}

TEST(MemoryPlanner, ValidationRefusesBadMemoryFields) {
  auto refused = [](void (*spoil)(rt::Plan &)) {
    rt::Plan plan = chainPlan();
    plan.model = "chain";
    plan.config.batchSize = 1;
    plan.config.loss = embc::runtime::LossKind::Mse;
    planMemory(plan, Strategy::GreedyBySize);
    spoil(plan);
    std::string error;
    EXPECT_FALSE(rt::deserializePlan(rt::serializePlan(plan), error));
    return error;
  };
  EXPECT_NE(refused([](rt::Plan &p) { p.buffers[3].slots = 0; }).find("buffers[3].slots: must be at least 1"),
            std::string::npos);
  EXPECT_NE(refused([](rt::Plan &p) { p.buffers[3].lastUse = 99; })
                .find("buffers[3].first_use: lifetime [0, 99] is neither -1/-1"),
            std::string::npos);
  EXPECT_NE(refused([](rt::Plan &p) { p.buffers[3].origin = "emb-magic"; })
                .find("buffers[3].origin: unknown origin 'emb-magic'"),
            std::string::npos);
  EXPECT_NE(refused([](rt::Plan &p) { p.memory.strategy = "first_fit"; })
                .find("memory.strategy: unknown memory strategy 'first_fit'"),
            std::string::npos);
  // Two slots of act/a no longer fit beside what shares its bytes.
  EXPECT_NE(refused([](rt::Plan &p) { p.buffers[3].slots = 2; }).find("must not share memory"),
            std::string::npos);
}

} // namespace
