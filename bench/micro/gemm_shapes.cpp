//===- gemm_shapes.cpp - the CPU GEMM libraries at the models' shapes -----===//
//
// Single-threaded GFLOP/s of OpenBLAS, libxsmm (64-row blocks, as
// runtime/lib/cpu/Gemm.cpp runs them) and, when its header is installed,
// oneDNN's matmul, at the dense layers of the example models: forward
// (y = x W), input gradient (dx = dy W^T) and weight gradient (dW = x^T dy).
// The numbers behind the choice in docs/architecture.md ("Small GEMMs").
// Build and run: bash bench/gemm_shapes.sh
//
//===----------------------------------------------------------------------===//

#include <cblas.h>
#include <libxsmm.h>
#if __has_include(<dnnl.hpp>)
#include <dnnl.hpp>
#include <omp.h> // Debian's oneDNN runs on OpenMP: held to one thread below
#define HAVE_DNNL 1
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

extern "C" void openblas_set_num_threads(int);

namespace {

/// Best seconds per call over 5 repeats of >= 50 ms each.
template <class F> double secondsPerCall(F f) {
  for (int i = 0; i < 3; ++i)
    f();
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    int calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double elapsed;
    do {
      f();
      ++calls;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < 0.05);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

struct Shape {
  const char *name;
  int M, K, N;
};

constexpr int kBlock = 64;

/// libxsmm over 64-row blocks: column-major C^T = B^T A^T (Gemm.cpp).
libxsmm_smmfunction kernel(int m, int n, int k, int lda, int ldb, int ldc, bool transB) {
  const float one = 1, zero = 0;
  const libxsmm_blasint mm = m, nn = n, kk = k, a = lda, b = ldb, c = ldc;
  const int flags = transB ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
  return libxsmm_smmdispatch(mm, nn, kk, &a, &b, &c, &one, &zero, &flags, nullptr);
}

} // namespace

int main() {
  openblas_set_num_threads(1);
#ifdef HAVE_DNNL
  omp_set_num_threads(1);
#endif
  libxsmm_init();
  const Shape shapes[] = {
      {"dlrm bottom 1", 2048, 13, 64}, {"dlrm bottom 2", 2048, 64, 16},
      {"dlrm top 1", 2048, 367, 64},   {"dlrm top 2", 2048, 64, 32},
      {"dlrm top 3", 2048, 32, 1},     {"dcn cross", 1024, 429, 429},
      {"dcn deep 1", 1024, 429, 256},  {"dcn deep 2", 1024, 256, 128},
      {"wide&deep 1", 1024, 141, 128}, {"wide&deep 2", 1024, 128, 64},
      {"two-tower", 512, 64, 64},
  };
  std::printf("single thread, GFLOP/s; libxsmm in %d-row blocks\n", kBlock);
  std::printf("%-14s %5s %4s %4s | %8s %8s %8s | %9s %9s | %9s %9s\n", "layer", "M", "K", "N",
              "fwd blas", "libxsmm", "oneDNN", "dx blas", "libxsmm", "dW blas", "libxsmm");
#ifdef HAVE_DNNL
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
#endif
  for (const Shape &s : shapes) {
    const int M = s.M, K = s.K, N = s.N;
    std::vector<float> x(size_t(M) * K), w(size_t(K) * N), y(size_t(M) * N), dy(size_t(M) * N),
        dx(size_t(M) * K), dw(size_t(K) * N), wt(size_t(K) * N);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = std::sin(0.1f * float(i));
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = std::cos(0.3f * float(i));
    for (size_t i = 0; i < dy.size(); ++i)
      dy[i] = std::sin(0.7f * float(i));
    const double flops = 2.0 * M * K * N;
    auto rate = [&](double seconds) { return seconds > 0 ? flops / seconds * 1e-9 : -1.0; };
    const int tail = M % kBlock ? M % kBlock : kBlock;

    // Forward.
    const double fwdBlas = secondsPerCall([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, x.data(), K, w.data(),
                  N, 0, y.data(), N);
    });
    auto f = kernel(N, kBlock, K, N, K, N, false), ft = kernel(N, tail, K, N, K, N, false);
    const double fwdXsmm = (f && ft) ? secondsPerCall([&] {
      for (int r = 0; r < M; r += kBlock)
        (M - r >= kBlock ? f : ft)(w.data(), x.data() + size_t(r) * K, y.data() + size_t(r) * N);
    })
                                     : -1;
    double fwdDnnl = -1;
#ifdef HAVE_DNNL
    {
      using tag = dnnl::memory::format_tag;
      using dt = dnnl::memory::data_type;
      dnnl::memory::desc xd({M, K}, dt::f32, tag::ab), wd({K, N}, dt::f32, tag::ab),
          yd({M, N}, dt::f32, tag::ab);
      dnnl::matmul mm(dnnl::matmul::primitive_desc(dnnl::matmul::desc(xd, wd, yd), engine));
      dnnl::memory xm(xd, engine, x.data()), wm(wd, engine, w.data()), ym(yd, engine, y.data());
      fwdDnnl = secondsPerCall([&] {
        mm.execute(stream, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}});
        stream.wait();
      });
    }
#endif
    // Input gradient: libxsmm on a transposed copy of W, as Gemm.cpp does.
    const double dxBlas = secondsPerCall([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, K, N, 1, dy.data(), N, w.data(), N,
                  0, dx.data(), K);
    });
    auto g = kernel(K, kBlock, N, K, N, K, false), gt = kernel(K, tail, N, K, N, K, false);
    const double dxXsmm = (g && gt) ? secondsPerCall([&] {
      for (int k = 0; k < K; ++k)
        for (int n = 0; n < N; ++n)
          wt[size_t(n) * K + k] = w[size_t(k) * N + n];
      for (int r = 0; r < M; r += kBlock)
        (M - r >= kBlock ? g : gt)(wt.data(), dy.data() + size_t(r) * N, dx.data() + size_t(r) * K);
    })
                                    : -1;
    // Weight gradient: libxsmm's transposed-B kernels over blocks of dW's rows.
    const double dwBlas = secondsPerCall([&] {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, N, M, 1, x.data(), K, dy.data(), N,
                  0, dw.data(), N);
    });
    const int wtail = K % kBlock ? K % kBlock : kBlock;
    auto h = kernel(N, std::min(kBlock, K), M, N, K, N, true), ht = kernel(N, wtail, M, N, K, N, true);
    const double dwXsmm = (h && ht) ? secondsPerCall([&] {
      for (int r = 0; r < K; r += kBlock)
        (K - r >= kBlock ? h : ht)(dy.data(), x.data() + r, dw.data() + size_t(r) * N);
    })
                                    : -1;
    std::printf("%-14s %5d %4d %4d | %8.1f %8.1f %8.1f | %9.1f %9.1f | %9.1f %9.1f\n", s.name, M, K,
                N, rate(fwdBlas), rate(fwdXsmm), rate(fwdDnnl), rate(dxBlas), rate(dxXsmm),
                rate(dwBlas), rate(dwXsmm));
  }
  const int L = 2048;
  std::vector<float> a(size_t(L) * L, 1), b(size_t(L) * L, 1), c(size_t(L) * L);
  const double large = secondsPerCall([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, L, L, L, 1, a.data(), L, b.data(), L,
                0, c.data(), L);
  });
  std::printf("OpenBLAS sgemm 2048^3, 1 thread: %.1f GFLOP/s (oneDNN: %s)\n",
              2.0 * L * L * L / large * 1e-9,
#ifdef HAVE_DNNL
              "measured");
#else
              "not installed, column shows -1");
#endif
  return 0;
}
