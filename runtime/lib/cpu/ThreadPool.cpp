//===- ThreadPool.cpp - the persistent team behind Parallel.h ------------===//
//
// One process-wide team: teamSize() - 1 worker threads plus the thread that
// starts a region. A region is a numbered set of tasks:
//
//  1. The caller publishes the body and the task count, then opens the
//     region by storing (number, open, 0 joined) in `region_` and bumping
//     `wake_` (the futex word sleeping workers wait on).
//  2. A worker that sees an open region joins it with a compare-and-swap on
//     `region_` (so it can only join the region whose body it will read),
//     then claims tasks from `next_` until none are left, and reports done.
//     The caller claims tasks the same way.
//  3. When the tasks run out the caller closes the region (one atomic OR
//     that also tells it how many workers joined) and waits for those
//     workers only. A worker the OS had descheduled wakes to a closed region
//     and goes back to waiting: the caller never waits for a thread that was
//     not running.
//
// Waiting is a bounded spin followed by a futex sleep, for workers waiting
// for the next region and for the caller waiting for the workers. Sleeps are
// race-free by the usual pairing: a sleeper announces itself before it
// re-checks the word it waits on, and a waker changes the word before it
// checks for sleepers, both sequentially consistent, so at least one of
// the two sees the other.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace embc::runtime::cpu {

namespace {

/// Idle spin before sleeping, when neither the caller nor EMBC_CPU_SPIN_US
/// says otherwise. Long enough to cover the gap between two kernels of a
/// step (a few microseconds), short enough that a data thread or another
/// process gets the core soon after the step's last region (measured:
/// docs/performance.md, "One team of threads").
constexpr int kDefaultSpinMicros = 50;

thread_local bool tInRegion = false;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

void futexWait(std::atomic<uint32_t> &word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t> &word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

/// Spins until pred() or `micros` have passed; true when pred() held.
template <class Pred> bool spinUntil(int micros, Pred pred) {
  if (micros <= 0)
    return pred();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred())
        return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return pred();
  }
}

/// Spins, then sleeps on `word` until pred(); `sleepers` counts the threads
/// asleep on it.
template <class Pred>
void waitUntil(int spinMicros, std::atomic<uint32_t> &word, std::atomic<int> &sleepers,
               Pred pred) {
  if (spinUntil(spinMicros, pred))
    return;
  for (;;) {
    const uint32_t seen = word.load(std::memory_order_seq_cst);
    if (pred())
      return;
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (!pred() && word.load(std::memory_order_seq_cst) == seen)
      futexWait(word, seen);
    sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

int spinFromEnvironment() {
  if (const char *s = std::getenv("EMBC_CPU_SPIN_US")) {
    char *end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && *end == '\0' && v >= 0 && v <= 1000000)
      return int(v);
  }
  return kDefaultSpinMicros;
}

// region_ layout: bits 32..63 the region's number, bit 31 "closed",
// bits 0..30 the workers that joined it.
constexpr uint64_t kClosed = uint64_t(1) << 31;
constexpr uint64_t kJoinedMask = kClosed - 1;

class Team {
public:
  ~Team() { stop(); }

  /// Makes `threads` threads (the caller included) take part in regions.
  /// Workers beyond that are parked, not destroyed: the CPU backend resizes
  /// the team between steps (TeamTuner.h), and a parked thread comes back
  /// on the core it had, where a new thread would first have to be placed.
  void resize(int threads, int spinMicros) {
    std::lock_guard<std::mutex> hold(use_);
    const int size = std::max(1, threads);
    int spin = spinMicros >= 0 ? spinMicros : spinFromEnvironment();
    // Spinning threads that outnumber the CPUs only take time from the
    // thread that has the work.
    if (size > availableCpus())
      spin = 0;
    // Threads first, the size after: a region must never wait for a worker
    // that could not be created (it would wait forever).
    for (int t = int(workers_.size()) + 1; t < size; ++t) {
      try {
        workers_.emplace_back([this, t] { work(t); });
      } catch (const std::system_error &e) {
        throw std::runtime_error("cannot start CPU thread " + std::to_string(t + 1) + " of " +
                                 std::to_string(size) + " (" + e.what() +
                                 "): ask for fewer with --threads");
      }
    }
    spin_.store(spin, std::memory_order_relaxed);
    size_.store(size, std::memory_order_seq_cst);
    // Wake everyone, parked or waiting for a region, so each sees the new
    // size and spin.
    resized_.fetch_add(1, std::memory_order_seq_cst);
    futexWakeAll(resized_);
    wake_.fetch_add(1, std::memory_order_seq_cst);
    futexWakeAll(wake_);
  }

  int size() const { return size_.load(std::memory_order_relaxed); }
  int spin() const { return spin_.load(std::memory_order_relaxed); }

  void run(int64_t tasks, void (*fn)(void *, int64_t), void *ctx) {
    std::unique_lock<std::mutex> hold(use_, std::try_to_lock);
    if (!hold.owns_lock() || tInRegion || size() == 1) {
      runSerially(tasks, fn, ctx);
      return;
    }
    fn_ = fn;
    ctx_ = ctx;
    tasks_ = tasks;
    firstError_ = nullptr;
    firstErrorTask_ = INT64_MAX;
    next_.store(0, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    const uint64_t number = (region_.load(std::memory_order_relaxed) >> 32) + 1;
    region_.store(number << 32, std::memory_order_seq_cst); // open, nobody joined
    wake_.fetch_add(1, std::memory_order_seq_cst);
    if (workerSleepers_.load(std::memory_order_seq_cst) > 0)
      futexWakeAll(wake_);

    claimTasks();

    const uint32_t joined =
        uint32_t(region_.fetch_or(kClosed, std::memory_order_seq_cst) & kJoinedMask);
    waitUntil(spin(), done_, callerSleepers_,
              [&] { return done_.load(std::memory_order_acquire) == joined; });
    if (firstError_)
      std::rethrow_exception(std::exchange(firstError_, nullptr));
  }

private:
  static void runSerially(int64_t tasks, void (*fn)(void *, int64_t), void *ctx) {
    const bool outer = tInRegion;
    tInRegion = true;
    try {
      for (int64_t t = 0; t < tasks; ++t)
        fn(ctx, t);
    } catch (...) {
      tInRegion = outer;
      throw;
    }
    tInRegion = outer;
  }

  /// Runs unclaimed tasks of the open region until none are left.
  void claimTasks() {
    tInRegion = true;
    for (int64_t t = next_.fetch_add(1, std::memory_order_relaxed); t < tasks_;
         t = next_.fetch_add(1, std::memory_order_relaxed)) {
      try {
        fn_(ctx_, t);
      } catch (...) {
        std::lock_guard<std::mutex> hold(errorMutex_);
        if (t < firstErrorTask_) {
          firstErrorTask_ = t;
          firstError_ = std::current_exception();
        }
      }
    }
    tInRegion = false;
  }

  /// Joins the open region `seen` holds; false when it is closed. On
  /// success `seen` holds the region joined (a newer one than asked, when a
  /// region opened meanwhile).
  bool join(uint64_t &seen) {
    while (!(seen & kClosed)) {
      if (region_.compare_exchange_weak(seen, seen + 1, std::memory_order_seq_cst))
        return true;
    }
    return false;
  }

  void work(int t) {
    const std::string name = "embc-cpu-" + std::to_string(t);
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    uint64_t lastNumber = region_.load(std::memory_order_acquire) >> 32;
    for (;;) {
      if (t >= size()) {
        // Parked: sleep (no spin) until a resize or the end.
        const uint32_t resizes = resized_.load(std::memory_order_acquire);
        waitUntil(0, resized_, parkedSleepers_, [&] {
          return stopping_.load(std::memory_order_acquire) ||
                 resized_.load(std::memory_order_acquire) != resizes;
        });
        if (stopping_.load(std::memory_order_acquire))
          return;
        lastNumber = region_.load(std::memory_order_acquire) >> 32;
        continue;
      }
      uint64_t seen = 0;
      const uint32_t resizes = resized_.load(std::memory_order_acquire);
      waitUntil(spin(), wake_, workerSleepers_, [&] {
        seen = region_.load(std::memory_order_acquire);
        return stopping_.load(std::memory_order_acquire) || (seen >> 32) != lastNumber ||
               resized_.load(std::memory_order_acquire) != resizes;
      });
      if (stopping_.load(std::memory_order_acquire))
        return;
      if (t >= size() || (seen >> 32) == lastNumber)
        continue; // parked meanwhile, or woken by a resize: look again
      const bool joined = join(seen);
      lastNumber = seen >> 32;
      if (!joined)
        continue; // closed before this thread woke: the next one, then
      claimTasks();
      done_.fetch_add(1, std::memory_order_seq_cst);
      if (callerSleepers_.load(std::memory_order_seq_cst) > 0)
        futexWakeAll(done_);
    }
  }

  void stop() {
    if (workers_.empty())
      return;
    stopping_.store(true, std::memory_order_seq_cst);
    wake_.fetch_add(1, std::memory_order_seq_cst);
    futexWakeAll(wake_);
    resized_.fetch_add(1, std::memory_order_seq_cst);
    futexWakeAll(resized_);
    for (std::thread &w : workers_)
      w.join();
    workers_.clear();
  }

  std::mutex use_; ///< held by the thread running a region (and by resize)
  std::vector<std::thread> workers_; ///< created so far; t >= size_ are parked
  std::atomic<int> size_{1}, spin_{0};
  // The open region's body; written by the caller before it opens region_.
  void (*fn_)(void *, int64_t) = nullptr;
  void *ctx_ = nullptr;
  int64_t tasks_ = 0;
  std::mutex errorMutex_;
  std::exception_ptr firstError_;
  int64_t firstErrorTask_ = INT64_MAX;
  std::atomic<bool> stopping_{false};
  alignas(64) std::atomic<uint64_t> region_{0};
  alignas(64) std::atomic<int64_t> next_{0};
  alignas(64) std::atomic<uint32_t> done_{0};
  alignas(64) std::atomic<uint32_t> wake_{0};
  std::atomic<uint32_t> resized_{0}; ///< bumped by each resize: parked workers wait on it
  std::atomic<int> workerSleepers_{0}, callerSleepers_{0}, parkedSleepers_{0};
};

Team &team() {
  static Team *t = [] {
    // Never destroyed: workers must outlive any static destructor that
    // might still run a kernel, and exit() must not wait on them.
    auto *created = new Team;
    created->resize(availableCpus(), -1);
    return created;
  }();
  return *t;
}

} // namespace

int availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

void setTeamSize(int threads, int spinMicros) {
  team().resize(threads > 0 ? threads : availableCpus(), spinMicros);
}

int teamSize() { return team().size(); }

int teamSpinMicros() { return team().spin(); }

bool inParallelRegion() { return tInRegion; }

void detail::runTasks(int64_t tasks, void (*fn)(void *, int64_t), void *ctx) {
  team().run(tasks, fn, ctx);
}

} // namespace embc::runtime::cpu
