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

/// The body of the checks below: the status `VALUE` of type `TYPE` and,
/// unless it is `OK`, detail::THROW(TEXT, status, WHAT). TEXT is the
/// caller's #CALL, spelled before any macro in the call expands.
#define EMB_STATUS_CHECK_(TYPE, OK, THROW, TEXT, VALUE, WHAT)                                      \
  do {                                                                                             \
    TYPE emb_status_ = (VALUE);                                                                    \
    if (emb_status_ != OK)                                                                         \
      ::embc::runtime::cuda::detail::THROW(TEXT, emb_status_, (WHAT));                             \
  } while (0)

/// `WHAT` is anything that converts to std::string; it is evaluated only on
/// failure, so building a message costs nothing on the hot path.
#define EMB_CUDA_CHECK(CALL, WHAT)                                                                 \
  EMB_STATUS_CHECK_(cudaError_t, cudaSuccess, throwCuda, #CALL, CALL, WHAT)
#define EMB_NVRTC_CHECK(CALL, WHAT)                                                                \
  EMB_STATUS_CHECK_(nvrtcResult, NVRTC_SUCCESS, throwNvrtc, #CALL, CALL, WHAT)
#define EMB_CUBLAS_CHECK(CALL, WHAT)                                                               \
  EMB_STATUS_CHECK_(cublasStatus_t, CUBLAS_STATUS_SUCCESS, throwCublas, #CALL, CALL, WHAT)

#endif // EMBC_RUNTIME_LIB_CUDA_CUDACHECK_H
