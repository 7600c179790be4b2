//===- SkipgramKernel.h - skip-gram steps with per-example updates -*- C++ -*-===//
//
// The kernel of -emb-fuse's `skipgram` group (plan kernel `skipgram_step`):
// word2vec's scheme. For each example b: c = the sum of its centre rows and
// x = the sum of its context rows; pos = <c, x> is its score. Then, in
// word2vec's order, the context and each negative j in turn is scored
// against c (the context: pos; negative j: <c, n_j> with n_j its row as it
// is at that moment, so after the steps of earlier targets), adds its loss
// (softplus(-pos) for the context, softplus(<c, n_j>) for a negative), and,
// in training, takes the table optimizer's row step at once with gradient
// (sigmoid(score) - label) c, every row of the context bag alike; the
// centre's gradient g_c gathers (sigmoid(score) - label) times each
// target's row as read before that target's step (x for the context), and
// the centre rows step last with g_c. Each example's own gradient, no 1/B.
//
//  - per_example: the examples in order on the calling thread: the result
//    is the same for any thread count, bit for bit.
//  - hogwild: the examples split over the CPU team, each thread applying its
//    examples' steps without locks (word2vec's and gensim's races on shared
//    rows: results vary from run to run; ThreadSanitizer reports them).
//  - evaluation (update = false): scores and loss only, nothing written.
//
// All ids are checked before any row changes. The loss written is the mean
// over the batch of the examples' losses (summed in example order).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_SKIPGRAMKERNEL_H
#define EMBC_RUNTIME_CPU_SKIPGRAMKERNEL_H

#include "embc/runtime/cpu/FusedEmbeddingKernels.h"
#include "embc/runtime/cpu/Kernels.h"

#include <cstdint>

namespace embc::runtime::cpu {

using ::embc::runtime::SkipgramMode; // plan/Enums.h

/// The rows [rowOffset, rowOffset + rows) of the target one role reads.
struct SkipgramRole {
  int64_t rowOffset = 0, rows = 0;
};

struct SkipgramStep {
  const int64_t *centerIds = nullptr, *centerOffsets = nullptr; ///< bags, offsets B + 1
  const int64_t *contextIds = nullptr, *contextOffsets = nullptr;
  const int64_t *negatives = nullptr; ///< B x K
  int64_t centerIdCount = 0, contextIdCount = 0; ///< lengths of the id buffers
  int64_t B = 0, K = 0, D = 0;
  SkipgramRole center, context, negative;
  float *table = nullptr;              ///< targetRows x D
  int64_t targetRows = 0;
  float *state0 = nullptr, *state1 = nullptr; ///< the optimizer's (tableRowStep)
  OptimizerParams optimizer;
  int64_t optimizerStep = 1;
  double lrScale = 1;
  SkipgramMode mode = SkipgramMode::PerExample;
  bool update = true;
  float *loss = nullptr;   ///< 1 value
  float *scores = nullptr; ///< B values: pos
};

/// Throws IdOutOfRange (operand 0: centre ids, 2: context ids, 4:
/// negatives) before changing anything, std::invalid_argument for bad bags.
/// With s.update, returns the first target row a step left not finite (of
/// the lowest such example), or -1: the finite check of every update.
[[nodiscard]] int64_t skipgramStep(const SkipgramStep &s);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_SKIPGRAMKERNEL_H
