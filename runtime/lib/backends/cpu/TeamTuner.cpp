//===- TeamTuner.cpp - the CPU team size, chosen by measuring steps -------===//

#include "TeamTuner.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

using namespace embc::runtime;

TeamTuner::TeamTuner(int maxThreads, bool enabled)
    : enabled_(enabled && maxThreads > 1), current_(std::max(1, maxThreads)) {
  for (int n = std::max(1, maxThreads); n >= 1; n /= 2) {
    candidates_.push_back(n);
    if (n == 1)
      break;
  }
  if (candidates_.back() != 1)
    candidates_.push_back(1);
}

std::optional<int> TeamTuner::move(int size) {
  if (size == current_)
    return std::nullopt;
  current_ = size;
  return size;
}

void TeamTuner::startTrial() {
  trying_ = true;
  turn_ = 0;
  turnSteps_ = 0;
  turnSeconds_ = 0;
  times_.assign(candidates_.size(), {});
}

std::optional<int> TeamTuner::stepTimed(double seconds, double work) {
  if (!enabled_)
    return std::nullopt;
  if (!trying_) {
    if (warmLeft_ > 0) {
      if (--warmLeft_ == 0) {
        startTrial();
        return move(candidates_[0]);
      }
      return std::nullopt;
    }
    sinceTrial_ += seconds;
    if (sinceTrial_ >= kRetuneSeconds) {
      sinceTrial_ = 0;
      startTrial();
      return move(candidates_[0]);
    }
    return std::nullopt;
  }
  const size_t n = candidates_.size();
  if (++turnSteps_ <= kSettleSteps)
    return std::nullopt;
  times_[turn_ % n].push_back(work > 0 ? seconds / work : seconds);
  turnSeconds_ += seconds;
  if (turnSteps_ < kSettleSteps + kStepsPerTurn || turnSeconds_ < kSecondsPerTurn)
    return std::nullopt;
  turnSteps_ = 0;
  turnSeconds_ = 0;
  if (++turn_ < n * kRounds)
    return move(candidates_[turn_ % n]);

  // Candidates run from the largest team down; a smaller one wins only by
  // more than the margin.
  trying_ = false;
  // The mean, not the median: step times are bimodal when the data threads
  // cannot keep up (a step whose batch was ready, one that built its own),
  // and throughput is what the mean measures.
  std::vector<double> means(n);
  for (size_t i = 0; i < n; ++i)
    means[i] = std::accumulate(times_[i].begin(), times_[i].end(), 0.0) /
               double(std::max<size_t>(1, times_[i].size()));
  size_t best = 0;
  for (size_t i = 1; i < n; ++i)
    if (means[i] < means[best] * (1.0 - kMargin))
      best = i;
  std::string line = "cpu team: " + std::to_string(candidates_[best]) + " thread(s) (mean step";
  for (size_t i = 0; i < n; ++i) {
    char item[64];
    std::snprintf(item, sizeof item, "%s %d: %.3g ms", i ? "," : "", candidates_[i],
                  means[i] * 1e3);
    line += item;
  }
  decision_ = line + ")";
  lastTrial_.clear();
  for (size_t i = 0; i < n; ++i)
    lastTrial_.emplace_back(candidates_[i], means[i]);
  ++trials_;
  return move(candidates_[best]);
}
