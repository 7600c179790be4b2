//===- CounterRandom.h - counter-based random draws -------------*- C++ -*-===//
//
// Every random choice of the data layer (synthetic examples, skip-gram
// windows, sampled negatives, epoch orders) is a hash of the seed and of
// counters that name the draw (an example index, a slot, a purpose tag), not
// the next value of a sequential generator. A draw can therefore be computed
// on any thread, in any order, and after a resume, and come out the same.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_DATA_COUNTERRANDOM_H
#define EMBC_RUNTIME_DATA_COUNTERRANDOM_H

#include <cmath>
#include <cstdint>
#include <string_view>

namespace embc::runtime::data {

/// splitmix64's finaliser: a bijection of 64-bit words with full avalanche.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// hashOf in steps, for draws that share leading words: hashOf(seed, a, b)
/// == hashMore(hashMore(hashStart(seed), a), b), so a generator can fold the
/// words of a column once and only the per-example ones per draw.
constexpr uint64_t hashStart(uint64_t seed) { return mix64(seed ^ 0x2545F4914F6CDD1Dull); }
/// One word's contribution, foldable into any prefix with hashFold.
constexpr uint64_t hashWord(uint64_t word) { return mix64(word + 0x632BE59BD9B4E019ull); }
constexpr uint64_t hashFold(uint64_t prefix, uint64_t mixedWord) {
  return mix64(prefix ^ mixedWord);
}
constexpr uint64_t hashMore(uint64_t prefix, uint64_t word) {
  return hashFold(prefix, hashWord(word));
}

/// The key of one draw: a hash of a seed and of counters. Each word goes
/// through mix64 before it is folded in, so (a, b) and (b, a) differ.
template <class... Words>
constexpr uint64_t hashOf(uint64_t seed, Words... words) {
  uint64_t h = hashStart(seed);
  ((h = hashMore(h, static_cast<uint64_t>(words))), ...);
  return h;
}

static_assert(hashOf(7, 1, 2, 3) == hashMore(hashMore(hashMore(hashStart(7), 1), 2), 3),
              "hashOf must be the fold of hashStart and hashMore");

/// A stable 64-bit hash of a name (FNV-1a), for keying draws by column name.
constexpr uint64_t hashName(std::string_view name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  return mix64(h);
}

/// A uniform double in [0, 1) from the top 53 bits of `h`.
inline double uniform01(uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

/// A uniform double in (0, 1], safe to take the logarithm of.
inline double uniformPositive(uint64_t h) {
  return static_cast<double>((h >> 11) + 1) * 0x1.0p-53;
}

/// A standard normal draw (Box-Muller on two words derived from `h`).
inline double standardNormal(uint64_t h) {
  double u1 = uniformPositive(mix64(h ^ 0x6A09E667F3BCC909ull));
  double u2 = uniform01(mix64(h ^ 0xBB67AE8584CAA73Bull));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_DATA_COUNTERRANDOM_H
