//===- MaskKernelTest.cpp - the masked-token objective's masks ------------===//
//
// cpu::maskTokens (MaskKernels.h): how many tokens a sequence masks, that
// the targets are the chosen tokens' ids, BERT's 80/10/10 replacement, and
// that the masks depend on each example's place in the global batch, not on
// how the batch is split (micro-batches, ranks), nor on the thread count.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/MaskKernels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace embc::runtime::cpu {
namespace {

struct Sequences {
  std::vector<int64_t> ids, offsets{0};
};

/// B sequences of lengths 0, 1, 2, ... (mod L + 1), ids 3 + (i mod 50).
Sequences sequences(int64_t B, int64_t L) {
  Sequences s;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = b % (L + 1);
    for (int64_t l = 0; l < n; ++l)
      s.ids.push_back(3 + int64_t(s.ids.size()) % 50);
    s.offsets.push_back(int64_t(s.ids.size()));
  }
  return s;
}

struct Masks {
  std::vector<int64_t> masked;
  std::vector<float> targets;
};

Masks mask(const Sequences &s, int64_t first, int64_t B, int64_t L, double rate, uint64_t key,
           uint64_t firstExample, int64_t counterL = 0) {
  // Sequences first .. first + B - 1, with offsets starting at 0.
  std::vector<int64_t> offsets(size_t(B + 1));
  for (int64_t b = 0; b <= B; ++b)
    offsets[size_t(b)] = s.offsets[size_t(first + b)] - s.offsets[size_t(first)];
  const int64_t *ids = s.ids.data() + s.offsets[size_t(first)];
  const int64_t n = offsets[size_t(B)];
  Masks m{std::vector<int64_t>(size_t(n)), std::vector<float>(size_t(B * L))};
  maskTokens(ids, offsets.data(), n, B, L, rate, /*maskId=*/100, /*vocab=*/60, key, firstExample,
             m.masked.data(), m.targets.data(), counterL);
  return m;
}

TEST(MaskTokens, ChoosesRoundedShareOfEachSequenceAndTargetsTheirIds) {
  const int64_t B = 64, L = 16;
  const Sequences s = sequences(B, L);
  const Masks m = mask(s, 0, B, L, 0.15, maskKey(7, 0, 3), 0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = s.offsets[size_t(b + 1)] - s.offsets[size_t(b)];
    int64_t chosen = 0;
    for (int64_t l = 0; l < L; ++l) {
      const float t = m.targets[size_t(b * L + l)];
      if (t < 0) {
        EXPECT_EQ(t, -1.0f);
        if (l < n) // an unchosen token keeps its id
          EXPECT_EQ(m.masked[size_t(s.offsets[size_t(b)] + l)], s.ids[size_t(s.offsets[size_t(b)] + l)]);
        continue;
      }
      ASSERT_LT(l, n) << "a target past the sequence";
      EXPECT_EQ(t, float(s.ids[size_t(s.offsets[size_t(b)] + l)]));
      ++chosen;
    }
    EXPECT_EQ(chosen, masking::count(n, 0.15)) << "sequence " << b << " of " << n;
  }
  EXPECT_EQ(masking::count(0, 0.15), 0);
  EXPECT_EQ(masking::count(1, 0.15), 1);
  EXPECT_EQ(masking::count(10, 0.15), 2); // round(1.5) = 2
  EXPECT_EQ(masking::count(64, 0.15), 10);
}

TEST(MaskTokens, ReplacesEightyPercentByTheMaskTenByRandomIds) {
  const int64_t B = 2000, L = 20;
  Sequences s;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t l = 0; l < L; ++l)
      s.ids.push_back(7);
    s.offsets.push_back(int64_t(s.ids.size()));
  }
  const Masks m = mask(s, 0, B, L, 0.5, maskKey(1, 0, 1), 0);
  int64_t chosen = 0, masks = 0, kept = 0, random = 0;
  for (int64_t i = 0; i < B * L; ++i) {
    if (m.targets[size_t(i)] < 0)
      continue;
    ++chosen;
    const int64_t id = m.masked[size_t(i)];
    if (id == 100)
      ++masks;
    else if (id == 7)
      ++kept; // or a random draw of 7: 1/60 of the random ones
    else {
      EXPECT_LT(id, 60);
      EXPECT_GE(id, 0);
      ++random;
    }
  }
  EXPECT_EQ(chosen, B * 10);
  EXPECT_NEAR(double(masks) / double(chosen), 0.8, 0.01);
  EXPECT_NEAR(double(random) / double(chosen), 0.1 * 59.0 / 60.0, 0.01);
  EXPECT_NEAR(double(kept) / double(chosen), 0.1 + 0.1 / 60.0, 0.01);
}

TEST(MaskTokens, DependOnTheGlobalPlaceNotOnTheSplitOrThreads) {
  const int64_t B = 48, L = 12;
  const Sequences s = sequences(B, L);
  const uint64_t key = maskKey(42, 0, 5);
  const Masks whole = mask(s, 0, B, L, 0.25, key, 0);
  // Two halves, as two micro-batches or two ranks see them.
  const Masks first = mask(s, 0, B / 2, L, 0.25, key, 0);
  const Masks second = mask(s, B / 2, B / 2, L, 0.25, key, B / 2);
  std::vector<int64_t> masked = first.masked;
  masked.insert(masked.end(), second.masked.begin(), second.masked.end());
  std::vector<float> targets = first.targets;
  targets.insert(targets.end(), second.targets.begin(), second.targets.end());
  EXPECT_EQ(masked, whole.masked);
  EXPECT_EQ(targets, whole.targets);
  const int team = teamSize();
  setTeamSize(1);
  const Masks serial = mask(s, 0, B, L, 0.25, key, 0);
  setTeamSize(team);
  EXPECT_EQ(serial.masked, whole.masked);
  EXPECT_EQ(serial.targets, whole.targets);
  // Another step (or evaluation) masks other positions.
  const Masks later = mask(s, 0, B, L, 0.25, maskKey(42, 0, 6), 0);
  const Masks evaluation = mask(s, 0, B, L, 0.25, maskKey(42, 0, masking::kEvaluationStep), 0);
  EXPECT_NE(later.targets, whole.targets);
  EXPECT_NE(evaluation.targets, whole.targets);
}

TEST(MaskTokens, AShorterBatchLengthChoosesWhatMaxLenChooses) {
  // Dynamic padding: sequences of at most 7 tokens run at L = 8 of a
  // max_len of 12 and number their positions by 12.
  const int64_t B = 40, L = 12, shorter = 8;
  Sequences s;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t l = 0; l < b % 8; ++l)
      s.ids.push_back(3 + int64_t(s.ids.size()) % 50);
    s.offsets.push_back(int64_t(s.ids.size()));
  }
  const uint64_t key = maskKey(9, 1, 4);
  const Masks full = mask(s, 0, B, L, 0.3, key, 5);
  const Masks cut = mask(s, 0, B, shorter, 0.3, key, 5, /*counterL=*/L);
  EXPECT_EQ(cut.masked, full.masked);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t l = 0; l < L; ++l)
      EXPECT_EQ(l < shorter ? cut.targets[size_t(b * shorter + l)] : -1.0f,
                full.targets[size_t(b * L + l)])
          << "sequence " << b << " position " << l;
  // Numbered by its own L instead, the choice moves.
  EXPECT_NE(mask(s, 0, B, shorter, 0.3, key, 5).masked, full.masked);
}

} // namespace
} // namespace embc::runtime::cpu
