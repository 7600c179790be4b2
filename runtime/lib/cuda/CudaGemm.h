//===- CudaGemm.h - a plan GEMM on cuBLASLt ---------------------*- C++ -*-===//
//
// One prepared GemmSpec (Device.h): descriptors built once, the algorithm
// chosen once per pointer alignment (the plan's buffers are 64-byte aligned
// but views are only dtype aligned, and cuBLASLt's fast kernels need 16), and
// run on the device's stream. Private to runtime/lib/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_CUDAGEMM_H
#define EMBC_RUNTIME_LIB_CUDA_CUDAGEMM_H

#include "embc/runtime/cuda/Device.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

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
  struct Choice {
    bool known = false;
    bool found = false; ///< false: no algorithm (only allowed for bgradb)
    cublasLtMatmulAlgo_t algo{};
  };
  /// The algorithm for operands aligned to `alignment` bytes, chosen on
  /// first use; `plain`: for the GEMM without its bias-gradient epilogue.
  const Choice &choose(bool plain, unsigned alignment, void *bias);
  cublasLtMatmulDesc_t makeDesc(cublasLtEpilogue_t epilogue);
  void release();

  cublasLtHandle_t lt_;
  GemmSpec spec_;
  void *workspace_;
  size_t workspaceBytes_;
  bool hasBias_ = false;
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
