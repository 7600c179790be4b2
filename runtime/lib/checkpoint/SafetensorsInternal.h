//===- SafetensorsInternal.h - helpers shared by reader and writer --------===//
//
// Pieces both directions must agree on: the checksum's text form and the
// byte size of a dtype/shape pair (with overflow checks, since the reader
// computes it from untrusted headers). Private to EmbCheckpoint.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CHECKPOINT_SAFETENSORSINTERNAL_H
#define EMBC_RUNTIME_LIB_CHECKPOINT_SAFETENSORSINTERNAL_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace embc::runtime::checkpoint {

/// 16 lowercase hex digits, zero padded.
std::string checksumHex(uint64_t digest);

/// product(shape) * elementSize, or nullopt if a dimension is negative or
/// the product overflows 64 bits.
std::optional<uint64_t> tensorByteSize(const std::vector<int64_t> &shape,
                                       size_t elementSize);

} // namespace embc::runtime::checkpoint

#endif // EMBC_RUNTIME_LIB_CHECKPOINT_SAFETENSORSINTERNAL_H
