//===- CudaCheck.h - CUDA, NVRTC and cuBLASLt status checks -----*- C++ -*-===//
//
// Every CUDA runtime, NVRTC and cuBLASLt call of the real device goes through
// one of these macros: a failure throws DeviceError naming the call, the
// library's error name and text, and what the device was doing ("launching
// emb_3_lookup for 'lookup'"), so a failure on a remote GPU machine can be
// understood from the message alone.
//
// Private to runtime/lib/cuda (needs the CUDA toolkit headers).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_CUDACHECK_H
#define EMBC_RUNTIME_LIB_CUDA_CUDACHECK_H

#include "embc/runtime/cuda/Device.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <string>

namespace embc::runtime::cuda::detail {

[[noreturn]] inline void throwCuda(const char *call, cudaError_t err, const std::string &what) {
  std::string message = std::string(call) + " failed: " + cudaGetErrorName(err) + " (" +
                        cudaGetErrorString(err) + ")";
  if (!what.empty())
    message += " while " + what;
  // Faults of earlier asynchronous work surface at the next call that
  // synchronises; say so, because the call named above is then innocent.
  if (err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure ||
      err == cudaErrorMisalignedAddress || err == cudaErrorIllegalInstruction ||
      err == cudaErrorHardwareStackError || err == cudaErrorAssert)
    message += "; the fault may come from earlier queued work: rerun with EMBC_CUDA_SYNC=1 to "
               "name the faulting kernel";
  throw DeviceError(message);
}

[[noreturn]] inline void throwNvrtc(const char *call, nvrtcResult res, const std::string &what) {
  std::string message = std::string(call) + " failed: " + nvrtcGetErrorString(res);
  if (!what.empty())
    message += " while " + what;
  throw DeviceError(message);
}

[[noreturn]] inline void throwCublas(const char *call, cublasStatus_t st, const std::string &what) {
  std::string message = std::string(call) + " failed: " + cublasLtGetStatusName(st) + " (" +
                        cublasLtGetStatusString(st) + ")";
  if (!what.empty())
    message += " while " + what;
  throw DeviceError(message);
}

} // namespace embc::runtime::cuda::detail

/// `WHAT` is anything that converts to std::string; it is evaluated only on
/// failure, so building a message costs nothing on the hot path.
#define EMB_CUDA_CHECK(CALL, WHAT)                                                                 \
  do {                                                                                             \
    cudaError_t emb_err_ = (CALL);                                                                 \
    if (emb_err_ != cudaSuccess)                                                                   \
      ::embc::runtime::cuda::detail::throwCuda(#CALL, emb_err_, (WHAT));                           \
  } while (0)

#define EMB_NVRTC_CHECK(CALL, WHAT)                                                                \
  do {                                                                                             \
    nvrtcResult emb_res_ = (CALL);                                                                 \
    if (emb_res_ != NVRTC_SUCCESS)                                                                 \
      ::embc::runtime::cuda::detail::throwNvrtc(#CALL, emb_res_, (WHAT));                          \
  } while (0)

#define EMB_CUBLAS_CHECK(CALL, WHAT)                                                               \
  do {                                                                                             \
    cublasStatus_t emb_st_ = (CALL);                                                               \
    if (emb_st_ != CUBLAS_STATUS_SUCCESS)                                                          \
      ::embc::runtime::cuda::detail::throwCublas(#CALL, emb_st_, (WHAT));                          \
  } while (0)

#endif // EMBC_RUNTIME_LIB_CUDA_CUDACHECK_H
