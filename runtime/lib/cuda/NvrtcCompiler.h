//===- NvrtcCompiler.h - plan programs to CUBIN with NVRTC ------*- C++ -*-===//
//
// The one place that decides how a plan's CUDA program is compiled: the real
// device uses it (with the on-disk cache), and the NVRTC compile test
// (test/cuda/emb-nvrtc-check) uses it without a GPU, so the test compiles
// with exactly the options the runtime uses.
//
// Needs only NVRTC (no driver, no GPU). Private to runtime/lib/cuda and its
// tests.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_NVRTCCOMPILER_H
#define EMBC_RUNTIME_LIB_CUDA_NVRTCCOMPILER_H

#include <string>
#include <vector>

namespace embc::runtime::cuda {

/// "sm_90" for compute capability 9.0.
std::string smArch(int major, int minor);

/// The NVRTC options for `arch` ("sm_90"): C++17, every function a device
/// function by default, line info for profilers, and no floating-point
/// shortcuts: the kernels must match the CPU backend bit for bit where the
/// catalogue says so (no --use_fast_math, no FMA contraction).
std::vector<std::string> nvrtcOptions(const std::string &arch);

/// "13.0": the NVRTC library's version (part of the cache key).
std::string nvrtcVersionString();

/// The architectures this NVRTC can compile to, as "sm_XY".
std::vector<std::string> nvrtcSupportedArchs();

/// Compiles `source` to a CUBIN for `arch`. On failure throws DeviceError
/// with NVRTC's log (and the path of a copy of the source when `keepFailed`
/// names a directory to write it to). `log` receives warnings on success.
/// `extraOptions` come after the runtime's own (emb-nvrtc-check asks ptxas
/// for its resource report this way).
std::vector<char> compileCubin(const std::string &source, const std::string &arch,
                               const std::string &programName, std::string *log = nullptr,
                               const std::string &keepFailed = "",
                               const std::vector<std::string> &extraOptions = {});

/// compileCubin through the cache cacheDirectory()/nvrtc/<key>-<arch>.cubin,
/// key = XXH3-128 of (source, options, NVRTC version). `cachedPath` receives
/// the file's path; `hit` whether it was read rather than compiled. Cache
/// write failures are not errors (the program is still returned).
std::vector<char> cachedCubin(const std::string &source, const std::string &arch, bool &hit,
                              std::string &cachedPath);

/// Drops a cache entry (after the driver refused to load it).
void forgetCachedCubin(const std::string &cachedPath);

} // namespace embc::runtime::cuda

#endif // EMBC_RUNTIME_LIB_CUDA_NVRTCCOMPILER_H
