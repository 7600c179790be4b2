//===- RematSchedule.cpp - which activations -emb-remat keeps -------------===//
//
// See RematSchedule.h for the chain model. Plain C++ (no MLIR), so the unit
// test can compare the dynamic program with brute force.
//
//===----------------------------------------------------------------------===//

#include "RematSchedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace embc::remat;

int64_t Schedule::numDropped() const {
  return int64_t(std::count(keep.begin(), keep.end(), false));
}

Schedule embc::remat::evaluate(const std::vector<Stage> &stages,
                               std::vector<bool> keep) {
  Schedule s;
  int64_t run = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (keep[i]) {
      s.keptBytes += stages[i].bytes;
      run = 0;
      continue;
    }
    s.recomputeFlops += stages[i].flops;
    run += stages[i].bytes;
    s.maxSegmentBytes = std::max(s.maxSegmentBytes, run);
  }
  s.keep = std::move(keep);
  return s;
}

Schedule embc::remat::keepAll(const std::vector<Stage> &stages) {
  return evaluate(stages, std::vector<bool>(stages.size(), true));
}

Schedule embc::remat::sqrtSchedule(const std::vector<Stage> &stages) {
  std::vector<bool> keep(stages.size(), false);
  if (stages.empty())
    return evaluate(stages, keep);
  int64_t total = 0;
  for (const Stage &s : stages)
    total += s.bytes;
  double threshold = double(total) / std::sqrt(double(stages.size()));
  int64_t run = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    run += stages[i].bytes;
    if (double(run) > threshold) {
      keep[i] = true;
      run = 0;
    }
  }
  return evaluate(stages, keep);
}

namespace {

/// A prefix ending in a checkpoint: its kept bytes and recomputed FLOPs, and
/// where it came from (the previous checkpoint's position and entry).
struct Entry {
  int64_t bytes, flops;
  int prev, prevEntry;
};

/// Every largest-segment size a schedule can have: 0 and each run's bytes.
std::vector<int64_t> segmentSizes(const std::vector<Stage> &stages) {
  std::vector<int64_t> sizes = {0};
  for (size_t a = 0; a < stages.size(); ++a) {
    int64_t run = 0;
    for (size_t b = a; b < stages.size(); ++b) {
      run += stages[b].bytes;
      sizes.push_back(run);
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// The fewest-FLOPs schedule whose segments are all at most `segment` bytes
/// and whose kept bytes are at most `budget - segment`. Positions 0 and n+1
/// are virtual checkpoints (the inputs and the loss) of no size.
std::optional<Schedule> bestWithSegment(const std::vector<Stage> &stages,
                                        int64_t segment, int64_t budget) {
  const int n = int(stages.size());
  std::vector<std::vector<Entry>> front(n + 2);
  front[0].push_back({0, 0, -1, -1});
  for (int p = 1; p <= n + 1; ++p) {
    int64_t own = p <= n ? stages[p - 1].bytes : 0;
    std::vector<Entry> candidates;
    int64_t runBytes = 0, runFlops = 0;
    for (int j = p - 1; j >= 0; --j) {
      if (j < p - 1) { // stage j (position j + 1) joins the dropped run
        runBytes += stages[j].bytes;
        runFlops += stages[j].flops;
      }
      if (runBytes > segment)
        break; // bytes are never negative: longer runs only grow
      for (int e = 0, end = int(front[j].size()); e < end; ++e) {
        const Entry &from = front[j][e];
        int64_t bytes = from.bytes + own;
        if (bytes > budget - segment)
          continue;
        candidates.push_back({bytes, from.flops + runFlops, j, e});
      }
    }
    // Keep the Pareto front: what follows adds the same to every prefix
    // that ends here, so a prefix no better in either figure is never needed.
    std::sort(candidates.begin(), candidates.end(), [](const Entry &a, const Entry &b) {
      return a.bytes != b.bytes ? a.bytes < b.bytes : a.flops < b.flops;
    });
    int64_t bestFlops = std::numeric_limits<int64_t>::max();
    for (const Entry &c : candidates)
      if (c.flops < bestFlops) {
        front[p].push_back(c);
        bestFlops = c.flops;
      }
  }
  if (front[n + 1].empty())
    return std::nullopt;
  // The front is sorted by bytes with falling FLOPs: the last is the cheapest.
  std::vector<bool> keep(n, false);
  for (int p = front[n + 1].back().prev, e = front[n + 1].back().prevEntry; p > 0;) {
    keep[p - 1] = true;
    const Entry &at = front[p][e];
    p = at.prev;
    e = at.prevEntry;
  }
  return evaluate(stages, keep);
}

} // namespace

std::optional<Schedule> embc::remat::optimalSchedule(const std::vector<Stage> &stages,
                                                     int64_t budget) {
  std::optional<Schedule> best;
  for (int64_t segment : segmentSizes(stages)) {
    if (segment > budget)
      break;
    std::optional<Schedule> s = bestWithSegment(stages, segment, budget);
    if (s && (!best || s->recomputeFlops < best->recomputeFlops ||
              (s->recomputeFlops == best->recomputeFlops && s->peak() < best->peak())))
      best = std::move(s);
  }
  return best;
}

Schedule embc::remat::minimumMemorySchedule(const std::vector<Stage> &stages) {
  // The lowest peak: for each largest segment S, the fewest kept bytes with
  // every segment at most S (a shortest path over checkpoint positions).
  const int n = int(stages.size());
  const int64_t inf = std::numeric_limits<int64_t>::max() / 4;
  int64_t lowest = inf;
  for (int64_t segment : segmentSizes(stages)) {
    std::vector<int64_t> kept(n + 2, inf);
    kept[0] = 0;
    for (int p = 1; p <= n + 1; ++p) {
      int64_t own = p <= n ? stages[p - 1].bytes : 0, run = 0;
      for (int j = p - 1; j >= 0; --j) {
        if (j < p - 1)
          run += stages[j].bytes;
        if (run > segment)
          break;
        kept[p] = std::min(kept[p], kept[j] + own);
      }
    }
    lowest = std::min(lowest, kept[n + 1] + segment);
  }
  // The cheapest schedule at that peak; one exists by construction.
  return *optimalSchedule(stages, lowest);
}
