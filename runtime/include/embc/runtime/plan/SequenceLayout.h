//===- SequenceLayout.h - which buffers a sequence's length sizes -*- C++ -*-===//
//
// Dynamic padding (docs/training.md, "Dynamic padding"): a plan's sequence
// buffers are B x max_len x ... and sized for max_len, but each batch runs
// at its own longest sequence L_b: its kernels see B x L_b x ... laid out
// one example after another in the first bytes of the buffer. This finds
// the buffers whose dimension 1 is a sequence feature's length, from the
// kernels that read the feature's offsets (sequence_lookup, positions,
// attention, ...) and through the kernels that keep rows (dense, layer norm,
// dropout, ...), by one rule per kernel (sequenceRule). Shapes alone cannot
// tell: a pooled B x D buffer has D == max_len as often as not.
//
// A kernel without a rule that reads a sequence buffer makes the plan
// unable to pad per batch (SequenceLayout::unsupported): it then runs at
// max_len (embrun --padding max_len), never at a length its kernel was not
// written for.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_PLAN_SEQUENCELAYOUT_H
#define EMBC_RUNTIME_PLAN_SEQUENCELAYOUT_H

#include "embc/runtime/plan/KernelCatalogue.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace embc::runtime {

/// How one kernel carries sequence lengths: the input holding the offsets
/// it reads (-1: none, it follows its sequence inputs) and the outputs whose
/// dimension 1 is that sequence's length.
struct SequenceRule {
  int offsets = -1;
  std::vector<size_t> outputs;
};

/// The rule of a kernel, or nothing for a kernel dynamic padding does not
/// know (it must not read a sequence buffer).
std::optional<SequenceRule> sequenceRule(KernelOp op, const Kernel &kernel);

struct SequenceLayout {
  struct Sequence {
    int32_t offsets = -1; ///< the offsets input buffer (B + 1 entries)
    int32_t input = -1;   ///< its index in Plan::inputs
    int64_t maxLen = 0;   ///< dimension 1 of its buffers in the plan
  };
  std::vector<Sequence> sequences;
  /// Per buffer: the sequence whose length its dimension 1 is, or -1.
  std::vector<int32_t> of;
  /// The step kernels that touch a sequence buffer, in order.
  std::vector<size_t> kernels;
  /// Why the plan cannot pad per batch ("" when it can).
  std::string unsupported;

  bool empty() const { return sequences.empty(); }
  /// Bytes of the sequence buffers (each once, slots times), the part of
  /// the arena dynamic padding leaves unused when a batch is shorter.
  int64_t sequenceBytes(const Plan &plan) const;
};

/// The layout of `plan`'s step kernels.
SequenceLayout findSequenceLayout(const Plan &plan);

/// `plan` with every sequence buffer's dimension 1 set to lengths[s] (its
/// sequence's length in this batch, 1..maxLen) and Buffer::paddedLength to
/// the max_len it had. Offsets and bytes stay: the buffers keep their place
/// and size in the arena. A plan with a CUDA program gets the launches of
/// its length variant (CudaLengthVariant) for the sequence kernels, or none
/// where it has no variant at these lengths.
Plan specialiseLengths(const Plan &plan, const SequenceLayout &layout,
                       const std::vector<int64_t> &lengths);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_PLAN_SEQUENCELAYOUT_H
