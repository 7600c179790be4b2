//===- EmulatedLibrary.h - cuBLASLt and library kernels on the CPU -*- C++ -*-===//
//
// The emulated device's GEMMs (OpenBLAS, with cuBLASLt's epilogues) and
// library kernels (sort_pairs, exclusive_scan), with the contracts of
// Device.h. Private to EmbCudaDevice.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_EMULATEDLIBRARY_H
#define EMBC_RUNTIME_LIB_CUDA_EMULATEDLIBRARY_H

#include "embc/runtime/cuda/Device.h"

#include <cstdint>
#include <string>
#include <vector>

namespace embc::runtime::cuda::emu {

/// Throws DeviceError for a spec the emulation (and cuBLASLt) cannot run:
/// the checks of gemmFromJson, and bgradb only on a single, untransposed B.
void checkGemm(const GemmSpec &spec);
/// Whether the GEMM takes a fourth argument (the bias).
bool gemmHasBias(const GemmSpec &spec);
/// Runs a checked GEMM on args A, B, C[, bias]. `scratch` holds the f32
/// copies of 16-bit operands (kept by the caller so repeated calls reuse it).
void runGemm(const GemmSpec &spec, void *const *args, std::vector<float> &scratch);

/// A library call of Device.h, checked at prepare time.
struct LibraryCall {
  enum Kind { SortPairs, ExclusiveScan } kind;
  int64_t count = 0;
  int keyBits = 0; // sort_pairs
};
/// Parses name + params; throws DeviceError naming what is wrong.
LibraryCall prepareLibraryCall(const std::string &name, const nlohmann::json &params);
void runLibraryCall(const LibraryCall &call, void *const *args);

} // namespace embc::runtime::cuda::emu

#endif // EMBC_RUNTIME_LIB_CUDA_EMULATEDLIBRARY_H
