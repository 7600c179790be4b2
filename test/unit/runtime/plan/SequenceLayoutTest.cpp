//===- SequenceLayoutTest.cpp - which buffers a sequence's length sizes ---===//
//
// findSequenceLayout (plan/SequenceLayout.h) follows a sequence feature's
// length from the kernels that read its offsets through the kernels that
// keep rows, by each kernel's rule, never by shape: a pooled B x D buffer
// whose D equals max_len is not a sequence buffer.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/SequenceLayout.h"

#include "../PlanBuffers.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace embc::runtime;
using embc::runtime::testing::addBuffer;
using embc::runtime::testing::addIdsInput;
using embc::runtime::testing::makeKernel;

namespace {

constexpr int64_t B = 4, L = 8, D = 8;

/// ids, offsets -> sequence_lookup x -> dense h -> sequence_pool p (B x D,
/// D == L) -> dense logits (B x L); the backward of the pool and the lookup.
struct SequencePlan {
  Plan plan;
  int32_t ids, offsets, x, w, h, pooled, w2, logits, dpooled, dh;
  SequencePlan() {
    std::tie(ids, offsets) = addIdsInput(plan, "tokens", B * L, B);
    x = addBuffer(plan, "x", BufferRole::Activation, DType::F32, {B, L, D});
    w = addBuffer(plan, "w", BufferRole::Param, DType::F32, {D, D});
    h = addBuffer(plan, "h", BufferRole::Activation, DType::F32, {B, L, D});
    pooled = addBuffer(plan, "pooled", BufferRole::Activation, DType::F32, {B, D});
    w2 = addBuffer(plan, "w2", BufferRole::Param, DType::F32, {D, L});
    logits = addBuffer(plan, "logits", BufferRole::Activation, DType::F32, {B, L});
    dpooled = addBuffer(plan, "dpooled", BufferRole::Activation, DType::F32, {B, D});
    dh = addBuffer(plan, "dh", BufferRole::Activation, DType::F32, {B, L, D});
    plan.step = {makeKernel("sequence_lookup", {ids, offsets}, {x}, {{"table", 0}}),
                 makeKernel("dense", {x, w}, {h}),
                 makeKernel("sequence_pool", {h, offsets}, {pooled}, {{"mode", "mean"}}),
                 makeKernel("dense", {pooled, w2}, {logits}),
                 makeKernel("sequence_pool_grad", {dpooled, offsets}, {dh}, {{"mode", "mean"}})};
  }
};

TEST(SequenceLayout, FollowsTheLengthByRuleNotByShape) {
  SequencePlan p;
  const SequenceLayout layout = findSequenceLayout(p.plan);
  EXPECT_EQ(layout.unsupported, "");
  ASSERT_EQ(layout.sequences.size(), 1u);
  EXPECT_EQ(layout.sequences[0].offsets, p.offsets);
  EXPECT_EQ(layout.sequences[0].input, 1);
  EXPECT_EQ(layout.sequences[0].maxLen, L);
  for (int32_t b : {p.x, p.h, p.dh})
    EXPECT_EQ(layout.of[size_t(b)], 0) << p.plan.buffers[size_t(b)].name;
  // B x D with D == max_len, and B x L logits of a pooled input: not sequences.
  for (int32_t b : {p.ids, p.offsets, p.w, p.pooled, p.w2, p.logits, p.dpooled})
    EXPECT_EQ(layout.of[size_t(b)], -1) << p.plan.buffers[size_t(b)].name;
  EXPECT_EQ(layout.kernels, (std::vector<size_t>{0, 1, 2, 4}));
  EXPECT_EQ(layout.sequenceBytes(p.plan), 3 * B * L * D * 4);
}

TEST(SequenceLayout, SpecialisingSetsTheLengthAndKeepsThePlace) {
  SequencePlan p;
  const SequenceLayout layout = findSequenceLayout(p.plan);
  const Plan shorter = specialiseLengths(p.plan, layout, {3});
  EXPECT_EQ(shorter.buffers[size_t(p.h)].shape, (std::vector<int64_t>{B, 3, D}));
  EXPECT_EQ(shorter.buffers[size_t(p.h)].paddedLength, L);
  EXPECT_EQ(shorter.buffers[size_t(p.h)].offset, p.plan.buffers[size_t(p.h)].offset);
  EXPECT_EQ(shorter.buffers[size_t(p.h)].bytes, p.plan.buffers[size_t(p.h)].bytes);
  EXPECT_EQ(shorter.buffers[size_t(p.logits)].shape, (std::vector<int64_t>{B, L}));
  EXPECT_EQ(shorter.buffers[size_t(p.logits)].paddedLength, 0);
}

TEST(SequenceLayout, AKernelWithoutARuleMakesThePlanPadToMaxLen) {
  SequencePlan p;
  const int32_t y = addBuffer(p.plan, "y", BufferRole::Activation, DType::F32, {B, L * D});
  p.plan.step.push_back(makeKernel("interaction", {p.x, p.h}, {y}, {{"self", false}}));
  const SequenceLayout layout = findSequenceLayout(p.plan);
  EXPECT_EQ(layout.unsupported,
            "step kernel 5 (interaction) reads a sequence buffer and has no dynamic-padding rule");
}

TEST(SequenceLayout, AnOutputThatIsNotBByMaxLenIsRefused) {
  SequencePlan p;
  const int32_t flat = addBuffer(p.plan, "flat", BufferRole::Activation, DType::F32, {B * L, D});
  p.plan.step.push_back(makeKernel("layer_norm", {p.h, p.w, p.w}, {flat}, {{"eps", 1e-5}}));
  const SequenceLayout layout = findSequenceLayout(p.plan);
  EXPECT_EQ(layout.unsupported,
            "step kernel 5 (layer_norm) writes 'flat', which is not 4 x 8 x ...");
}

TEST(SequenceLayout, APlanWithoutSequencesHasNone) {
  Plan plan;
  const int32_t a = addBuffer(plan, "a", BufferRole::Activation, DType::F32, {B, L});
  const int32_t w = addBuffer(plan, "w", BufferRole::Param, DType::F32, {L, L});
  const int32_t b = addBuffer(plan, "b", BufferRole::Activation, DType::F32, {B, L});
  plan.step.push_back(makeKernel("dense", {a, w}, {b}));
  const SequenceLayout layout = findSequenceLayout(plan);
  EXPECT_TRUE(layout.empty());
  EXPECT_TRUE(layout.kernels.empty());
  EXPECT_EQ(layout.unsupported, "");
}

} // namespace
