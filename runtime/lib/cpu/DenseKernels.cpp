//===- DenseKernels.cpp - dense layers, activations, concat, add ----------===//
//
// The MLP side of the kernel catalogue. GEMMs go to BLAS; the elementwise
// and row-copy loops are written over contiguous memory so the compiler
// vectorises them, and are spread over the team (Parallel.h) only when the work is
// large enough to pay for it. Every output element is computed by exactly
// one thread in a fixed order, so results do not depend on scheduling.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"

#include "ActivationLoops.h"
#include "Gemm.h"
#include "KernelSupport.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace embc::runtime::cpu {

using detail::kParallelWork;

// --- Dense layers -----------------------------------------------------------

template <class T>
void denseForward(const T *x, const T *w, const T *b, T *y, int64_t B, int64_t K, int64_t N,
                  ComputeType compute) {
  T beta = T(0);
  if (b) {
    // Seed every row with the bias so the GEMM adds onto it (beta = 1).
    parallelFor(B, B * N > kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
      for (int64_t r = rBegin; r < rEnd; ++r)
        std::memcpy(y + r * N, b, sizeof(T) * size_t(N));
    });
    beta = T(1);
  }
  // The bias seeds the f32 accumulator unrounded (a GPU epilogue adds it in f32).
  detail::gemm<T>(compute, false, false, B, N, K, T(1), x, w, beta, y);
}

template <class T>
void denseGradInput(const T *dy, const T *w, T *dx, int64_t B, int64_t K, int64_t N,
                    ComputeType compute) {
  detail::gemm<T>(compute, false, true, B, K, N, T(1), dy, w, T(0), dx);
}

template <class T>
void denseGradWeight(const T *x, const T *dy, T *dw, int64_t B, int64_t K, int64_t N,
                     ComputeType compute) {
  detail::gemm<T>(compute, true, false, K, N, B, T(1), x, dy, T(0), dw);
}

template <class T> void biasGrad(const T *dy, T *db, int64_t B, int64_t N) {
  // Each thread owns a block of columns and sums them over the rows in row
  // order: deterministic, and the inner loop stays contiguous.
  constexpr int64_t kColumnBlock = 64;
  const int64_t blocks = (N + kColumnBlock - 1) / kColumnBlock;
  parallelFor(blocks, B * N > kParallelWork && blocks > 1, [&](int64_t blkBegin, int64_t blkEnd) {
    for (int64_t blk = blkBegin; blk < blkEnd; ++blk) {
      const int64_t c0 = blk * kColumnBlock;
      const int64_t width = std::min(kColumnBlock, N - c0);
      T *__restrict out = db + c0;
      detail::fillZero(out, width);
      for (int64_t r = 0; r < B; ++r) {
        const T *__restrict row = dy + r * N + c0;
        for (int64_t j = 0; j < width; ++j)
          out[j] += row[j];
      }
    }
  });
}

// --- Activations --------------------------------------------------------------

// The formulas are plan/ActivationMath.h's, which the CUDA codegen also
// emits, in ActivationLoops.h's serial loops: here they only choose threads.

namespace {

/// Elements below which an activation stays on one thread: relu is a
/// compare, the others call a transcendental function (8x the work).
int64_t activationWork(Activation f) {
  return f == Activation::Relu ? kParallelWork : kParallelWork / 8;
}

} // namespace

// y may alias x (in-place activation): elementwise loops stay correct, so
// no restrict here.
template <class T> void activationForward(Activation f, const T *x, T *y, int64_t n) {
  if (static_cast<size_t>(f) >= enumCount<Activation>())
    throw std::invalid_argument("activationForward: unknown activation " +
                                std::to_string(static_cast<int>(f)));
  if (f == Activation::None)
    return detail::activateSerial(f, x, y, n);
  parallelFor(n, n > activationWork(f), [&](int64_t iBegin, int64_t iEnd) {
    detail::activateSerial(f, x + iBegin, y + iBegin, iEnd - iBegin);
  });
}

// dx may alias dy (in-place), for the same reason as above. The kink of relu
// at 0 gets derivative 0 (the subgradient frameworks use).
template <class T>
void activationGrad(Activation f, const T *dy, const T *x, T *dx, int64_t n) {
  if (static_cast<size_t>(f) >= enumCount<Activation>())
    throw std::invalid_argument("activationGrad: unknown activation " +
                                std::to_string(static_cast<int>(f)));
  if (f == Activation::None)
    return detail::gradFromInputSerial(f, dy, x, dx, n);
  parallelFor(n, n > activationWork(f), [&](int64_t iBegin, int64_t iEnd) {
    detail::gradFromInputSerial(f, dy + iBegin, x + iBegin, dx + iBegin, iEnd - iBegin);
  });
}

// --- Concat, slice, add -------------------------------------------------------

template <class T>
void concatForward(const std::vector<const T *> &xs, const std::vector<int64_t> &widths, T *y,
                   int64_t B) {
  if (xs.size() != widths.size())
    throw std::invalid_argument("concatForward: " + std::to_string(xs.size()) + " inputs but " +
                                std::to_string(widths.size()) + " widths");
  int64_t N = 0;
  for (int64_t w : widths)
    N += w;
  parallelFor(B, B * N > kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r) {
      T *row = y + r * N;
      for (size_t i = 0; i < xs.size(); ++i) {
        std::memcpy(row, xs[i] + r * widths[i], sizeof(T) * size_t(widths[i]));
        row += widths[i];
      }
    }
  });
}

template <class T>
void sliceColumns(const T *x, T *y, int64_t B, int64_t N, int64_t offset, int64_t width) {
  if (offset < 0 || width < 0 || offset + width > N)
    throw std::invalid_argument("sliceColumns: columns [" + std::to_string(offset) + ", " +
                                std::to_string(offset + width) + ") are outside a row of " +
                                std::to_string(N));
  parallelFor(B, B * width > kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r)
      std::memcpy(y + r * width, x + r * N + offset, sizeof(T) * size_t(width));
  });
}

template <class T>
void addForward(const std::vector<const T *> &xs, const T *bias, T *y, int64_t B, int64_t N) {
  // Row by row: y = x_0 + x_1 + ... (+ bias), always summed in that order.
  // y may be x_0 itself (accumulating in place); it must not be another x_i.
  parallelFor(B, B * N * int64_t(xs.size() + 1) > kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r) {
      T *out = y + r * N;
      if (xs.empty())
        detail::fillZero(out, N);
      else if (xs[0] != y)
        std::memcpy(out, xs[0] + r * N, sizeof(T) * size_t(N));
      for (size_t i = 1; i < xs.size(); ++i) {
        const T *in = xs[i] + r * N;
        for (int64_t j = 0; j < N; ++j)
          out[j] += in[j];
      }
      if (bias)
        for (int64_t j = 0; j < N; ++j)
          out[j] += bias[j];
    }
  });
}

template <class T> void addTwo(const T *a, const T *b, T *y, int64_t n) {
  // y may alias a or b (accumulating a second gradient contribution in
  // place), so no restrict here; the loop still vectorises (pure elementwise).
  parallelFor(n, n > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
#pragma omp simd
    for (int64_t i = iBegin; i < iEnd; ++i)
      y[i] = a[i] + b[i];
  });
}

// --- Explicit instantiations ------------------------------------------------

#define EMBC_INSTANTIATE_DENSE(T)                                                                  \
  template void denseForward<T>(const T *, const T *, const T *, T *, int64_t, int64_t, int64_t, \
                                ComputeType);                                                      \
  template void denseGradInput<T>(const T *, const T *, T *, int64_t, int64_t, int64_t,           \
                                  ComputeType);                                                    \
  template void denseGradWeight<T>(const T *, const T *, T *, int64_t, int64_t, int64_t,          \
                                   ComputeType);                                                   \
  template void biasGrad<T>(const T *, T *, int64_t, int64_t);                                     \
  template void activationForward<T>(Activation, const T *, T *, int64_t);                        \
  template void activationGrad<T>(Activation, const T *, const T *, T *, int64_t);                \
  template void concatForward<T>(const std::vector<const T *> &, const std::vector<int64_t> &,    \
                                 T *, int64_t);                                                    \
  template void sliceColumns<T>(const T *, T *, int64_t, int64_t, int64_t, int64_t);              \
  template void addForward<T>(const std::vector<const T *> &, const T *, T *, int64_t, int64_t);  \
  template void addTwo<T>(const T *, const T *, T *, int64_t);

EMBC_INSTANTIATE_DENSE(float)
EMBC_INSTANTIATE_DENSE(double)

#undef EMBC_INSTANTIATE_DENSE

} // namespace embc::runtime::cpu
