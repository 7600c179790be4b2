//===- QuantizedKernels.h - tables stored as f16, bf16, int8, int4 -*- C++ -*-===//
//
// The CPU side of -emb-quantize (docs/plan-format.md, "Quantised tables"):
// tables whose rows are stored as IEEE fp16, bf16 (raw 16-bit patterns, see
// HalfFloat.h) or row-wise 8- or 4-bit codes with a per-row fp16 scale and
// bias (value = scale * q + bias; FBGEMM's "SBHalf" layout; int4 packs two
// codes per byte, low nibble first). Training reads and writes them through
// f32:
//
// - lookups dequantise each row as they read it and pool exactly as
//   lookupForward does (same arithmetic, same order), so a quantised lookup
//   equals an f32 lookup of the dequantised table bit for bit;
// - the sparse update dequantises a touched row, runs the f32 optimizer
//   row step (OptimizerRow.h, f32 optimizer state), and stores the row back
//   with stochastic rounding: the value is rounded to one of its two
//   representable neighbours with probabilities that make the expectation
//   the value itself, so small updates survive on average instead of being
//   rounded away. int8/int4 rows first get a new scale and bias from their
//   min and max (see rowwiseParams). Each draw is a counter-based hash of (seed, table, row,
//   optimizer step, element), so the result does not depend on the thread
//   count and a resumed run draws what the uninterrupted run drew;
// - initialisation quantises with round-to-nearest.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_QUANTIZEDKERNELS_H
#define EMBC_RUNTIME_CPU_QUANTIZEDKERNELS_H

#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/storage/RowStorage.h"

#include <cstdint>
#include <string>
#include <vector>

namespace embc::runtime::cpu {

// The plan's storages (plan/Enums.h) and isRowwise (int8, int4 keep a
// per-row scale and bias).
using ::embc::runtime::isRowwise;
using ::embc::runtime::Storage;

// The row storage and its conversions (storage/RowStorage.h), under the
// names the CPU kernels have always used.
using storage::dequantizeRow;
using storage::elementBits;
using storage::floatToBf16Stochastic;
using storage::floatToHalfStochastic;
using storage::QuantizedTable;
using storage::quantizeCode;
using storage::quantizeRow;
using storage::RowParams;
using storage::rowKey;
using storage::rowwiseParams;
using storage::storageRowBytes;

// --- Kernels (the plan's lookup, gather, lookup_grad, update_table) ---------------

/// lookupForward on dequantised rows.
void quantizedLookup(const QuantizedTable &t, const int64_t *ids, const int64_t *offsets,
                     const float *weights, int64_t B, Pooling pooling, float *y);
/// gatherForward on dequantised rows.
void quantizedGather(const QuantizedTable &t, const int64_t *ids, int64_t n, float *y);
/// sequenceLookupForward on dequantised rows: y[b, l] is the row of
/// ids[offsets[b] + l] for l < n_b (clamped to L), zeros after.
void quantizedSequenceLookup(const QuantizedTable &t, const int64_t *ids, const int64_t *offsets,
                             int64_t B, int64_t L, float *y);
/// lookupGrad on dequantised rows (only max pooling reads the table).
void quantizedLookupGrad(const QuantizedTable &t, const int64_t *ids, const int64_t *offsets,
                         const float *weights, int64_t B, Pooling pooling, const float *dy,
                         float *dvals);

/// Which table a row of the updated buffer belongs to: a lone table is one
/// segment at row 0; a table batch has one per member, ascending by
/// firstRow. Draws are keyed on (member, row within the member), so a table
/// rounds the same whether it is batched or not.
struct RowSegment {
  int64_t firstRow = 0;
  uint64_t tableKey = 0; ///< data::hashName(table name)
};

/// sparseUpdate on quantised rows: each touched row (uniqueRows from
/// coalesceRows) is dequantised, takes tableRowStep's f32 step with the
/// f32 state, and is requantised with stochastic rounding keyed on
/// (seed, segment's table, row in the table, step, element). Throws
/// std::invalid_argument for global weight decay (it would requantise every
/// row every step; the compiler refuses it) and like sparseUpdate for bad
/// rows. Returns the first updated row left not finite (as sparseUpdate):
/// its f32 values or state (the row then keeps its old stored values), or
/// an fp16/bf16 row that overflowed its storage (stored as infinity).
[[nodiscard]] SparseNonFinite quantizedSparseUpdate(const OptimizerParams &p, int64_t step,
                                                    double lrScale, double gradScale,
                                                    QuantizedTable &t, const int64_t *uniqueRows,
                                                    const float *vals, int64_t nnz, float *state0,
                                                    float *state1, uint64_t seed,
                                                    const std::vector<RowSegment> &segments);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_QUANTIZEDKERNELS_H
