//===- DropoutKernels.h - inverted dropout with counter-based masks -*- C++ -*-===//
//
// The CPU kernel of `dropout` and `dropout_grad` (emb.dropout): while
// training, each element is kept with probability 1 - rate and scaled by
// 1 / (1 - rate), or set to 0; in evaluation it is copied.
//
// The mask is not stored. Element g of the *global* batch (example e of
// the running micro-batch of this rank is example exampleOffset +
// microBatch * B + e of the batch the trainer read) draws a 32-bit word
// from the launch's key = hashOf(seed, kTag, stream, step), as stochastic
// rounding draws its bits (RowStorage.cpp). So the backward regenerates the
// forward's mask, a recomputed forward (remat) draws it again, a resumed
// run draws the uninterrupted run's masks, and splitting the batch into
// micro-batches or over data-parallel ranks changes no element's draw. The
// generated CUDA (passes/lib/cuda/DropoutLowering.cpp) draws the same
// words.
//
// The word is two rounds of a 32-bit integer hash (Wellons's lowbias32) of
// g's low 32 bits, keyed by the two halves of mix64(key + g's high word):
// 32-bit multiplies vectorise (SSE4.1's pmulld, 4 lanes) where mix64's
// 64-bit ones do not, which made the first, mix64-per-element version take
// 2.6 ns an element, 16% of transformer_layer's step. The second round's
// key makes two keys' masks unrelated even where their first-round inputs
// overlap. An element is dropped when the word's top 24 bits are below
// round(rate * 2^24), an integer test the host and the device make alike.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_DROPOUTKERNELS_H
#define EMBC_RUNTIME_CPU_DROPOUTKERNELS_H

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/data/CounterRandom.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace embc::runtime::cpu {

namespace dropout {
/// Folded into every dropout key, so a dropout stream never meets the
/// words of another purpose with the same counters.
inline constexpr uint64_t kTag = 0xD209'0A7E'5EED'0001ull;
/// Below this many elements a launch runs on the caller.
inline constexpr int64_t kParallelWork = int64_t(1) << 16;
} // namespace dropout

/// The key of one dropout site (`stream`) at training step `step`.
constexpr uint64_t dropoutKey(uint64_t seed, int64_t stream, int64_t step) {
  return data::hashOf(seed, dropout::kTag, uint64_t(stream), uint64_t(step));
}

namespace dropout {
/// lowbias32 (C. Wellons's hash-prospector): a bijection of 32-bit words.
constexpr uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  return x ^ (x >> 16);
}
/// The two round keys of the global elements whose index has high word `hi`.
struct RoundKeys {
  uint32_t first, second;
};
constexpr RoundKeys roundKeys(uint64_t key, uint64_t hi) {
  const uint64_t k = data::mix64(key + hi);
  return {uint32_t(k), uint32_t(k >> 32)};
}
/// The word of the element whose index has low word `lo`.
constexpr uint32_t word(RoundKeys k, uint32_t lo) {
  return hash32(hash32(lo ^ k.first) ^ k.second);
}
} // namespace dropout

/// An element is dropped when the top 24 bits of its word are below this.
inline uint32_t dropoutThreshold(double rate) {
  return uint32_t(std::llround(rate * double(1u << 24)));
}

namespace dropout {
/// dropoutApply's elements [begin, end) on the calling thread: runs of
/// one high word (a launch rarely crosses a 2^32 boundary), each a
/// branch-free loop the compiler vectorises.
template <class T>
void applyRange(const T *x, T *y, int64_t begin, int64_t end, uint64_t key, uint64_t first,
                uint32_t threshold, T scale) {
  for (int64_t i = begin; i < end;) {
    const uint64_t g = first + uint64_t(i);
    const int64_t run = std::min<int64_t>(end - i, int64_t((uint64_t(1) << 32) - (g & 0xFFFFFFFFu)));
    const RoundKeys k = roundKeys(key, g >> 32);
    const uint32_t lo = uint32_t(g);
    const T *xs = x + i;
    T *ys = y + i;
    for (int64_t j = 0; j < run; ++j) {
      const uint32_t draw = word(k, lo + uint32_t(j)) >> 8;
      // keep (0 or 1) times scale, not a choice between 0 and x * scale:
      // GCC leaves any select in this loop as a branch ("control flow in
      // loop") and the loop scalar. A dropped NaN or infinity stays
      // non-finite, as in x * mask.
      const int32_t keep = int32_t(draw >= threshold);
      ys[j] = xs[j] * (T(keep) * scale);
    }
    i += run;
  }
}
} // namespace dropout

/// y = x * (keep ? scale : 0) for n elements, x[i] being element first + i
/// of the global batch; scale = 1 / (1 - rate), rounded to T.
template <class T>
void dropoutApply(const T *x, T *y, int64_t n, uint64_t key, uint64_t first, double rate) {
  const uint32_t threshold = dropoutThreshold(rate);
  const T scale = T(1.0 / (1.0 - rate));
  parallelFor(n, n > dropout::kParallelWork, [&](int64_t begin, int64_t end) {
    dropout::applyRange(x, y, begin, end, key, first, threshold, scale);
  });
}

/// dropoutApply over examples of `perExample` elements laid out one after
/// another, each numbered as the first perExample of `paddedPerExample`
/// (dynamic padding: a batch of sequences run at its own longest length
/// draws the masks of the max_len layout, so it drops what the padded run
/// drops). Example e's element i is global element first + e
/// paddedPerExample + i.
template <class T>
void dropoutApplyPadded(const T *x, T *y, int64_t n, int64_t perExample, int64_t paddedPerExample,
                        uint64_t key, uint64_t first, double rate) {
  if (perExample == paddedPerExample || perExample <= 0) {
    dropoutApply(x, y, n, key, first, rate);
    return;
  }
  const uint32_t threshold = dropoutThreshold(rate);
  const T scale = T(1.0 / (1.0 - rate));
  const uint64_t gap = uint64_t(paddedPerExample - perExample);
  parallelFor(n, n > dropout::kParallelWork, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
      const int64_t e = i / perExample, stop = std::min(end, (e + 1) * perExample);
      // Element i of example e is counter first + e * gap + i.
      dropout::applyRange(x, y, i, stop, key, first + uint64_t(e) * gap, threshold, scale);
      i = stop;
    }
  });
}

/// factor[j] = (keep ? 1 : 0) * scale for the n elements from global index
/// `first` (the factor dropoutApply multiplies by): for kernels that drop
/// values they compute, such as attention weights.
template <class T>
void dropoutFactors(uint64_t key, uint64_t first, int64_t n, double rate, T *factor) {
  const uint32_t threshold = dropoutThreshold(rate);
  const T scale = T(1.0 / (1.0 - rate));
  for (int64_t i = 0; i < n;) {
    const uint64_t g = first + uint64_t(i);
    const int64_t run = std::min<int64_t>(n - i, int64_t((uint64_t(1) << 32) - (g & 0xFFFFFFFFu)));
    const dropout::RoundKeys k = dropout::roundKeys(key, g >> 32);
    const uint32_t lo = uint32_t(g);
    for (int64_t j = 0; j < run; ++j) {
      const int32_t keep = int32_t((dropout::word(k, lo + uint32_t(j)) >> 8) >= threshold);
      factor[i + j] = T(keep) * scale;
    }
    i += run;
  }
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_DROPOUTKERNELS_H
