//===- CudaGemm.h - a plan GEMM on cuBLASLt ---------------------*- C++ -*-===//
//
// One prepared GemmSpec (Device.h): descriptors built once, the algorithm
// chosen once per pointer alignment (the plan's buffers are 64-byte aligned
// but views are only dtype aligned, and cuBLASLt's fast kernels need 16), and
// run on the device's stream. Private to runtime/lib/cuda.
//
// cuBLASLt's heuristic can return nothing for an epilogue at some shapes and
// alignments, and an algorithm it returns can still refuse at run time. So
// each choice keeps up to kCandidates algorithms and the first run tries them
// in order until one runs (the first step runs before any graph capture);
// with none for the fused epilogue, the GEMM runs without it and a library
// kernel applies it (bias/relu: lib::biasActivation; the bias gradient:
// lib::columnSums). Only a GEMM that even the plain descriptor cannot run
// is an error, naming the shape, types and alignment.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_CUDAGEMM_H
#define EMBC_RUNTIME_LIB_CUDA_CUDAGEMM_H

#include "embc/runtime/cuda/Device.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace embc::runtime::cuda {

class LtGemm {
public:
  /// Builds the descriptors and picks the algorithm for 16-byte aligned
  /// operands, so an impossible GEMM fails at bind time. The workspace is
  /// the device's (shared by all GEMMs of its one stream).
  LtGemm(cublasLtHandle_t lt, const GemmSpec &spec, void *workspace, size_t workspaceBytes);
  ~LtGemm();
  LtGemm(const LtGemm &) = delete;
  LtGemm &operator=(const LtGemm &) = delete;

  /// args: A, B, C[, bias] (the spec's row-major operands).
  void run(void *const *args, cudaStream_t stream, const char *name);

  /// "gemm 512x256x1024 bf16 relu_bias" for messages.
  std::string describe() const;

private:
  static constexpr int kCandidates = 8;
  struct Choice {
    bool known = false;
    bool found = false;    ///< false: no algorithm (the epilogue then runs apart)
    bool verified = false; ///< algos[next] has run once
    size_t next = 0;       ///< the algorithm to use (or try next)
    std::vector<cublasLtMatmulAlgo_t> algos;
  };
  /// Runs `desc` with the choice's algorithms from `next` on, stopping at
  /// the first that runs; false when none does (`failures` says why).
  bool matmul(Choice &c, cublasLtMatmulDesc_t desc, void *a, void *b, void *cOut,
              cudaStream_t stream, std::string &failures);
  /// The algorithm for operands aligned to `alignment` bytes, chosen on
  /// first use; `plain`: for the GEMM without its epilogue.
  Choice &choose(bool plain, unsigned alignment, void *bias);
  cublasLtMatmulDesc_t makeDesc(cublasLtEpilogue_t epilogue);
  void release();

  cublasLtHandle_t lt_;
  GemmSpec spec_;
  void *workspace_;
  size_t workspaceBytes_;
  bool hasBias_ = false;
  bool announcedFallback_ = false;
  size_t abBytes_ = 4;
  cublasLtEpilogue_t epilogue_ = CUBLASLT_EPILOGUE_DEFAULT;
  cublasLtMatmulDesc_t desc_ = nullptr;         ///< with the epilogue
  cublasLtMatmulDesc_t plainDesc_ = nullptr;    ///< bgradb fallback: made on demand
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  /// By log2 of the operands' common alignment in bytes (1 .. 16).
  std::array<Choice, 5> choices_{};
  std::array<Choice, 5> plainChoices_{};
};

} // namespace embc::runtime::cuda

#endif // EMBC_RUNTIME_LIB_CUDA_CUDAGEMM_H
