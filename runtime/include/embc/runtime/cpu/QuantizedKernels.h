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

#include <cstdint>
#include <string>
#include <vector>

namespace embc::runtime::cpu {

// The plan's storages (plan/Enums.h) and isRowwise (int8, int4 keep a
// per-row scale and bias).
using ::embc::runtime::isRowwise;
using ::embc::runtime::Storage;

/// Bytes of a row of D values in `storage`, scale and bias excluded (Int4
/// needs an even D: D / 2 bytes).
int64_t storageRowBytes(Storage storage, int64_t D);

/// A table in its storage: rows x D elements at `data` (float, uint16_t
/// bits, uint8_t codes, or for Int4 D/2 bytes per row holding two codes each,
/// element 2k in the low nibble of byte k), and for Int8/Int4 rows x 2 fp16
/// bit patterns (scale, bias).
struct QuantizedTable {
  Storage storage = Storage::F32;
  void *data = nullptr;
  uint16_t *qparams = nullptr;
  int64_t rows = 0, D = 0;
};

// --- One value -----------------------------------------------------------------

/// Stochastic rounding of x to fp16 / bf16 bits: the lower or upper
/// neighbour of x, the upper with probability (x - lower) / (upper -
/// lower), decided by the random word `bits`. Exact values, inf and NaN
/// convert as round-to-nearest does.
uint16_t floatToHalfStochastic(float x, uint64_t bits);
uint16_t floatToBf16Stochastic(float x, uint64_t bits);
/// A code of x for the row's (scale, bias): (x - bias) / scale, rounded
/// stochastically (or to nearest when `nearest`), clamped to 0..maxCode
/// (255 for int8, 15 for int4). Scale 0 gives 0.
uint8_t quantizeCode(float x, float scale, float bias, uint64_t bits, bool nearest,
                     int maxCode = 255);

/// The fp16 scale and bias of a row whose values span [lo, hi] (finite),
/// with codes 0..maxCode. They are rounded to fp16 *before* any code is
/// computed, and outwards: bias = the largest fp16 <= lo, scale = the
/// smallest fp16 >= (hi - bias) / maxCode, so [bias, bias + maxCode * scale]
/// covers the row and the codes are computed from exactly the values
/// dequantisation uses. A constant row whose value is an fp16 gets scale 0
/// (exact). fp16 ends at 65504: lo and hi are first clamped to
/// [-65504, 65504], so values beyond saturate at the range's ends (an
/// embedding that large has diverged anyway); the scale then stays below
/// 2 * 65504 / 15, well inside fp16.
struct RowParams {
  uint16_t scale = 0, bias = 0; ///< fp16 bits
};
RowParams rowwiseParams(float lo, float hi, int maxCode);

/// The random word of element j of a row whose draws are keyed by `rowKey`.
uint64_t elementBits(uint64_t rowKey, int64_t j);
/// The key of the draws of row `row` of a table (tableKey: a hash of its
/// name) at optimizer step `step`.
uint64_t rowKey(uint64_t seed, uint64_t tableKey, int64_t row, int64_t step);

// --- Rows ----------------------------------------------------------------------

/// Row r of `t` as D floats.
void dequantizeRow(const QuantizedTable &t, int64_t r, float *out);
/// Stores D floats as row r: round-to-nearest (nearest) or stochastic
/// rounding keyed by `key`. Int8 / Int4 first set the row's fp16 scale and
/// bias from its min and max (rowwiseParams; scale ~ (max - min) / 255 or
/// / 15). Throws std::domain_error for a non-finite value in a row-wise row.
void quantizeRow(QuantizedTable &t, int64_t r, const float *v, bool nearest, uint64_t key);

// --- Kernels (the plan's lookup, gather, lookup_grad, update_table) ---------------

/// lookupForward on dequantised rows.
void quantizedLookup(const QuantizedTable &t, const int64_t *ids, const int64_t *offsets,
                     const float *weights, int64_t B, Pooling pooling, float *y);
/// gatherForward on dequantised rows.
void quantizedGather(const QuantizedTable &t, const int64_t *ids, int64_t n, float *y);
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
/// rows.
void quantizedSparseUpdate(const OptimizerParams &p, int64_t step, double lrScale,
                           double gradScale, QuantizedTable &t, const int64_t *uniqueRows,
                           const float *vals, int64_t nnz, float *state0, float *state1,
                           uint64_t seed, const std::vector<RowSegment> &segments);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_QUANTIZEDKERNELS_H
