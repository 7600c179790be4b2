//===- CudaDenseLoweringTest.cpp - the dense family's CUDA lowerings ------===//
//
// Hand-made plans with one dense kernel each (and one embedding lookup, for
// its vector width) go through generateCuda: the
// launches (GEMM specs read back with the runtime's gemmFromJson, epilogues,
// beta, operand types, scratch), the generated source (entries defined,
// expressions specialised on the attributes) and the errors for what the
// lowerings refuse. Whether the kernels compute what the CPU computes is
// emb-parity's job (test/e2e); this pins the lowering decisions.
//
//===----------------------------------------------------------------------===//

#include "../runtime/PlanBuffers.h"

#include "embc/passes/CudaCodegen.h"
#include "embc/runtime/cuda/Device.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace embc;
namespace rt = embc::runtime;
namespace cu = embc::runtime::cuda;

namespace {

/// A plan under construction: f32 buffers laid out one after another.
struct PlanBuilder {
  rt::Plan plan;
  int64_t next = 0;

  int32_t buffer(const std::string &name, std::vector<int64_t> shape) {
    rt::Buffer b;
    b.name = name;
    b.shape = std::move(shape);
    b.bytes = 4;
    for (int64_t d : b.shape)
      b.bytes *= d;
    b.offset = next;
    next += (b.bytes + 63) / 64 * 64;
    plan.buffers.push_back(b);
    return int32_t(plan.buffers.size() - 1);
  }
  void kernel(const std::string &op, std::vector<int32_t> in, std::vector<int32_t> out,
              nlohmann::json attrs = nlohmann::json::object()) {
    plan.step.push_back(
        rt::testing::makeKernel(op, std::move(in), std::move(out), std::move(attrs)));
  }
  /// Runs the codegen; the launches of step kernel 0.
  const std::vector<rt::CudaLaunch> &lower() {
    std::string error;
    EXPECT_TRUE(codegen::generateCuda(plan, error)) << error;
    EXPECT_EQ(plan.cuda.step.size(), plan.step.size());
    static const std::vector<rt::CudaLaunch> none;
    return plan.cuda.step.empty() ? none : plan.cuda.step[0].launches;
  }
  /// Runs the codegen expecting it to fail; the message.
  std::string failure() {
    std::string error;
    EXPECT_FALSE(codegen::generateCuda(plan, error));
    return error;
  }
  /// Every one of `parts` appears in the generated source.
  void expectInSource(std::initializer_list<const char *> parts) const {
    for (const char *part : parts)
      EXPECT_NE(plan.cuda.source.find(part), std::string::npos) << part;
  }
  /// Every kernel launch's entry is defined in the source, with launch
  /// bounds that admit the launch's block.
  void expectEntriesDefined() const {
    for (const rt::CudaKernel &k : plan.cuda.step)
      for (const rt::CudaLaunch &l : k.launches)
        if (l.kind == "kernel") {
          const size_t at = plan.cuda.source.find(" " + l.entry + "(EmbArgs a)");
          ASSERT_NE(at, std::string::npos) << l.entry;
          const size_t bounds = plan.cuda.source.rfind("__launch_bounds__(", at);
          ASSERT_NE(bounds, std::string::npos) << l.entry;
          // This kernel's own bounds: no line ends between them and its name.
          EXPECT_EQ(plan.cuda.source.find('\n', bounds), plan.cuda.source.find('\n', at))
              << l.entry;
          EXPECT_GE(std::stol(plan.cuda.source.substr(bounds + 18)), l.block) << l.entry;
        }
  }
};

cu::GemmSpec gemmOf(const rt::CudaLaunch &l) {
  EXPECT_EQ(l.kind, "gemm");
  return cu::gemmFromJson(l.params);
}

/// Expects `g` to be an m x n x k GEMM with these transposes and beta.
void expectGemm(const cu::GemmSpec &g, int64_t m, int64_t n, int64_t k, bool transA, bool transB,
                float beta) {
  // One tuple, so that a failure prints the whole spec.
  EXPECT_EQ(std::make_tuple(g.m, g.n, g.k, g.transA, g.transB, g.beta),
            std::make_tuple(m, n, k, transA, transB, beta));
}

TEST(CudaDenseLowering, DenseActReluIsOneGemmWithReluBias) {
  PlanBuilder p;
  int32_t x = p.buffer("x", {64, 32}), w = p.buffer("w", {32, 16}), b = p.buffer("b", {16});
  int32_t y = p.buffer("y", {64, 16});
  p.kernel("dense_act", {x, w, b}, {y}, {{"kind", "relu"}, {"bias", true}});
  const auto &launches = p.lower();
  ASSERT_EQ(launches.size(), 1u);
  cu::GemmSpec g = gemmOf(launches[0]);
  EXPECT_EQ(g.epilogue, rt::GemmEpilogue::ReluBias);
  expectGemm(g, 64, 16, 32, false, false, 0.0f);
  EXPECT_EQ(g.abType, rt::DType::F32);
  ASSERT_EQ(launches[0].args.size(), 4u);
  EXPECT_EQ(launches[0].args[0].buffer, x);
  EXPECT_EQ(launches[0].args[1].buffer, w);
  EXPECT_EQ(launches[0].args[2].buffer, y);
  EXPECT_EQ(launches[0].args[3].buffer, b);
}

TEST(CudaDenseLowering, DenseWithoutBiasOperandHasNoEpilogue) {
  PlanBuilder p;
  int32_t x = p.buffer("x", {8, 4}), w = p.buffer("w", {4, 2}), y = p.buffer("y", {8, 2});
  p.kernel("dense", {x, w}, {y}, {{"bias", false}});
  const auto &launches = p.lower();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(gemmOf(launches[0]).epilogue, rt::GemmEpilogue::None);
  EXPECT_EQ(launches[0].args.size(), 3u);
}

TEST(CudaDenseLowering, SigmoidLayerKeepsPreActivationAndAppliesItInAKernel) {
  PlanBuilder p;
  int32_t x = p.buffer("x", {64, 32}), w = p.buffer("w", {32, 16}), b = p.buffer("b", {16});
  int32_t y = p.buffer("y", {64, 16}), z = p.buffer("z", {64, 16});
  p.kernel("dense_act", {x, w, b}, {y, z}, {{"kind", "sigmoid"}, {"bias", true}});
  const auto &launches = p.lower();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(gemmOf(launches[0]).epilogue, rt::GemmEpilogue::Bias);
  EXPECT_EQ(launches[0].args[2].buffer, z);
  EXPECT_EQ(launches[1].kind, "kernel");
  EXPECT_NE(p.plan.cuda.source.find("emb_sigmoid(x0)"), std::string::npos);
  p.expectEntriesDefined();
}

TEST(CudaDenseLowering, Bf16DenseRoundsOperandsIntoScratch) {
  PlanBuilder p;
  int32_t x = p.buffer("x", {64, 32}), w = p.buffer("w", {32, 16}), y = p.buffer("y", {64, 16});
  p.kernel("dense", {x, w}, {y}, {{"compute", "bf16"}});
  const auto &launches = p.lower();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].kind, "kernel");
  ASSERT_EQ(launches[0].args.size(), 4u); // x -> scratch, w -> scratch
  cu::GemmSpec g = gemmOf(launches[1]);
  EXPECT_EQ(g.abType, rt::DType::BF16);
  EXPECT_GE(launches[1].args[0].scratch, 0);
  EXPECT_GE(launches[1].args[1].scratch, 0);
  EXPECT_NE(launches[1].args[0].scratch, launches[1].args[1].scratch);
  EXPECT_EQ(launches[1].args[2].buffer, y);
  EXPECT_GE(p.plan.cuda.scratchBytes, (64 * 32 + 32 * 16) * 2);
  EXPECT_NE(p.plan.cuda.source.find("emb_float_to_bf16"), std::string::npos);
  p.expectEntriesDefined();
}

TEST(CudaDenseLowering, DenseActGradAccumulatesWeightAndBiasGradients) {
  PlanBuilder p;
  const int64_t B = 4096, K = 32, N = 48;
  int32_t dy = p.buffer("dy", {B, N}), a = p.buffer("y", {B, N}), x = p.buffer("x", {B, K});
  int32_t w = p.buffer("w", {K, N}), dz = p.buffer("dz", {B, N}), dw = p.buffer("dw", {K, N});
  int32_t db = p.buffer("db", {N}), dx = p.buffer("dx", {B, K});
  p.kernel("dense_act_grad", {dy, a, x, w}, {dz, dw, db, dx},
           {{"kind", "tanh"}, {"from_output", true}, {"bias", true}, {"input_grad", true}});
  const auto &launches = p.lower();
  // dz + partial column sums, their total, dW, dx.
  ASSERT_EQ(launches.size(), 4u);
  EXPECT_EQ(launches[0].kind, "kernel");
  EXPECT_EQ(launches[1].kind, "kernel");
  EXPECT_EQ(launches[1].args.back().buffer, db);
  expectGemm(gemmOf(launches[2]), K, N, B, true, false, 1.0f); // dW += x^T dz
  EXPECT_EQ(launches[2].args[1].buffer, dz);
  EXPECT_EQ(launches[2].args[2].buffer, dw);
  expectGemm(gemmOf(launches[3]), B, K, N, false, true, 0.0f); // dx = dz W^T
  EXPECT_EQ(launches[3].args[2].buffer, dx);
  p.expectInSource({"emb_tanh_grad_out(dy[i], act[i])", "db[col] += sum"});
  // No float atomics anywhere.
  EXPECT_EQ(p.plan.cuda.source.find("atomicAdd(&"), std::string::npos);
  p.expectEntriesDefined();
}

TEST(CudaDenseLowering, SmallBiasGradIsOnePassAndOverwrites) {
  PlanBuilder p;
  int32_t dy = p.buffer("dy", {16, 8}), db = p.buffer("db", {8});
  p.kernel("bias_grad", {dy}, {db});
  const auto &launches = p.lower();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].args.back().buffer, db);
  EXPECT_NE(p.plan.cuda.source.find("out[col] = s[0][tx]"), std::string::npos);
}

TEST(CudaDenseLowering, ElementwiseChainIsSpecialisedOnItsSteps) {
  PlanBuilder p;
  int32_t a = p.buffer("a", {32, 8}), c = p.buffer("c", {32, 8}), bias = p.buffer("bias", {8});
  int32_t out0 = p.buffer("out0", {32, 8}), out1 = p.buffer("out1", {32, 8});
  nlohmann::json ops = nlohmann::json::array();
  ops.push_back({{"op", "add"}, {"args", {0, 1, 2}}, {"bias", true}});
  ops.push_back({{"op", "activation"}, {"kind", "gelu"}, {"args", {3}}});
  p.kernel("elementwise", {a, c, bias}, {out0, out1},
           {{"width", 8}, {"ops", ops}, {"results", {4, 3}}});
  const auto &launches = p.lower();
  ASSERT_EQ(launches.size(), 1u);
  p.expectInSource({"const float t0 = x0 + x1 + x2;", "const float t1 = emb_gelu(t0);",
                    "y0 = t1;", "y1 = t0;",
                    // float4 with the bias read at the row's column (8 / 4 = 2 vectors a row).
                    "((const float4 *)p2)[i % 2]"});
  p.expectEntriesDefined();
}

TEST(CudaDenseLowering, CrossGradUsesBgradbInF32) {
  PlanBuilder p;
  const int64_t B = 64, D = 16;
  int32_t dy = p.buffer("dy", {B, D}), x0 = p.buffer("x0", {B, D}), xl = p.buffer("xl", {B, D});
  int32_t w = p.buffer("w", {D, D}), b = p.buffer("b", {D});
  int32_t dx0 = p.buffer("dx0", {B, D}), dxl = p.buffer("dxl", {B, D});
  int32_t dw = p.buffer("dw", {D, D}), db = p.buffer("db", {D});
  p.kernel("cross_grad", {dy, x0, xl, w, b}, {dx0, dxl, dw, db});
  const auto &launches = p.lower();
  ASSERT_EQ(launches.size(), 5u);
  cu::GemmSpec gw = gemmOf(launches[1]);
  EXPECT_EQ(gw.epilogue, rt::GemmEpilogue::BGradB);
  EXPECT_EQ(launches[1].args[3].buffer, db);
  EXPECT_EQ(launches[1].args[1].buffer, dx0); // du
  EXPECT_EQ(gemmOf(launches[2]).beta, 0.0f);
  EXPECT_EQ(launches[2].args[2].buffer, dxl);
  EXPECT_EQ(launches[3].args[2].buffer, dx0);
  p.expectEntriesDefined();
}

// With the forward's xl w (emb.cross's `linear`): the cross writes its
// product there, and the gradient reads it instead of a third GEMM.
TEST(CudaDenseLowering, CrossKeepsItsProductForTheGradient) {
  PlanBuilder p;
  const int64_t B = 64, D = 16;
  int32_t x0 = p.buffer("x0", {B, D}), xl = p.buffer("xl", {B, D});
  int32_t w = p.buffer("w", {D, D}), b = p.buffer("b", {D});
  int32_t y = p.buffer("y", {B, D}), linear = p.buffer("linear", {B, D});
  int32_t dy = p.buffer("dy", {B, D});
  int32_t dx0 = p.buffer("dx0", {B, D}), dxl = p.buffer("dxl", {B, D});
  int32_t dw = p.buffer("dw", {D, D}), db = p.buffer("db", {D});
  p.kernel("cross", {x0, xl, w, b}, {y, linear});
  p.kernel("cross_grad", {dy, x0, xl, w, b, linear}, {dx0, dxl, dw, db});
  const auto &forward = p.lower();
  // cross: GEMM into linear, then y from it.
  ASSERT_EQ(forward.size(), 2u);
  EXPECT_EQ(forward[0].args[2].buffer, linear);
  EXPECT_EQ(forward[1].args[1].buffer, linear);
  // cross_grad: du, dw (+db), dxl, and the final elementwise reading
  // linear: no GEMM into dx0.
  const auto &backward = p.plan.cuda.step[1].launches;
  ASSERT_EQ(backward.size(), 4u);
  size_t gemms = 0;
  for (const auto &l : backward)
    gemms += l.kind == "gemm";
  EXPECT_EQ(gemms, 2u);
  EXPECT_EQ(backward[3].args[1].buffer, linear);
  p.expectEntriesDefined();
}

TEST(CudaDenseLowering, ConcatAndSliceCopyColumns) {
  PlanBuilder p;
  int32_t a = p.buffer("a", {10, 4}), c = p.buffer("c", {10, 3}), y = p.buffer("y", {10, 7});
  int32_t s = p.buffer("s", {10, 3});
  p.kernel("concat", {a, c}, {y});
  p.kernel("slice", {y}, {s}, {{"offset", 4}});
  p.lower();
  const std::string &src = p.plan.cuda.source;
  // Width 3 rules out float4: scalar copies with the column shift baked in.
  EXPECT_NE(src.find("y[i] = ((const float *)a.p[1])[r * 3 + c - 4];"), std::string::npos);
  EXPECT_NE(src.find("y[i] = ((const float *)a.p[0])[r * 7 + c + 4];"), std::string::npos);
  p.expectEntriesDefined();
}

TEST(CudaDenseLowering, IdenticalKernelsShareOneDefinition) {
  PlanBuilder p;
  int32_t a = p.buffer("a", {16, 8}), b = p.buffer("b", {16, 8});
  int32_t y0 = p.buffer("y0", {16, 8}), y1 = p.buffer("y1", {16, 8});
  int32_t g = p.buffer("g", {16, 8});
  p.kernel("activation", {a}, {y0}, {{"kind", "tanh"}});
  p.kernel("activation", {b}, {y1}, {{"kind", "tanh"}});
  // Same body text (x0 + x1) as accumulate_grad's, under another name.
  p.kernel("add", {a, b}, {y0}, {{"bias", false}});
  p.kernel("accumulate_grad", {a}, {g});
  p.lower();
  const auto &step = p.plan.cuda.step;
  ASSERT_EQ(step.size(), 4u);
  EXPECT_EQ(step[0].launches[0].entry, step[1].launches[0].entry);
  EXPECT_NE(step[2].launches[0].entry, step[3].launches[0].entry);
  const std::string &src = p.plan.cuda.source;
  const std::string tanh = "void " + step[0].launches[0].entry + "(EmbArgs a)";
  EXPECT_EQ(src.find(tanh), src.rfind(tanh)); // defined once
  p.expectEntriesDefined();
}

TEST(CudaDenseLowering, RefusesGeluFromOutput) {
  PlanBuilder p;
  int32_t dy = p.buffer("dy", {4, 4}), y = p.buffer("y", {4, 4}), dx = p.buffer("dx", {4, 4});
  p.kernel("activation_grad", {dy, y}, {dx}, {{"kind", "gelu"}, {"from_output", true}});
  EXPECT_NE(p.failure().find("gelu cannot be differentiated from its output"), std::string::npos);
}

TEST(CudaDenseLowering, RefusesMismatchedShapes) {
  PlanBuilder p;
  int32_t x = p.buffer("x", {8, 4}), w = p.buffer("w", {5, 2}), y = p.buffer("y", {8, 2});
  p.kernel("dense", {x, w}, {y});
  std::string error = p.failure();
  EXPECT_NE(error.find("step kernel 0 'dense'"), std::string::npos) << error;
  EXPECT_NE(error.find("weight 'w' is [5 x 2], expected 4 x N"), std::string::npos) << error;
}

// bf16 operands whose rows would not start on 16 bytes (K = 13) are rounded
// into rows padded with zeros to 16 values (w: 16 rows, 3 of zeros), and the
// GEMM reduces over 16: the zeros add nothing, cuBLASLt gets k % 8 == 0.
TEST(CudaDenseLowering, SixteenBitOperandsGetRowsPaddedToEightValues) {
  PlanBuilder p;
  int32_t x = p.buffer("x", {64, 13}), w = p.buffer("w", {13, 16}), b = p.buffer("b", {16});
  int32_t y = p.buffer("y", {64, 16});
  p.kernel("dense_act", {x, w, b}, {y},
           {{"kind", "relu"}, {"bias", true}, {"compute", "bf16"}});
  const auto &launches = p.lower();
  ASSERT_EQ(launches.size(), 2u); // the rounding kernel, the GEMM
  EXPECT_EQ(launches[0].kind, "kernel");
  const cu::GemmSpec g = gemmOf(launches[1]);
  EXPECT_EQ(g.abType, rt::DType::BF16);
  EXPECT_EQ(g.k, 16);
  EXPECT_EQ(g.lda, 16); // x: 13 values a row and 3 zeros
  EXPECT_EQ(g.ldb, 16); // w: 16 values a row already, 13 rows and 3 of zeros
  const std::string &src = p.plan.cuda.source;
  EXPECT_NE(src.find("r < 64 && c < 13 ? emb_float_to_bf16(((const float *)a.p[0])[r * 13 + c])"),
            std::string::npos);
  EXPECT_NE(src.find("r < 13 && c < 16 ?"), std::string::npos); // w: rows 13..15 zero
  p.expectEntriesDefined();
}

// A lookup whose output rows start 8 bytes off a 16-byte boundary moves its
// 16-wide rows as 8-byte vectors (a GPU faults on a misaligned 16-byte
// one); aligned, as 16-byte vectors.
TEST(CudaEmbeddingLowering, VectorWidthFollowsTheOperandsAlignment) {
  for (int64_t misalign : {0, 8}) {
    PlanBuilder p;
    int32_t table = p.buffer("table", {100, 16});
    int32_t ids = p.buffer("ids", {32}), offsets = p.buffer("offsets", {33});
    p.plan.buffers[size_t(ids)].dtype = rt::DType::I64;
    p.plan.buffers[size_t(offsets)].dtype = rt::DType::I64;
    p.next += misalign;
    int32_t y = p.buffer("y", {32, 16});
    rt::Table t;
    t.name = "t";
    t.rows = 100;
    t.dim = 16;
    t.buffer = table;
    p.plan.tables.push_back(t);
    p.kernel("lookup", {ids, offsets}, {y}, {{"table", 0}, {"pooling", "sum"}});
    p.lower();
    p.expectEntriesDefined();
    const std::string &src = p.plan.cuda.source;
    const bool wide = src.find("emb_vstore(emb_dst + j, q)") != std::string::npos &&
                      src.find("emb_f4 q; q.x") != std::string::npos;
    EXPECT_EQ(wide, misalign == 0) << "misaligned by " << misalign;
    if (misalign) {
      EXPECT_NE(src.find("emb_f2 q; q.x"), std::string::npos);
    }
  }
}

// The sparse update of a 16-wide f32 table gives each row a group of 4
// lanes (4 float4 vectors), 8 rows a warp, its shuffles masked to the group
// and 4 wide; a 128-wide table keeps a full warp a row.
TEST(CudaEmbeddingLowering, UpdateGroupsAreAsWideAsTheRow) {
  for (int64_t dim : {16, 128}) {
    PlanBuilder p;
    int32_t table = p.buffer("table", {100, dim});
    int32_t accumulator = p.buffer("accumulator", {100});
    int32_t rows = p.buffer("grad_rows", {32}), values = p.buffer("grad_values", {32, dim});
    p.plan.buffers[size_t(rows)].dtype = rt::DType::I64;
    p.plan.buffers[size_t(rows)].dynamic = true;
    p.plan.buffers[size_t(values)].dynamic = true;
    rt::Table t;
    t.name = "t";
    t.rows = 100;
    t.dim = dim;
    t.buffer = table;
    t.state = {accumulator};
    t.optimizer.kind = embc::runtime::OptimizerKind::RowwiseAdagrad;
    p.plan.tables.push_back(t);
    p.kernel("update_table", {rows, values}, {table, accumulator},
             {{"table", 0}, {"grad_scale", 1.0}});
    const auto &launches = p.lower();
    p.expectEntriesDefined();
    const std::string &src = p.plan.cuda.source;
    const int64_t lanes = dim == 16 ? 4 : 32;
    EXPECT_EQ(src.find("a group of " + std::to_string(lanes) + " lanes per") != std::string::npos,
              true)
        << src;
    if (lanes == 4) {
      EXPECT_NE(src.find("const unsigned emb_gm = ((1u << 4) - 1u)"), std::string::npos);
      // rowwise Adagrad's mean of g^2 in row order, over the group's lanes
      EXPECT_NE(src.find("__shfl_sync(emb_gm, sq[c * 4 + e], l, 4)"), std::string::npos);
    } else {
      EXPECT_NE(src.find("const unsigned emb_gm = 0xffffffffu"), std::string::npos);
    }
    // A group a row: 32 rows of `lanes` threads.
    const rt::CudaLaunch &l = launches.back();
    EXPECT_EQ(l.grid[0] * l.block, std::max<int64_t>(32 * lanes, l.block));
    // The finite check of every update: the row's values and accumulator,
    // reported under an error the plan marks as non-finite.
    EXPECT_NE(src.find("bool stepFinite = isfinite(acc0);"), std::string::npos);
    ASSERT_EQ(p.plan.cuda.nonFiniteErrors.size(), 1u);
    const int64_t code = p.plan.cuda.nonFiniteErrors[0];
    EXPECT_EQ(p.plan.cuda.errors.at(size_t(code - 1)),
              "an update of table 't' left row {} not finite (NaN or infinity in its values or "
              "optimizer state)");
    EXPECT_NE(src.find("if (!stepFinite) emb_set_error(a.step, " + std::to_string(code) + ", r);"),
              std::string::npos);
  }
}

TEST(CudaOptimizerLowering, DenseUpdatesCheckWhatTheyWrite) {
  // Adam on a parameter of 64 values (16-byte vectors): each component of
  // w, m and v is checked and reports its own element.
  PlanBuilder p;
  int32_t w = p.buffer("w", {8, 8}), g = p.buffer("dw", {8, 8});
  int32_t m = p.buffer("m", {8, 8}), v = p.buffer("v", {8, 8});
  rt::Param param;
  param.name = "w";
  param.buffer = w;
  param.grad = g;
  param.state = {m, v};
  param.optimizer.kind = embc::runtime::OptimizerKind::Adam;
  p.plan.params.push_back(param);
  p.plan.update.push_back(rt::testing::makeKernel("update_param", {g}, {w, m, v},
                                                  {{"param", 0}, {"grad_scale", 1.0}}));
  std::string error;
  ASSERT_TRUE(codegen::generateCuda(p.plan, error)) << error;
  ASSERT_EQ(p.plan.cuda.nonFiniteErrors.size(), 1u);
  const std::string code = std::to_string(p.plan.cuda.nonFiniteErrors[0]);
  EXPECT_EQ(p.plan.cuda.errors.at(size_t(p.plan.cuda.nonFiniteErrors[0] - 1)),
            "an update of 'w' left element {} not finite (NaN or infinity in its values or "
            "optimizer state)");
  p.expectInSource({"if (!(isfinite(w.x) && isfinite(m.x) && isfinite(v.x)))",
                    "emb_set_error(a.step, ", "4 * i + 3);"});
  EXPECT_NE(p.plan.cuda.source.find("emb_set_error(a.step, " + code + ", 4 * i + 0);"),
            std::string::npos);
}

} // namespace
