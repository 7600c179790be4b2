//===- OptimizerTest.cpp - optimizer kernels against closed forms ---------===//
//
// Each optimizer runs two consecutive steps (t = 1, 2; lrScale and
// gradScale != 1) through denseUpdate / sparseUpdate and is compared with the
// formulas of Kernels.h written out here, value by value, in double. The
// sparse tests also check the lazy contract (untouched rows and their state
// are bit-for-bit unchanged) and global decay (every row is decayed).
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/Kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::cpu {
namespace {

using testing::randomVector;
using Vec = std::vector<double>;

constexpr double kLrScale = 0.5, kGradScale = 0.25;

/// Parameter values and optimizer state of the reference.
struct State {
  Vec w, s0, s1;
};

/// One step of the documented formulas over all of st (t is 1-based).
/// rowLength: rowwise_adagrad's row length (st.s0 has one entry per row).
void referenceStep(const OptimizerParams &p, int64_t t, State &st, const Vec &grad,
                   int64_t rowLength) {
  const double lr = p.lr * kLrScale, wd = p.weightDecay;
  const size_t n = st.w.size();
  Vec g(n);
  for (size_t i = 0; i < n; ++i)
    g[i] = kGradScale * grad[i];
  const bool coupled = p.kind != OptimizerKind::AdamW && p.kind != OptimizerKind::Lamb;
  if (coupled)
    for (size_t i = 0; i < n; ++i)
      g[i] += wd * st.w[i];
  const double bias1 = 1 - std::pow(p.beta1, double(t)), bias2 = 1 - std::pow(p.beta2, double(t));

  switch (p.kind) {
  case OptimizerKind::Sgd:
    for (size_t i = 0; i < n; ++i) {
      if (p.momentum == 0) {
        st.w[i] -= lr * g[i];
      } else {
        st.s0[i] = p.momentum * st.s0[i] + g[i];
        st.w[i] -= lr * st.s0[i];
      }
    }
    return;
  case OptimizerKind::Adagrad:
    for (size_t i = 0; i < n; ++i) {
      st.s0[i] += g[i] * g[i];
      st.w[i] -= lr * g[i] / (std::sqrt(st.s0[i]) + p.eps);
    }
    return;
  case OptimizerKind::RowwiseAdagrad:
    for (size_t r = 0; r < n / size_t(rowLength); ++r) {
      double meanSq = 0;
      for (int64_t j = 0; j < rowLength; ++j)
        meanSq += g[r * rowLength + j] * g[r * rowLength + j];
      st.s0[r] += meanSq / double(rowLength);
      for (int64_t j = 0; j < rowLength; ++j)
        st.w[r * rowLength + j] -= lr * g[r * rowLength + j] / (std::sqrt(st.s0[r]) + p.eps);
    }
    return;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    for (size_t i = 0; i < n; ++i) {
      if (p.kind == OptimizerKind::AdamW)
        st.w[i] *= 1 - lr * wd;
      st.s0[i] = p.beta1 * st.s0[i] + (1 - p.beta1) * g[i];
      st.s1[i] = p.beta2 * st.s1[i] + (1 - p.beta2) * g[i] * g[i];
      const double mh = st.s0[i] / bias1, vh = st.s1[i] / bias2;
      st.w[i] -= lr * mh / (std::sqrt(vh) + p.eps);
    }
    return;
  case OptimizerKind::Lamb: {
    Vec r(n);
    double wNorm = 0, rNorm = 0;
    for (size_t i = 0; i < n; ++i) {
      st.s0[i] = p.beta1 * st.s0[i] + (1 - p.beta1) * g[i];
      st.s1[i] = p.beta2 * st.s1[i] + (1 - p.beta2) * g[i] * g[i];
      const double mh = st.s0[i] / bias1, vh = st.s1[i] / bias2;
      r[i] = mh / (std::sqrt(vh) + p.eps) + wd * st.w[i];
      wNorm += st.w[i] * st.w[i];
      rNorm += r[i] * r[i];
    }
    wNorm = std::sqrt(wNorm);
    rNorm = std::sqrt(rNorm);
    const double trust = wNorm > 0 && rNorm > 0 ? wNorm / rNorm : 1.0;
    for (size_t i = 0; i < n; ++i)
      st.w[i] -= lr * trust * r[i];
    return;
  }
  }
}

void expectClose(const Vec &actual, const Vec &expected, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-12 * std::max(1.0, std::abs(expected[i])))
        << what << "[" << i << "]";
}

/// How many state values each optimizer keeps (0 when the pointer is unused).
struct StateSizes {
  size_t s0, s1;
};
StateSizes stateSizes(const OptimizerParams &p, size_t n, size_t rows) {
  switch (p.kind) {
  case OptimizerKind::Sgd:
    return {p.momentum != 0 ? n : 0, 0};
  case OptimizerKind::Adagrad:
    return {n, 0};
  case OptimizerKind::RowwiseAdagrad:
    return {rows, 0};
  default:
    return {n, n};
  }
}

/// A named optimizer configuration of the tests.
struct Case {
  std::string name;
  OptimizerParams params;
  double initialAccumulator = 0;
};

std::vector<Case> allCases(double wd) {
  std::vector<Case> cases;
  auto add = [&](const std::string &name, OptimizerKind kind, double momentum = 0,
                 double initialAccumulator = 0) {
    Case c;
    c.name = name;
    c.params.kind = kind;
    c.params.lr = 0.1;
    c.params.momentum = momentum;
    c.params.weightDecay = wd;
    c.initialAccumulator = initialAccumulator;
    cases.push_back(c);
  };
  add("sgd", OptimizerKind::Sgd);
  add("sgd+momentum", OptimizerKind::Sgd, 0.9);
  add("adagrad", OptimizerKind::Adagrad, 0, 0.1);
  add("rowwise_adagrad", OptimizerKind::RowwiseAdagrad, 0, 0.1);
  add("adam", OptimizerKind::Adam);
  add("adamw", OptimizerKind::AdamW);
  add("lamb", OptimizerKind::Lamb);
  return cases;
}

double *dataOrNull(Vec &v) { return v.empty() ? nullptr : v.data(); }

// --- Dense ------------------------------------------------------------------------

void checkDense(const Case &c) {
  SCOPED_TRACE(c.name + " wd=" + std::to_string(c.params.weightDecay));
  const int64_t rows = 2, rowLength = 3, n = rows * rowLength;
  const auto sizes = stateSizes(c.params, n, rows);
  State kernel{randomVector(n, 201), Vec(sizes.s0, c.initialAccumulator), Vec(sizes.s1, 0.0)};
  State expected = kernel;
  const Vec grads[2] = {randomVector(n, 202), randomVector(n, 203)};
  for (int64_t t = 1; t <= 2; ++t) {
    EXPECT_EQ(denseUpdate(c.params, t, kLrScale, kGradScale, kernel.w.data(), grads[t - 1].data(),
                dataOrNull(kernel.s0), dataOrNull(kernel.s1), n, rowLength), -1);
    referenceStep(c.params, t, expected, grads[t - 1], rowLength);
    const std::string step = " after step " + std::to_string(t);
    expectClose(kernel.w, expected.w, "w" + step);
    expectClose(kernel.s0, expected.s0, "state0" + step);
    expectClose(kernel.s1, expected.s1, "state1" + step);
  }
}

TEST(CpuOptimizer, DenseTwoStepsWithoutDecay) {
  for (const Case &c : allCases(0.0))
    checkDense(c);
}

TEST(CpuOptimizer, DenseTwoStepsWithDecay) {
  for (const Case &c : allCases(0.05))
    checkDense(c);
}

// --- Sparse -----------------------------------------------------------------------

constexpr int64_t kRows = 5, kDim = 3;

/// Touched rows of the two steps: row 3 in both, rows 2 and 4 never.
const std::vector<int64_t> kTouched[2] = {{1, 3}, {0, 3}};

/// The reference of one sparse step: every row decayed first under global
/// decay, then the documented step on each touched row as its own
/// parameter (so lamb's trust ratio is per row).
void referenceSparseStep(const OptimizerParams &p, int64_t t, State &table,
                         const std::vector<int64_t> &touched, const Vec &vals) {
  OptimizerParams rowParams = p;
  if (p.globalDecay && p.weightDecay > 0) {
    for (double &w : table.w)
      w *= 1 - p.lr * kLrScale * p.weightDecay;
    rowParams.weightDecay = 0;
  }
  const bool rowwise = p.kind == OptimizerKind::RowwiseAdagrad;
  for (size_t k = 0; k < touched.size(); ++k) {
    const int64_t r = touched[k];
    State row;
    row.w.assign(table.w.begin() + r * kDim, table.w.begin() + (r + 1) * kDim);
    if (rowwise)
      row.s0 = {table.s0[r]};
    else if (!table.s0.empty())
      row.s0.assign(table.s0.begin() + r * kDim, table.s0.begin() + (r + 1) * kDim);
    if (!table.s1.empty())
      row.s1.assign(table.s1.begin() + r * kDim, table.s1.begin() + (r + 1) * kDim);
    const Vec g(vals.begin() + int64_t(k) * kDim, vals.begin() + int64_t(k + 1) * kDim);
    referenceStep(rowParams, t, row, g, kDim);
    std::copy(row.w.begin(), row.w.end(), table.w.begin() + r * kDim);
    if (rowwise)
      table.s0[r] = row.s0[0];
    else if (!row.s0.empty())
      std::copy(row.s0.begin(), row.s0.end(), table.s0.begin() + r * kDim);
    if (!row.s1.empty())
      std::copy(row.s1.begin(), row.s1.end(), table.s1.begin() + r * kDim);
  }
}

void checkSparse(const Case &c) {
  SCOPED_TRACE(c.name + (c.params.globalDecay ? " global" : " lazy") +
               " wd=" + std::to_string(c.params.weightDecay));
  const auto sizes = stateSizes(c.params, kRows * kDim, kRows);
  // Nonzero state so "unchanged" is a real check for untouched rows.
  State kernel{randomVector(kRows * kDim, 301), randomVector(sizes.s0, 302, 0.05, 0.2),
               randomVector(sizes.s1, 303, 0.01, 0.1)};
  State expected = kernel;
  const State initial = kernel;
  for (int64_t t = 1; t <= 2; ++t) {
    const auto &touched = kTouched[t - 1];
    const Vec vals = randomVector(touched.size() * kDim, 310 + uint32_t(t));
    EXPECT_FALSE(sparseUpdate(c.params, t, kLrScale, kGradScale, kernel.w.data(), kRows, kDim, touched.data(),
                 vals.data(), int64_t(touched.size()), dataOrNull(kernel.s0),
                 dataOrNull(kernel.s1)));
    referenceSparseStep(c.params, t, expected, touched, vals);
    const std::string step = " after step " + std::to_string(t);
    expectClose(kernel.w, expected.w, "table" + step);
    expectClose(kernel.s0, expected.s0, "state0" + step);
    expectClose(kernel.s1, expected.s1, "state1" + step);
  }

  // Rows 2 and 4 were never touched.
  const bool globallyDecayed = c.params.globalDecay && c.params.weightDecay > 0;
  const bool rowwise = c.params.kind == OptimizerKind::RowwiseAdagrad;
  for (int64_t r : {2, 4}) {
    for (int64_t j = 0; j < kDim; ++j) {
      const int64_t i = r * kDim + j;
      if (globallyDecayed) {
        EXPECT_NE(kernel.w[i], initial.w[i]) << "untouched row " << r << " was not decayed";
      } else {
        EXPECT_EQ(kernel.w[i], initial.w[i]) << "untouched row " << r << " changed";
      }
      if (!rowwise && !kernel.s0.empty()) {
        EXPECT_EQ(kernel.s0[i], initial.s0[i]) << "state0 of untouched row " << r << " changed";
      }
      if (!kernel.s1.empty()) {
        EXPECT_EQ(kernel.s1[i], initial.s1[i]) << "state1 of untouched row " << r << " changed";
      }
    }
    if (rowwise) {
      EXPECT_EQ(kernel.s0[r], initial.s0[r]) << "accumulator of untouched row " << r << " changed";
    }
  }
}

/// checkSparse of every case with `weightDecay`, lazy or global.
void checkSparseAll(double weightDecay, bool globalDecay) {
  for (Case c : allCases(weightDecay)) {
    c.params.globalDecay = globalDecay;
    checkSparse(c);
  }
}

/// Whether global weight decay is defined (sgd without momentum, adamw).
bool globalDecayDefined(const OptimizerParams &p) {
  return (p.kind == OptimizerKind::Sgd && p.momentum == 0) || p.kind == OptimizerKind::AdamW;
}

TEST(CpuOptimizer, SparseLazyWithoutDecay) { checkSparseAll(0.0, false); }

TEST(CpuOptimizer, SparseLazyDecayTouchesOnlyUpdatedRows) { checkSparseAll(0.05, false); }

TEST(CpuOptimizer, SparseGlobalDecayScalesEveryRow) {
  for (Case c : allCases(0.05)) {
    if (!globalDecayDefined(c.params))
      continue;
    c.params.globalDecay = true;
    checkSparse(c);
  }
}

// Global decay without weight decay is just the lazy update.
TEST(CpuOptimizer, SparseGlobalFlagWithoutDecayIsLazy) { checkSparseAll(0.0, true); }

TEST(CpuOptimizer, SparseRefusesGlobalDecayWhereUndefined) {
  for (Case c : allCases(0.05)) {
    if (globalDecayDefined(c.params))
      continue;
    c.params.globalDecay = true;
    Vec table(kRows * kDim, 1.0), s0(kRows * kDim, 0.1), s1(kRows * kDim, 0.1);
    const std::vector<int64_t> rows = {1};
    const Vec vals(kDim, 0.5);
    EXPECT_THROW((void)sparseUpdate(c.params, 1, 1.0, 1.0, table.data(), kRows, kDim, rows.data(),
                              vals.data(), 1, s0.data(), s1.data()),
                 std::invalid_argument)
        << c.name;
  }
}

TEST(CpuOptimizer, SparseRejectsUncoalescedOrOutOfRangeRows) {
  OptimizerParams p;
  Vec table(kRows * kDim, 1.0);
  const Vec vals(2 * kDim, 0.5);
  const std::vector<int64_t> unsorted = {3, 1}, outside = {1, kRows};
  EXPECT_THROW((void)sparseUpdate(p, 1, 1.0, 1.0, table.data(), kRows, kDim, unsorted.data(),
                            vals.data(), 2, (double *)nullptr, (double *)nullptr),
               std::invalid_argument);
  EXPECT_THROW((void)sparseUpdate(p, 1, 1.0, 1.0, table.data(), kRows, kDim, outside.data(),
                            vals.data(), 2, (double *)nullptr, (double *)nullptr),
               std::out_of_range);
}

TEST(CpuOptimizer, MissingStateIsAnError) {
  OptimizerParams p;
  p.kind = OptimizerKind::Adam;
  Vec w(4, 1.0), g(4, 0.1), m(4, 0.0);
  EXPECT_THROW((void)denseUpdate(p, 1, 1.0, 1.0, w.data(), g.data(), m.data(), (double *)nullptr, 4, 4),
               std::invalid_argument);
  EXPECT_THROW((void)denseUpdate(p, 0, 1.0, 1.0, w.data(), g.data(), m.data(), m.data(), 4, 4),
               std::invalid_argument)
      << "adam's step is 1-based";
}

// The float instantiation follows the same formulas (to float precision).
TEST(CpuOptimizer, FloatMatchesDoubleReference) {
  for (const Case &c : allCases(0.05)) {
    SCOPED_TRACE(c.name);
    const int64_t n = 6;
    const auto sizes = stateSizes(c.params, n, 2);
    State expected{randomVector(n, 401), Vec(sizes.s0, c.initialAccumulator), Vec(sizes.s1, 0.0)};
    std::vector<float> w(expected.w.begin(), expected.w.end());
    std::vector<float> s0(expected.s0.begin(), expected.s0.end());
    std::vector<float> s1(expected.s1.begin(), expected.s1.end());
    const Vec grad = randomVector(n, 402);
    const std::vector<float> gradF(grad.begin(), grad.end());
    EXPECT_EQ(denseUpdate(c.params, 1, kLrScale, kGradScale, w.data(), gradF.data(),
                s0.empty() ? nullptr : s0.data(), s1.empty() ? nullptr : s1.data(), n, 3), -1);
    referenceStep(c.params, 1, expected, Vec(gradF.begin(), gradF.end()), 3);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(w[i], expected.w[i], 1e-5) << "w[" << i << "]";
  }
}

} // namespace
} // namespace embc::runtime::cpu
