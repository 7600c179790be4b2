//===- CpuBackend.h - plans on the CPU ---------------------------*- C++ -*-===//
//
// The CPU backend (runtime/lib/backends/cpu): binds each plan kernel to the
// CPU kernels (cpu/Kernels.h) through a table keyed by KernelOp, on one
// team of threads (cpu/Parallel.h) whose size it measures while training
// (TeamTuner.h). Programs normally reach it by name (Registry.h).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_BACKENDS_CPUBACKEND_H
#define EMBC_RUNTIME_BACKENDS_CPUBACKEND_H

#include "embc/runtime/exec/Executor.h"

#include <memory>

namespace embc::runtime {

/// `threads` is the most threads it uses, 0 meaning every CPU the process
/// may use; it trains with the fastest team size up to that, measured
/// (TeamTuner.h).
std::unique_ptr<Backend> createCpuBackend(int threads);
/// Whether the CPU backend has a binding for `op` (a unit test walks the
/// kernel catalogue with it: every kernel must have one).
bool cpuBackendBinds(KernelOp op);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_BACKENDS_CPUBACKEND_H
