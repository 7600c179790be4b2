//===- BlasCore.h - OpenBLAS kernels for the CPU it runs on ----*- C++ -*-===//
//
// OpenBLAS chooses its GEMM kernels once, when it is loaded, from the CPU
// models it knows. One that predates the CPU falls back to generic SSE3
// ("Prescott") kernels: Debian 12's OpenBLAS 0.3.21 does so on Sapphire
// Rapids, where its sgemm then runs at 12-17 GFLOP/s on one core instead of
// 80-90 with its SkylakeX (AVX-512) kernels (docs/performance.md). The
// kernels can only be chosen before the library loads, through
// OPENBLAS_CORETYPE, so a tool that finds the fallback sets it and starts
// itself again, once, before doing anything else.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_BLASCORE_H
#define EMBC_RUNTIME_CPU_BLASCORE_H

#include <string>

namespace embc::runtime::cpu {

/// The OpenBLAS kernels in use ("SkylakeX", "Haswell", "Prescott", ...), or
/// "" when the BLAS is not OpenBLAS.
std::string blasCore();

/// The OpenBLAS core type this CPU should use when the loaded kernels are
/// an older fallback ("SkylakeX" with AVX-512, "Haswell" with AVX2 and FMA),
/// or "" when they are right already (or the BLAS is not OpenBLAS).
std::string betterBlasCore();

/// If betterBlasCore() names one and the user has not set OPENBLAS_CORETYPE,
/// sets it and executes the program again with the same arguments (once:
/// EMBC_BLAS_CORE_SET marks the second start). Call first thing in main.
/// Returns only when nothing needs to change or the exec failed.
void useBestBlasKernels(char **argv);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_BLASCORE_H
