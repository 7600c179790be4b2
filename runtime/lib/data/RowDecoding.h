//===- RowDecoding.h - a record's fields into a RowBlock --------*- C++ -*-===//
//
// The per-column rules of a schema (Schema.h): labels, dense transforms,
// categorical encodings, multi-hot and weighted bags, for a delimited text
// line and for a binary record of int32 fields. Each failure names the
// column ("/data/columns/3 (C1)" or the built-in reader's "C1") and says why.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_ROWDECODING_H
#define EMBC_RUNTIME_LIB_DATA_ROWDECODING_H

#include "DelimitedFields.h"
#include "RowBlock.h"

namespace embc::runtime::data {

/// A dense value after the column's transforms: clip, then log(1 + x).
inline float transformDense(const SchemaColumn &column, double value) {
  if (column.clipLow && value < *column.clipLow)
    value = *column.clipLow;
  if (column.clipHigh && value > *column.clipHigh)
    value = *column.clipHigh;
  if (column.log1p)
    value = std::log1p(value);
  return static_cast<float>(value);
}

/// Checks a label value against its kind (0/1, finite, a class index).
bool checkLabel(const ColumnSlot &slot, double value, LineProblem &problem);

/// Decodes the bound columns of a split text line. `fieldCount` is the
/// number of fields every line must have (0: at least the highest bound field + 1).
bool decodeTextRecord(const RowLayout &layout, const LineFields &line, size_t fieldCount,
                      RowWriter &row, LineProblem &problem);

/// Decodes the bound columns of one binary record of int32 fields.
bool decodeBinaryRecord(const RowLayout &layout, const int32_t *record, RowWriter &row,
                        LineProblem &problem);

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_ROWDECODING_H
