//===- Device.h - the device under the CUDA backend -------------*- C++ -*-===//
//
// The CUDA backend (CudaBackend.cpp) turns a plan's CUDA program into calls
// on a Device: memory, copies, launches of generated kernels, cuBLASLt
// GEMMs, library kernels and graph capture. Two implementations:
//
//  - createCudaDevice(): a real GPU through the CUDA driver API, NVRTC
//    (compiled for the device's architecture, cached on disk), cuBLASLt and
//    CUDA graphs (runtime/lib/cuda/CudaDevice.cpp; needs the CUDA toolkit).
//  - createEmulatedDevice(): the same program compiled by the host C++
//    compiler against a CUDA emulation header and run on the CPU, blocks one
//    after another and the threads of a block as fibers (so __syncthreads and
//    warp shuffles work). Slow, exact, and available everywhere: it is how CI
//    checks the generated kernels against the CPU backend without a GPU.
//
// All pointers are device addresses (host addresses for the emulation). A
// failing driver/NVRTC/cuBLAS call throws DeviceError naming the call and
// what it was doing (the kernel's name for a launch).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CUDA_DEVICE_H
#define EMBC_RUNTIME_CUDA_DEVICE_H

#include "embc/runtime/Plan.h"
#include "embc/runtime/cuda/KernelAbi.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::cuda {

/// A CUDA, NVRTC, cuBLASLt or emulation failure.
class DeviceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A row-major GEMM: C (m x n, row stride ldc) = alpha * op(A) op(B) + beta * C,
/// op(A) m x k (A stored k x m when transA), op(B) k x n (B stored n x k when
/// transB); lda/ldb are the stored matrices' row strides in elements. A and B
/// are `abType` (f32, bf16 or f16; C and the bias are always f32, the
/// accumulation is f32). With batch > 1, matrix i of A/B/C starts strideA/B/C
/// elements after matrix i - 1.
///
/// `epilogue`, applied to each element of alpha * op(A) op(B) + beta * C:
///   none; bias (+ bias[col]); relu; relu_bias (relu(. + bias[col])); or
///   bgradb: C as `none`, and besides bias[j] = sum over i < k of B[i][j]
///   (B not transposed): the bias gradient of dW = X^T dZ, computed with
///   the GEMM, written over `bias` (not accumulated).
/// A GemmSpec is read from and written to JSON (CudaLaunch::params) by
/// gemmFromJson/gemmToJson below.
struct GemmSpec {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  GemmEpilogue epilogue = GemmEpilogue::None;
  DType abType = DType::F32; ///< F32, BF16 or F16
  int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
};
/// JSON keys: m n k trans_a trans_b lda ldb ldc alpha beta epilogue ab_type
/// batch stride_a stride_b stride_c (all present).
inline nlohmann::json gemmToJson(const GemmSpec &g) {
  return {{"m", g.m},           {"n", g.n},           {"k", g.k},
          {"trans_a", g.transA}, {"trans_b", g.transB}, {"lda", g.lda},
          {"ldb", g.ldb},       {"ldc", g.ldc},       {"alpha", g.alpha},
          {"beta", g.beta},     {"epilogue", enumString(g.epilogue)}, {"ab_type", enumString(g.abType)},
          {"batch", g.batch},   {"stride_a", g.strideA}, {"stride_b", g.strideB},
          {"stride_c", g.strideC}};
}
/// Throws DeviceError naming a missing or mistyped key or a bad value.
GemmSpec gemmFromJson(const nlohmann::json &params);

/// Library kernels (hand-written, runtime/lib/cuda/LibraryKernels.cu; the
/// emulation has a CPU version of each), by CudaLaunch::entry:
///
///  - `sort_pairs`, args [keys_in (i64), values_in (i32), keys_out (i64),
///    values_out (i32)], params {"count": C, "key_bits": b}: stable ascending
///    sort of all C (key, value) pairs by the low b bits of the key (keys
///    must be < 2^b). Stable, so equal keys keep their input order: the
///    codegen pads unused entries with key 2^b - 1 and relies on it for a
///    deterministic reduction order.
///  - `exclusive_scan`, args [in (i32), out (i32), total (i64, one)],
///    params {"count": C}: out[i] = in[0] + ... + in[i-1], *total = the sum
///    of all C.
///
/// A library kernel's scratch (CUB temporary storage) belongs to the device.

/// One compiled kernel of the loaded program.
using KernelHandle = int32_t;
/// A GEMM or library call prepared once at bind time.
using PreparedHandle = int32_t;

class Device {
public:
  virtual ~Device();

  /// For logs: "NVIDIA H200 (sm_90)", "emulated CUDA on the CPU".
  virtual std::string description() const = 0;
  /// The architecture the program is compiled for ("sm_90").
  virtual std::string arch() const = 0;

  /// Compiles `source` (the plan's CudaProgram::source) and loads it; throws
  /// DeviceError with the compiler's log on failure. Called once.
  virtual void loadProgram(const std::string &source) = 0;
  /// A kernel of the loaded program; throws DeviceError when it is missing.
  virtual KernelHandle kernel(const std::string &entry) = 0;
  virtual PreparedHandle prepareGemm(const GemmSpec &spec) = 0;
  virtual PreparedHandle prepareLibrary(const std::string &name,
                                        const nlohmann::json &params) = 0;

  /// Zeroed device memory, 256-byte aligned; released with the device.
  virtual std::byte *allocate(size_t bytes) = 0;
  /// Page-locked host memory for staging (plain memory when emulated),
  /// zeroed; released with the device.
  virtual std::byte *allocateHost(size_t bytes) = 0;

  /// Copies, in stream order. toDevice returns once `src` may be reused
  /// (a staging copy, or the copy itself has finished); toHost returns when
  /// the bytes are in `dst`.
  virtual void toDevice(std::byte *dst, const void *src, size_t bytes) = 0;
  virtual void toHost(void *dst, const std::byte *src, size_t bytes) = 0;
  virtual void zero(std::byte *dst, size_t bytes) = 0;
  /// Device to device, in stream order (collectives stage their send data).
  virtual void copy(std::byte *dst, const std::byte *src, size_t bytes) = 0;

  /// Stream-ordered work. `name` is the plan kernel's op, for error messages.
  virtual void launch(KernelHandle kernel, const int64_t grid[3], int64_t block,
                      int64_t shared, const EmbArgs &args, const char *name) = 0;
  /// args: A, B, C[, bias]
  virtual void gemm(PreparedHandle gemm, void *const *args, const char *name) = 0;
  virtual void library(PreparedHandle call, void *const *args, const char *name) = 0;

  /// The compute stream as a cudaStream_t, for NCCL to enqueue the plan's
  /// collectives in order with the kernels; nullptr for the emulation, whose
  /// work is done by the time a call returns (outside a graph capture).
  virtual void *nativeStream() = 0;

  /// Waits for all queued work; throws DeviceError for an asynchronous fault.
  virtual void synchronize() = 0;

  /// Input prefetch: a second stream that carries host-to-device copies
  /// while the compute stream (everything above) runs, ordered against it
  /// by events. `src` must be page-locked (allocateHost) and stay unchanged
  /// until the copy is done (hostWaits on an event recorded after it).
  virtual void uploadAsync(std::byte *dst, const std::byte *src, size_t bytes) = 0;
  /// A reusable event; recording it again replaces the earlier record.
  virtual int32_t createEvent() = 0;
  /// The event fires when the compute (upload) work queued so far is done.
  virtual void recordCompute(int32_t event) = 0;
  virtual void recordUploads(int32_t event) = 0;
  /// Compute (upload) work queued from now on starts after the event.
  virtual void computeWaits(int32_t event) = 0;
  virtual void uploadsWait(int32_t event) = 0;
  /// Blocks the calling thread until the event has fired.
  virtual void hostWaits(int32_t event) = 0;
  /// An event as createEvent's that also keeps when it fired (recorded with
  /// recordCompute), for secondsBetween.
  virtual int32_t createTimingEvent() = 0;
  /// Device time between two timing events' firing; waits for `end`.
  virtual double secondsBetween(int32_t start, int32_t end) = 0;

  /// Graphs: everything queued between beginCapture and endCapture is
  /// recorded instead of run (and not run); replay(g) runs it again with the
  /// same pointers and sizes. Returns the graph's id.
  virtual void beginCapture() = 0;
  virtual int32_t endCapture() = 0;
  virtual void replay(int32_t graph) = 0;
};

/// Whether a CUDA device can be used; `why` says why not (no driver, no
/// device, built without the CUDA toolkit).
bool cudaDeviceAvailable(std::string &why);
/// Device `ordinal`; throws DeviceError when there is none.
std::unique_ptr<Device> createCudaDevice(int ordinal);
/// The GPU the `localRank`-th rank of a host takes: localRank modulo the
/// devices the host has (0 when it has none: createCudaDevice then says so).
int cudaDeviceOrdinalFor(int localRank);
/// The CPU emulation. Compiles with $EMBC_HOST_CXX (default c++), caching
/// the shared object under the cache directory (cacheDirectory()).
std::unique_ptr<Device> createEmulatedDevice();

/// Where compiled programs are cached: $EMBC_CACHE_DIR, else
/// $XDG_CACHE_HOME/embc, else ~/.cache/embc (created on demand).
std::string cacheDirectory();

} // namespace embc::runtime::cuda

#endif // EMBC_RUNTIME_CUDA_DEVICE_H
