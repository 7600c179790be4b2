//===- GradientCheckTest.cpp - finite-difference checks of every backward ===//
//
// Each differentiable kernel's gradient, computed in double by the kernel's
// grad function, must match central finite differences of the forward
// (GradientCheck.h). Shapes are small so the whole file runs in milliseconds;
// they still cover the cases that differ in code: bias / no bias, self and
// non-self interaction, dot with K == 0 and K > 0, every pooling mode with and
// without per-id weights, empty bags and repeated ids, sequences of every
// length from 0 to L.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/AttentionKernels.h"
#include "embc/runtime/cpu/DropoutKernels.h"
#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/cpu/NormKernels.h"
#include "embc/runtime/cpu/SequenceKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace embc::runtime::cpu {
namespace {

using testing::expectGradientMatches;
using testing::randomAwayFromZero;
using testing::randomVector;
using testing::weightedSum;
using Vec = std::vector<double>;

// --- Dense layers -------------------------------------------------------------

TEST(CpuGradientCheck, DenseInputWeightAndBias) {
  const int64_t B = 3, K = 4, N = 5;
  Vec x = randomVector(B * K, 1), w = randomVector(K * N, 2), b = randomVector(N, 3);
  const Vec r = randomVector(B * N, 4);
  auto objective = [&] {
    Vec y(B * N);
    denseForward(x.data(), w.data(), b.data(), y.data(), B, K, N);
    return weightedSum(r, y);
  };
  Vec dx(B * K), dw(K * N), db(N);
  denseGradInput(r.data(), w.data(), dx.data(), B, K, N);
  denseGradWeight(x.data(), r.data(), dw.data(), B, K, N);
  biasGrad(r.data(), db.data(), B, N);
  expectGradientMatches("dense dx", x, dx, objective);
  expectGradientMatches("dense dw", w, dw, objective);
  expectGradientMatches("dense db", b, db, objective);
}

TEST(CpuGradientCheck, DenseWithoutBias) {
  const int64_t B = 2, K = 3, N = 2;
  Vec x = randomVector(B * K, 5), w = randomVector(K * N, 6);
  const Vec r = randomVector(B * N, 7);
  auto objective = [&] {
    Vec y(B * N);
    denseForward<double>(x.data(), w.data(), nullptr, y.data(), B, K, N);
    return weightedSum(r, y);
  };
  Vec dx(B * K), dw(K * N);
  denseGradInput(r.data(), w.data(), dx.data(), B, K, N);
  denseGradWeight(x.data(), r.data(), dw.data(), B, K, N);
  expectGradientMatches("dense (no bias) dx", x, dx, objective);
  expectGradientMatches("dense (no bias) dw", w, dw, objective);
}

TEST(CpuGradientCheck, EveryActivation) {
  const struct {
    Activation f;
    const char *name;
  } cases[] = {{Activation::None, "none"},
               {Activation::Relu, "relu"},
               {Activation::Sigmoid, "sigmoid"},
               {Activation::Tanh, "tanh"},
               {Activation::Gelu, "gelu"}};
  const int64_t n = 24;
  for (const auto &c : cases) {
    // Away from 0 so relu's kink is never inside [x - h, x + h].
    Vec x = randomAwayFromZero(n, 11, 0.1, 2.5);
    const Vec r = randomVector(n, 12);
    auto objective = [&] {
      Vec y(n);
      activationForward(c.f, x.data(), y.data(), n);
      return weightedSum(r, y);
    };
    Vec dx(n);
    activationGrad(c.f, r.data(), x.data(), dx.data(), n);
    expectGradientMatches(std::string("activation ") + c.name, x, dx, objective);
  }
}

// --- Layer normalisation (NormKernels.h) -------------------------------------

/// rows x D inputs with gamma, beta; eps large enough to matter in the sums.
void checkLayerNorm(int64_t rows, int64_t D, double eps, uint32_t seed) {
  Vec x = randomVector(rows * D, seed, -2.0, 2.0), gamma = randomVector(D, seed + 1, 0.5, 1.5),
      beta = randomVector(D, seed + 2);
  const Vec r = randomVector(rows * D, seed + 3);
  auto objective = [&] {
    Vec y(rows * D);
    layerNormForward(x.data(), gamma.data(), beta.data(), y.data(), rows, D, eps);
    return weightedSum(r, y);
  };
  Vec dx(rows * D), dgamma(D), dbeta(D);
  layerNormBackward(r.data(), x.data(), gamma.data(), dx.data(), dgamma.data(), dbeta.data(), rows,
                    D, eps);
  const std::string what = "layer_norm " + std::to_string(rows) + "x" + std::to_string(D);
  expectGradientMatches(what + " dx", x, dx, objective);
  expectGradientMatches(what + " dgamma", gamma, dgamma, objective);
  expectGradientMatches(what + " dbeta", beta, dbeta, objective);
}

TEST(CpuGradientCheck, LayerNorm) { checkLayerNorm(3, 7, 1e-5, 90); }
TEST(CpuGradientCheck, LayerNormWideRowsAndLargeEps) { checkLayerNorm(2, 130, 0.5, 95); }

TEST(CpuKernels, LayerNormRowsHaveMeanZeroAndVarianceOne) {
  const int64_t rows = 4, D = 33;
  const Vec x = randomVector(rows * D, 97, -3.0, 5.0), ones(D, 1.0), zeros(D, 0.0);
  Vec y(rows * D);
  layerNormForward(x.data(), ones.data(), zeros.data(), y.data(), rows, D, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < D; ++j)
      mean += y[r * D + j] / double(D);
    for (int64_t j = 0; j < D; ++j)
      var += (y[r * D + j] - mean) * (y[r * D + j] - mean) / double(D);
    EXPECT_NEAR(mean, 0.0, 1e-12) << "row " << r;
    EXPECT_NEAR(var, 1.0, 1e-12) << "row " << r;
  }
}

// --- Dropout (DropoutKernels.h) ------------------------------------------------

// dropout_grad is the dropout kernel on dy with the forward's key and first
// element: the mask the forward drew, applied with its scale.
TEST(CpuGradientCheck, Dropout) {
  const int64_t n = 97;
  const double rate = 0.3;
  const uint64_t key = dropoutKey(5, 2, 11), first = 1000;
  Vec x = randomVector(n, 101);
  const Vec r = randomVector(n, 102);
  auto objective = [&] {
    Vec y(n);
    dropoutApply(x.data(), y.data(), n, key, first, rate);
    return weightedSum(r, y);
  };
  Vec dx(n);
  dropoutApply(r.data(), dx.data(), n, key, first, rate);
  expectGradientMatches("dropout", x, dx, objective);
}

// ~rate of the elements are zeroed, the rest scaled by 1 / (1 - rate), so
// the mean is kept; the mask depends on (key, global index) only.
TEST(CpuKernels, DropoutDropsTheRateAndKeepsTheMean) {
  const int64_t n = 1 << 20;
  const double rate = 0.1;
  const std::vector<float> x(n, 1.0f);
  std::vector<float> y(n);
  dropoutApply(x.data(), y.data(), n, dropoutKey(1, 0, 1), 0, rate);
  int64_t zeros = 0;
  double sum = 0;
  for (float v : y) {
    zeros += v == 0.0f;
    sum += v;
    if (v != 0.0f)
      ASSERT_EQ(v, float(1.0 / 0.9));
  }
  // Binomial(n, 0.1): sigma = sqrt(n * 0.09) ~ 307; 5 sigma.
  EXPECT_NEAR(double(zeros), 0.1 * double(n), 1536.0);
  EXPECT_NEAR(sum / double(n), 1.0, 5e-3);
}

TEST(CpuKernels, DropoutMaskIsAFunctionOfKeyAndGlobalIndex) {
  const int64_t n = 1000;
  const Vec x = randomVector(n, 103);
  const uint64_t key = dropoutKey(9, 4, 3);
  Vec whole(n), halves(n), again(n), otherStep(n), otherStream(n);
  dropoutApply(x.data(), whole.data(), n, key, 0, 0.5);
  // Two launches over the halves (two micro-batches, two ranks) with their
  // global first element draw the whole launch's mask.
  dropoutApply(x.data(), halves.data(), 600, key, 0, 0.5);
  dropoutApply(x.data() + 600, halves.data() + 600, 400, key, 600, 0.5);
  dropoutApply(x.data(), again.data(), n, key, 0, 0.5);
  dropoutApply(x.data(), otherStep.data(), n, dropoutKey(9, 4, 4), 0, 0.5);
  dropoutApply(x.data(), otherStream.data(), n, dropoutKey(9, 5, 3), 0, 0.5);
  EXPECT_EQ(whole, halves);
  EXPECT_EQ(whole, again);
  EXPECT_NE(whole, otherStep);
  EXPECT_NE(whole, otherStream);
  // Rate 0 keeps everything unscaled.
  Vec none(n);
  dropoutApply(x.data(), none.data(), n, key, 0, 0.0);
  EXPECT_EQ(none, x);
}

// The gradient of concat w.r.t. input i is the slice of dy at its columns.
TEST(CpuGradientCheck, ConcatThroughSlice) {
  const int64_t B = 3;
  const std::vector<int64_t> widths = {2, 3, 1};
  const int64_t N = 6;
  std::vector<Vec> xs = {randomVector(B * 2, 21), randomVector(B * 3, 22),
                         randomVector(B * 1, 23)};
  const Vec r = randomVector(B * N, 24);
  auto objective = [&] {
    Vec y(B * N);
    concatForward<double>({xs[0].data(), xs[1].data(), xs[2].data()}, widths, y.data(), B);
    return weightedSum(r, y);
  };
  int64_t offset = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    Vec dxi(B * widths[i]);
    sliceColumns(r.data(), dxi.data(), B, N, offset, widths[i]);
    expectGradientMatches("concat input " + std::to_string(i), xs[i], dxi, objective);
    offset += widths[i];
  }
}

// Every addend and the bias receive dy (the bias summed over rows).
TEST(CpuGradientCheck, AddWithBias) {
  const int64_t B = 3, N = 4;
  std::vector<Vec> xs = {randomVector(B * N, 31), randomVector(B * N, 32),
                         randomVector(B * N, 33)};
  Vec bias = randomVector(N, 34);
  const Vec r = randomVector(B * N, 35);
  auto objective = [&] {
    Vec y(B * N);
    addForward<double>({xs[0].data(), xs[1].data(), xs[2].data()}, bias.data(), y.data(), B, N);
    return weightedSum(r, y);
  };
  for (size_t i = 0; i < xs.size(); ++i)
    expectGradientMatches("add input " + std::to_string(i), xs[i], r, objective);
  Vec dbias(N);
  biasGrad(r.data(), dbias.data(), B, N);
  expectGradientMatches("add bias", bias, dbias, objective);
}

// --- Interactions -------------------------------------------------------------

void checkInteraction(int64_t F, bool self, uint32_t seed) {
  const int64_t B = 2, D = 5;
  const int64_t P = self ? F * (F + 1) / 2 : F * (F - 1) / 2;
  std::vector<Vec> xs;
  for (int64_t i = 0; i < F; ++i)
    xs.push_back(randomVector(B * D, seed + uint32_t(i)));
  const Vec r = randomVector(B * P, seed + 100);
  auto pointers = [&] {
    std::vector<const double *> ps;
    for (auto &x : xs)
      ps.push_back(x.data());
    return ps;
  };
  auto objective = [&] {
    Vec y(B * P);
    interactionForward(pointers(), y.data(), B, D, self);
    return weightedSum(r, y);
  };
  std::vector<Vec> dxs(F, Vec(B * D));
  std::vector<double *> dptrs;
  for (auto &d : dxs)
    dptrs.push_back(d.data());
  interactionGrad(r.data(), pointers(), dptrs, B, D, self);
  for (int64_t i = 0; i < F; ++i)
    expectGradientMatches("interaction F=" + std::to_string(F) + (self ? " self" : "") +
                              " input " + std::to_string(i),
                          xs[i], dxs[i], objective);
}

TEST(CpuGradientCheck, InteractionSelf) { checkInteraction(3, true, 40); }
TEST(CpuGradientCheck, InteractionNonSelf) { checkInteraction(4, false, 50); }

TEST(CpuGradientCheck, CrossAllFourGradients) {
  const int64_t B = 3, D = 4;
  Vec x0 = randomVector(B * D, 61), xl = randomVector(B * D, 62);
  Vec w = randomVector(D * D, 63), b = randomVector(D, 64);
  const Vec r = randomVector(B * D, 65);
  auto objective = [&] {
    Vec y(B * D);
    crossForward(x0.data(), xl.data(), w.data(), b.data(), y.data(), B, D);
    return weightedSum(r, y);
  };
  Vec dx0(B * D), dxl(B * D), dw(D * D), db(D);
  crossGrad(r.data(), x0.data(), xl.data(), w.data(), b.data(), dx0.data(), dxl.data(), dw.data(),
            db.data(), B, D);
  expectGradientMatches("cross dx0", x0, dx0, objective);
  expectGradientMatches("cross dxl", xl, dxl, objective);
  expectGradientMatches("cross dw", w, dw, objective);
  expectGradientMatches("cross db", b, db, objective);
}

// The product xl w kept by the forward (emb.cross's `linear`) gives the
// same gradients bit for bit, and the same forward.
TEST(CpuGradientCheck, CrossWithTheForwardsProductIsTheSame) {
  const int64_t B = 5, D = 7;
  Vec x0 = randomVector(B * D, 71), xl = randomVector(B * D, 72);
  Vec w = randomVector(D * D, 73), b = randomVector(D, 74);
  const Vec r = randomVector(B * D, 75);
  Vec y(B * D), yKept(B * D), linear(B * D);
  crossForward(x0.data(), xl.data(), w.data(), b.data(), y.data(), B, D);
  crossForward(x0.data(), xl.data(), w.data(), b.data(), yKept.data(), B, D,
               cpu::ComputeType::F32, linear.data());
  EXPECT_EQ(y, yKept);
  Vec dx0(B * D), dxl(B * D), dw(D * D), db(D);
  Vec kx0(B * D), kxl(B * D), kw(D * D), kb(D);
  crossGrad(r.data(), x0.data(), xl.data(), w.data(), b.data(), dx0.data(), dxl.data(), dw.data(),
            db.data(), B, D);
  crossGrad(r.data(), x0.data(), xl.data(), w.data(), b.data(), kx0.data(), kxl.data(), kw.data(),
            kb.data(), B, D, cpu::ComputeType::F32, linear.data());
  EXPECT_EQ(dx0, kx0);
  EXPECT_EQ(dxl, kxl);
  EXPECT_EQ(dw, kw);
  EXPECT_EQ(db, kb);
  auto objective = [&] {
    Vec out(B * D), keep(B * D);
    crossForward(x0.data(), xl.data(), w.data(), b.data(), out.data(), B, D,
                 cpu::ComputeType::F32, keep.data());
    return weightedSum(r, out);
  };
  expectGradientMatches("cross dx0 (kept product)", x0, kx0, objective);
  expectGradientMatches("cross dw (kept product)", w, kw, objective);
}

void checkDot(int64_t K, uint32_t seed) {
  const int64_t B = 3, D = 4;
  const int64_t outs = K == 0 ? 1 : K;
  Vec lhs = randomVector(B * D, seed), rhs = randomVector(B * outs * D, seed + 1);
  const Vec r = randomVector(B * outs, seed + 2);
  auto objective = [&] {
    Vec y(B * outs);
    dotForward(lhs.data(), rhs.data(), y.data(), B, K, D);
    return weightedSum(r, y);
  };
  Vec dlhs(lhs.size()), drhs(rhs.size());
  dotGrad(r.data(), lhs.data(), rhs.data(), dlhs.data(), drhs.data(), B, K, D);
  expectGradientMatches("dot K=" + std::to_string(K) + " lhs", lhs, dlhs, objective);
  expectGradientMatches("dot K=" + std::to_string(K) + " rhs", rhs, drhs, objective);
}

TEST(CpuGradientCheck, DotPairwise) { checkDot(0, 70); }
TEST(CpuGradientCheck, DotAgainstKCandidates) { checkDot(3, 80); }

// --- Losses ---------------------------------------------------------------------

TEST(CpuGradientCheck, BceWithLogits) {
  const int64_t B = 5;
  Vec input = randomVector(B, 91, -3, 3);
  const Vec target = {0, 1, 1, 0, 0.3}; // soft labels are allowed
  auto objective = [&] { return lossForward(LossKind::BceWithLogits, input.data(), target.data(), B, 1); };
  Vec d(B);
  lossGrad<double>(LossKind::BceWithLogits, input.data(), target.data(), d.data(), nullptr, B, 1);
  expectGradientMatches("bce_with_logits", input, d, objective);
}

TEST(CpuGradientCheck, Mse) {
  const int64_t B = 4;
  Vec input = randomVector(B, 92, -2, 2);
  const Vec target = randomVector(B, 93, -2, 2);
  auto objective = [&] { return lossForward(LossKind::Mse, input.data(), target.data(), B, 1); };
  Vec d(B);
  lossGrad<double>(LossKind::Mse, input.data(), target.data(), d.data(), nullptr, B, 1);
  expectGradientMatches("mse", input, d, objective);
}

TEST(CpuGradientCheck, SoftmaxCrossEntropy) {
  const int64_t B = 3, C = 4;
  Vec input = randomVector(B * C, 94, -3, 3);
  const Vec target = {2, 0, 3};
  auto objective = [&] { return lossForward(LossKind::SoftmaxCe, input.data(), target.data(), B, C); };
  Vec d(B * C);
  lossGrad<double>(LossKind::SoftmaxCe, input.data(), target.data(), d.data(), nullptr, B, C);
  expectGradientMatches("softmax_ce", input, d, objective);
}

// Three sequences of 4 positions over 5 classes: 3 targets, 1 target and
// none (a sequence of one token): the per-sequence means weigh them apart.
TEST(CpuGradientCheck, SequenceSoftmaxCrossEntropy) {
  const int64_t B = 3, L = 4, C = 5;
  Vec input = randomVector(B * L * C, 97, -3, 3);
  const Vec target = {4, 0, 2, -1, 1, -1, -1, -1, -1, -1, -1, -1};
  auto objective = [&] { return sequenceLossForward(input.data(), target.data(), B, L, C); };
  Vec d(B * L * C);
  sequenceLossGrad(input.data(), target.data(), d.data(), B, L, C);
  expectGradientMatches("sequence_softmax_ce", input, d, objective);
  for (int64_t i = 3 * C; i < 4 * C; ++i) // no target: no gradient
    EXPECT_EQ(d[size_t(i)], 0.0);
}

// select_targets of 2 rows a sequence from 3 sequences of 4 positions with
// 2, 1 and 0 targets: the gradient goes back to the target positions only.
TEST(CpuGradientCheck, SelectTargets) {
  const int64_t B = 3, L = 4, D = 2, P = 2;
  Vec x = randomVector(B * L * D, 98);
  const Vec targets = {-1, 3, -1, 0, 2, -1, -1, -1, -1, -1, -1, -1};
  const Vec r = randomVector(B * P * D, 99);
  Vec rows(B * P * D), selected(B * P);
  auto objective = [&] {
    EXPECT_EQ(selectTargets(x.data(), targets.data(), B, L, D, P, rows.data(), selected.data()), -1);
    return weightedSum(r, rows);
  };
  objective();
  EXPECT_EQ(selected, (Vec{3, 0, 2, -1, -1, -1}));
  Vec dx(B * L * D);
  selectTargetsBackward(r.data(), targets.data(), B, L, D, P, dx.data());
  expectGradientMatches("select_targets", x, dx, objective);
  Vec one = targets;
  one[4] = 1; // a third target in sequence 1 and... sequence 0 has two
  one[5] = 1;
  one[6] = 1;
  EXPECT_EQ(selectTargets(x.data(), one.data(), B, L, D, P, rows.data(), selected.data()), 1);
}

TEST(CpuGradientCheck, NegativeSamplingBothInputs) {
  const int64_t B = 3, C = 4;
  Vec pos = randomVector(B, 95, -3, 3), neg = randomVector(B * C, 96, -3, 3);
  auto objective = [&] { return lossForward(LossKind::NegSampling, pos.data(), neg.data(), B, C); };
  Vec dpos(B), dneg(B * C);
  lossGrad(LossKind::NegSampling, pos.data(), neg.data(), dpos.data(), dneg.data(), B, C);
  expectGradientMatches("neg_sampling positive", pos, dpos, objective);
  expectGradientMatches("neg_sampling negatives", neg, dneg, objective);
}

// --- Embeddings -----------------------------------------------------------------

// Bags of a 6 x 3 table: a repeated id, an empty bag, a single-id bag.
struct Bags {
  static constexpr int64_t rows = 6, D = 3, B = 4;
  std::vector<int64_t> ids = {1, 4, 4, 0, 2, 5, 3};
  std::vector<int64_t> offsets = {0, 2, 2, 6, 7};
};

/// Scatters per-id gradient rows back into a table-shaped gradient.
Vec scatterRows(const std::vector<int64_t> &ids, const Vec &dvals, int64_t rows, int64_t D) {
  Vec grad(rows * D, 0.0);
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t j = 0; j < D; ++j)
      grad[ids[i] * D + j] += dvals[i * D + j];
  return grad;
}

void checkLookup(Pooling pooling, bool weighted, const std::string &name) {
  Bags bags;
  Vec table = randomVector(Bags::rows * Bags::D, 101);
  const Vec weights = randomVector(bags.ids.size(), 102, 0.5, 2.0);
  const double *w = weighted ? weights.data() : nullptr;
  const Vec r = randomVector(Bags::B * Bags::D, 103);
  auto objective = [&] {
    Vec y(Bags::B * Bags::D);
    lookupForward(table.data(), Bags::D, bags.ids.data(), bags.offsets.data(), w, Bags::B,
                  pooling, y.data());
    return weightedSum(r, y);
  };
  Vec dvals(bags.ids.size() * Bags::D);
  lookupGrad(table.data(), Bags::D, bags.ids.data(), bags.offsets.data(), w, Bags::B, pooling,
             r.data(), dvals.data());
  expectGradientMatches("lookup " + name + (weighted ? " weighted" : ""), table,
                        scatterRows(bags.ids, dvals, Bags::rows, Bags::D), objective);
}

TEST(CpuGradientCheck, LookupSum) {
  checkLookup(Pooling::Sum, false, "sum");
  checkLookup(Pooling::Sum, true, "sum");
}
TEST(CpuGradientCheck, LookupMean) {
  checkLookup(Pooling::Mean, false, "mean");
  checkLookup(Pooling::Mean, true, "mean");
}
TEST(CpuGradientCheck, LookupMax) {
  checkLookup(Pooling::Max, false, "max");
  checkLookup(Pooling::Max, true, "max");
}

// Gather has no dedicated backward: the per-id gradient rows are dy itself.
TEST(CpuGradientCheck, Gather) {
  const int64_t rows = 5, D = 3;
  const std::vector<int64_t> ids = {3, 0, 3, 4};
  const int64_t n = int64_t(ids.size());
  Vec table = randomVector(rows * D, 111);
  const Vec r = randomVector(n * D, 112);
  auto objective = [&] {
    Vec y(n * D);
    gatherForward(table.data(), D, ids.data(), n, y.data());
    return weightedSum(r, y);
  };
  expectGradientMatches("gather", table, scatterRows(ids, r, rows, D), objective);
}

// --- Sequences (SequenceKernels.h) ---------------------------------------------

/// Four sequences of lengths 3, 0, 5 (= L) and 2, with a repeated id.
struct Sequences {
  static constexpr int64_t B = 4, L = 5, D = 3, rows = 6;
  std::vector<int64_t> ids = {1, 4, 1, 0, 2, 5, 5, 3, 4, 2};
  std::vector<int64_t> offsets = {0, 3, 3, 8, 10};
};

TEST(CpuGradientCheck, SequenceLookup) {
  Sequences s;
  const int64_t n = int64_t(s.ids.size());
  Vec table = randomVector(Sequences::rows * Sequences::D, 121);
  const Vec r = randomVector(Sequences::B * Sequences::L * Sequences::D, 122);
  auto objective = [&] {
    Vec y(Sequences::B * Sequences::L * Sequences::D);
    sequenceLookupForward(table.data(), Sequences::D, s.ids.data(), s.offsets.data(),
                          Sequences::B, Sequences::L, y.data());
    return weightedSum(r, y);
  };
  Vec rows(n * Sequences::D, -1.0);
  sequenceLookupBackward(r.data(), s.offsets.data(), Sequences::B, Sequences::L, Sequences::D, n,
                         rows.data());
  expectGradientMatches("sequence_lookup", table,
                        scatterRows(s.ids, rows, Sequences::rows, Sequences::D), objective);
}

TEST(CpuKernels, SequenceLookupPadsWithZerosAndZeroesRowsOutsideTheSequences) {
  // Offsets starting at 1: id 0 belongs to no sequence.
  const std::vector<int64_t> ids = {7, 2, 0, 1}, offsets = {1, 3, 4};
  const std::vector<float> table = {10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61, 70, 71, 80, 81};
  std::vector<float> y(2 * 3 * 2, -1.0f);
  sequenceLookupForward(table.data(), 2, ids.data(), offsets.data(), 2, 3, y.data());
  EXPECT_EQ(y, (std::vector<float>{30, 31, 10, 11, 0, 0, 20, 21, 0, 0, 0, 0}));
  std::vector<float> dy(12);
  for (size_t i = 0; i < dy.size(); ++i)
    dy[i] = float(i + 1);
  std::vector<float> rows(4 * 2, -1.0f);
  sequenceLookupBackward(dy.data(), offsets.data(), 2, 3, 2, 4, rows.data());
  EXPECT_EQ(rows, (std::vector<float>{0, 0, 1, 2, 3, 4, 7, 8}));
}

TEST(CpuGradientCheck, PositionsLearnedAndSinusoidal) {
  Sequences s;
  const int64_t B = Sequences::B, L = Sequences::L, D = Sequences::D, rows = L + 1;
  Vec x = randomVector(B * L * D, 141), table = randomVector(rows * D, 142);
  const Vec r = randomVector(B * L * D, 143);
  auto objective = [&](const Vec &added) {
    return [&, added] {
      Vec y(B * L * D);
      positionsForward(x.data(), s.offsets.data(), added.empty() ? table.data() : added.data(), B,
                       L, D, y.data());
      return weightedSum(r, y);
    };
  };
  Vec dx(B * L * D, -1.0), dtable(rows * D, -1.0);
  positionsBackward(r.data(), s.offsets.data(), B, L, D, dx.data(), dtable.data(), rows);
  expectGradientMatches("positions learned dx", x, dx, objective({}));
  expectGradientMatches("positions learned dtable", table, dtable, objective({}));
  const Vec sinusoids = sinusoidTable<double>(L, D);
  Vec dxs(B * L * D, -1.0);
  positionsBackward(r.data(), s.offsets.data(), B, L, D, dxs.data(), (double *)nullptr, 0);
  expectGradientMatches("positions sinusoidal dx", x, dxs, objective(sinusoids));
}

TEST(CpuKernels, SinusoidsAreSinAndCosOfTheScaledPosition) {
  // D = 4: columns 0, 1 at frequency 1, columns 2, 3 at 1 / 100.
  EXPECT_DOUBLE_EQ(sinusoid(0, 0, 4), 0.0);
  EXPECT_DOUBLE_EQ(sinusoid(0, 1, 4), 1.0);
  EXPECT_DOUBLE_EQ(sinusoid(3, 0, 4), std::sin(3.0));
  EXPECT_DOUBLE_EQ(sinusoid(3, 1, 4), std::cos(3.0));
  EXPECT_NEAR(sinusoid(3, 2, 4), std::sin(0.03), 1e-15);
  EXPECT_NEAR(sinusoid(3, 3, 4), std::cos(0.03), 1e-15);
}

/// Attention over 3 sequences of lengths 3, 0 and 4 (L = 4), D = 6 in 2
/// heads: the three gradients against finite differences; with `drop`, its
/// weights dropped by a fixed mask (rate 0.4: some of each row's weights
/// are dropped, the others scaled).
void checkAttention(bool causal, const AttentionDropout *drop = nullptr) {
  const std::vector<int64_t> offsets = {0, 3, 3, 7};
  const AttentionShape s{3, 4, 6, 2, causal};
  const int64_t n = s.B * s.L * s.D;
  Vec q = randomVector(n, 151, -1.5, 1.5), k = randomVector(n, 152, -1.5, 1.5),
      v = randomVector(n, 153);
  const Vec r = randomVector(n, 154);
  auto objective = [&] {
    Vec o(n);
    attentionForward(q.data(), k.data(), v.data(), offsets.data(), s, o.data(), drop);
    return weightedSum(r, o);
  };
  Vec dq(n, -1.0), dk(n, -1.0), dv(n, -1.0);
  attentionBackward(r.data(), q.data(), k.data(), v.data(), offsets.data(), s, dq.data(),
                    dk.data(), dv.data(), drop);
  const std::string what =
      std::string("attention") + (causal ? " causal" : "") + (drop ? " dropout" : "");
  expectGradientMatches(what + " dq", q, dq, objective);
  expectGradientMatches(what + " dk", k, dk, objective);
  expectGradientMatches(what + " dv", v, dv, objective);
}

TEST(CpuGradientCheck, Attention) { checkAttention(false); }
TEST(CpuGradientCheck, AttentionCausal) { checkAttention(true); }

TEST(CpuGradientCheck, AttentionWithWeightDropout) {
  const AttentionDropout drop{0.4, dropoutKey(3, 1, 2), 5};
  checkAttention(false, &drop);
  checkAttention(true, &drop);
}

// The weights' mask is the dropout kernel's, at the weight's place in the
// site's global weights. With one key a weight is 1, so o = v times its
// factor: v / (1 - rate) or 0.
TEST(CpuKernels, AttentionWeightDropoutIsTheDropoutMask) {
  const AttentionShape s{64, 1, 2, 1, false};
  std::vector<int64_t> offsets(65);
  for (int64_t b = 0; b <= 64; ++b)
    offsets[size_t(b)] = b; // every sequence of length 1
  const Vec q = randomVector(128, 160), k = randomVector(128, 161), v = randomVector(128, 162);
  const AttentionDropout drop{0.5, dropoutKey(7, 0, 1), 100};
  Vec o(128), factors(64);
  attentionForward(q.data(), k.data(), v.data(), offsets.data(), s, o.data(), &drop);
  // Weight (b, 0, 0, 0) is element 100 + b of the site's weights.
  dropoutFactors(drop.key, 100, 64, 0.5, factors.data());
  int64_t dropped = 0;
  for (int64_t b = 0; b < 64; ++b) {
    dropped += factors[size_t(b)] == 0.0;
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_EQ(o[size_t(b * 2 + c)], v[size_t(b * 2 + c)] * factors[size_t(b)]) << b;
  }
  EXPECT_GT(dropped, 10);
  EXPECT_LT(dropped, 54);
}

TEST(CpuKernels, AttentionOfOnePositionIsItsValueAndPaddingIsZero) {
  // Sequence 0 has one position: its only weight is 1. Sequence 1 has two
  // equal keys: the mean of its values. Causal: position 0 sees itself only.
  const std::vector<int64_t> offsets = {0, 1, 3};
  const AttentionShape s{2, 2, 2, 1, false};
  const std::vector<float> q = {1, 2, 9, 9, 0.5f, 0.5f, -1, 1};
  const std::vector<float> k = {3, 4, 9, 9, 1, 1, 1, 1};
  const std::vector<float> v = {5, 6, 9, 9, 2, 4, 6, 8};
  std::vector<float> o(8, -1.0f);
  attentionForward(q.data(), k.data(), v.data(), offsets.data(), s, o.data());
  EXPECT_EQ(o, (std::vector<float>{5, 6, 0, 0, 4, 6, 4, 6}));
  AttentionShape causal = s;
  causal.causal = true;
  attentionForward(q.data(), k.data(), v.data(), offsets.data(), causal, o.data());
  EXPECT_EQ(o, (std::vector<float>{5, 6, 0, 0, 2, 4, 4, 6}));
}

void checkSequencePool(SequencePooling mode, const std::string &name) {
  Sequences s;
  const int64_t B = Sequences::B, L = Sequences::L, D = Sequences::D;
  Vec x = randomVector(B * L * D, 131, -2.0, 2.0);
  const Vec r = randomVector(B * D, 132);
  auto objective = [&] {
    Vec y(B * D);
    sequencePoolForward(x.data(), s.offsets.data(), B, L, D, mode, y.data());
    return weightedSum(r, y);
  };
  Vec dx(B * L * D, -1.0);
  sequencePoolBackward(r.data(), s.offsets.data(), x.data(), B, L, D, mode, dx.data());
  expectGradientMatches("sequence_pool " + name, x, dx, objective);
}

TEST(CpuGradientCheck, SequencePoolEveryMode) {
  checkSequencePool(SequencePooling::Sum, "sum");
  checkSequencePool(SequencePooling::Mean, "mean");
  checkSequencePool(SequencePooling::Max, "max");
  checkSequencePool(SequencePooling::First, "first");
}

TEST(CpuKernels, SequencePoolReadsOnlyTheValidPositions) {
  // Lengths 2 and 0; position 2 of sequence 0 is padding holding 100.
  const std::vector<int64_t> offsets = {0, 2, 2};
  const std::vector<float> x = {1, -4, 3, 2, 100, 100, 9, 9, 9, 9, 9, 9};
  auto pool = [&](SequencePooling mode) {
    std::vector<float> y(4, -1.0f);
    sequencePoolForward(x.data(), offsets.data(), 2, 3, 2, mode, y.data());
    return y;
  };
  EXPECT_EQ(pool(SequencePooling::Sum), (std::vector<float>{4, -2, 0, 0}));
  EXPECT_EQ(pool(SequencePooling::Mean), (std::vector<float>{2, -1, 0, 0}));
  EXPECT_EQ(pool(SequencePooling::Max), (std::vector<float>{3, 2, 0, 0}));
  EXPECT_EQ(pool(SequencePooling::First), (std::vector<float>{1, -4, 0, 0}));
}

} // namespace
} // namespace embc::runtime::cpu
