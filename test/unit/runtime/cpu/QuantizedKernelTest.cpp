//===- QuantizedKernelTest.cpp - tables in f16, bf16, int8, int4 storage --===//
//
// cpu/QuantizedKernels.h: conversions round trip; stochastic rounding is
// unbiased (the mean of many draws is the value) and deterministic (a pure
// function of its key, whatever the thread count); int8 and int4 rows are
// within scale / 2 of the values when rounded to nearest and unbiased when
// rounded stochastically, with fp16 scale and bias that cover the row (and
// survive values beyond fp16's range); int4 packs two codes per byte, low
// nibble first; a quantised lookup equals the f32 lookup of the dequantised
// table; a quantised update equals the f32 update of the dequantised table
// followed by quantisation, within one quantum.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/HalfFloat.h"
#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/cpu/QuantizedKernels.h"
#include "embc/runtime/cpu/SequenceKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace embc::runtime::cpu {
namespace {

/// A table of `rows` x `D` in `storage`, rounded to nearest from `values`.
struct Owned {
  std::vector<uint8_t> bytes;
  std::vector<uint16_t> qparams; ///< fp16 (scale, bias) per row
  QuantizedTable table;
  Owned(Storage storage, int64_t rows, int64_t D, const std::vector<float> &values) {
    bytes.resize(size_t(rows * storageRowBytes(storage, D)));
    qparams.resize(isRowwise(storage) ? size_t(rows * 2) : 0);
    table = {storage, bytes.data(), qparams.empty() ? nullptr : qparams.data(), rows, D};
    for (int64_t r = 0; r < rows; ++r)
      quantizeRow(table, r, values.data() + r * D, /*nearest=*/true, 0);
  }
  float scale(int64_t r) const { return halfToFloat(qparams[size_t(2 * r)]); }
  float bias(int64_t r) const { return halfToFloat(qparams[size_t(2 * r + 1)]); }
  std::vector<float> dequantized() const {
    std::vector<float> out(size_t(table.rows * table.D));
    for (int64_t r = 0; r < table.rows; ++r)
      dequantizeRow(table, r, out.data() + r * table.D);
    return out;
  }
};

std::vector<float> randomValues(size_t n, uint32_t seed, float scale = 0.1f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = normal(rng);
  return v;
}

/// The distance between x's representable neighbours in `storage` (fp16/bf16).
double quantum(Storage storage, float x) {
  uint16_t bits = storage == Storage::F16 ? floatToHalf(x) : floatToBf16(x);
  auto decode = [&](uint16_t b) {
    return double(storage == Storage::F16 ? halfToFloat(b) : bf16ToFloat(b));
  };
  return std::fabs(decode(uint16_t(bits + 1)) - decode(bits)) +
         std::fabs(decode(bits) - decode(uint16_t(bits - 1)));
}

TEST(QuantizedKernels, HalfAndBf16RoundTrip) {
  // Every finite 16-bit pattern decodes to a float that encodes back to it.
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    uint16_t h = uint16_t(b);
    float f = halfToFloat(h);
    if (std::isfinite(f)) {
      ASSERT_EQ(floatToHalf(f), h) << std::hex << b;
    }
    float g = bf16ToFloat(h);
    if (std::isfinite(g)) {
      ASSERT_EQ(floatToBf16(g), h) << std::hex << b;
    }
    // Stochastic rounding of a representable value is the value.
    if (std::isfinite(f)) {
      ASSERT_EQ(halfToFloat(floatToHalfStochastic(f, b * 7919u)), f);
    }
    if (std::isfinite(g)) {
      ASSERT_EQ(bf16ToFloat(floatToBf16Stochastic(g, b * 104729u)), g);
    }
  }
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f / 3.0f)), 0.333251953125f);
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f / 3.0f)), 0.333984375f);
}

TEST(QuantizedKernels, StochasticRoundingIsUnbiasedAndDeterministic) {
  const int draws = 200000;
  for (Storage storage : {Storage::F16, Storage::BF16}) {
    for (float x : {0.1f, -0.7371f, 3.14159f, 1e-3f, 2.5e-6f /* fp16 subnormal */}) {
      double sum = 0;
      for (int i = 0; i < draws; ++i) {
        uint64_t bits = elementBits(rowKey(42, 7, i, 1), 0);
        sum += storage == Storage::F16 ? halfToFloat(floatToHalfStochastic(x, bits))
                                       : bf16ToFloat(floatToBf16Stochastic(x, bits));
      }
      // Each draw is off by at most one quantum q; the mean's standard error
      // is below q / (2 sqrt(n)), so 6 of them is a tight bound.
      double q = quantum(storage, x);
      EXPECT_NEAR(sum / draws, x, 6 * q / (2 * std::sqrt(double(draws))))
          << (storage == Storage::F16 ? "f16 " : "bf16 ") << x;
      // The same key gives the same draw.
      uint64_t key = rowKey(1, 2, 3, 4);
      EXPECT_EQ(floatToBf16Stochastic(x, elementBits(key, 5)),
                floatToBf16Stochastic(x, elementBits(rowKey(1, 2, 3, 4), 5)));
    }
  }
  // Rounding up happens with probability (x - lo) / (hi - lo): 0.8 for 0.1
  // in bf16 (neighbours 0.099609375 and 0.10009765625), within 5 sigma.
  int ups = 0;
  for (int i = 0; i < 1000; ++i)
    ups += bf16ToFloat(floatToBf16Stochastic(0.1f, elementBits(rowKey(0, 0, i, 0), 0))) > 0.1f;
  const double pUp = (0.1 - 0.099609375) / (0.10009765625 - 0.099609375);
  EXPECT_NEAR(ups, 1000 * pUp, 5 * std::sqrt(1000 * pUp * (1 - pUp)));
}

/// The largest code of a row-wise storage.
int maxCode(Storage storage) { return storage == Storage::Int4 ? 15 : 255; }

TEST(QuantizedKernels, RowwiseRowError) {
  const int64_t D = 64;
  std::vector<float> v = randomValues(D, 3, 1.0f);
  const float lo = *std::min_element(v.begin(), v.end());
  const float hi = *std::max_element(v.begin(), v.end());
  for (Storage storage : {Storage::Int8, Storage::Int4}) {
    SCOPED_TRACE(storage == Storage::Int8 ? "int8" : "int4");
    const int L = maxCode(storage);
    Owned nearest(storage, 1, D, v);
    // fp16 scale and bias, rounded outwards: the codes' range covers the row
    // and the scale is (max - min) / L up to fp16 rounding.
    const float scale = nearest.scale(0), bias = nearest.bias(0);
    EXPECT_LE(bias, lo);
    EXPECT_LT(lo - bias, std::fabs(lo) * 1e-3f); // within an fp16 ulp of min
    EXPECT_GE(double(scale) * L + bias, hi);
    EXPECT_NEAR(scale, (hi - lo) / L, (hi - lo) / L * 3e-3);
    std::vector<float> back = nearest.dequantized();
    for (int64_t j = 0; j < D; ++j)
      EXPECT_LE(std::fabs(back[j] - v[j]), scale / 2 * (1 + 1e-5)) << j;

    // Stochastic: unbiased per element over many keys, each within one scale.
    const int draws = 20000;
    std::vector<double> mean(D, 0.0);
    QuantizedTable t = nearest.table;
    std::vector<float> row(D);
    for (int i = 0; i < draws; ++i) {
      quantizeRow(t, 0, v.data(), /*nearest=*/false, rowKey(9, 9, 0, i));
      dequantizeRow(t, 0, row.data());
      for (int64_t j = 0; j < D; ++j) {
        ASSERT_LE(std::fabs(row[j] - v[j]), nearest.scale(0) * (1 + 1e-5));
        mean[j] += row[j];
      }
    }
    for (int64_t j = 0; j < D; ++j)
      EXPECT_NEAR(mean[j] / draws, v[j], 6 * scale / (2 * std::sqrt(double(draws)))) << j;

    // A constant row of an fp16 value is exact (scale 0); of another value,
    // within half a (tiny) scale.
    std::vector<float> flat(D, 0.25f);
    quantizeRow(t, 0, flat.data(), false, 1);
    EXPECT_EQ(nearest.qparams[0], 0u);
    dequantizeRow(t, 0, row.data());
    for (float x : row)
      EXPECT_EQ(x, 0.25f);
    std::fill(flat.begin(), flat.end(), 0.1f);
    quantizeRow(t, 0, flat.data(), true, 1);
    dequantizeRow(t, 0, row.data());
    for (float x : row)
      EXPECT_NEAR(x, 0.1f, nearest.scale(0) / 2 * (1 + 1e-5));
  }
}

TEST(QuantizedKernels, RowwiseParamsAreFp16AndCoverTheRow) {
  for (int L : {15, 255})
    for (auto [lo, hi] : std::vector<std::pair<float, float>>{
             {-0.0517f, 0.0833f}, {0.3f, 0.30001f}, {-1e-6f, 2e-6f}, {-700.0f, 12.5f},
             {1000.0f, 1000.0f}}) {
      RowParams p = rowwiseParams(lo, hi, L);
      float scale = halfToFloat(p.scale), bias = halfToFloat(p.bias);
      ASSERT_TRUE(std::isfinite(scale) && std::isfinite(bias));
      EXPECT_GE(scale, 0.0f);
      EXPECT_LE(bias, lo) << lo;
      EXPECT_GE(double(scale) * L + bias, double(hi)) << lo << " " << hi;
      // Quantising with the stored fp16 values: dequantisation reproduces
      // what quantisation assumed, so the nearest code is within scale / 2.
      for (float x : {lo, hi, lo + (hi - lo) / 3}) {
        uint8_t q = quantizeCode(x, scale, bias, 0, true, L);
        EXPECT_LE(std::fabs(double(scale) * q + bias - x), scale / 2 * (1 + 1e-4) + 1e-30);
      }
    }
  // Beyond fp16's range (65504): the row saturates instead of turning into
  // inf / NaN; values inside the range keep their accuracy for the scale.
  const int64_t D = 4;
  std::vector<float> wild = {-1e6f, 3.0f, 1e6f, -2.0f};
  for (Storage storage : {Storage::Int8, Storage::Int4}) {
    Owned q(storage, 1, D, wild);
    std::vector<float> back = q.dequantized();
    const float scale = q.scale(0);
    ASSERT_TRUE(std::isfinite(scale) && std::isfinite(q.bias(0)));
    EXPECT_EQ(back[0], -65504.0f);
    EXPECT_GE(back[2], 65504.0f - scale / 2);
    EXPECT_LE(back[2], 65504.0f + scale);
    EXPECT_LE(std::fabs(back[1] - 3.0f), scale / 2 * (1 + 1e-5));
    EXPECT_LE(std::fabs(back[3] + 2.0f), scale / 2 * (1 + 1e-5));
  }
  // Non-finite values cannot be stored row-wise.
  std::vector<float> bad = {1.0f, NAN, 0.0f, 2.0f};
  EXPECT_THROW(Owned(Storage::Int4, 1, D, bad), std::domain_error);
}

TEST(QuantizedKernels, Int4PacksTwoCodesPerByteLowNibbleFirst) {
  // Codes 0, 15, 5, 10 for scale 1, bias 0 (an fp16-exact row).
  std::vector<float> v = {0.0f, 15.0f, 5.0f, 10.0f};
  Owned q(Storage::Int4, 1, 4, v);
  EXPECT_EQ(q.scale(0), 1.0f);
  EXPECT_EQ(q.bias(0), 0.0f);
  ASSERT_EQ(q.bytes.size(), 2u);
  EXPECT_EQ(q.bytes[0], 0xf0u);
  EXPECT_EQ(q.bytes[1], 0xa5u);
  EXPECT_EQ(q.dequantized(), v);
  EXPECT_THROW(storageRowBytes(Storage::Int4, 5), std::invalid_argument);
  EXPECT_EQ(storageRowBytes(Storage::Int4, 128), 64);
  EXPECT_EQ(parseEnum<Storage>("int4"), Storage::Int4);
}

TEST(QuantizedKernels, LookupEqualsF32LookupOfDequantisedTable) {
  const int64_t rows = 50, D = 8, B = 6;
  std::vector<float> values = randomValues(size_t(rows * D), 5);
  std::vector<int64_t> ids = {3, 7, 7, 0, 49, 12, 3, 8, 21, 30, 31};
  std::vector<int64_t> offsets = {0, 2, 3, 3, 6, 9, 11}; // bag 2 is empty
  std::vector<float> weights = randomValues(ids.size(), 6, 1.0f);
  for (Storage storage : {Storage::F16, Storage::BF16, Storage::Int8, Storage::Int4}) {
    Owned q(storage, rows, D, values);
    std::vector<float> f32 = q.dequantized();
    for (Pooling pooling : {Pooling::Sum, Pooling::Mean, Pooling::Max})
      for (const float *w : {(const float *)nullptr, (const float *)weights.data()}) {
        std::vector<float> want(B * D), got(B * D);
        lookupForward(f32.data(), D, ids.data(), offsets.data(), w, B, pooling, want.data());
        quantizedLookup(q.table, ids.data(), offsets.data(), w, B, pooling, got.data());
        EXPECT_EQ(got, want) << int(storage) << " pooling " << int(pooling);
        // Max pooling's gradient finds the same argmax.
        std::vector<float> dy = randomValues(size_t(B * D), 8), gw(ids.size() * D),
                           gg(ids.size() * D);
        lookupGrad(f32.data(), D, ids.data(), offsets.data(), w, B, pooling, dy.data(),
                   gw.data());
        quantizedLookupGrad(q.table, ids.data(), offsets.data(), w, B, pooling, dy.data(),
                            gg.data());
        EXPECT_EQ(gg, gw);
      }
    std::vector<float> want(ids.size() * D), got(ids.size() * D);
    gatherForward(f32.data(), D, ids.data(), int64_t(ids.size()), want.data());
    quantizedGather(q.table, ids.data(), int64_t(ids.size()), got.data());
    EXPECT_EQ(got, want);
    // The bags as sequences of at most 3 tokens: rows in order, zeros after.
    const int64_t L = 3;
    std::vector<float> seqWant(B * L * D), seqGot(B * L * D, 1.0f);
    sequenceLookupForward(f32.data(), D, ids.data(), offsets.data(), B, L, seqWant.data());
    quantizedSequenceLookup(q.table, ids.data(), offsets.data(), B, L, seqGot.data());
    EXPECT_EQ(seqGot, seqWant);
  }
}

TEST(QuantizedKernels, UpdateEqualsF32UpdateThenQuantisation) {
  const int64_t rows = 40, D = 16;
  std::vector<float> values = randomValues(size_t(rows * D), 11);
  std::vector<int64_t> touched = {0, 3, 4, 17, 39};
  std::vector<float> grads = randomValues(touched.size() * D, 12, 1.0f);
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adagrad,
                             OptimizerKind::RowwiseAdagrad, OptimizerKind::Adam}) {
    OptimizerParams p;
    p.kind = kind;
    p.lr = 0.05;
    for (Storage storage : {Storage::F16, Storage::BF16, Storage::Int8, Storage::Int4}) {
      Owned q(storage, rows, D, values);
      std::vector<float> f32 = q.dequantized();
      size_t stateLen = kind == OptimizerKind::RowwiseAdagrad ? rows : rows * D;
      std::vector<float> s0(stateLen, 0.1f), s1(rows * D, 0.0f);
      std::vector<float> q0 = s0, q1 = s1;
      bool two = kind == OptimizerKind::Adam;
      EXPECT_FALSE(sparseUpdate(p, 1, 1.0, 1.0, f32.data(), rows, D, touched.data(), grads.data(),
                   int64_t(touched.size()), s0.data(), two ? s1.data() : nullptr));
      EXPECT_FALSE(quantizedSparseUpdate(p, 1, 1.0, 1.0, q.table, touched.data(), grads.data(),
                            int64_t(touched.size()), q0.data(), two ? q1.data() : nullptr, 42,
                            {{0, 1234}}));
      EXPECT_EQ(q0, s0); // the optimizer state is the f32 update's
      std::vector<float> got = q.dequantized();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < D; ++j) {
          float want = f32[r * D + j], have = got[r * D + j];
          double bound = isRowwise(storage) ? q.scale(r) * (1 + 1e-5) : quantum(storage, want);
          ASSERT_LE(std::fabs(have - want), bound)
              << "storage " << int(storage) << " row " << r << " element " << j;
        }
    }
  }
}

TEST(QuantizedKernels, UpdateIsIndependentOfThreadsAndSegments) {
  const int64_t rows = 4000, D = 16;
  std::vector<float> values = randomValues(size_t(rows * D), 21);
  std::vector<int64_t> touched;
  for (int64_t r = 0; r < rows; r += 3)
    touched.push_back(r);
  std::vector<float> grads = randomValues(touched.size() * D, 22, 1.0f);
  OptimizerParams p;
  p.kind = OptimizerKind::Adagrad;
  p.lr = 0.1;
  auto run = [&](int threads, std::vector<RowSegment> segments) {
    Owned q(Storage::BF16, rows, D, values);
    std::vector<float> state(rows * D, 0.0f);
    int before = teamSize();
    setTeamSize(threads);
    EXPECT_FALSE(quantizedSparseUpdate(p, 3, 1.0, 1.0, q.table, touched.data(), grads.data(),
                          int64_t(touched.size()), state.data(), nullptr, 7, segments));
    setTeamSize(before);
    return q.bytes;
  };
  std::vector<uint8_t> one = run(1, {{0, 5}});
  EXPECT_EQ(run(4, {{0, 5}}), one);
  // Another table key draws differently.
  EXPECT_NE(run(1, {{0, 6}}), one);
  // A second segment changes only its own rows' draws: rows below 2000 agree.
  std::vector<uint8_t> split = run(2, {{0, 5}, {2000, 6}});
  EXPECT_TRUE(std::equal(one.begin(), one.begin() + 2000 * D * 2, split.begin()));
}

} // namespace
} // namespace embc::runtime::cpu
