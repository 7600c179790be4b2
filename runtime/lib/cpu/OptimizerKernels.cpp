//===- OptimizerKernels.cpp - dense and sparse optimizer updates ----------===//
//
// The formulas are in Kernels.h (OptimizerParams). Each optimizer is written
// once as an update of a contiguous span of values (with its state spans, in
// OptimizerRow.h); the dense update runs it over chunks of the parameter,
// the sparse update over each touched table row, so the two cannot drift
// apart. The fused embedding_update shares the per-row step and the global
// decay pass with sparseUpdate for the same reason.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"

#include "KernelSupport.h"
#include "OptimizerRow.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace embc::runtime::cpu {

// The span updates live in OptimizerRow.h (shared with the fused
// embedding_update).
using detail::checkStates;
using detail::elementwiseSpan;
using detail::Hyper;
using detail::kParallelWork;
using detail::lambApplySpan;
using detail::lambDirection;
using detail::lambMomentsSpan;
using detail::lambTrust;
using detail::makeHyper;
using detail::rowwiseAdagradRow;

namespace {

/// A chunk of a dense update: large enough to vectorise and amortise the
/// thread hand-off, small enough to spread a mid-sized parameter over cores.
constexpr int64_t kUpdateChunk = 4096;

} // namespace

// --- Dense update ---------------------------------------------------------------

namespace {

/// Reports the first index in [lo, lo + len) where w or a state is not
/// finite: a span update found one (rare, the run stops). rowLength > 0:
/// state0 has one value per row of that length.
template <class T>
void reportFirst(int64_t lo, int64_t len, const T *w, const T *s0, const T *s1, int64_t rowLength,
                 detail::LowestIndex &bad) {
  const bool rowState = rowLength > 0;
  for (int64_t i = lo; i < lo + len; ++i)
    if (!std::isfinite(w[i]) || (s0 && !std::isfinite(s0[rowState ? i / rowLength : i])) ||
        (s1 && !std::isfinite(s1[i]))) {
      bad.report(i);
      return;
    }
}

} // namespace

template <class T>
int64_t denseUpdate(const OptimizerParams &p, int64_t step, double lrScale, double gradScale, T *w,
                    const T *g, T *state0, T *state1, int64_t n, int64_t rowLength) {
  const Hyper<T> h = makeHyper<T>(p, step, lrScale, gradScale, "denseUpdate");
  checkStates(p, state0, state1, "denseUpdate");
  const bool parallel = n > kParallelWork / 4;
  detail::LowestIndex bad;

  if (p.kind == OptimizerKind::RowwiseAdagrad) {
    if (rowLength <= 0 || n % rowLength != 0)
      throw std::invalid_argument("denseUpdate(rowwise_adagrad): row length " +
                                  std::to_string(rowLength) + " does not divide the " +
                                  std::to_string(n) + " values");
    const int64_t rows = n / rowLength;
    parallelFor(rows, parallel, [&](int64_t rBegin, int64_t rEnd) {
      for (int64_t r = rBegin; r < rEnd; ++r)
        if (!rowwiseAdagradRow(h, w + r * rowLength, g + r * rowLength, state0[r], rowLength))
          reportFirst(r * rowLength, rowLength, w, state0, (const T *)nullptr, rowLength, bad);
    });
    return bad.get();
  }

  const int64_t chunks = (n + kUpdateChunk - 1) / kUpdateChunk;
  if (p.kind == OptimizerKind::Lamb) {
    // The trust ratio needs the norms of the whole parameter, so lamb runs in
    // three passes: moments, norms (fixed-order reduction), step.
    parallelFor(chunks, parallel, [&](int64_t cBegin, int64_t cEnd) {
      for (int64_t c = cBegin; c < cEnd; ++c) {
        const int64_t lo = c * kUpdateChunk, len = std::min(kUpdateChunk, n - lo);
        if (!lambMomentsSpan(h, g + lo, state0 + lo, state1 + lo, len))
          reportFirst(lo, len, w, state0, state1, 0, bad);
      }
    });
    const double w2 = detail::chunkedSum(n, 4, [&](int64_t lo, int64_t hi) {
      double sum = 0;
      for (int64_t i = lo; i < hi; ++i)
        sum += double(w[i]) * double(w[i]);
      return sum;
    });
    const double r2 = detail::chunkedSum(n, 16, [&](int64_t lo, int64_t hi) {
      double sum = 0;
      for (int64_t i = lo; i < hi; ++i) {
        const double r = double(lambDirection(h, w[i], state0[i], state1[i]));
        sum += r * r;
      }
      return sum;
    });
    const T trust = lambTrust<T>(w2, r2);
    parallelFor(chunks, parallel, [&](int64_t cBegin, int64_t cEnd) {
      for (int64_t c = cBegin; c < cEnd; ++c) {
        const int64_t lo = c * kUpdateChunk, len = std::min(kUpdateChunk, n - lo);
        if (!lambApplySpan(h, trust, w + lo, state0 + lo, state1 + lo, len))
          reportFirst(lo, len, w, state0, state1, 0, bad);
      }
    });
    return bad.get();
  }

  parallelFor(chunks, parallel, [&](int64_t cBegin, int64_t cEnd) {
    for (int64_t c = cBegin; c < cEnd; ++c) {
      const int64_t lo = c * kUpdateChunk, len = std::min(kUpdateChunk, n - lo);
      if (!elementwiseSpan(p.kind, h, w + lo, g + lo, state0 ? state0 + lo : nullptr,
                           state1 ? state1 + lo : nullptr, len))
        reportFirst(lo, len, w, state0, state1, 0, bad);
    }
  });
  return bad.get();
}

// --- Sparse update ----------------------------------------------------------------

template <class T>
SparseNonFinite sparseUpdate(const OptimizerParams &p, int64_t step, double lrScale,
                             double gradScale, T *table, int64_t rows, int64_t D,
                             const int64_t *uniqueRows, const T *vals, int64_t nnz, T *state0,
                             T *state1) {
  Hyper<T> h = makeHyper<T>(p, step, lrScale, gradScale, "sparseUpdate");
  checkStates(p, state0, state1, "sparseUpdate");
  for (int64_t k = 0; k < nnz; ++k) {
    // Rows must come from coalesceRows: in range, ascending and distinct, so
    // rows can be updated in parallel without two threads sharing one.
    if (uniqueRows[k] < 0 || uniqueRows[k] >= rows)
      throw std::out_of_range("sparseUpdate: row " + std::to_string(uniqueRows[k]) +
                              " (entry " + std::to_string(k) + ") is outside the table's " +
                              std::to_string(rows) + " rows");
    if (k > 0 && uniqueRows[k] <= uniqueRows[k - 1])
      throw std::invalid_argument("sparseUpdate: rows are not coalesced (entry " +
                                  std::to_string(k) + " is row " + std::to_string(uniqueRows[k]) +
                                  " after row " + std::to_string(uniqueRows[k - 1]) + ")");
  }

  const int64_t decayed = detail::applyGlobalDecay(p, h, table, rows, D, "sparseUpdate");
  if (decayed >= 0)
    return {decayed, -1};

  detail::LowestIndex bad;
  parallelFor(nnz, nnz * D > kParallelWork / 4, [&](int64_t kBegin, int64_t kEnd) {
    for (int64_t k = kBegin; k < kEnd; ++k)
      if (!detail::tableRowStep(p.kind, h, table, uniqueRows[k], D, vals + k * D, state0, state1))
        bad.report(k);
  });
  const int64_t k = bad.get();
  return k < 0 ? SparseNonFinite{} : SparseNonFinite{uniqueRows[k], k};
}

// --- Norms -------------------------------------------------------------------------

template <class T> double sumSquares(const T *x, int64_t n) {
  return detail::chunkedSum(n, 1, [x](int64_t lo, int64_t hi) {
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = lo; i < hi; ++i)
      sum += double(x[i]) * double(x[i]);
    return sum;
  });
}

// --- Explicit instantiations ------------------------------------------------

#define EMBC_INSTANTIATE_OPTIMIZER(T)                                                              \
  template int64_t denseUpdate<T>(const OptimizerParams &, int64_t, double, double, T *,         \
                                  const T *, T *, T *, int64_t, int64_t);                          \
  template SparseNonFinite sparseUpdate<T>(const OptimizerParams &, int64_t, double, double, T *, \
                                           int64_t, int64_t, const int64_t *, const T *, int64_t, \
                                           T *, T *);                                             \
  template double sumSquares<T>(const T *, int64_t);

EMBC_INSTANTIATE_OPTIMIZER(float)
EMBC_INSTANTIATE_OPTIMIZER(double)

#undef EMBC_INSTANTIATE_OPTIMIZER

} // namespace embc::runtime::cpu
