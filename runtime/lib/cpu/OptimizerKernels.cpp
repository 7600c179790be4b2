//===- OptimizerKernels.cpp - dense and sparse optimizer updates ----------===//
//
// The formulas are in Kernels.h (OptimizerParams). Each optimizer is written
// once as an update of a contiguous span of values (with its state spans);
// the dense update runs it over chunks of the parameter, the sparse update
// over each touched table row, so the two cannot drift apart. The only
// reductions (lamb's norms, rowwise_adagrad's row mean) are summed in a fixed
// order, so updates are deterministic for any thread count.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Kernels.h"

#include "KernelSupport.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace embc::runtime::cpu {

using detail::kParallelWork;

namespace {

const char *optimizerName(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::Sgd:
    return "sgd";
  case OptimizerKind::Adagrad:
    return "adagrad";
  case OptimizerKind::RowwiseAdagrad:
    return "rowwise_adagrad";
  case OptimizerKind::Adam:
    return "adam";
  case OptimizerKind::AdamW:
    return "adamw";
  case OptimizerKind::Lamb:
    return "lamb";
  }
  throw std::invalid_argument("unknown optimizer kind " + std::to_string(static_cast<int>(kind)));
}

/// The scalars of one update, converted to T once so inner loops stay in T.
template <class T> struct Hyper {
  T lr, gradScale, wd, momentum, beta1, beta2, eps;
  T invBias1, invBias2; ///< 1 / (1 - beta^t), Adam's bias corrections
  T decayScale;         ///< 1 - lr wd, the decoupled / global decay factor
  /// Add wd * w to the gradient (coupled decay) when updating a span.
  bool coupled;
  /// Multiply the span by decayScale first (adamw's decoupled decay).
  bool decoupled;
};

template <class T>
Hyper<T> makeHyper(const OptimizerParams &p, int64_t step, double lrScale, double gradScale,
                   const char *where) {
  const char *name = optimizerName(p.kind);
  const bool adamFamily = p.kind == OptimizerKind::Adam || p.kind == OptimizerKind::AdamW ||
                          p.kind == OptimizerKind::Lamb;
  if (adamFamily && step < 1)
    throw std::invalid_argument(std::string(where) + "(" + name + "): step " +
                                std::to_string(step) + " must be >= 1 (1-based, for the bias correction)");
  const double lr = p.lr * lrScale;
  Hyper<T> h{};
  h.lr = T(lr);
  h.gradScale = T(gradScale);
  h.wd = T(p.weightDecay);
  h.momentum = T(p.momentum);
  h.beta1 = T(p.beta1);
  h.beta2 = T(p.beta2);
  h.eps = T(p.eps);
  if (adamFamily) {
    h.invBias1 = T(1.0 / (1.0 - std::pow(p.beta1, double(step))));
    h.invBias2 = T(1.0 / (1.0 - std::pow(p.beta2, double(step))));
  }
  h.decayScale = T(1.0 - lr * p.weightDecay);
  const bool hasDecay = p.weightDecay != 0;
  h.coupled = hasDecay && p.kind != OptimizerKind::AdamW && p.kind != OptimizerKind::Lamb;
  h.decoupled = hasDecay && p.kind == OptimizerKind::AdamW;
  return h;
}

void requireState(const void *state, const char *which, const OptimizerParams &p,
                  const char *where) {
  if (!state)
    throw std::invalid_argument(std::string(where) + "(" + optimizerName(p.kind) + "): " + which +
                                " is null but this optimizer keeps it");
}

void checkStates(const OptimizerParams &p, const void *state0, const void *state1,
                 const char *where) {
  switch (p.kind) {
  case OptimizerKind::Sgd:
    if (p.momentum != 0)
      requireState(state0, "state0 (momentum buffer)", p, where);
    return;
  case OptimizerKind::Adagrad:
  case OptimizerKind::RowwiseAdagrad:
    requireState(state0, "state0 (accumulator)", p, where);
    return;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
  case OptimizerKind::Lamb:
    requireState(state0, "state0 (first moment)", p, where);
    requireState(state1, "state1 (second moment)", p, where);
    return;
  }
}

// --- Span updates (w, g and states contiguous, len values) ----------------------

template <class T>
void sgdSpan(const Hyper<T> &h, T *__restrict w, const T *__restrict g, T *__restrict m,
             int64_t len) {
  const T wd = h.coupled ? h.wd : T(0);
  if (h.momentum == T(0)) {
    for (int64_t i = 0; i < len; ++i)
      w[i] -= h.lr * (h.gradScale * g[i] + wd * w[i]);
    return;
  }
  for (int64_t i = 0; i < len; ++i) {
    m[i] = h.momentum * m[i] + (h.gradScale * g[i] + wd * w[i]);
    w[i] -= h.lr * m[i];
  }
}

template <class T>
void adagradSpan(const Hyper<T> &h, T *__restrict w, const T *__restrict g, T *__restrict a,
                 int64_t len) {
  const T wd = h.coupled ? h.wd : T(0);
  for (int64_t i = 0; i < len; ++i) {
    const T gi = h.gradScale * g[i] + wd * w[i];
    a[i] += gi * gi;
    w[i] -= h.lr * gi / (std::sqrt(a[i]) + h.eps);
  }
}

/// One row: its single accumulator grows by the mean squared gradient.
template <class T>
void rowwiseAdagradRow(const Hyper<T> &h, T *__restrict w, const T *__restrict g, T &accumulator,
                       int64_t len) {
  if (len == 0)
    return;
  const T wd = h.coupled ? h.wd : T(0);
  double sumSq = 0;
  for (int64_t i = 0; i < len; ++i) {
    const double gi = double(h.gradScale * g[i] + wd * w[i]);
    sumSq += gi * gi;
  }
  accumulator += T(sumSq / double(len));
  const T step = h.lr / (std::sqrt(accumulator) + h.eps);
  for (int64_t i = 0; i < len; ++i)
    w[i] -= step * (h.gradScale * g[i] + wd * w[i]);
}

/// Adam's moments and step (adam with coupled decay, adamw with decoupled).
template <class T>
void adamSpan(const Hyper<T> &h, T *__restrict w, const T *__restrict g, T *__restrict m,
              T *__restrict v, int64_t len) {
  const T wd = h.coupled ? h.wd : T(0);
  const T scale = h.decoupled ? h.decayScale : T(1);
  for (int64_t i = 0; i < len; ++i) {
    const T gi = h.gradScale * g[i] + wd * w[i];
    m[i] = h.beta1 * m[i] + (T(1) - h.beta1) * gi;
    v[i] = h.beta2 * v[i] + (T(1) - h.beta2) * gi * gi;
    const T mh = m[i] * h.invBias1, vh = v[i] * h.invBias2;
    w[i] = scale * w[i] - h.lr * mh / (std::sqrt(vh) + h.eps);
  }
}

/// Lamb, pass 1: the moments (as Adam's, no coupled decay).
template <class T>
void lambMomentsSpan(const Hyper<T> &h, const T *__restrict g, T *__restrict m, T *__restrict v,
                     int64_t len) {
  for (int64_t i = 0; i < len; ++i) {
    const T gi = h.gradScale * g[i];
    m[i] = h.beta1 * m[i] + (T(1) - h.beta1) * gi;
    v[i] = h.beta2 * v[i] + (T(1) - h.beta2) * gi * gi;
  }
}

/// Lamb's update direction r = mh / (sqrt(vh) + eps) + wd w of one value.
template <class T> inline T lambDirection(const Hyper<T> &h, T w, T m, T v) {
  return m * h.invBias1 / (std::sqrt(v * h.invBias2) + h.eps) + h.wd * w;
}

/// Lamb, pass 2: sums of w^2 and r^2 over a span, in double.
template <class T>
void lambNormsSpan(const Hyper<T> &h, const T *__restrict w, const T *__restrict m,
                   const T *__restrict v, int64_t len, double &w2, double &r2) {
  for (int64_t i = 0; i < len; ++i) {
    const double r = double(lambDirection(h, w[i], m[i], v[i]));
    w2 += double(w[i]) * double(w[i]);
    r2 += r * r;
  }
}

template <class T> T lambTrust(double w2, double r2) {
  return w2 > 0 && r2 > 0 ? T(std::sqrt(w2) / std::sqrt(r2)) : T(1);
}

/// Lamb, pass 3: w -= lr trust r.
template <class T>
void lambApplySpan(const Hyper<T> &h, T trust, T *__restrict w, const T *__restrict m,
                   const T *__restrict v, int64_t len) {
  const T step = h.lr * trust;
  for (int64_t i = 0; i < len; ++i)
    w[i] -= step * lambDirection(h, w[i], m[i], v[i]);
}

/// Elementwise optimizers (sgd, adagrad, adam, adamw) over one span.
template <class T>
void elementwiseSpan(OptimizerKind kind, const Hyper<T> &h, T *w, const T *g, T *s0, T *s1,
                     int64_t len) {
  switch (kind) {
  case OptimizerKind::Sgd:
    sgdSpan(h, w, g, s0, len);
    return;
  case OptimizerKind::Adagrad:
    adagradSpan(h, w, g, s0, len);
    return;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    adamSpan(h, w, g, s0, s1, len);
    return;
  case OptimizerKind::RowwiseAdagrad:
  case OptimizerKind::Lamb:
    break;
  }
  throw std::logic_error(std::string("elementwiseSpan: ") + optimizerName(kind) +
                         " is not elementwise");
}

/// A chunk of a dense update: large enough to vectorise and amortise the
/// thread hand-off, small enough to spread a mid-sized parameter over cores.
constexpr int64_t kUpdateChunk = 4096;

} // namespace

// --- Dense update ---------------------------------------------------------------

template <class T>
void denseUpdate(const OptimizerParams &p, int64_t step, double lrScale, double gradScale, T *w,
                 const T *g, T *state0, T *state1, int64_t n, int64_t rowLength) {
  const Hyper<T> h = makeHyper<T>(p, step, lrScale, gradScale, "denseUpdate");
  checkStates(p, state0, state1, "denseUpdate");
  const bool parallel = n > kParallelWork / 4;

  if (p.kind == OptimizerKind::RowwiseAdagrad) {
    if (rowLength <= 0 || n % rowLength != 0)
      throw std::invalid_argument("denseUpdate(rowwise_adagrad): row length " +
                                  std::to_string(rowLength) + " does not divide the " +
                                  std::to_string(n) + " values");
    const int64_t rows = n / rowLength;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t r = 0; r < rows; ++r)
      rowwiseAdagradRow(h, w + r * rowLength, g + r * rowLength, state0[r], rowLength);
    return;
  }

  const int64_t chunks = (n + kUpdateChunk - 1) / kUpdateChunk;
  if (p.kind == OptimizerKind::Lamb) {
    // The trust ratio needs the norms of the whole parameter, so lamb runs in
    // three passes: moments, norms (fixed-order reduction), step.
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t lo = c * kUpdateChunk, len = std::min(kUpdateChunk, n - lo);
      lambMomentsSpan(h, g + lo, state0 + lo, state1 + lo, len);
    }
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
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t lo = c * kUpdateChunk, len = std::min(kUpdateChunk, n - lo);
      lambApplySpan(h, trust, w + lo, state0 + lo, state1 + lo, len);
    }
    return;
  }

#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t lo = c * kUpdateChunk, len = std::min(kUpdateChunk, n - lo);
    elementwiseSpan(p.kind, h, w + lo, g + lo, state0 ? state0 + lo : nullptr,
                    state1 ? state1 + lo : nullptr, len);
  }
}

// --- Sparse update ----------------------------------------------------------------

// Global decay (p.globalDecay and weightDecay > 0) is exact only where the
// decay of an untouched row does not depend on optimizer state: sgd without
// momentum (w -= lr (g + wd w) = (1 - lr wd) w - lr g) and adamw (decoupled).
// For the others the compiler refuses global decay on a table, so a plan
// asking for it here is an error, reported with std::invalid_argument.
template <class T>
void sparseUpdate(const OptimizerParams &p, int64_t step, double lrScale, double gradScale,
                  T *table, int64_t rows, int64_t D, const int64_t *uniqueRows, const T *vals,
                  int64_t nnz, T *state0, T *state1) {
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

  if (p.globalDecay && p.weightDecay > 0) {
    const bool plainSgd = p.kind == OptimizerKind::Sgd && p.momentum == 0;
    if (!plainSgd && p.kind != OptimizerKind::AdamW)
      throw std::invalid_argument(std::string("sparseUpdate(") + optimizerName(p.kind) +
                                  (p.kind == OptimizerKind::Sgd ? " with momentum" : "") +
                                  "): global weight decay on a table is only defined for sgd "
                                  "without momentum and adamw; use lazy decay");
    const int64_t n = rows * D;
    const T scale = h.decayScale;
#pragma omp parallel for simd schedule(static) if (n > kParallelWork)
    for (int64_t i = 0; i < n; ++i)
      table[i] *= scale;
    // Every row is decayed; the touched rows then take the plain step.
    h.coupled = false;
    h.decoupled = false;
  }

  const bool rowwise = p.kind == OptimizerKind::RowwiseAdagrad;
#pragma omp parallel for schedule(static) if (nnz * D > kParallelWork / 4)
  for (int64_t k = 0; k < nnz; ++k) {
    const int64_t r = uniqueRows[k];
    T *w = table + r * D;
    const T *g = vals + k * D;
    T *s0 = state0 ? state0 + (rowwise ? r : r * D) : nullptr;
    T *s1 = state1 ? state1 + r * D : nullptr;
    switch (p.kind) {
    case OptimizerKind::RowwiseAdagrad:
      rowwiseAdagradRow(h, w, g, *s0, D);
      break;
    case OptimizerKind::Lamb: {
      // Trust ratio per row.
      lambMomentsSpan(h, g, s0, s1, D);
      double w2 = 0, r2 = 0;
      lambNormsSpan(h, w, s0, s1, D, w2, r2);
      lambApplySpan(h, lambTrust<T>(w2, r2), w, s0, s1, D);
      break;
    }
    default:
      elementwiseSpan(p.kind, h, w, g, s0, s1, D);
      break;
    }
  }
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
  template void denseUpdate<T>(const OptimizerParams &, int64_t, double, double, T *, const T *,  \
                               T *, T *, int64_t, int64_t);                                        \
  template void sparseUpdate<T>(const OptimizerParams &, int64_t, double, double, T *, int64_t,   \
                                int64_t, const int64_t *, const T *, int64_t, T *, T *);           \
  template double sumSquares<T>(const T *, int64_t);

EMBC_INSTANTIATE_OPTIMIZER(float)
EMBC_INSTANTIATE_OPTIMIZER(double)

#undef EMBC_INSTANTIATE_OPTIMIZER

} // namespace embc::runtime::cpu
