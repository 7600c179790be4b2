//===- AttentionKernels.h - multi-head attention, forward and backward -*- C++ -*-===//
//
// The CPU kernels of `attention` and `attention_grad` (emb.attention): per
// sequence b, head h and query position i < n_b, the scores s_ij = q_i . k_j
// * scale (scale = 1 / sqrt(dh), dh = D / heads) over the key positions j
// the query sees (j < n_b; j <= i too when causal), their softmax, and the
// weighted sum of the values. Templates in a header so the float kernels
// the backend binds and the double ones the finite-difference checks use
// are the same code.
//
// Every number is computed in a fixed order that the generated CUDA
// (passes/lib/cuda/AttentionLowering.cpp) repeats: a dot product sums its
// dh products in column order in T; the softmax's maximum is over the
// scores in T, its exponentials and their sum in double, a weight is the
// double quotient rounded to T; weighted sums add their terms in position
// order in T. Nothing of the forward is kept: the backward recomputes the
// weights. The backward runs in two passes: one per query row (its dq and
// the row's statistics: the maximum, the sum of exponentials and
// t_i = sum_j P_ij dP_ij), then one per key row (its dk and dv, summing
// over the query rows in order), so no two threads add into one value.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_ATTENTIONKERNELS_H
#define EMBC_RUNTIME_CPU_ATTENTIONKERNELS_H

#include "embc/runtime/cpu/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace embc::runtime::cpu {

/// The shape of an attention: B sequences of at most L positions of D
/// columns, `heads` heads of D / heads columns.
struct AttentionShape {
  int64_t B = 0, L = 0, D = 0, heads = 1;
  bool causal = false;
  int64_t headDim() const { return D / heads; }
};

namespace attention {
/// Below this many score products a kernel runs on the caller.
inline constexpr int64_t kParallelWork = int64_t(1) << 15;

/// n_b, clamped to [0, L].
inline int64_t length(const int64_t *offsets, int64_t b, int64_t L) {
  return std::clamp<int64_t>(offsets[b + 1] - offsets[b], 0, L);
}

/// The row of position l of sequence b in head h: its dh columns.
template <class T>
const T *row(const T *x, const AttentionShape &s, int64_t b, int64_t l, int64_t h) {
  return x + (b * s.L + l) * s.D + h * s.headDim();
}

/// x . y over dh columns, in column order.
template <class T> T dot(const T *x, const T *y, int64_t dh) {
  T sum = T(0);
  for (int64_t c = 0; c < dh; ++c)
    sum += x[c] * y[c];
  return sum;
}

/// 1 / sqrt(dh) as T.
template <class T> T scaleOf(const AttentionShape &s) {
  return T(1.0 / std::sqrt(double(s.headDim())));
}

/// The keys query i of a sequence of length n sees: [0, keys).
inline int64_t keysOf(const AttentionShape &s, int64_t i, int64_t n) {
  return s.causal ? std::min(i + 1, n) : n;
}

/// The softmax statistics of query row i: the maximum score and the sum of
/// the exponentials.
template <class T> struct RowStats {
  T max;
  double sum;
};

template <class T>
RowStats<T> rowStats(const T *q, const T *k, const AttentionShape &s, int64_t b, int64_t h,
                     int64_t i, int64_t keys) {
  const int64_t dh = s.headDim();
  const T scale = scaleOf<T>(s);
  const T *qi = row(q, s, b, i, h);
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < keys; ++j)
    m = std::max(m, dot(qi, row(k, s, b, j, h), dh) * scale);
  double sum = 0.0;
  for (int64_t j = 0; j < keys; ++j)
    sum += std::exp(double(dot(qi, row(k, s, b, j, h), dh) * scale) - double(m));
  return {m, sum};
}

/// The weight of key j for query i, from its row's statistics.
template <class T>
T weight(const T *qi, const T *kj, int64_t dh, T scale, const RowStats<T> &stats) {
  return T(std::exp(double(dot(qi, kj, dh) * scale) - double(stats.max)) / stats.sum);
}
} // namespace attention

/// o[b, i] = sum_j softmax_j(q_i . k_j * scale) v_j per head, for each
/// query position i < n_b; zeros after.
template <class T>
void attentionForward(const T *q, const T *k, const T *v, const int64_t *offsets,
                      const AttentionShape &s, T *o) {
  using namespace attention;
  const int64_t dh = s.headDim();
  const T scale = scaleOf<T>(s);
  parallelFor(s.B * s.heads, s.B * s.L * s.L * s.D > kParallelWork,
              [&](int64_t begin, int64_t end) {
                std::vector<T> acc(static_cast<size_t>(dh));
                for (int64_t bh = begin; bh < end; ++bh) {
                  const int64_t b = bh / s.heads, h = bh % s.heads;
                  const int64_t n = length(offsets, b, s.L);
                  for (int64_t i = 0; i < s.L; ++i) {
                    T *oi = o + (b * s.L + i) * s.D + h * dh;
                    std::fill(acc.begin(), acc.end(), T(0));
                    if (i < n) {
                      const int64_t keys = keysOf(s, i, n);
                      const RowStats<T> stats = rowStats(q, k, s, b, h, i, keys);
                      const T *qi = row(q, s, b, i, h);
                      for (int64_t j = 0; j < keys; ++j) {
                        const T p = weight(qi, row(k, s, b, j, h), dh, scale, stats);
                        const T *vj = row(v, s, b, j, h);
                        for (int64_t c = 0; c < dh; ++c)
                          acc[size_t(c)] += p * vj[c];
                      }
                    }
                    std::copy(acc.begin(), acc.end(), oi);
                  }
                }
              });
}

/// The gradients of attentionForward for dy = `dout`: dq, dk, dv (all
/// B x L x D, zeros on the padded positions).
template <class T>
void attentionBackward(const T *dout, const T *q, const T *k, const T *v, const int64_t *offsets,
                       const AttentionShape &s, T *dq, T *dk, T *dv) {
  using namespace attention;
  const int64_t dh = s.headDim();
  const T scale = scaleOf<T>(s);
  const bool parallel = s.B * s.L * s.L * s.D > kParallelWork;
  // Per (b, h, i): the softmax statistics and t_i = sum_j P_ij dP_ij.
  std::vector<RowStats<T>> stats(size_t(s.B * s.heads * s.L));
  std::vector<T> t(size_t(s.B * s.heads * s.L));
  parallelFor(s.B * s.heads, parallel, [&](int64_t begin, int64_t end) {
    std::vector<T> acc(static_cast<size_t>(dh));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads;
      const int64_t n = length(offsets, b, s.L);
      for (int64_t i = 0; i < s.L; ++i) {
        std::fill(acc.begin(), acc.end(), T(0));
        if (i < n) {
          const int64_t keys = keysOf(s, i, n);
          const RowStats<T> st = rowStats(q, k, s, b, h, i, keys);
          const T *qi = row(q, s, b, i, h), *gi = row(dout, s, b, i, h);
          double ti = 0.0;
          for (int64_t j = 0; j < keys; ++j)
            ti += double(weight(qi, row(k, s, b, j, h), dh, scale, st)) *
                  double(dot(gi, row(v, s, b, j, h), dh));
          for (int64_t j = 0; j < keys; ++j) {
            const T *kj = row(k, s, b, j, h);
            const T p = weight(qi, kj, dh, scale, st);
            const T ds = p * (dot(gi, row(v, s, b, j, h), dh) - T(ti));
            for (int64_t c = 0; c < dh; ++c)
              acc[size_t(c)] += ds * kj[c];
          }
          stats[size_t(bh * s.L + i)] = st;
          t[size_t(bh * s.L + i)] = T(ti);
        }
        T *dqi = dq + (b * s.L + i) * s.D + h * dh;
        for (int64_t c = 0; c < dh; ++c)
          dqi[c] = acc[size_t(c)] * scale;
      }
    }
  });
  parallelFor(s.B * s.heads, parallel, [&](int64_t begin, int64_t end) {
    std::vector<T> accK(static_cast<size_t>(dh)), accV(static_cast<size_t>(dh));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads;
      const int64_t n = length(offsets, b, s.L);
      for (int64_t j = 0; j < s.L; ++j) {
        std::fill(accK.begin(), accK.end(), T(0));
        std::fill(accV.begin(), accV.end(), T(0));
        if (j < n) {
          const T *kj = row(k, s, b, j, h), *vj = row(v, s, b, j, h);
          for (int64_t i = s.causal ? j : 0; i < n; ++i) {
            const T *qi = row(q, s, b, i, h), *gi = row(dout, s, b, i, h);
            const T p = weight(qi, kj, dh, scale, stats[size_t(bh * s.L + i)]);
            const T ds = p * (dot(gi, vj, dh) - t[size_t(bh * s.L + i)]);
            for (int64_t c = 0; c < dh; ++c) {
              accK[size_t(c)] += ds * qi[c];
              accV[size_t(c)] += p * gi[c];
            }
          }
        }
        T *dkj = dk + (b * s.L + j) * s.D + h * dh, *dvj = dv + (b * s.L + j) * s.D + h * dh;
        for (int64_t c = 0; c < dh; ++c) {
          dkj[c] = accK[size_t(c)] * scale;
          dvj[c] = accV[size_t(c)];
        }
      }
    }
  });
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_ATTENTIONKERNELS_H
