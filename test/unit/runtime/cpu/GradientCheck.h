//===- GradientCheck.h - finite-difference helper for kernel tests -*- C++ -*-===//
//
// The CPU kernels' backward functions are checked against central finite
// differences of a scalar objective, in double. A test writes the forward as
// a lambda that returns L = sum(r * output) for a fixed random r, computes the
// analytic gradient with the kernel's grad function (dy = r), and hands both
// to expectGradientMatches, which perturbs every parameter entry in place.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_TEST_UNIT_RUNTIME_CPU_GRADIENTCHECK_H
#define EMBC_TEST_UNIT_RUNTIME_CPU_GRADIENTCHECK_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace embc::runtime::cpu::testing {

/// n values uniform in [lo, hi), reproducible from the seed.
template <class T = double>
std::vector<T> randomVector(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (auto &x : v)
    x = T(dist(gen));
  return v;
}

/// n values with |x| in [minAbs, maxAbs) and a random sign: keeps inputs away
/// from a kink at 0 (relu) so central differences are smooth.
inline std::vector<double> randomAwayFromZero(size_t n, uint32_t seed, double minAbs,
                                              double maxAbs) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> mag(minAbs, maxAbs);
  std::bernoulli_distribution negative(0.5);
  std::vector<double> v(n);
  for (auto &x : v)
    x = negative(gen) ? -mag(gen) : mag(gen);
  return v;
}

/// sum_i r_i y_i: the scalar objective whose gradient w.r.t. y is r.
inline double weightedSum(const std::vector<double> &r, const std::vector<double> &y) {
  EXPECT_EQ(r.size(), y.size());
  double sum = 0;
  for (size_t i = 0; i < std::min(r.size(), y.size()); ++i)
    sum += r[i] * y[i];
  return sum;
}

/// Central differences of `objective` w.r.t. every entry of `theta`
/// (h = 1e-6), compared with `analytic`: each entry must agree to a relative
/// error below 1e-6 or an absolute error below 1e-8. `theta` is restored.
inline void expectGradientMatches(const std::string &what, std::vector<double> &theta,
                                  const std::vector<double> &analytic,
                                  const std::function<double()> &objective) {
  ASSERT_EQ(theta.size(), analytic.size()) << what << ": gradient has the wrong size";
  constexpr double h = 1e-6;
  int failures = 0;
  for (size_t i = 0; i < theta.size(); ++i) {
    const double saved = theta[i];
    theta[i] = saved + h;
    const double plus = objective();
    theta[i] = saved - h;
    const double minus = objective();
    theta[i] = saved;
    const double numeric = (plus - minus) / (2 * h);
    const double err = std::abs(numeric - analytic[i]);
    const double scale = std::max(std::abs(numeric), std::abs(analytic[i]));
    const bool ok = err < 1e-8 || err < 1e-6 * scale;
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << what << "[" << i << "]: analytic " << analytic[i] << " vs numeric "
                    << numeric << " (abs err " << err << ")";
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << theta.size()
                         << " entries disagree";
}

} // namespace embc::runtime::cpu::testing

#endif // EMBC_TEST_UNIT_RUNTIME_CPU_GRADIENTCHECK_H
