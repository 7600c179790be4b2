//===- CudaDevice.cpp - the Device on a real GPU -------------------------===//
//
// One GPU through the CUDA runtime API: its primary context, one
// non-blocking stream that every operation is queued on (so stream order is
// program order), the plan's program compiled by NVRTC for this GPU's
// architecture and loaded as a context-independent library
// (cudaLibraryLoadData / cudaLibraryGetKernel / cudaLaunchKernel), GEMMs on
// cuBLASLt (CudaGemm.cpp), the library calls on CUB (LibraryKernels.cu) and
// CUDA graphs by stream capture.
//
// Why the runtime API and not the driver API: the CUDA runtime is linked
// statically (CUDA::cudart_static) and opens libcuda.so.1 itself when first
// used, so embrun starts - and runs plans on the CPU - on machines with no
// NVIDIA driver at all; linking libcuda directly would make the loader refuse
// to start it there (the toolkit ships only a link-time libcuda.so). The runtime API
// has everything the driver API offered here, including loading CUBINs.
// cudaDeviceAvailable dlopen()s libcuda.so.1 first only to say "no driver"
// rather than the runtime's misleading "driver version is insufficient".
//
// Every call is checked (CudaCheck.h). EMBC_CUDA_SYNC=1 waits after every
// launch, GEMM and library call (outside graph capture) so an asynchronous
// fault names the kernel that caused it.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cuda/Device.h"

#include "CudaCheck.h"
#include "CudaGemm.h"
#include "LibraryKernels.h"
#include "NvrtcCompiler.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <unordered_map>

using namespace embc::runtime::cuda;
using nlohmann::json;

namespace {

/// cuBLASLt's workspace: what NVIDIA recommends on Hopper for its split-K
/// and stream-K kernels. One for all GEMMs (they run in stream order).
constexpr size_t kGemmWorkspaceBytes = size_t(32) << 20;
/// Each of the two pinned staging buffers of host <-> device copies.
constexpr size_t kStagingBytes = size_t(16) << 20;
/// Dynamic shared memory a kernel gets without opting in.
constexpr int64_t kDefaultSharedBytes = 48 << 10;

std::string bytesText(size_t bytes) {
  char text[32];
  if (bytes >= (size_t(1) << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(size_t(1) << 30));
  else
    std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(size_t(1) << 20));
  return text;
}

int64_t intParam(const json &params, const char *call, const char *key, int64_t lo, int64_t hi) {
  auto it = params.find(key);
  if (it == params.end() || !it->is_number_integer())
    throw DeviceError(std::string("library call '") + call + "': missing integer parameter '" +
                      key + "'");
  int64_t v = it->get<int64_t>();
  if (v < lo || v > hi)
    throw DeviceError(std::string("library call '") + call + "': parameter '" + key + "' is " +
                      std::to_string(v) + ", outside [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  return v;
}

class CudaDevice final : public Device {
public:
  explicit CudaDevice(int ordinal);
  ~CudaDevice() override;

  std::string description() const override { return description_; }
  std::string arch() const override { return arch_; }

  void loadProgram(const std::string &source) override;
  KernelHandle kernel(const std::string &entry) override;
  PreparedHandle prepareGemm(const GemmSpec &spec) override;
  PreparedHandle prepareLibrary(const std::string &name, const json &params) override;

  std::byte *allocate(size_t bytes) override;
  std::byte *allocateHost(size_t bytes) override;

  void toDevice(std::byte *dst, const void *src, size_t bytes) override;
  void toHost(void *dst, const std::byte *src, size_t bytes) override;
  void zero(std::byte *dst, size_t bytes) override;
  void copy(std::byte *dst, const std::byte *src, size_t bytes) override;
  void *nativeStream() override { return stream_; }

  void launch(KernelHandle kernel, const int64_t grid[3], int64_t block, int64_t shared,
              const EmbArgs &args, const char *name) override;
  void gemm(PreparedHandle gemm, void *const *args, const char *name) override;
  void library(PreparedHandle call, void *const *args, const char *name) override;

  void synchronize() override;

  void uploadAsync(std::byte *dst, const std::byte *src, size_t bytes) override;
  int32_t createEvent() override { return newEvent(cudaEventDisableTiming); }
  int32_t createTimingEvent() override { return newEvent(cudaEventDefault); }
  double secondsBetween(int32_t start, int32_t end) override;
  void recordCompute(int32_t event) override { record(event, stream_, "compute"); }
  void recordUploads(int32_t event) override { record(event, uploadStream_, "upload"); }
  void computeWaits(int32_t event) override { wait(stream_, event, "compute"); }
  void uploadsWait(int32_t event) override { wait(uploadStream_, event, "upload"); }
  void hostWaits(int32_t event) override;

  void beginCapture() override;
  int32_t endCapture() override;
  void replay(int32_t graph) override;

private:
  struct Kernel {
    std::string entry;
    cudaKernel_t handle = nullptr;
    int maxThreads = 1024; ///< per block, given its registers
    int64_t sharedOptIn = kDefaultSharedBytes;
  };
  struct LibraryCall {
    enum Kind { Sort, Scan } kind;
    int64_t count = 0;
    int keyBits = 0;
    size_t tempBytes = 0;
    void *ownTemp = nullptr; ///< null: uses the shared libraryTemp_
  };
  struct Staging {
    void *host = nullptr;
    cudaEvent_t done = nullptr; ///< the last copy through `host` finished
  };
  struct Graph {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
  };

  /// Makes this device current for the calling thread (cheap; needed when
  /// one process drives several GPUs from one thread).
  void use() const { EMB_CUDA_CHECK(cudaSetDevice(ordinal_), "selecting " + description_); }
  void refuseWhileCapturing(const char *what) const {
    if (capturing_)
      throw DeviceError(std::string(what) + " is not allowed while a CUDA graph is captured");
  }
  /// After a failure during capture the stream would stay in capture mode
  /// and refuse all later work: end the capture and drop the graph.
  void abortCapture() noexcept;
  /// Frees everything (the destructor; a failed constructor).
  void release() noexcept;
  template <typename F> void queued(F &&f) {
    try {
      f();
    } catch (...) {
      abortCapture();
      throw;
    }
  }
  cudaEvent_t event(int32_t e) const {
    if (e < 0 || size_t(e) >= events_.size())
      throw DeviceError("no CUDA event " + std::to_string(e));
    return events_[size_t(e)];
  }
  int32_t newEvent(unsigned flags);
  void record(int32_t e, cudaStream_t stream, const char *which);
  void wait(cudaStream_t stream, int32_t e, const char *which);
  void syncIfDebugging(const std::string &what) {
    if (syncEach_ && !capturing_)
      EMB_CUDA_CHECK(cudaStreamSynchronize(stream_), what);
  }

  int ordinal_;
  std::string description_, arch_;
  bool syncEach_ = false;
  cudaStream_t stream_ = nullptr;       ///< compute: kernels, GEMMs, copies
  cudaStream_t uploadStream_ = nullptr; ///< input prefetch (uploadAsync)
  std::vector<cudaEvent_t> events_;
  cublasLtHandle_t lt_ = nullptr;
  cudaLibrary_t program_ = nullptr;
  std::vector<Kernel> kernels_;
  std::unordered_map<std::string, KernelHandle> kernelByEntry_;
  std::vector<std::unique_ptr<LtGemm>> gemms_;
  void *gemmWorkspace_ = nullptr;
  std::vector<LibraryCall> calls_;
  void *libraryTemp_ = nullptr;
  size_t libraryTempBytes_ = 0;
  std::vector<void *> deviceMemory_, hostMemory_;
  Staging staging_[2];
  int nextStaging_ = 0;
  std::vector<Graph> graphs_;
  bool capturing_ = false;
};

CudaDevice::CudaDevice(int ordinal) : ordinal_(ordinal) {
  const char *sync = std::getenv("EMBC_CUDA_SYNC");
  syncEach_ = sync && *sync && std::string(sync) != "0";
  int count = 0;
  EMB_CUDA_CHECK(cudaGetDeviceCount(&count), "counting CUDA devices");
  if (ordinal < 0 || ordinal >= count)
    throw DeviceError("there is no CUDA device " + std::to_string(ordinal) + " (this machine has " +
                      std::to_string(count) + ")");
  description_ = "CUDA device " + std::to_string(ordinal);
  use();
  cudaDeviceProp props{};
  EMB_CUDA_CHECK(cudaGetDeviceProperties(&props, ordinal), "querying " + description_);
  arch_ = smArch(props.major, props.minor);
  description_ = std::string(props.name) + " (" + arch_ + ", " +
                 std::to_string(props.multiProcessorCount) + " SMs, " +
                 bytesText(props.totalGlobalMem) + ")";
  const std::string what = "setting up " + description_;
  // A constructor that throws runs no destructor: release() frees what
  // was made.
  try {
    EMB_CUDA_CHECK(cudaFree(nullptr), what); // creates the primary context now, not mid-run
    EMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), what);
    EMB_CUDA_CHECK(cudaStreamCreateWithFlags(&uploadStream_, cudaStreamNonBlocking), what);
    EMB_CUBLAS_CHECK(cublasLtCreate(&lt_), what);
    for (Staging &s : staging_) {
      EMB_CUDA_CHECK(cudaHostAlloc(&s.host, kStagingBytes, cudaHostAllocDefault), what);
      EMB_CUDA_CHECK(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming), what);
    }
  } catch (...) {
    release();
    throw;
  }
}

CudaDevice::~CudaDevice() { release(); }

void CudaDevice::release() noexcept {
  // Best effort and silent: after a device fault every call fails, and a
  // destructor must not throw.
  if (cudaSetDevice(ordinal_) != cudaSuccess)
    return;
  if (capturing_)
    abortCapture();
  if (stream_)
    cudaStreamSynchronize(stream_);
  if (uploadStream_)
    cudaStreamSynchronize(uploadStream_);
  for (cudaEvent_t e : events_)
    cudaEventDestroy(e);
  events_.clear();
  for (Graph &g : graphs_) {
    if (g.exec)
      cudaGraphExecDestroy(g.exec);
    if (g.graph)
      cudaGraphDestroy(g.graph);
  }
  graphs_.clear();
  gemms_.clear();
  if (lt_)
    cublasLtDestroy(lt_);
  lt_ = nullptr;
  if (program_)
    cudaLibraryUnload(program_);
  program_ = nullptr;
  for (LibraryCall &c : calls_)
    if (c.ownTemp)
      cudaFree(c.ownTemp);
  calls_.clear();
  for (void *p : {libraryTemp_, gemmWorkspace_})
    if (p)
      cudaFree(p);
  libraryTemp_ = gemmWorkspace_ = nullptr;
  for (void *p : deviceMemory_)
    cudaFree(p);
  deviceMemory_.clear();
  for (void *p : hostMemory_)
    cudaFreeHost(p);
  hostMemory_.clear();
  for (Staging &s : staging_) {
    if (s.done)
      cudaEventDestroy(s.done);
    if (s.host)
      cudaFreeHost(s.host);
    s = Staging{};
  }
  if (stream_)
    cudaStreamDestroy(stream_);
  if (uploadStream_)
    cudaStreamDestroy(uploadStream_);
  stream_ = uploadStream_ = nullptr;
  cudaGetLastError(); // leave no error of ours behind for a later device
}

void CudaDevice::abortCapture() noexcept {
  if (!capturing_)
    return;
  capturing_ = false;
  cudaGraph_t partial = nullptr;
  if (cudaStreamEndCapture(stream_, &partial) == cudaSuccess && partial)
    cudaGraphDestroy(partial);
  cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

void CudaDevice::loadProgram(const std::string &source) {
  use();
  if (program_)
    throw DeviceError("loadProgram: " + description_ + " already has a program");
  bool hit = false;
  std::string path;
  std::vector<char> cubin = cachedCubin(source, arch_, hit, path);
  cudaError_t err =
      cudaLibraryLoadData(&program_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (err != cudaSuccess && hit) {
    // A damaged or foreign cache entry: compile again rather than fail.
    cudaGetLastError();
    program_ = nullptr;
    std::fprintf(stderr, "embc: the cached program %s did not load (%s); compiling it again\n",
                 path.c_str(), cudaGetErrorString(err));
    forgetCachedCubin(path);
    cubin = cachedCubin(source, arch_, hit, path);
    err = cudaLibraryLoadData(&program_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  }
  if (err != cudaSuccess) {
    program_ = nullptr;
    detail::throwCuda("cudaLibraryLoadData", err,
                      "loading the plan program compiled for " + arch_ + " (" + path + ") on " +
                          description_);
  }
}

KernelHandle CudaDevice::kernel(const std::string &entry) {
  use();
  if (!program_)
    throw DeviceError("kernel '" + entry + "' asked for before loadProgram");
  if (auto it = kernelByEntry_.find(entry); it != kernelByEntry_.end())
    return it->second;
  Kernel k;
  k.entry = entry;
  cudaError_t err = cudaLibraryGetKernel(&k.handle, program_, entry.c_str());
  if (err == cudaErrorSymbolNotFound) {
    cudaGetLastError();
    throw DeviceError("the plan program has no kernel '" + entry + "'");
  }
  if (err != cudaSuccess)
    detail::throwCuda("cudaLibraryGetKernel", err, "looking up kernel " + entry);
  // Also loads the kernel into this context now: with lazy loading (the
  // default) the first launch would otherwise load it, possibly inside a
  // graph capture.
  cudaFuncAttributes attr{};
  EMB_CUDA_CHECK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void *>(k.handle)),
                 "loading kernel " + entry + " on " + description_);
  k.maxThreads = attr.maxThreadsPerBlock;
  kernels_.push_back(std::move(k));
  KernelHandle h = KernelHandle(kernels_.size() - 1);
  kernelByEntry_.emplace(entry, h);
  return h;
}

//===----------------------------------------------------------------------===//
// GEMMs and library calls
//===----------------------------------------------------------------------===//

PreparedHandle CudaDevice::prepareGemm(const GemmSpec &spec) {
  use();
  refuseWhileCapturing("prepareGemm");
  if (!gemmWorkspace_)
    EMB_CUDA_CHECK(cudaMalloc(&gemmWorkspace_, kGemmWorkspaceBytes),
                   "allocating the cuBLASLt workspace (" + bytesText(kGemmWorkspaceBytes) + ")");
  gemms_.push_back(std::make_unique<LtGemm>(lt_, spec, gemmWorkspace_, kGemmWorkspaceBytes));
  return PreparedHandle(gemms_.size() - 1);
}

PreparedHandle CudaDevice::prepareLibrary(const std::string &name, const json &params) {
  use();
  refuseWhileCapturing("prepareLibrary");
  LibraryCall call;
  call.count = intParam(params, name.c_str(), "count", 0, INT64_MAX / 16);
  if (name == "sort_pairs") {
    call.kind = LibraryCall::Sort;
    call.keyBits = int(intParam(params, name.c_str(), "key_bits", 0, 64));
    EMB_CUDA_CHECK(lib::sortPairsTempBytes(call.count, call.keyBits, call.tempBytes),
                   "sizing sort_pairs of " + std::to_string(call.count) + " pairs");
  } else if (name == "exclusive_scan") {
    call.kind = LibraryCall::Scan;
    EMB_CUDA_CHECK(lib::exclusiveScanTempBytes(call.count, call.tempBytes),
                   "sizing exclusive_scan of " + std::to_string(call.count) + " items");
  } else {
    throw DeviceError("unknown library call '" + name + "' (known: sort_pairs, exclusive_scan)");
  }
  // Calls run one after another on the stream, so they share one temporary
  // buffer, grown here. A captured graph holds the buffer's address, so once
  // a graph exists a larger call gets a buffer of its own instead.
  if (call.tempBytes > libraryTempBytes_) {
    const std::string what = "allocating " + bytesText(call.tempBytes) + " for " + name;
    if (graphs_.empty()) {
      EMB_CUDA_CHECK(cudaStreamSynchronize(stream_), what); // the old buffer may be in use
      if (libraryTemp_)
        EMB_CUDA_CHECK(cudaFree(libraryTemp_), what);
      libraryTemp_ = nullptr;
      libraryTempBytes_ = 0;
      EMB_CUDA_CHECK(cudaMalloc(&libraryTemp_, call.tempBytes), what);
      libraryTempBytes_ = call.tempBytes;
    } else {
      EMB_CUDA_CHECK(cudaMalloc(&call.ownTemp, call.tempBytes), what);
    }
  }
  calls_.push_back(call);
  return PreparedHandle(calls_.size() - 1);
}

void CudaDevice::gemm(PreparedHandle gemm, void *const *args, const char *name) {
  if (gemm < 0 || size_t(gemm) >= gemms_.size())
    throw DeviceError(std::string("gemm: no prepared GEMM ") + std::to_string(gemm) + " for '" +
                      name + "'");
  queued([&] {
    use();
    gemms_[size_t(gemm)]->run(args, stream_, name);
    syncIfDebugging("running " + gemms_[size_t(gemm)]->describe() + " for '" + name + "'");
  });
}

void CudaDevice::library(PreparedHandle handle, void *const *args, const char *name) {
  if (handle < 0 || size_t(handle) >= calls_.size())
    throw DeviceError(std::string("library: no prepared call ") + std::to_string(handle) +
                      " for '" + name + "'");
  const LibraryCall &c = calls_[size_t(handle)];
  queued([&] {
    use();
    void *temp = c.ownTemp ? c.ownTemp : libraryTemp_;
    if (c.kind == LibraryCall::Sort) {
      const std::string what = "sorting " + std::to_string(c.count) + " pairs (" +
                               std::to_string(c.keyBits) + "-bit keys) for '" + name + "'";
      EMB_CUDA_CHECK(lib::sortPairs(temp, c.tempBytes, static_cast<const int64_t *>(args[0]),
                                    static_cast<const int32_t *>(args[1]),
                                    static_cast<int64_t *>(args[2]),
                                    static_cast<int32_t *>(args[3]), c.count, c.keyBits, stream_),
                     what);
      syncIfDebugging(what);
    } else {
      const std::string what =
          "scanning " + std::to_string(c.count) + " items for '" + std::string(name) + "'";
      EMB_CUDA_CHECK(lib::exclusiveScan(temp, c.tempBytes, static_cast<const int32_t *>(args[0]),
                                        static_cast<int32_t *>(args[1]),
                                        static_cast<int64_t *>(args[2]), c.count, stream_),
                     what);
      syncIfDebugging(what);
    }
  });
}

//===----------------------------------------------------------------------===//
// Memory and copies
//===----------------------------------------------------------------------===//

std::byte *CudaDevice::allocate(size_t bytes) {
  use();
  refuseWhileCapturing("allocate");
  void *p = nullptr;
  const std::string what = "allocating " + bytesText(bytes) + " on " + description_;
  EMB_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 1)), what); // 256-byte aligned
  deviceMemory_.push_back(p);
  // In stream order, so every later use of the memory sees the zeros.
  EMB_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream_), what);
  return static_cast<std::byte *>(p);
}

std::byte *CudaDevice::allocateHost(size_t bytes) {
  use();
  refuseWhileCapturing("allocateHost");
  void *p = nullptr;
  EMB_CUDA_CHECK(cudaHostAlloc(&p, std::max<size_t>(bytes, 1), cudaHostAllocDefault),
                 "allocating " + bytesText(bytes) + " of pinned host memory");
  hostMemory_.push_back(p);
  std::memset(p, 0, bytes);
  return static_cast<std::byte *>(p);
}

void CudaDevice::toDevice(std::byte *dst, const void *src, size_t bytes) {
  use();
  refuseWhileCapturing("toDevice");
  // Through the two pinned staging buffers in turn: the caller's memory is
  // free again as soon as it is copied into one, and the DMA of one chunk
  // overlaps the host copy of the next.
  const char *from = static_cast<const char *>(src);
  const std::string what = "copying " + bytesText(bytes) + " to " + description_;
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kStagingBytes, bytes - done);
    Staging &s = staging_[nextStaging_];
    nextStaging_ ^= 1;
    EMB_CUDA_CHECK(cudaEventSynchronize(s.done), what);
    std::memcpy(s.host, from + done, n);
    EMB_CUDA_CHECK(cudaMemcpyAsync(dst + done, s.host, n, cudaMemcpyHostToDevice, stream_), what);
    EMB_CUDA_CHECK(cudaEventRecord(s.done, stream_), what);
    done += n;
  }
}

void CudaDevice::toHost(void *dst, const std::byte *src, size_t bytes) {
  use();
  refuseWhileCapturing("toHost");
  char *to = static_cast<char *>(dst);
  const std::string what = "copying " + bytesText(bytes) + " from " + description_;
  // Chunk i is copied into a staging buffer while chunk i - 1 is copied out
  // of the other one.
  Staging *pending = nullptr;
  size_t pendingAt = 0, pendingBytes = 0;
  auto drain = [&] {
    if (!pending)
      return;
    EMB_CUDA_CHECK(cudaEventSynchronize(pending->done), what);
    std::memcpy(to + pendingAt, pending->host, pendingBytes);
    pending = nullptr;
  };
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kStagingBytes, bytes - done);
    Staging &s = staging_[nextStaging_];
    nextStaging_ ^= 1;
    EMB_CUDA_CHECK(cudaEventSynchronize(s.done), what);
    EMB_CUDA_CHECK(cudaMemcpyAsync(s.host, src + done, n, cudaMemcpyDeviceToHost, stream_), what);
    EMB_CUDA_CHECK(cudaEventRecord(s.done, stream_), what);
    drain();
    pending = &s, pendingAt = done, pendingBytes = n;
    done += n;
  }
  drain();
  if (bytes == 0) // still a synchronisation point, as the caller expects
    EMB_CUDA_CHECK(cudaStreamSynchronize(stream_), what);
}

void CudaDevice::zero(std::byte *dst, size_t bytes) {
  queued([&] {
    use();
    EMB_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_), "zeroing " + bytesText(bytes));
  });
}

void CudaDevice::copy(std::byte *dst, const std::byte *src, size_t bytes) {
  queued([&] {
    use();
    EMB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_),
                   "copying " + bytesText(bytes) + " on the device");
  });
}

//===----------------------------------------------------------------------===//
// Launches, synchronisation, graphs
//===----------------------------------------------------------------------===//

void CudaDevice::launch(KernelHandle kernel, const int64_t grid[3], int64_t block,
                        int64_t shared, const EmbArgs &args, const char *name) {
  if (kernel < 0 || size_t(kernel) >= kernels_.size())
    throw DeviceError(std::string("launch: no kernel ") + std::to_string(kernel) + " for '" +
                      name + "'");
  Kernel &k = kernels_[size_t(kernel)];
  queued([&] {
    use();
    const std::string where = k.entry + " for '" + name + "'";
    if (block < 1 || block > k.maxThreads)
      throw DeviceError("launching " + where + ": block of " + std::to_string(block) +
                        " threads; this kernel allows 1.." + std::to_string(k.maxThreads));
    if (grid[0] < 1 || grid[0] > INT_MAX || grid[1] < 1 || grid[1] > 65535 || grid[2] < 1 ||
        grid[2] > 65535)
      throw DeviceError("launching " + where + ": grid " + std::to_string(grid[0]) + "x" +
                        std::to_string(grid[1]) + "x" + std::to_string(grid[2]) +
                        " is out of range");
    if (shared < 0 || shared > INT_MAX)
      throw DeviceError("launching " + where + ": " + std::to_string(shared) +
                        " bytes of shared memory");
    if (shared > k.sharedOptIn) {
      EMB_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void *>(k.handle),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
                     "allowing " + std::to_string(shared) + " bytes of shared memory to " + where);
      k.sharedOptIn = shared;
    }
    // One kernel parameter, the EmbArgs struct by value (KernelAbi.h).
    void *params[] = {const_cast<EmbArgs *>(&args)};
    EMB_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(k.handle),
                                    dim3(unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2])),
                                    dim3(unsigned(block)), params, size_t(shared), stream_),
                   "launching " + where);
    syncIfDebugging("running " + where);
  });
}

void CudaDevice::synchronize() {
  use();
  refuseWhileCapturing("synchronize");
  EMB_CUDA_CHECK(cudaStreamSynchronize(stream_), "waiting for the work queued on " + description_);
}

void CudaDevice::uploadAsync(std::byte *dst, const std::byte *src, size_t bytes) {
  use();
  refuseWhileCapturing("uploadAsync");
  EMB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, uploadStream_),
                 "prefetching " + bytesText(bytes) + " of inputs to " + description_);
}

int32_t CudaDevice::newEvent(unsigned flags) {
  use();
  cudaEvent_t e = nullptr;
  EMB_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags), "creating a CUDA event");
  events_.push_back(e);
  return int32_t(events_.size() - 1);
}

double CudaDevice::secondsBetween(int32_t start, int32_t end) {
  use();
  EMB_CUDA_CHECK(cudaEventSynchronize(event(end)), "waiting for a CUDA event");
  float ms = 0;
  EMB_CUDA_CHECK(cudaEventElapsedTime(&ms, event(start), event(end)),
                 "reading the time between two CUDA events");
  return double(ms) * 1e-3;
}

void CudaDevice::record(int32_t e, cudaStream_t stream, const char *which) {
  use();
  refuseWhileCapturing("recording an event");
  EMB_CUDA_CHECK(cudaEventRecord(event(e), stream),
                 std::string("recording an event on the ") + which + " stream");
}

void CudaDevice::wait(cudaStream_t stream, int32_t e, const char *which) {
  use();
  refuseWhileCapturing("waiting for an event");
  EMB_CUDA_CHECK(cudaStreamWaitEvent(stream, event(e), 0),
                 std::string("ordering the ") + which + " stream after an event");
}

void CudaDevice::hostWaits(int32_t e) {
  use();
  EMB_CUDA_CHECK(cudaEventSynchronize(event(e)), "waiting for a CUDA event");
}

void CudaDevice::beginCapture() {
  use();
  refuseWhileCapturing("beginCapture");
  // Thread-local: other threads (data loading) may keep using CUDA.
  EMB_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
                 "starting a CUDA graph capture");
  capturing_ = true;
}

int32_t CudaDevice::endCapture() {
  use();
  if (!capturing_)
    throw DeviceError("endCapture without beginCapture");
  capturing_ = false;
  Graph g;
  EMB_CUDA_CHECK(cudaStreamEndCapture(stream_, &g.graph), "ending a CUDA graph capture");
  cudaError_t err = cudaGraphInstantiate(&g.exec, g.graph, 0);
  if (err != cudaSuccess) {
    cudaGraphDestroy(g.graph);
    detail::throwCuda("cudaGraphInstantiate", err, "instantiating a captured CUDA graph");
  }
  graphs_.push_back(g);
  return int32_t(graphs_.size() - 1);
}

void CudaDevice::replay(int32_t graph) {
  use();
  refuseWhileCapturing("replay");
  if (graph < 0 || size_t(graph) >= graphs_.size())
    throw DeviceError("replay: no CUDA graph " + std::to_string(graph));
  EMB_CUDA_CHECK(cudaGraphLaunch(graphs_[size_t(graph)].exec, stream_),
                 "replaying CUDA graph " + std::to_string(graph));
  syncIfDebugging("running CUDA graph " + std::to_string(graph));
}

} // namespace

bool embc::runtime::cuda::cudaDeviceAvailable(std::string &why) {
  // Kept loaded: the CUDA runtime opens the same library right after.
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) {
    const char *reason = dlerror();
    why = std::string("no NVIDIA driver: cannot load libcuda.so.1") +
          (reason ? std::string(" (") + reason + ")" : std::string());
    return false;
  }
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    why = std::string("CUDA cannot be used: ") + cudaGetErrorName(err) + " (" +
          cudaGetErrorString(err) + ")";
    if (err == cudaErrorInsufficientDriver) {
      int driver = 0;
      cudaDriverGetVersion(&driver);
      why += "; the driver supports CUDA " + std::to_string(driver / 1000) + "." +
             std::to_string(driver % 1000 / 10) + ", this embrun was built with CUDA " +
             std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
    }
    return false;
  }
  if (count == 0) {
    why = "the NVIDIA driver reports no CUDA device";
    return false;
  }
  why.clear();
  return true;
}

int embc::runtime::cuda::cudaDeviceOrdinalFor(int localRank) {
  std::string why;
  int count = 0;
  if (!cudaDeviceAvailable(why) || cudaGetDeviceCount(&count) != cudaSuccess || count <= 0)
    return 0;
  return localRank % count;
}

std::unique_ptr<Device> embc::runtime::cuda::createCudaDevice(int ordinal) {
  std::string why;
  if (!cudaDeviceAvailable(why))
    throw DeviceError("no CUDA device to run on: " + why);
  return std::make_unique<CudaDevice>(ordinal);
}
