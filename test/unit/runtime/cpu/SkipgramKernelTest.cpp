//===- SkipgramKernelTest.cpp - skipgram_step against references ----------===//
//
// The per-example skip-gram kernel (SkipgramKernel.h): against a plain
// double-precision implementation of word2vec's scheme, its gradient against
// central finite differences of the example's loss in float64, per_example
// the same for any team size, hogwild on one thread equal to per_example,
// evaluation writing nothing, and bad ids refused before any row changes.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/SkipgramKernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace embc::runtime::cpu;
using embc::runtime::cpu::testing::randomVector;

namespace {

constexpr int64_t kB = 24, kK = 3, kD = 13, kRows = 40; // two tables of 20 rows

/// A batch over a target of 40 rows: centres in rows [0, 20), contexts and
/// negatives in [20, 40). Bags of 1 or 2 ids; some ids repeat across
/// examples (shared rows), example 5's negatives repeat one row.
struct Batch {
  std::vector<int64_t> centerIds, centerOffsets{0}, contextIds, contextOffsets{0}, negatives;
  Batch() {
    for (int64_t b = 0; b < kB; ++b) {
      centerIds.push_back((b * 7) % 20);
      if (b % 4 == 1)
        centerIds.push_back((b * 3 + 1) % 20);
      centerOffsets.push_back(int64_t(centerIds.size()));
      contextIds.push_back((b * 5 + 2) % 20);
      if (b % 6 == 2)
        contextIds.push_back((b + 9) % 20);
      contextOffsets.push_back(int64_t(contextIds.size()));
      for (int64_t j = 0; j < kK; ++j)
        negatives.push_back(b == 5 ? 11 : (b * 11 + j * 13 + 3) % 20);
    }
  }
};

struct Outcome {
  std::vector<float> table, state, scores;
  float loss = 0;
};

Outcome run(const Batch &batch, OptimizerKind kind, SkipgramMode mode, bool update,
        std::vector<float> table, std::vector<float> state = {}) {
  SkipgramStep s;
  s.centerIds = batch.centerIds.data();
  s.centerOffsets = batch.centerOffsets.data();
  s.contextIds = batch.contextIds.data();
  s.contextOffsets = batch.contextOffsets.data();
  s.negatives = batch.negatives.data();
  s.centerIdCount = int64_t(batch.centerIds.size());
  s.contextIdCount = int64_t(batch.contextIds.size());
  s.B = kB, s.K = kK, s.D = kD;
  s.center = {0, 20};
  s.context = {20, 20};
  s.negative = {20, 20};
  Outcome r;
  r.table = std::move(table);
  r.state = state.empty() && kind == OptimizerKind::Adagrad
                ? std::vector<float>(size_t(kRows * kD), 0.1f)
                : std::move(state);
  r.scores.assign(size_t(kB), 0);
  s.table = r.table.data();
  s.targetRows = kRows;
  s.state0 = r.state.empty() ? nullptr : r.state.data();
  s.optimizer.kind = kind;
  s.optimizer.lr = kind == OptimizerKind::Sgd ? 0.05 : 0.2;
  s.optimizer.eps = 1e-8;
  s.optimizerStep = 3;
  s.mode = mode;
  s.update = update;
  s.loss = &r.loss;
  s.scores = r.scores.data();
  EXPECT_EQ(skipgramStep(s), -1);
  return r;
}

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

/// word2vec's scheme in double: example by example; the context, then each
/// negative scored against its row as it is then and stepped at once; the
/// centre rows last with the gradient gathered from the rows as read.
Outcome reference(const Batch &batch, OptimizerKind kind, std::vector<float> tableIn) {
  std::vector<double> w(tableIn.begin(), tableIn.end()), acc(size_t(kRows * kD), 0.1);
  const double lr = kind == OptimizerKind::Sgd ? 0.05 : 0.2;
  auto step = [&](int64_t row, const std::vector<double> &g) {
    for (int64_t d = 0; d < kD; ++d) {
      double &x = w[size_t(row * kD + d)];
      if (kind == OptimizerKind::Sgd) {
        x -= lr * g[size_t(d)];
      } else {
        double &a = acc[size_t(row * kD + d)];
        a += g[size_t(d)] * g[size_t(d)];
        x -= lr * g[size_t(d)] / (std::sqrt(a) + 1e-8);
      }
    }
  };
  Outcome r;
  double loss = 0;
  for (int64_t b = 0; b < kB; ++b) {
    std::vector<double> c(kD, 0), x(kD, 0);
    for (int64_t i = batch.centerOffsets[b]; i < batch.centerOffsets[b + 1]; ++i)
      for (int64_t d = 0; d < kD; ++d)
        c[size_t(d)] += w[size_t(batch.centerIds[size_t(i)] * kD + d)];
    for (int64_t i = batch.contextOffsets[b]; i < batch.contextOffsets[b + 1]; ++i)
      for (int64_t d = 0; d < kD; ++d)
        x[size_t(d)] += w[size_t((20 + batch.contextIds[size_t(i)]) * kD + d)];
    auto dot = [&](const std::vector<double> &a, int64_t row) {
      double sum = 0;
      for (int64_t d = 0; d < kD; ++d)
        sum += a[size_t(d)] * w[size_t(row * kD + d)];
      return sum;
    };
    double pos = 0;
    for (int64_t d = 0; d < kD; ++d)
      pos += c[size_t(d)] * x[size_t(d)];
    r.scores.push_back(float(pos));
    // The context, then each negative, scored against its row as it is now
    // and stepped at once; the centre's gradient from the rows as read.
    loss += softplus(-pos);
    std::vector<double> dc(kD), g(kD);
    const double gp = sigmoid(pos) - 1;
    for (int64_t d = 0; d < kD; ++d) {
      dc[size_t(d)] = gp * x[size_t(d)];
      g[size_t(d)] = gp * c[size_t(d)];
    }
    for (int64_t i = batch.contextOffsets[b]; i < batch.contextOffsets[b + 1]; ++i)
      step(20 + batch.contextIds[size_t(i)], g);
    for (int64_t j = 0; j < kK; ++j) {
      const int64_t row = 20 + batch.negatives[size_t(b * kK + j)];
      const double score = dot(c, row);
      loss += softplus(score);
      const double gj = sigmoid(score);
      for (int64_t d = 0; d < kD; ++d) {
        dc[size_t(d)] += gj * w[size_t(row * kD + d)];
        g[size_t(d)] = gj * c[size_t(d)];
      }
      step(row, g);
    }
    for (int64_t i = batch.centerOffsets[b]; i < batch.centerOffsets[b + 1]; ++i)
      step(batch.centerIds[size_t(i)], dc);
  }
  r.loss = float(loss / kB);
  r.table.assign(w.begin(), w.end());
  return r;
}

std::vector<float> initialTable() { return randomVector<float>(size_t(kRows * kD), 17, -0.5, 0.5); }

void expectNear(const std::vector<float> &a, const std::vector<float> &b, double tol,
                const char *what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], tol * (1 + std::abs(b[i]))) << what << " " << i;
}

TEST(SkipgramStep, PerExampleMatchesWord2vecReference) {
  const Batch batch;
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adagrad}) {
    const Outcome got = run(batch, kind, SkipgramMode::PerExample, true, initialTable());
    const Outcome want = reference(batch, kind, initialTable());
    expectNear(got.table, want.table, 2e-5, "table");
    expectNear(got.scores, want.scores, 2e-5, "score");
    EXPECT_NEAR(got.loss, want.loss, 2e-5 * want.loss);
    EXPECT_NE(got.table, initialTable()) << "nothing was updated";
  }
}

TEST(SkipgramStep, GradientMatchesFiniteDifferences) {
  // One example (the first) with SGD, its rows all distinct: the rows move
  // by -lr times the gradient of that example's loss, which central
  // differences of the loss in float64 give independently.
  Batch one;
  one.centerIds.resize(1), one.contextIds.resize(1), one.negatives.resize(kK);
  one.centerOffsets = {0, 1}, one.contextOffsets = {0, 1};
  const std::vector<float> table = initialTable();
  const int64_t centerRow = one.centerIds[0], contextRow = 20 + one.contextIds[0];
  auto exampleLoss = [&](const std::vector<double> &w) {
    auto dotRows = [&](int64_t r1, int64_t r2) {
      double s = 0;
      for (int64_t d = 0; d < kD; ++d)
        s += w[size_t(r1 * kD + d)] * w[size_t(r2 * kD + d)];
      return s;
    };
    double loss = softplus(-dotRows(centerRow, contextRow));
    for (int64_t j = 0; j < kK; ++j)
      loss += softplus(dotRows(centerRow, 20 + one.negatives[size_t(j)]));
    return loss;
  };
  SkipgramStep s;
  std::vector<float> updated = table, scores(1);
  float loss = 0;
  s.centerIds = one.centerIds.data(), s.centerOffsets = one.centerOffsets.data();
  s.contextIds = one.contextIds.data(), s.contextOffsets = one.contextOffsets.data();
  s.negatives = one.negatives.data();
  s.centerIdCount = s.contextIdCount = 1;
  s.B = 1, s.K = kK, s.D = kD;
  s.center = {0, 20}, s.context = {20, 20}, s.negative = {20, 20};
  s.table = updated.data(), s.targetRows = kRows;
  s.optimizer.kind = OptimizerKind::Sgd, s.optimizer.lr = 1e-3;
  s.loss = &loss, s.scores = scores.data();
  EXPECT_EQ(skipgramStep(s), -1);
  const std::vector<double> w0(table.begin(), table.end());
  // The centre row and the context row (the negatives' rows differ from it
  // here, and each negative row once).
  for (int64_t row : {centerRow, contextRow})
    for (int64_t d = 0; d < kD; ++d) {
      std::vector<double> plus = w0, minus = w0;
      const double h = 1e-6;
      plus[size_t(row * kD + d)] += h, minus[size_t(row * kD + d)] -= h;
      const double numeric = (exampleLoss(plus) - exampleLoss(minus)) / (2 * h);
      const double analytic =
          (double(table[size_t(row * kD + d)]) - double(updated[size_t(row * kD + d)])) / 1e-3;
      EXPECT_NEAR(analytic, numeric, 2e-3 * (1 + std::abs(numeric))) << "row " << row << " d " << d;
    }
  EXPECT_NEAR(loss, exampleLoss(w0), 1e-5);
}

TEST(SkipgramStep, PerExampleIsTheSameForAnyTeamAndHogwildOnOneThreadEqualsIt) {
  const Batch batch;
  const int saved = teamSize();
  setTeamSize(1);
  const Outcome one = run(batch, OptimizerKind::Adagrad, SkipgramMode::PerExample, true, initialTable());
  const Outcome hogwildOne =
      run(batch, OptimizerKind::Adagrad, SkipgramMode::Hogwild, true, initialTable());
  setTeamSize(3);
  const Outcome three =
      run(batch, OptimizerKind::Adagrad, SkipgramMode::PerExample, true, initialTable());
  const Outcome hogwildThree =
      run(batch, OptimizerKind::Adagrad, SkipgramMode::Hogwild, true, initialTable());
  setTeamSize(saved);
  EXPECT_EQ(one.table, three.table);
  EXPECT_EQ(one.state, three.state);
  EXPECT_EQ(one.loss, three.loss);
  EXPECT_EQ(hogwildOne.table, one.table);
  EXPECT_EQ(hogwildOne.loss, one.loss);
  // Hogwild on three threads: another order of the same steps; near, and
  // updated everywhere the others are.
  EXPECT_NEAR(hogwildThree.loss, one.loss, 0.05 * one.loss);
}

TEST(SkipgramStep, EvaluationWritesNothing) {
  const Batch batch;
  const std::vector<float> table = initialTable();
  const Outcome eval = run(batch, OptimizerKind::Sgd, SkipgramMode::Hogwild, false, table);
  EXPECT_EQ(eval.table, table);
  // The scores and loss of the rows as they are: the reference's first
  // example sees the same rows.
  const Outcome ref = reference(batch, OptimizerKind::Sgd, table);
  EXPECT_NEAR(eval.scores[0], ref.scores[0], 1e-5);
}

TEST(SkipgramStep, BadIdsAreRefusedBeforeAnyRowChanges) {
  Batch batch;
  batch.negatives.back() = 20; // the negatives' table has rows 0..19
  const std::vector<float> table = initialTable();
  std::vector<float> copy = table;
  try {
    run(batch, OptimizerKind::Sgd, SkipgramMode::PerExample, true, copy);
    FAIL() << "no error";
  } catch (const IdOutOfRange &e) {
    EXPECT_EQ(e.operand, 4u);
    EXPECT_EQ(e.id, 20);
    EXPECT_EQ(e.position, kB * kK - 1);
  }
  EXPECT_EQ(copy, table);
  Batch bags;
  bags.centerOffsets[3] = bags.centerOffsets[2] - 1;
  EXPECT_THROW(run(bags, OptimizerKind::Sgd, SkipgramMode::PerExample, true, table),
               std::invalid_argument);
}

} // namespace
