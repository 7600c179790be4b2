//===- InteractionRows.h - DLRM's pairwise dots, one batch row at a time -*- C++ -*-===//
//
// Private to EmbCpuKernels. The arithmetic of one batch row of the pairwise
// interaction, shared by the plain kernels (InteractionKernels.cpp) and the
// fused ones (FusedDenseKernels.cpp) so the two agree bit for bit.
//
// Row b's F inputs x_0..x_{F-1} (each D wide) form an F x D tile X. The
// forward is the upper triangle of the Gram matrix X X^T, the backward
// dX = G X with G the symmetric F x F matrix of the row's incoming gradient
// (g_ij on both sides of the diagonal; 2 g_ii on it with self-interaction,
// else 0). Both are one tiny GEMM per row, run by a libxsmm kernel made for
// the exact (F, D): F^2 D multiply-adds in registers instead of F^2 / 2
// separate dot products that each end in a horizontal sum (the plain loops,
// kept where libxsmm has no kernel, ran dlrm_small's 351 dots per row at a
// fifth of the GEMM rate: docs/performance.md).
//
// The tile lives in per-thread scratch: the forward gathers X transposed
// (column-major F x D, so X X^T is one kernel with a transposed B), the
// backward gathers X as it is (column-major D x F) and writes G column-major.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CPU_INTERACTIONROWS_H
#define EMBC_RUNTIME_LIB_CPU_INTERACTIONROWS_H

#include "Gemm.h"
#include "KernelSupport.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace embc::runtime::cpu::detail {

template <class T> class InteractionRows {
public:
  InteractionRows(int64_t F, int64_t D, bool self) : F_(F), D_(D), self_(self) {
    gram_ = smallGemm<T>(F, F, D, F, F, F, /*accumulate=*/false, /*transB=*/true);
    grad_ = smallGemm<T>(D, F, F, D, F, D, /*accumulate=*/false, /*transB=*/false);
  }

  /// Asks for row b of every input to be brought into cache: the F inputs
  /// are F separate arrays, one line each per row, more streams than the
  /// hardware prefetchers follow. Callers ask a few rows ahead.
  static void prefetch(const std::vector<const T *> &xs, int64_t b, int64_t D) {
    for (const T *x : xs)
      for (int64_t at = 0; at < D * int64_t(sizeof(T)); at += 64)
        __builtin_prefetch(reinterpret_cast<const char *>(x + b * D) + at, 0, 3);
  }
  /// How many rows ahead callers prefetch.
  static constexpr int64_t kRowsAhead = 4;

  /// Pairs per row: i < j (i <= j with self), row-major upper triangle.
  int64_t pairs() const { return self_ ? F_ * (F_ + 1) / 2 : F_ * (F_ - 1) / 2; }

  /// out[p] = <x_i, x_j> of row b, pairs in (0,1), (0,2), ..., (1,2), ... order.
  void forward(const std::vector<const T *> &xs, int64_t b, T *out) const {
    const int64_t F = F_, D = D_;
    if (!gram_) {
      int64_t p = 0;
      for (int64_t i = 0; i < F; ++i)
        for (int64_t j = self_ ? i : i + 1; j < F; ++j)
          out[p++] = dot(xs[i] + b * D, xs[j] + b * D, D);
      return;
    }
    T *tile = scratch(F * D + F * F);
    T *gram = tile + F * D;
    for (int64_t i = 0; i < F; ++i) {
      const T *x = xs[i] + b * D;
      for (int64_t d = 0; d < D; ++d)
        tile[i + d * F] = x[d];
    }
    gram_(tile, tile, gram);
    // gram is column-major and symmetric up to rounding; read the upper
    // triangle by rows as (i, j) = gram[i + j F] for j >= i.
    int64_t p = 0;
    for (int64_t i = 0; i < F; ++i)
      for (int64_t j = self_ ? i : i + 1; j < F; ++j)
        out[p++] = gram[i + j * F];
  }

  /// dx_i (overwritten) of row b from the row's pair gradients g.
  void backward(const T *g, const std::vector<const T *> &xs, const std::vector<T *> &dxs,
                int64_t b) const {
    const int64_t F = F_, D = D_;
    if (!grad_) {
      for (int64_t i = 0; i < F; ++i)
        fillZero(dxs[i] + b * D, D);
      int64_t p = 0;
      for (int64_t i = 0; i < F; ++i) {
        const T *xi = xs[i] + b * D;
        T *dxi = dxs[i] + b * D;
        for (int64_t j = self_ ? i : i + 1; j < F; ++j, ++p) {
          if (i == j) { // d<x, x>/dx = 2x
            axpy(T(2) * g[p], xi, dxi, D);
            continue;
          }
          axpy(g[p], xs[j] + b * D, dxi, D);
          axpy(g[p], xi, dxs[j] + b * D, D);
        }
      }
      return;
    }
    T *tile = scratch(2 * F * D + F * F);
    T *G = tile + F * D, *dx = G + F * F;
    for (int64_t i = 0; i < F; ++i)
      std::memcpy(tile + i * D, xs[i] + b * D, sizeof(T) * size_t(D));
    int64_t p = 0;
    for (int64_t i = 0; i < F; ++i) {
      G[i + i * F] = self_ ? T(2) * g[p++] : T(0);
      for (int64_t j = i + 1; j < F; ++j, ++p)
        G[i + j * F] = G[j + i * F] = g[p];
    }
    grad_(tile, G, dx); // dX^T = X^T G: column-major D x F, i.e. dX by rows
    for (int64_t i = 0; i < F; ++i)
      std::memcpy(dxs[i] + b * D, dx + i * D, sizeof(T) * size_t(D));
  }

private:
  static T *scratch(int64_t n) {
    thread_local std::vector<T> buffer;
    if (int64_t(buffer.size()) < n)
      buffer.resize(size_t(n));
    return buffer.data();
  }

  int64_t F_, D_;
  bool self_;
  SmallGemm<T> gram_, grad_;
};

} // namespace embc::runtime::cpu::detail

#endif // EMBC_RUNTIME_LIB_CPU_INTERACTIONROWS_H
