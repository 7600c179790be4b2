//===- PrefetchStream.cpp - batches assembled ahead, in order -------------===//

#include "PrefetchStream.h"

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/data/BatchSlice.h"
#include "embc/runtime/data/Permutation.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <cstdlib>
#include <string>

using namespace embc::runtime::data;

namespace {

/// The workers fill the cores' idle time: they run under SCHED_IDLE, so the
/// compute team always gets a core first (a team thread preempted by a data
/// thread stalls the whole region: dlrm_small at --threads 2 went from 104k
/// to 170k samples/s with this, two_tower from 279k to 383k; measured in
/// docs/performance.md, "One team of threads"). Starvation cannot stall
/// training: when no worker has started the batch the trainer needs, the
/// trainer builds it itself at its own priority (next()), and on the
/// compute team: a batch on the critical path is built by every core.
/// EMBC_DATA_SCHED=normal (no change) or nice (nice +10) are for comparing.
void lowerThisThreadsPriority() {
  const char *mode = std::getenv("EMBC_DATA_SCHED");
  const std::string how = mode ? mode : "idle";
  if (how == "normal")
    return;
  if (how == "nice") {
    const id_t tid = static_cast<id_t>(syscall(SYS_gettid));
    errno = 0;
    const int current = getpriority(PRIO_PROCESS, tid);
    if (errno == 0)
      setpriority(PRIO_PROCESS, tid, std::min(19, current + 10)); // best effort
    return;
  }
  sched_param param{};
  param.sched_priority = 0;
  sched_setscheduler(0, SCHED_IDLE, &param); // best effort: this thread only
}

} // namespace

PrefetchStream::PrefetchStream(std::shared_ptr<const ExampleSource> source,
                               std::vector<FeatureSpec> features,
                               const StreamOptions &options, uint64_t startPosition)
    : source_(std::move(source)), features_(std::move(features)),
      batchSize_(static_cast<uint64_t>(options.batchSize)), seed_(options.seed),
      start_(startPosition), training_(options.training) {
  // Every worker may hold a batch in the making, so at least one per worker.
  int workers = options.prefetch == 0 ? 0 : resolveThreads(options.threads);
  capacity_ = static_cast<uint64_t>(std::max(options.prefetch, workers));
  for (int w = 0; w < workers; ++w)
    workers_.emplace_back([this] { work(); });
}

PrefetchStream::~PrefetchStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

bool PrefetchStream::assemble(uint64_t number, Batch &out, bool onTeam) const {
  uint64_t examples = source_->size();
  uint64_t first = start_ + number * batchSize_;
  uint64_t valid = batchSize_;
  if (!training_) {
    if (first >= examples)
      return false;
    valid = std::min(batchSize_, examples - first);
  }
  bool shuffled = training_ && source_->shufflesEpochs();
  std::vector<uint64_t> rows(batchSize_), positions(batchSize_);
  std::optional<EpochPermutation> order; // of epoch orderEpoch
  uint64_t orderEpoch = 0;
  for (uint64_t r = 0; r < batchSize_; ++r) {
    uint64_t position = first + std::min(r, valid - 1); // padding repeats the last example
    positions[r] = position;
    if (!shuffled) {
      rows[r] = position;
      continue;
    }
    uint64_t epoch = position / examples;
    if (!order || epoch != orderEpoch) { // a batch may span epochs
      order.emplace(examples, seed_, epoch);
      orderEpoch = epoch;
    }
    rows[r] = (*order)(position % examples);
  }
  if (onTeam && cpu::teamSize() > 1 && batchSize_ >= 2 * kMinRowsPerPart) {
    fillOnTeam(rows, positions, out);
  } else {
    prepareBatch(features_, static_cast<int64_t>(batchSize_), out);
    source_->fill(rows, positions, out);
  }
  out.size = static_cast<int64_t>(batchSize_);
  out.valid = static_cast<int64_t>(valid);
  out.position = first + valid;
  return true;
}

void PrefetchStream::fillOnTeam(const std::vector<uint64_t> &rows,
                                const std::vector<uint64_t> &positions, Batch &out) const {
  // Rows are independent (each a pure function of its example and
  // position), so parts filled side by side and joined are the batch one
  // fill would make.
  const int64_t total = int64_t(rows.size());
  const int64_t partCount = std::min<int64_t>(total / kMinRowsPerPart, 2 * cpu::teamSize());
  const int64_t per = (total + partCount - 1) / partCount;
  // The trainer's thread only comes here. The tasks reach its pieces through
  // `parts` (a thread_local named inside them would be each thread's own).
  thread_local std::vector<Batch> pieces;
  std::vector<Batch> &parts = pieces;
  parts.resize(size_t(partCount));
  cpu::parallelFor(partCount, true, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t begin = p * per, end = std::min(total, begin + per);
      const std::vector<uint64_t> partRows(rows.begin() + begin, rows.begin() + end),
          partPositions(positions.begin() + begin, positions.begin() + end);
      prepareBatch(features_, end - begin, parts[size_t(p)]);
      source_->fill(partRows, partPositions, parts[size_t(p)]);
    }
  });
  joinBatches(parts, out);
}

void PrefetchStream::produce(uint64_t number, std::unique_lock<std::mutex> &lock,
                             bool onTeam) {
  Slot slot;
  if (!spare_.empty()) {
    slot.batch = std::move(spare_.back());
    spare_.pop_back();
  }
  lock.unlock();
  try {
    slot.end = !assemble(number, slot.batch, onTeam);
  } catch (...) {
    slot.error = std::current_exception();
  }
  lock.lock();
  if (slot.end || slot.error)
    lastClaimed_ = true;
  ready_.emplace(number, std::move(slot));
}

void PrefetchStream::work() {
  lowerThisThreadsPriority();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] {
      return stopping_ || (!lastClaimed_ && nextToClaim_ < nextToDeliver_ + capacity_);
    });
    if (stopping_)
      return;
    produce(nextToClaim_++, lock, /*onTeam=*/false);
    changed_.notify_all();
  }
}

bool PrefetchStream::next(Batch &out) {
  std::unique_lock<std::mutex> lock(mutex_);
  // No worker has started the batch the trainer needs: build it here, at the
  // trainer's priority, rather than wait for a low-priority worker.
  if (!ready_.count(nextToDeliver_) && nextToClaim_ == nextToDeliver_ && !lastClaimed_) {
    produce(nextToClaim_++, lock, /*onTeam=*/true);
    changed_.notify_all();
  }
  changed_.wait(lock, [&] { return ready_.count(nextToDeliver_) != 0; });
  Slot &slot = ready_.at(nextToDeliver_);
  if (slot.error)
    std::rethrow_exception(slot.error); // kept: later calls fail the same way
  if (slot.end)
    return false;
  std::swap(out, slot.batch);
  spare_.push_back(std::move(slot.batch)); // the caller's previous batch, for reuse
  ready_.erase(nextToDeliver_);
  ++nextToDeliver_;
  lock.unlock();
  changed_.notify_all();
  return true;
}
