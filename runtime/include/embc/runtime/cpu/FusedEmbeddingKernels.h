//===- FusedEmbeddingKernels.h - fused lookup and backward+update -*- C++ -*-===//
//
// The CPU side of the embedding kernels -emb-fuse produces
// (docs/plan-format.md, fused_lookup and embedding_update):
//
// - fusedLookup: hash + pooled lookup of several tables in one parallel
//   region over (table, block of bags) pairs, instead of one region (and one
//   hash pass) per table. A block's ids are hashed first and the rows of the
//   ids ahead are prefetched while a bag is pooled (the rows are cache
//   misses). Per bag the arithmetic is lookupForward's, so the results are
//   bit-identical to hashIds + lookupForward.
// - embeddingUpdate: the backward of one table (or table batch) fused with its
//   sparse optimizer step. The per-id gradient rows are never written: the
//   contributions are sorted by row (a stable radix sort of packed
//   (row, contribution) keys), summed per distinct row in exactly
//   coalesceRows' order and arithmetic, and each row takes sparseUpdate's
//   step right away. Bit-identical to lookupGrad + append + coalesceRows +
//   sparseUpdate.
//
// Both are templated on the element type like Kernels.h (float for
// training, double for tests) and reuse per-thread scratch across calls.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_FUSEDEMBEDDINGKERNELS_H
#define EMBC_RUNTIME_CPU_FUSEDEMBEDDINGKERNELS_H

#include "embc/runtime/cpu/Kernels.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace embc::runtime::cpu {

/// An id (after hashing) outside its table, found before any table row is
/// read or written at it. `operand` is the member (fusedLookup) or source
/// (embeddingUpdate) index, `position` the id's index in that operand's ids.
/// When several ids are bad, the first in (operand, position) order is
/// reported, whatever the thread count.
class IdOutOfRange : public std::out_of_range {
public:
  IdOutOfRange(size_t operand, int64_t position, int64_t id, int64_t rows);
  size_t operand;
  int64_t position, id, rows;
};

/// One table of a fused lookup: the operands of hash + lookup.
template <class T> struct LookupMember {
  const T *table = nullptr; ///< rows x D
  int64_t rows = 0, D = 0;
  const int64_t *ids = nullptr; ///< n raw ids (hashed first when `hash`)
  int64_t n = 0;
  const int64_t *offsets = nullptr; ///< B + 1: bag b is ids[offsets[b] .. offsets[b+1])
  int64_t B = 0;
  const T *weights = nullptr; ///< per id, or null
  Pooling pooling = Pooling::Sum;
  bool hash = false; ///< id -> xxh64(id's 8 LE bytes, seed) mod buckets (hashIds)
  int64_t buckets = 0;
  uint64_t seed = 0;
  int64_t *hashedIds = nullptr; ///< with `hash`: receives the n hashed ids (may be null)
  T *y = nullptr;               ///< B x D, overwritten
};

/// hashIds + lookupForward for every member, in one parallel region. Ids
/// (after hashing) must lie in [0, rows): otherwise IdOutOfRange is thrown
/// after the region (no table is read out of range; outputs may be partly
/// written). Bad offsets throw std::invalid_argument before anything runs.
template <class T> void fusedLookup(const LookupMember<T> *members, size_t count);

/// One source of gradient rows for embeddingUpdate. Its ids address a table
/// of `rows` rows that starts at row `rowOffset` of the updated buffer (0 for
/// a lone table; a member's offset in a table batch).
template <class T> struct GradSource {
  enum class Kind { Bag, Rows };
  Kind kind = Kind::Bag;
  const int64_t *ids = nullptr;
  int64_t n = 0; ///< ids this step
  int64_t rowOffset = 0, rows = 0;
  // Kind::Bag: the operands of lookupGrad (sum or mean pooling). The bags
  // must cover the ids exactly: offsets[0] == 0, offsets[B] == n.
  const int64_t *offsets = nullptr;
  int64_t B = 0;
  const T *weights = nullptr; ///< per id, or null
  Pooling pooling = Pooling::Sum;
  const T *dy = nullptr; ///< B x D
  // Kind::Rows: one gradient row per id.
  const T *values = nullptr; ///< n x D
};

/// For each source in order, the per-id gradient rows (bag: dy[b] * weight,
/// / bag size for mean; rows: values[i]) are keyed by id + rowOffset, summed
/// per distinct row (ascending rows; within a row in (source, position)
/// order, from a copy of the first contribution), and each distinct row of
/// `table` (rows x D) takes sparseUpdate's step: same OptimizerParams, step,
/// lrScale and gradScale, global decay of every row included. Bit-identical
/// to lookupGrad + appending (ids + rowOffset, rows) + coalesceRows +
/// sparseUpdate. Throws IdOutOfRange for an id outside [0, source rows) and
/// std::invalid_argument for inconsistent operands (max pooling, bags that
/// do not cover the ids, a source outside the table, a missing state), in
/// both cases before anything is written. Rows are updated in parallel,
/// never shared between threads, so the result does not depend on the
/// thread count. Returns the lowest updated row left not finite (the finite
/// check of every update, as sparseUpdate), or -1.
template <class T>
[[nodiscard]] int64_t embeddingUpdate(const OptimizerParams &p, int64_t step, double lrScale,
                                      double gradScale, T *table, int64_t rows, int64_t D,
                                      const GradSource<T> *sources, size_t count, T *state0,
                                      T *state1);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_FUSEDEMBEDDINGKERNELS_H
