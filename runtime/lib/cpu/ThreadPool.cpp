//===- ThreadPool.cpp - the persistent team behind Parallel.h ------------===//
//
// One process-wide team: teamSize() - 1 worker threads plus the thread that
// starts a region. A region is a generation: the caller publishes the body,
// bumps `generation_` and runs its own share; every worker runs its share (or
// nothing, when the region is narrower than the team) and decrements
// `pending_`; the caller returns when `pending_` reaches 0. Every worker
// takes part in every generation, so a worker can never mistake one
// region's body for another's.
//
// Waiting is a bounded spin followed by a futex sleep, for workers waiting
// for the next region and for the caller waiting for the workers. The sleep
// is race-free by the usual Dekker pairing: a sleeper announces itself
// (sleepers_++) before it re-checks the word it waits on, and a waker
// changes the word before it checks for sleepers, all sequentially
// consistent, so at least one of the two sees the other.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
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
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
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

int spinFromEnvironment() {
  if (const char *s = std::getenv("EMBC_CPU_SPIN_US")) {
    char *end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && *end == '\0' && v >= 0 && v <= 1000000)
      return int(v);
  }
  return kDefaultSpinMicros;
}

class Team {
public:
  ~Team() { stop(); }

  void resize(int threads, int spinMicros) {
    std::lock_guard<std::mutex> hold(use_);
    stop();
    size_ = std::max(1, threads);
    spin_ = spinMicros >= 0 ? spinMicros : spinFromEnvironment();
    // Spinning threads that outnumber the CPUs only take time from the
    // thread that has the work.
    if (size_ > availableCpus())
      spin_ = 0;
    errors_.assign(size_t(size_), nullptr);
    stopping_ = false;
    // The generation the workers start from is read here, not by each new
    // thread: a thread that starts late must still see the next bump.
    const uint32_t start = generation_.load(std::memory_order_acquire);
    for (int t = 1; t < size_; ++t)
      workers_.emplace_back([this, t, start] { work(t, start); });
  }

  int size() const { return size_; }
  int spin() const { return spin_; }

  void run(int threads, void (*fn)(void *, int), void *ctx) {
    std::unique_lock<std::mutex> hold(use_, std::try_to_lock);
    if (!hold.owns_lock() || tInRegion || size_ == 1) {
      runSerially(threads, fn, ctx);
      return;
    }
    fn_ = fn;
    ctx_ = ctx;
    active_ = std::min(threads, size_);
    pending_.store(uint32_t(size_ - 1), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0)
      futexWakeAll(generation_);

    runShare(0);

    // Wait for the workers: spin, then sleep on pending_.
    if (!spinUntil(spin_, [&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      for (;;) {
        uint32_t left = pending_.load(std::memory_order_seq_cst);
        if (left == 0)
          break;
        callerSleeping_.store(1, std::memory_order_seq_cst);
        if (pending_.load(std::memory_order_seq_cst) == left)
          futexWait(pending_, left);
        callerSleeping_.store(0, std::memory_order_relaxed);
      }
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    for (std::exception_ptr &e : errors_)
      if (e) {
        std::exception_ptr first = std::exchange(e, nullptr);
        for (std::exception_ptr &rest : errors_)
          rest = nullptr;
        std::rethrow_exception(first);
      }
  }

private:
  static void runSerially(int threads, void (*fn)(void *, int), void *ctx) {
    const bool outer = tInRegion;
    tInRegion = true;
    try {
      for (int t = 0; t < threads; ++t)
        fn(ctx, t);
    } catch (...) {
      tInRegion = outer;
      throw;
    }
    tInRegion = outer;
  }

  void runShare(int t) {
    if (t >= active_)
      return;
    tInRegion = true;
    try {
      fn_(ctx_, t);
    } catch (...) {
      errors_[size_t(t)] = std::current_exception();
    }
    tInRegion = false;
  }

  void work(int t, uint32_t seen) {
    const std::string name = "embc-cpu-" + std::to_string(t);
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    for (;;) {
      if (!spinUntil(spin_, [&] { return generation_.load(std::memory_order_acquire) != seen; })) {
        for (;;) {
          sleepers_.fetch_add(1, std::memory_order_seq_cst);
          const bool changed = generation_.load(std::memory_order_seq_cst) != seen;
          if (!changed)
            futexWait(generation_, seen);
          sleepers_.fetch_sub(1, std::memory_order_seq_cst);
          if (changed || generation_.load(std::memory_order_acquire) != seen)
            break;
        }
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stopping_)
        return;
      runShare(t);
      if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
          callerSleeping_.load(std::memory_order_seq_cst))
        futexWakeAll(pending_);
    }
  }

  void stop() {
    if (workers_.empty())
      return;
    stopping_ = true;
    generation_.fetch_add(1, std::memory_order_seq_cst);
    futexWakeAll(generation_);
    for (std::thread &w : workers_)
      w.join();
    workers_.clear();
  }

  std::mutex use_; ///< held by the thread running a region (and by resize)
  std::vector<std::thread> workers_;
  std::vector<std::exception_ptr> errors_;
  int size_ = 1, spin_ = 0, active_ = 0;
  void (*fn_)(void *, int) = nullptr;
  void *ctx_ = nullptr;
  std::atomic<bool> stopping_{false};
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<uint32_t> pending_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<uint32_t> callerSleeping_{0};
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

void detail::runOnTeam(int threads, void (*fn)(void *, int), void *ctx) {
  team().run(threads, fn, ctx);
}

} // namespace embc::runtime::cpu
