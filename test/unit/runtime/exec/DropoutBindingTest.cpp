//===- DropoutBindingTest.cpp - the dropout kernel as the executor runs it ===//
//
// The CPU binding of `dropout` reads what the executor sets in ExecState:
// outside training it copies; in training it draws the mask of (seed,
// stream, step) at each element's place in the global batch, so a
// micro-batch (ExecState::microBatch) or a data-parallel rank
// (ExecState::exampleOffset) draws what the whole batch would at its rows.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/backends/CpuBackend.h"
#include "embc/runtime/cpu/DropoutKernels.h"
#include "embc/runtime/exec/Executor.h"

#include "../PlanBuffers.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

using namespace embc::runtime;
using embc::runtime::testing::addBuffer;
using embc::runtime::testing::makeKernel;

namespace {

struct DropoutRun {
  static constexpr int64_t B = 4, L = 3, D = 5, n = B * L * D;
  Plan plan;
  std::unique_ptr<Backend> backend = createCpuBackend(1);
  std::vector<std::byte> arena;
  ExecState state;
  BoundKernel kernel;

  explicit DropoutRun(const char *op = "dropout") {
    const int32_t x = addBuffer(plan, "x", BufferRole::Activation, DType::F32, {B, L, D});
    const int32_t y = addBuffer(plan, "y", BufferRole::Activation, DType::F32, {B, L, D});
    plan.step.push_back(makeKernel(op, {x}, {y}, {{"rate", 0.25}, {"stream", 7}}));
    arena.resize(size_t(plan.arenaBytes));
    state.plan = &plan;
    state.arena = arena.data();
    state.seed = 42;
    state.step = 3;
    float *in = state.data<float>(x);
    for (int64_t i = 0; i < n; ++i)
      in[i] = 1.0f + float(i);
    kernel = backend->bind(plan.step[0], plan);
  }
  std::vector<float> run() {
    kernel(state);
    const float *out = state.data<float>(1);
    return {out, out + n};
  }
  std::vector<float> expected(uint64_t first) const {
    std::vector<float> in(state.data<float>(0), state.data<float>(0) + n), out(n);
    cpu::dropoutApply(in.data(), out.data(), n, cpu::dropoutKey(42, 7, 3), first, 0.25);
    return out;
  }
};

TEST(DropoutBinding, CopiesOutsideTraining) {
  DropoutRun r;
  r.state.training = false;
  const float *in = r.state.data<float>(0);
  EXPECT_EQ(r.run(), std::vector<float>(in, in + DropoutRun::n));
}

TEST(DropoutBinding, DrawsTheGlobalBatchsMaskInTraining) {
  DropoutRun r;
  r.state.training = true;
  const std::vector<float> first = r.run();
  EXPECT_EQ(first, r.expected(0));
  int64_t zeros = 0;
  for (float v : first)
    zeros += v == 0.0f;
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, DropoutRun::n);
  // Micro-batch 2 of B rows starts at element 2 B L D of the batch.
  r.state.microBatch = 2;
  EXPECT_EQ(r.run(), r.expected(2 * DropoutRun::n));
  // A rank whose slice starts at example 8, in its micro-batch 1.
  r.state.exampleOffset = 8;
  r.state.microBatch = 1;
  EXPECT_EQ(r.run(), r.expected((8 + DropoutRun::B) * DropoutRun::L * DropoutRun::D));
}

TEST(DropoutBinding, GradientAppliesTheForwardMask) {
  DropoutRun forward, backward("dropout_grad");
  forward.state.training = backward.state.training = true;
  EXPECT_EQ(forward.run(), backward.run());
}

TEST(DropoutBinding, AShorterBatchLengthDropsWhatMaxLenDrops) {
  // Dynamic padding: the executor binds the kernel to B x 2 x D buffers of
  // a plan whose max_len is 3 (Buffer::paddedLength); each example's 2
  // rows draw the masks of the first 2 of its 3 rows.
  DropoutRun full;
  full.state.training = true;
  full.state.microBatch = 1;
  const std::vector<float> expected = full.run();
  constexpr int64_t B = DropoutRun::B, L = DropoutRun::L, D = DropoutRun::D, shorter = 2;
  Plan plan;
  const int32_t x = addBuffer(plan, "x", BufferRole::Activation, DType::F32, {B, shorter, D});
  const int32_t y = addBuffer(plan, "y", BufferRole::Activation, DType::F32, {B, shorter, D});
  plan.buffers[size_t(x)].paddedLength = plan.buffers[size_t(y)].paddedLength = L;
  plan.step.push_back(makeKernel("dropout", {x}, {y}, {{"rate", 0.25}, {"stream", 7}}));
  std::vector<std::byte> arena(size_t(plan.arenaBytes));
  ExecState state = full.state;
  state.plan = &plan;
  state.arena = arena.data();
  float *in = state.data<float>(x);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < shorter * D; ++i)
      in[b * shorter * D + i] = 1.0f + float(b * L * D + i);
  full.backend->bind(plan.step[0], plan)(state);
  const float *out = state.data<float>(y);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < shorter * D; ++i)
      EXPECT_EQ(out[b * shorter * D + i], expected[size_t(b * L * D + i)])
          << "example " << b << " element " << i;
}

TEST(DropoutBinding, RefusesARateOfOne) {
  Plan plan;
  const int32_t x = addBuffer(plan, "x", BufferRole::Activation, DType::F32, {2, 2});
  const int32_t y = addBuffer(plan, "y", BufferRole::Activation, DType::F32, {2, 2});
  plan.step.push_back(makeKernel("dropout", {x}, {y}, {{"rate", 1.0}, {"stream", 0}}));
  auto backend = createCpuBackend(1);
  try {
    backend->bind(plan.step[0], plan);
    FAIL() << "a rate of 1 was bound";
  } catch (const PlanError &e) {
    EXPECT_NE(std::string(e.what()).find("rate must be in [0, 1), got 1"), std::string::npos)
        << e.what();
  }
}

} // namespace
