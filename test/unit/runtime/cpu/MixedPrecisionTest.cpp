//===- MixedPrecisionTest.cpp - bf16/fp16 compute and loss scaling --------===//
//
// The dense half of -emb-quantize on the CPU: round-to-nearest-even
// conversions (HalfFloat.h) on known values and against the compiler's own
// _Float16; rounded kernels equal f32 kernels run on pre-rounded operands;
// gradient checks of the rounded kernels; and fp16 dynamic loss scaling in
// the executor: every kind of gradient buffer is checked, an overflowing
// update changes nothing but the scale, Adam's step count skips it, and the
// scale grows after `interval` good updates.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"
#include "../PlanBuffers.h"

#include "embc/runtime/cpu/FusedDenseKernels.h"
#include "embc/runtime/cpu/HalfFloat.h"
#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/backends/Registry.h"
#include "embc/runtime/exec/Executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace embc::runtime;
using namespace embc::runtime::cpu;
using embc::runtime::cpu::testing::randomVector;
using embc::runtime::testing::addBuffer;

namespace {

/// The CPU backend on one thread, as programs get it: by name.
std::unique_ptr<Backend> oneThreadCpu() {
  BackendOptions options;
  options.threads = 1;
  return createBackend("cpu", options);
}

float bits(uint32_t u) { return bitsFloat(u); }

} // namespace

// --- Conversions ---------------------------------------------------------------

TEST(HalfFloat, Bf16KnownValues) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBf16(-2.0f), 0xC000);
  // Halfway cases go to the even neighbour; just above goes up.
  EXPECT_EQ(floatToBf16(bits(0x3F808000)), 0x3F80);
  EXPECT_EQ(floatToBf16(bits(0x3F818000)), 0x3F82);
  EXPECT_EQ(floatToBf16(bits(0x3F808001)), 0x3F81);
  EXPECT_EQ(floatToBf16(bits(0x3F807FFF)), 0x3F80);
  // Subnormals keep their subnormal form (no flush to zero).
  EXPECT_EQ(floatToBf16(bits(0x00010000)), 0x0001);
  EXPECT_EQ(floatToBf16(bits(0x00008000)), 0x0000); // tie to even (0)
  EXPECT_EQ(floatToBf16(bits(0x00018000)), 0x0002); // tie to even (2)
  EXPECT_EQ(floatToBf16(bits(0x00000001)), 0x0000);
  // The largest float rounds past bf16's largest finite value: inf.
  EXPECT_EQ(floatToBf16(bits(0x7F7FFFFF)), 0x7F80);
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(floatToBf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  // NaN stays NaN, even a signalling one whose payload is in the low bits.
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0xFF800001u}) {
    uint16_t h = floatToBf16(bits(nan));
    EXPECT_EQ(h & 0x7F80, 0x7F80) << std::hex << nan;
    EXPECT_NE(h & 0x007F, 0) << std::hex << nan;
    EXPECT_EQ(h & 0x8000, (nan >> 16) & 0x8000);
  }
  EXPECT_EQ(floatBits(bf16ToFloat(0x3F81)), 0x3F810000u);
}

TEST(HalfFloat, Fp16KnownValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF); // largest finite half
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF); // below the halfway point
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // halfway: ties to even = inf
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);     // overflow: inf
  EXPECT_EQ(floatToHalf(-1e6f), 0xFC00);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
  // Halfway between 1 and 1 + 2^-10: even (1); between 1 + 2^-10 and 1 + 2^-9: up.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Subnormal halves: units of 2^-24.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);        // tie to even (0)
  EXPECT_EQ(floatToHalf(1.5f * std::ldexp(1.0f, -25)), 0x0001); // above the tie
  EXPECT_EQ(floatToHalf(3.0f * std::ldexp(1.0f, -25)), 0x0002); // tie 1|2 to even
  EXPECT_EQ(floatToHalf(1023.0f * std::ldexp(1.0f, -24)), 0x03FF);
  EXPECT_EQ(floatToHalf(1023.5f * std::ldexp(1.0f, -24)), 0x0400); // up into the normals
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -30)), 0x8000); // underflow keeps the sign
  EXPECT_FLOAT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_FLOAT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_TRUE(std::isinf(halfToFloat(0x7C00)));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(bits(0x7F800001))))); // signalling NaN
}

TEST(HalfFloat, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(uint16_t(h)), g = bf16ToFloat(uint16_t(h));
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
    else
      EXPECT_EQ(floatToHalf(f), h) << std::hex << h;
    if (std::isnan(g))
      EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(g))));
    else
      EXPECT_EQ(floatToBf16(g), h) << std::hex << h;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's _Float16 conversion is IEEE round-to-nearest-even: compare
// every sampled float (all exponents, both signs) bit for bit.
TEST(HalfFloat, Fp16MatchesCompilerFloat16) {
  std::mt19937 gen(11);
  int mismatches = 0;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = gen();
    float f = bits(u);
    if (std::isnan(f))
      continue;
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, 2);
    if (floatToHalf(f) != refBits && ++mismatches <= 5)
      ADD_FAILURE() << std::hex << "f32 0x" << u << ": got 0x" << floatToHalf(f)
                    << ", _Float16 gives 0x" << refBits;
  }
  EXPECT_EQ(mismatches, 0);
}
#endif

// --- Rounded kernels ---------------------------------------------------------------

namespace {

std::vector<float> rounded(ComputeType type, const std::vector<float> &v) {
  std::vector<float> r(v.size());
  roundArray(type, v.data(), r.data(), int64_t(v.size()));
  return r;
}

void expectBitEqual(const std::vector<float> &a, const std::vector<float> &b, const char *what) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
}

} // namespace

TEST(MixedPrecisionKernels, RoundedGemmsEqualF32OnPreRoundedOperands) {
  const int64_t B = 9, K = 13, N = 7;
  for (ComputeType type : {ComputeType::BF16, ComputeType::F16}) {
    auto x = randomVector<float>(B * K, 1), w = randomVector<float>(K * N, 2),
         b = randomVector<float>(N, 3), dy = randomVector<float>(B * N, 4);
    auto xr = rounded(type, x), wr = rounded(type, w), dyr = rounded(type, dy);
    std::vector<float> got(B * N), want(B * N), plain(B * N);
    denseForward(x.data(), w.data(), b.data(), got.data(), B, K, N, type);
    denseForward(xr.data(), wr.data(), b.data(), want.data(), B, K, N);
    denseForward(x.data(), w.data(), b.data(), plain.data(), B, K, N);
    expectBitEqual(got, want, "denseForward");
    EXPECT_NE(std::memcmp(got.data(), plain.data(), got.size() * 4), 0)
        << "rounding changed nothing: the operands were not rounded";
    std::vector<float> dx(B * K), dxWant(B * K), dw(K * N), dwWant(K * N);
    denseGradInput(dy.data(), w.data(), dx.data(), B, K, N, type);
    denseGradInput(dyr.data(), wr.data(), dxWant.data(), B, K, N);
    expectBitEqual(dx, dxWant, "denseGradInput");
    denseGradWeight(x.data(), dy.data(), dw.data(), B, K, N, type);
    denseGradWeight(xr.data(), dyr.data(), dwWant.data(), B, K, N);
    expectBitEqual(dw, dwWant, "denseGradWeight");

    // The fused layer: same GEMMs, f32 epilogue.
    std::vector<float> y(B * N), yWant(B * N), z(B * N);
    denseActForward(Activation::Relu, x.data(), w.data(), b.data(), y.data(), z.data(), B, K, N,
                    type);
    denseActForward(Activation::Relu, xr.data(), wr.data(), b.data(), yWant.data(), (float *)nullptr, B,
                    K, N);
    expectBitEqual(y, yWant, "denseActForward");
    std::vector<float> dz(B * N), dw2(K * N, 0.f), dw2Want(K * N, 0.f), db(N, 0.f),
        dbWant(N, 0.f), dx2(B * K), dx2Want(B * K);
    denseActGrad(Activation::Relu, true, dy.data(), y.data(), x.data(), w.data(), dz.data(),
                 dw2.data(), db.data(), dx2.data(), B, K, N, type);
    // dz = dy * relu'(y) is an f32 epilogue; its GEMMs take dz rounded.
    std::vector<float> dzPlain(B * N);
    activationGradFromOutput(Activation::Relu, dy.data(), y.data(), dzPlain.data(), B * N);
    auto dzr = rounded(type, dzPlain);
    denseGradWeight(xr.data(), dzr.data(), dw2Want.data(), B, K, N);
    denseGradInput(dzr.data(), wr.data(), dx2Want.data(), B, K, N);
    expectBitEqual(dw2, dw2Want, "denseActGrad dW");
    expectBitEqual(dx2, dx2Want, "denseActGrad dx");
  }
}

TEST(MixedPrecisionKernels, InteractionAndCrossEqualF32OnPreRoundedOperands) {
  const int64_t B = 5, D = 8;
  const ComputeType type = ComputeType::BF16;
  std::vector<std::vector<float>> xs, xsr;
  for (uint32_t i = 0; i < 3; ++i) {
    xs.push_back(randomVector<float>(B * D, 10 + i));
    xsr.push_back(rounded(type, xs.back()));
  }
  std::vector<const float *> xp, xrp;
  for (int i = 0; i < 3; ++i) {
    xp.push_back(xs[i].data());
    xrp.push_back(xsr[i].data());
  }
  std::vector<float> y(B * 3), yWant(B * 3);
  interactionForward(xp, y.data(), B, D, false, type);
  interactionForward(xrp, yWant.data(), B, D, false);
  expectBitEqual(y, yWant, "interactionForward");
  auto dy = randomVector<float>(B * 3, 20);
  auto dyr = rounded(type, dy);
  std::vector<std::vector<float>> dx(3, std::vector<float>(B * D)),
      dxWant(3, std::vector<float>(B * D));
  std::vector<float *> dxp = {dx[0].data(), dx[1].data(), dx[2].data()};
  std::vector<float *> dxWantp = {dxWant[0].data(), dxWant[1].data(), dxWant[2].data()};
  interactionGrad(dy.data(), xp, dxp, B, D, false, type);
  interactionGrad(dyr.data(), xrp, dxWantp, B, D, false);
  for (int i = 0; i < 3; ++i)
    expectBitEqual(dx[i], dxWant[i], "interactionGrad");

  auto w = randomVector<float>(D * D, 30), bias = randomVector<float>(D, 31);
  auto wr = rounded(type, w);
  std::vector<float> c(B * D), cWant(B * D);
  crossForward(xs[0].data(), xs[1].data(), w.data(), bias.data(), c.data(), B, D, type);
  // x0 * (round(xl) round(w) + b) + xl: the gating uses the f32 inputs.
  std::vector<float> u(B * D);
  denseForward(xsr[1].data(), wr.data(), bias.data(), u.data(), B, D, D);
  for (int64_t i = 0; i < B * D; ++i)
    cWant[i] = xs[0][i] * u[i] + xs[1][i];
  for (int64_t i = 0; i < B * D; ++i)
    EXPECT_NEAR(c[i], cWant[i], 1e-6f * (1 + std::abs(cWant[i]))) << i;
}

// Gradient checks in double: with operands exactly representable in the
// compute type, rounding is the identity, so the rounded kernels must give
// the exact gradient of the f64 forward (any mix-up of rounded scratch
// operands shows here). Where a kernel rounds an intermediate of its own
// (the cross layer's du = dy * x0), its gradient must agree with the f64 one
// within the compute type's precision.
TEST(MixedPrecisionKernels, GradientChecksOfRoundedKernels) {
  using embc::runtime::cpu::testing::expectGradientMatches;
  using embc::runtime::cpu::testing::weightedSum;
  const int64_t B = 4, K = 5, N = 3;
  for (ComputeType type : {ComputeType::BF16, ComputeType::F16}) {
    auto representable = [&](std::vector<double> v) {
      for (double &d : v)
        d = roundTo(type, d);
      return v;
    };
    auto x = representable(randomVector(B * K, 41)), w = representable(randomVector(K * N, 42));
    auto r = representable(randomVector(B * N, 43));
    auto objective = [&] {
      std::vector<double> y(B * N);
      denseForward(x.data(), w.data(), (const double *)nullptr, y.data(), B, K, N);
      return weightedSum(r, y);
    };
    std::vector<double> dw(K * N), dx(B * K);
    denseGradWeight(x.data(), r.data(), dw.data(), B, K, N, type);
    denseGradInput(r.data(), w.data(), dx.data(), B, K, N, type);
    expectGradientMatches("dense dW (rounded)", w, dw, objective);
    expectGradientMatches("dense dx (rounded)", x, dx, objective);

    const int64_t D = 6;
    std::vector<std::vector<double>> xs = {representable(randomVector(B * D, 50)),
                                           representable(randomVector(B * D, 51)),
                                           representable(randomVector(B * D, 52))};
    auto ri = representable(randomVector(B * 6, 53));
    auto interObjective = [&] {
      std::vector<double> y(B * 6);
      interactionForward<double>({xs[0].data(), xs[1].data(), xs[2].data()}, y.data(), B, D,
                                 true);
      return weightedSum(ri, y);
    };
    std::vector<std::vector<double>> dxs(3, std::vector<double>(B * D));
    interactionGrad<double>(ri.data(), {xs[0].data(), xs[1].data(), xs[2].data()},
                            {dxs[0].data(), dxs[1].data(), dxs[2].data()}, B, D, true, type);
    for (int i = 0; i < 3; ++i)
      expectGradientMatches("interaction dx" + std::to_string(i) + " (rounded)", xs[i], dxs[i],
                            interObjective);

    // Cross layer: rounded vs exact analytic gradients, within 2^-7 of scale.
    auto x0 = randomVector(B * D, 60), xl = randomVector(B * D, 61), cw = randomVector(D * D, 62),
         cb = randomVector(D, 63), rc = randomVector(B * D, 64);
    std::vector<double> e0(B * D), el(B * D), ew(D * D), eb(D);
    std::vector<double> g0(B * D), gl(B * D), gw(D * D), gb(D);
    crossGrad(rc.data(), x0.data(), xl.data(), cw.data(), cb.data(), e0.data(), el.data(),
              ew.data(), eb.data(), B, D);
    crossGrad(rc.data(), x0.data(), xl.data(), cw.data(), cb.data(), g0.data(), gl.data(),
              gw.data(), gb.data(), B, D, type);
    const double tol = type == ComputeType::BF16 ? 1.0 / 64 : 1.0 / 512;
    for (auto [exact, got] : {std::pair{&e0, &g0}, {&el, &gl}, {&ew, &gw}, {&eb, &gb}}) {
      double scale = 0;
      for (double v : *exact)
        scale = std::max(scale, std::abs(v));
      for (size_t i = 0; i < exact->size(); ++i)
        EXPECT_NEAR((*got)[i], (*exact)[i], tol * scale) << i;
    }
  }
}

// --- Loss scaling in the executor ---------------------------------------------------

namespace {

/// A view of all of `parent` (a one-member pack or batch), as `shape`.
int32_t addView(Plan &p, std::string name, int32_t parent, std::vector<int64_t> shape) {
  Buffer b = p.buffers[parent];
  b.name = std::move(name);
  b.parent = parent;
  b.shape = std::move(shape);
  p.buffers.push_back(b);
  return int32_t(p.buffers.size() - 1);
}

/// y = concat(x, lookup(t, ids)) w, mse loss, fp16 compute with loss
/// scaling, Adam on w and on t. `packed`: w is the one member of a
/// ParamPack and t of a TableBatch (their gradients are the group's).
Plan lossScaledPlan(bool packed, double initialScale, int64_t interval) {
  Plan p;
  p.model = "scaled";
  p.config.batchSize = 2;
  p.config.loss = embc::runtime::LossKind::Mse;
  p.config.precision = embc::runtime::ComputeType::F16;
  p.config.lossScaling.enabled = true;
  p.config.lossScaling.initial = initialScale;
  p.config.lossScaling.interval = interval;
  Optimizer adam;
  adam.kind = embc::runtime::OptimizerKind::Adam;
  adam.lr = 0.05;
  int32_t x = addBuffer(p, "x", BufferRole::Input, DType::F32, {2, 2});
  int32_t ids = addBuffer(p, "ids", BufferRole::Input, DType::I64, {2}, true);
  int32_t offsets = addBuffer(p, "offsets", BufferRole::Input, DType::I64, {3});
  int32_t label = addBuffer(p, "label", BufferRole::Input, DType::F32, {2, 1});

  Param w;
  w.name = "w";
  w.init.kind = embc::runtime::InitKind::Constant;
  w.init.value = 0.25;
  w.optimizer = adam;
  Table t;
  t.name = "t";
  t.rows = 4;
  t.dim = 2;
  t.init.kind = embc::runtime::InitKind::Constant;
  t.init.value = 0.5;
  t.optimizer = adam;
  auto state = [&](const std::string &n, std::vector<int64_t> shape) {
    return std::vector<int32_t>{
        addBuffer(p, n + "/m", BufferRole::OptimizerState, DType::F32, shape),
        addBuffer(p, n + "/v", BufferRole::OptimizerState, DType::F32, shape)};
  };
  if (!packed) {
    w.buffer = addBuffer(p, "w", BufferRole::Param, DType::F32, {4, 1});
    w.grad = addBuffer(p, "dw", BufferRole::Grad, DType::F32, {4, 1});
    w.state = state("w", {4, 1});
    t.buffer = addBuffer(p, "t", BufferRole::Table, DType::F32, {4, 2});
    t.gradRows = addBuffer(p, "t/rows", BufferRole::Grad, DType::I64, {2}, true);
    t.gradValues = addBuffer(p, "t/values", BufferRole::Grad, DType::F32, {2, 2}, true);
    t.state = state("t", {4, 2});
  } else {
    ParamPack pack;
    pack.name = "pack";
    pack.buffer = addBuffer(p, "pack", BufferRole::Param, DType::F32, {4});
    pack.grad = addBuffer(p, "pack/grad", BufferRole::Grad, DType::F32, {4});
    pack.state = state("pack", {4});
    pack.members = {0};
    pack.optimizer = adam;
    pack.buckets = {0, 4};
    w.buffer = addView(p, "w", pack.buffer, {4, 1});
    w.grad = addView(p, "dw", pack.grad, {4, 1});
    for (int32_t s : pack.state)
      w.state.push_back(addView(p, "w/state", s, {4, 1}));
    p.packs.push_back(pack);
    TableBatch batch;
    batch.name = "batch";
    batch.rows = 4;
    batch.dim = 2;
    batch.buffer = addBuffer(p, "batch", BufferRole::Table, DType::F32, {4, 2});
    batch.gradRows = addBuffer(p, "batch/rows", BufferRole::Grad, DType::I64, {2}, true);
    batch.gradValues = addBuffer(p, "batch/values", BufferRole::Grad, DType::F32, {2, 2}, true);
    batch.state = state("batch", {4, 2});
    batch.members = {0};
    batch.rowOffsets = {0};
    batch.optimizer = adam;
    t.buffer = addView(p, "t", batch.buffer, {4, 2});
    t.gradRows = batch.gradRows;
    t.gradValues = batch.gradValues;
    for (int32_t s : batch.state)
      t.state.push_back(addView(p, "t/state", s, {4, 2}));
    p.tableBatches.push_back(batch);
  }
  p.params.push_back(w);
  p.tables.push_back(t);

  auto act = [&](const char *n, std::vector<int64_t> shape, bool dynamic = false) {
    return addBuffer(p, n, BufferRole::Activation, DType::F32, shape, dynamic);
  };
  int32_t e = act("e", {2, 2}), h = act("h", {2, 4}), y = act("y", {2, 1}), loss = act("loss", {1});
  int32_t dy = act("dy", {2, 1}), dw = act("dw_step", {4, 1}), dh = act("dh", {2, 4});
  int32_t de = act("de", {2, 2}), rowsGrad = act("rows_grad", {2, 2}, true);
  p.inputs = {{"x", "x", embc::runtime::InputRole::Dense, x, 2},
              {"f", "f", embc::runtime::InputRole::Ids, ids, 0, 4},
              {"f", "f", embc::runtime::InputRole::Offsets, offsets},
              {"label", "label", embc::runtime::InputRole::Label, label}};
  p.inputs[3].labelKind = embc::runtime::LabelKind::Real;
  nlohmann::json fp16 = {{"compute", "fp16"}};
  p.step = {{"lookup", {ids, offsets}, {e}, {{"table", 0}, {"pooling", "sum"}}},
            {"concat", {x, e}, {h}},
            {"dense", {h, w.buffer}, {y}, fp16},
            {"loss", {y, label}, {loss}, {{"kind", "mse"}}},
            {"loss_grad", {y, label}, {dy}, {{"kind", "mse"}, {"loss_scaled", true}}},
            {"dense_grad_weight", {h, dy}, {dw}, fp16},
            {"dense_grad_input", {dy, w.buffer}, {dh}, fp16},
            {"slice", {dh}, {de}, {{"offset", 2}}},
            {"lookup_grad", {ids, offsets, de}, {rowsGrad}, {{"table", 0}, {"pooling", "sum"}}},
            {"accumulate_grad", {dw}, {w.grad}, {{"param", 0}}},
            {"accumulate_rows", {ids, rowsGrad}, {t.gradRows, t.gradValues}, {{"table", 0}}}};
  p.forwardKernels = 4;
  int32_t denseGrad = packed ? p.packs[0].grad : w.grad;
  p.update = {{"unscale_grads", {}, {denseGrad, t.gradValues}}};
  if (!packed) {
    p.update.push_back({"coalesce_rows", {}, {t.gradRows, t.gradValues}, {{"table", 0}}});
    p.update.push_back({"update_table", {t.gradRows, t.gradValues}, {t.buffer, t.state[0],
                        t.state[1]}, {{"table", 0}, {"grad_scale", 1.0}}});
    p.update.push_back({"update_param", {w.grad}, {w.buffer, w.state[0], w.state[1]},
                        {{"param", 0}, {"grad_scale", 1.0}}});
  } else {
    const TableBatch &tb = p.tableBatches[0];
    const ParamPack &pk = p.packs[0];
    p.update.push_back({"coalesce_rows", {}, {tb.gradRows, tb.gradValues}, {{"batch", 0}}});
    p.update.push_back({"update_table", {tb.gradRows, tb.gradValues},
                        {tb.buffer, tb.state[0], tb.state[1]}, {{"batch", 0}, {"grad_scale", 1.0}}});
    p.update.push_back({"update_packed", {pk.grad}, {pk.buffer, pk.state[0], pk.state[1]},
                        {{"pack", 0}, {"grad_scale", 1.0}}});
  }
  p.lossBuffer = loss;
  p.predictionBuffer = y;
  return p;
}

data::Batch smallBatch() {
  data::Batch batch;
  batch.size = batch.valid = 2;
  batch.features.resize(3);
  batch.features[0].dense = {0.5f, -1.0f, 2.0f, 0.25f};
  batch.features[1].ids = {1, 3};
  batch.features[1].offsets = {0, 1, 2};
  batch.features[2].label = {1.0f, -0.5f};
  return batch;
}

/// The bytes of every parameter, table and optimizer-state buffer.
std::vector<char> trainedState(Executor &ex) {
  std::vector<char> out;
  for (const Buffer &b : ex.plan().buffers)
    if (b.role == BufferRole::Param || b.role == BufferRole::Table ||
        b.role == BufferRole::OptimizerState) {
      const char *at = reinterpret_cast<const char *>(ex.data<float>(
          int32_t(&b - ex.plan().buffers.data())));
      out.insert(out.end(), at, at + b.bytes);
    }
  return out;
}

/// Runs forward + backward of the small batch (gradients zeroed first).
void backward(Executor &ex) {
  ex.zeroGradients();
  ex.loadBatch(smallBatch());
  ex.forwardBackward();
}

} // namespace

TEST(LossScaling, UnscaleFindsAnInfInEveryKindOfGradient) {
  for (bool packed : {false, true}) {
    Plan plan = lossScaledPlan(packed, 1024.0, 1000);
    const Table &t = plan.tables[0];
    int32_t dense = packed ? plan.packs[0].grad : plan.params[0].grad;
    int32_t sparse = packed ? plan.tableBatches[0].gradValues : t.gradValues;
    for (int32_t poisoned : {dense, sparse}) {
      for (float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
        Executor ex(plan, oneThreadCpu());
        ex.initialize(3);
        backward(ex);
        ex.data<float>(poisoned)[3] = bad; // sparse: row 1, a filled row
        std::vector<char> before = trainedState(ex);
        EXPECT_FALSE(ex.update(1, 1.0)) << plan.buffers[poisoned].name;
        EXPECT_EQ(trainedState(ex), before) << "a skipped update changed the state";
        EXPECT_EQ(ex.lossScale().scale, 512.0);
        EXPECT_EQ(ex.lossScale().skippedSteps, 1);
      }
    }
    // And a clean one is applied, with the gradients unscaled exactly.
    Executor ex(plan, oneThreadCpu());
    ex.initialize(3);
    backward(ex);
    std::vector<float> scaled(ex.data<float>(dense), ex.data<float>(dense) + 4);
    std::vector<char> before = trainedState(ex);
    EXPECT_TRUE(ex.update(1, 1.0));
    EXPECT_NE(trainedState(ex), before);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(ex.data<float>(dense)[i], scaled[i] / 1024.0f);
  }
}

TEST(LossScaling, OverflowingGradientSkipsTheUpdateAndHalvesTheScale) {
  // 2^40 times the loss gradient overflows fp16 in the backward GEMMs' operands.
  Plan plan = lossScaledPlan(false, std::ldexp(1.0, 40), 1000);
  Executor ex(plan, oneThreadCpu());
  ex.initialize(5);
  backward(ex);
  EXPECT_FALSE(std::isfinite(ex.data<float>(plan.params[0].grad)[0]));
  std::vector<char> before = trainedState(ex);
  EXPECT_FALSE(ex.update(1, 1.0));
  EXPECT_EQ(trainedState(ex), before);
  EXPECT_EQ(ex.lossScale().scale, std::ldexp(1.0, 39));
  EXPECT_EQ(ex.lossScale().skippedSteps, 1);
  EXPECT_EQ(ex.lossScale().goodSteps, 0);
}

TEST(LossScaling, SkippedUpdatesDoNotAdvanceAdamsStep) {
  // Run A: one good update. Run B: an overflow first (skipped), then the
  // same update as step 2. Scaling by a power of two is exact, so B's
  // update equals A's only if Adam's bias correction sees step 1 again.
  Plan plan = lossScaledPlan(false, 1024.0, 1000);
  Executor a(plan, oneThreadCpu()), b(plan, oneThreadCpu());
  a.initialize(9);
  b.initialize(9);
  backward(a);
  ASSERT_TRUE(a.update(1, 1.0));
  backward(b);
  b.data<float>(plan.params[0].grad)[0] = std::numeric_limits<float>::infinity();
  ASSERT_FALSE(b.update(1, 1.0));
  backward(b);
  ASSERT_TRUE(b.update(2, 1.0));
  EXPECT_EQ(trainedState(a), trainedState(b));
}

TEST(LossScaling, ScaleGrowsAfterIntervalGoodSteps) {
  Plan plan = lossScaledPlan(false, 256.0, 3);
  Executor ex(plan, oneThreadCpu());
  ex.initialize(1);
  std::vector<double> scales;
  for (int64_t step = 1; step <= 7; ++step) {
    backward(ex);
    if (step == 5) // an overflow in the middle resets the count
      ex.data<float>(plan.tables[0].gradValues)[0] = std::numeric_limits<float>::infinity();
    ex.update(step, 1.0);
    scales.push_back(ex.lossScale().scale);
  }
  EXPECT_EQ(scales, (std::vector<double>{256, 256, 512, 512, 256, 256, 256}));
  EXPECT_EQ(ex.lossScale().skippedSteps, 1);
  EXPECT_EQ(ex.lossScale().goodSteps, 2);
}

TEST(LossScaling, RefusesAKernelWithoutTheConfig) {
  Plan plan = lossScaledPlan(false, 1024.0, 10);
  plan.config.lossScaling.enabled = false;
  EXPECT_THROW(Executor(plan, oneThreadCpu()), PlanError);
}
