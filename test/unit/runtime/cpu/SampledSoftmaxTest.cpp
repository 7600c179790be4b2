//===- SampledSoftmaxTest.cpp - sampled_logits kernels ----------------------===//
//
// The sampler's distribution, the training logits against their formula,
// the evaluation logits against the full softmax, and the gradient against
// finite differences in float64, for both weight layouts.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/cpu/SampledSoftmaxKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace embc::runtime::cpu;
using namespace embc::runtime::cpu::testing;
using Vec = std::vector<double>;

namespace {

double logitOf(const Vec &x, const Vec &w, const Vec *bias, const SampledShape &s, int64_t r,
               int64_t v) {
  double z = bias ? (*bias)[size_t(v)] : 0.0;
  for (int64_t d = 0; d < s.D; ++d)
    z += x[size_t(r * s.D + d)] * (s.tied ? w[size_t(v * s.D + d)] : w[size_t(d * s.V + v)]);
  return z;
}

} // namespace

TEST(SampledSoftmax, CandidatesFollowTheLogUniformDistribution) {
  const int64_t V = 1000, S = 200000;
  std::vector<int64_t> ids(S);
  sampleCandidates(samplingKey(7, 0, 3), V, S, ids.data());
  std::vector<int64_t> count(V);
  for (int64_t id : ids) {
    ASSERT_GE(id, 0);
    ASSERT_LT(id, V);
    ++count[size_t(id)];
  }
  for (int64_t v : {0, 1, 9, 99}) {
    const double q = std::exp(sampling::logExpectedCount(v, V, S)) / double(S);
    EXPECT_NEAR(double(count[size_t(v)]) / double(S), q, 4 * std::sqrt(q / double(S))) << v;
  }
  // Another step or stream draws other candidates; the same ones draw the same.
  std::vector<int64_t> again(8), other(8), first(ids.begin(), ids.begin() + 8);
  sampleCandidates(samplingKey(7, 0, 3), V, 8, again.data());
  sampleCandidates(samplingKey(7, 0, 4), V, 8, other.data());
  EXPECT_EQ(again, first);
  EXPECT_NE(other, first);
}

TEST(SampledSoftmax, TrainingLogitsAreCorrectedAndExcludeHits) {
  SampledShape s{3, 4, 6, 5, false};
  const Vec x = randomVector(size_t(s.rows * s.D), 1), w = randomVector(size_t(s.D * s.V), 2),
            bias = randomVector(size_t(s.V), 3), target = {2, -1, 5};
  const std::vector<int64_t> cand = {2, 0, 5, 2, 4};
  Vec logits(size_t(s.rows * (s.S + 1))), classes(size_t(s.rows)),
      scratch(size_t(s.scratchSize()));
  sampledLogitsTrain(x.data(), w.data(), bias.data(), target.data(), cand.data(), s,
                     logits.data(), classes.data(), scratch.data());
  EXPECT_EQ(classes, (Vec{0, -1, 0}));
  for (int64_t r : {0, 2}) {
    const int64_t t = int64_t(target[size_t(r)]);
    const double *row = logits.data() + r * (s.S + 1);
    EXPECT_NEAR(row[0], logitOf(x, w, &bias, s, r, t) - sampling::logExpectedCount(t, s.V, s.S),
                1e-12);
    for (int64_t j = 0; j < s.S; ++j) {
      const int64_t c = cand[size_t(j)];
      if (c == t)
        EXPECT_EQ(row[1 + j], double(sampling::kExcluded));
      else
        EXPECT_NEAR(row[1 + j],
                    logitOf(x, w, &bias, s, r, c) - sampling::logExpectedCount(c, s.V, s.S),
                    1e-12);
    }
  }
  for (int64_t j = 0; j <= s.S; ++j) // no target: zeros
    EXPECT_EQ(logits[size_t(1 * (s.S + 1) + j)], 0.0);

  Vec bad = target;
  bad[1] = 6; // a class past V
  EXPECT_THROW(sampledLogitsTrain(x.data(), w.data(), bias.data(), bad.data(), cand.data(), s,
                                  logits.data(), classes.data(), scratch.data()),
               std::invalid_argument);
}

// Evaluation's logits under sequence_softmax_ce give the full softmax's
// cross-entropy, for both weight layouts.
TEST(SampledSoftmax, EvaluationIsTheFullSoftmax) {
  for (bool tied : {false, true}) {
    SampledShape s{4, 3, 7, 2, tied};
    const Vec x = randomVector(size_t(s.rows * s.D), 4, -2, 2),
              w = randomVector(size_t(s.D * s.V), 5, -2, 2), target = {6, 0, -1, 3};
    Vec logits(size_t(s.rows * (s.S + 1))), classes(size_t(s.rows)),
        scratch(size_t(s.scratchSize()));
    sampledLogitsEval(x.data(), w.data(), static_cast<const double *>(nullptr), target.data(), s,
                      logits.data(), classes.data(), scratch.data());
    const double sampled = sequenceLossForward(logits.data(), classes.data(), 1, s.rows, s.S + 1);
    Vec full(size_t(s.rows * s.V));
    for (int64_t r = 0; r < s.rows; ++r)
      for (int64_t v = 0; v < s.V; ++v)
        full[size_t(r * s.V + v)] = logitOf(x, w, nullptr, s, r, v);
    EXPECT_NEAR(sampled, sequenceLossForward(full.data(), target.data(), 1, s.rows, s.V), 1e-12)
        << "tied " << tied;
  }
}

TEST(SampledSoftmax, GradientMatchesFiniteDifferences) {
  for (bool tied : {false, true}) {
    SampledShape s{5, 4, 9, 6, tied};
    Vec x = randomVector(size_t(s.rows * s.D), 6), w = randomVector(size_t(s.D * s.V), 7),
        bias = randomVector(size_t(s.V), 8);
    const Vec target = {3, -1, 0, 8, 3};
    const std::vector<int64_t> cand = {1, 3, 1, 7, 0, 2};
    Vec r = randomVector(size_t(s.rows * (s.S + 1)), 9);
    for (int64_t row = 0; row < s.rows; ++row) // excluded columns get no gradient
      for (int64_t j = 0; j < s.S; ++j)
        if (cand[size_t(j)] == int64_t(target[size_t(row)]))
          r[size_t(row * (s.S + 1) + 1 + j)] = 0;
    Vec scratch(size_t(s.scratchSize()));
    auto objective = [&] {
      Vec logits(size_t(s.rows * (s.S + 1))), classes(size_t(s.rows));
      sampledLogitsTrain(x.data(), w.data(), bias.data(), target.data(), cand.data(), s,
                         logits.data(), classes.data(), scratch.data());
      double sum = 0; // the excluded (-inf) columns are constants: skipped
      for (size_t i = 0; i < logits.size(); ++i)
        if (std::isfinite(logits[i]))
          sum += r[i] * logits[i];
      return sum;
    };
    Vec dx(x.size()), dw(w.size()), db(bias.size());
    sampledLogitsGrad(r.data(), x.data(), w.data(), target.data(), cand.data(), s, dx.data(),
                      dw.data(), db.data(), scratch.data());
    const std::string what = tied ? "tied " : "dense ";
    expectGradientMatches(what + "dx", x, dx, objective);
    expectGradientMatches(what + "dweight", w, dw, objective);
    expectGradientMatches(what + "dbias", bias, db, objective);
  }
}
