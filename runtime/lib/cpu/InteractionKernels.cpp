//===- InteractionKernels.cpp - feature interactions, DCN cross, dot ------===//
//
// The kernels that combine embeddings: DLRM's pairwise dot interaction, the
// DCN-v2 cross layer and the batched dot product of skip-gram / matrix
// factorisation. Work is parallel over the batch; each output row is written
// by one thread in a fixed order (deterministic). The pairwise interaction
// runs one small GEMM per row (InteractionRows.h). The cross layer's D x D
// products go to BLAS. With a bf16/fp16 ComputeType the interaction's and
// the cross layer's product operands are rounded first (Rounding.h); the dot
// product (matrix factorisation, skip-gram) has no compute type: it is a
// memory-bound reduction the GPU path also runs in f32.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"

#include "Gemm.h"
#include "InteractionRows.h"
#include "KernelSupport.h"
#include "Rounding.h"

#include <stdexcept>
#include <string>

namespace embc::runtime::cpu {

using detail::kParallelWork;

// --- Pairwise interaction -----------------------------------------------------

template <class T>
void interactionForward(const std::vector<const T *> &xsIn, T *y, int64_t B, int64_t D, bool self,
                        ComputeType compute) {
  std::vector<const T *> rounded; // stays empty (no allocation) in f32
  const std::vector<const T *> &xs =
      compute == ComputeType::F32 ? xsIn : (rounded = detail::roundedCopies(compute, xsIn, B * D));
  const detail::InteractionRows<T> rows(int64_t(xs.size()), D, self);
  const int64_t P = rows.pairs();
  parallelFor(B, B * P * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      if (b + rows.kRowsAhead < bEnd)
        rows.prefetch(xs, b + rows.kRowsAhead, D);
      rows.forward(xs, b, y + b * P);
    }
  });
}

template <class T>
void interactionGrad(const T *dyIn, const std::vector<const T *> &xsIn,
                     const std::vector<T *> &dxs, int64_t B, int64_t D, bool self,
                     ComputeType compute) {
  const int64_t F = int64_t(xsIn.size());
  if (dxs.size() != xsIn.size())
    throw std::invalid_argument("interactionGrad: " + std::to_string(xsIn.size()) +
                                " inputs but " + std::to_string(dxs.size()) + " gradients");
  const int64_t P = self ? F * (F + 1) / 2 : F * (F - 1) / 2;
  const T *dy = detail::roundedCopy(compute, dyIn, B * P, detail::kGradSlot);
  std::vector<const T *> rounded; // stays empty (no allocation) in f32
  const std::vector<const T *> &xs =
      compute == ComputeType::F32 ? xsIn : (rounded = detail::roundedCopies(compute, xsIn, B * D));
  const detail::InteractionRows<T> rows(F, D, self);
  parallelFor(B, B * P * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      if (b + rows.kRowsAhead < bEnd)
        rows.prefetch(xs, b + rows.kRowsAhead, D);
      rows.backward(dy + b * P, xs, dxs, b);
    }
  });
}

// --- DCN-v2 cross layer -------------------------------------------------------

// y must not alias x0 or xl: the GEMM writes xl * w into y (or `linear`)
// first.
template <class T>
void crossForward(const T *x0, const T *xl, const T *w, const T *b, T *y, int64_t B, int64_t D,
                  ComputeType compute, T *linear) {
  T *product = linear ? linear : y;
  detail::gemm<T>(compute, false, false, B, D, D, T(1), xl, w, T(0), product);
  parallelFor(B, B * D > kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r) {
      const T *__restrict a = x0 + r * D;
      const T *__restrict l = xl + r * D;
      const T *p = product + r * D; // may be y itself
      T *out = y + r * D;
      for (int64_t j = 0; j < D; ++j)
        out[j] = a[j] * (p[j] + b[j]) + l[j];
    }
  });
}

// With u = xl w + b and y = x0 * u + xl:
//   du = dy * x0,  dx0 = dy * u,  dxl = du w^T + dy,  dw = xl^T du,  db = sum_rows du.
// dx0 first holds du (so no scratch is needed), then is overwritten by dy * u;
// xl w is the forward's `linear` when given, else computed again into dx0.
template <class T>
void crossGrad(const T *dy, const T *x0, const T *xl, const T *w, const T *b, T *dx0, T *dxl,
               T *dw, T *db, int64_t B, int64_t D, ComputeType compute, const T *linear) {
  const int64_t n = B * D;
  parallelFor(n, n > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
#pragma omp simd
    for (int64_t i = iBegin; i < iEnd; ++i)
      dx0[i] = dy[i] * x0[i];
  });
  detail::gemm<T>(compute, true, false, D, D, B, T(1), xl, dx0, T(0), dw);
  biasGrad(dx0, db, B, D);
  parallelFor(n, n > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
#pragma omp simd
    for (int64_t i = iBegin; i < iEnd; ++i)
      dxl[i] = dy[i];
  });
  detail::gemm<T>(compute, false, true, B, D, D, T(1), dx0, w, T(1), dxl);

  if (!linear) {
    detail::gemm<T>(compute, false, false, B, D, D, T(1), xl, w, T(0), dx0);
    linear = dx0;
  }
  parallelFor(B, n > kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r) {
      const T *__restrict g = dy + r * D;
      const T *p = linear + r * D; // may be dx0 itself
      T *out = dx0 + r * D;
      for (int64_t j = 0; j < D; ++j)
        out[j] = g[j] * (p[j] + b[j]);
    }
  });
}

// --- Batched dot ------------------------------------------------------------

template <class T>
void dotForward(const T *lhs, const T *rhs, T *y, int64_t B, int64_t K, int64_t D) {
  const int64_t perRow = K == 0 ? 1 : K;
  parallelFor(B, B * perRow * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b)
      for (int64_t k = 0; k < perRow; ++k)
        y[b * perRow + k] = detail::dot(lhs + b * D, rhs + (b * perRow + k) * D, D);
  });
}

// K == 0 is the one-column case of K == 1 (rhs is B x D either way).
template <class T>
void dotGrad(const T *dy, const T *lhs, const T *rhs, T *dlhs, T *drhs, int64_t B, int64_t K,
             int64_t D) {
  const int64_t perRow = K == 0 ? 1 : K;
  parallelFor(B, B * perRow * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const T *__restrict l = lhs + b * D;
      T *__restrict dl = dlhs + b * D;
      detail::fillZero(dl, D);
      for (int64_t k = 0; k < perRow; ++k) {
        const T g = dy[b * perRow + k];
        const T *__restrict r = rhs + (b * perRow + k) * D;
        T *__restrict dr = drhs + (b * perRow + k) * D;
        for (int64_t j = 0; j < D; ++j) {
          dl[j] += g * r[j];
          dr[j] = g * l[j];
        }
      }
    }
  });
}

// --- Explicit instantiations ------------------------------------------------

#define EMBC_INSTANTIATE_INTERACTION(T)                                                            \
  template void interactionForward<T>(const std::vector<const T *> &, T *, int64_t, int64_t,      \
                                      bool, ComputeType);                                          \
  template void interactionGrad<T>(const T *, const std::vector<const T *> &,                     \
                                   const std::vector<T *> &, int64_t, int64_t, bool,              \
                                   ComputeType);                                                   \
  template void crossForward<T>(const T *, const T *, const T *, const T *, T *, int64_t,         \
                                int64_t, ComputeType, T *);                                        \
  template void crossGrad<T>(const T *, const T *, const T *, const T *, const T *, T *, T *, T *, \
                             T *, int64_t, int64_t, ComputeType, const T *);                       \
  template void dotForward<T>(const T *, const T *, T *, int64_t, int64_t, int64_t);              \
  template void dotGrad<T>(const T *, const T *, const T *, T *, T *, int64_t, int64_t, int64_t);

EMBC_INSTANTIATE_INTERACTION(float)
EMBC_INSTANTIATE_INTERACTION(double)

#undef EMBC_INSTANTIATE_INTERACTION

} // namespace embc::runtime::cpu
