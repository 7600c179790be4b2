//===- Fibers.h - cooperative fibers for the emulated CUDA device -*- C++ -*-===//
//
// The emulated device runs the threads of one CUDA block as fibers on one OS
// thread: each thread runs until it reaches a __syncthreads or a warp shuffle
// and then yields to the block scheduler (EmulatedDevice.cpp), which resumes
// the others until all have arrived. That makes barriers and shuffles exact
// without OS threads, locks or nondeterminism.
//
// Switches are the whole cost of a barrier, so on x86-64 they are a dozen
// instructions of hand-written assembly (callee-saved registers, the stack
// pointer, MXCSR and the x87 control word); elsewhere ucontext's
// swapcontext (which also saves the signal mask: a system call per switch).
// Stacks are mapped once with a guard page below each one (an overflow
// faults instead of corrupting the neighbour) and reused by every launch.
//
// Private to EmbCudaDevice.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_FIBERS_H
#define EMBC_RUNTIME_LIB_CUDA_FIBERS_H

#include <cstddef>
#include <memory>
#include <vector>

namespace embc::runtime::cuda::emu {

/// A set of fibers run by one scheduler (the caller of resume()). Not
/// thread-safe: one OS thread drives a group at a time.
class FiberGroup {
public:
  /// What each fiber runs: entry(arg, index). It may call yield() and returns
  /// when the fiber is done. It must not throw (nothing catches on a fiber).
  using Entry = void (*)(void *arg, int index);

  /// `stackBytes` per fiber (rounded up to whole pages).
  explicit FiberGroup(size_t stackBytes = size_t(128) << 10);
  ~FiberGroup();
  FiberGroup(const FiberGroup &) = delete;
  FiberGroup &operator=(const FiberGroup &) = delete;

  /// Sets up `count` fresh fibers, each to call entry(arg, i) when first
  /// resumed. Fibers of an earlier start() that never finished are dropped
  /// (their stacks are reused as they are: nothing on them is destroyed).
  void start(int count, Entry entry, void *arg);
  /// From the scheduler: runs fiber i until it yields or returns; true when
  /// it has returned (it must not be resumed again).
  bool resume(int i);
  /// From the running fiber: back to the scheduler, which resumes it later.
  void yield();

  size_t stackBytes() const { return stackBytes_; }

  struct Impl; // the platform's saved contexts

private:
  void reserve(int count);
  [[noreturn]] static void fiberMain();

  size_t stackBytes_, guardBytes_;
  std::byte *stacks_ = nullptr; // capacity_ * (guard + stack), mmap'd
  size_t mappedBytes_ = 0;
  int capacity_ = 0;
  int count_ = 0;
  int current_ = -1;
  Entry entry_ = nullptr;
  void *arg_ = nullptr;
  std::unique_ptr<Impl> impl_;
};

} // namespace embc::runtime::cuda::emu

#endif // EMBC_RUNTIME_LIB_CUDA_FIBERS_H
