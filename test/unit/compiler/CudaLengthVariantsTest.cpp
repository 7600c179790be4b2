//===- CudaLengthVariantsTest.cpp - the sequence kernels at shorter lengths ===//
//
// Dynamic padding on the CUDA backend (docs/cuda.md, "Sequence lengths"):
// generateCuda lowers the kernels that touch a sequence buffer again at
// each of cudaVariantLengths(max_len), with dropout numbered by max_len;
// specialiseLengths hands the executor a variant's launches, or none at a
// length the program has no variant for. Whether the variants compute what
// the CPU computes is e2e.padding_equivalence's job (the emulated cases).
//
//===----------------------------------------------------------------------===//

#include "../runtime/PlanBuffers.h"

#include "embc/passes/CudaCodegen.h"
#include "embc/runtime/plan/SequenceLayout.h"

#include <gtest/gtest.h>

using namespace embc;
namespace rt = embc::runtime;
using rt::testing::addBuffer;
using rt::testing::makeKernel;

namespace {

constexpr int64_t B = 2, L = 32, D = 8, kRows = 50;

/// ids, offsets -> sequence_lookup x (B x L x D) -> dropout y; a pooled
/// B x D beside them, which no variant touches.
struct SequencePlan {
  rt::Plan plan;
  int32_t ids, offsets, table, x, y, pooled;
  SequencePlan() {
    ids = addBuffer(plan, "ids", rt::BufferRole::Input, rt::DType::I64, {B * L}, true);
    offsets = addBuffer(plan, "offsets", rt::BufferRole::Input, rt::DType::I64, {B + 1});
    for (auto [role, buffer] : {std::pair{rt::InputRole::Ids, ids}, {rt::InputRole::Offsets, offsets}}) {
      rt::Input in;
      in.feature = "tokens";
      in.role = role;
      in.buffer = buffer;
      plan.inputs.push_back(in);
    }
    table = addBuffer(plan, "words", rt::BufferRole::Table, rt::DType::F32, {kRows, D});
    rt::Table t;
    t.name = "words";
    t.rows = kRows;
    t.dim = D;
    t.buffer = table;
    plan.tables.push_back(t);
    x = addBuffer(plan, "x", rt::BufferRole::Activation, rt::DType::F32, {B, L, D});
    y = addBuffer(plan, "y", rt::BufferRole::Activation, rt::DType::F32, {B, L, D});
    pooled = addBuffer(plan, "pooled", rt::BufferRole::Activation, rt::DType::F32, {B, D});
    plan.step = {makeKernel("sequence_lookup", {ids, offsets}, {x}, {{"table", 0}}),
                 makeKernel("dropout", {x}, {y}, {{"rate", 0.25}, {"stream", 3}}),
                 makeKernel("sequence_pool", {y, offsets}, {pooled}, {{"mode", "mean"}}),
                 makeKernel("dropout", {pooled}, {pooled}, {{"rate", 0.5}, {"stream", 4}})};
  }
};

rt::Plan lowered(rt::Plan plan, const codegen::CudaCodegenOptions &options = {}) {
  std::string error;
  EXPECT_TRUE(codegen::generateCuda(plan, error, options)) << error;
  return plan;
}

} // namespace

TEST(CudaLengthVariants, LengthsAreMultiplesOfAnEighthOfMaxLen) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(codegen::cudaVariantLengths(8), V{});
  EXPECT_EQ(codegen::cudaVariantLengths(20), (V{8, 16}));
  EXPECT_EQ(codegen::cudaVariantLengths(64), (V{8, 16, 24, 32, 40, 48, 56}));
  EXPECT_EQ(codegen::cudaVariantLengths(100), (V{16, 32, 48, 64, 80, 96}));
  EXPECT_EQ(codegen::cudaVariantLengths(128), (V{16, 32, 48, 64, 80, 96, 112}));
  EXPECT_EQ(codegen::cudaVariantLengths(512).size(), 7u);
}

TEST(CudaLengthVariants, TheSequenceKernelsAreLoweredAgainAtEachLength) {
  SequencePlan p;
  const rt::Plan plan = lowered(p.plan);
  const rt::CudaProgram &cuda = plan.cuda;
  // Every kernel but the pooled dropout touches a sequence buffer.
  EXPECT_EQ(cuda.lengthKernels, (std::vector<int64_t>{0, 1, 2}));
  ASSERT_EQ(cuda.lengths.size(), 3u);
  for (size_t v = 0; v < cuda.lengths.size(); ++v) {
    EXPECT_EQ(cuda.lengths[v].length, int64_t(8 * (v + 1)));
    ASSERT_EQ(cuda.lengths[v].step.size(), 3u);
    for (const rt::CudaKernel &k : cuda.lengths[v].step)
      EXPECT_FALSE(k.launches.empty());
  }
  // The lookup at 8 positions is its own kernel (its sizes are literals).
  const std::string atMax = cuda.step[0].launches[0].entry;
  const std::string at8 = cuda.lengths[0].step[0].launches[0].entry;
  EXPECT_NE(atMax, at8);
  EXPECT_NE(cuda.source.find(" " + at8 + "(EmbArgs a)"), std::string::npos);
  EXPECT_NE(cuda.source.find("sequence_lookup of 'words': 2 x 8 x 8"), std::string::npos);
}

TEST(CudaLengthVariants, DropoutAtAShorterLengthNumbersByMaxLen) {
  SequencePlan p;
  const rt::Plan plan = lowered(p.plan);
  // At 8 positions an example has 64 values, numbered as its first 64 of
  // the 256 it has at max_len; the max_len kernel numbers them as they lie.
  EXPECT_NE(plan.cuda.source.find("first + (emb_u64)((i + e) / 64LL * 256LL + (i + e) % 64LL)"),
            std::string::npos);
  EXPECT_NE(plan.cuda.source.find("first + (emb_u64)(i + e);"), std::string::npos);
  EXPECT_NE(plan.cuda.source.find("(a.step->exampleOffset + (emb_i64)a.step->microBatch * 2LL) "
                                  "* 256LL"),
            std::string::npos);
}

TEST(CudaLengthVariants, SpecialisingHandsOverTheVariantsLaunches) {
  SequencePlan p;
  const rt::Plan plan = lowered(p.plan);
  const rt::SequenceLayout layout = rt::findSequenceLayout(plan);
  const rt::Plan at16 = rt::specialiseLengths(plan, layout, {16});
  for (size_t j = 0; j < 3; ++j)
    EXPECT_EQ(at16.cuda.step[j].launches[0].entry,
              plan.cuda.lengths[1].step[j].launches[0].entry);
  EXPECT_EQ(at16.cuda.step[3].launches[0].entry, plan.cuda.step[3].launches[0].entry);
  // No variant at 12: no launches, so the CUDA backend refuses to bind
  // rather than run max_len's kernels on shorter buffers.
  const rt::Plan at12 = rt::specialiseLengths(plan, layout, {12});
  for (size_t j = 0; j < 3; ++j)
    EXPECT_TRUE(at12.cuda.step[j].launches.empty());
  EXPECT_FALSE(at12.cuda.step[3].launches.empty());
  // At max_len: the program's own launches.
  const rt::Plan atMax = rt::specialiseLengths(plan, layout, {L});
  EXPECT_EQ(atMax.cuda.step[0].launches[0].entry, plan.cuda.step[0].launches[0].entry);
}

TEST(CudaLengthVariants, NoneWhenTurnedOffOrWhenAKernelCannotPad) {
  SequencePlan p;
  codegen::CudaCodegenOptions off;
  off.lengthVariants = false;
  const rt::Plan without = lowered(p.plan, off);
  EXPECT_TRUE(without.cuda.lengths.empty());
  EXPECT_TRUE(without.cuda.lengthKernels.empty());
  // An interaction over the sequence buffer has no padding rule.
  const int32_t z = addBuffer(p.plan, "z", rt::BufferRole::Activation, rt::DType::F32, {B, 1});
  p.plan.step.push_back(makeKernel("dot", {p.x, p.y}, {z}));
  ASSERT_FALSE(rt::findSequenceLayout(p.plan).unsupported.empty());
  std::string error;
  rt::Plan plan = p.plan;
  codegen::generateCuda(plan, error);
  EXPECT_TRUE(plan.cuda.lengths.empty()) << error;
}
