//===- ActivationLoops.h - the serial activation loops ----------*- C++ -*-===//
//
// Private to EmbCpuKernels: y = f(x) and dx = dy * f'(x) over a range, the
// one loop per activation that DenseKernels.cpp and FusedDenseKernels.cpp
// both run.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CPU_ACTIVATIONLOOPS_H
#define EMBC_RUNTIME_LIB_CPU_ACTIVATIONLOOPS_H

#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/plan/ActivationMath.h"

#include <cstdint>
#include <cstring>

namespace embc::runtime::cpu::detail {

// --- Scalar activation loops ------------------------------------------------------
//
// The formulas are plan/ActivationMath.h's, which the CUDA codegen also
// emits. These loops are serial: DenseKernels.cpp's activationForward and
// activationGrad run them on each thread's range, and the fused kernels on
// one block at a time, so a fused kernel produces the same bits as the plain
// chain. The switch sits outside the loop so each loop vectorises.

/// y = f(x) over n values; y may alias x.
template <class T> void activateSerial(Activation f, const T *x, T *y, int64_t n) {
  using Act = ActivationMath<T>;
  switch (f) {
  case Activation::None:
    if (x != y)
      std::memcpy(y, x, sizeof(T) * size_t(n));
    return;
  case Activation::Relu:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      y[i] = Act::relu(x[i]);
    return;
  case Activation::Sigmoid:
    for (int64_t i = 0; i < n; ++i)
      y[i] = Act::sigmoid(x[i]);
    return;
  case Activation::Tanh:
    for (int64_t i = 0; i < n; ++i)
      y[i] = Act::tanh(x[i]);
    return;
  case Activation::Gelu:
    for (int64_t i = 0; i < n; ++i)
      y[i] = Act::gelu(x[i]);
    return;
  }
}

/// dx = dy * f'(x) over n values, f' from the activation's input x.
template <class T>
void gradFromInputSerial(Activation f, const T *dy, const T *x, T *dx, int64_t n) {
  using Act = ActivationMath<T>;
  switch (f) {
  case Activation::None:
    if (dx != dy)
      std::memcpy(dx, dy, sizeof(T) * size_t(n));
    return;
  case Activation::Relu:
    // dy is loaded unconditionally: with the load inside the ?: GCC keeps a
    // branch (mispredicted half the time) instead of a vector blend.
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const T g = dy[i];
      dx[i] = Act::reluGrad(g, x[i]);
    }
    return;
  case Activation::Sigmoid:
    for (int64_t i = 0; i < n; ++i)
      dx[i] = Act::sigmoidGrad(dy[i], x[i]);
    return;
  case Activation::Tanh:
    for (int64_t i = 0; i < n; ++i)
      dx[i] = Act::tanhGrad(dy[i], x[i]);
    return;
  case Activation::Gelu:
    for (int64_t i = 0; i < n; ++i)
      dx[i] = Act::geluGrad(dy[i], x[i]);
    return;
  }
}

} // namespace embc::runtime::cpu::detail

#endif // EMBC_RUNTIME_LIB_CPU_ACTIVATIONLOOPS_H
