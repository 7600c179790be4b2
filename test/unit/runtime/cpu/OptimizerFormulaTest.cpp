//===- OptimizerFormulaTest.cpp - each optimizer is its documented formula -===//
//
// The optimizers' first steps against a float64 evaluation of the formulas
// Kernels.h documents (with the hyper-parameters as the model file gives
// them, in double): long-run tests of learning cannot see a step that is
// off by a few parts per million, and such an offset is what a comparison
// with another trainer finds first (issue 20: Adam's (1 - beta) was formed
// in fp32 from the rounded beta while its bias correction used the exact
// one, so its first step was lr (1 + 6.7e-6)).
//
// Each case starts from w = 0 where its step does not depend on w (so the
// first step is the update itself, free of w's rounding), runs five steps
// on fixed gradients, and checks every value after every step within a few
// float32 roundings (2.5e-7 of the value and of the step, added up over the
// steps) of the reference: 2.5 parts per million of Adam's first step are
// ten times that bound.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace embc::runtime;
using namespace embc::runtime::cpu;

constexpr int64_t kRows = 4, kDim = 8, kN = kRows * kDim;
constexpr int kSteps = 5;

/// The gradient of value i at step t: mixed signs and magnitudes.
double gradient(int64_t i, int t) {
  return std::sin(0.7 * double(i) + 1.3 * t) * std::pow(10.0, double(i % 5) - 2.0);
}

/// Kernels.h's formulas in double; state0/state1 as the kernels keep them.
struct Reference {
  OptimizerParams p;
  std::vector<double> w, s0, s1;

  explicit Reference(const OptimizerParams &params, const std::vector<float> &w0)
      : p(params), w(w0.begin(), w0.end()), s0(kN, 0.0), s1(kN, 0.0) {}

  void step(int t, const std::vector<float> &gf) {
    std::vector<double> g(gf.begin(), gf.end());
    const bool coupled = p.kind != OptimizerKind::AdamW && p.kind != OptimizerKind::Lamb;
    if (coupled)
      for (int64_t i = 0; i < kN; ++i)
        g[size_t(i)] += p.weightDecay * w[size_t(i)];
    const double b1t = 1 - std::pow(p.beta1, t), b2t = 1 - std::pow(p.beta2, t);
    switch (p.kind) {
    case OptimizerKind::Sgd:
      for (int64_t i = 0; i < kN; ++i) {
        if (p.momentum == 0) {
          w[size_t(i)] -= p.lr * g[size_t(i)];
        } else {
          s0[size_t(i)] = p.momentum * s0[size_t(i)] + g[size_t(i)];
          w[size_t(i)] -= p.lr * s0[size_t(i)];
        }
      }
      return;
    case OptimizerKind::Adagrad:
      for (int64_t i = 0; i < kN; ++i) {
        s0[size_t(i)] += g[size_t(i)] * g[size_t(i)];
        w[size_t(i)] -= p.lr * g[size_t(i)] / (std::sqrt(s0[size_t(i)]) + p.eps);
      }
      return;
    case OptimizerKind::RowwiseAdagrad:
      for (int64_t r = 0; r < kRows; ++r) {
        double mean = 0;
        for (int64_t j = 0; j < kDim; ++j)
          mean += g[size_t(r * kDim + j)] * g[size_t(r * kDim + j)] / double(kDim);
        s0[size_t(r)] += mean;
        for (int64_t j = 0; j < kDim; ++j)
          w[size_t(r * kDim + j)] -= p.lr * g[size_t(r * kDim + j)] / (std::sqrt(s0[size_t(r)]) + p.eps);
      }
      return;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
    case OptimizerKind::Lamb: {
      std::vector<double> r(kN);
      for (int64_t i = 0; i < kN; ++i) {
        double &m = s0[size_t(i)], &v = s1[size_t(i)];
        m = p.beta1 * m + (1 - p.beta1) * g[size_t(i)];
        v = p.beta2 * v + (1 - p.beta2) * g[size_t(i)] * g[size_t(i)];
        r[size_t(i)] = (m / b1t) / (std::sqrt(v / b2t) + p.eps);
      }
      if (p.kind == OptimizerKind::Lamb) {
        double w2 = 0, r2 = 0;
        for (int64_t i = 0; i < kN; ++i) {
          r[size_t(i)] += p.weightDecay * w[size_t(i)];
          w2 += w[size_t(i)] * w[size_t(i)], r2 += r[size_t(i)] * r[size_t(i)];
        }
        const double trust = w2 > 0 && r2 > 0 ? std::sqrt(w2) / std::sqrt(r2) : 1.0;
        for (int64_t i = 0; i < kN; ++i)
          w[size_t(i)] -= p.lr * trust * r[size_t(i)];
        return;
      }
      const double scale = p.kind == OptimizerKind::AdamW ? 1 - p.lr * p.weightDecay : 1.0;
      for (int64_t i = 0; i < kN; ++i)
        w[size_t(i)] = scale * w[size_t(i)] - p.lr * r[size_t(i)];
      return;
    }
    }
  }
};

struct Case {
  std::string name;
  OptimizerParams p;
  bool startAtZero; ///< the first step does not read w
};

std::vector<Case> cases() {
  auto make = [](OptimizerKind kind, double lr, auto &&tweak) {
    OptimizerParams p;
    p.kind = kind;
    p.lr = lr;
    tweak(p);
    return p;
  };
  auto none = [](OptimizerParams &) {};
  return {
      {"sgd", make(OptimizerKind::Sgd, 0.05, none), true},
      {"sgd_momentum_decay",
       make(OptimizerKind::Sgd, 0.05, [](OptimizerParams &p) { p.momentum = 0.9, p.weightDecay = 1e-2; }),
       false},
      {"adagrad", make(OptimizerKind::Adagrad, 0.05, [](OptimizerParams &p) { p.eps = 1e-10; }), true},
      {"rowwise_adagrad",
       make(OptimizerKind::RowwiseAdagrad, 0.05, [](OptimizerParams &p) { p.eps = 1e-10; }), true},
      {"adam", make(OptimizerKind::Adam, 1e-3, none), true},
      {"adam_decay", make(OptimizerKind::Adam, 1e-3, [](OptimizerParams &p) { p.weightDecay = 1e-2; }),
       false},
      {"adamw", make(OptimizerKind::AdamW, 1e-3, [](OptimizerParams &p) { p.weightDecay = 1e-2; }),
       false},
      {"adam_betas",
       make(OptimizerKind::Adam, 1e-3, [](OptimizerParams &p) { p.beta1 = 0.8, p.beta2 = 0.99; }), true},
      {"lamb", make(OptimizerKind::Lamb, 1e-2, [](OptimizerParams &p) { p.weightDecay = 1e-2; }), false},
  };
}

TEST(OptimizerFormula, FirstStepsAreTheDocumentedFormulaInFloat64) {
  for (const Case &c : cases()) {
    std::vector<float> w(kN), s0(kN, 0.0f), s1(kN, 0.0f), g(kN);
    for (int64_t i = 0; i < kN; ++i)
      w[size_t(i)] = c.startAtZero ? 0.0f : float(0.5 * std::cos(0.3 * double(i)));
    Reference ref(c.p, w);
    // What float32 may lose: a few roundings of each value and of each step.
    std::vector<double> bound(kN, 0.0);
    for (int t = 1; t <= kSteps; ++t) {
      for (int64_t i = 0; i < kN; ++i)
        g[size_t(i)] = float(gradient(i, t));
      const std::vector<double> before = ref.w;
      ref.step(t, g);
      for (int64_t i = 0; i < kN; ++i)
        bound[size_t(i)] += 2.5e-7 * (std::abs(ref.w[size_t(i)]) +
                                      std::abs(ref.w[size_t(i)] - before[size_t(i)]));
      EXPECT_EQ(denseUpdate<float>(c.p, t, 1.0, 1.0, w.data(), g.data(), s0.data(), s1.data(), kN, kDim), -1);
      for (int64_t i = 0; i < kN; ++i) {
        const double want = ref.w[size_t(i)];
        ASSERT_NEAR(double(w[size_t(i)]), want, bound[size_t(i)])
            << c.name << ": value " << i << " after step " << t;
      }
    }
  }
}

} // namespace
