//===- SampledSoftmaxKernels.h - sampled softmax's logits -------*- C++ -*-===//
//
// The CPU kernels of `sampled_logits` and `sampled_logits_grad`
// (emb.sampled_logits): the output projection of a token loss computed on
// S sampled classes instead of the whole vocabulary V (Jean et al. 2015;
// TensorFlow's sampled_softmax_loss). Each row r of x (D wide) with target
// class t gets 1 + S logits, which a sequence_softmax_ce loss reads against
// class 0:
//
//   column 0:     z_t   - log(S Q(t))
//   column 1 + j: z_c_j - log(S Q(c_j)),  or -inf when c_j == t
//
// with z_v = x_r . w_v (+ bias_v), the S candidates c_j drawn with
// replacement from the log-uniform (Zipf) distribution
// Q(v) = log((v + 2) / (v + 1)) / log(V + 1), which suits ids numbered by
// falling frequency, as the text reader's vocabulary is. log(S Q) is the
// candidate's expected count: subtracting it makes the sampled softmax an
// unbiased estimate of the full one's gradient as S grows. A candidate
// equal to the row's target is excluded (an "accidental hit").
//
// The candidates are a counter-based draw of the run's seed, the op's
// stream and the training step (like dropout's masks): every micro-batch,
// data-parallel rank, recomputed forward and resumed run of one step draws
// the same S, and the generated CUDA (passes/lib/cuda/SampledSoftmaxLowering.cpp)
// draws them too.
//
// In evaluation nothing is sampled: column 0 is z_t, column 1 the
// log-sum-exp of every other class's z_v and the rest -inf, so the
// loss and the perplexity of an evaluation are the full softmax's, exactly.
// A row whose target is -1 (no target) gets zeros and class -1.
//
// The weight is D x V (a dense layer's, `tied` false) or V x D (a table's
// rows: tied embeddings).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_SAMPLEDSOFTMAXKERNELS_H
#define EMBC_RUNTIME_CPU_SAMPLEDSOFTMAXKERNELS_H

#include "embc/runtime/data/CounterRandom.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace embc::runtime::cpu {

namespace sampling {
/// Folded into every sampling key (dropout and masking have their own).
inline constexpr uint64_t kTag = 0x5341'4D50'4C45'0003ull;
/// The logit of an excluded column: -infinity, whose exp is exactly 0 (a
/// row's column 0 is always finite, so its maximum is).
inline constexpr float kExcluded = -std::numeric_limits<float>::infinity();

/// Candidate j of the draw `key`: a log-uniform id below V, by inverting
/// the distribution's CDF log(v + 1) / log(V + 1).
inline int64_t logUniformId(uint64_t key, int64_t j, int64_t V) {
  const double u = data::uniform01(data::hashMore(key, uint64_t(j)));
  const int64_t id = int64_t(std::exp(u * std::log(double(V) + 1.0))) - 1;
  return std::clamp<int64_t>(id, 0, V - 1);
}

/// log(S Q(v)): the log of class v's expected count among S draws.
inline double logExpectedCount(int64_t v, int64_t V, int64_t S) {
  return std::log(double(S)) +
         std::log(std::log1p(1.0 / double(v + 1)) / std::log(double(V) + 1.0));
}
} // namespace sampling

/// The draw of sampled_logits stream `stream` at training step `step`.
constexpr uint64_t samplingKey(uint64_t seed, int64_t stream, uint64_t step) {
  return data::hashOf(seed, sampling::kTag, uint64_t(stream), step);
}

/// S candidates of the draw `key`, below V, into ids.
inline void sampleCandidates(uint64_t key, int64_t V, int64_t S, int64_t *ids) {
  for (int64_t j = 0; j < S; ++j)
    ids[j] = sampling::logUniformId(key, j, V);
}

struct SampledShape {
  int64_t rows = 0; ///< N: x's rows (B, or B x L positions)
  int64_t D = 0;    ///< x's width
  int64_t V = 0;    ///< classes (the weight's other dimension)
  int64_t S = 0;    ///< candidates
  bool tied = false; ///< the weight is V x D (a table's rows), not D x V

  /// Entries of T the kernels' `scratch` must hold.
  int64_t scratchSize() const;
};

/// Training: logits (rows x (1 + S)) and classes (rows: 0, or -1 where the
/// target is -1) from x, the weight, bias (V entries, or null) and the
/// candidates. Throws std::invalid_argument for a target that is neither
/// -1 nor a class index below V.
template <class T>
void sampledLogitsTrain(const T *x, const T *weight, const T *bias, const T *target,
                        const int64_t *candidates, const SampledShape &s, T *logits, T *classes,
                        T *scratch);

/// Evaluation: the full softmax's logits in the sampled layout (above).
template <class T>
void sampledLogitsEval(const T *x, const T *weight, const T *bias, const T *target,
                       const SampledShape &s, T *logits, T *classes, T *scratch);

/// The gradient of sampledLogitsTrain from dlogits (rows x (1 + S)): dx,
/// dweight (the weight's layout, zero but at the candidates and targets)
/// and dbias (null without a bias).
template <class T>
void sampledLogitsGrad(const T *dlogits, const T *x, const T *weight, const T *target,
                       const int64_t *candidates, const SampledShape &s, T *dx, T *dweight,
                       T *dbias, T *scratch);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_SAMPLEDSOFTMAXKERNELS_H
