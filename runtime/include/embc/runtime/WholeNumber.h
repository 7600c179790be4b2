//===- WholeNumber.h - strict parse of an unsigned decimal ------*- C++ -*-===//
//
// For numbers a person or a file hands embrun (--seed, a checkpoint's step):
// decimal digits only, within 64 bits. strtoull and stoll would read "-1"
// (wrapped), " 7", "12abc" or "1e23" (saturated) as something else.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_WHOLENUMBER_H
#define EMBC_RUNTIME_WHOLENUMBER_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace embc::runtime {

/// `text` as a whole number, or nothing when it is not one of 1 to 20 digits
/// that fits 64 bits.
inline std::optional<uint64_t> parseWholeNumber(std::string_view text) {
  if (text.empty() || text.size() > 20)
    return std::nullopt;
  uint64_t value = 0;
  for (char c : text)
    if (c < '0' || c > '9' || __builtin_mul_overflow(value, uint64_t(10), &value) ||
        __builtin_add_overflow(value, uint64_t(c - '0'), &value))
      return std::nullopt;
  return value;
}

} // namespace embc::runtime

#endif // EMBC_RUNTIME_WHOLENUMBER_H
