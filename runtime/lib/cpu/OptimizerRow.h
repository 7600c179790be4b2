//===- OptimizerRow.h - the optimizer step of a span and of a table row -*- C++ -*-===//
//
// Private to EmbCpuKernels. Each optimizer is written once as an update of a
// contiguous span of values with its state spans (formulas: Kernels.h,
// OptimizerParams). denseUpdate runs the spans over chunks of a parameter;
// sparseUpdate and the fused embedding_update (FusedEmbeddingKernels.cpp)
// run tableRowStep over each touched table row, after the same global-decay
// pass, so the fused backward+update is bit-identical to the unfused chain.
// The only reductions (lamb's norms, rowwise_adagrad's row mean) are summed
// in a fixed order, so updates are deterministic for any thread count.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CPU_OPTIMIZERROW_H
#define EMBC_RUNTIME_LIB_CPU_OPTIMIZERROW_H

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"

#include "KernelSupport.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace embc::runtime::cpu::detail {

/// The optimizer's name as the plan spells it (plan/Enums.h), for messages.
inline const char *optimizerName(OptimizerKind kind) {
  if (size_t(kind) >= enumCount<OptimizerKind>())
    throw std::invalid_argument("unknown optimizer kind " + std::to_string(int(kind)));
  return enumName(kind).data(); // the spellings are NUL-terminated literals
}

/// The scalars of one update, converted to T once so inner loops stay in T.
template <class T> struct Hyper {
  T lr, gradScale, wd, momentum, beta1, beta2, eps;
  /// 1 - beta and 1 / (1 - beta^t), both from the exact (double) beta, as
  /// the formula has them: (1 - beta) formed in T from T(beta) would differ
  /// from the bias correction's (1 - fl(0.999) = 0.00099998713 in float32,
  /// a first step of lr (1 + 6.7e-6)).
  T oneMinusBeta1, oneMinusBeta2;
  T invBias1, invBias2; ///< Adam's bias corrections
  T decayScale;         ///< 1 - lr wd, the decoupled / global decay factor
  /// Add wd * w to the gradient (coupled decay) when updating a span.
  bool coupled;
  /// Multiply the span by decayScale first (adamw's decoupled decay).
  bool decoupled;
};

/// The scalars of one update at 1-based step `step`; `where` names the
/// caller in errors (adam-family optimizers need step >= 1).
template <class T>
Hyper<T> makeHyper(const OptimizerParams &p, int64_t step, double lrScale, double gradScale,
                   const char *where) {
  const char *name = optimizerName(p.kind);
  const bool adamFamily = p.kind == OptimizerKind::Adam || p.kind == OptimizerKind::AdamW ||
                          p.kind == OptimizerKind::Lamb;
  if (adamFamily && step < 1)
    throw std::invalid_argument(std::string(where) + "(" + name + "): step " +
                                std::to_string(step) +
                                " must be >= 1 (1-based, for the bias correction)");
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
    h.oneMinusBeta1 = T(1.0 - p.beta1);
    h.oneMinusBeta2 = T(1.0 - p.beta2);
    h.invBias1 = T(1.0 / (1.0 - std::pow(p.beta1, double(step))));
    h.invBias2 = T(1.0 / (1.0 - std::pow(p.beta2, double(step))));
  }
  h.decayScale = T(1.0 - lr * p.weightDecay);
  const bool hasDecay = p.weightDecay != 0;
  h.coupled = hasDecay && p.kind != OptimizerKind::AdamW && p.kind != OptimizerKind::Lamb;
  h.decoupled = hasDecay && p.kind == OptimizerKind::AdamW;
  return h;
}

inline void requireState(const void *state, const char *which, const OptimizerParams &p,
                         const char *where) {
  if (!state)
    throw std::invalid_argument(std::string(where) + "(" + optimizerName(p.kind) + "): " + which +
                                " is null but this optimizer keeps it");
}

/// Throws std::invalid_argument when a state the optimizer keeps is null.
inline void checkStates(const OptimizerParams &p, const void *state0, const void *state1,
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

// --- The finite check of every update (Kernels.h, denseUpdate) ------------------

/// 1 when x is NaN or infinite (an all-ones exponent), else 0. Bits, not
/// std::isfinite, so the loops that OR it into a flag stay branch-free and
/// vectorise: each span update below keeps such a flag of the values it
/// writes, in registers, and returns whether they are all finite.
template <class T> inline unsigned nonFiniteBit(T x) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr Bits kExponent = sizeof(T) == 4 ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);
  Bits b;
  std::memcpy(&b, &x, sizeof b);
  return unsigned((b & kExponent) == kExponent);
}

/// Whether n values are all finite.
template <class T> inline bool allFinite(const T *x, int64_t n) {
  unsigned bad = 0;
  for (int64_t i = 0; i < n; ++i)
    bad |= nonFiniteBit(x[i]);
  return bad == 0;
}

/// Whether w[i], s0[i] and s1[i] (those not null) are finite.
template <class T> inline bool finiteAt(int64_t i, const T *w, const T *s0, const T *s1) {
  return std::isfinite(w[i]) && (!s0 || std::isfinite(s0[i])) && (!s1 || std::isfinite(s1[i]));
}

/// The lowest index any thread reports: the first value an update left not
/// finite, the same whatever the threads. Reports are rare (a run stops at
/// the first), so the compare-and-swap costs nothing while training.
class LowestIndex {
public:
  void report(int64_t i) {
    int64_t seen = lowest_.load(std::memory_order_relaxed);
    while (i < seen && !lowest_.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
    }
  }
  /// The lowest index reported, or -1 when none was.
  int64_t get() const {
    const int64_t v = lowest_.load(std::memory_order_relaxed);
    return v == std::numeric_limits<int64_t>::max() ? -1 : v;
  }

private:
  std::atomic<int64_t> lowest_{std::numeric_limits<int64_t>::max()};
};

// --- Span updates (w, g and states contiguous, len values) ----------------------

// Each returns whether the values and state it wrote are all finite.

template <class T>
[[nodiscard]] bool sgdSpan(const Hyper<T> &h, T *__restrict w, const T *__restrict g,
                           T *__restrict m, int64_t len) {
  const T wd = h.coupled ? h.wd : T(0);
  unsigned bad = 0;
  if (h.momentum == T(0)) {
    for (int64_t i = 0; i < len; ++i) {
      w[i] -= h.lr * (h.gradScale * g[i] + wd * w[i]);
      bad |= nonFiniteBit(w[i]);
    }
    return bad == 0;
  }
  for (int64_t i = 0; i < len; ++i) {
    m[i] = h.momentum * m[i] + (h.gradScale * g[i] + wd * w[i]);
    w[i] -= h.lr * m[i];
    bad |= nonFiniteBit(w[i]); // a non-finite m makes w so (0 x inf is NaN)
  }
  return bad == 0;
}

template <class T>
[[nodiscard]] bool adagradSpan(const Hyper<T> &h, T *__restrict w, const T *__restrict g,
                               T *__restrict a, int64_t len) {
  const T wd = h.coupled ? h.wd : T(0);
  unsigned bad = 0;
  for (int64_t i = 0; i < len; ++i) {
    const T gi = h.gradScale * g[i] + wd * w[i];
    a[i] += gi * gi;
    w[i] -= h.lr * gi / (std::sqrt(a[i]) + h.eps);
    bad |= nonFiniteBit(a[i]) | nonFiniteBit(w[i]);
  }
  return bad == 0;
}

/// One row: its single accumulator grows by the mean squared gradient.
template <class T>
[[nodiscard]] bool rowwiseAdagradRow(const Hyper<T> &h, T *__restrict w, const T *__restrict g,
                                     T &accumulator, int64_t len) {
  if (len == 0)
    return true;
  const T wd = h.coupled ? h.wd : T(0);
  // The sum of squares in kLanes independent double accumulators, added in a
  // fixed order at the end: the same bits on every machine and thread count,
  // and no chain of dependent additions (one add latency per element was
  // most of the row's time in dlrm_small, D = 16).
  constexpr int64_t kLanes = 8;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= len; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      const double gi = double(h.gradScale * g[i + l] + wd * w[i + l]);
      lanes[l] += gi * gi;
    }
  for (int64_t l = 0; i < len; ++i, ++l) {
    const double gi = double(h.gradScale * g[i] + wd * w[i]);
    lanes[l] += gi * gi;
  }
  const double sumSq = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                       ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  accumulator += T(sumSq / double(len));
  const T step = h.lr / (std::sqrt(accumulator) + h.eps);
  unsigned bad = nonFiniteBit(accumulator);
  for (int64_t i = 0; i < len; ++i) {
    w[i] -= step * (h.gradScale * g[i] + wd * w[i]);
    bad |= nonFiniteBit(w[i]);
  }
  return bad == 0;
}

/// Adam's moments and step (adam with coupled decay, adamw with decoupled).
template <class T>
[[nodiscard]] bool adamSpan(const Hyper<T> &h, T *__restrict w, const T *__restrict g,
                            T *__restrict m, T *__restrict v, int64_t len) {
  const T wd = h.coupled ? h.wd : T(0);
  const T scale = h.decoupled ? h.decayScale : T(1);
  unsigned bad = 0;
  for (int64_t i = 0; i < len; ++i) {
    const T gi = h.gradScale * g[i] + wd * w[i];
    m[i] = h.beta1 * m[i] + h.oneMinusBeta1 * gi;
    v[i] = h.beta2 * v[i] + h.oneMinusBeta2 * gi * gi;
    const T mh = m[i] * h.invBias1, vh = v[i] * h.invBias2;
    w[i] = scale * w[i] - h.lr * mh / (std::sqrt(vh) + h.eps);
    // A non-finite m makes w so; an infinite v alone leaves w finite.
    bad |= nonFiniteBit(v[i]) | nonFiniteBit(w[i]);
  }
  return bad == 0;
}

/// Lamb, pass 1: the moments (as Adam's, no coupled decay).
template <class T>
[[nodiscard]] bool lambMomentsSpan(const Hyper<T> &h, const T *__restrict g, T *__restrict m,
                                   T *__restrict v, int64_t len) {
  unsigned bad = 0;
  for (int64_t i = 0; i < len; ++i) {
    const T gi = h.gradScale * g[i];
    m[i] = h.beta1 * m[i] + h.oneMinusBeta1 * gi;
    v[i] = h.beta2 * v[i] + h.oneMinusBeta2 * gi * gi;
    bad |= nonFiniteBit(m[i]) | nonFiniteBit(v[i]);
  }
  return bad == 0;
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
[[nodiscard]] bool lambApplySpan(const Hyper<T> &h, T trust, T *__restrict w,
                                 const T *__restrict m, const T *__restrict v, int64_t len) {
  const T step = h.lr * trust;
  unsigned bad = 0;
  for (int64_t i = 0; i < len; ++i) {
    w[i] -= step * lambDirection(h, w[i], m[i], v[i]);
    bad |= nonFiniteBit(w[i]);
  }
  return bad == 0;
}

/// Elementwise optimizers (sgd, adagrad, adam, adamw) over one span.
template <class T>
[[nodiscard]] bool elementwiseSpan(OptimizerKind kind, const Hyper<T> &h, T *w, const T *g, T *s0,
                                   T *s1, int64_t len) {
  switch (kind) {
  case OptimizerKind::Sgd:
    return sgdSpan(h, w, g, s0, len);
  case OptimizerKind::Adagrad:
    return adagradSpan(h, w, g, s0, len);
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    return adamSpan(h, w, g, s0, s1, len);
  case OptimizerKind::RowwiseAdagrad:
  case OptimizerKind::Lamb:
    break;
  }
  throw std::logic_error(std::string("elementwiseSpan: ") + optimizerName(kind) +
                         " is not elementwise");
}

/// The step of table row r (D values) with its summed gradient g (D values):
/// the body of sparseUpdate's row loop. state0 holds one value per row for
/// rowwise_adagrad, D per row otherwise; states may be null when unused.
/// Returns whether the row and its state are finite after the step (the
/// finite check of every update, kept by the spans as they write).
template <class T>
[[nodiscard]] inline bool tableRowStep(OptimizerKind kind, const Hyper<T> &h, T *table, int64_t r,
                                       int64_t D, const T *g, T *state0, T *state1) {
  const bool rowwise = kind == OptimizerKind::RowwiseAdagrad;
  T *w = table + r * D;
  T *s0 = state0 ? state0 + (rowwise ? r : r * D) : nullptr;
  T *s1 = state1 ? state1 + r * D : nullptr;
  switch (kind) {
  case OptimizerKind::RowwiseAdagrad:
    return rowwiseAdagradRow(h, w, g, *s0, D);
  case OptimizerKind::Lamb: {
    // Trust ratio per row.
    const bool moments = lambMomentsSpan(h, g, s0, s1, D);
    double w2 = 0, r2 = 0;
    lambNormsSpan(h, w, s0, s1, D, w2, r2);
    return lambApplySpan(h, lambTrust<T>(w2, r2), w, s0, s1, D) && moments;
  }
  default:
    return elementwiseSpan(kind, h, w, g, s0, s1, D);
  }
}

/// Global weight decay of a sparse table update (p.globalDecay and
/// weightDecay > 0): scales every row of the table (rows x D) by
/// (1 - lr wd) and clears h's per-row decay, so touched rows then take the
/// plain step. A no-op otherwise.
///
/// Global decay is exact only where the decay of an untouched row does not
/// depend on optimizer state: sgd without momentum (w -= lr (g + wd w) =
/// (1 - lr wd) w - lr g) and adamw (decoupled). For the others the compiler
/// refuses global decay on a table, so a plan asking for it here is an
/// error, reported with std::invalid_argument naming `where`.
///
/// Returns the first row the decay left not finite, or -1. A factor in
/// [-1, 1] (lr wd <= 2) cannot make a finite value infinite, so only a
/// larger one pays for the scan.
template <class T>
[[nodiscard]] inline int64_t applyGlobalDecay(const OptimizerParams &p, Hyper<T> &h, T *table, int64_t rows,
                             int64_t D, const char *where) {
  if (!(p.globalDecay && p.weightDecay > 0))
    return -1;
  const bool plainSgd = p.kind == OptimizerKind::Sgd && p.momentum == 0;
  if (!plainSgd && p.kind != OptimizerKind::AdamW)
    throw std::invalid_argument(std::string(where) + "(" + optimizerName(p.kind) +
                                (p.kind == OptimizerKind::Sgd ? " with momentum" : "") +
                                "): global weight decay on a table is only defined for sgd "
                                "without momentum and adamw; use lazy decay");
  const int64_t n = rows * D;
  const T scale = h.decayScale;
  parallelFor(n, n > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
#pragma omp simd
    for (int64_t i = iBegin; i < iEnd; ++i)
      table[i] *= scale;
  });
  h.coupled = false;
  h.decoupled = false;
  if (std::abs(double(scale)) <= 1.0)
    return -1;
  LowestIndex bad;
  parallelFor(rows, n > kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r)
      if (!allFinite(table + r * D, D)) {
        bad.report(r);
        return;
      }
  });
  return bad.get();
}

} // namespace embc::runtime::cpu::detail

#endif // EMBC_RUNTIME_LIB_CPU_OPTIMIZERROW_H
