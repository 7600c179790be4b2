//===- residual_norm.cpp - add_layer_norm against its unfused kernels ------===//
//
// bench/residual_norm.sh builds it. One encoder sublayer's residual + dropout
// + layer norm on 2048 rows of 128 (bert_mini_mlm's batch of 32 x 64
// tokens, d_model 128), forward and backward: the fused CPU kernels of
// -emb-fuse (runtime/include/embc/runtime/cpu/NormKernels.h) against the
// unfused dropout, add and layer_norm (and their gradients) run one after
// the other, on the calling thread, medians of 7 runs of 50 calls. The
// results are compared first: they must be equal to the bit.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/NormKernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace embc::runtime::cpu;

namespace {

template <class F> double medianMs(F &&f) {
  f(); // warm-up: pages and caches
  std::vector<double> runs;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 50; ++i)
      f();
    const auto t1 = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / 50);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

} // namespace

int main() {
  const int64_t rows = 2048, D = 128, n = rows * D;
  std::vector<float> x(n), p(n), other(n), dy(n), gamma(D, 1.0f), beta(D, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = float(i % 17) * 0.1f - 0.8f;
    p[i] = float(i % 13) * 0.2f - 1.2f;
    other[i] = float(i % 7) * 0.05f;
    dy[i] = float(i % 11) * 0.03f - 0.15f;
  }
  const DropoutDraw draw{dropoutKey(1, 2, 3), 0, 0.1};
  std::vector<float> d(n), h(n), y(n), fh(n), fy(n), dx(n), dh(n), dp(n), fdh(n), fdp(n), dg(D),
      db(D), fdg(D), fdb(D);

  auto unfusedForward = [&] {
    dropoutApply(p.data(), d.data(), n, draw.key, draw.first, draw.rate);
    for (int64_t i = 0; i < n; ++i)
      h[i] = x[i] + d[i];
    layerNormForward(h.data(), gamma.data(), beta.data(), y.data(), rows, D, 1e-5);
  };
  auto fusedForward = [&] {
    addLayerNormForward(x.data(), p.data(), gamma.data(), beta.data(), fh.data(), fy.data(), rows,
                        D, 1e-5, std::optional<DropoutDraw>(draw));
  };
  auto unfusedBackward = [&] {
    layerNormBackward(dy.data(), h.data(), gamma.data(), dx.data(), dg.data(), db.data(), rows, D,
                      1e-5);
    for (int64_t i = 0; i < n; ++i)
      dh[i] = other[i] + dx[i];
    dropoutApply(dh.data(), dp.data(), n, draw.key, draw.first, draw.rate);
  };
  auto fusedBackward = [&] {
    addLayerNormBackward(dy.data(), h.data(), gamma.data(), other.data(), fdh.data(), fdg.data(),
                         fdb.data(), fdp.data(), rows, D, 1e-5, std::optional<DropoutDraw>(draw));
  };
  unfusedForward();
  fusedForward();
  unfusedBackward();
  fusedBackward();
  if (fh != h || fy != y || fdh != dh || fdp != dp || fdg != dg || fdb != db) {
    std::printf("MISMATCH: the fused kernels differ from the unfused ones\n");
    return 1;
  }
  const double uf = medianMs(unfusedForward), ff = medianMs(fusedForward),
               ub = medianMs(unfusedBackward), fb = medianMs(fusedBackward);
  std::printf("residual + dropout + layer norm, %lld x %lld, one thread (results equal)\n",
              (long long)rows, (long long)D);
  std::printf("  forward   unfused %.3f ms  fused %.3f ms  unfused / fused %.2fx\n", uf, ff, uf / ff);
  std::printf("  backward  unfused %.3f ms  fused %.3f ms  unfused / fused %.2fx\n", ub, fb, ub / fb);
  return 0;
}
