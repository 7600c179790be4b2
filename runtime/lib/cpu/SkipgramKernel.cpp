//===- SkipgramKernel.cpp - skip-gram steps with per-example updates ------===//
//
// The maths and the two modes: SkipgramKernel.h. An example reads about
// (2 + K) rows and writes as many; with word2vec's settings (D = 100, K = 5)
// that is a few microseconds of dots and row steps, so the per-example code
// is compiled for AVX-512 and AVX2 as well as the library's base ISA and
// picked at load time (target_clones): the rest of the library stays at
// x86-64-v2.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/SkipgramKernel.h"

#include "embc/runtime/cpu/Parallel.h"

#include "OptimizerRow.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::cpu {

namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EMBC_SKIPGRAM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EMBC_SKIPGRAM_CLONES
#endif

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

/// Per-thread vectors of one example: c, x, the centre's gradient, a row's
/// gradient (D each) and the negatives' scores (K).
struct Scratch {
  std::vector<float> c, x, dc, g, scores;
  Scratch(int64_t D, int64_t K)
      : c(size_t(D)), x(size_t(D)), dc(size_t(D)), g(size_t(D)), scores(size_t(K)) {}
};

/// out = the sum of the bag's rows (zeros for an empty bag).
inline void sumRows(float *__restrict out, const float *table, int64_t D, const int64_t *ids,
                    int64_t begin, int64_t end, int64_t rowOffset) {
  detail::fillZero(out, D);
  for (int64_t i = begin; i < end; ++i) {
    const float *row = table + (rowOffset + ids[i]) * D;
    for (int64_t d = 0; d < D; ++d)
      out[d] += row[d];
  }
}

/// Example b: its scores and loss, and (s.update) its rows' steps.
EMBC_SKIPGRAM_CLONES
double runExample(const SkipgramStep &s, const detail::Hyper<float> &h, int64_t b, Scratch &w) {
  const int64_t D = s.D, K = s.K;
  float *table = s.table;
  float *c = w.c.data(), *x = w.x.data(), *dc = w.dc.data(), *g = w.g.data();
  const int64_t c0 = s.centerOffsets[b], c1 = s.centerOffsets[b + 1];
  const int64_t x0 = s.contextOffsets[b], x1 = s.contextOffsets[b + 1];
  sumRows(c, table, D, s.centerIds, c0, c1, s.center.rowOffset);
  sumRows(x, table, D, s.contextIds, x0, x1, s.context.rowOffset);
  const int64_t *negatives = s.negatives + b * K;
  // The next example's centre and context rows are on their way meanwhile.
  if (b + 1 < s.B) {
    for (int64_t i = s.centerOffsets[b + 1]; i < s.centerOffsets[b + 2]; ++i)
      __builtin_prefetch(table + (s.center.rowOffset + s.centerIds[i]) * D);
    for (int64_t i = s.contextOffsets[b + 1]; i < s.contextOffsets[b + 2]; ++i)
      __builtin_prefetch(table + (s.context.rowOffset + s.contextIds[i]) * D);
  }
  const float pos = detail::dot(c, x, D);
  double loss = softplus(-double(pos));
  for (int64_t j = 0; j < K; ++j) {
    const float *n = table + (s.negative.rowOffset + negatives[j]) * D;
    w.scores[size_t(j)] = detail::dot(c, n, D);
    loss += softplus(double(w.scores[size_t(j)]));
  }
  s.scores[b] = pos;
  if (!s.update)
    return loss;

  // Gradients from the rows as the example found them.
  const float gp = sigmoid(pos) - 1.0f;
  for (int64_t d = 0; d < D; ++d)
    dc[d] = gp * x[d];
  for (int64_t j = 0; j < K; ++j) {
    const float gj = sigmoid(w.scores[size_t(j)]);
    detail::axpy(gj, table + (s.negative.rowOffset + negatives[j]) * D, dc, D);
  }
  const OptimizerKind kind = s.optimizer.kind;
  for (int64_t j = 0; j < K; ++j) {
    const float gj = sigmoid(w.scores[size_t(j)]);
    for (int64_t d = 0; d < D; ++d)
      g[d] = gj * c[d];
    detail::tableRowStep(kind, h, table, s.negative.rowOffset + negatives[j], D, g, s.state0,
                         s.state1);
  }
  for (int64_t d = 0; d < D; ++d)
    g[d] = gp * c[d];
  for (int64_t i = x0; i < x1; ++i)
    detail::tableRowStep(kind, h, table, s.context.rowOffset + s.contextIds[i], D, g, s.state0,
                         s.state1);
  for (int64_t i = c0; i < c1; ++i)
    detail::tableRowStep(kind, h, table, s.center.rowOffset + s.centerIds[i], D, dc, s.state0,
                         s.state1);
  return loss;
}

void checkBags(const int64_t *offsets, int64_t B, int64_t count, const char *what) {
  if (offsets[0] != 0 || offsets[B] != count)
    throw std::invalid_argument(std::string("skipgram_step: the ") + what + " offsets run from " +
                                std::to_string(offsets[0]) + " to " + std::to_string(offsets[B]) +
                                ", expected 0 to " + std::to_string(count) + " (the ids)");
  for (int64_t b = 0; b < B; ++b)
    if (offsets[b + 1] < offsets[b])
      throw std::invalid_argument(std::string("skipgram_step: the ") + what +
                                  " offsets decrease at bag " + std::to_string(b));
}

void checkIds(const int64_t *ids, int64_t n, int64_t rows, size_t operand) {
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= rows)
      throw IdOutOfRange(operand, i, ids[i], rows);
}

} // namespace

void skipgramStep(const SkipgramStep &s) {
  if (s.B < 1 || s.K < 0 || s.D < 1)
    throw std::invalid_argument("skipgram_step: B " + std::to_string(s.B) + ", K " +
                                std::to_string(s.K) + ", D " + std::to_string(s.D));
  for (const SkipgramRole *role : {&s.center, &s.context, &s.negative})
    if (role->rowOffset < 0 || role->rows < 1 || role->rowOffset + role->rows > s.targetRows)
      throw std::invalid_argument("skipgram_step: rows [" + std::to_string(role->rowOffset) +
                                  ", " + std::to_string(role->rowOffset + role->rows) +
                                  ") are not in the target's " + std::to_string(s.targetRows));
  if (s.update && s.optimizer.globalDecay && s.optimizer.weightDecay > 0)
    throw std::invalid_argument("skipgram_step: global weight decay has no per-example form; "
                                "use lazy decay");
  // Everything is checked before any row changes.
  checkBags(s.centerOffsets, s.B, s.centerIdCount, "centre");
  checkBags(s.contextOffsets, s.B, s.contextIdCount, "context");
  checkIds(s.centerIds, s.centerIdCount, s.center.rows, 0);
  checkIds(s.contextIds, s.contextIdCount, s.context.rows, 2);
  checkIds(s.negatives, s.B * s.K, s.negative.rows, 4);
  if (s.update)
    detail::checkStates(s.optimizer, s.state0, s.state1, "skipgram_step");
  const detail::Hyper<float> h =
      detail::makeHyper<float>(s.optimizer, s.optimizerStep, s.lrScale, 1.0, "skipgram_step");

  std::vector<double> losses(size_t(s.B));
  if (s.update && s.mode == SkipgramMode::PerExample) {
    Scratch w(s.D, s.K);
    for (int64_t b = 0; b < s.B; ++b)
      losses[size_t(b)] = runExample(s, h, b, w);
  } else {
    parallelFor(s.B, true, [&](int64_t b0, int64_t b1) {
      Scratch w(s.D, s.K);
      for (int64_t b = b0; b < b1; ++b)
        losses[size_t(b)] = runExample(s, h, b, w);
    });
  }
  double total = 0;
  for (double l : losses)
    total += l;
  *s.loss = float(total / double(s.B));
}

} // namespace embc::runtime::cpu
