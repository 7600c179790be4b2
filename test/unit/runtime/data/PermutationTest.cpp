//===- PermutationTest.cpp - epoch orders ---------------------------------===//

#include "embc/runtime/data/Permutation.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

using namespace embc::runtime::data;

namespace {

std::vector<uint64_t> orderOf(uint64_t n, uint64_t seed, uint64_t epoch) {
  EpochPermutation permutation(n, seed, epoch);
  std::vector<uint64_t> order(n);
  for (uint64_t i = 0; i < n; ++i)
    order[i] = permutation(i);
  return order;
}

bool isPermutation(std::vector<uint64_t> order) {
  std::vector<char> seen(order.size(), 0);
  for (uint64_t x : order) {
    if (x >= order.size() || seen[x])
      return false;
    seen[x] = 1;
  }
  return true;
}

} // namespace

TEST(EpochPermutation, IsABijectionForEverySize) {
  for (uint64_t n = 1; n <= 300; ++n)
    ASSERT_TRUE(isPermutation(orderOf(n, 42, n % 3))) << "n = " << n;
  EXPECT_TRUE(isPermutation(orderOf(100003, 1, 0)));
  EXPECT_TRUE(isPermutation(orderOf(1 << 16, 1, 5))); // an exact power of 4
}

TEST(EpochPermutation, DependsOnSeedAndEpochOnly) {
  EXPECT_EQ(orderOf(1000, 3, 1), orderOf(1000, 3, 1));
  EXPECT_NE(orderOf(1000, 3, 1), orderOf(1000, 3, 2));
  EXPECT_NE(orderOf(1000, 3, 1), orderOf(1000, 4, 1));
  std::vector<uint64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(orderOf(1000, 3, 1), identity);
}

TEST(EpochPermutation, LooksShuffled) {
  // Neighbours in the order are far apart in the data on average (about n/3
  // for a random order), and no place keeps its example much more than 1/n.
  uint64_t n = 10000;
  std::vector<uint64_t> order = orderOf(n, 9, 0);
  double distance = 0;
  int fixedPoints = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (i + 1 < n)
      distance += std::abs(static_cast<double>(order[i + 1]) - static_cast<double>(order[i]));
    fixedPoints += order[i] == i;
  }
  EXPECT_NEAR(distance / (n - 1) / n, 1.0 / 3, 0.03);
  EXPECT_LT(fixedPoints, 10);
}

TEST(EpochPermutation, RefusesAnEmptyDomain) {
  EXPECT_THROW(EpochPermutation(0, 1, 0), std::invalid_argument);
}
