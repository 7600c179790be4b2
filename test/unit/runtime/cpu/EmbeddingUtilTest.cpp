//===- EmbeddingUtilTest.cpp - coalescing, hashing, norms, determinism ----===//
//
// coalesceRows must give ascending distinct rows with duplicates summed in
// their original order (bit-exact, since the sparse update is replayed on
// resume); hashIds must be XXH64 of the id's little-endian bytes modulo the
// bucket count; the reductions (sumSquares, biasGrad, lossForward, lamb)
// must not change with the thread count.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/cpu/Parallel.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

namespace embc::runtime::cpu {
namespace {

using testing::randomVector;
using FVec = std::vector<float>;

// --- coalesceRows -----------------------------------------------------------------

TEST(CpuCoalesceRows, SumsDuplicatesIntoAscendingRows) {
  const int64_t D = 2;
  std::vector<int64_t> rows = {5, 2, 5, 0, 2, 5};
  FVec vals = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60};
  const int64_t distinct = coalesceRows(rows.data(), vals.data(), int64_t(rows.size()), D);
  ASSERT_EQ(distinct, 3);
  EXPECT_EQ(std::vector<int64_t>(rows.begin(), rows.begin() + 3), (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(FVec(vals.begin(), vals.begin() + 6), (FVec{4, 40, 2 + 5, 20 + 50, 1 + 3 + 6, 10 + 30 + 60}));
}

TEST(CpuCoalesceRows, EmptyAndAllDistinct) {
  EXPECT_EQ(coalesceRows<float>(nullptr, nullptr, 0, 4), 0);
  std::vector<int64_t> rows = {3, 1, 2};
  FVec vals = {3, 1, 2};
  EXPECT_EQ(coalesceRows(rows.data(), vals.data(), 3, 1), 3);
  EXPECT_EQ(rows, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(vals, (FVec{1, 2, 3}));
}

// Large enough to take the parallel path; the expected sums are accumulated
// in float in the original order, so the comparison is exact.
TEST(CpuCoalesceRows, MatchesOriginalOrderSumsExactlyAndIsDeterministic) {
  const int64_t n = 6000, D = 16, tableRows = 700;
  std::mt19937 gen(7);
  std::uniform_int_distribution<int64_t> pick(0, tableRows - 1);
  std::vector<int64_t> rows(n);
  for (auto &r : rows)
    r = pick(gen);
  const FVec vals = randomVector<float>(n * D, 8);

  std::map<int64_t, FVec> expected;
  for (int64_t i = 0; i < n; ++i) {
    auto [it, fresh] = expected.try_emplace(rows[i], FVec(vals.begin() + i * D, vals.begin() + (i + 1) * D));
    if (!fresh)
      for (int64_t j = 0; j < D; ++j)
        it->second[j] += vals[i * D + j];
  }

  auto run = [&](int threads) {
    setTeamSize(threads);
    std::vector<int64_t> r = rows;
    FVec v = vals;
    const int64_t distinct = coalesceRows(r.data(), v.data(), n, D);
    r.resize(distinct);
    v.resize(distinct * D);
    return std::make_pair(r, v);
  };
  const int defaultThreads = teamSize();
  const auto one = run(1), two = run(2);
  setTeamSize(defaultThreads);

  ASSERT_EQ(one.first.size(), expected.size());
  size_t k = 0;
  for (const auto &[row, sum] : expected) {
    EXPECT_EQ(one.first[k], row);
    for (int64_t j = 0; j < D; ++j)
      EXPECT_EQ(one.second[k * D + j], sum[j]) << "row " << row << " column " << j;
    ++k;
  }
  EXPECT_EQ(one, two) << "coalesceRows depends on the thread count";
}

// --- hashIds ----------------------------------------------------------------------

TEST(CpuHashIds, IsXxh64OfLittleEndianBytesModBuckets) {
  const std::vector<int64_t> ids = {0, 1, 42, -1, -123456789, INT64_MAX, INT64_MIN, 1LL << 40};
  const int64_t buckets = 1000003;
  const uint64_t seed = 0x5eedULL;
  std::vector<int64_t> out(ids.size());
  hashIds(ids.data(), out.data(), int64_t(ids.size()), buckets, seed);
  for (size_t i = 0; i < ids.size(); ++i) {
    unsigned char bytes[8];
    const uint64_t bits = uint64_t(ids[i]);
    for (int k = 0; k < 8; ++k)
      bytes[k] = static_cast<unsigned char>(bits >> (8 * k));
    EXPECT_EQ(uint64_t(out[i]), XXH64(bytes, 8, seed) % uint64_t(buckets)) << "id " << ids[i];
    EXPECT_GE(out[i], 0);
    EXPECT_LT(out[i], buckets);
  }
  // The seed matters.
  std::vector<int64_t> other(ids.size());
  hashIds(ids.data(), other.data(), int64_t(ids.size()), buckets, seed + 1);
  EXPECT_NE(out, other);
}

TEST(CpuHashIds, ManyIdsStayInRangeAndRejectBadBuckets) {
  const int64_t n = 50000, buckets = 97;
  std::vector<int64_t> ids(n), out(n);
  for (int64_t i = 0; i < n; ++i)
    ids[i] = i * 7919 - 100000;
  hashIds(ids.data(), out.data(), n, buckets, 1);
  std::vector<int> hits(buckets, 0);
  for (int64_t h : out) {
    ASSERT_GE(h, 0);
    ASSERT_LT(h, buckets);
    ++hits[h];
  }
  for (int c : hits)
    EXPECT_GT(c, 0) << "a bucket is never hit: the hash is not spreading ids";
  EXPECT_THROW(hashIds(ids.data(), out.data(), n, 0, 1), std::invalid_argument);
}

// --- sumSquares and thread-count independence ----------------------------------

TEST(CpuSumSquares, MatchesNaiveSum) {
  const FVec x = randomVector<float>(1001, 9);
  double expected = 0;
  for (float v : x)
    expected += double(v) * v;
  EXPECT_NEAR(sumSquares(x.data(), int64_t(x.size())), expected, 1e-12 * expected);
  EXPECT_EQ(sumSquares<float>(nullptr, 0), 0.0);
}

TEST(CpuDeterminism, ReductionsIgnoreTheThreadCount) {
  const int64_t n = 300000, B = 2048, N = 160;
  const FVec x = randomVector<float>(n, 10);
  const FVec dy = randomVector<float>(B * N, 11);
  const FVec logits = randomVector<float>(n, 12, -5, 5), labels = randomVector<float>(n, 13, 0, 1);
  struct Results {
    double squares;
    FVec db;
    float loss;
    FVec lamb;
  };
  auto run = [&](int threads) {
    setTeamSize(threads);
    Results r;
    r.squares = sumSquares(x.data(), n);
    r.db.resize(N);
    biasGrad(dy.data(), r.db.data(), B, N);
    r.loss = lossForward(LossKind::BceWithLogits, logits.data(), labels.data(), n, 1);
    OptimizerParams p;
    p.kind = OptimizerKind::Lamb;
    p.weightDecay = 0.01;
    r.lamb = x;
    FVec m(n, 0.0f), v(n, 0.0f);
    EXPECT_EQ(denseUpdate(p, 1, 1.0, 1.0, r.lamb.data(), dy.data(), m.data(), v.data(), n, n), -1);
    return r;
  };
  const int defaultThreads = teamSize();
  const Results one = run(1), two = run(2), three = run(3);
  setTeamSize(defaultThreads);
  for (const Results *other : {&two, &three}) {
    EXPECT_EQ(one.squares, other->squares);
    EXPECT_EQ(one.db, other->db);
    EXPECT_EQ(one.loss, other->loss);
    EXPECT_EQ(one.lamb, other->lamb);
  }
}

} // namespace
} // namespace embc::runtime::cpu
