//===- Permutation.h - the order of one training epoch ----------*- C++ -*-===//
//
// Training streams visit the examples of a file in a fresh order each epoch.
// The order is a keyed bijection of [0, n) computed one index at a time (a
// Feistel network with cycle walking), not a shuffled array: it costs no
// memory, needs no pass over the epoch to resume in the middle of it, and is
// a pure function of (n, seed, epoch).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_DATA_PERMUTATION_H
#define EMBC_RUNTIME_DATA_PERMUTATION_H

#include <array>
#include <cstdint>

namespace embc::runtime::data {

/// A pseudo-random permutation of [0, n) for one epoch.
class EpochPermutation {
public:
  /// `n` must be at least 1 and below 2^62.
  EpochPermutation(uint64_t n, uint64_t seed, uint64_t epoch);

  /// The example visited at place `i` (< n) of the epoch.
  uint64_t operator()(uint64_t i) const;

  uint64_t size() const { return n_; }

private:
  /// One pass of the Feistel network over [0, 4^halfBits_).
  uint64_t encrypt(uint64_t x) const;

  static constexpr int kRounds = 6;
  uint64_t n_;
  int halfBits_;
  uint64_t halfMask_;
  std::array<uint64_t, kRounds> keys_;
};

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_DATA_PERMUTATION_H
