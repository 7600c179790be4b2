//===- FiniteCheckTest.cpp - the scan for NaN and infinity in saved tensors -===//

#include "FiniteCheck.h"

#include "embc/runtime/cpu/Parallel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace embc::runtime;
using checkpoint::TensorView;

namespace {

template <class T> TensorView view(const char *name, const char *dtype, const std::vector<T> &v) {
  return {name, dtype, {int64_t(v.size())}, v.data(), v.size() * sizeof(T)};
}

TEST(FiniteCheck, CountsNaNAndInfinityInEveryFloatingDtype) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> f32 = {1, 3.4e38f, -0.0f, nan, 2, -inf};
  NonFinite bad = nonFiniteValues(view("f32", "F32", f32));
  EXPECT_EQ(bad.count, 2);
  EXPECT_EQ(bad.first, 3);
  std::vector<double> f64 = {1e308, -std::numeric_limits<double>::infinity()};
  EXPECT_EQ(nonFiniteValues(view("f64", "F64", f64)).first, 1);
  // fp16 65504 (0x7BFF) is its largest finite value; 0x7C00 is +inf, 0xFE00 a NaN.
  std::vector<uint16_t> f16 = {0x7BFF, 0x3C00, 0x7C00, 0xFE00};
  EXPECT_EQ(nonFiniteValues(view("f16", "F16", f16)).count, 2);
  // bf16 shares f32's exponent: 0x7F7F is finite, 0x7F80 +inf, 0xFFC1 a NaN.
  std::vector<uint16_t> bf16 = {0x7F7F, 0x7F80, 0xFFC1};
  EXPECT_EQ(nonFiniteValues(view("bf16", "BF16", bf16)).count, 2);
  // Integer tensors (quantised codes, ids) have no such values.
  std::vector<uint8_t> codes = {0xFF, 0x80};
  EXPECT_EQ(nonFiniteValues(view("codes", "U8", codes)).count, 0);
}

TEST(FiniteCheck, ALargeTensorIsScannedOnTheTeamWithTheFirstIndexExact) {
  cpu::setTeamSize(3);
  std::vector<float> big(size_t(5) << 20, 1.0f); // 5 Mi values: several tasks
  big[4'000'001] = std::nanf("");
  big[3'000'000] = std::numeric_limits<float>::infinity();
  NonFinite bad = nonFiniteValues(view("big", "F32", big));
  EXPECT_EQ(bad.count, 2);
  EXPECT_EQ(bad.first, 3'000'000);
  cpu::setTeamSize(0);
}

TEST(FiniteCheck, NamesTheTensorsAndCountsTheRest) {
  std::vector<float> fine = {1, 2}, badOne = {1, std::nanf("")};
  EXPECT_FALSE(describeNonFinite({view("param/w", "F32", fine)}));
  std::vector<TensorView> tensors = {view("param/w", "F32", fine)};
  for (const char *name : {"a", "b", "c", "d", "e", "f"})
    tensors.push_back(view(name, "F32", badOne));
  EXPECT_EQ(describeNonFinite(tensors).value_or(""),
            "a (1 of 2 values, the first at 1), b (1 of 2 values, the first at 1), "
            "c (1 of 2 values, the first at 1), d (1 of 2 values, the first at 1) "
            "and 2 more tensors");
}

} // namespace
