//===- SampledSoftmaxKernels.cpp - sampled_logits and its gradient ---------===//
//
// SampledSoftmaxKernels.h says what is computed. The products are GEMMs on
// the team: x times the S gathered candidate rows (training), x times the
// whole weight a block of rows at a time (evaluation), and dz times the
// candidates and dz^T x (gradient). Each row's target column is a dot
// product. The gradient's scatter into the candidates' and targets' rows
// runs in one fixed order (candidates by slot, then targets by row), so the
// result does not depend on the number of threads.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/SampledSoftmaxKernels.h"

#include "Gemm.h"
#include "embc/runtime/cpu/Parallel.h"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace embc::runtime::cpu {
namespace {

/// Evaluation computes the full logits this many rows at a time.
constexpr int64_t kEvalRows = 256;

template <class T> T weightAt(const T *w, const SampledShape &s, int64_t v, int64_t d) {
  return s.tied ? w[v * s.D + d] : w[d * s.V + v];
}
template <class T> T &weightAt(T *w, const SampledShape &s, int64_t v, int64_t d) {
  return s.tied ? w[v * s.D + d] : w[d * s.V + v];
}

/// Each row's class: -1 or an index below V; throws for anything else.
template <class T> void checkTargets(const T *target, const SampledShape &s, const char *where) {
  for (int64_t r = 0; r < s.rows; ++r) {
    const T raw = target[r];
    if (raw == T(-1))
      continue;
    if (!(raw >= T(0) && raw < T(s.V) && T(int64_t(raw)) == raw))
      throw std::invalid_argument(std::string(where) + ": the target of row " + std::to_string(r) +
                                  " is " + std::to_string(double(raw)) +
                                  ", neither -1 nor a class index below " + std::to_string(s.V));
  }
}

/// The candidates' weight rows, S x D, into wc.
template <class T>
void gatherCandidates(const T *weight, const int64_t *candidates, const SampledShape &s, T *wc) {
  for (int64_t j = 0; j < s.S; ++j)
    for (int64_t d = 0; d < s.D; ++d)
      wc[j * s.D + d] = weightAt(weight, s, candidates[j], d);
}

template <class T>
double targetLogit(const T *x, const T *weight, const T *bias, const SampledShape &s, int64_t r,
                   int64_t t) {
  double z = bias ? double(bias[t]) : 0.0;
  for (int64_t d = 0; d < s.D; ++d)
    z += double(x[r * s.D + d]) * double(weightAt(weight, s, t, d));
  return z;
}

template <class T> void noTarget(const SampledShape &s, int64_t r, T *logits, T *classes) {
  std::fill(logits + r * (s.S + 1), logits + (r + 1) * (s.S + 1), T(0));
  classes[r] = T(-1);
}

} // namespace

int64_t SampledShape::scratchSize() const {
  const int64_t train = S * D + rows * S + S, grad = 2 * S * D + rows * S;
  return std::max({train, grad, std::min(rows, kEvalRows) * V});
}

template <class T>
void sampledLogitsTrain(const T *x, const T *weight, const T *bias, const T *target,
                        const int64_t *candidates, const SampledShape &s, T *logits, T *classes,
                        T *scratch) {
  checkTargets(target, s, "sampled_logits");
  T *wc = scratch, *z = scratch + s.S * s.D, *offset = z + s.rows * s.S;
  gatherCandidates(weight, candidates, s, wc);
  for (int64_t j = 0; j < s.S; ++j)
    offset[j] = T((bias ? double(bias[candidates[j]]) : 0.0) -
                  sampling::logExpectedCount(candidates[j], s.V, s.S));
  detail::gemm<T>(false, true, s.rows, s.S, s.D, T(1), x, wc, T(0), z);
  parallelFor(s.rows, s.rows * s.S > 65536, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (target[r] == T(-1)) {
        noTarget(s, r, logits, classes);
        continue;
      }
      const int64_t t = int64_t(target[r]);
      T *row = logits + r * (s.S + 1);
      row[0] = T(targetLogit(x, weight, bias, s, r, t) - sampling::logExpectedCount(t, s.V, s.S));
      for (int64_t j = 0; j < s.S; ++j)
        row[1 + j] = candidates[j] == t ? T(sampling::kExcluded) : z[r * s.S + j] + offset[j];
      classes[r] = T(0);
    }
  });
}

template <class T>
void sampledLogitsEval(const T *x, const T *weight, const T *bias, const T *target,
                       const SampledShape &s, T *logits, T *classes, T *scratch) {
  checkTargets(target, s, "sampled_logits");
  for (int64_t r0 = 0; r0 < s.rows; r0 += kEvalRows) {
    const int64_t n = std::min(kEvalRows, s.rows - r0);
    // z = x W (D x V) or x W^T (V x D), n x V.
    detail::gemm<T>(false, s.tied, n, s.V, s.D, T(1), x + r0 * s.D, weight, T(0), scratch);
    parallelFor(n, n * s.V > 65536, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t r = r0 + i;
        if (target[r] == T(-1)) {
          noTarget(s, r, logits, classes);
          continue;
        }
        const int64_t t = int64_t(target[r]);
        const T *z = scratch + i * s.V;
        auto logit = [&](int64_t v) { return double(z[v]) + (bias ? double(bias[v]) : 0.0); };
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t v = 0; v < s.V; ++v)
          if (v != t)
            m = std::max(m, logit(v));
        double sum = 0;
        for (int64_t v = 0; v < s.V; ++v)
          if (v != t)
            sum += std::exp(logit(v) - m);
        T *row = logits + r * (s.S + 1);
        std::fill(row, row + s.S + 1, T(sampling::kExcluded));
        row[0] = T(logit(t));
        if (s.V > 1)
          row[1] = T(m + std::log(sum));
        classes[r] = T(0);
      }
    });
  }
}

template <class T>
void sampledLogitsGrad(const T *dlogits, const T *x, const T *weight, const T *target,
                       const int64_t *candidates, const SampledShape &s, T *dx, T *dweight,
                       T *dbias, T *scratch) {
  checkTargets(target, s, "sampled_logits_grad");
  const int64_t N = s.rows, S = s.S, D = s.D;
  T *wc = scratch, *dz = wc + S * D, *g = dz + N * S;
  gatherCandidates(weight, candidates, s, wc);
  // A row without target has constant logits: no gradient.
  for (int64_t r = 0; r < N; ++r)
    if (target[r] == T(-1))
      std::fill(dz + r * S, dz + (r + 1) * S, T(0));
    else
      std::memcpy(dz + r * S, dlogits + r * (S + 1) + 1, size_t(S) * sizeof(T));
  // dx = dz wc + dz_t w_t.
  detail::gemm<T>(false, false, N, D, S, T(1), dz, wc, T(0), dx);
  parallelFor(N, N * D > 65536, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (target[r] == T(-1))
        continue;
      const int64_t t = int64_t(target[r]);
      const T gt = dlogits[r * (S + 1)];
      for (int64_t d = 0; d < D; ++d)
        dx[r * D + d] += gt * weightAt(weight, s, t, d);
    }
  });
  // The candidates' rows: g = dz^T x, S x D.
  detail::gemm<T>(true, false, S, D, N, T(1), dz, x, T(0), g);
  std::fill(dweight, dweight + s.V * D, T(0));
  for (int64_t j = 0; j < S; ++j)
    for (int64_t d = 0; d < D; ++d)
      weightAt(dweight, s, candidates[j], d) += g[j * D + d];
  for (int64_t r = 0; r < N; ++r) {
    if (target[r] == T(-1))
      continue;
    const int64_t t = int64_t(target[r]);
    const T gt = dlogits[r * (S + 1)];
    for (int64_t d = 0; d < D; ++d)
      weightAt(dweight, s, t, d) += gt * x[r * D + d];
  }
  if (!dbias)
    return;
  std::fill(dbias, dbias + s.V, T(0));
  // Each candidate's column sum over the rows in order: g's first row is
  // free scratch now.
  T *column = g;
  std::fill(column, column + S, T(0));
  for (int64_t r = 0; r < N; ++r)
    for (int64_t j = 0; j < S; ++j)
      column[j] += dz[r * S + j];
  for (int64_t j = 0; j < S; ++j)
    dbias[candidates[j]] += column[j];
  for (int64_t r = 0; r < N; ++r)
    if (target[r] != T(-1))
      dbias[int64_t(target[r])] += dlogits[r * (S + 1)];
}

template void sampledLogitsTrain<float>(const float *, const float *, const float *, const float *,
                                        const int64_t *, const SampledShape &, float *, float *,
                                        float *);
template void sampledLogitsTrain<double>(const double *, const double *, const double *,
                                         const double *, const int64_t *, const SampledShape &,
                                         double *, double *, double *);
template void sampledLogitsEval<float>(const float *, const float *, const float *, const float *,
                                       const SampledShape &, float *, float *, float *);
template void sampledLogitsEval<double>(const double *, const double *, const double *,
                                        const double *, const SampledShape &, double *, double *,
                                        double *);
template void sampledLogitsGrad<float>(const float *, const float *, const float *, const float *,
                                       const int64_t *, const SampledShape &, float *, float *,
                                       float *, float *);
template void sampledLogitsGrad<double>(const double *, const double *, const double *,
                                        const double *, const int64_t *, const SampledShape &,
                                        double *, double *, double *, double *);

} // namespace embc::runtime::cpu
