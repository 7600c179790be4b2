//===- DropoutKernels.h - inverted dropout with counter-based masks -*- C++ -*-===//
//
// The CPU kernel of `dropout` and `dropout_grad` (emb.dropout): while
// training, each element is kept with probability 1 - rate and scaled by
// 1 / (1 - rate), or set to 0; in evaluation it is copied.
//
// The mask is not stored. Element i of a launch draws the word
// mix64(key + i) with key = hashOf(seed, kDropoutTag, stream, step), as
// stochastic rounding draws its bits (RowStorage.cpp), and i counts the
// element in the *global* batch: example e of the running micro-batch of
// this rank is example exampleOffset + microBatch * B + e of the batch the
// trainer read. So the backward regenerates the forward's mask, a
// recomputed forward (remat) draws it again, a resumed run draws the
// uninterrupted run's masks, and splitting the batch into micro-batches or
// over data-parallel ranks changes no element's draw. The generated CUDA
// (passes/lib/cuda/DropoutLowering.cpp) draws the same words.
//
// The draw compares the word's top 24 bits with round(rate * 2^24), an
// integer test that the host and the device make identically.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_DROPOUTKERNELS_H
#define EMBC_RUNTIME_CPU_DROPOUTKERNELS_H

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/data/CounterRandom.h"

#include <cmath>
#include <cstdint>

namespace embc::runtime::cpu {

namespace dropout {
/// Folded into every dropout key, so a dropout stream never meets the
/// words of another purpose with the same counters.
inline constexpr uint64_t kTag = 0xD209'0A7E'5EED'0001ull;
/// Elements per parallel task (one mix64 and a multiply each).
inline constexpr int64_t kParallelWork = int64_t(1) << 16;
} // namespace dropout

/// The key of one dropout site (`stream`) at training step `step`.
constexpr uint64_t dropoutKey(uint64_t seed, int64_t stream, int64_t step) {
  return data::hashOf(seed, dropout::kTag, uint64_t(stream), uint64_t(step));
}

/// An element is dropped when the top 24 bits of its word are below this.
inline uint32_t dropoutThreshold(double rate) {
  return uint32_t(std::llround(rate * double(1u << 24)));
}

/// y = keep ? x * scale : 0 for n elements, element i drawing mix64(key +
/// first + i); scale = 1 / (1 - rate), rounded to T. `first` is the global
/// index of x[0] (see the file comment).
template <class T>
void dropoutApply(const T *x, T *y, int64_t n, uint64_t key, uint64_t first, double rate) {
  const uint32_t threshold = dropoutThreshold(rate);
  const T scale = T(1.0 / (1.0 - rate));
  const bool parallel = n > dropout::kParallelWork;
  parallelFor(n, parallel, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint32_t draw = uint32_t(data::mix64(key + first + uint64_t(i)) >> 40);
      y[i] = draw < threshold ? T(0) : x[i] * scale;
    }
  });
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_DROPOUTKERNELS_H
