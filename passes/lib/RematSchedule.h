//===- RematSchedule.h - which activations -emb-remat keeps -----*- C++ -*-===//
//
// The planning half of -emb-remat, in plain C++ so it can be unit-tested
// against brute force: a chain of stages (forward values that the backward
// reads, in op order), each with the bytes it keeps alive and the FLOPs it
// costs to recompute, and the choice of which stages to keep (checkpoints).
//
// The memory model is the classic one of Chen et al. (2016), "Training deep
// nets with sublinear memory cost": a kept stage lives from the forward to
// its backward use; a dropped stage is recomputed, with the rest of its
// segment (the maximal run of dropped stages between two checkpoints), when
// the backward first needs it, and the whole segment then lives at once. So
//
//   activation peak = sum of kept bytes + the largest segment's bytes,
//   recomputed FLOPs = sum of the dropped stages' FLOPs.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_REMATSCHEDULE_H
#define EMBC_PASSES_REMATSCHEDULE_H

#include <cstdint>
#include <optional>
#include <vector>

namespace embc::remat {

/// One stage of the chain: what keeping it costs in memory, and what
/// dropping it costs in recomputation.
struct Stage {
  int64_t bytes = 0; ///< bytes of its values read by the backward
  int64_t flops = 0; ///< forward FLOPs to rebuild it from the previous stage
};

/// A keep/recompute decision and its figures under the chain model.
struct Schedule {
  std::vector<bool> keep;       ///< one entry per stage: true = checkpoint
  int64_t keptBytes = 0;        ///< sum of the kept stages' bytes
  int64_t maxSegmentBytes = 0;  ///< the largest run of dropped stages
  int64_t recomputeFlops = 0;   ///< sum of the dropped stages' FLOPs
  /// Activation peak of the chain (without the persistent bytes).
  int64_t peak() const { return keptBytes + maxSegmentBytes; }
  int64_t numDropped() const;
};

/// The figures of `keep` (one flag per stage).
Schedule evaluate(const std::vector<Stage> &stages, std::vector<bool> keep);

/// Keeps every stage: no recomputation (the plain backward).
Schedule keepAll(const std::vector<Stage> &stages);

/// The sqrt(n) baseline of Chen et al. (their greedy segmentation): walk the
/// chain summing bytes and make a stage a checkpoint when the running sum
/// passes total / sqrt(n). For n equal stages that keeps about sqrt(n) of
/// them, in segments of about sqrt(n).
Schedule sqrtSchedule(const std::vector<Stage> &stages);

/// The schedule with the fewest recomputed FLOPs whose peak() is at most
/// `budget` (ties: the lower peak), or nothing if none fits. Exact: for each
/// possible largest segment S (every sum of a run of stages, and 0), a
/// dynamic program over the last checkpoint keeps, per position, the Pareto
/// front of (kept bytes, recomputed FLOPs) among prefixes whose segments are
/// all at most S and whose kept bytes leave room for S under the budget.
/// O(n^2) values of S times O(n^2 F) for a front of F entries.
std::optional<Schedule> optimalSchedule(const std::vector<Stage> &stages,
                                        int64_t budget);

/// The lowest peak any schedule reaches, and among those, the one with the
/// fewest recomputed FLOPs (the dynamic program at its minimum-memory point).
Schedule minimumMemorySchedule(const std::vector<Stage> &stages);

} // namespace embc::remat

#endif // EMBC_PASSES_REMATSCHEDULE_H
