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
#include <mutex>
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

/// Per-thread vectors of one example: c, x, the centre's gradient and a
/// row's gradient (D each), and the negatives' gradient factors.
struct Scratch {
  std::vector<float> c, x, dc, g, factors; ///< factors: the negatives' (K)
  Scratch(int64_t D, int64_t K)
      : c(size_t(D)), x(size_t(D)), dc(size_t(D)), g(size_t(D)), factors(size_t(K)) {}
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

/// <a, b> in 16 lanes summed as a tree: one vector register per step in
/// the AVX-512 clone, no serial chain of scalar adds at the end (an omp simd
/// reduction ends with one, 16 adds long, six times an example).
inline float dot16(const float *__restrict a, const float *__restrict b, int64_t n) {
  float lanes[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; ++l)
      lanes[l] += a[i + l] * b[i + l];
  // The tail in a scalar of its own: adding it into single lanes would
  // store them one by one and stall the tree's wide loads of the same bytes.
  float tail = 0;
  for (; i < n; ++i)
    tail += a[i] * b[i];
  for (int width = 8; width >= 1; width /= 2)
    for (int l = 0; l < width; ++l)
      lanes[l] += lanes[l + width];
  return lanes[0] + tail;
}

/// Asks for every cache line of a row.
inline void prefetchRow(const float *row, int64_t D) {
  for (int64_t d = 0; d < D; d += 16)
    __builtin_prefetch(row + d);
}

/// An example's loss, sum_t softplus(x_t) = sum_t max(x_t, 0) + log(prod_t
/// (1 + exp(-|x_t|))): one log per example instead of one per target (each
/// factor is in (1, 2], so the product of a few dozen cannot overflow).
struct Loss {
  float linear = 0, product = 1;
  double value() const { return double(linear) + std::log(double(product)); }
};

/// One target's score s against label y (1: the context, 0: a negative):
/// adds its loss, softplus(-s) or softplus(s), and returns the gradient
/// factor sigmoid(s) - y. One exp serves both.
inline float scoreTerm(float score, float label, Loss &loss) {
  const float e = std::exp(-std::abs(score));
  const float sigmoid = score >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
  const float x = label > 0 ? -score : score;
  loss.linear += std::max(x, 0.0f);
  loss.product *= 1.0f + e;
  if (loss.product > 1e30f) { // only past ~100 targets
    loss.linear += std::log(loss.product);
    loss.product = 1;
  }
  return sigmoid - label;
}

/// True when the example's targets (its context rows and negatives) are all
/// different rows of the target.
inline bool distinctTargets(const SkipgramStep &s, const int64_t *negatives, int64_t x0,
                            int64_t x1) {
  for (int64_t j = 0; j < s.K; ++j) {
    const int64_t row = s.negative.rowOffset + negatives[j];
    for (int64_t i = x0; i < x1; ++i)
      if (row == s.context.rowOffset + s.contextIds[i])
        return false;
    for (int64_t k = 0; k < j; ++k)
      if (negatives[k] == negatives[j])
        return false;
  }
  return true;
}

/// Example b: its scores and loss, and (s.update) its rows' steps.
EMBC_SKIPGRAM_CLONES
double runExample(const SkipgramStep &s, const detail::Hyper<float> &h, bool plainSgd, int64_t b,
                  Scratch &w) {
  const int64_t D = s.D, K = s.K;
  float *table = s.table;
  float *c = w.c.data(), *x = w.x.data(), *dc = w.dc.data(), *g = w.g.data();
  const int64_t c0 = s.centerOffsets[b], c1 = s.centerOffsets[b + 1];
  const int64_t x0 = s.contextOffsets[b], x1 = s.contextOffsets[b + 1];
  const int64_t *negatives = s.negatives + b * K;
  // The next example's rows are on their way meanwhile: they are random
  // rows of tables larger than the caches, and this example's work hides
  // most of their latency. Its negatives' rows are asked for one by one
  // beside this example's (below): all at once, their misses filled the
  // core's line-fill buffers and the prefetches themselves stalled (15 % of
  // the kernel).
  const bool next = b + 1 < s.B;
  if (next) {
    for (int64_t i = s.centerOffsets[b + 1]; i < s.centerOffsets[b + 2]; ++i)
      prefetchRow(table + (s.center.rowOffset + s.centerIds[i]) * D, D);
    for (int64_t i = s.contextOffsets[b + 1]; i < s.contextOffsets[b + 2]; ++i)
      prefetchRow(table + (s.context.rowOffset + s.contextIds[i]) * D, D);
  }
  sumRows(c, table, D, s.centerIds, c0, c1, s.center.rowOffset);
  sumRows(x, table, D, s.contextIds, x0, x1, s.context.rowOffset);
  const float pos = dot16(c, x, D);
  s.scores[b] = pos;
  Loss loss;
  if (!s.update) {
    scoreTerm(pos, 1.0f, loss);
    for (int64_t j = 0; j < K; ++j) {
      if (next)
        prefetchRow(table + (s.negative.rowOffset + negatives[K + j]) * D, D);
      scoreTerm(dot16(c, table + (s.negative.rowOffset + negatives[j]) * D, D), 0.0f, loss);
    }
    return loss.value();
  }

  // word2vec's order: the context, then each negative, each scored against
  // its row as it is now and stepped at once; the centre's gradient gathers
  // every target's row as read before its own step; the centre rows last.
  const OptimizerKind kind = s.optimizer.kind;
  const float lr = h.lr;
  const float gp = scoreTerm(pos, 1.0f, loss);
  for (int64_t d = 0; d < D; ++d)
    dc[d] = gp * x[d];
  if (plainSgd) {
    for (int64_t i = x0; i < x1; ++i) {
      float *row = table + (s.context.rowOffset + s.contextIds[i]) * D;
      detail::axpy(-lr * gp, c, row, D);
    }
  } else {
    for (int64_t d = 0; d < D; ++d)
      g[d] = gp * c[d];
    for (int64_t i = x0; i < x1; ++i)
      (void)detail::tableRowStep(kind, h, table, s.context.rowOffset + s.contextIds[i], D, g,
                                 s.state0, s.state1); // checked per example below
  }
  // When every target row is a different row, no step changes a row that a
  // later target reads: all scores can be taken first, side by side, instead
  // of as one chain of dot -> exp -> step per target (the same numbers).
  float *factors = w.factors.data();
  const bool distinct = distinctTargets(s, negatives, x0, x1);
  if (distinct) {
    for (int64_t j = 0; j < K; ++j)
      factors[j] = dot16(c, table + (s.negative.rowOffset + negatives[j]) * D, D);
    for (int64_t j = 0; j < K; ++j)
      factors[j] = scoreTerm(factors[j], 0.0f, loss);
  }
  for (int64_t j = 0; j < K; ++j) {
    if (next)
      prefetchRow(table + (s.negative.rowOffset + negatives[K + j]) * D, D);
    float *row = table + (s.negative.rowOffset + negatives[j]) * D;
    const float gj = distinct ? factors[j] : scoreTerm(dot16(c, row, D), 0.0f, loss);
    if (plainSgd) {
      const float step = -lr * gj;
      for (int64_t d = 0; d < D; ++d) {
        const float r = row[d];
        dc[d] += gj * r;
        row[d] = r + step * c[d];
      }
    } else {
      detail::axpy(gj, row, dc, D);
      for (int64_t d = 0; d < D; ++d)
        g[d] = gj * c[d];
      (void)detail::tableRowStep(kind, h, table, s.negative.rowOffset + negatives[j], D, g,
                                 s.state0, s.state1); // checked per example below
    }
  }
  for (int64_t i = c0; i < c1; ++i) {
    if (plainSgd)
      detail::axpy(-lr, dc, table + (s.center.rowOffset + s.centerIds[i]) * D, D);
    else
      (void)detail::tableRowStep(kind, h, table, s.center.rowOffset + s.centerIds[i], D, dc,
                                 s.state0, s.state1); // checked per example below
  }
  return loss.value();
}

/// The first row of example b (its centre rows, context rows, then its
/// negatives) that is not finite, or -1: the finite check of the rows an
/// example stepped, read back while they are in cache.
int64_t firstNonFiniteRow(const SkipgramStep &s, int64_t b) {
  const bool rowwise = s.optimizer.kind == OptimizerKind::RowwiseAdagrad;
  auto bad = [&](int64_t row) {
    return !detail::allFinite(s.table + row * s.D, s.D) ||
           (s.state0 && !detail::allFinite(s.state0 + (rowwise ? row : row * s.D),
                                           rowwise ? 1 : s.D)) ||
           (s.state1 && !detail::allFinite(s.state1 + row * s.D, s.D));
  };
  for (int64_t i = s.centerOffsets[b]; i < s.centerOffsets[b + 1]; ++i)
    if (bad(s.center.rowOffset + s.centerIds[i]))
      return s.center.rowOffset + s.centerIds[i];
  for (int64_t i = s.contextOffsets[b]; i < s.contextOffsets[b + 1]; ++i)
    if (bad(s.context.rowOffset + s.contextIds[i]))
      return s.context.rowOffset + s.contextIds[i];
  for (int64_t j = 0; j < s.K; ++j)
    if (bad(s.negative.rowOffset + s.negatives[b * s.K + j]))
      return s.negative.rowOffset + s.negatives[b * s.K + j];
  return -1;
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

int64_t skipgramStep(const SkipgramStep &s) {
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

  // Plain SGD (word2vec's) steps rows in the same pass that reads them.
  const bool plainSgd = s.optimizer.kind == OptimizerKind::Sgd && s.optimizer.momentum == 0 &&
                        s.optimizer.weightDecay == 0;
  std::vector<double> losses(size_t(s.B));
  // The first example (lowest b) whose rows a step left not finite, and
  // that row; found rarely (the run stops), so a lock is cheap enough.
  std::mutex badLock;
  int64_t badExample = s.B, badRow = -1;
  auto example = [&](int64_t b, Scratch &w) {
    losses[size_t(b)] = runExample(s, h, plainSgd, b, w);
    if (!s.update)
      return;
    if (const int64_t row = firstNonFiniteRow(s, b); row >= 0) {
      std::lock_guard<std::mutex> hold(badLock);
      if (b < badExample)
        badExample = b, badRow = row;
    }
  };
  if (s.update && s.mode == SkipgramMode::PerExample) {
    Scratch w(s.D, s.K);
    for (int64_t b = 0; b < s.B; ++b)
      example(b, w);
  } else {
    parallelFor(s.B, true, [&](int64_t b0, int64_t b1) {
      Scratch w(s.D, s.K);
      for (int64_t b = b0; b < b1; ++b)
        example(b, w);
    });
  }
  double total = 0;
  for (double l : losses)
    total += l;
  *s.loss = float(total / double(s.B));
  return badRow;
}

} // namespace embc::runtime::cpu
