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
// weights. The backward runs in two passes over each (sequence, head): one
// per query row (its weights, t_i = sum_j P_ij dP_ij and dq), then one per
// key row (its dk and dv, summing over the query rows in order from the
// weights and dS the first pass kept), so no two threads add into one
// value. A thread owns whole (sequence, head) pairs; it transposes their
// keys and values once, so that a query's scores are computed side by side
// (vectorised across keys, each still summed in column order).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_ATTENTIONKERNELS_H
#define EMBC_RUNTIME_CPU_ATTENTIONKERNELS_H

#include "embc/runtime/cpu/DropoutKernels.h"
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

/// The weights' dropout of a training launch (DropoutKernels.h): weight
/// (b, h, i, j) is element ((e H + h) L + i) L + j of the site's global
/// weights, e = firstExample + b the sequence's place in the global batch.
struct AttentionDropout {
  double rate = 0;
  uint64_t key = 0;          ///< dropoutKey(seed, stream, step)
  int64_t firstExample = 0;  ///< exampleOffset + microBatch x B
  /// The L the weights are numbered by (0: the launch's): dynamic padding
  /// runs a batch at its own longest length and draws max_len's masks.
  int64_t counterL = 0;
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

/// 1 / sqrt(dh) as T.
template <class T> T scaleOf(const AttentionShape &s) {
  return T(1.0 / std::sqrt(double(s.headDim())));
}

/// The keys query i of a sequence of length n sees: [0, keys).
inline int64_t keysOf(const AttentionShape &s, int64_t i, int64_t n) {
  return s.causal ? std::min(i + 1, n) : n;
}

/// One (sequence, head) at a time: its keys and values transposed (dh x n,
/// so that a query's n scores are computed side by side, each still a sum
/// over its dh columns in column order), and a query row's scores, weights
/// and exponentials.
template <class T> class Head {
public:
  Head(const AttentionShape &s) : s(s), dh(s.headDim()), scale(scaleOf<T>(s)) {}

  /// Starts sequence b, head h: its length n and its keys (and with
  /// `values`, its values) transposed.
  void start(const T *k, const T *v, int64_t b, int64_t h, int64_t n, bool values) {
    this->n = n;
    kt.resize(size_t(dh * n));
    vt.resize(values ? size_t(dh * n) : 0);
    for (int64_t j = 0; j < n; ++j) {
      const T *kj = row(k, s, b, j, h);
      for (int64_t c = 0; c < dh; ++c)
        kt[size_t(c * n + j)] = kj[c];
      if (values) {
        const T *vj = row(v, s, b, j, h);
        for (int64_t c = 0; c < dh; ++c)
          vt[size_t(c * n + j)] = vj[c];
      }
    }
    scores.resize(size_t(n));
    out.resize(size_t(n));
    e.resize(size_t(n));
  }

    /// into[j] = x . (column j of the transposed t), j < keys: each a sum
  /// over the dh columns in column order, from 0.
  void products(const T *x, const std::vector<T> &t, int64_t keys, std::vector<T> &into) const {
    int64_t j = 0;
    for (; j + kBlock <= keys; j += kBlock) { // kBlock sums at once, in registers
      T acc[kBlock] = {};
      for (int64_t c = 0; c < dh; ++c) {
        const T xc = x[c];
        const T *tc = t.data() + c * n + j;
        for (int64_t k = 0; k < kBlock; ++k)
          acc[k] += xc * tc[k];
      }
      for (int64_t k = 0; k < kBlock; ++k)
        into[size_t(j + k)] = acc[k];
    }
    for (; j < keys; ++j) {
      T acc = T(0);
      for (int64_t c = 0; c < dh; ++c)
        acc += x[c] * t[size_t(c * n + j)];
      into[size_t(j)] = acc;
    }
  }

  /// out[c] (= or += with `add`) = sum over r in [0, count) of w[r] *
  /// rows[r * stride + c], for c < dh, each sum in r order from 0: a
  /// weighted sum of rows (values, keys, queries or gradients).
  void weightedRows(const T *w, const T *rows, int64_t stride, int64_t count, T *out) const {
    int64_t c = 0;
    for (; c + kBlock <= dh; c += kBlock) { // kBlock columns at once, in registers
      T acc[kBlock] = {};
      for (int64_t r = 0; r < count; ++r) {
        const T wr = w[r];
        const T *row = rows + r * stride + c;
        for (int64_t k = 0; k < kBlock; ++k)
          acc[k] += wr * row[k];
      }
      for (int64_t k = 0; k < kBlock; ++k)
        out[c + k] = acc[k];
    }
    for (; c < dh; ++c) {
      T acc = T(0);
      for (int64_t r = 0; r < count; ++r)
        acc += w[r] * rows[r * stride + c];
      out[c] = acc;
    }
  }

  static constexpr int64_t kBlock = 8;

  /// The dropout factors of query row i of sequence b, head h, into `f`
  /// (its `keys` weights).
  void dropFactors(const AttentionDropout &d, int64_t b, int64_t h, int64_t i, int64_t keys,
                   T *f) const {
    const uint64_t L = uint64_t(d.counterL > 0 ? d.counterL : s.L);
    const uint64_t first =
        ((uint64_t(d.firstExample + b) * uint64_t(s.heads) + uint64_t(h)) * L + uint64_t(i)) * L;
    dropoutFactors(d.key, first, keys, d.rate, f);
  }

  /// The weights of query row qi over its `keys` keys into `p`: the scores
  /// q . k_j * scale, their maximum, the exponentials and their sum in
  /// double, and each weight the double quotient rounded to T.
  void weights(const T *qi, int64_t keys, T *p) {
    products(qi, kt, keys, scores);
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < keys; ++j) {
      scores[size_t(j)] *= scale;
      m = std::max(m, scores[size_t(j)]);
    }
    double sum = 0.0;
    for (int64_t j = 0; j < keys; ++j) {
      e[size_t(j)] = std::exp(double(scores[size_t(j)]) - double(m));
      sum += e[size_t(j)];
    }
    for (int64_t j = 0; j < keys; ++j)
      p[j] = T(e[size_t(j)] / sum);
  }

  const AttentionShape &s;
  const int64_t dh;
  const T scale;
  int64_t n = 0;
  std::vector<T> kt, vt, scores, out;
  std::vector<double> e;
};
} // namespace attention

/// o[b, i] = sum_j softmax_j(q_i . k_j * scale) v_j per head, for each
/// query position i < n_b; zeros after. With `drop` (training), each weight
/// is multiplied by its dropout factor first.
template <class T>
void attentionForward(const T *q, const T *k, const T *v, const int64_t *offsets,
                      const AttentionShape &s, T *o, const AttentionDropout *drop = nullptr) {
  using namespace attention;
  const int64_t dh = s.headDim();
  parallelFor(s.B * s.heads, s.B * s.L * s.L * s.D > kParallelWork,
              [&](int64_t begin, int64_t end) {
                Head<T> head(s);
                std::vector<T> p(size_t(s.L)), f(drop ? size_t(s.L) : 0);
                for (int64_t bh = begin; bh < end; ++bh) {
                  const int64_t b = bh / s.heads, h = bh % s.heads;
                  const int64_t n = length(offsets, b, s.L);
                  head.start(k, v, b, h, n, /*values=*/false);
                  for (int64_t i = 0; i < s.L; ++i) {
                    T *oi = o + (b * s.L + i) * s.D + h * dh;
                    std::fill(oi, oi + dh, T(0));
                    if (i >= n)
                      continue;
                    const int64_t keys = keysOf(s, i, n);
                    head.weights(row(q, s, b, i, h), keys, p.data());
                    if (drop) {
                      head.dropFactors(*drop, b, h, i, keys, f.data());
                      for (int64_t j = 0; j < keys; ++j)
                        p[size_t(j)] *= f[size_t(j)];
                    }
                    // The weighted values, in key order.
                    head.weightedRows(p.data(), row(v, s, b, 0, h), s.D, keys, oi);
                  }
                }
              });
}

/// The gradients of attentionForward for dy = `dout`: dq, dk, dv (all
/// B x L x D, zeros on the padded positions). Per (sequence, head): first
/// each query row's weights P_ij, dP_ij = dy_i . v_j, t_i = sum_j P_ij dP_ij
/// (in double) and dS_ij = P_ij (dP_ij - t_i), which give dq_i; then each
/// key row's dk_j = sum_i dS_ij q_i and dv_j = sum_i P_ij dy_i over the
/// query rows in order, from the P and dS kept for the head. With `drop`,
/// the forward's mask M (factors 0 or 1 / (1 - rate)) is drawn again:
/// dP_ij = M_ij dy_i . v_j, and dv_j sums M_ij P_ij dy_i.
template <class T>
void attentionBackward(const T *dout, const T *q, const T *k, const T *v, const int64_t *offsets,
                       const AttentionShape &s, T *dq, T *dk, T *dv,
                       const AttentionDropout *drop = nullptr) {
  using namespace attention;
  const int64_t dh = s.headDim();
  const T scale = scaleOf<T>(s);
  const bool parallel = s.B * s.L * s.L * s.D > kParallelWork;
  parallelFor(s.B * s.heads, parallel, [&](int64_t begin, int64_t end) {
    Head<T> head(s);
    std::vector<T> P, dS, colP(static_cast<size_t>(s.L)), colS(static_cast<size_t>(s.L));
    std::vector<T> f(drop ? size_t(s.L) : 0);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads;
      const int64_t n = length(offsets, b, s.L);
      head.start(k, v, b, h, n, /*values=*/true);
      P.assign(size_t(n * n), T(0));
      dS.assign(size_t(n * n), T(0));
      for (int64_t i = 0; i < s.L; ++i) {
        T *dqi = dq + (b * s.L + i) * s.D + h * dh;
        std::fill(dqi, dqi + dh, T(0));
        if (i >= n)
          continue;
        const int64_t keys = keysOf(s, i, n);
        T *p = P.data() + i * n, *ds = dS.data() + i * n;
        head.weights(row(q, s, b, i, h), keys, p);
        head.products(row(dout, s, b, i, h), head.vt, keys, head.out); // dP_ij
        if (drop) { // through the mask: dP_ij = M_ij dy_i . v_j
          head.dropFactors(*drop, b, h, i, keys, f.data());
          for (int64_t j = 0; j < keys; ++j)
            head.out[size_t(j)] *= f[size_t(j)];
        }
        double ti = 0.0;
        for (int64_t j = 0; j < keys; ++j)
          ti += double(p[j]) * double(head.out[size_t(j)]);
        const T t = T(ti);
        for (int64_t j = 0; j < keys; ++j)
          ds[j] = p[j] * (head.out[size_t(j)] - t);
        if (drop) // the values were weighed by the dropped weights M_ij P_ij
          for (int64_t j = 0; j < keys; ++j)
            p[j] *= f[size_t(j)];
        head.weightedRows(ds, row(k, s, b, 0, h), s.D, keys, dqi);
        for (int64_t c = 0; c < dh; ++c)
          dqi[c] *= scale;
      }
      // Key row j: column j of P and dS (the query rows that see it, in
      // order) weighs the queries and the output gradients.
      for (int64_t j = 0; j < s.L; ++j) {
        T *dkj = dk + (b * s.L + j) * s.D + h * dh, *dvj = dv + (b * s.L + j) * s.D + h * dh;
        const int64_t first = s.causal ? j : 0, count = j < n ? n - first : 0;
        for (int64_t i = 0; i < count; ++i) {
          colP[size_t(i)] = P[size_t((first + i) * n + j)];
          colS[size_t(i)] = dS[size_t((first + i) * n + j)];
        }
        head.weightedRows(colS.data(), row(q, s, b, first, h), s.D, count, dkj);
        head.weightedRows(colP.data(), row(dout, s, b, first, h), s.D, count, dvj);
        for (int64_t c = 0; c < dh; ++c)
          dkj[c] *= scale;
      }
    }
  });
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_ATTENTIONKERNELS_H
