//===- Quantize.h - what -emb-quantize leaves in the IR ---------*- C++ -*-===//
//
// The attribute names -emb-quantize writes and -emb-to-plan reads. They are
// discardable attributes, so every other pass carries them along untouched
// (ops moved into emb.fused groups keep them).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_QUANTIZE_H
#define EMBC_PASSES_LIB_QUANTIZE_H

#include "embc/dialect/EmbDialect.h"

#include "llvm/ADT/StringRef.h"

namespace embc {

/// On the module: the pass ran ({rounding = "stochastic", tables = N}).
/// -emb-to-plan accepts quantised tables only with it.
constexpr llvm::StringLiteral kQuantizedAttrName = "emb.quantized";
/// On an emb.lookup / emb.gather / emb.lookup_grad (max pooling) that reads a
/// quantised table: the storage it dequantises from (#emb<storage bf16>).
constexpr llvm::StringLiteral kDequantizeAttrName = "emb.dequantize";
/// On an emb.update of a quantised table: how the f32 result is stored back
/// ("stochastic": stochastic rounding keyed on seed, table, row, step, element).
constexpr llvm::StringLiteral kRequantizeAttrName = "emb.requantize";

/// The storage a model file or pass option names: f32, f16 (or fp16), bf16,
/// int8 or int4 (row-wise); nullopt for anything else.
inline std::optional<emb::StorageType> parseStorage(llvm::StringRef name) {
  if (name == "fp16")
    return emb::StorageType::f16;
  if (name == "int8")
    return emb::StorageType::int8_rowwise;
  if (name == "int4")
    return emb::StorageType::int4_rowwise;
  return emb::symbolizeStorageType(name);
}

} // namespace embc

#endif // EMBC_PASSES_LIB_QUANTIZE_H
