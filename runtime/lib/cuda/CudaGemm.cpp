//===- CudaGemm.cpp - a plan GEMM on cuBLASLt ----------------------------===//
//
// cuBLASLt is column-major and a GemmSpec row-major. A row-major m x n matrix
// with row stride ld is, byte for byte, its column-major n x m transpose with
// leading dimension ld, so the spec's C = op(A) op(B) is computed as
//
//   C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m)
//
// on the same memory: cuBLASLt's A is the spec's B and its B the spec's A,
// each with the spec's transpose flag, and m and n trade places. The bias
// (one value per column of the row-major C) is then one per row of the
// column-major D, which is exactly what CUBLASLT_EPILOGUE_BIAS broadcasts;
// and the spec's bgradb (sums of the row-major B over k) is a reduction of
// cuBLASLt's A over k: CUBLASLT_EPILOGUE_BGRADA.
//
// Compute type is plain f32 (CUBLAS_COMPUTE_32F: no TF32), so f32 GEMMs
// match the CPU's sgemm to rounding and bf16/f16 inputs are multiplied
// exactly and accumulated in f32.
//
//===----------------------------------------------------------------------===//

#include "CudaGemm.h"

#include "CudaCheck.h"
#include "LibraryKernels.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

using namespace embc::runtime::cuda;

namespace {

using embc::runtime::DType;
using embc::runtime::GemmEpilogue;

cudaDataType_t abDataType(DType t) {
  switch (t) {
  case DType::F32:
    return CUDA_R_32F;
  case DType::BF16:
    return CUDA_R_16BF;
  case DType::F16:
    return CUDA_R_16F;
  default:
    throw DeviceError("gemm: ab_type " + embc::runtime::enumString(t) +
                      " is not f32, bf16 or f16");
  }
}

lib::AbType abKind(DType t) {
  return t == DType::F32 ? lib::AbType::F32 : t == DType::BF16 ? lib::AbType::BF16 : lib::AbType::F16;
}

/// The largest power of two <= 16 dividing `v` (16 for 0).
unsigned alignmentOf(uintptr_t v) {
  unsigned a = 1;
  while (a < 16 && (v & a) == 0)
    a <<= 1;
  return a;
}

unsigned log2Of(unsigned a) {
  unsigned s = 0;
  while ((1u << s) < a)
    ++s;
  return s;
}

/// Owns a cublasLtMatmulPreference_t for one heuristic query.
struct Preference {
  cublasLtMatmulPreference_t p = nullptr;
  ~Preference() {
    if (p)
      cublasLtMatmulPreferenceDestroy(p);
  }
};

} // namespace

LtGemm::LtGemm(cublasLtHandle_t lt, const GemmSpec &spec, void *workspace, size_t workspaceBytes)
    : lt_(lt), spec_(spec), workspace_(workspace), workspaceBytes_(workspaceBytes) {
  const std::string what = "preparing " + describe();
  const cudaDataType_t ab = abDataType(spec.abType);
  abBytes_ = spec.abType == DType::F32 ? 4 : 2;
  hasBias_ = hasBias(spec.epilogue);
  if (spec.epilogue == GemmEpilogue::BGradB && spec.transB)
    throw DeviceError(describe() + ": bgradb sums the rows of B, which must not be transposed");
  if (spec.epilogue == GemmEpilogue::BGradB && spec.batch > 1)
    throw DeviceError(describe() + ": bgradb is defined for one GEMM, not a batch");
  if (spec.batch > INT32_MAX)
    throw DeviceError(describe() + ": too many matrices in the batch");
  switch (spec.epilogue) {
  case GemmEpilogue::None:
    break;
  case GemmEpilogue::Bias:
    epilogue_ = CUBLASLT_EPILOGUE_BIAS;
    break;
  case GemmEpilogue::Relu:
    epilogue_ = CUBLASLT_EPILOGUE_RELU;
    break;
  case GemmEpilogue::ReluBias:
    epilogue_ = CUBLASLT_EPILOGUE_RELU_BIAS;
    break;
  case GemmEpilogue::BGradB:
    epilogue_ = CUBLASLT_EPILOGUE_BGRADA; // the spec's B is cuBLASLt's A (see the top)
    break;
  }

  // A constructor that throws runs no destructor: release what was made.
  struct Guard {
    LtGemm *g;
    bool armed = true;
    ~Guard() {
      if (armed)
        g->release();
    }
  } guard{this};

  // cuBLASLt A = the spec's B: stored k x n (n x k when transB) row-major,
  // i.e. n x k (k x n) column-major.
  const uint64_t aRows = spec.transB ? spec.k : spec.n, aCols = spec.transB ? spec.n : spec.k;
  // cuBLASLt B = the spec's A: stored m x k (k x m when transA) row-major.
  const uint64_t bRows = spec.transA ? spec.m : spec.k, bCols = spec.transA ? spec.k : spec.m;
  EMB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, ab, aRows, aCols, spec.ldb), what);
  EMB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, ab, bRows, bCols, spec.lda), what);
  EMB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_, CUDA_R_32F, spec.n, spec.m, spec.ldc), what);
  if (spec.batch > 1) {
    const int32_t count = int32_t(spec.batch);
    auto batched = [&](cublasLtMatrixLayout_t layout, int64_t stride) {
      EMB_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                        &count, sizeof count),
                       what);
      EMB_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
                           layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                           sizeof stride),
                       what);
    };
    batched(a_, spec.strideB);
    batched(b_, spec.strideA);
    batched(c_, spec.strideC);
  }
  desc_ = makeDesc(epilogue_);

  // Choose now for 16-byte aligned operands so that an impossible GEMM fails
  // at bind time. The heuristic reads the bias pointer's value (never its
  // memory) for its alignment: the workspace stands in for the real one.
  if (!choose(false, 16, workspace_).found)
    choose(true, 16, workspace_); // throws when even the plain GEMM has none
  guard.armed = false;
}

LtGemm::~LtGemm() { release(); }

void LtGemm::release() {
  if (desc_)
    cublasLtMatmulDescDestroy(desc_);
  if (plainDesc_)
    cublasLtMatmulDescDestroy(plainDesc_);
  for (cublasLtMatrixLayout_t l : {a_, b_, c_})
    if (l)
      cublasLtMatrixLayoutDestroy(l);
  desc_ = plainDesc_ = nullptr;
  a_ = b_ = c_ = nullptr;
}

cublasLtMatmulDesc_t LtGemm::makeDesc(cublasLtEpilogue_t epilogue) {
  const std::string what = "preparing " + describe();
  cublasLtMatmulDesc_t desc = nullptr;
  EMB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), what);
  try {
    const int32_t opA = spec_.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int32_t opB = spec_.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    EMB_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA), what);
    EMB_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB), what);
    const uint32_t ep = epilogue;
    EMB_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep), what);
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT && epilogue != CUBLASLT_EPILOGUE_RELU) {
      // The bias and the bias gradient are f32 (the type of C).
      const int32_t biasType = CUDA_R_32F;
      EMB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                      &biasType, sizeof biasType),
                       what);
      // One bias for every matrix of a batch.
      const int64_t biasStride = 0;
      EMB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE,
                                                      &biasStride, sizeof biasStride),
                       what);
    }
  } catch (...) {
    cublasLtMatmulDescDestroy(desc);
    throw;
  }
  return desc;
}

std::string LtGemm::describe() const {
  std::string s = "gemm " + std::to_string(spec_.m) + "x" + std::to_string(spec_.n) + "x" +
                  std::to_string(spec_.k);
  if (spec_.batch > 1)
    s += " (batch " + std::to_string(spec_.batch) + ")";
  s += std::string(" ") + (spec_.transA ? "T" : "N") + (spec_.transB ? "T" : "N") + " " +
       embc::runtime::enumString(spec_.abType) + " " + embc::runtime::enumString(spec_.epilogue);
  return s;
}

LtGemm::Choice &LtGemm::choose(bool plain, unsigned alignment, void *bias) {
  Choice &c = (plain ? plainChoices_ : choices_)[log2Of(alignment)];
  if (c.known)
    return c;
  if (plain && !plainDesc_)
    plainDesc_ = makeDesc(CUBLASLT_EPILOGUE_DEFAULT);
  cublasLtMatmulDesc_t desc = plain ? plainDesc_ : desc_;
  const std::string what = "choosing an algorithm for " + describe() +
                           (plain ? " without its epilogue" : "") + " (operands aligned to " +
                           std::to_string(alignment) + " bytes)";
  Preference pref;
  EMB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref.p), what);
  const uint64_t ws = workspaceBytes_;
  EMB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
                       pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                   what);
  const uint32_t align = alignment;
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    EMB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, attr, &align, sizeof align),
                     what);
  if (hasBias_ && !plain)
    EMB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                    &bias, sizeof bias),
                     what);
  std::array<cublasLtMatmulHeuristicResult_t, kCandidates> results{};
  int count = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_, desc, a_, b_, c_, c_, pref.p,
                                                     kCandidates, results.data(), &count);
  // NOT_SUPPORTED is the heuristic's "no algorithm", not a failure.
  if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
    detail::throwCublas("cublasLtMatmulAlgoGetHeuristic", st, what);
  c.algos.clear();
  for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < count; ++i)
    if (results[size_t(i)].state == CUBLAS_STATUS_SUCCESS)
      c.algos.push_back(results[size_t(i)].algo);
  c.found = !c.algos.empty();
  // Without an algorithm for the epilogue the plain GEMM runs and a library
  // kernel applies it; the plain GEMM itself must have one.
  if (!c.found && (plain || spec_.epilogue == GemmEpilogue::None))
    throw DeviceError("cuBLASLt has no algorithm for " + describe() + " with operands aligned to " +
                      std::to_string(alignment) + " bytes");
  c.known = true;
  return c;
}

bool LtGemm::matmul(Choice &c, cublasLtMatmulDesc_t desc, void *a, void *b, void *cOut,
                    cudaStream_t stream, std::string &failures) {
  const float alpha = spec_.alpha, beta = spec_.beta;
  for (; c.next < c.algos.size(); ++c.next) {
    // Swapped operands (see the top): cuBLASLt's A is the spec's B.
    cublasStatus_t st = cublasLtMatmul(lt_, desc, &alpha, b, a_, a, b_, &beta, cOut, c_, cOut, c_,
                                       &c.algos[c.next], workspace_, workspaceBytes_, stream);
    if (st == CUBLAS_STATUS_SUCCESS) {
      c.verified = true;
      return true;
    }
    // One that ran before and fails now is a real failure, not a choice.
    if (c.verified)
      detail::throwCublas("cublasLtMatmul", st, "running " + describe());
    failures += std::string(failures.empty() ? "" : ", ") + "algorithm " +
                std::to_string(c.next + 1) + ": " + cublasLtGetStatusName(st);
  }
  return false;
}

void LtGemm::run(void *const *args, cudaStream_t stream, const char *name) {
  void *a = args[0], *b = args[1], *c = args[2];
  void *bias = hasBias_ ? args[3] : nullptr;
  if (!a || !b || !c || (hasBias_ && !bias))
    throw DeviceError(std::string("a null operand for ") + describe() + " in '" + name + "'");
  unsigned align = 16;
  for (const void *p : {static_cast<const void *>(a), static_cast<const void *>(b),
                        static_cast<const void *>(c), static_cast<const void *>(bias)})
    if (p)
      align = std::min(align, alignmentOf(reinterpret_cast<uintptr_t>(p)));
  if (spec_.batch > 1) // every matrix of the batch starts a stride further
    align = std::min({align, alignmentOf(uintptr_t(spec_.strideA) * abBytes_),
                      alignmentOf(uintptr_t(spec_.strideB) * abBytes_),
                      alignmentOf(uintptr_t(spec_.strideC) * 4)});

  std::string failures;
  Choice &fused = choose(false, align, bias);
  if (fused.found) {
    if (hasBias_)
      EMB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                      &bias, sizeof bias),
                       "setting the bias of " + describe() + " for '" + name + "'");
    if (matmul(fused, desc_, a, b, c, stream, failures))
      return;
    fused.found = false; // every candidate refused: the epilogue runs apart from now on
    if (spec_.epilogue == GemmEpilogue::None)
      throw DeviceError("cuBLASLt could run no algorithm for " + describe() + " in '" + name +
                        "' (operands aligned to " + std::to_string(align) + " bytes: " + failures +
                        ")");
  }
  // The epilogue apart: the bias gradient (the column sums of the spec's B,
  // in a fixed order) before the GEMM, bias and relu after it.
  if (!announcedFallback_) {
    announcedFallback_ = true;
    std::fprintf(stderr,
                 "embrun: note: cuBLASLt has no algorithm with the %s epilogue for %s in '%s' "
                 "(operands aligned to %u bytes%s%s); it runs without it, then a kernel applies "
                 "the epilogue\n",
                 embc::runtime::enumString(spec_.epilogue).c_str(), describe().c_str(), name, align,
                 failures.empty() ? "" : ": ", failures.c_str());
  }
  const bool bgradb = spec_.epilogue == GemmEpilogue::BGradB;
  if (bgradb)
    EMB_CUDA_CHECK(lib::columnSums(abKind(spec_.abType), b, spec_.k, spec_.n, spec_.ldb,
                                   static_cast<float *>(bias), stream),
                   "computing the bias gradient of " + describe() + " for '" + name + "'");
  Choice &plain = choose(true, align, bias);
  if (!matmul(plain, plainDesc_, a, b, c, stream, failures))
    throw DeviceError("cuBLASLt could run no algorithm for " + describe() + " in '" + name +
                      "', with or without its epilogue (operands aligned to " +
                      std::to_string(align) + " bytes: " + failures + ")");
  if (!bgradb)
    EMB_CUDA_CHECK(lib::biasActivation(static_cast<float *>(c), spec_.m, spec_.n, spec_.ldc,
                                       std::max<int64_t>(spec_.batch, 1), spec_.strideC,
                                       hasBias(spec_.epilogue) ? static_cast<float *>(bias)
                                                               : nullptr,
                                       hasRelu(spec_.epilogue), stream),
                   "applying the " + embc::runtime::enumString(spec_.epilogue) + " epilogue of " +
                       describe() + " for '" + name + "'");
}
