//===- RowStorage.h - a table row in its storage (f32, f16, bf16, int8, int4) -*- C++ -*-===//
//
// How a quantised table (-emb-quantize; docs/plan-format.md, "Quantised
// tables") stores its rows, and the conversions of one row between that
// storage and f32: round-to-nearest for initialisation, stochastic rounding
// for updates. Backend-neutral: the executor quantises a table's initial
// values and dequantises it for an export on the host arena whatever
// backend trains it, and the CPU kernels (cpu/QuantizedKernels.h) read and
// write rows with the same functions. The CUDA lowering generates the
// device side of the same rules (passes/lib/cuda/EmbeddingUpdateLowering.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_STORAGE_ROWSTORAGE_H
#define EMBC_RUNTIME_STORAGE_ROWSTORAGE_H

#include "embc/runtime/plan/Enums.h"

#include <cstdint>

namespace embc::runtime::storage {

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
/// Returns whether the stored row is finite: false when an f32 value is
/// not, or an fp16 / bf16 value overflowed its storage. Row-wise rows
/// saturate at fp16's range instead, so they are always finite.
bool quantizeRow(QuantizedTable &t, int64_t r, const float *v, bool nearest, uint64_t key);

} // namespace embc::runtime::storage

#endif // EMBC_RUNTIME_STORAGE_ROWSTORAGE_H
