//===- MaskKernels.h - the masked-token objective's masks -------*- C++ -*-===//
//
// The CPU kernel of `mask_tokens` (emb.mask_tokens): BERT's masking of a
// batch of sequences. Of a sequence of n tokens, k = max(1, round(rate n))
// positions are chosen (none when n is 0); each chosen token becomes the
// target of its position, and its id is replaced by `mask_id` (80% of
// them), by a uniformly drawn id below `vocab` (10%) or kept (10%). Every
// other position has no target (-1) and keeps its id.
//
// Like dropout's (DropoutKernels.h), the draws are not random state:
// position l of example g of the global batch (exampleOffset + microBatch
// * B + b) is element g L + l, and its words are dropout::word of that
// element under three keys derived from hashOf(seed, kTag, stream, step):
// one ranks the positions (the k smallest (word, l) are chosen), one picks
// the replacement, one the random id. So a resumed run, micro-batches and
// data-parallel ranks mask exactly as one uninterrupted batch does, and the
// generated CUDA (passes/lib/cuda/MaskLowering.cpp) draws the same words.
// Evaluation keys its masks with the step kEvaluationStep: every
// evaluation masks the same positions of the same examples, so their
// perplexities compare.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_MASKKERNELS_H
#define EMBC_RUNTIME_CPU_MASKKERNELS_H

#include "embc/runtime/cpu/DropoutKernels.h"
#include "embc/runtime/cpu/SequenceKernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace embc::runtime::cpu {

namespace masking {
/// Folded into every masking key (dropout has its own tag).
inline constexpr uint64_t kTag = 0x4D41'534B'5EED'0002ull;
/// The step evaluations key their masks with.
inline constexpr uint64_t kEvaluationStep = ~uint64_t(0);
/// A chosen token's replacement word (top 24 bits): below kMaskBelow the
/// mask id, below kRandomBelow a random id, else the token itself (BERT's
/// 80% / 10% / 10%).
inline constexpr uint32_t kMaskBelow = 13421773u;   // round(0.8 * 2^24)
inline constexpr uint32_t kRandomBelow = 15099494u; // round(0.9 * 2^24)

/// The keys of the three draws of a launch.
struct Keys {
  uint64_t choose, replace, random;
};
constexpr Keys keysOf(uint64_t key) {
  return {key, data::mix64(key ^ 1u), data::mix64(key ^ 2u)};
}
/// The word of global element `index` under `key` (dropout's word).
constexpr uint32_t word(uint64_t key, uint64_t index) {
  return dropout::word(dropout::roundKeys(key, index >> 32), uint32_t(index));
}
/// The positions masked in a sequence of n tokens.
inline int64_t count(int64_t n, double rate) {
  return n <= 0 ? 0 : std::clamp<int64_t>(std::llround(double(n) * rate), 1, n);
}
/// A random id below vocab from a word (multiply-shift: no division).
constexpr int64_t randomId(uint32_t w, int64_t vocab) {
  return int64_t((uint64_t(w) * uint64_t(vocab)) >> 32);
}
} // namespace masking

/// The key of masking stream `stream` at training step `step` (or
/// masking::kEvaluationStep).
constexpr uint64_t maskKey(uint64_t seed, int64_t stream, uint64_t step) {
  return data::hashOf(seed, masking::kTag, uint64_t(stream), step);
}

/// masked (a copy of the `idCount` ids with the chosen tokens replaced) and
/// targets (B x L: the chosen tokens' ids, -1 elsewhere) of sequences
/// b = 0 .. B - 1, sequence b being example firstExample + b of the global
/// batch. Positions are numbered by counterL (0: L), the max_len a
/// dynamically padded batch (L its own longest) draws the choices of.
template <class T>
void maskTokens(const int64_t *ids, const int64_t *offsets, int64_t idCount, int64_t B, int64_t L,
                double rate, int64_t maskId, int64_t vocab, uint64_t key, uint64_t firstExample,
                int64_t *masked, T *targets, int64_t counterL = 0) {
  std::memcpy(masked, ids, size_t(idCount) * sizeof(int64_t));
  std::fill(targets, targets + B * L, T(-1));
  const masking::Keys keys = masking::keysOf(key);
  parallelFor(B, B * L > sequence::kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    std::vector<std::pair<uint32_t, int64_t>> ranked;
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t n = sequence::length(offsets, b, L), k = masking::count(n, rate);
      const uint64_t first = (firstExample + uint64_t(b)) * uint64_t(counterL > 0 ? counterL : L);
      ranked.clear();
      for (int64_t l = 0; l < n; ++l)
        ranked.push_back({masking::word(keys.choose, first + uint64_t(l)), l});
      // The k smallest (word, position): unique, so the choice is the
      // device's (which ranks each position by counting).
      std::nth_element(ranked.begin(), ranked.begin() + k, ranked.end());
      for (int64_t i = 0; i < k; ++i) {
        const int64_t l = ranked[size_t(i)].second, at = offsets[b] + l;
        const uint64_t element = first + uint64_t(l);
        targets[b * L + l] = T(ids[at]);
        const uint32_t r = masking::word(keys.replace, element) >> 8;
        if (r < masking::kMaskBelow)
          masked[at] = maskId;
        else if (r < masking::kRandomBelow)
          masked[at] = masking::randomId(masking::word(keys.random, element), vocab);
      }
    }
  });
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_MASKKERNELS_H
