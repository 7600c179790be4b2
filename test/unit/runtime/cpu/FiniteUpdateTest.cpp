//===- FiniteUpdateTest.cpp - every update reports what it left not finite -===//
//
// The finite check of every update (docs/training.md, "Non-finite values"):
// each update kernel returns the first value (lowest index, whatever the
// threads) that it left NaN or infinite in the parameter, its table rows or
// its optimizer state, and -1 while everything is finite.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/FusedEmbeddingKernels.h"
#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/cpu/QuantizedKernels.h"
#include "embc/runtime/cpu/SkipgramKernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace embc::runtime::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

OptimizerParams optimizer(OptimizerKind kind, double lr) {
  OptimizerParams p;
  p.kind = kind;
  p.lr = lr;
  return p;
}

TEST(FiniteUpdate, DenseReportsTheLowestIndexWhateverTheThreads) {
  // Large enough to run in parallel chunks; two bad gradients far apart.
  const int64_t n = 1 << 17;
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adagrad, OptimizerKind::Adam,
                             OptimizerKind::Lamb}) {
    std::vector<float> w(n, 0.5f), g(n, 0.01f), s0(n, 0.0f), s1(n, 0.0f);
    EXPECT_EQ(denseUpdate(optimizer(kind, 0.1), 1, 1.0, 1.0, w.data(), g.data(), s0.data(),
                          s1.data(), n, n),
              -1)
        << enumName(kind);
    g[100000] = NAN;
    g[70001] = kInf;
    EXPECT_EQ(denseUpdate(optimizer(kind, 0.1), 2, 1.0, 1.0, w.data(), g.data(), s0.data(),
                          s1.data(), n, n),
              70001)
        << enumName(kind);
  }
}

TEST(FiniteUpdate, DenseReportsAnOverflowFromFiniteGradients) {
  // Adam: (1 - beta2) g^2 of a finite 1e22 overflows the second moment.
  const int64_t n = 64;
  std::vector<float> w(n, 0.5f), g(n, 1.0f), m(n, 0.0f), v(n, 0.0f);
  g[9] = 1e22f;
  EXPECT_EQ(denseUpdate(optimizer(OptimizerKind::Adam, 0.01), 1, 1.0, 1.0, w.data(), g.data(),
                        m.data(), v.data(), n, n),
            9);
  EXPECT_TRUE(std::isinf(v[9]));
  // Sgd: a learning rate of 1e38 sends w past float's range.
  std::vector<float> w2(n, 0.5f), g2(n, 0.0f);
  g2[33] = -10.0f;
  EXPECT_EQ(denseUpdate(optimizer(OptimizerKind::Sgd, 1e38), 1, 1.0, 1.0, w2.data(), g2.data(),
                        (float *)nullptr, (float *)nullptr, n, n),
            33);
  // Row-wise adagrad: the accumulator of row 3 (of 8 values each).
  std::vector<float> w3(n, 0.5f), g3(n, 0.0f), acc(n / 8, 0.0f);
  g3[3 * 8 + 5] = 3e20f; // its mean square, 1.1e40, overflows the f32 accumulator
  EXPECT_EQ(denseUpdate(optimizer(OptimizerKind::RowwiseAdagrad, 0.1), 1, 1.0, 1.0, w3.data(),
                        g3.data(), acc.data(), (float *)nullptr, n, 8),
            3 * 8);
}

TEST(FiniteUpdate, SparseReportsTheRowAndItsEntry) {
  const int64_t rows = 50, D = 8;
  std::vector<float> table(rows * D, 0.1f), s0(rows * D, 0.0f);
  const std::vector<int64_t> touched = {2, 7, 19, 40};
  std::vector<float> vals(touched.size() * D, 0.5f);
  vals[2 * D + 3] = NAN; // entry 2: row 19
  vals[3 * D] = kInf;    // entry 3: row 40
  const SparseNonFinite bad =
      sparseUpdate(optimizer(OptimizerKind::Adagrad, 0.1), 1, 1.0, 1.0, table.data(), rows, D,
                   touched.data(), vals.data(), int64_t(touched.size()), s0.data(),
                   (float *)nullptr);
  EXPECT_EQ(bad.row, 19);
  EXPECT_EQ(bad.entry, 2);
  // Every touched row was still updated: the caller stops the run.
  EXPECT_NE(table[2 * D], 0.1f);
  EXPECT_NE(table[40 * D + 1], 0.1f);
}

TEST(FiniteUpdate, FusedEmbeddingUpdateReportsTheRow) {
  const int64_t rows = 30, D = 4;
  std::vector<float> table(rows * D, 0.1f);
  const std::vector<int64_t> ids = {5, 12, 5, 29};
  std::vector<float> values(ids.size() * D, 0.25f);
  values[1 * D + 2] = 1e38f; // id 12: lr 10 takes it past float's range
  GradSource<float> src;
  src.kind = GradSource<float>::Kind::Rows;
  src.ids = ids.data();
  src.n = int64_t(ids.size());
  src.rows = rows;
  src.values = values.data();
  EXPECT_EQ(embeddingUpdate(optimizer(OptimizerKind::Sgd, 10.0), 1, 1.0, 1.0, table.data(), rows,
                            D, &src, 1, (float *)nullptr, (float *)nullptr),
            12);
  values[1 * D + 2] = 0.25f;
  EXPECT_EQ(embeddingUpdate(optimizer(OptimizerKind::Sgd, 10.0), 2, 1.0, 1.0, table.data(), rows,
                            D, &src, 1, (float *)nullptr, (float *)nullptr),
            12); // the row stays infinite: still reported
}

TEST(FiniteUpdate, HalfStorageOverflowIsReportedAndTheRowKept) {
  // An f32 step past fp16's range (65504) cannot be stored in an fp16 row.
  const int64_t rows = 10, D = 4;
  std::vector<uint16_t> data(rows * D, 0); // fp16 zeros
  QuantizedTable t{Storage::F16, data.data(), nullptr, rows, D};
  const std::vector<int64_t> touched = {3, 6};
  std::vector<float> vals = {0, 0, 0, 0, 0, -1e6f, 0, 0};
  const SparseNonFinite bad =
      quantizedSparseUpdate(optimizer(OptimizerKind::Sgd, 1.0), 1, 1.0, 1.0, t, touched.data(),
                            vals.data(), 2, nullptr, nullptr, 7, {{0, 1}});
  EXPECT_EQ(bad.row, 6);
  EXPECT_EQ(bad.entry, 1);
  // Int8 saturates at fp16's range instead (rowwiseParams): finite, no report.
  std::vector<uint8_t> codes(rows * D, 0);
  std::vector<uint16_t> qparams(rows * 2, 0);
  QuantizedTable q{Storage::Int8, codes.data(), qparams.data(), rows, D};
  EXPECT_FALSE(quantizedSparseUpdate(optimizer(OptimizerKind::Sgd, 1.0), 1, 1.0, 1.0, q,
                                     touched.data(), vals.data(), 2, nullptr, nullptr, 7,
                                     {{0, 1}}));
}

TEST(FiniteUpdate, SkipgramReportsTheRowAStepOverflowed) {
  // Two examples of one centre, one context and one negative id each. Example
  // 1's centre row is huge: its negative (row 5) scores 1, and the step of
  // lr 1e10 takes that row past float's range.
  const int64_t D = 4, rows = 6;
  std::vector<float> table(rows * D, 0.5f);
  const std::vector<int64_t> centre = {0, 1}, offsets = {0, 1, 2}, context = {3, 4},
                             negatives = {2, 5};
  for (int64_t d = 0; d < D; ++d)
    table[1 * D + d] = 1e30f;
  SkipgramStep s;
  s.centerIds = centre.data();
  s.centerOffsets = offsets.data();
  s.contextIds = context.data();
  s.contextOffsets = offsets.data();
  s.negatives = negatives.data();
  s.centerIdCount = s.contextIdCount = 2;
  s.B = 2, s.K = 1, s.D = D;
  s.center = {0, rows};
  s.context = {0, rows};
  s.negative = {0, rows};
  s.table = table.data();
  s.targetRows = rows;
  s.optimizer = optimizer(OptimizerKind::Sgd, 1e10);
  float loss = 0;
  std::vector<float> scores(2);
  s.loss = &loss;
  s.scores = scores.data();
  EXPECT_EQ(skipgramStep(s), 5);
  EXPECT_TRUE(std::isinf(table[5 * D]));
  // Evaluation (no update) reports nothing.
  s.update = false;
  EXPECT_EQ(skipgramStep(s), -1);
}

} // namespace
} // namespace embc::runtime::cpu
