//===- EvalMetrics.cpp - AUC, RMSE and accuracy ---------------------------===//
//
// Exact metrics over a whole evaluation set. AUC is computed by sorting once
// and counting, per group of equal scores, the negatives ranked below each
// positive; equal scores count one half. That is the Mann-Whitney /
// average-rank formula, kept in integers (doubled to avoid the half) so the
// result does not drift with the size of the evaluation set.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

using namespace embc::runtime;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void checkSizes(const char *metric, size_t first, size_t second,
                const char *firstName, const char *secondName) {
  if (first != second)
    throw std::invalid_argument(
        std::string(metric) + ": " + std::to_string(first) + " " + firstName +
        " but " + std::to_string(second) + " " + secondName);
}

void checkBinaryLabels(const char *metric, const std::vector<float> &labels) {
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] != 0.0f && labels[i] != 1.0f)
      throw std::invalid_argument(
          std::string(metric) + ": label " + std::to_string(i) + " is " +
          std::to_string(labels[i]) + ", expected 0 or 1");
}

/// An unsigned key with the order of the (non-NaN) floats: -0 and +0
/// equal, as they compare.
uint32_t orderedKey(float f) {
  if (f == 0.0f)
    f = 0.0f;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

/// Sorts values of the form key << 1 | label by key: an LSD radix sort over
/// the 32 key bits in three passes of 11 bits.
void radixSortByKey(std::vector<uint64_t> &v, std::vector<uint64_t> &spare) {
  constexpr int kBits = 11;
  constexpr uint64_t kMask = (1u << kBits) - 1;
  std::vector<size_t> count((1u << kBits) + 1);
  for (int shift = 1; shift < 33; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t x : v)
      ++count[((x >> shift) & kMask) + 1];
    for (size_t d = 0; d + 1 < count.size(); ++d)
      count[d + 1] += count[d];
    for (uint64_t x : v)
      spare[count[(x >> shift) & kMask]++] = x;
    v.swap(spare);
  }
}

} // namespace

double embc::runtime::computeAuc(const std::vector<float> &scores,
                                 const std::vector<float> &labels) {
  checkSizes("computeAuc", scores.size(), labels.size(), "scores", "labels");
  checkBinaryLabels("computeAuc", labels);
  // Each score as an unsigned key in the order of the floats, times two,
  // plus its label: a radix sort on the key bits groups equal scores (the
  // order within a group does not matter). Training reports rank a million
  // scores every few steps; std::sort took ~100 ms of that.
  std::vector<uint64_t> ranked(scores.size()), spare(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    if (std::isnan(scores[i]))
      return kNaN; // a diverged model has no ranking to measure
    ranked[i] = uint64_t(orderedKey(scores[i])) << 1 | (labels[i] == 1.0f ? 1u : 0u);
  }
  radixSortByKey(ranked, spare);

  // Twice the count of (positive, negative) pairs ordered correctly, ties
  // counting one: fits 64 bits for fewer than 2^32 samples.
  uint64_t twiceCorrectPairs = 0;
  uint64_t negativesBelow = 0, positives = 0;
  for (size_t begin = 0; begin < ranked.size();) {
    size_t end = begin;
    uint64_t groupPositives = 0, groupNegatives = 0;
    for (; end < ranked.size() && ranked[end] >> 1 == ranked[begin] >> 1; ++end)
      (ranked[end] & 1 ? groupPositives : groupNegatives) += 1;
    twiceCorrectPairs +=
        2 * negativesBelow * groupPositives + groupPositives * groupNegatives;
    negativesBelow += groupNegatives;
    positives += groupPositives;
    begin = end;
  }
  uint64_t negatives = negativesBelow;
  if (positives == 0 || negatives == 0)
    return kNaN;
  return static_cast<double>(static_cast<long double>(twiceCorrectPairs) /
                             (2.0L * positives * negatives));
}

double embc::runtime::computeRmse(const std::vector<float> &pred,
                                  const std::vector<float> &target) {
  checkSizes("computeRmse", pred.size(), target.size(), "predictions",
             "targets");
  if (pred.empty())
    return kNaN;
  double sum = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    double error = static_cast<double>(pred[i]) - target[i];
    sum += error * error;
  }
  return std::sqrt(sum / static_cast<double>(pred.size()));
}

double embc::runtime::computeAccuracy(const std::vector<float> &logits,
                                      const std::vector<float> &labels) {
  checkSizes("computeAccuracy", logits.size(), labels.size(), "scores",
             "labels");
  checkBinaryLabels("computeAccuracy", labels);
  if (logits.empty())
    return kNaN;
  size_t correct = 0;
  for (size_t i = 0; i < logits.size(); ++i)
    correct += (logits[i] > 0.0f) == (labels[i] == 1.0f);
  return static_cast<double>(correct) / static_cast<double>(logits.size());
}

void embc::runtime::ReservoirSample::offer(float score, float label) {
  ++offered_;
  if (limit_ == 0 || scores_.size() < limit_) {
    scores_.push_back(score);
    labels_.push_back(label);
    return;
  }
  uint64_t z = (random_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const uint64_t slot = z % offered_;
  if (slot < limit_) {
    scores_[slot] = score;
    labels_[slot] = label;
  }
}
