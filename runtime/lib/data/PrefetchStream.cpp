//===- PrefetchStream.cpp - batches assembled ahead, in order -------------===//

#include "PrefetchStream.h"
#include "LengthBuckets.h"

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/data/BatchSlice.h"
#include "embc/runtime/data/Permutation.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

using namespace embc::runtime::data;
using Clock = std::chrono::steady_clock;

namespace {

/// The workers fill the cores' idle time: they run under SCHED_IDLE, so the
/// compute team always gets a core first (a team thread preempted by a data
/// thread stalls the whole region: dlrm_small at --threads 2 went from 104k
/// to 170k samples/s with this, two_tower from 279k to 383k; measured in
/// docs/performance.md, "One team of threads"). Such a thread gets almost no
/// CPU while other processes keep the cores busy (skip-gram beside a
/// two-job build: 13k pairs/s when the trainer waited for its workers, 105k
/// at normal priority), so the trainer never waits for one longer than a
/// short grace: it fills the parts nobody has claimed on the compute team
/// and then fills again those a worker has not finished (complete()).
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

/// At most this many parts a batch: small parts make a stalled worker cost
/// little, and joining more of them costs more.
constexpr int64_t kMaxParts = 32;

} // namespace

struct PrefetchStream::Build {
  uint64_t number = 0;
  bool end = false; ///< past the end of an evaluation stream
  int64_t parts = 0;
  std::atomic<int64_t> cursor{0}; ///< the next part to claim
  std::unique_ptr<std::atomic<int>[]> state;
  std::vector<Batch> pieces, refills;
  std::vector<std::exception_ptr> pieceErrors, refillErrors;

  explicit Build(int64_t partCount)
      : parts(partCount), state(new std::atomic<int>[size_t(partCount)]),
        pieces(size_t(partCount)), refills(size_t(partCount)),
        pieceErrors(size_t(partCount)), refillErrors(size_t(partCount)) {}

  void reset(uint64_t n) {
    number = n, end = false;
    cursor.store(0, std::memory_order_relaxed);
    for (int64_t p = 0; p < parts; ++p) {
      state[p].store(kFree, std::memory_order_relaxed);
      pieceErrors[size_t(p)] = refillErrors[size_t(p)] = nullptr;
    }
  }
  bool done(int64_t p) const { return state[p].load(std::memory_order_acquire) >= kFilled; }
  bool allDone() const {
    for (int64_t p = 0; p < parts; ++p)
      if (!done(p))
        return false;
    return true;
  }
};

PrefetchStream::PrefetchStream(std::shared_ptr<const ExampleSource> source,
                               std::vector<FeatureSpec> features,
                               const StreamOptions &options, uint64_t startPosition)
    : source_(std::move(source)), features_(std::move(features)),
      batchSize_(static_cast<uint64_t>(options.batchSize)), seed_(options.seed),
      start_(startPosition), training_(options.training), shuffle_(options.shuffle),
      shuffleWindow_(source_->shuffleWindow(options.shuffleWindow)),
      onPartFilled_(options.onPartFilled) {
  static std::atomic<uint64_t> streams{0};
  id_ = ++streams;
  if (training_ && options.lengthBuckets > 1) {
    if (!source_->shufflesEpochs() || !shuffle_ ||
        (shuffleWindow_ > 0 && shuffleWindow_ < source_->size()))
      throw DataError(std::string("length bucketing (--length-buckets) sorts windows of a "
                                  "shuffled file's order: ") +
                      (!source_->shufflesEpochs() ? "generated data has no epochs"
                       : !shuffle_               ? "--no-shuffle reads it in file order"
                                                 : "--shuffle buffer:N keeps it near file order"));
    if (source_->size() > 0 && source_->length(0) < 0)
      throw DataError("length bucketing (--length-buckets) needs a sequence feature: this "
                      "data's examples have no sequence length");
    lengthBuckets_ = uint64_t(options.lengthBuckets);
  }
  // Every worker may be busy with a batch of its own, so at least one each.
  int workers = options.prefetch == 0 ? 0 : resolveThreads(options.threads);
  capacity_ = static_cast<uint64_t>(std::max(options.prefetch, workers));
  partsPerBatch_ =
      std::clamp<int64_t>(int64_t(batchSize_) / kMinRowsPerPart, 1, kMaxParts);
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

std::shared_ptr<PrefetchStream::Build> PrefetchStream::startBuild(uint64_t number) {
  std::shared_ptr<Build> build;
  // A spare still held by a worker that was too late with its part is not
  // reused: that worker may still be writing into it.
  auto reusable = std::find_if(spareBuilds_.begin(), spareBuilds_.end(),
                               [](const auto &b) { return b.use_count() == 1; });
  if (reusable != spareBuilds_.end()) {
    build = std::move(*reusable);
    spareBuilds_.erase(reusable);
  } else {
    build = std::make_shared<Build>(partsPerBatch_);
  }
  build->reset(number);
  if (!training_ && start_ + number * batchSize_ >= source_->size()) {
    build->end = true;
    lastClaimed_ = true;
  }
  building_.emplace(number, build);
  return build;
}

void PrefetchStream::fillPart(const Build &build, int64_t p, Batch &into,
                              std::exception_ptr &error) const {
  const Clock::time_point began = Clock::now();
  try {
    const uint64_t examples = source_->size();
    const uint64_t first = start_ + build.number * batchSize_;
    const uint64_t valid = training_ ? batchSize_ : std::min(batchSize_, examples - first);
    // A file's examples repeat every epoch (shuffled or in file order);
    // generated data has a new example at every position.
    const bool file = source_->shufflesEpochs();
    const bool shuffled = training_ && shuffle_ && file;
    const uint64_t per = (batchSize_ + uint64_t(build.parts) - 1) / uint64_t(build.parts);
    const uint64_t begin = uint64_t(p) * per, end = std::min(batchSize_, begin + per);
    thread_local std::vector<uint64_t> rows, positions;
    rows.resize(end - begin), positions.resize(end - begin);
    std::optional<EpochPermutation> order; // of epoch orderEpoch
    uint64_t orderEpoch = 0;
    for (uint64_t r = begin; r < end; ++r) {
      const uint64_t position = first + std::min(r, valid - 1); // padding repeats the last
      positions[r - begin] = position;
      if (!shuffled) {
        rows[r - begin] = file ? position % examples : position;
        continue;
      }
      const uint64_t epoch = position / examples;
      if (shuffleWindow_ > 0 && shuffleWindow_ < examples) {
        // Each window of the file on its own: a permutation per (epoch, window).
        const uint64_t place = position % examples, window = place / shuffleWindow_,
                       base = window * shuffleWindow_,
                       windows = (examples + shuffleWindow_ - 1) / shuffleWindow_;
        if (!order || epoch * windows + window != orderEpoch) {
          orderEpoch = epoch * windows + window;
          order.emplace(std::min(shuffleWindow_, examples - base), seed_, orderEpoch);
        }
        rows[r - begin] = base + (*order)(place - base);
        continue;
      }
      if (lengthBuckets_ > 1) {
        rows[r - begin] = bucketedOrder(epoch)(position % examples);
        continue;
      }
      if (!order || epoch != orderEpoch) { // a batch may span epochs
        order.emplace(examples, seed_, epoch);
        orderEpoch = epoch;
      }
      rows[r - begin] = (*order)(position % examples);
    }
    prepareBatch(features_, int64_t(end - begin), into);
    source_->fill(rows, positions, into);
    into.size = int64_t(end - begin);
    if (onPartFilled_)
      onPartFilled_(into);
  } catch (...) {
    error = std::current_exception();
  }
  const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           Clock::now() - began).count();
  const int64_t mean = partNanos_.load(std::memory_order_relaxed);
  partNanos_.store(mean == 0 ? took : (7 * mean + took) / 8, std::memory_order_relaxed);
  rowsFilled_.fetch_add(uint64_t(into.size), std::memory_order_relaxed);
  fillNanos_.fetch_add(uint64_t(std::max<int64_t>(took, 0)), std::memory_order_relaxed);
}

BatchStream::Fill PrefetchStream::fill() const {
  Fill f;
  f.capacity = capacity_;
  f.rows = rowsFilled_.load(std::memory_order_relaxed);
  f.seconds = double(fillNanos_.load(std::memory_order_relaxed)) * 1e-9;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &[number, build] : building_)
    f.ready += number >= nextToDeliver_ && build->allDone() ? 1 : 0;
  return f;
}

const BucketedOrder &PrefetchStream::bucketedOrder(uint64_t epoch) const {
  // Parts of one window's batches land on every thread: each keeps the
  // window it sorted last (a stream's id, never reused, keys it).
  thread_local std::optional<BucketedOrder> order;
  thread_local uint64_t stream = 0, orderEpoch = 0;
  if (!order || stream != id_ || orderEpoch != epoch) {
    order.emplace(*source_, batchSize_, lengthBuckets_, seed_, epoch);
    stream = id_, orderEpoch = epoch;
  }
  return *order;
}

bool PrefetchStream::claimAndFill(Build &build, int64_t p) {
  int expected = kFree;
  if (!build.state[p].compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel))
    return false; // the trainer refilled it already
  fillPart(build, p, build.pieces[size_t(p)], build.pieceErrors[size_t(p)]);
  expected = kClaimed;
  build.state[p].compare_exchange_strong(expected, kFilled, std::memory_order_acq_rel);
  return true; // (a refill that won meanwhile is used instead: the same rows)
}

void PrefetchStream::work() {
  lowerThisThreadsPriority();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    std::shared_ptr<Build> build;
    changed_.wait(lock, [&] {
      if (stopping_)
        return true;
      for (auto &[number, b] : building_) // the earliest batch first
        if (!b->end && b->cursor.load(std::memory_order_relaxed) < b->parts) {
          build = b;
          return true;
        }
      if (!lastClaimed_ && !failed_ && nextToClaim_ < nextToDeliver_ + capacity_) {
        build = startBuild(nextToClaim_++);
        return !build->end;
      }
      return false;
    });
    if (stopping_)
      return;
    lock.unlock();
    for (int64_t p; (p = build->cursor.fetch_add(1)) < build->parts;) {
      claimAndFill(*build, p);
      lock.lock(); // the trainer may be waiting for this part
      lock.unlock();
      changed_.notify_all();
    }
    build.reset();
    lock.lock();
  }
}

void PrefetchStream::complete(Build &build, Batch &out) {
  // The parts nobody has claimed, on the compute team (idle while the
  // trainer waits for its batch).
  if (build.cursor.load() < build.parts) // (waking the team for nothing costs)
    cpu::parallelRegion(int(build.parts), [&](int, int) {
      for (int64_t p; (p = build.cursor.fetch_add(1)) < build.parts;)
        claimAndFill(build, p);
    });
  // Parts a worker is filling: a short grace, then fill them here as well.
  if (!build.allDone()) {
    const int64_t grace = std::max<int64_t>(50'000, 3 * partNanos_.load());
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_until(lock, Clock::now() + std::chrono::nanoseconds(grace),
                        [&] { return build.allDone(); });
  }
  std::vector<int64_t> late;
  for (int64_t p = 0; p < build.parts; ++p)
    if (!build.done(p))
      late.push_back(p);
  if (!late.empty()) {
    cpu::parallelFor(int64_t(late.size()), true, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const size_t p = size_t(late[size_t(i)]);
        fillPart(build, int64_t(p), build.refills[p], build.refillErrors[p]);
        int s = build.state[p].load(std::memory_order_acquire);
        while (s < kFilled &&
               !build.state[p].compare_exchange_weak(s, kRefilled, std::memory_order_acq_rel)) {
        }
      }
    });
    refilled_.fetch_add(late.size(), std::memory_order_relaxed);
  }

  std::vector<const Batch *> chosen(size_t(build.parts));
  for (int64_t p = 0; p < build.parts; ++p) {
    const bool refill = build.state[p].load(std::memory_order_acquire) == kRefilled;
    const std::exception_ptr &error =
        refill ? build.refillErrors[size_t(p)] : build.pieceErrors[size_t(p)];
    if (error)
      std::rethrow_exception(error); // the first part's in row order
    chosen[size_t(p)] = refill ? &build.refills[size_t(p)] : &build.pieces[size_t(p)];
  }
  if (build.parts == 1 && chosen[0] == &build.pieces[0])
    std::swap(out, build.pieces[0]);
  else
    joinBatches(chosen, out);
}

bool PrefetchStream::next(Batch &out) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (failed_)
    std::rethrow_exception(failed_);
  if (ended_)
    return false;
  std::shared_ptr<Build> build;
  if (auto it = building_.find(nextToDeliver_); it != building_.end())
    build = it->second;
  else
    build = startBuild(nextToClaim_++); // no worker has started it
  lock.unlock();

  const uint64_t first = start_ + build->number * batchSize_;
  try {
    if (!build->end)
      complete(*build, out);
  } catch (...) {
    lock.lock();
    failed_ = std::current_exception();
    lastClaimed_ = true;
    throw;
  }
  lock.lock();
  building_.erase(build->number);
  if (build->end) {
    ended_ = true;
    return false;
  }
  out.size = int64_t(batchSize_);
  out.valid = int64_t(training_ ? batchSize_ : std::min(batchSize_, source_->size() - first));
  out.position = first + uint64_t(out.valid);
  spareBuilds_.push_back(std::move(build));
  ++nextToDeliver_;
  lock.unlock();
  changed_.notify_all();
  return true;
}
