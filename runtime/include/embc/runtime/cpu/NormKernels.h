//===- NormKernels.h - layer normalisation, forward and backward -*- C++ -*-===//
//
// The CPU kernels of `layer_norm` and `layer_norm_grad` (emb.layer_norm):
// each row of D values is normalised with its mean and biased variance,
// then scaled by gamma and shifted by beta. Templates in a header so the
// float kernels the backend binds and the double ones the finite-difference
// checks use are the same code.
//
// Row statistics are summed in double in index order (two passes: the
// mean, then the squared deviations), so a row's result depends on nothing
// but its values; rows are spread over the team. The column sums of the
// backward (dgamma, dbeta) are owned by one thread per column block and
// summed in row order: deterministic whatever the thread count.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_NORMKERNELS_H
#define EMBC_RUNTIME_CPU_NORMKERNELS_H

#include "embc/runtime/cpu/DropoutKernels.h"
#include "embc/runtime/cpu/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace embc::runtime::cpu {

namespace norm {
/// Below this many elements a loop runs on the caller (as kParallelWork).
inline constexpr int64_t kParallelWork = int64_t(1) << 15;

/// The mean and 1 / sqrt(var + eps) of one row.
template <class T> void rowStats(const T *x, int64_t D, double eps, double &mean, double &rstd) {
  double sum = 0.0;
  for (int64_t j = 0; j < D; ++j)
    sum += double(x[j]);
  mean = sum / double(D);
  double squares = 0.0;
  for (int64_t j = 0; j < D; ++j) {
    const double d = double(x[j]) - mean;
    squares += d * d;
  }
  rstd = 1.0 / std::sqrt(squares / double(D) + eps);
}
} // namespace norm

/// y[r, j] = (x[r, j] - mean_r) * rstd_r * gamma[j] + beta[j] for `rows`
/// rows of D.
template <class T>
void layerNormForward(const T *x, const T *gamma, const T *beta, T *y, int64_t rows, int64_t D,
                      double eps) {
  parallelFor(rows, rows * D > norm::kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r) {
      double mean, rstd;
      norm::rowStats(x + r * D, D, eps, mean, rstd);
      for (int64_t j = 0; j < D; ++j)
        y[r * D + j] = T((double(x[r * D + j]) - mean) * rstd * double(gamma[j]) + double(beta[j]));
    }
  });
}

namespace norm {
/// layerNormBackward, calling rowDone(r) once dx's row r is written (by
/// the thread that wrote it).
template <class T, class RowDone>
void backward(const T *dy, const T *x, const T *gamma, T *dx, T *dgamma, T *dbeta, int64_t rows,
              int64_t D, double eps, RowDone &&rowDone) {
  std::vector<double> mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
  const bool parallel = rows * D > norm::kParallelWork;
  parallelFor(rows, parallel, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r) {
      const T *xr = x + r * D, *dyr = dy + r * D;
      norm::rowStats(xr, D, eps, mean[r], rstd[r]);
      double meanG = 0.0, meanGx = 0.0;
      for (int64_t j = 0; j < D; ++j) {
        const double g = double(dyr[j]) * double(gamma[j]);
        meanG += g;
        meanGx += g * (double(xr[j]) - mean[r]) * rstd[r];
      }
      meanG /= double(D);
      meanGx /= double(D);
      for (int64_t j = 0; j < D; ++j) {
        const double xhat = (double(xr[j]) - mean[r]) * rstd[r];
        const double g = double(dyr[j]) * double(gamma[j]);
        dx[r * D + j] = T(rstd[r] * (g - meanG - xhat * meanGx));
      }
      rowDone(r);
    }
  });
  // Column sums, one thread per block of columns, rows in order.
  constexpr int64_t kColumnBlock = 64;
  const int64_t blocks = (D + kColumnBlock - 1) / kColumnBlock;
  parallelFor(blocks, parallel, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t j0 = b * kColumnBlock, width = std::min(D, j0 + kColumnBlock) - j0;
      double sumG[kColumnBlock] = {}, sumB[kColumnBlock] = {};
      for (int64_t r = 0; r < rows; ++r) // each column in row order; rows contiguous
        for (int64_t j = 0; j < width; ++j) {
          const double d = double(dy[r * D + j0 + j]);
          sumG[j] += d * (double(x[r * D + j0 + j]) - mean[r]) * rstd[r];
          sumB[j] += d;
        }
      for (int64_t j = 0; j < width; ++j) {
        dgamma[j0 + j] = T(sumG[j]);
        dbeta[j0 + j] = T(sumB[j]);
      }
    }
  });
}
} // namespace norm

/// From dy and the forward's x and gamma: dx (rows x D), dgamma and dbeta
/// (D each, overwritten). With x^ = (x - mean) rstd and g = dy gamma,
/// dx = rstd (g - mean(g) - x^ mean(g x^)).
template <class T>
void layerNormBackward(const T *dy, const T *x, const T *gamma, T *dx, T *dgamma, T *dbeta,
                       int64_t rows, int64_t D, double eps) {
  norm::backward(dy, x, gamma, dx, dgamma, dbeta, rows, D, eps, [](int64_t) {});
}

/// The draw of a dropout applied inside another kernel: its key
/// (dropoutKey), the global index of the operand's first element and the
/// rate. With dynamic padding an example's rowsPerExample rows are
/// numbered as the first of paddedRowsPerExample (dropoutApplyPadded).
struct DropoutDraw {
  uint64_t key = 0, first = 0;
  double rate = 0.0;
  int64_t rowsPerExample = 0, paddedRowsPerExample = 0; ///< 0: rows one after another
  /// The global index of row r's first element, rows of D elements.
  uint64_t rowFirst(int64_t r, int64_t D) const {
    if (rowsPerExample <= 0 || rowsPerExample == paddedRowsPerExample)
      return first + uint64_t(r * D);
    const int64_t e = r / rowsPerExample;
    return first + uint64_t((e * paddedRowsPerExample + r - e * rowsPerExample) * D);
  }
};

/// add_layer_norm (-emb-fuse): h = x + d and y = layer_norm(h), d = p, or
/// p dropped by `drop` (element r D + j is global element first + r D + j,
/// as the dropout kernel numbers it). The unfused dropout, add and
/// layer_norm, operation for operation, in one pass over each row. h may
/// be null (nothing outside reads it).
template <class T>
void addLayerNormForward(const T *x, const T *p, const T *gamma, const T *beta, T *h, T *y,
                         int64_t rows, int64_t D, double eps,
                         const std::optional<DropoutDraw> &drop) {
  const uint32_t threshold = drop ? dropoutThreshold(drop->rate) : 0;
  const T scale = drop ? T(1.0 / (1.0 - drop->rate)) : T(1);
  parallelFor(rows, rows * D > norm::kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    std::vector<T> local(h ? 0 : size_t(D));
    for (int64_t r = rBegin; r < rEnd; ++r) {
      T *hr = h ? h + r * D : local.data();
      const T *xr = x + r * D;
      if (drop)
        dropout::applyRange(p + r * D, hr, 0, D, drop->key, drop->rowFirst(r, D),
                            threshold, scale);
      else
        std::copy(p + r * D, p + (r + 1) * D, hr);
      for (int64_t j = 0; j < D; ++j)
        hr[j] = xr[j] + hr[j];
      double mean, rstd;
      norm::rowStats(hr, D, eps, mean, rstd);
      for (int64_t j = 0; j < D; ++j)
        y[r * D + j] = T((double(hr[j]) - mean) * rstd * double(gamma[j]) + double(beta[j]));
    }
  });
}

/// add_layer_norm_grad (-emb-fuse): the layer norm's gradient dx of
/// layerNormBackward, then dh = other + dx (other: the gradient the sum h
/// gets elsewhere, the residual stream's; null: none) written to dh, and
/// dp = dh dropped by `drop` as dropout_grad drops it (null dp: no
/// dropout). The unfused layer_norm_grad, add and dropout_grad, operation
/// for operation, each row finished by the thread that computed it.
template <class T>
void addLayerNormBackward(const T *dy, const T *h, const T *gamma, const T *other, T *dh,
                          T *dgamma, T *dbeta, T *dp, int64_t rows, int64_t D, double eps,
                          const std::optional<DropoutDraw> &drop) {
  const uint32_t threshold = drop ? dropoutThreshold(drop->rate) : 0;
  const T scale = drop ? T(1.0 / (1.0 - drop->rate)) : T(1);
  norm::backward(dy, h, gamma, dh, dgamma, dbeta, rows, D, eps, [&](int64_t r) {
    T *dhr = dh + r * D;
    if (other)
      for (int64_t j = 0; j < D; ++j)
        dhr[j] = other[r * D + j] + dhr[j];
    if (!dp)
      return;
    if (drop)
      dropout::applyRange(dhr, dp + r * D, 0, D, drop->key, drop->rowFirst(r, D),
                          threshold, scale);
    else
      std::copy(dhr, dhr + D, dp + r * D);
  });
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_NORMKERNELS_H
