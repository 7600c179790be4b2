//===- Parallel.h - the CPU backend's one team of threads -------*- C++ -*-===//
//
// Every parallel loop of the CPU kernels runs on one persistent team of
// threads (ThreadPool.cpp). The team replaces OpenMP's parallel regions for
// reasons measured on the 2-core CI machine (docs/performance.md, "One team
// of threads"):
//
//  - Wait policy. libgomp reads its spin policy from the environment once,
//    at process start, and by default spins for ~300k iterations after each
//    region; the data threads and any other process on the machine then fight
//    spinning threads for the cores (two_tower: 413k samples/s on 1 thread,
//    41k on 2). The team spins for a bounded time (default 50 us) and then
//    sleeps on a futex, and spins not at all when it has more threads than
//    the CPUs the process may use.
//  - No waiting for a thread that is not running. A region is a set of
//    tasks that the caller and whichever team threads are awake claim from a
//    shared counter; a thread the OS has descheduled (another process wants
//    the core) finds the region finished when it wakes and the caller never
//    waits for it. OpenMP's static schedule instead stalls every region on
//    its slowest thread.
//  - One pool. The BLAS runs single-threaded inside the team's GEMM tasks
//    (Gemm.h), so there is no second pool of threads spinning beside ours.
//
// Results never depend on which thread runs a task, nor on the team size:
// the kernels write each output element from one task in a fixed order.
// A region started from inside a region (a kernel called by a kernel, or any
// thread other than the one holding the team) runs serially on the calling
// thread: there is no nesting and no oversubscription.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_PARALLEL_H
#define EMBC_RUNTIME_CPU_PARALLEL_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

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
/// Runs fn(ctx, task) once for every task in [0, tasks): the caller and the
/// team threads that are awake claim tasks in order from a shared counter.
/// Returns when every task is done; rethrows the exception of the lowest
/// task that threw. Serial (tasks in order on the caller) inside a region or
/// while another thread holds the team.
void runTasks(int64_t tasks, void (*fn)(void *, int64_t), void *ctx);
} // namespace detail

/// Tasks per team thread that parallelFor cuts a loop into: enough that a
/// thread that is late (descheduled) leaves its share to the others, few
/// enough that claiming costs nothing.
inline constexpr int64_t kTasksPerThread = 4;

/// Runs body(t, T) once for each t in [0, T), T = min(wanted, teamSize())
/// (1 inside a region), each t on some team thread (the caller included).
template <class F> void parallelRegion(int wanted, F &&body) {
  const int tasks = inParallelRegion() ? 1 : std::max(1, std::min(wanted, teamSize()));
  if (tasks == 1) {
    body(0, 1);
    return;
  }
  struct Ctx {
    F *body;
    int tasks;
  } ctx{&body, tasks};
  detail::runTasks(
      tasks,
      [](void *p, int64_t t) {
        auto *c = static_cast<Ctx *>(p);
        (*c->body)(int(t), c->tasks);
      },
      &ctx);
}

/// body(begin, end) over contiguous ranges that cover [0, n) once, at most
/// kTasksPerThread per team thread, run by whichever threads claim them.
/// Runs body(0, n) on the caller when `parallel` is false or n < 2.
template <class F> void parallelFor(int64_t n, bool parallel, F &&body) {
  if (n <= 0)
    return;
  if (!parallel || n < 2 || inParallelRegion() || teamSize() == 1) {
    body(int64_t(0), n);
    return;
  }
  const int64_t tasks = std::min<int64_t>(n, teamSize() * kTasksPerThread);
  const int64_t chunk = (n + tasks - 1) / tasks;
  struct Ctx {
    F *body;
    int64_t n, chunk;
  } ctx{&body, n, chunk};
  detail::runTasks(
      (n + chunk - 1) / chunk,
      [](void *p, int64_t t) {
        auto *c = static_cast<Ctx *>(p);
        const int64_t begin = t * c->chunk;
        (*c->body)(begin, std::min(c->n, begin + c->chunk));
      },
      &ctx);
}

/// body(i) for every i in [0, n), in tasks of `grain` consecutive items
/// claimed in order by the team's threads: for items of uneven cost.
template <class F> void parallelForDynamic(int64_t n, int64_t grain, bool parallel, F &&body) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(1, grain);
  if (!parallel || n <= grain || inParallelRegion() || teamSize() == 1) {
    for (int64_t i = 0; i < n; ++i)
      body(i);
    return;
  }
  struct Ctx {
    F *body;
    int64_t n, grain;
  } ctx{&body, n, grain};
  detail::runTasks(
      (n + grain - 1) / grain,
      [](void *p, int64_t t) {
        auto *c = static_cast<Ctx *>(p);
        for (int64_t i = t * c->grain, end = std::min(c->n, i + c->grain); i < end; ++i)
          (*c->body)(i);
      },
      &ctx);
}

/// One memcpy of parallelCopies.
struct CopyRange {
  void *dst;
  const void *src;
  size_t bytes;
};

/// Several memcpys in one region of the team, cut into chunks the threads
/// claim: one thread's copy runs at a fraction of the memory's bandwidth,
/// and waking the team once per buffer costs more than the copy of a small
/// one (the MLPerf DLRM's batch is 31 MB in 54 input buffers of at most
/// 3.4 MB: one region per buffer left the copy at 5 ms a step on an H100
/// machine's 16 cores, beside a 12 ms GPU step).
inline void parallelCopies(const CopyRange *copies, size_t count) {
  constexpr size_t kChunk = size_t(256) << 10; // per chunk: claiming costs ~1 us
  size_t total = 0;
  for (size_t i = 0; i < count; ++i)
    total += copies[i].bytes;
  if (total < 2 * kChunk) {
    for (size_t i = 0; i < count; ++i)
      if (copies[i].bytes > 0) // memcpy's pointers must be valid even for no bytes
        std::memcpy(copies[i].dst, copies[i].src, copies[i].bytes);
    return;
  }
  std::vector<CopyRange> chunks;
  chunks.reserve(total / kChunk + count);
  for (size_t i = 0; i < count; ++i)
    for (size_t at = 0; at < copies[i].bytes; at += kChunk)
      chunks.push_back({static_cast<std::byte *>(copies[i].dst) + at,
                        static_cast<const std::byte *>(copies[i].src) + at,
                        std::min(kChunk, copies[i].bytes - at)});
  parallelFor(int64_t(chunks.size()), true, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      std::memcpy(chunks[size_t(c)].dst, chunks[size_t(c)].src, chunks[size_t(c)].bytes);
  });
}

/// memcpy of `bytes` on the team when it is large enough to pay for waking it.
inline void parallelCopy(void *dst, const void *src, size_t bytes) {
  const CopyRange one{dst, src, bytes};
  parallelCopies(&one, 1);
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_PARALLEL_H
