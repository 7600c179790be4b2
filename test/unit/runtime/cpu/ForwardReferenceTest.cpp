//===- ForwardReferenceTest.cpp - float kernels against naive loops -------===//
//
// The training path runs in float, through BLAS and vectorised loops. Here
// each forward kernel (and the GEMM-based backward ones) is compared with a
// plain triple loop or formula in double; shapes are odd-sized so BLAS edge
// handling and remainder loops are exercised. Losses are also checked at
// extreme logits, where a naive formula would overflow.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/cpu/SequenceKernels.h"
#include "embc/runtime/plan/ActivationMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::cpu {
namespace {

using testing::randomVector;
using FVec = std::vector<float>;

void expectAllNear(const FVec &actual, const std::vector<double> &expected, double tol,
                   const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tol * std::max(1.0, std::abs(expected[i])))
        << what << "[" << i << "]";
}

// --- Dense ----------------------------------------------------------------------

TEST(CpuForwardReference, DenseGemmsMatchNaiveLoops) {
  const int64_t B = 17, K = 33, N = 9;
  const FVec x = randomVector<float>(B * K, 1), w = randomVector<float>(K * N, 2),
             b = randomVector<float>(N, 3), dy = randomVector<float>(B * N, 4);
  std::vector<double> y(B * N), yNoBias(B * N), dx(B * K, 0), dw(K * N, 0);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(x[r * K + k]) * w[k * N + n];
      yNoBias[r * N + n] = s;
      y[r * N + n] = s + b[n];
    }
  for (int64_t r = 0; r < B; ++r)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) {
        dx[r * K + k] += double(dy[r * N + n]) * w[k * N + n];
        dw[k * N + n] += double(x[r * K + k]) * dy[r * N + n];
      }

  FVec out(B * N), outNoBias(B * N), dxOut(B * K), dwOut(K * N);
  denseForward(x.data(), w.data(), b.data(), out.data(), B, K, N);
  denseForward<float>(x.data(), w.data(), nullptr, outNoBias.data(), B, K, N);
  denseGradInput(dy.data(), w.data(), dxOut.data(), B, K, N);
  denseGradWeight(x.data(), dy.data(), dwOut.data(), B, K, N);
  expectAllNear(out, y, 1e-5, "dense y");
  expectAllNear(outNoBias, yNoBias, 1e-5, "dense y without bias");
  expectAllNear(dxOut, dx, 1e-5, "dense dx");
  expectAllNear(dwOut, dw, 1e-5, "dense dw");
}

TEST(CpuForwardReference, DenseWithEmptyInnerDimensionIsTheBias) {
  const FVec b = {1.5f, -2.0f};
  FVec y(3 * 2, 42.0f);
  denseForward<float>(nullptr, nullptr, b.data(), y.data(), 3, 0, 2);
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(y[r * 2 + 0], 1.5f);
    EXPECT_EQ(y[r * 2 + 1], -2.0f);
  }
}

TEST(CpuForwardReference, BiasGradSumsRows) {
  const int64_t B = 7, N = 130; // more than one column block
  const FVec dy = randomVector<float>(B * N, 5);
  std::vector<double> expected(N, 0.0);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t n = 0; n < N; ++n)
      expected[n] += dy[r * N + n];
  FVec db(N);
  biasGrad(dy.data(), db.data(), B, N);
  expectAllNear(db, expected, 1e-5, "bias grad");
}

TEST(CpuForwardReference, Activations) {
  const int64_t n = 101;
  const FVec x = randomVector<float>(n, 6, -4, 4);
  const struct {
    Activation f;
    double (*ref)(double);
    const char *name;
  } cases[] = {
      {Activation::None, [](double v) { return v; }, "none"},
      {Activation::Relu, [](double v) { return v > 0 ? v : 0.0; }, "relu"},
      {Activation::Sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }, "sigmoid"},
      {Activation::Tanh, [](double v) { return std::tanh(v); }, "tanh"},
      {Activation::Gelu,
       [](double v) {
         return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
       },
       "gelu"},
  };
  for (const auto &c : cases) {
    std::vector<double> expected(n);
    for (int64_t i = 0; i < n; ++i)
      expected[i] = c.ref(x[i]);
    FVec y(n);
    activationForward(c.f, x.data(), y.data(), n);
    expectAllNear(y, expected, 1e-6, c.name);
    FVec inPlace = x;
    activationForward(c.f, inPlace.data(), inPlace.data(), n);
    expectAllNear(inPlace, expected, 1e-6, std::string(c.name) + " in place");
  }
}

TEST(CpuForwardReference, ConcatSliceAndAdd) {
  const int64_t B = 3;
  const FVec a = randomVector<float>(B * 2, 7), b = randomVector<float>(B * 3, 8);
  FVec y(B * 5);
  concatForward<float>({a.data(), b.data()}, {2, 3}, y.data(), B);
  for (int64_t r = 0; r < B; ++r) {
    EXPECT_EQ(y[r * 5 + 0], a[r * 2 + 0]);
    EXPECT_EQ(y[r * 5 + 1], a[r * 2 + 1]);
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(y[r * 5 + 2 + j], b[r * 3 + j]);
  }
  FVec back(B * 3);
  sliceColumns(y.data(), back.data(), B, 5, 2, 3);
  EXPECT_EQ(back, b);
  EXPECT_THROW(sliceColumns(y.data(), back.data(), B, 5, 3, 3), std::invalid_argument);

  const FVec c = randomVector<float>(B * 3, 9), bias = randomVector<float>(3, 10);
  FVec sum(B * 3), two(B * 3);
  addForward<float>({b.data(), c.data()}, bias.data(), sum.data(), B, 3);
  addTwo(b.data(), c.data(), two.data(), B * 3);
  for (int64_t i = 0; i < B * 3; ++i) {
    EXPECT_FLOAT_EQ(sum[i], b[i] + c[i] + bias[i % 3]);
    EXPECT_FLOAT_EQ(two[i], b[i] + c[i]);
  }
}

// --- Interactions ---------------------------------------------------------------

void checkInteractionForward(bool self) {
  const int64_t B = 5, D = 8, F = 4;
  std::vector<FVec> xs;
  std::vector<const float *> ptrs;
  for (int64_t i = 0; i < F; ++i)
    xs.push_back(randomVector<float>(B * D, 20 + uint32_t(i)));
  for (auto &x : xs)
    ptrs.push_back(x.data());
  std::vector<double> expected;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < F; ++i)
      for (int64_t j = self ? i : i + 1; j < F; ++j) {
        double s = 0;
        for (int64_t d = 0; d < D; ++d)
          s += double(xs[i][b * D + d]) * xs[j][b * D + d];
        expected.push_back(s);
      }
  FVec y(expected.size());
  interactionForward(ptrs, y.data(), B, D, self);
  expectAllNear(y, expected, 1e-5, self ? "interaction self" : "interaction");
}

TEST(CpuForwardReference, InteractionPairOrder) {
  checkInteractionForward(false);
  checkInteractionForward(true);
}

TEST(CpuForwardReference, Cross) {
  const int64_t B = 6, D = 7;
  const FVec x0 = randomVector<float>(B * D, 30), xl = randomVector<float>(B * D, 31),
             w = randomVector<float>(D * D, 32), b = randomVector<float>(D, 33);
  std::vector<double> expected(B * D);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t j = 0; j < D; ++j) {
      double u = b[j];
      for (int64_t k = 0; k < D; ++k)
        u += double(xl[r * D + k]) * w[k * D + j];
      expected[r * D + j] = x0[r * D + j] * u + xl[r * D + j];
    }
  FVec y(B * D);
  crossForward(x0.data(), xl.data(), w.data(), b.data(), y.data(), B, D);
  expectAllNear(y, expected, 1e-5, "cross");
}

TEST(CpuForwardReference, Dot) {
  const int64_t B = 4, D = 6;
  for (int64_t K : {0, 5}) {
    const int64_t outs = K == 0 ? 1 : K;
    const FVec lhs = randomVector<float>(B * D, 40), rhs = randomVector<float>(B * outs * D, 41);
    std::vector<double> expected(B * outs);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < outs; ++k) {
        double s = 0;
        for (int64_t d = 0; d < D; ++d)
          s += double(lhs[b * D + d]) * rhs[(b * outs + k) * D + d];
        expected[b * outs + k] = s;
      }
    FVec y(B * outs);
    dotForward(lhs.data(), rhs.data(), y.data(), B, K, D);
    expectAllNear(y, expected, 1e-5, "dot K=" + std::to_string(K));
  }
}

// --- Losses ---------------------------------------------------------------------

TEST(CpuForwardReference, LossValues) {
  const FVec logits = {0.5f, -1.0f, 2.0f}, labels = {1.0f, 0.0f, 1.0f};
  double bce = 0, mse = 0;
  for (int i = 0; i < 3; ++i) {
    const double s = 1 / (1 + std::exp(-double(logits[i])));
    bce += -(labels[i] * std::log(s) + (1 - labels[i]) * std::log(1 - s));
    mse += (logits[i] - labels[i]) * (logits[i] - labels[i]);
  }
  EXPECT_NEAR(lossForward(LossKind::BceWithLogits, logits.data(), labels.data(), 3, 1), bce / 3,
              1e-6);
  EXPECT_NEAR(lossForward(LossKind::Mse, logits.data(), labels.data(), 3, 1), mse / 3, 1e-6);

  const FVec scores = {1.0f, 2.0f, 0.5f, 0.0f, 0.0f, 3.0f}; // 2 rows, 3 classes
  const FVec classes = {1.0f, 2.0f};
  const double row0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(0.5)) - 2.0;
  const double row1 = std::log(2 + std::exp(3.0)) - 3.0;
  EXPECT_NEAR(lossForward(LossKind::SoftmaxCe, scores.data(), classes.data(), 2, 3),
              (row0 + row1) / 2, 1e-6);

  const FVec pos = {0.3f}, neg = {-0.2f, 1.0f};
  auto logSigmoid = [](double v) { return -std::log1p(std::exp(-v)); };
  EXPECT_NEAR(lossForward(LossKind::NegSampling, pos.data(), neg.data(), 1, 2),
              -logSigmoid(0.3) - logSigmoid(0.2) - logSigmoid(-1.0), 1e-6);
}

TEST(CpuForwardReference, LossesStayFiniteAtExtremeLogits) {
  const FVec logits = {100.0f, -100.0f}, labels = {0.0f, 1.0f};
  EXPECT_NEAR(lossForward(LossKind::BceWithLogits, logits.data(), labels.data(), 2, 1), 100.0,
              1e-4);
  FVec d(2);
  lossGrad<float>(LossKind::BceWithLogits, logits.data(), labels.data(), d.data(), nullptr, 2, 1);
  EXPECT_NEAR(d[0], 0.5, 1e-6);
  EXPECT_NEAR(d[1], -0.5, 1e-6);

  const FVec scores = {1000.0f, 0.0f}, cls = {1.0f};
  EXPECT_NEAR(lossForward(LossKind::SoftmaxCe, scores.data(), cls.data(), 1, 2), 1000.0, 1e-3);
  FVec ds(2);
  lossGrad<float>(LossKind::SoftmaxCe, scores.data(), cls.data(), ds.data(), nullptr, 1, 2);
  EXPECT_NEAR(ds[0], 1.0, 1e-6);
  EXPECT_NEAR(ds[1], -1.0, 1e-6);

  const FVec pos = {-200.0f}, neg = {200.0f};
  EXPECT_NEAR(lossForward(LossKind::NegSampling, pos.data(), neg.data(), 1, 1), 400.0, 1e-3);
}

TEST(CpuForwardReference, SoftmaxRejectsBadClassIndex) {
  const FVec scores = {1.0f, 2.0f}, badClass = {2.0f}, fractional = {0.5f};
  FVec d(2);
  EXPECT_THROW(lossForward(LossKind::SoftmaxCe, scores.data(), badClass.data(), 1, 2),
               std::invalid_argument);
  EXPECT_THROW(lossGrad<float>(LossKind::SoftmaxCe, scores.data(), fractional.data(), d.data(),
                               nullptr, 1, 2),
               std::invalid_argument);
}

// Next-token targets of sequences of lengths 3, 0, 1 and 2 (L = 3), and the
// sequence loss: each sequence's mean over its targets, then the batch mean
// (the sequence with no target counts 0), against the same cross-entropies
// by hand.
TEST(CpuForwardReference, NextTokenTargetsAndSequenceLoss) {
  const int64_t B = 4, L = 3, C = 3;
  const std::vector<int64_t> ids = {2, 1, 0, 1, 2, 0}, offsets = {0, 3, 3, 4, 6};
  FVec targets(B * L);
  nextTokenTargets(ids.data(), offsets.data(), B, L, targets.data());
  EXPECT_EQ(targets, (FVec{1, 0, -1, -1, -1, -1, -1, -1, -1, 0, -1, -1}));

  FVec logits(B * L * C);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = float(int(i * 7 % 5) - 2) * 0.5f;
  auto ce = [&](int64_t row, int64_t c) {
    double sum = 0;
    for (int64_t j = 0; j < C; ++j)
      sum += std::exp(double(logits[size_t(row * C + j)]));
    return std::log(sum) - double(logits[size_t(row * C + c)]);
  };
  const double want = ((ce(0, 1) + ce(1, 0)) / 2 + ce(9, 0)) / 4;
  EXPECT_NEAR(sequenceLossForward(logits.data(), targets.data(), B, L, C), want, 1e-6);
  int64_t tokens = 0;
  EXPECT_NEAR(sequenceTokenLossSum(logits.data(), targets.data(), B, L, C, tokens),
              ce(0, 1) + ce(1, 0) + ce(9, 0), 1e-5);
  EXPECT_EQ(tokens, 3);

  FVec bad = targets, d(logits.size());
  bad[4] = 3.0f; // a class past C
  EXPECT_THROW(sequenceLossForward(logits.data(), bad.data(), B, L, C), std::invalid_argument);
  bad[4] = -2.0f;
  EXPECT_THROW(sequenceLossGrad(logits.data(), bad.data(), d.data(), B, L, C),
               std::invalid_argument);
}

// --- Lookups --------------------------------------------------------------------

TEST(CpuForwardReference, LookupPoolingModesAndEmptyBags) {
  const int64_t rows = 10, D = 5, B = 5;
  const FVec table = randomVector<float>(rows * D, 50);
  const std::vector<int64_t> ids = {3, 7, 7, 1, 9, 0, 2, 5};
  const std::vector<int64_t> offsets = {0, 0, 3, 4, 4, 8}; // bags 0 and 3 empty
  const FVec weights = randomVector<float>(ids.size(), 51, -1.5, 1.5);
  for (Pooling pooling : {Pooling::Sum, Pooling::Mean, Pooling::Max}) {
    for (bool weighted : {false, true}) {
      std::vector<double> expected(B * D, 0.0);
      for (int64_t b = 0; b < B; ++b) {
        const int64_t n = offsets[b + 1] - offsets[b];
        for (int64_t j = 0; j < D; ++j) {
          double acc = pooling == Pooling::Max ? -INFINITY : 0.0;
          for (int64_t i = offsets[b]; i < offsets[b + 1]; ++i) {
            const double v = double(weighted ? weights[i] : 1.0f) * table[ids[i] * D + j];
            acc = pooling == Pooling::Max ? std::max(acc, v) : acc + v;
          }
          if (n == 0)
            acc = 0;
          else if (pooling == Pooling::Mean)
            acc /= double(n);
          expected[b * D + j] = acc;
        }
      }
      FVec y(B * D, 123.0f); // garbage: the kernel overwrites, empty bags included
      lookupForward(table.data(), D, ids.data(), offsets.data(),
                    weighted ? weights.data() : nullptr, B, pooling, y.data());
      expectAllNear(y, expected, 1e-6,
                    "lookup pooling " + std::to_string(int(pooling)) +
                        (weighted ? " weighted" : ""));
    }
  }
}

TEST(CpuForwardReference, LookupRejectsDecreasingOffsets) {
  const FVec table(4, 1.0f);
  const std::vector<int64_t> ids = {0, 1}, offsets = {0, 2, 1};
  FVec y(4);
  EXPECT_THROW(lookupForward(table.data(), 2, ids.data(), offsets.data(), (const float *)nullptr,
                             2, Pooling::Sum, y.data()),
               std::invalid_argument);
}

TEST(CpuForwardReference, Gather) {
  const int64_t D = 4;
  const FVec table = randomVector<float>(6 * D, 60);
  const std::vector<int64_t> ids = {5, 0, 5};
  FVec y(ids.size() * D);
  gatherForward(table.data(), D, ids.data(), int64_t(ids.size()), y.data());
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t j = 0; j < D; ++j)
      EXPECT_EQ(y[i * D + j], table[ids[i] * D + j]);
}

} // namespace
} // namespace embc::runtime::cpu

// --- The host exp ------------------------------------------------------------------

namespace embc::runtime::cpu {
namespace {

/// Distance in units in the last place between two finite positive floats.
int64_t ulpDistance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  return std::abs(int64_t(ia) - int64_t(ib));
}

// vectorExp (ActivationMath.h) replaces expf in the CPU's activations: within
// 2 ulp of the correctly rounded e^x over its whole range, clamped outside.
TEST(CpuForwardReference, VectorExpIsWithinTwoUlpOfExp) {
  int64_t worst = 0;
  float at = 0;
  for (float x = -87.3f; x <= 88.0f; x += 0.000731f) {
    const float expected = float(std::exp(double(x)));
    const int64_t d = ulpDistance(vectorExp(x), expected);
    if (d > worst)
      worst = d, at = x;
  }
  EXPECT_LE(worst, 2) << "at x = " << at;
  EXPECT_EQ(vectorExp(0.0f), 1.0f);
  EXPECT_EQ(vectorExp(-1000.0f), vectorExp(-87.33654f)); // clamped, not 0 or denormal
  EXPECT_EQ(vectorExp(-INFINITY), vectorExp(-87.33654f));
  EXPECT_EQ(vectorExp(1000.0f), vectorExp(88.0f));
  EXPECT_GT(vectorExp(-1000.0f), 0.0f);
  EXPECT_TRUE(std::isfinite(vectorExp(1000.0f)));
  EXPECT_TRUE(std::isnan(vectorExp(std::nanf(""))));
}

} // namespace
} // namespace embc::runtime::cpu
