//===- FusedDenseKernels.cpp - fused dense, elementwise, interaction ------===//
//
// The kernels -emb-fuse produces for the MLP side of a model. Each one does
// the arithmetic of the plain kernels it replaces (DenseKernels.cpp,
// InteractionKernels.cpp), in the same order where that is cheap, so the
// results agree to rounding and mostly bit for bit; what it saves is passes
// over memory and parallel regions:
//
//  - denseActForward: denseForward's GEMM, then the activation in place on
//    its output, in one launch (no separate pre-activation buffer).
//  - denseActGrad: dz and db in one pass, dW += x^T dz as one GEMM with
//    beta = 1 (no temporary), dx as one GEMM.
//  - elementwiseForward: a chain of adds / activations / activation
//    gradients per block of rows in thread-local temporaries.
//  - interactionConcat*: the pairwise dots written straight into the concat
//    row, and the gradient read straight from it.
//
// A bf16/fp16 ComputeType rounds the products' operands as the plain kernels
// do (Rounding.h): the GEMMs' operands, the interaction's inputs and its
// incoming gradient columns; the concat's copied columns pass unrounded.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/FusedDenseKernels.h"
#include "embc/runtime/plan/ActivationMath.h"

#include "ActivationLoops.h"
#include "Gemm.h"
#include "InteractionRows.h"
#include "KernelSupport.h"
#include "Rounding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>


namespace embc::runtime::cpu {

using detail::kParallelWork;

namespace {

// The serial activation loops (activateSerial, gradFromInputSerial) are
// ActivationLoops.h's, shared with DenseKernels.cpp.
using detail::activateSerial;
using detail::gradFromInputSerial;

/// dx = dy * f'(z) over n values, f' from the activation's output y = f(z):
/// the from-input formulas with s = y (sigmoid) and t = y (tanh), so the
/// result is bit-identical when y came from activateSerial. The callers
/// refuse gelu before they get here.
template <class T>
void gradFromOutputSerial(Activation f, const T *dy, const T *y, T *dx, int64_t n) {
  using Act = ActivationMath<T>;
  switch (f) {
  case Activation::None:
  case Activation::Relu:
    // relu' is the same read from y = relu(z) as from z (y > 0 iff z > 0).
    gradFromInputSerial(f, dy, y, dx, n);
    return;
  case Activation::Sigmoid:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      dx[i] = Act::sigmoidGradFromOutput(dy[i], y[i]);
    return;
  case Activation::Tanh:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      dx[i] = Act::tanhGradFromOutput(dy[i], y[i]);
    return;
  case Activation::Gelu:
    throw std::invalid_argument("activation gradient: gelu cannot be differentiated from its "
                                "output");
  }
}

template <class T>
void gradSerial(Activation f, bool fromOutput, const T *dy, const T *a, T *dx, int64_t n) {
  if (fromOutput)
    gradFromOutputSerial(f, dy, a, dx, n);
  else
    gradFromInputSerial(f, dy, a, dx, n);
}

/// Relative cost of one element of f (or f'): exp and tanh cost about as
/// much as eight simple operations, which moves the serial threshold.
inline int64_t activationCost(Activation f) {
  return f == Activation::None || f == Activation::Relu ? 1 : 8;
}

/// Elements of a y block that the epilogue should find in cache (128 KiB of
/// floats: well inside a core's L2).
constexpr int64_t kEpilogueElements = int64_t(1) << 15;
/// Elements per block of an elementwise chain (each step's temporary is
/// this large, so a few steps fit in L1/L2).
constexpr int64_t kChainBlockElements = 4096;


inline int64_t pairCount(int64_t F, bool self) {
  return self ? F * (F + 1) / 2 : F * (F - 1) / 2;
}

} // namespace

// --- Activations from their output --------------------------------------------

bool hasDerivativeFromOutput(Activation f) { return f != Activation::Gelu; }

template <class T>
void activationGradFromOutput(Activation f, const T *dy, const T *y, T *dx, int64_t n) {
  if (!hasDerivativeFromOutput(f))
    throw std::invalid_argument("activationGradFromOutput: gelu cannot be differentiated from "
                                "its output");
  // Fixed chunks so a chunk's loop vectorises and threads split evenly.
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallelFor(chunks, n > kParallelWork && chunks > 1, [&](int64_t cBegin, int64_t cEnd) {
    for (int64_t c = cBegin; c < cEnd; ++c) {
      const int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
      gradFromOutputSerial(f, dy + begin, y + begin, dx + begin, len);
    }
  });
}

// --- Dense layer with bias and activation ---------------------------------------

template <class T>
void denseActForward(Activation f, const T *x, const T *w, const T *b, T *y, T *z, int64_t B,
                     int64_t K, int64_t N, ComputeType compute) {
  if (B <= 0 || N <= 0)
    return;
  // denseForward itself, so a fused layer computes the unfused one's bits:
  // OpenBLAS sums a row block in another order than the whole matrix, and
  // Adagrad turns last-bit differences of near-zero gradients into visible
  // ones. The activation then runs in place on the GEMM's output (z is kept
  // only when asked for).
  T *acc = z ? z : y;
  denseForward(x, w, b, acc, B, K, N, compute);
  if (!z && f == Activation::None)
    return;
  const int64_t rows = std::max<int64_t>(1, kEpilogueElements / N);
  const int64_t blocks = (B + rows - 1) / rows;
  parallelFor(blocks, B * N * activationCost(f) > kParallelWork && blocks > 1, [&](int64_t blkBegin, int64_t blkEnd) {
    for (int64_t blk = blkBegin; blk < blkEnd; ++blk) {
      const int64_t r0 = blk * rows, r1 = std::min(B, r0 + rows);
      activateSerial(f, acc + r0 * N, y + r0 * N, (r1 - r0) * N);
    }
  });
}

template <class T>
void denseActGrad(Activation f, bool fromOutput, const T *dy, const T *a, const T *x, const T *w,
                  T *dz, T *dw, T *db, T *dx, int64_t B, int64_t K, int64_t N,
                  ComputeType compute) {
  if (fromOutput && !hasDerivativeFromOutput(f))
    throw std::invalid_argument("denseActGrad: gelu cannot be differentiated from its output");
  const bool activated = f != Activation::None;
  if (activated && (!a || !dz))
    throw std::invalid_argument("denseActGrad: an activation needs its input/output and a dz "
                                "workspace");
  // The gradient at the pre-activation: dz, or dy itself without activation.
  const T *g = activated ? dz : dy;
  const int64_t cost = B * N * activationCost(f);
  const int64_t threads = teamSize();

  if (db) {
    // dz and db in one pass. Each thread owns a block of columns and walks
    // the rows in order, so db's sums are biasGrad's (row order, in T) bit
    // for bit whatever the thread count. Blocks are multiples of 16 columns
    // (a cache line of floats) and split the columns over the threads.
    constexpr int64_t kMaxColumns = 256;
    int64_t width = (N + threads - 1) / threads;
    width = std::min(kMaxColumns, std::max<int64_t>(16, (width + 15) / 16 * 16));
    const int64_t blocks = (N + width - 1) / width;
    parallelFor(blocks, cost > kParallelWork && blocks > 1, [&](int64_t blkBegin, int64_t blkEnd) {
      for (int64_t blk = blkBegin; blk < blkEnd; ++blk) {
        const int64_t c0 = blk * width, cols = std::min(width, N - c0);
        T sums[kMaxColumns];
        detail::fillZero(sums, cols);
        for (int64_t r = 0; r < B; ++r) {
          const int64_t at = r * N + c0;
          if (activated)
            gradSerial(f, fromOutput, dy + at, a + at, dz + at, cols);
          const T *__restrict row = g + at;
          for (int64_t j = 0; j < cols; ++j)
            sums[j] += row[j];
        }
        for (int64_t j = 0; j < cols; ++j)
          db[c0 + j] += sums[j];
      }
    });
  } else if (activated) {
    constexpr int64_t kChunk = 4096;
    const int64_t n = B * N, chunks = (n + kChunk - 1) / kChunk;
    parallelFor(chunks, cost > kParallelWork && chunks > 1, [&](int64_t cBegin, int64_t cEnd) {
      for (int64_t c = cBegin; c < cEnd; ++c) {
        const int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
        gradSerial(f, fromOutput, dy + begin, a + begin, dz + begin, len);
      }
    });
  }
  // dW += x^T g straight into the accumulator (beta = 1: no temporary).
  detail::gemm<T>(compute, true, false, K, N, B, T(1), x, g, T(1), dw);
  if (dx)
    detail::gemm<T>(compute, false, true, B, K, N, T(1), g, w, T(0), dx);
}

// --- Dense layers sharing their input --------------------------------------------

template <class T>
void denseMultiForward(const T *x, int64_t B, int64_t K,
                       const std::vector<SharedInputLayer<T>> &layers, ComputeType compute) {
  if (B <= 0)
    return;
  if (compute != ComputeType::F32) {
    // The 16-bit GEMMs round their operands into per-call scratch slots:
    // one layer at a time (still the plain kernels' bits).
    for (const SharedInputLayer<T> &l : layers)
      denseForward(x, l.w, l.b, l.y, B, K, l.N, compute);
    return;
  }
  std::vector<detail::GemmCall<T>> calls;
  bool parallel = false;
  for (const SharedInputLayer<T> &l : layers) {
    calls.emplace_back(false, false, B, l.N, K, T(1), x, l.w, l.b ? T(1) : T(0), l.y);
    parallel |= calls.back().parallel();
  }
  const int64_t blocks = calls.front().blocks();
  parallelFor(blocks, parallel && blocks > 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk)
      for (size_t i = 0; i < layers.size(); ++i) {
        const SharedInputLayer<T> &l = layers[i];
        if (l.N <= 0)
          continue;
        const int64_t r0 = calls[i].blockBegin(blk), r1 = calls[i].blockEnd(blk);
        if (l.b) // denseForward's seed: the GEMM adds onto the bias (beta = 1)
          for (int64_t r = r0; r < r1; ++r)
            std::memcpy(l.y + r * l.N, l.b, sizeof(T) * size_t(l.N));
        calls[i].run(blk);
      }
  });
}

template <class T>
void denseMultiGrad(const T *x, T *dx, int64_t B, int64_t K,
                    const std::vector<SharedInputLayerGrad<T>> &layers, ComputeType compute) {
  // dW and db: each layer's denseActGrad without its dx.
  for (const SharedInputLayerGrad<T> &l : layers)
    denseActGrad<T>(Activation::None, false, l.dy, nullptr, x, l.w, nullptr, l.dw, l.db,
                    nullptr, B, K, l.N, compute);
  if (B <= 0 || K <= 0)
    return;
  std::vector<detail::GemmCall<T>> calls;
  int scratchUsers = 0;
  bool parallel = false;
  if (compute == ComputeType::F32)
    for (const SharedInputLayerGrad<T> &l : layers) {
      calls.emplace_back(false, true, B, K, l.N, T(1), l.dy, l.w, T(0), dx);
      scratchUsers += calls.back().usesTransposeScratch();
      parallel |= calls.back().parallel();
    }
  if (compute != ComputeType::F32 || scratchUsers > 1) {
    // Rounded operands, or several transposed weights (libxsmm, K <= 64)
    // in the one scratch: each layer's whole GEMM, then the sum in order.
    thread_local std::vector<T> term;
    term.resize(size_t(B * K));
    denseGradInput(layers.front().dy, layers.front().w, dx, B, K, layers.front().N, compute);
    for (size_t i = 1; i < layers.size(); ++i) {
      denseGradInput(layers[i].dy, layers[i].w, term.data(), B, K, layers[i].N, compute);
      parallelFor(B, B * K > kParallelWork, [&](int64_t r0, int64_t r1) {
        for (int64_t j = r0 * K; j < r1 * K; ++j)
          dx[j] = dx[j] + term[size_t(j)];
      });
    }
    return;
  }
  const int64_t blocks = calls.front().blocks();
  parallelFor(blocks, parallel && blocks > 1, [&](int64_t b0, int64_t b1) {
    thread_local std::vector<T> term;
    term.resize(size_t(detail::kGemmRowBlock * K));
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t r0 = calls[0].blockBegin(blk), n = (calls[0].blockEnd(blk) - r0) * K;
      T *out = dx + r0 * K;
      calls[0].run(blk);
      for (size_t i = 1; i < calls.size(); ++i) {
        calls[i].runInto(blk, term.data());
        for (int64_t j = 0; j < n; ++j)
          out[j] = out[j] + term[size_t(j)];
      }
    }
  });
}

// --- Elementwise chains ---------------------------------------------------------

void checkElementwiseChain(const ElementwiseChain &chain) {
  auto fail = [](const std::string &why) {
    throw std::invalid_argument("elementwise chain: " + why);
  };
  if (chain.width < 1)
    fail("width " + std::to_string(chain.width) + " < 1");
  if (chain.inputs < 0)
    fail("negative input count");
  const int64_t m = chain.inputs;
  for (size_t j = 0; j < chain.steps.size(); ++j) {
    const ElementwiseStep &step = chain.steps[j];
    const std::string where = "step " + std::to_string(j) + ": ";
    const size_t argc = step.args.size();
    switch (step.op) {
    case ElementwiseStep::Op::Add:
      if (argc < (step.bias ? 2u : 1u))
        fail(where + "add needs at least " + (step.bias ? "2 arguments with a bias" : "1 argument"));
      if (step.bias && step.args.back() >= m)
        fail(where + "the bias (reference " + std::to_string(step.args.back()) +
             ") must be an input, not a step's value");
      break;
    case ElementwiseStep::Op::Activation:
      if (argc != 1)
        fail(where + "activation takes 1 argument, got " + std::to_string(argc));
      break;
    case ElementwiseStep::Op::ActivationGrad:
      if (argc != 2)
        fail(where + "activation_grad takes 2 arguments (dy, a), got " + std::to_string(argc));
      if (step.fromOutput && !hasDerivativeFromOutput(step.kind))
        fail(where + "gelu cannot be differentiated from its output");
      break;
    }
    for (int32_t r : step.args)
      if (r < 0 || r >= m + int64_t(j))
        fail(where + "reference " + std::to_string(r) + " is not an input or an earlier step (" +
             std::to_string(m) + " inputs)");
  }
  for (size_t o = 0; o < chain.results.size(); ++o) {
    const int32_t r = chain.results[o];
    if (r < 0 || r >= m + int64_t(chain.steps.size()))
      fail("result " + std::to_string(o) + ": reference " + std::to_string(r) + " out of range");
  }
}

template <class T>
void elementwiseForward(const ElementwiseChain &chain, const T *const *ins, T *const *outs,
                        int64_t n) {
  const int64_t N = chain.width, m = chain.inputs;
  const int64_t steps = int64_t(chain.steps.size());
  if (N < 1 || n % N != 0)
    throw std::invalid_argument("elementwiseForward: " + std::to_string(n) +
                                " elements are not whole rows of " + std::to_string(N));
  const int64_t rowsPerBlock = std::max<int64_t>(1, kChainBlockElements / N);
  const int64_t blockElems = rowsPerBlock * N;
  const int64_t rows = n / N, blocks = (rows + rowsPerBlock - 1) / rowsPerBlock;
  int64_t cost = int64_t(chain.results.size());
  for (const ElementwiseStep &step : chain.steps)
    cost += step.op == ElementwiseStep::Op::Add ? int64_t(step.args.size())
                                                : activationCost(step.kind);

  parallelFor(blocks, n * cost > kParallelWork && blocks > 1, [&](int64_t blkBegin, int64_t blkEnd) {
    for (int64_t blk = blkBegin; blk < blkEnd; ++blk) {
      // One temporary per step, reused across calls: only grows.
      thread_local std::vector<T> scratch;
      if (scratch.size() < size_t(steps * blockElems))
        scratch.resize(size_t(steps * blockElems));
      const int64_t r0 = blk * rowsPerBlock, r1 = std::min(rows, r0 + rowsPerBlock);
      const int64_t off = r0 * N, len = (r1 - r0) * N;
      T *temps = scratch.data();
      // The block of a full operand: an input's slice or a step's temporary.
      auto value = [&](int32_t r) -> const T * {
        return r < m ? ins[r] + off : temps + (r - m) * blockElems;
      };
      for (int64_t j = 0; j < steps; ++j) {
        const ElementwiseStep &step = chain.steps[j];
        T *__restrict out = temps + j * blockElems;
        switch (step.op) {
        case ElementwiseStep::Op::Add: {
          // addForward's order: x_0 + x_1 + ... then the bias.
          const size_t full = step.args.size() - (step.bias ? 1 : 0);
          std::memcpy(out, value(step.args[0]), sizeof(T) * size_t(len));
          for (size_t i = 1; i < full; ++i) {
            const T *__restrict in = value(step.args[i]);
            for (int64_t e = 0; e < len; ++e)
              out[e] += in[e];
          }
          if (step.bias) {
            const T *__restrict bias = ins[step.args.back()];
            for (int64_t r = 0; r < r1 - r0; ++r)
              for (int64_t c = 0; c < N; ++c)
                out[r * N + c] += bias[c];
          }
          break;
        }
        case ElementwiseStep::Op::Activation:
          activateSerial(step.kind, value(step.args[0]), out, len);
          break;
        case ElementwiseStep::Op::ActivationGrad:
          gradSerial(step.kind, step.fromOutput, value(step.args[0]), value(step.args[1]), out, len);
          break;
        }
      }
      for (size_t o = 0; o < chain.results.size(); ++o)
        std::memcpy(outs[o] + off, value(chain.results[o]), sizeof(T) * size_t(len));
    }
  });
}

// --- Interaction written into a concat ----------------------------------------

template <class T>
void interactionConcatForward(const std::vector<const T *> &copies,
                              const std::vector<int64_t> &copyWidths, int64_t position,
                              const std::vector<const T *> &xsIn, T *y, int64_t B, int64_t D,
                              bool self, ComputeType compute) {
  std::vector<const T *> rounded; // stays empty (no allocation) in f32
  const std::vector<const T *> &xs =
      compute == ComputeType::F32 ? xsIn : (rounded = detail::roundedCopies(compute, xsIn, B * D));
  const int64_t C = int64_t(copies.size()), F = int64_t(xs.size());
  if (int64_t(copyWidths.size()) != C || position < 0 || position > C || F < 2)
    throw std::invalid_argument("interactionConcatForward: " + std::to_string(C) + " copies, " +
                                std::to_string(copyWidths.size()) + " widths, position " +
                                std::to_string(position) + ", " + std::to_string(F) +
                                " interaction inputs");
  const int64_t P = pairCount(F, self);
  int64_t W = P;
  for (int64_t w : copyWidths)
    W += w;
  const detail::InteractionRows<T> rows(F, D, self);
  parallelFor(B, B * (P * D + W) > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      if (b + rows.kRowsAhead < bEnd)
        rows.prefetch(xs, b + rows.kRowsAhead, D);
      T *row = y + b * W;
      for (int64_t j = 0; j <= C; ++j) {
        if (j == position) {
          rows.forward(xs, b, row);
          row += P;
        }
        if (j < C) {
          std::memcpy(row, copies[j] + b * copyWidths[j], sizeof(T) * size_t(copyWidths[j]));
          row += copyWidths[j];
        }
      }
    }
  });
}

template <class T>
void interactionConcatGrad(const T *dy, const std::vector<int64_t> &copyWidths, int64_t position,
                           const std::vector<int32_t> &copyInto,
                           const std::vector<const T *> &xsIn, const std::vector<T *> &dxs,
                           const std::vector<T *> &dcopies, int64_t B, int64_t D, bool self,
                           ComputeType compute) {
  std::vector<const T *> rounded; // stays empty (no allocation) in f32
  const std::vector<const T *> &xs =
      compute == ComputeType::F32 ? xsIn : (rounded = detail::roundedCopies(compute, xsIn, B * D));
  const int64_t C = int64_t(copyWidths.size()), F = int64_t(xs.size());
  if (int64_t(copyInto.size()) != C || int64_t(dcopies.size()) != C ||
      int64_t(dxs.size()) != F || position < 0 || position > C || F < 2)
    throw std::invalid_argument("interactionConcatGrad: " + std::to_string(C) + " copy widths, " +
                                std::to_string(copyInto.size()) + " copy targets, " +
                                std::to_string(dcopies.size()) + " copy gradients, position " +
                                std::to_string(position) + ", " + std::to_string(F) +
                                " inputs and " + std::to_string(dxs.size()) + " gradients");
  for (int64_t j = 0; j < C; ++j)
    if (copyInto[j] < -1 || copyInto[j] >= F || (copyInto[j] >= 0 && copyWidths[j] != D))
      throw std::invalid_argument("interactionConcatGrad: copy " + std::to_string(j) +
                                  " (width " + std::to_string(copyWidths[j]) +
                                  ") cannot be interaction input " + std::to_string(copyInto[j]));
  const int64_t P = pairCount(F, self);
  int64_t W = P;
  for (int64_t w : copyWidths)
    W += w;
  // The interaction's gradient columns are product operands (rounded); the
  // copies' columns are read from dy itself. dyRounded == dy in f32.
  const T *dyRounded = detail::roundedCopy(compute, dy, B * W, detail::kGradSlot);
  const detail::InteractionRows<T> rows(F, D, self);
  parallelFor(B, B * (P * D + W) > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      if (b + rows.kRowsAhead < bEnd)
        rows.prefetch(xs, b + rows.kRowsAhead, D);
      const T *row = dy + b * W;
      // Column where the interaction starts: after the first `position` copies.
      int64_t at = 0;
      for (int64_t j = 0; j < position; ++j)
        at += copyWidths[j];
      // interactionGrad's arithmetic for row b.
      rows.backward(dyRounded + b * W + at, xs, dxs, b);
      // The copies' columns: added to the input they copy, or copied out.
      const T *col = row;
      for (int64_t j = 0; j < C; ++j) {
        if (j == position)
          col += P;
        const int64_t w = copyWidths[j];
        if (copyInto[j] >= 0) {
          T *__restrict dxi = dxs[copyInto[j]] + b * D;
          for (int64_t e = 0; e < w; ++e)
            dxi[e] += col[e];
        } else {
          std::memcpy(dcopies[j] + b * w, col, sizeof(T) * size_t(w));
        }
        col += w;
      }
    }
  });
}

// --- Explicit instantiations ------------------------------------------------

#define EMBC_INSTANTIATE_FUSED_DENSE(T)                                                            \
  template void activationGradFromOutput<T>(Activation, const T *, const T *, T *, int64_t);      \
  template void denseActForward<T>(Activation, const T *, const T *, const T *, T *, T *,         \
                                   int64_t, int64_t, int64_t, ComputeType);                        \
  template void denseActGrad<T>(Activation, bool, const T *, const T *, const T *, const T *, T *, \
                                T *, T *, T *, int64_t, int64_t, int64_t, ComputeType);            \
  template void denseMultiForward<T>(const T *, int64_t, int64_t,                                 \
                                     const std::vector<SharedInputLayer<T>> &, ComputeType);      \
  template void denseMultiGrad<T>(const T *, T *, int64_t, int64_t,                              \
                                  const std::vector<SharedInputLayerGrad<T>> &, ComputeType);     \
  template void elementwiseForward<T>(const ElementwiseChain &, const T *const *, T *const *,     \
                                      int64_t);                                                    \
  template void interactionConcatForward<T>(const std::vector<const T *> &,                       \
                                            const std::vector<int64_t> &, int64_t,                 \
                                            const std::vector<const T *> &, T *, int64_t, int64_t, \
                                            bool, ComputeType);                                    \
  template void interactionConcatGrad<T>(const T *, const std::vector<int64_t> &, int64_t,        \
                                         const std::vector<int32_t> &,                             \
                                         const std::vector<const T *> &, const std::vector<T *> &, \
                                         const std::vector<T *> &, int64_t, int64_t, bool,         \
                                         ComputeType);

EMBC_INSTANTIATE_FUSED_DENSE(float)
EMBC_INSTANTIATE_FUSED_DENSE(double)

#undef EMBC_INSTANTIATE_FUSED_DENSE

} // namespace embc::runtime::cpu
