//===- Permutation.cpp - the order of one training epoch ------------------===//
//
// A balanced Feistel network over 2 * halfBits bits is a bijection of
// [0, 4^halfBits) for any round function; "cycle walking" (re-encrypting
// while the result is >= n) restricts it to a bijection of [0, n). The domain
// is less than 4n, so a walk takes under 4 steps on average.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/data/Permutation.h"

#include "embc/runtime/data/CounterRandom.h"

#include <stdexcept>

using namespace embc::runtime::data;

/// A fixed tag so epoch orders never share keys with other draws.
static constexpr uint64_t kPermutationTag = 0x5045524D55544531ull; // "PERMUTE1"

EpochPermutation::EpochPermutation(uint64_t n, uint64_t seed, uint64_t epoch)
    : n_(n) {
  if (n == 0 || n >= (uint64_t(1) << 62))
    throw std::invalid_argument("EpochPermutation: n must be in [1, 2^62)");
  int bits = 0;
  while (bits < 64 && (uint64_t(1) << bits) < n)
    ++bits;
  halfBits_ = bits <= 2 ? 1 : (bits + 1) / 2;
  halfMask_ = (uint64_t(1) << halfBits_) - 1;
  for (int r = 0; r < kRounds; ++r)
    keys_[r] = hashOf(seed, kPermutationTag, epoch, r);
}

uint64_t EpochPermutation::encrypt(uint64_t x) const {
  uint64_t left = x >> halfBits_, right = x & halfMask_;
  for (int r = 0; r < kRounds; ++r) {
    uint64_t next = left ^ (mix64(right ^ keys_[r]) & halfMask_);
    left = right;
    right = next;
  }
  return (left << halfBits_) | right;
}

uint64_t EpochPermutation::operator()(uint64_t i) const {
  uint64_t x = i;
  do
    x = encrypt(x);
  while (x >= n_);
  return x;
}
