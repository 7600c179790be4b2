//===- GemmTest.cpp - the CPU kernels' GEMMs and small GEMMs --------------===//
//
// Gemm.h against a double-precision reference, for the shapes the models
// use (thin layers, a GEMV, a row count that leaves a tail block, K = 0),
// every transpose and beta; results must not depend on the team size. The
// per-row interaction GEMMs are checked through InteractionRows against the
// dot-product loops they replace.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"

#include "Gemm.h"
#include "InteractionRows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace embc::runtime::cpu::detail {
namespace {

struct Shape {
  int64_t M, N, K;
};

template <class T> std::vector<T> randomValues(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(static_cast<size_t>(n));
  for (T &x : v)
    x = T(u(rng));
  return v;
}

/// C = op(A) op(B) + beta C in double, row-major.
template <class T>
std::vector<double> reference(bool transA, bool transB, const Shape &s, const std::vector<T> &A,
                              const std::vector<T> &B, T beta, const std::vector<T> &C) {
  std::vector<double> out(size_t(s.M * s.N));
  for (int64_t i = 0; i < s.M; ++i)
    for (int64_t j = 0; j < s.N; ++j) {
      double sum = double(beta) * double(C[size_t(i * s.N + j)]);
      for (int64_t k = 0; k < s.K; ++k) {
        const double a = transA ? A[size_t(k * s.M + i)] : A[size_t(i * s.K + k)];
        const double b = transB ? B[size_t(j * s.K + k)] : B[size_t(k * s.N + j)];
        sum += a * b;
      }
      out[size_t(i * s.N + j)] = sum;
    }
  return out;
}

template <class T> void checkShape(const Shape &s, bool transA, bool transB, T beta) {
  const auto A = randomValues<T>(s.M * s.K, 1), B = randomValues<T>(s.K * s.N, 2);
  const auto C0 = randomValues<T>(s.M * s.N, 3);
  const auto want = reference(transA, transB, s, A, B, beta, C0);
  std::vector<T> got = C0;
  gemm<T>(transA, transB, s.M, s.N, s.K, T(1), A.data(), B.data(), beta, got.data());
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(double(got[i]), want[i], tol * (1.0 + double(s.K)))
        << "M " << s.M << " N " << s.N << " K " << s.K << " transA " << transA << " transB "
        << transB << " beta " << double(beta) << " at " << i;
}

const Shape kShapes[] = {
    {2048, 64, 13},  // DLRM bottom layer: K below a vector
    {1000, 16, 64},  // a tail block (1000 = 15 x 64 + 40)
    {300, 1, 32},    // a GEMV (N < 4 goes to the BLAS)
    {64, 429, 429},  // DCN's cross layer, one block
    {7, 5, 3},       // less than a block
    {130, 24, 0},    // K = 0: only beta C remains
};

TEST(Gemm, MatchesTheReferenceForEveryTransposeAndBeta) {
  for (const Shape &s : kShapes)
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (float beta : {0.0f, 1.0f}) {
          checkShape<float>(s, transA, transB, beta);
          checkShape<double>(s, transA, transB, double(beta));
        }
}

TEST(Gemm, AnAlphaOrBetaLibxsmmCannotTakeStillWorks) {
  const Shape s{100, 32, 20};
  const auto A = randomValues<float>(s.M * s.K, 4), B = randomValues<float>(s.K * s.N, 5);
  const auto C0 = randomValues<float>(s.M * s.N, 6);
  std::vector<float> got = C0;
  gemm<float>(false, false, s.M, s.N, s.K, 2.0f, A.data(), B.data(), 0.5f, got.data());
  const auto product = reference(false, false, s, A, B, 0.0f, C0);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], product[i] * 2.0 + 0.5 * C0[i], 1e-4) << i;
}

TEST(Gemm, ResultDoesNotDependOnTheTeamSize) {
  const int saved = teamSize();
  const Shape s{2048, 64, 367};
  const auto A = randomValues<float>(s.M * s.K, 7), B = randomValues<float>(s.K * s.N, 8);
  const auto dY = randomValues<float>(s.M * s.N, 9);
  std::vector<std::vector<float>> forward, weightGrad;
  for (int threads : {1, 3}) {
    setTeamSize(threads);
    std::vector<float> y(size_t(s.M * s.N)), dw(size_t(s.K * s.N));
    gemm<float>(false, false, s.M, s.N, s.K, 1.0f, A.data(), B.data(), 0.0f, y.data());
    gemm<float>(true, false, s.K, s.N, s.M, 1.0f, A.data(), dY.data(), 0.0f, dw.data());
    forward.push_back(y);
    weightGrad.push_back(dw);
  }
  setTeamSize(saved);
  EXPECT_EQ(0, std::memcmp(forward[0].data(), forward[1].data(), forward[0].size() * 4));
  EXPECT_EQ(0, std::memcmp(weightGrad[0].data(), weightGrad[1].data(), weightGrad[0].size() * 4));
}

TEST(Gemm, EpilogueSeesEachBlockOnceRightAfterItIsComputed) {
  const Shape s{1000, 8, 16};
  const auto A = randomValues<float>(s.M * s.K, 10), B = randomValues<float>(s.K * s.N, 11);
  std::vector<float> y(size_t(s.M * s.N), 0.0f);
  std::vector<int> seen(size_t(s.M), 0);
  gemmRowBlocks<float>(false, false, s.M, s.N, s.K, 1.0f, A.data(), B.data(), 0.0f, y.data(),
                       true, [&](int64_t r0, int64_t r1) {
                         for (int64_t r = r0; r < r1; ++r) {
                           seen[size_t(r)]++;
                           for (int64_t j = 0; j < s.N; ++j)
                             y[size_t(r * s.N + j)] = std::max(0.0f, y[size_t(r * s.N + j)]);
                         }
                       });
  const auto want = reference(false, false, s, A, B, 0.0f, y);
  for (int64_t r = 0; r < s.M; ++r) {
    ASSERT_EQ(seen[size_t(r)], 1) << "row " << r;
    for (int64_t j = 0; j < s.N; ++j)
      ASSERT_NEAR(y[size_t(r * s.N + j)], std::max(0.0, want[size_t(r * s.N + j)]), 1e-4);
  }
}

template <class T> void checkInteractionRows(int64_t F, int64_t D, bool self) {
  const int64_t B = 3;
  std::vector<std::vector<T>> inputs;
  std::vector<const T *> xs;
  for (int64_t f = 0; f < F; ++f)
    inputs.push_back(randomValues<T>(B * D, uint32_t(20 + f)));
  for (const auto &x : inputs)
    xs.push_back(x.data());
  const InteractionRows<T> rows(F, D, self);
  const int64_t P = rows.pairs();
  const auto g = randomValues<T>(B * P, 99);
  std::vector<std::vector<T>> grads(size_t(F), std::vector<T>(size_t(B * D)));
  std::vector<T *> dxs;
  for (auto &d : grads)
    dxs.push_back(d.data());
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<T> out(static_cast<size_t>(P));
    rows.forward(xs, b, out.data());
    int64_t p = 0;
    for (int64_t i = 0; i < F; ++i)
      for (int64_t j = self ? i : i + 1; j < F; ++j, ++p) {
        double want = 0;
        for (int64_t d = 0; d < D; ++d)
          want += double(xs[i][b * D + d]) * double(xs[j][b * D + d]);
        ASSERT_NEAR(double(out[size_t(p)]), want, tol * double(D)) << "pair " << i << "," << j;
      }
    rows.backward(g.data() + b * P, xs, dxs, b);
    for (int64_t i = 0; i < F; ++i)
      for (int64_t d = 0; d < D; ++d) {
        double want = 0;
        int64_t q = 0;
        for (int64_t u = 0; u < F; ++u)
          for (int64_t v = self ? u : u + 1; v < F; ++v, ++q) {
            const double gq = double(g[size_t(b * P + q)]);
            if (u == i)
              want += gq * double(xs[v][b * D + d]);
            if (v == i)
              want += gq * double(xs[u][b * D + d]);
          }
        ASSERT_NEAR(double(dxs[i][b * D + d]), want, tol * double(F)) << "dx " << i << "," << d;
      }
  }
}

TEST(InteractionRows, GramAndItsGradientMatchTheDotProducts) {
  checkInteractionRows<float>(27, 16, false); // dlrm_small
  checkInteractionRows<float>(5, 7, true);    // self-interaction, D below a vector
  checkInteractionRows<double>(4, 3, false);
  checkInteractionRows<double>(3, 33, true);
}

} // namespace
} // namespace embc::runtime::cpu::detail
