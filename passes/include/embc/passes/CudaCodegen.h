//===- CudaCodegen.h - a plan's kernels as CUDA C++ -------------*- C++ -*-===//
//
// The CUDA target of -emb-to-plan: every kernel of the plan's step and
// update becomes a list of device operations (Plan::cuda, a CudaProgram):
// generated CUDA C++ specialised on the kernel's constants (dims, dtypes,
// pooling, table count, optimizer, vector width), cuBLASLt GEMMs with
// epilogues, and calls to a few hand-written library kernels. The source is
// one translation unit that NVRTC compiles for the device at load.
//
// Works on the plan alone (no MLIR), so unit tests build plans by hand.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_CUDACODEGEN_H
#define EMBC_PASSES_CUDACODEGEN_H

#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <cstdint>
#include <string>
#include <vector>

namespace embc::codegen {

struct CudaCodegenOptions {
  /// Dynamic padding (CudaLengthVariant): lower the sequence kernels again
  /// at each of cudaVariantLengths(max_len) when the plan has one sequence
  /// feature whose kernels all pad per batch.
  bool lengthVariants = true;
};

/// Fills plan.cuda. Returns false, with `error` naming the kernel (schedule,
/// index and op) and what is missing, when a kernel has no CUDA lowering or
/// its attributes are outside what the lowering supports.
bool generateCuda(runtime::Plan &plan, std::string &error, const CudaCodegenOptions &options);
inline bool generateCuda(runtime::Plan &plan, std::string &error) {
  return generateCuda(plan, error, CudaCodegenOptions{});
}

/// The lengths below `maxLen` the sequence kernels get variants for:
/// multiples of max_len / 8 rounded up to a multiple of 8 (at least 8). A
/// batch then runs at most max_len / 8 positions past its longest sequence,
/// and the program holds at most 7 variants.
std::vector<int64_t> cudaVariantLengths(int64_t maxLen);

/// Whether the CUDA target lowers `op` (a unit test checks it against the
/// catalogue's KernelSpec::cuda for every kernel).
bool cudaLowers(runtime::KernelOp op);

} // namespace embc::codegen

#endif // EMBC_PASSES_CUDACODEGEN_H
