//===- DenseLowering.h - shared pieces of the dense CUDA lowerings -*- C++ -*-===//
//
// Private to the dense family (DenseLowering*.cpp, ElementwiseLowering.cpp,
// CrossLowering.cpp). The dense ops lower to three kinds of launch:
//
//  - cuBLASLt GEMMs (`gemm`, a GemmSpec in row-major terms) with the bias /
//    relu epilogues where they fit; a bf16/fp16 `compute` first rounds the
//    f32 operands into scratch with a generated kernel (RNE, the prelude's
//    emb_float_to_bf16/emb_float_to_half, as the CPU's Rounding.h does) and
//    runs the GEMM with ab_type bf16/f16 and f32 accumulation;
//  - generated elementwise kernels: one expression per element over full
//    operands (n values) and broadcast operands (`width` values, indexed by
//    column), float4 loads and stores when every operand allows them;
//  - deterministic column sums (bias gradients): per-block partial sums over
//    fixed row chunks, then a second kernel adds the partials in chunk order.
//    No float atomics, so every run gives the same bits.
//
// The activation expressions match runtime/lib/cpu/DenseKernels.cpp and
// FusedDenseKernels.cpp operation for operation (same constants, same
// association), so the backends differ only where nvcc contracts a*b+c into
// an FMA and in GEMM and column-sum summation order.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_CUDA_DENSELOWERING_H
#define EMBC_PASSES_CUDA_DENSELOWERING_H

#include "Emitter.h"

#include "embc/runtime/cuda/Device.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace embc::codegen::dense {

/// A launch operand, as every dense lowering names it.
using Arg = runtime::CudaArg;

// Per-file registration (DenseLowering.cpp calls them).

// --- Operands -----------------------------------------------------------------

// numel, f32Buffer, f32Matrix, expectCounts, aligned16, computeTypeOf and
// gridFor are the shared ones of Emitter.h.

// --- Activations ----------------------------------------------------------------

/// Throws unless `kind` is none, relu, sigmoid, tanh or gelu.
rt::Activation checkActivation(const std::string &kind);
/// An expression for f(x) (x: an identifier). Appends the shared device
/// helpers to the program on first use.
std::string activationExpr(CudaEmitter &em, const std::string &kind, const std::string &x);
/// An expression for dy * f'(a), f' from the input (a = x) or, with
/// `fromOutput`, from the output (a = y = f(x); gelu is refused).
std::string activationGradExpr(CudaEmitter &em, const std::string &kind, bool fromOutput,
                               const std::string &dy, const std::string &a);

// --- Generated kernels ---------------------------------------------------------------

/// Stands for the kernel's name in the text given to defineKernel.
inline constexpr const char *kNamePlaceholder = "$KERNEL";
/// Adds a kernel (and its device helpers), written with kNamePlaceholder
/// for its name, and returns the name: "emb_d_<hint>_<hash of the text>".
/// Kernels of the same text (every layer of one width, say) share one
/// definition, so the program NVRTC compiles stays small.
std::string defineKernel(CudaEmitter &em, const std::string &hint, const std::string &text);

// --- Generated elementwise kernels -------------------------------------------------

/// One kernel over n elements: inputs are read as floats x0, x1, ... (a
/// broadcast input at the element's column, i % width), `body` is C
/// statements that assign the float outputs y0, y1, .... An output may be
/// the same buffer as an input: every element's inputs are read before its
/// outputs are written, by the one thread that owns it.
struct Elementwise {
  std::string hint;
  int64_t n = 0;
  int64_t width = 0; ///< row length; needed only with broadcast inputs
  struct Input {
    runtime::CudaArg arg;
    bool broadcast = false;
  };
  std::vector<Input> inputs;
  std::vector<runtime::CudaArg> outputs;
  std::string body;
};
void emitElementwise(CudaEmitter &em, const Elementwise &spec, runtime::CudaKernel &out);


// --- GEMMs ---------------------------------------------------------------------------

/// C (m x n) = op(A) op(B) on densely stored row-major matrices: the
/// leading dimensions are the stored matrices' row lengths (A is k x m when
/// transA, B is n x k when transB). alpha 1, beta 0, no epilogue.
/// The reduction length a 16-bit GEMM runs over for a true length k: k
/// rounded up to 8 (the operands' zero padding), k itself for f32.
inline int64_t paddedK(int64_t k, runtime::DType abType) {
  return abType == runtime::DType::F32 ? k : (k + 7) / 8 * 8;
}

inline runtime::cuda::GemmSpec makeGemm(int64_t m, int64_t n, int64_t k, bool transA, bool transB,
                                        runtime::DType abType) {
  runtime::cuda::GemmSpec g;
  g.m = m, g.n = n, g.k = k;
  g.transA = transA, g.transB = transB;
  g.lda = transA ? m : k;
  g.ldb = transB ? k : n;
  g.ldc = n;
  if (abType != runtime::DType::F32 && abType != runtime::DType::BF16 &&
      abType != runtime::DType::F16)
    throw CodegenError("a GEMM's operands are f32, bf16 or f16, not '" +
                       runtime::enumString(abType) + "'");
  g.abType = abType;
  return g;
}

/// A GEMM's A or B operand: its arg and, when not 0, the row pitch it is
/// stored with (which replaces the spec's lda / ldb).
struct GemmOperand {
  GemmOperand(runtime::CudaArg arg, int64_t ld = 0) : arg(arg), ld(ld) {}
  runtime::CudaArg arg;
  int64_t ld = 0;
};

/// A `gemm` launch: args A, B, C[, bias].
void emitGemm(runtime::CudaKernel &out, runtime::cuda::GemmSpec spec, GemmOperand a,
              GemmOperand b, runtime::CudaArg c,
              std::optional<runtime::CudaArg> bias = std::nullopt);

/// A row-major rows x cols f32 matrix to round for a GEMM; storedRows >
/// rows appends rows of zeros (0: none).
struct MatrixOperand {
  runtime::CudaArg arg;
  int64_t rows = 0, cols = 0, storedRows = 0;
};

/// For a bf16/f16 `abType`: one kernel that rounds each operand into fresh
/// scratch as 16-bit values, returning the scratch operands in order. A
/// matrix whose rows would not start on 16 bytes (cols % 8 != 0, e.g. the
/// 479 interaction features of the MLPerf DLRM) is stored with its rows
/// padded with zeros to a multiple of 8 values (the returned ld), and with
/// storedRows rows (zeros past `rows`): a GEMM may then also run its
/// reduction over the padded length (zeros add nothing), and cuBLASLt runs
/// its vectorised kernels instead of 2-byte aligned ones. For f32: the
/// operands themselves, no launch.
std::vector<GemmOperand> emitRoundedOperands(CudaEmitter &em, runtime::CudaKernel &out,
                                             runtime::DType abType,
                                             const std::vector<MatrixOperand> &operands);

// --- Column sums ---------------------------------------------------------------------

/// db[c] (= or +=) sum over the B rows of g[r][c], g a B x N matrix. With
/// `gradKind` set, g = dy * f'(act) is computed on the way and stored into
/// `dz` (a dense layer's pre-activation gradient); without it g = dy.
struct ColumnSum {
  std::string hint;
  int64_t rows = 0, cols = 0;
  runtime::CudaArg dy;
  std::optional<std::string> gradKind;
  bool fromOutput = false;
  runtime::CudaArg act, dz; ///< with gradKind
  runtime::CudaArg db;
  bool accumulate = false;
};
void emitColumnSums(CudaEmitter &em, const ColumnSum &spec, runtime::CudaKernel &out);

} // namespace embc::codegen::dense

#endif // EMBC_PASSES_CUDA_DENSELOWERING_H
