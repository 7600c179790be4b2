//===- FiniteCheck.cpp - scan saved tensors for NaN and infinity ---------===//

#include "FiniteCheck.h"

#include "embc/runtime/cpu/Parallel.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>

using namespace embc::runtime;

namespace {

/// Counts the values of `n` words whose exponent bits (`mask`) are all set:
/// infinity or NaN in IEEE formats. Bits, not std::isfinite, so the loop
/// vectorises over tables of gigabytes.
template <class Word>
NonFinite scan(const void *data, int64_t n, Word mask) {
  NonFinite out;
  std::mutex lock;
  constexpr int64_t kGrain = int64_t(1) << 20;
  cpu::parallelFor((n + kGrain - 1) / kGrain, n > kGrain, [&](int64_t c0, int64_t c1) {
    const int64_t begin = c0 * kGrain, end = std::min(n, c1 * kGrain);
    const Word *w = static_cast<const Word *>(data);
    int64_t count = 0;
    for (int64_t i = begin; i < end; ++i)
      count += (w[i] & mask) == mask;
    if (count == 0)
      return;
    int64_t first = begin;
    while ((w[first] & mask) != mask)
      ++first;
    std::lock_guard<std::mutex> guard(lock);
    out.count += count;
    out.first = out.first < 0 ? first : std::min(out.first, first);
  });
  return out;
}

} // namespace

NonFinite embc::runtime::nonFiniteValues(const checkpoint::TensorView &t) {
  if (t.dtype == "F32")
    return scan<uint32_t>(t.data, int64_t(t.bytes / 4), 0x7F800000u);
  if (t.dtype == "F64")
    return scan<uint64_t>(t.data, int64_t(t.bytes / 8), 0x7FF0000000000000ull);
  if (t.dtype == "F16")
    return scan<uint16_t>(t.data, int64_t(t.bytes / 2), uint16_t(0x7C00));
  if (t.dtype == "BF16")
    return scan<uint16_t>(t.data, int64_t(t.bytes / 2), uint16_t(0x7F80));
  return {};
}

std::optional<std::string>
embc::runtime::describeNonFinite(const std::vector<checkpoint::TensorView> &tensors) {
  constexpr int kNamed = 4; // then "and N more tensors"
  std::string text;
  int found = 0;
  for (const checkpoint::TensorView &t : tensors) {
    const NonFinite bad = nonFiniteValues(t);
    if (bad.count == 0 || ++found > kNamed)
      continue;
    const size_t size = t.dtype == "F64" ? 8 : t.dtype == "F32" ? 4 : 2;
    text += (text.empty() ? "" : ", ") + t.name + " (" + std::to_string(bad.count) + " of " +
            std::to_string(t.bytes / size) + " values, the first at " +
            std::to_string(bad.first) + ")";
  }
  if (text.empty())
    return std::nullopt;
  if (found > kNamed)
    text += " and " + std::to_string(found - kNamed) + " more tensors";
  return text;
}
