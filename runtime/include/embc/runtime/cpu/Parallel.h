//===- Parallel.h - the CPU backend's one team of threads -------*- C++ -*-===//
//
// Every parallel loop of the CPU kernels runs on one persistent team of
// threads (ThreadPool.cpp). The team replaces OpenMP's parallel regions for
// three reasons, all measured on the 2-core CI machine (docs/performance.md):
//
//  - Wait policy. libgomp reads its spin policy from the environment once,
//    at process start, and by default spins for ~300k iterations after each
//    region; the data threads and any other process on the machine then fight
//    spinning threads for the cores (two_tower: 413k samples/s on 1 thread,
//    41k on 2). The team spins for a bounded time (default 50 us, measured)
//    and then sleeps on a futex, and spins not at all when it has more
//    threads than the CPUs the process may use.
//  - One pool. The BLAS runs single-threaded inside the team's tasks
//    (GEMMs are split into fixed row blocks by Gemm.h), so there is no second
//    pool of BLAS threads spinning beside ours.
//  - Determinism by construction. parallelFor splits [0, n) exactly as
//    OpenMP's schedule(static) did, and kernels keep their rule that every
//    output element is computed by one thread in a fixed order, so results do
//    not depend on the team size.
//
// A region started from inside a region (a kernel called by a kernel, or any
// thread other than the one holding the team) runs serially on the calling
// thread: there is no nesting and no oversubscription.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_PARALLEL_H
#define EMBC_RUNTIME_CPU_PARALLEL_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <utility>

namespace embc::runtime::cpu {

/// The CPUs this process may run on (its affinity mask), at least 1.
int availableCpus();

/// Sizes the team: `threads` threads including the caller; 0 means
/// availableCpus(). Idle threads spin for `spinMicros` before they sleep
/// (negative: the default, or EMBC_CPU_SPIN_US when set; 0 when the team is
/// larger than availableCpus()). Must not be called from inside a region.
void setTeamSize(int threads, int spinMicros = -1);
/// The team's size (threads including the caller).
int teamSize();
/// The spin time idle team threads use now, in microseconds.
int teamSpinMicros();
/// True on a thread that is running a region's body.
bool inParallelRegion();

namespace detail {
/// Runs fn(ctx, t) for t in [0, threads) on the team, the caller as t = 0,
/// and returns when every t is done; rethrows the exception of the lowest t
/// that threw. Serial (t = 0 .. threads-1 in order on the caller) inside a
/// region or while another thread holds the team.
void runOnTeam(int threads, void (*fn)(void *, int), void *ctx);
} // namespace detail

/// Runs body(t, threads) once for each t in [0, threads) on `threads` team
/// threads, where threads = min(wanted, teamSize()) (and 1 inside a region).
template <class F> void parallelRegion(int wanted, F &&body) {
  const int threads = inParallelRegion() ? 1 : std::max(1, std::min(wanted, teamSize()));
  if (threads == 1) {
    body(0, 1);
    return;
  }
  struct Ctx {
    F *body;
    int threads;
  } ctx{&body, threads};
  detail::runOnTeam(
      threads, [](void *p, int t) { (*static_cast<Ctx *>(p)->body)(t, static_cast<Ctx *>(p)->threads); },
      &ctx);
}

/// body(begin, end) over contiguous ranges covering [0, n), one range per
/// team thread: thread t of T gets [t c, min(n, (t + 1) c)) with
/// c = ceil(n / T), OpenMP's schedule(static). Runs body(0, n) on the caller
/// when `parallel` is false or n < 2.
template <class F> void parallelFor(int64_t n, bool parallel, F &&body) {
  if (n <= 0)
    return;
  if (!parallel || n < 2 || inParallelRegion() || teamSize() == 1) {
    body(int64_t(0), n);
    return;
  }
  const int threads = int(std::min<int64_t>(n, teamSize()));
  const int64_t chunk = (n + threads - 1) / threads;
  parallelRegion(threads, [&](int t, int) {
    const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin < end)
      body(begin, end);
  });
}

/// body(i) for every i in [0, n), claimed `grain` at a time and in order
/// from a shared counter by the team's threads: for items of uneven cost.
/// Which thread runs an item varies; kernels use it only where each item
/// writes its own outputs.
template <class F> void parallelForDynamic(int64_t n, int64_t grain, bool parallel, F &&body) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(1, grain);
  if (!parallel || n <= grain || inParallelRegion() || teamSize() == 1) {
    for (int64_t i = 0; i < n; ++i)
      body(i);
    return;
  }
  std::atomic<int64_t> next{0};
  const int threads = int(std::min<int64_t>((n + grain - 1) / grain, teamSize()));
  parallelRegion(threads, [&](int, int) {
    for (int64_t begin = next.fetch_add(grain, std::memory_order_relaxed); begin < n;
         begin = next.fetch_add(grain, std::memory_order_relaxed))
      for (int64_t i = begin, end = std::min(n, begin + grain); i < end; ++i)
        body(i);
  });
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_PARALLEL_H
