//===- SafetensorsInternal.h - helpers shared by reader and writer --------===//
//
// Pieces both directions must agree on: the checksum's text form and the
// byte size of a dtype/shape pair (with overflow checks, since the reader
// computes it from untrusted headers). Private to EmbCheckpoint.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CHECKPOINT_SAFETENSORSINTERNAL_H
#define EMBC_RUNTIME_LIB_CHECKPOINT_SAFETENSORSINTERNAL_H

#include <nlohmann/json.hpp>
#include <xxhash.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace embc::runtime::checkpoint {

/// 16 lowercase hex digits, zero padded.
std::string checksumHex(uint64_t digest);

/// The kChecksumKey value of a file: XXH64 over the header without that key
/// in nlohmann's canonical form (sorted keys, no spaces), then the data
/// buffer in file order. Writer and reader build it the same way, so any
/// change to a name, dtype, shape, offset or metadata value shows.
class FileChecksum {
public:
  /// Starts with `header` (the whole header object; the key is removed here).
  explicit FileChecksum(nlohmann::json header)
      : FileChecksum(HeaderText{headerText(std::move(header))}) {}
  /// What the checksum covers of `header`: its canonical text without the
  /// checksum key.
  static std::string headerText(nlohmann::json header);
  /// Starts with text headerText returned: a reader keeps that text, not
  /// the parsed header, until it hashes the data.
  struct HeaderText {
    std::string_view text;
  };
  explicit FileChecksum(HeaderText header);
  void update(const void *data, size_t bytes) {
    if (bytes > 0)
      XXH64_update(state_.get(), data, bytes);
  }
  /// "xxh64:" and 16 hex digits.
  std::string value() const;

private:
  std::unique_ptr<XXH64_state_t, decltype(&XXH64_freeState)> state_;
};

/// product(shape) * elementSize, or nullopt if a dimension is negative or
/// the product overflows 64 bits.
std::optional<uint64_t> tensorByteSize(const std::vector<int64_t> &shape,
                                       size_t elementSize);

} // namespace embc::runtime::checkpoint

#endif // EMBC_RUNTIME_LIB_CHECKPOINT_SAFETENSORSINTERNAL_H
