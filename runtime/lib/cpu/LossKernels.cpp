//===- LossKernels.cpp - training losses and their input gradients --------===//
//
// bce_with_logits, mse, softmax_ce and neg_sampling, each the mean over the
// batch. Written in numerically stable forms: softplus(x) =
// max(x, 0) + log1p(exp(-|x|)) for the logistic losses and log-sum-exp with
// the row maximum subtracted for softmax, so large logits neither overflow
// nor lose the loss to cancellation. The batch sum goes through the fixed
// chunked reduction, so the loss is the same whatever the thread count.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"

#include "KernelSupport.h"

#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <vector>

#ifdef EMBC_HAVE_LIBMVEC
#include <immintrin.h>
// glibc's libmvec: expf of four floats (the SSE variant, x86-64's baseline).
extern "C" __m128 _ZGVbN4v_expf(__m128);
#endif

namespace embc::runtime::cpu {

using detail::kParallelWork;

namespace {

/// log(1 + exp(x)) without overflow.
inline double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }

/// 1 / (1 + exp(-x)) without overflow in exp for large |x|.
template <class T> inline T stableSigmoid(T x) {
  if (x >= T(0))
    return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

/// The class index of a softmax_ce target, checked against the class count.
template <class T> int64_t classIndex(const T *target, int64_t b, int64_t C, const char *where) {
  const T raw = target[b];
  const int64_t c = static_cast<int64_t>(raw);
  if (!(raw >= T(0)) || static_cast<T>(c) != raw || c >= C)
    throw std::invalid_argument(std::string(where) + ": softmax_ce target of row " +
                                std::to_string(b) + " is " + std::to_string(double(raw)) +
                                ", not a class index in [0, " + std::to_string(C) + ")");
  return c;
}

template <class T> void checkClasses(const T *target, int64_t B, int64_t C, const char *where) {
  for (int64_t b = 0; b < B; ++b)
    classIndex(target, b, C, where);
}

/// The plan's spelling of `kind` (Enums.h), for messages; rejects a value
/// outside the enum.
std::string lossName(LossKind kind) {
  if (static_cast<size_t>(kind) >= enumCount<LossKind>())
    throw std::invalid_argument("unknown loss kind " + std::to_string(static_cast<int>(kind)));
  return enumString(kind);
}

/// The loss of one batch row.
template <class T>
double rowLoss(LossKind kind, const T *input, const T *target, int64_t b, int64_t C) {
  switch (kind) {
  case LossKind::BceWithLogits: {
    // Per column: softplus(x) - x y  (= -y log s(x) - (1-y) log(1 - s(x))).
    double sum = 0;
    for (int64_t j = 0; j < C; ++j) {
      const double x = input[b * C + j], y = target[b * C + j];
      sum += softplus(x) - x * y;
    }
    return sum;
  }
  case LossKind::Mse: {
    double sum = 0;
    for (int64_t j = 0; j < C; ++j) {
      const double d = double(input[b * C + j]) - double(target[b * C + j]);
      sum += d * d;
    }
    return sum;
  }
  case LossKind::SoftmaxCe: {
    const T *row = input + b * C;
    double mx = row[0];
    for (int64_t j = 1; j < C; ++j)
      mx = std::max(mx, double(row[j]));
    double sumExp = 0;
    for (int64_t j = 0; j < C; ++j)
      sumExp += std::exp(double(row[j]) - mx);
    const int64_t c = static_cast<int64_t>(target[b]);
    return mx + std::log(sumExp) - double(row[c]);
  }
  case LossKind::NegSampling: {
    // -log s(pos) - sum_k log s(-neg_k) = softplus(-pos) + sum_k softplus(neg_k).
    double sum = softplus(-double(input[b]));
    for (int64_t k = 0; k < C; ++k)
      sum += softplus(double(target[b * C + k]));
    return sum;
  }
  case LossKind::SequenceSoftmaxCe:
    break; // sequenceLossForward
  }
  return 0;
}

} // namespace

// For bce and mse a row's loss is the sum over its C columns (C is 1 in the
// plans the compiler writes), and the batch mean divides by B only.
template <class T>
T lossForward(LossKind kind, const T *input, const T *target, int64_t B, int64_t C) {
  if (B <= 0)
    throw std::invalid_argument(std::string("lossForward(") + lossName(kind) +
                                "): empty batch, the mean is undefined");
  if (C <= 0 && kind != LossKind::NegSampling)
    throw std::invalid_argument(std::string("lossForward(") + lossName(kind) + "): input width " +
                                std::to_string(C) + " must be positive");
  lossName(kind); // rejects an out-of-range kind before the parallel region
  if (kind == LossKind::SequenceSoftmaxCe)
    throw std::invalid_argument("lossForward: sequence_softmax_ce is sequenceLossForward");
  if (kind == LossKind::SoftmaxCe)
    checkClasses(target, B, C, "lossForward");
  const double total = detail::chunkedSum(B, std::max<int64_t>(C, 1) * 16, [&](int64_t lo, int64_t hi) {
    double sum = 0;
    for (int64_t b = lo; b < hi; ++b)
      sum += rowLoss(kind, input, target, b, C);
    return sum;
  });
  return static_cast<T>(total / double(B));
}

template <class T>
void lossGrad(LossKind kind, const T *input, const T *target, T *dinput, T *dtarget, int64_t B,
              int64_t C) {
  if (B <= 0)
    throw std::invalid_argument(std::string("lossGrad(") + lossName(kind) +
                                "): empty batch, the mean is undefined");
  if (kind == LossKind::SoftmaxCe)
    checkClasses(target, B, C, "lossGrad");
  if (kind == LossKind::SequenceSoftmaxCe)
    throw std::invalid_argument("lossGrad: sequence_softmax_ce is sequenceLossGrad");
  if (kind == LossKind::NegSampling && !dtarget && C > 0)
    throw std::invalid_argument("lossGrad(neg_sampling): the negative-score gradient is null");
  const T invB = T(1) / T(B);
  const int64_t work = B * std::max<int64_t>(C, 1) * 16;
  switch (kind) {
  case LossKind::BceWithLogits:
    parallelFor(B * C, work > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
      for (int64_t i = iBegin; i < iEnd; ++i)
        dinput[i] = (stableSigmoid(input[i]) - target[i]) * invB;
    });
    return;
  case LossKind::Mse:
    parallelFor(B * C, work > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
      for (int64_t i = iBegin; i < iEnd; ++i)
        dinput[i] = T(2) * (input[i] - target[i]) * invB;
    });
    return;
  case LossKind::SoftmaxCe:
    parallelFor(B, work > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
      for (int64_t b = bBegin; b < bEnd; ++b) {
        const T *row = input + b * C;
        T *out = dinput + b * C;
        T mx = row[0];
        for (int64_t j = 1; j < C; ++j)
          mx = std::max(mx, row[j]);
        T sumExp = T(0);
        for (int64_t j = 0; j < C; ++j) {
          out[j] = std::exp(row[j] - mx);
          sumExp += out[j];
        }
        const T scale = invB / sumExp;
        for (int64_t j = 0; j < C; ++j)
          out[j] *= scale;
        out[static_cast<int64_t>(target[b])] -= invB;
      }
    });
    return;
  case LossKind::NegSampling:
    // d/dpos softplus(-pos) = -s(-pos) (= s(pos) - 1 without the cancellation);
    // d/dneg softplus(neg) = s(neg).
    parallelFor(B, work > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
      for (int64_t b = bBegin; b < bEnd; ++b) {
        dinput[b] = -stableSigmoid(-input[b]) * invB;
        for (int64_t k = 0; k < C; ++k)
          dtarget[b * C + k] = stableSigmoid(target[b * C + k]) * invB;
      }
    });
    return;
  case LossKind::SequenceSoftmaxCe:
    break; // sequenceLossGrad
  }
  throw std::invalid_argument("lossGrad: unknown loss kind " +
                              std::to_string(static_cast<int>(kind)));
}

// --- sequence_softmax_ce ------------------------------------------------------
//
// One row of C logits per position. A row's exponentials are T (float in
// training: the dominant cost at a large vocabulary, four at a time through
// glibc's libmvec where the build found it, 0.9 against 3.1 ns each for the
// scalar expf, within 2e-7 of it) and summed in double in order; the
// cross-entropy (max - x_c) + log(sum) is double.

namespace {

/// The target classes of a sequence loss, checked: -1 or an index below C.
/// Returns each sequence's count of targets.
template <class T>
std::vector<int64_t> sequenceTargets(const T *target, int64_t B, int64_t L, int64_t C,
                                     const char *where) {
  if (B <= 0 || L <= 0 || C < 2)
    throw std::invalid_argument(std::string(where) + ": sequence_softmax_ce needs B, L >= 1 and " +
                                "C >= 2, got " + std::to_string(B) + " x " + std::to_string(L) +
                                " x " + std::to_string(C));
  std::vector<int64_t> counts(size_t(B), 0);
  for (int64_t i = 0; i < B * L; ++i) {
    const T raw = target[i];
    if (raw == T(-1))
      continue;
    const int64_t c = static_cast<int64_t>(raw);
    if (!(raw >= T(0)) || static_cast<T>(c) != raw || c >= C)
      throw std::invalid_argument(std::string(where) + ": sequence_softmax_ce target of sequence " +
                                  std::to_string(i / L) + " position " + std::to_string(i % L) +
                                  " is " + std::to_string(double(raw)) +
                                  ", not -1 or a class index in [0, " + std::to_string(C) + ")");
    ++counts[size_t(i / L)];
  }
  return counts;
}

/// exp(x[j] - shift) for j < n into e (may be null); returns their sum in
/// double, added in order.
template <class T> double shiftedExponentials(const T *x, T shift, int64_t n, T *e) {
  double sum = 0;
  int64_t j = 0;
#ifdef EMBC_HAVE_LIBMVEC
  if constexpr (std::is_same_v<T, float>) {
    const __m128 s = _mm_set1_ps(shift);
    for (; j + 4 <= n; j += 4) {
      const __m128 v = _ZGVbN4v_expf(_mm_sub_ps(_mm_loadu_ps(x + j), s));
      alignas(16) float t[4];
      _mm_store_ps(t, v);
      if (e)
        _mm_storeu_ps(e + j, v);
      sum += double(t[0]);
      sum += double(t[1]);
      sum += double(t[2]);
      sum += double(t[3]);
    }
  }
#endif
  for (; j < n; ++j) {
    const T v = std::exp(x[j] - shift);
    if (e)
      e[j] = v;
    sum += double(v);
  }
  return sum;
}

/// exp(row[j] - max) into e (may be null) and their sum; returns the max.
template <class T> T rowExponentials(const T *row, int64_t C, T *e, double &sum) {
  T mx = row[0];
  for (int64_t j = 1; j < C; ++j)
    mx = std::max(mx, row[j]);
  sum = shiftedExponentials(row, mx, C, e);
  return mx;
}

/// The softmax cross-entropy of one row of C logits against class c, in
/// double: (max - x_c) + log(sum of exp(x - max)).
template <class T> double rowCrossEntropy(const T *row, int64_t C, int64_t c) {
  double sumExp;
  const T mx = rowExponentials(row, C, static_cast<T *>(nullptr), sumExp);
  return (double(mx) - double(row[c])) + std::log(sumExp);
}

} // namespace

template <class T>
T sequenceLossForward(const T *input, const T *target, int64_t B, int64_t L, int64_t C) {
  const std::vector<int64_t> counts = sequenceTargets(target, B, L, C, "sequenceLossForward");
  const double total = detail::chunkedSum(B, L * C * 4, [&](int64_t lo, int64_t hi) {
    double sum = 0;
    for (int64_t b = lo; b < hi; ++b) {
      if (counts[size_t(b)] == 0)
        continue;
      double sequence = 0;
      for (int64_t l = 0; l < L; ++l) {
        const T raw = target[b * L + l];
        if (raw < T(0))
          continue;
        sequence += rowCrossEntropy(input + (b * L + l) * C, C, static_cast<int64_t>(raw));
      }
      sum += sequence / double(counts[size_t(b)]);
    }
    return sum;
  });
  return static_cast<T>(total / double(B));
}

template <class T>
double sequenceTokenLossSum(const T *input, const T *target, int64_t B, int64_t L, int64_t C,
                            int64_t &targets) {
  const std::vector<int64_t> counts = sequenceTargets(target, B, L, C, "sequenceTokenLossSum");
  targets = 0;
  for (int64_t n : counts)
    targets += n;
  return detail::chunkedSum(B * L, C * 4, [&](int64_t lo, int64_t hi) {
    double sum = 0;
    for (int64_t r = lo; r < hi; ++r) {
      const T raw = target[r];
      if (raw < T(0))
        continue;
      sum += rowCrossEntropy(input + r * C, C, static_cast<int64_t>(raw));
    }
    return sum;
  });
}

template <class T>
void sequenceLossGrad(const T *input, const T *target, T *dinput, int64_t B, int64_t L,
                      int64_t C) {
  const std::vector<int64_t> counts = sequenceTargets(target, B, L, C, "sequenceLossGrad");
  parallelFor(B * L, B * L * C * 4 > kParallelWork, [&](int64_t rBegin, int64_t rEnd) {
    for (int64_t r = rBegin; r < rEnd; ++r) {
      T *out = dinput + r * C;
      const T raw = target[r];
      if (raw < T(0)) {
        std::fill(out, out + C, T(0));
        continue;
      }
      // d/dx_j of (1 / (B n_b)) CE = (softmax_j - [j == c]) / (B n_b).
      const double weight = 1.0 / (double(B) * double(counts[size_t(r / L)]));
      double sumExp;
      rowExponentials(input + r * C, C, out, sumExp);
      const T scale = static_cast<T>(weight / sumExp);
      for (int64_t j = 0; j < C; ++j)
        out[j] *= scale;
      out[static_cast<int64_t>(raw)] -= static_cast<T>(weight);
    }
  });
}

// --- Explicit instantiations ------------------------------------------------

template float sequenceLossForward<float>(const float *, const float *, int64_t, int64_t,
                                          int64_t);
template double sequenceLossForward<double>(const double *, const double *, int64_t, int64_t,
                                            int64_t);
template double sequenceTokenLossSum<float>(const float *, const float *, int64_t, int64_t,
                                            int64_t, int64_t &);
template double sequenceTokenLossSum<double>(const double *, const double *, int64_t, int64_t,
                                             int64_t, int64_t &);
template void sequenceLossGrad<float>(const float *, const float *, float *, int64_t, int64_t,
                                      int64_t);
template void sequenceLossGrad<double>(const double *, const double *, double *, int64_t,
                                       int64_t, int64_t);

template float lossForward<float>(LossKind, const float *, const float *, int64_t, int64_t);
template double lossForward<double>(LossKind, const double *, const double *, int64_t, int64_t);
template void lossGrad<float>(LossKind, const float *, const float *, float *, float *, int64_t,
                              int64_t);
template void lossGrad<double>(LossKind, const double *, const double *, double *, double *,
                               int64_t, int64_t);

} // namespace embc::runtime::cpu
