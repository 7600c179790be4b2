//===- FusedDenseKernelTest.cpp - fused dense kernels vs the plain chain ---===//
//
// Every kernel of FusedDenseKernels.h against the composition of the plain
// kernels of Kernels.h it replaces (float within 1e-5, double within 1e-12,
// relative to max(1, |expected|)), on shapes that reach each code path: B,
// K or N of 1, odd sizes, more rows than one block, more columns than one
// column block, and both the serial and the threaded paths (the tests run
// with teams of 1 and 3 threads). The backward kernels are also checked
// against central finite differences of the fused forward, in double
// (GradientCheck.h).
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/FusedDenseKernels.h"
#include "embc/runtime/cpu/NormKernels.h"
#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>


namespace embc::runtime::cpu {
namespace {

using testing::expectGradientMatches;
using testing::randomVector;
using testing::weightedSum;
using Vec = std::vector<double>;

// --- Helpers ------------------------------------------------------------------

template <class T> double tolerance() { return std::is_same_v<T, float> ? 1e-5 : 1e-12; }

/// Every entry within tolerance<T>() of the expected value, relative to
/// max(1, |expected|); names the first few that are not.
template <class T>
void expectClose(const std::vector<T> &actual, const std::vector<T> &expected,
                 const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double e = double(expected[i]), err = std::abs(double(actual[i]) - e);
    if (!(err <= tolerance<T>() * std::max(1.0, std::abs(e))) && ++bad <= 5)
      ADD_FAILURE() << what << "[" << i << "]: " << actual[i] << " vs expected " << e;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << actual.size() << " entries differ";
}

/// Runs fn with teams of 1 and of 3 threads (the serial and the threaded
/// paths), then restores the thread count.
template <class Fn> void forThreadCounts(Fn fn) {
  const int saved = teamSize();
  for (int threads : {1, 3}) {
    setTeamSize(threads);
    fn(threads);
  }
  setTeamSize(saved);
}

struct Shape {
  int64_t B, K, N;
};
std::string str(const Shape &s) {
  return std::to_string(s.B) + "x" + std::to_string(s.K) + "x" + std::to_string(s.N);
}
/// B, K, N of 1, odd sizes, N above the 256-column block, and two shapes
/// big enough for the threaded paths (many rows; few rows, wide layer).
const std::vector<Shape> kDenseShapes = {{1, 1, 1},    {1, 7, 5},     {3, 1, 9},   {5, 4, 1},
                                         {37, 13, 29}, {130, 67, 33}, {9, 5, 300}, {300, 64, 70},
                                         {40, 180, 190}};

const Activation kKinds[] = {Activation::None, Activation::Relu, Activation::Sigmoid,
                             Activation::Tanh, Activation::Gelu};
/// The plan's spelling of `f` (Enums.h), for messages.
std::string name(Activation f) { return enumString(f); }

template <class T> class FusedDense : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FusedDense, ElementTypes);

// --- activation_grad from the output ------------------------------------------

TYPED_TEST(FusedDense, ActivationGradFromOutputEqualsFromInput) {
  using T = TypeParam;
  for (int64_t n : {1, 7, 5000, 70001}) {
    const auto z = randomVector<T>(size_t(n), 1, -3, 3), dy = randomVector<T>(size_t(n), 2);
    for (Activation f : kKinds) {
      if (f == Activation::Gelu)
        continue;
      std::vector<T> y(static_cast<size_t>(n)), expected(static_cast<size_t>(n)), dx(static_cast<size_t>(n));
      activationForward(f, z.data(), y.data(), n);
      activationGrad(f, dy.data(), z.data(), expected.data(), n);
      activationGradFromOutput(f, dy.data(), y.data(), dx.data(), n);
      expectClose(dx, expected, name(f) + " n=" + std::to_string(n));
      std::vector<T> inPlace = dy; // dx may alias dy
      activationGradFromOutput(f, inPlace.data(), y.data(), inPlace.data(), n);
      expectClose(inPlace, expected, name(f) + " in place");
    }
  }
  std::vector<T> v(4, T(1));
  EXPECT_FALSE(hasDerivativeFromOutput(Activation::Gelu));
  EXPECT_THROW(activationGradFromOutput(Activation::Gelu, v.data(), v.data(), v.data(), 4),
               std::invalid_argument);
}

TEST(FusedDenseGradientCheck, ActivationGradFromOutput) {
  const int64_t n = 19;
  for (Activation f : {Activation::Relu, Activation::Sigmoid, Activation::Tanh}) {
    Vec z = testing::randomAwayFromZero(n, 3, 0.1, 2.5);
    const Vec r = randomVector(n, 4);
    auto objective = [&] {
      Vec y(n);
      activationForward(f, z.data(), y.data(), n);
      return weightedSum(r, y);
    };
    Vec y(n), dz(n);
    activationForward(f, z.data(), y.data(), n);
    activationGradFromOutput(f, r.data(), y.data(), dz.data(), n);
    expectGradientMatches(std::string("from output ") + name(f), z, dz, objective);
  }
}

// --- dense_act ------------------------------------------------------------------

// Bit for bit: the fused layer makes denseForward's GEMM call.
TYPED_TEST(FusedDense, DenseActEqualsDenseThenActivation) {
  using T = TypeParam;
  forThreadCounts([&](int threads) {
    for (const Shape &s : kDenseShapes) {
      const auto x = randomVector<T>(size_t(s.B * s.K), 5);
      const auto w = randomVector<T>(size_t(s.K * s.N), 6, -0.5, 0.5);
      const auto b = randomVector<T>(size_t(s.N), 7);
      for (Activation f : kKinds)
        for (bool bias : {false, true}) {
          const std::string what = str(s) + " " + name(f) + (bias ? " bias" : "") + " threads " +
                                   std::to_string(threads);
          const T *bp = bias ? b.data() : nullptr;
          std::vector<T> zRef(size_t(s.B * s.N)), yRef(zRef.size());
          denseForward(x.data(), w.data(), bp, zRef.data(), s.B, s.K, s.N);
          activationForward(f, zRef.data(), yRef.data(), s.B * s.N);

          std::vector<T> y(yRef.size(), T(-7)), z(yRef.size(), T(-7));
          denseActForward(f, x.data(), w.data(), bp, y.data(), (T *)nullptr, s.B, s.K, s.N);
          EXPECT_EQ(y, yRef) << what << " y";
          std::fill(y.begin(), y.end(), T(-7));
          denseActForward(f, x.data(), w.data(), bp, y.data(), z.data(), s.B, s.K, s.N);
          EXPECT_EQ(y, yRef) << what << " y (with z)";
          EXPECT_EQ(z, zRef) << what << " z";
        }
    }
  });
}

// --- dense_multi and dense_multi_grad ------------------------------------------------

/// Layer widths of the shared-input tests: Q, K and V alike, or of other
/// widths; input widths K <= 64 (the input gradient's GEMMs on libxsmm, one
/// transposed-weight scratch, so the layer-at-a-time path) and above (the
/// BLAS, summed a block of rows at a time).
struct MultiShape {
  int64_t B, K;
  std::vector<int64_t> N;
  std::vector<bool> bias;
};
const std::vector<MultiShape> kMultiShapes = {
    {1, 3, {2, 5}, {true, false}},
    {70, 16, {16, 8, 16}, {true, false, true}},
    {200, 96, {96, 96, 96}, {true, true, false}},
    {130, 80, {33, 70}, {false, true}},
};
std::string str(const MultiShape &s, int threads) {
  return std::to_string(s.B) + "x" + std::to_string(s.K) + " " + std::to_string(s.N.size()) +
         " layers, threads " + std::to_string(threads);
}

TYPED_TEST(FusedDense, DenseMultiEqualsEachDenseBitForBit) {
  using T = TypeParam;
  forThreadCounts([&](int threads) {
    for (const MultiShape &s : kMultiShapes) {
      const std::string what = str(s, threads);
      const auto x = randomVector<T>(size_t(s.B * s.K), 21);
      std::vector<std::vector<T>> w, b, y, yRef;
      std::vector<SharedInputLayer<T>> layers;
      for (size_t i = 0; i < s.N.size(); ++i) {
        w.push_back(randomVector<T>(size_t(s.K * s.N[i]), 22 + i, -0.5, 0.5));
        b.push_back(randomVector<T>(size_t(s.N[i]), 30 + i));
        yRef.emplace_back(size_t(s.B * s.N[i]));
        y.emplace_back(size_t(s.B * s.N[i]), T(-7));
        denseForward(x.data(), w[i].data(), s.bias[i] ? b[i].data() : nullptr, yRef[i].data(),
                     s.B, s.K, s.N[i]);
      }
      for (size_t i = 0; i < s.N.size(); ++i)
        layers.push_back({w[i].data(), s.bias[i] ? b[i].data() : nullptr, y[i].data(), s.N[i]});
      denseMultiForward(x.data(), s.B, s.K, layers);
      for (size_t i = 0; i < s.N.size(); ++i)
        EXPECT_EQ(y[i], yRef[i]) << what << ", layer " << i;
    }
  });
}

TYPED_TEST(FusedDense, DenseMultiGradEqualsThePlainKernelsAndTheirSum) {
  using T = TypeParam;
  forThreadCounts([&](int threads) {
    for (const MultiShape &s : kMultiShapes) {
      const std::string what = str(s, threads);
      const size_t n = s.N.size();
      const auto x = randomVector<T>(size_t(s.B * s.K), 41);
      std::vector<std::vector<T>> w, dy, dw, db, dwRef, dbRef;
      for (size_t i = 0; i < n; ++i) {
        w.push_back(randomVector<T>(size_t(s.K * s.N[i]), 42 + i, -0.5, 0.5));
        dy.push_back(randomVector<T>(size_t(s.B * s.N[i]), 50 + i));
        // The accumulators start from earlier steps' values.
        dwRef.push_back(randomVector<T>(size_t(s.K * s.N[i]), 60 + i));
        dbRef.push_back(randomVector<T>(size_t(s.N[i]), 70 + i));
      }
      dw = dwRef, db = dbRef;
      // What the layers' backward was before: each layer's dense_act_grad
      // (kind none: dW and db accumulated in place) and its input gradient,
      // then the adds in order.
      std::vector<T> dxRef(size_t(s.B * s.K)), term(dxRef.size());
      for (size_t i = 0; i < n; ++i) {
        denseActGrad(Activation::None, false, dy[i].data(), (const T *)nullptr, x.data(),
                     w[i].data(), (T *)nullptr, dwRef[i].data(),
                     s.bias[i] ? dbRef[i].data() : nullptr, (T *)nullptr, s.B, s.K, s.N[i]);
        denseGradInput(dy[i].data(), w[i].data(), i == 0 ? dxRef.data() : term.data(), s.B, s.K,
                       s.N[i]);
        if (i > 0)
          for (size_t j = 0; j < dxRef.size(); ++j)
            dxRef[j] = dxRef[j] + term[j];
      }
      std::vector<SharedInputLayerGrad<T>> layers;
      for (size_t i = 0; i < n; ++i)
        layers.push_back({dy[i].data(), w[i].data(), dw[i].data(),
                          s.bias[i] ? db[i].data() : nullptr, s.N[i]});
      std::vector<T> dx(dxRef.size(), T(-7));
      denseMultiGrad(x.data(), dx.data(), s.B, s.K, layers);
      EXPECT_EQ(dx, dxRef) << what << " dx";
      for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(dw[i], dwRef[i]) << what << " dW " << i;
        EXPECT_EQ(db[i], dbRef[i]) << what << " db " << i;
      }
    }
  });
}

// --- dense_act_grad ---------------------------------------------------------------

TYPED_TEST(FusedDense, DenseActGradEqualsPlainChain) {
  using T = TypeParam;
  forThreadCounts([&](int threads) {
    for (const Shape &s : kDenseShapes) {
      const int64_t B = s.B, K = s.K, N = s.N;
      const auto x = randomVector<T>(size_t(B * K), 8), w = randomVector<T>(size_t(K * N), 9);
      const auto b = randomVector<T>(size_t(N), 10), dy = randomVector<T>(size_t(B * N), 11);
      const auto dw0 = randomVector<T>(size_t(K * N), 12), db0 = randomVector<T>(size_t(N), 13);
      for (Activation f : kKinds)
        for (bool fromOutput : {false, true})
          for (bool bias : {false, true})
            for (bool inputGrad : {false, true}) {
              if (fromOutput && f == Activation::Gelu)
                continue;
              const std::string what = str(s) + " " + name(f) + (fromOutput ? " from y" : "") +
                                       (bias ? " bias" : "") + (inputGrad ? " dx" : "") +
                                       " threads " + std::to_string(threads);
              const bool activated = f != Activation::None;
              // The forward, then the plain backward chain: activation_grad,
              // dense_grad_weight + accumulate, bias_grad + accumulate,
              // dense_grad_input.
              std::vector<T> z(size_t(B * N)), y(z.size());
              denseForward(x.data(), w.data(), bias ? b.data() : nullptr, z.data(), B, K, N);
              activationForward(f, z.data(), y.data(), B * N);
              std::vector<T> dzRef(z.size()), dwRef(dw0), dbRef(db0), dxRef(size_t(B * K));
              activationGrad(f, dy.data(), z.data(), dzRef.data(), B * N);
              std::vector<T> tmpW(dw0.size()), tmpB(db0.size());
              denseGradWeight(x.data(), dzRef.data(), tmpW.data(), B, K, N);
              addTwo(dwRef.data(), tmpW.data(), dwRef.data(), K * N);
              biasGrad(dzRef.data(), tmpB.data(), B, N);
              addTwo(dbRef.data(), tmpB.data(), dbRef.data(), N);
              denseGradInput(dzRef.data(), w.data(), dxRef.data(), B, K, N);

              std::vector<T> dz(z.size(), T(-7)), dw(dw0), db(db0), dx(dxRef.size(), T(-7));
              const std::vector<T> &a = fromOutput ? y : z;
              denseActGrad(f, fromOutput, dy.data(), activated ? a.data() : nullptr, x.data(),
                           w.data(), activated ? dz.data() : nullptr, dw.data(),
                           bias ? db.data() : nullptr, inputGrad ? dx.data() : nullptr, B, K, N);
              if (activated)
                expectClose(dz, dzRef, what + " dz");
              expectClose(dw, dwRef, what + " dW");
              if (bias) {
                expectClose(db, dbRef, what + " db");
                // db is biasGrad of the fused dz, accumulated, bit for bit.
                std::vector<T> sums(static_cast<size_t>(N)), exact(db0);
                biasGrad(activated ? dz.data() : dy.data(), sums.data(), B, N);
                addTwo(exact.data(), sums.data(), exact.data(), N);
                EXPECT_EQ(db, exact) << what;
              } else {
                EXPECT_EQ(db, db0) << what << ": db touched without a bias";
              }
              if (inputGrad)
                expectClose(dx, dxRef, what + " dx");
              else
                EXPECT_TRUE(std::all_of(dx.begin(), dx.end(), [](T v) { return v == T(-7); }))
                    << what << ": dx written without input_grad";
            }
    }
  });
}

TEST(FusedDenseGradientCheck, DenseActGrad) {
  const int64_t B = 4, K = 3, N = 5;
  for (Activation f : kKinds)
    for (bool fromOutput : {false, true})
      for (bool bias : {false, true}) {
        if (fromOutput && f == Activation::Gelu)
          continue;
        const std::string what = name(f) + (fromOutput ? " from y" : "") +
                                 (bias ? " bias" : "");
        Vec x = randomVector(B * K, 14), w = randomVector(K * N, 15), b = randomVector(N, 16);
        const Vec r = randomVector(B * N, 17);
        auto forward = [&](Vec &y, Vec &z) {
          denseActForward(f, x.data(), w.data(), bias ? b.data() : nullptr, y.data(), z.data(), B,
                          K, N);
        };
        auto objective = [&] {
          Vec y(B * N), z(B * N);
          forward(y, z);
          return weightedSum(r, y);
        };
        Vec y(B * N), z(B * N), dz(B * N), dw(K * N, 0.0), db(N, 0.0), dx(B * K);
        forward(y, z);
        denseActGrad(f, fromOutput, r.data(), fromOutput ? y.data() : z.data(), x.data(),
                     w.data(), dz.data(), dw.data(), bias ? db.data() : nullptr, dx.data(), B, K,
                     N);
        expectGradientMatches(what + " dx", x, dx, objective);
        expectGradientMatches(what + " dW", w, dw, objective);
        if (bias)
          expectGradientMatches(what + " db", b, db, objective);
      }
}

// --- add_layer_norm --------------------------------------------------------------

// The fused residual + dropout + layer norm is the unfused dropout, add and
// layer_norm, to the bit, with and without the dropout and whatever the
// rows' global offset (a micro-batch's or a rank's first element).
TEST(FusedAddLayerNorm, EqualsDropoutAddLayerNorm) {
  const int64_t rows = 37, D = 70, n = rows * D;
  const std::vector<float> x = randomVector<float>(size_t(n), 31),
                           p = randomVector<float>(size_t(n), 32),
                           gamma = randomVector<float>(size_t(D), 33, 0.5, 1.5),
                           beta = randomVector<float>(size_t(D), 34);
  for (bool drops : {false, true}) {
    const DropoutDraw draw{dropoutKey(11, 2, 5), uint64_t(3) << 31, 0.25};
    std::vector<float> d(static_cast<size_t>(n)), h(d.size()), y(d.size());
    if (drops)
      dropoutApply(p.data(), d.data(), n, draw.key, draw.first, draw.rate);
    else
      d = p;
    for (int64_t i = 0; i < n; ++i)
      h[size_t(i)] = x[size_t(i)] + d[size_t(i)];
    layerNormForward(h.data(), gamma.data(), beta.data(), y.data(), rows, D, 1e-5);
    std::vector<float> fusedH(d.size()), fusedY(d.size()), onlyY(d.size());
    const std::optional<DropoutDraw> drop = drops ? std::optional<DropoutDraw>(draw) : std::nullopt;
    addLayerNormForward(x.data(), p.data(), gamma.data(), beta.data(), fusedH.data(),
                        fusedY.data(), rows, D, 1e-5, drop);
    EXPECT_EQ(fusedH, h) << "dropout " << drops;
    EXPECT_EQ(fusedY, y) << "dropout " << drops;
    addLayerNormForward(x.data(), p.data(), gamma.data(), beta.data(), (float *)nullptr,
                        onlyY.data(), rows, D, 1e-5, drop);
    EXPECT_EQ(onlyY, y) << "without h, dropout " << drops;
  }
}

// Its backward: layer_norm_grad, the residual's add and dropout_grad, to
// the bit, with and without the other gradient and the dropout.
TEST(FusedAddLayerNorm, GradEqualsLayerNormGradAddDropoutGrad) {
  const int64_t rows = 29, D = 70, n = rows * D;
  const std::vector<float> dy = randomVector<float>(size_t(n), 41),
                           h = randomVector<float>(size_t(n), 42),
                           other = randomVector<float>(size_t(n), 43),
                           gamma = randomVector<float>(size_t(D), 44, 0.5, 1.5);
  const DropoutDraw draw{dropoutKey(12, 4, 7), 5, 0.3};
  for (bool withOther : {false, true})
    for (bool drops : {false, true}) {
      std::vector<float> dx(static_cast<size_t>(n)), dg(static_cast<size_t>(D)), db(dg.size()),
          dh(dx.size()), dp(dx.size());
      layerNormBackward(dy.data(), h.data(), gamma.data(), dx.data(), dg.data(), db.data(), rows,
                        D, 1e-5);
      for (int64_t i = 0; i < n; ++i)
        dh[size_t(i)] = withOther ? other[size_t(i)] + dx[size_t(i)] : dx[size_t(i)];
      if (drops)
        dropoutApply(dh.data(), dp.data(), n, draw.key, draw.first, draw.rate);
      std::vector<float> gotDh(dx.size()), gotDp(dx.size()), gotDg(dg.size()), gotDb(dg.size());
      addLayerNormBackward(dy.data(), h.data(), gamma.data(), withOther ? other.data() : nullptr,
                           gotDh.data(), gotDg.data(), gotDb.data(),
                           drops ? gotDp.data() : (float *)nullptr, rows, D, 1e-5,
                           drops ? std::optional<DropoutDraw>(draw) : std::nullopt);
      EXPECT_EQ(gotDh, dh) << withOther << drops;
      EXPECT_EQ(gotDg, dg);
      EXPECT_EQ(gotDb, db);
      if (drops)
        EXPECT_EQ(gotDp, dp) << withOther;
    }
}

// --- elementwise chains ---------------------------------------------------------

using Step = ElementwiseStep;

Step add(std::vector<int32_t> args, bool bias = false) {
  Step s;
  s.op = Step::Op::Add;
  s.bias = bias;
  s.args = std::move(args);
  return s;
}
Step act(Activation f, int32_t arg) {
  Step s;
  s.op = Step::Op::Activation;
  s.kind = f;
  s.args = {arg};
  return s;
}
Step actGrad(Activation f, bool fromOutput, int32_t dy, int32_t a) {
  Step s;
  s.op = Step::Op::ActivationGrad;
  s.kind = f;
  s.fromOutput = fromOutput;
  s.args = {dy, a};
  return s;
}

template <class T> std::vector<const T *> pointers(const std::vector<std::vector<T>> &vs) {
  std::vector<const T *> out;
  for (const auto &v : vs)
    out.push_back(v.data());
  return out;
}

TYPED_TEST(FusedDense, ElementwiseChainsEqualPlainKernels) {
  using T = TypeParam;
  forThreadCounts([&](int threads) {
    // Widths of 1, odd, and above one block (4096 elements); rows of 1, odd,
    // and enough for several blocks.
    const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {3, 7}, {601, 1}, {601, 33}, {3, 5000}};
    for (const auto &[rows, N] : shapes) {
        const int64_t n = rows * N;
        const std::string what = std::to_string(rows) + "x" + std::to_string(N) + " threads " +
                                 std::to_string(threads);
        // Inputs: a, b (full), bias (N), dy (full).
        const std::vector<std::vector<T>> in = {
            randomVector<T>(size_t(n), 20, -2, 2), randomVector<T>(size_t(n), 21, -2, 2),
            randomVector<T>(size_t(N), 22), randomVector<T>(size_t(n), 23)};
        const auto ins = pointers(in);

        for (Activation f : kKinds) {
          // Forward: s0 = a + b + bias, s1 = f(s0); outputs [s1, s0, a].
          ElementwiseChain fwd;
          fwd.width = N;
          fwd.inputs = 4;
          fwd.steps = {add({0, 1, 2}, true), act(f, 4)};
          fwd.results = {5, 4, 0};
          checkElementwiseChain(fwd);
          std::vector<T> sum(static_cast<size_t>(n)), y(static_cast<size_t>(n));
          addForward<T>({in[0].data(), in[1].data()}, in[2].data(), sum.data(), rows, N);
          activationForward(f, sum.data(), y.data(), n);
          std::vector<std::vector<T>> out(3, std::vector<T>(size_t(n), T(-7)));
          std::vector<T *> outs = {out[0].data(), out[1].data(), out[2].data()};
          elementwiseForward(fwd, ins.data(), outs.data(), n);
          expectClose(out[0], y, what + " " + name(f) + "(a + b + bias)");
          expectClose(out[1], sum, what + " a + b + bias");
          expectClose(out[2], in[0], what + " copy of a");

          // Backward: s0 = dy * f'(a) (from a, or from y = f(a)), s1 = s0 + b.
          for (bool fromOutput : {false, true}) {
            if (fromOutput && f == Activation::Gelu)
              continue;
            std::vector<T> fa(static_cast<size_t>(n)), g(static_cast<size_t>(n)), gb(static_cast<size_t>(n));
            activationForward(f, in[0].data(), fa.data(), n);
            activationGrad(f, in[3].data(), in[0].data(), g.data(), n);
            addTwo(g.data(), in[1].data(), gb.data(), n);
            const std::vector<std::vector<T>> bwdIn = {in[3], fromOutput ? fa : in[0], in[1]};
            const auto bwdIns = pointers(bwdIn);
            ElementwiseChain bwd;
            bwd.width = N;
            bwd.inputs = 3;
            bwd.steps = {actGrad(f, fromOutput, 0, 1), add({3, 2})};
            bwd.results = {4, 3};
            std::vector<std::vector<T>> got(2, std::vector<T>(size_t(n), T(-7)));
            std::vector<T *> gots = {got[0].data(), got[1].data()};
            elementwiseForward(bwd, bwdIns.data(), gots.data(), n);
            const std::string gw = what + " " + name(f) + (fromOutput ? "' from y" : "'");
            expectClose(got[0], gb, gw + " + b");
            expectClose(got[1], g, gw);
          }
        }

        // An output that is an input's memory (in place): s0 = relu(a + b) into a.
        ElementwiseChain inPlace;
        inPlace.width = N;
        inPlace.inputs = 2;
        inPlace.steps = {add({0, 1}), act(Activation::Relu, 2)};
        inPlace.results = {3};
        std::vector<T> a = in[0], expected(static_cast<size_t>(n));
        addTwo(in[0].data(), in[1].data(), expected.data(), n);
        activationForward(Activation::Relu, expected.data(), expected.data(), n);
        const T *inPlaceIns[] = {a.data(), in[1].data()};
        T *inPlaceOuts[] = {a.data()};
        elementwiseForward(inPlace, inPlaceIns, inPlaceOuts, n);
        expectClose(a, expected, what + " in place");
      }
  });
}

TEST(FusedDenseGradientCheck, ElementwiseChain) {
  // y = tanh(a + b + bias); its gradient chain g = dy * tanh'(from y) gives
  // da = db = g.
  const int64_t rows = 3, N = 4, n = rows * N;
  Vec a = randomVector(n, 30), b = randomVector(n, 31), bias = randomVector(N, 32);
  const Vec r = randomVector(n, 33);
  ElementwiseChain fwd;
  fwd.width = N;
  fwd.inputs = 3;
  fwd.steps = {add({0, 1, 2}, true), act(Activation::Tanh, 3)};
  fwd.results = {4};
  auto forward = [&] {
    Vec y(n);
    const double *ins[] = {a.data(), b.data(), bias.data()};
    double *outs[] = {y.data()};
    elementwiseForward(fwd, ins, outs, n);
    return y;
  };
  auto objective = [&] { return weightedSum(r, forward()); };
  ElementwiseChain bwd;
  bwd.width = N;
  bwd.inputs = 2;
  bwd.steps = {actGrad(Activation::Tanh, true, 0, 1)};
  bwd.results = {2, 2};
  const Vec y = forward();
  Vec da(n), db(n);
  const double *ins[] = {r.data(), y.data()};
  double *outs[] = {da.data(), db.data()};
  elementwiseForward(bwd, ins, outs, n);
  expectGradientMatches("chain da", a, da, objective);
  expectGradientMatches("chain db", b, db, objective);
}

TEST(FusedDenseElementwise, MalformedChainsAreRefused) {
  auto chain = [](std::vector<Step> steps, std::vector<int32_t> results) {
    ElementwiseChain c;
    c.width = 4;
    c.inputs = 2;
    c.steps = std::move(steps);
    c.results = std::move(results);
    return c;
  };
  EXPECT_NO_THROW(checkElementwiseChain(chain({add({0, 1}), act(Activation::Relu, 2)}, {3})));
  // A step may only read inputs and earlier steps.
  EXPECT_THROW(checkElementwiseChain(chain({add({0, 2})}, {2})), std::invalid_argument);
  EXPECT_THROW(checkElementwiseChain(chain({add({0, -1})}, {2})), std::invalid_argument);
  // The bias must be an input.
  EXPECT_THROW(checkElementwiseChain(chain({act(Activation::Relu, 0), add({0, 2}, true)}, {3})),
               std::invalid_argument);
  EXPECT_THROW(checkElementwiseChain(chain({add({0}, true)}, {2})), std::invalid_argument);
  EXPECT_THROW(checkElementwiseChain(chain({actGrad(Activation::Gelu, true, 0, 1)}, {2})),
               std::invalid_argument);
  Step wrongArity = act(Activation::Relu, 0);
  wrongArity.args.push_back(1);
  EXPECT_THROW(checkElementwiseChain(chain({wrongArity}, {2})), std::invalid_argument);
  EXPECT_THROW(checkElementwiseChain(chain({add({0, 1})}, {3})), std::invalid_argument);
  ElementwiseChain zeroWidth = chain({}, {0});
  zeroWidth.width = 0;
  EXPECT_THROW(checkElementwiseChain(zeroWidth), std::invalid_argument);
  std::vector<float> v(6);
  const float *ins[] = {v.data(), v.data()};
  float *outs[] = {v.data()};
  EXPECT_THROW(elementwiseForward(chain({}, {0}), ins, outs, 6), std::invalid_argument)
      << "6 elements are not whole rows of 4";
}

// --- interaction_concat and its gradient ------------------------------------------

struct InteractionCase {
  int64_t B, D, F;
  std::vector<int64_t> widths; ///< copy widths
  bool self;
  /// Width of the interaction's output: one value per pair of features.
  int64_t pairs() const { return self ? F * (F + 1) / 2 : F * (F - 1) / 2; }
};
const std::vector<InteractionCase> kInteractionCases = {
    {1, 1, 2, {}, false},    {1, 4, 2, {3}, true},         {5, 3, 3, {3, 2}, false},
    {7, 17, 5, {17, 1, 9}, false}, {300, 16, 8, {16, 5}, true}, {2, 2, 4, {2, 2, 2, 2}, true}};

/// Runs `check(c, threads)` for every case at every thread count.
template <class Check> void forEachInteractionCase(Check check) {
  forThreadCounts([&](int threads) {
    for (const InteractionCase &c : kInteractionCases)
      check(c, threads);
  });
}

TYPED_TEST(FusedDense, InteractionConcatEqualsInteractionThenConcat) {
  using T = TypeParam;
  forEachInteractionCase([&](const InteractionCase &c, int threads) {
    const int64_t B = c.B, D = c.D, F = c.F, C = int64_t(c.widths.size()), P = c.pairs();
    std::vector<std::vector<T>> xs, copies;
    for (int64_t i = 0; i < F; ++i)
      xs.push_back(randomVector<T>(size_t(B * D), uint32_t(40 + i)));
    for (int64_t j = 0; j < C; ++j)
      copies.push_back(randomVector<T>(size_t(B * c.widths[j]), uint32_t(60 + j)));
    std::vector<T> inter(size_t(B * P));
    interactionForward(pointers(xs), inter.data(), B, D, c.self);
    for (int64_t p = 0; p <= C; ++p) {
      // The plain chain: interaction, then concat with its output at p.
      std::vector<const T *> parts;
      std::vector<int64_t> widths;
      for (int64_t j = 0; j <= C; ++j) {
        if (j == p) {
          parts.push_back(inter.data());
          widths.push_back(P);
        }
        if (j < C) {
          parts.push_back(copies[j].data());
          widths.push_back(c.widths[j]);
        }
      }
      int64_t W = 0;
      for (int64_t w : widths)
        W += w;
      std::vector<T> expected(size_t(B * W)), y(size_t(B * W), T(-7));
      concatForward(parts, widths, expected.data(), B);
      interactionConcatForward(pointers(copies), c.widths, p, pointers(xs), y.data(), B, D,
                               c.self);
      expectClose(y, expected,
                  "B=" + std::to_string(B) + " F=" + std::to_string(F) + " C=" +
                      std::to_string(C) + " position " + std::to_string(p) +
                      (c.self ? " self" : "") + " threads " + std::to_string(threads));
    }
  });
}

TYPED_TEST(FusedDense, InteractionConcatGradEqualsSliceInteractionGradAdd) {
  using T = TypeParam;
  forEachInteractionCase([&](const InteractionCase &c, int threads) {
    const int64_t B = c.B, D = c.D, F = c.F, C = int64_t(c.widths.size()), P = c.pairs();
    std::vector<std::vector<T>> xs;
    for (int64_t i = 0; i < F; ++i)
      xs.push_back(randomVector<T>(size_t(B * D), uint32_t(70 + i)));
    int64_t W = P;
    for (int64_t w : c.widths)
      W += w;
    const auto dy = randomVector<T>(size_t(B * W), 80);
    // Every copy of width D goes into an input (copy j into x_{j % F}) in
    // one variant, and no copy does in the other.
    for (bool into : {false, true})
      for (int64_t p = 0; p <= C; ++p) {
        const std::string what = "B=" + std::to_string(B) + " F=" + std::to_string(F) +
                                 " C=" + std::to_string(C) + " position " + std::to_string(p) +
                                 (into ? " copy_into" : "") + (c.self ? " self" : "") +
                                 " threads " + std::to_string(threads);
        std::vector<int32_t> copyInto(size_t(C), -1);
        std::vector<int64_t> offsets(static_cast<size_t>(C));
        int64_t at = 0, interAt = 0;
        for (int64_t j = 0; j <= C; ++j) {
          if (j == p) {
            interAt = at;
            at += P;
          }
          if (j < C) {
            offsets[j] = at;
            at += c.widths[j];
            if (into && c.widths[j] == D)
              copyInto[j] = int32_t(j % F);
          }
        }
        // The plain chain: slice every part of dy, interaction_grad, then
        // add each copy's slice into the input it copies.
        std::vector<T> dInter(size_t(B * P));
        sliceColumns(dy.data(), dInter.data(), B, W, interAt, P);
        std::vector<std::vector<T>> dxRef(size_t(F), std::vector<T>(size_t(B * D)));
        std::vector<T *> dxRefPtrs;
        for (auto &v : dxRef)
          dxRefPtrs.push_back(v.data());
        interactionGrad(dInter.data(), pointers(xs), dxRefPtrs, B, D, c.self);
        std::vector<std::vector<T>> dcopyRef(static_cast<size_t>(C));
        for (int64_t j = 0; j < C; ++j) {
          dcopyRef[j].resize(size_t(B * c.widths[j]));
          sliceColumns(dy.data(), dcopyRef[j].data(), B, W, offsets[j], c.widths[j]);
          if (copyInto[j] >= 0)
            addTwo(dxRef[copyInto[j]].data(), dcopyRef[j].data(), dxRef[copyInto[j]].data(),
                   B * D);
        }

        std::vector<std::vector<T>> dx(size_t(F), std::vector<T>(size_t(B * D), T(-7)));
        std::vector<std::vector<T>> dcopy(static_cast<size_t>(C));
        std::vector<T *> dxPtrs, dcopyPtrs;
        for (auto &v : dx)
          dxPtrs.push_back(v.data());
        for (int64_t j = 0; j < C; ++j) {
          // A copy added into an input gets no gradient buffer of its own.
          if (copyInto[j] < 0)
            dcopy[j].assign(size_t(B * c.widths[j]), T(-7));
          dcopyPtrs.push_back(copyInto[j] < 0 ? dcopy[j].data() : nullptr);
        }
        interactionConcatGrad(dy.data(), c.widths, p, copyInto, pointers(xs), dxPtrs,
                              dcopyPtrs, B, D, c.self);
        for (int64_t i = 0; i < F; ++i)
          expectClose(dx[i], dxRef[i], what + " dx_" + std::to_string(i));
        for (int64_t j = 0; j < C; ++j)
          if (copyInto[j] < 0)
            expectClose(dcopy[j], dcopyRef[j], what + " dcopy_" + std::to_string(j));
      }
  });
}

TEST(FusedDenseGradientCheck, InteractionConcat) {
  // DLRM's shape: the bottom MLP output x_0 is both copy 0 and an
  // interaction input, and a second, independent copy sits after the
  // interaction. The finite differences perturb x_0 in both roles at once.
  const int64_t B = 3, D = 4, F = 3;
  for (bool self : {false, true})
    for (int64_t p : {0, 1, 2}) {
      std::vector<Vec> xs = {randomVector(B * D, 90), randomVector(B * D, 91),
                             randomVector(B * D, 92)};
      Vec other = randomVector(B * 2, 93);
      const std::vector<int64_t> widths = {D, 2};
      const std::vector<int32_t> copyInto = {0, -1};
      const int64_t P = self ? F * (F + 1) / 2 : F * (F - 1) / 2, W = P + D + 2;
      const Vec r = randomVector(B * W, 94);
      auto objective = [&] {
        Vec y(B * W);
        interactionConcatForward<double>({xs[0].data(), other.data()}, widths, p,
                                         {xs[0].data(), xs[1].data(), xs[2].data()}, y.data(), B,
                                         D, self);
        return weightedSum(r, y);
      };
      std::vector<Vec> dx(F, Vec(B * D));
      Vec dother(B * 2);
      interactionConcatGrad<double>(r.data(), widths, p, copyInto,
                                    {xs[0].data(), xs[1].data(), xs[2].data()},
                                    {dx[0].data(), dx[1].data(), dx[2].data()},
                                    {nullptr, dother.data()}, B, D, self);
      const std::string what = std::string(self ? "self " : "") + "position " + std::to_string(p);
      for (int64_t i = 0; i < F; ++i)
        expectGradientMatches(what + " dx_" + std::to_string(i), xs[i], dx[i], objective);
      expectGradientMatches(what + " dcopy", other, dother, objective);
    }
}

TEST(FusedDenseInteraction, BadArgumentsAreRefused) {
  std::vector<float> x(8), y(64);
  const std::vector<const float *> xs = {x.data(), x.data()};
  // Position past the copies.
  EXPECT_THROW(interactionConcatForward<float>({}, {}, 1, xs, y.data(), 2, 4, false),
               std::invalid_argument);
  // A copy added into an input must have the input's width.
  std::vector<float *> dxs = {y.data(), y.data() + 8};
  EXPECT_THROW(interactionConcatGrad<float>(y.data(), {3}, 0, {0}, xs, dxs, {nullptr}, 2, 4,
                                            false),
               std::invalid_argument);
  EXPECT_THROW(interactionConcatGrad<float>(y.data(), {4}, 0, {2}, xs, dxs, {nullptr}, 2, 4,
                                            false),
               std::invalid_argument);
}

} // namespace
} // namespace embc::runtime::cpu
