//===- AttentionReferenceTest.cpp - attention kernels against the formula -===//
//
// The attention kernels (cpu/AttentionKernels.h) promise one order of every
// sum, which the generated CUDA repeats for bit-identical results. Here the
// blocked kernels (keys transposed, scores side by side, weights kept for
// the backward's key pass) are compared bit for bit with the formula
// written the plainest way: each score, weight and product computed on its
// own, recomputed wherever it is needed. Lengths include 0, 1, full and
// in-between; causal and not; one and several heads.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/AttentionKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace embc::runtime::cpu {
namespace {

using testing::randomVector;
using FVec = std::vector<float>;

struct Naive {
  const AttentionShape &s;
  const float *q, *k, *v;
  const int64_t *offsets;

  int64_t dh() const { return s.headDim(); }
  float scale() const { return float(1.0 / std::sqrt(double(dh()))); }
  int64_t n(int64_t b) const { return std::clamp<int64_t>(offsets[b + 1] - offsets[b], 0, s.L); }
  int64_t keys(int64_t i, int64_t n) const { return s.causal ? std::min(i + 1, n) : n; }
  const float *at(const float *x, int64_t b, int64_t l, int64_t h) const {
    return x + (b * s.L + l) * s.D + h * dh();
  }
  static float dot(const float *x, const float *y, int64_t n) {
    float sum = 0.0f;
    for (int64_t c = 0; c < n; ++c)
      sum += x[c] * y[c];
    return sum;
  }
  float score(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return dot(at(q, b, i, h), at(k, b, j, h), dh()) * scale();
  }
  /// P_ij from scratch: the row's maximum and sum of exponentials, then
  /// the quotient.
  float weight(int64_t b, int64_t h, int64_t i, int64_t j) const {
    const int64_t m = keys(i, n(b));
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t jj = 0; jj < m; ++jj)
      max = std::max(max, score(b, h, i, jj));
    double sum = 0.0;
    for (int64_t jj = 0; jj < m; ++jj)
      sum += std::exp(double(score(b, h, i, jj)) - double(max));
    return float(std::exp(double(score(b, h, i, j)) - double(max)) / sum);
  }
};

void forward(const Naive &a, FVec &o) {
  const AttentionShape &s = a.s;
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.L; ++i) {
        std::vector<float> acc(size_t(a.dh()), 0.0f);
        for (int64_t j = 0; i < a.n(b) && j < a.keys(i, a.n(b)); ++j) {
          const float p = a.weight(b, h, i, j);
          for (int64_t c = 0; c < a.dh(); ++c)
            acc[size_t(c)] += p * a.at(a.v, b, j, h)[c];
        }
        std::memcpy(o.data() + (b * s.L + i) * s.D + h * a.dh(), acc.data(),
                    acc.size() * sizeof(float));
      }
}

void backward(const Naive &a, const float *dout, FVec &dq, FVec &dk, FVec &dv) {
  const AttentionShape &s = a.s;
  const int64_t dh = a.dh();
  auto t = [&](int64_t b, int64_t h, int64_t i) {
    double ti = 0.0;
    for (int64_t j = 0; j < a.keys(i, a.n(b)); ++j)
      ti += double(a.weight(b, h, i, j)) *
            double(Naive::dot(a.at(dout, b, i, h), a.at(a.v, b, j, h), dh));
    return float(ti);
  };
  auto ds = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    return a.weight(b, h, i, j) *
           (Naive::dot(a.at(dout, b, i, h), a.at(a.v, b, j, h), dh) - t(b, h, i));
  };
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t r = 0; r < s.L; ++r) {
        std::vector<float> accQ(size_t(dh), 0.0f), accK(size_t(dh), 0.0f),
            accV(size_t(dh), 0.0f);
        const int64_t n = a.n(b);
        for (int64_t j = 0; r < n && j < a.keys(r, n); ++j) // r as a query
          for (int64_t c = 0; c < dh; ++c)
            accQ[size_t(c)] += ds(b, h, r, j) * a.at(a.k, b, j, h)[c];
        for (int64_t i = s.causal ? r : 0; r < n && i < n; ++i) // r as a key
          for (int64_t c = 0; c < dh; ++c) {
            accK[size_t(c)] += ds(b, h, i, r) * a.at(a.q, b, i, h)[c];
            accV[size_t(c)] += a.weight(b, h, i, r) * a.at(dout, b, i, h)[c];
          }
        const int64_t at = (b * s.L + r) * s.D + h * dh;
        for (int64_t c = 0; c < dh; ++c) {
          dq[size_t(at + c)] = accQ[size_t(c)] * a.scale();
          dk[size_t(at + c)] = accK[size_t(c)] * a.scale();
          dv[size_t(at + c)] = accV[size_t(c)];
        }
      }
}

void expectBitIdentical(const FVec &actual, const FVec &expected, const char *what) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_EQ(std::memcmp(&actual[i], &expected[i], sizeof(float)), 0)
        << what << "[" << i << "]: " << actual[i] << " vs " << expected[i];
}

TEST(AttentionReference, BlockedKernelsEqualTheFormulaBitForBit) {
  // Head widths below and above the kernels' 8-column blocks (6, and 12 =
  // 8 + 4), up to 19 keys (two 8-key blocks and 3 more).
  for (bool causal : {false, true})
    for (int64_t heads : {1, 3})
      for (int64_t dh : {6, 12}) {
        SCOPED_TRACE(std::string(causal ? "causal" : "bidirectional") + ", heads " +
                     std::to_string(heads) + ", head width " + std::to_string(dh));
        AttentionShape s{5, 19, dh * heads, heads, causal};
        const std::vector<int64_t> offsets = {0, 19, 19, 20, 29, 45}; // lengths 19 0 1 9 16
        const size_t n = size_t(s.B * s.L * s.D);
        const FVec q = randomVector<float>(n, 1, -2, 2), k = randomVector<float>(n, 2, -2, 2),
                   v = randomVector<float>(n, 3), dout = randomVector<float>(n, 4);
        const Naive naive{s, q.data(), k.data(), v.data(), offsets.data()};
        FVec o(n), expected(n);
        attentionForward(q.data(), k.data(), v.data(), offsets.data(), s, o.data());
        forward(naive, expected);
        expectBitIdentical(o, expected, "o");
        FVec dq(n, 7.0f), dk(n, 7.0f), dv(n, 7.0f), eq(n), ek(n), ev(n);
        attentionBackward(dout.data(), q.data(), k.data(), v.data(), offsets.data(), s, dq.data(),
                          dk.data(), dv.data());
        backward(naive, dout.data(), eq, ek, ev);
        expectBitIdentical(dq, eq, "dq");
        expectBitIdentical(dk, ek, "dk");
        expectBitIdentical(dv, ev, "dv");
      }
}

TEST(AttentionReference, AShorterBatchLengthDropsWhatMaxLenDrops) {
  // Dynamic padding: sequences of at most 9 tokens run at L = 10 of a
  // max_len of 19; with the weights numbered by 19 (counterL), every value
  // at the first 10 positions is the max_len launch's, bit for bit.
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "bidirectional");
    const int64_t B = 4, L = 19, shorter = 10, D = 12, heads = 2;
    const std::vector<int64_t> offsets = {0, 9, 9, 10, 13}; // lengths 9 0 1 3
    const AttentionShape full{B, L, D, heads, causal}, cut{B, shorter, D, heads, causal};
    const size_t n = size_t(B * L * D), m = size_t(B * shorter * D);
    FVec q = randomVector<float>(n, 1, -2, 2), k = randomVector<float>(n, 2, -2, 2),
         v = randomVector<float>(n, 3), dout = randomVector<float>(n, 4);
    auto compact = [&](const FVec &x) {
      FVec c(m);
      for (int64_t b = 0; b < B; ++b)
        std::copy_n(x.begin() + b * L * D, shorter * D, c.begin() + b * shorter * D);
      return c;
    };
    const AttentionDropout dropFull{0.3, dropoutKey(5, 2, 7), 3};
    const AttentionDropout dropCut{0.3, dropoutKey(5, 2, 7), 3, /*counterL=*/L};
    FVec o(n), oc(m);
    attentionForward(q.data(), k.data(), v.data(), offsets.data(), full, o.data(), &dropFull);
    const FVec qc = compact(q), kc = compact(k), vc = compact(v), dc = compact(dout);
    attentionForward(qc.data(), kc.data(), vc.data(), offsets.data(), cut, oc.data(), &dropCut);
    expectBitIdentical(oc, compact(o), "o");
    FVec dq(n), dk(n), dv(n), dqc(m), dkc(m), dvc(m);
    attentionBackward(dout.data(), q.data(), k.data(), v.data(), offsets.data(), full, dq.data(),
                      dk.data(), dv.data(), &dropFull);
    attentionBackward(dc.data(), qc.data(), kc.data(), vc.data(), offsets.data(), cut, dqc.data(),
                      dkc.data(), dvc.data(), &dropCut);
    expectBitIdentical(dqc, compact(dq), "dq");
    expectBitIdentical(dkc, compact(dk), "dk");
    expectBitIdentical(dvc, compact(dv), "dv");
  }
}

} // namespace
} // namespace embc::runtime::cpu
