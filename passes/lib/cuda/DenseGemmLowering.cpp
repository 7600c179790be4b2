//===- DenseGemmLowering.cpp - dense layers on cuBLASLt GEMMs -------------===//
//
// dense, dense_act, dense_act_grad, dense_grad_input, dense_grad_weight and
// bias_grad (docs/plan-format.md; CPU: DenseKernels.cpp and
// FusedDenseKernels.cpp). Each GEMM is one `gemm` launch in row-major
// terms:
//
//   forward      y  = x w (+ b)      m = B, n = N, k = K
//   weight grad  dW = x^T g (+ dW)   m = K, n = N, k = B, A transposed
//   input grad   dx = g w^T          m = B, n = K, k = N, B transposed
//
// The bias and relu ride on the GEMM's epilogue; other activations and their
// gradients are generated elementwise kernels (the bias add fused in), and
// bias gradients deterministic column sums (DenseLowering.cpp). Accumulating
// gradients (dense_act_grad's dW and db) add onto the accumulator: dW with
// beta = 1, db in the column-sum kernel. cuBLASLt's bgradb epilogue is not
// used for db: it overwrites (db accumulates here) and, in bf16/fp16, would
// sum the rounded dz where the CPU sums the f32 one.
//
//===----------------------------------------------------------------------===//

#include "DenseLowering.h"

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::dense;
namespace rt = embc::runtime;

namespace {

/// y (B x N) = x (B x K) w (K x N) with `epilogue` (none, bias, relu,
/// relu_bias), operands rounded first for a bf16/fp16 compute type.
void forwardGemm(CudaEmitter &em, rt::CudaKernel &out, rt::DType abType, Arg x, Arg w,
                 Arg y, int64_t B, int64_t K, int64_t N, rt::GemmEpilogue epilogue,
                 std::optional<Arg> bias) {
  // A 16-bit GEMM reduces over K padded to 8: x's pad columns and w's pad
  // rows are zeros (the 479 inputs of the MLPerf top MLP: cuBLASLt's
  // vectorised kernels need k % 8 == 0).
  const int64_t Kp = paddedK(K, abType);
  const auto ab = emitRoundedOperands(em, out, abType, {{x, B, K}, {w, K, N, Kp}});
  runtime::cuda::GemmSpec g = makeGemm(B, N, Kp, false, false, abType);
  g.epilogue = epilogue;
  emitGemm(out, g, ab[0], ab[1], y, bias);
}

/// The bias operand (N values) of a layer, checked.
Arg biasArg(const CudaEmitter &em, int32_t id, int64_t N) {
  const rt::Buffer &b = f32Buffer(em, id, "bias");
  if (numel(b) != N)
    throw CodegenError("bias '" + b.name + "' has " + std::to_string(numel(b)) +
                       " values, the layer " + std::to_string(N) + " outputs");
  return CudaEmitter::buf(id);
}

// dense: x (B x K), w (K x N), [b (N)] -> y = x w (+ b). The bias is there
// when the operand is (the CPU reads it from the count, not the attribute).
void lowerDense(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const bool bias = k.inputs.size() == 3;
  expectCounts(k, bias ? 3 : 2, 1);
  const auto [B, K] = f32Rows(em, k.inputs[0], -1, -1, "input");
  const int64_t N = f32Matrix(em, k.inputs[1], K, -1, "weight").shape[1];
  f32Rows(em, k.outputs[0], B, N, "output");
  std::optional<Arg> b;
  if (bias)
    b = biasArg(em, k.inputs[2], N);
  forwardGemm(em, out, computeTypeOf(k), CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]),
              CudaEmitter::buf(k.outputs[0]), B, K, N,
              bias ? rt::GemmEpilogue::Bias : rt::GemmEpilogue::None, b);
}

// dense_act: y = f(x w + b), [z = x w + b]. relu (and none) finish in the
// GEMM's epilogue; with z kept, the GEMM writes z and a kernel y = f(z).
void lowerDenseAct(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const bool bias = boolAttr(k, "bias");
  const std::string kind = stringAttr(k, "kind");
  const rt::Activation f = checkActivation(kind);
  if (k.inputs.size() != (bias ? 3u : 2u) || k.outputs.empty() || k.outputs.size() > 2)
    throw CodegenError(std::string("expected ") +
                       (bias ? "3 inputs (x, w, b)" : "2 inputs (x, w)") +
                       " and 1 or 2 outputs (y, [z]), got " + std::to_string(k.inputs.size()) +
                       " and " + std::to_string(k.outputs.size()));
  const auto [B, K] = f32Rows(em, k.inputs[0], -1, -1, "input");
  const int64_t N = f32Matrix(em, k.inputs[1], K, -1, "weight").shape[1];
  f32Rows(em, k.outputs[0], B, N, "output");
  const bool keepZ = k.outputs.size() == 2;
  if (keepZ)
    f32Rows(em, k.outputs[1], B, N, "pre-activation output");
  std::optional<Arg> b;
  if (bias)
    b = biasArg(em, k.inputs[2], N);
  const rt::DType abType = computeTypeOf(k);
  const Arg x = CudaEmitter::buf(k.inputs[0]), w = CudaEmitter::buf(k.inputs[1]);
  const Arg y = CudaEmitter::buf(k.outputs[0]);
  const rt::GemmEpilogue biasEpilogue = bias ? rt::GemmEpilogue::Bias : rt::GemmEpilogue::None;

  if (keepZ) {
    const Arg z = CudaEmitter::buf(k.outputs[1]);
    forwardGemm(em, out, abType, x, w, z, B, K, N, biasEpilogue, b);
    Elementwise e;
    e.hint = "dense_act_" + kind;
    e.n = B * N;
    e.inputs = {{z, false}};
    e.outputs = {y};
    e.body = "  y0 = " + activationExpr(em, kind, "x0") + ";\n";
    emitElementwise(em, e, out);
    return;
  }
  if (f == rt::Activation::None || f == rt::Activation::Relu) {
    const rt::GemmEpilogue epilogue =
        f == rt::Activation::None ? biasEpilogue
                                  : (bias ? rt::GemmEpilogue::ReluBias : rt::GemmEpilogue::Relu);
    forwardGemm(em, out, abType, x, w, y, B, K, N, epilogue, b);
    return;
  }
  // sigmoid / tanh / gelu: the GEMM writes x w, one kernel adds the bias and
  // applies f in place.
  forwardGemm(em, out, abType, x, w, y, B, K, N, rt::GemmEpilogue::None, std::nullopt);
  Elementwise e;
  e.hint = "dense_act_" + kind;
  e.n = B * N;
  e.width = N;
  e.inputs = {{y, false}};
  if (bias)
    e.inputs.push_back({*b, true});
  e.outputs = {y};
  e.body = "  y0 = " + activationExpr(em, kind, bias ? "x0 + x1" : "x0") + ";\n";
  emitElementwise(em, e, out);
}

// dense_act_grad: inputs [dy, (a), x, w], outputs [(dz), dW, (db), (dx)].
// dz = dy * f'(a) (with db += column sums of dz in the same pass), dW +=
// x^T dz (beta = 1), dx = dz w^T.
void lowerDenseActGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const std::string kind = stringAttr(k, "kind");
  const rt::Activation f = checkActivation(kind);
  const bool activated = f != rt::Activation::None;
  const bool fromOutput = boolAttr(k, "from_output"), bias = boolAttr(k, "bias");
  const bool inputGrad = boolAttr(k, "input_grad");
  if (fromOutput && f == rt::Activation::Gelu)
    throw CodegenError("gelu cannot be differentiated from its output");
  expectCounts(k, activated ? 4 : 3, size_t(activated) + 1 + size_t(bias) + size_t(inputGrad));
  const size_t xAt = activated ? 2 : 1;
  const auto [B, N] = f32Rows(em, k.inputs[0], -1, -1, "output gradient");
  const int64_t K = f32Rows(em, k.inputs[xAt], B, -1, "layer input").cols;
  f32Matrix(em, k.inputs[xAt + 1], K, N, "weight");
  if (activated)
    expectNumel(em, k.inputs[1], B * N, fromOutput ? "activation output" : "pre-activation");
  size_t o = 0;
  std::optional<Arg> dz, db, dx;
  if (activated) {
    expectNumel(em, k.outputs[o], B * N, "dz workspace");
    dz = CudaEmitter::buf(k.outputs[o++]);
  }
  expectNumel(em, k.outputs[o], K * N, "weight gradient");
  const Arg dW = CudaEmitter::buf(k.outputs[o++]);
  if (bias) {
    expectNumel(em, k.outputs[o], N, "bias gradient");
    db = CudaEmitter::buf(k.outputs[o++]);
  }
  if (inputGrad) {
    expectNumel(em, k.outputs[o], B * K, "input gradient");
    dx = CudaEmitter::buf(k.outputs[o++]);
  }
  const Arg dy = CudaEmitter::buf(k.inputs[0]);
  const Arg x = CudaEmitter::buf(k.inputs[xAt]), w = CudaEmitter::buf(k.inputs[xAt + 1]);

  // The gradient at the pre-activation: dz, or dy itself without activation.
  if (bias) {
    ColumnSum c;
    c.hint = k.op;
    c.rows = B, c.cols = N;
    c.dy = dy;
    if (activated) {
      c.gradKind = kind;
      c.fromOutput = fromOutput;
      c.act = CudaEmitter::buf(k.inputs[1]);
      c.dz = *dz;
    }
    c.db = *db;
    c.accumulate = true;
    emitColumnSums(em, c, out);
  } else if (activated) {
    Elementwise e;
    e.hint = "dense_act_grad_" + kind;
    e.n = B * N;
    e.inputs = {{dy, false}, {CudaEmitter::buf(k.inputs[1]), false}};
    e.outputs = {*dz};
    e.body = "  y0 = " + activationGradExpr(em, kind, fromOutput, "x0", "x1") + ";\n";
    emitElementwise(em, e, out);
  }
  const Arg g = activated ? *dz : dy;

  const rt::DType abType = computeTypeOf(k);
  std::vector<MatrixOperand> operands = {{x, B, K}, {g, B, N}};
  if (dx)
    operands.push_back({w, K, N});
  const auto r = emitRoundedOperands(em, out, abType, operands);
  runtime::cuda::GemmSpec gw = makeGemm(K, N, B, true, false, abType);
  gw.beta = 1.0f; // dW is the parameter's gradient accumulator
  emitGemm(out, gw, r[0], r[1], dW);
  if (dx)
    emitGemm(out, makeGemm(B, K, paddedK(N, abType), false, true, abType), r[1], r[2], *dx);
}

/// The "biases" list of a dense_multi(_grad) kernel: which layers have one.
std::vector<bool> biasesOf(const rt::Kernel &k) {
  auto it = k.attrs.find("biases");
  if (it == k.attrs.end() || !it->is_array() || it->empty())
    throw CodegenError("needs a non-empty list 'biases'");
  std::vector<bool> biases;
  for (const nlohmann::json &v : *it) {
    if (!v.is_boolean())
      throw CodegenError("'biases' must hold booleans");
    biases.push_back(v.get<bool>());
  }
  return biases;
}

// dense_multi: x, w_0 .. w_n-1, [b_i] -> y_0 .. y_n-1: one GEMM a layer,
// its bias on the epilogue (as `dense`).
void lowerDenseMulti(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const std::vector<bool> biases = biasesOf(k);
  const size_t n = biases.size(), withBias = size_t(std::count(biases.begin(), biases.end(), true));
  expectCounts(k, 1 + n + withBias, n);
  const auto [B, K] = f32Rows(em, k.inputs[0], -1, -1, "input");
  const rt::DType abType = computeTypeOf(k);
  for (size_t i = 0, bi = 1 + n; i < n; ++i) {
    const int64_t N = f32Matrix(em, k.inputs[1 + i], K, -1, "weight").shape[1];
    f32Rows(em, k.outputs[i], B, N, "output");
    std::optional<Arg> b;
    if (biases[i])
      b = biasArg(em, k.inputs[bi++], N);
    forwardGemm(em, out, abType, CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1 + i]),
                CudaEmitter::buf(k.outputs[i]), B, K, N,
                biases[i] ? rt::GemmEpilogue::Bias : rt::GemmEpilogue::None, b);
  }
}

// dense_multi_grad: dy_0 .. dy_n-1, x, w_0 .. w_n-1 -> dx, dW_0 .. dW_n-1,
// [db_i]. Per layer db += column sums of dy and dW += x^T dy (beta = 1);
// dx = dy_0 w_0^T, then + dy_i w_i^T in layer order (beta = 1): the sum
// the CPU forms a block at a time.
void lowerDenseMultiGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const std::vector<bool> biases = biasesOf(k);
  const size_t n = biases.size(), withBias = size_t(std::count(biases.begin(), biases.end(), true));
  expectCounts(k, 2 * n + 1, 1 + n + withBias);
  const auto [B, K] = f32Rows(em, k.inputs[n], -1, -1, "layer input");
  f32Rows(em, k.outputs[0], B, K, "input gradient");
  const rt::DType abType = computeTypeOf(k);
  const Arg x = CudaEmitter::buf(k.inputs[n]), dx = CudaEmitter::buf(k.outputs[0]);
  for (size_t i = 0, bi = 1 + n; i < n; ++i) {
    const int64_t N = f32Rows(em, k.inputs[i], B, -1, "output gradient").cols;
    f32Matrix(em, k.inputs[n + 1 + i], K, N, "weight");
    expectNumel(em, k.outputs[1 + i], K * N, "weight gradient");
    const Arg dy = CudaEmitter::buf(k.inputs[i]), w = CudaEmitter::buf(k.inputs[n + 1 + i]);
    if (biases[i]) {
      biasArg(em, k.outputs[bi], N);
      ColumnSum c;
      c.hint = k.op;
      c.rows = B, c.cols = N;
      c.dy = dy;
      c.db = CudaEmitter::buf(k.outputs[bi++]);
      c.accumulate = true;
      emitColumnSums(em, c, out);
    }
    const auto r = emitRoundedOperands(em, out, abType, {{x, B, K}, {dy, B, N}, {w, K, N}});
    runtime::cuda::GemmSpec gw = makeGemm(K, N, B, true, false, abType);
    gw.beta = 1.0f; // the parameter's gradient accumulator
    emitGemm(out, gw, r[0], r[1], CudaEmitter::buf(k.outputs[1 + i]));
    runtime::cuda::GemmSpec gx = makeGemm(B, K, paddedK(N, abType), false, true, abType);
    gx.beta = i == 0 ? 0.0f : 1.0f;
    emitGemm(out, gx, r[1], r[2], dx);
  }
}

// dense_grad_input: dy (B x N), w (K x N) -> dx = dy w^T (B x K).
void lowerDenseGradInput(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const auto [B, N] = f32Rows(em, k.inputs[0], -1, -1, "output gradient");
  const int64_t K = f32Matrix(em, k.inputs[1], -1, N, "weight").shape[0];
  f32Rows(em, k.outputs[0], B, K, "input gradient");
  const rt::DType abType = computeTypeOf(k);
  const auto r = emitRoundedOperands(
      em, out, abType,
      {{CudaEmitter::buf(k.inputs[0]), B, N}, {CudaEmitter::buf(k.inputs[1]), K, N}});
  emitGemm(out, makeGemm(B, K, paddedK(N, abType), false, true, abType), r[0], r[1],
           CudaEmitter::buf(k.outputs[0]));
}

// dense_grad_weight: x (B x K), dy (B x N) -> dw = x^T dy (K x N),
// overwritten (accumulate_grad adds it to the parameter's gradient).
void lowerDenseGradWeight(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const auto [B, K] = f32Rows(em, k.inputs[0], -1, -1, "layer input");
  const int64_t N = f32Rows(em, k.inputs[1], B, -1, "output gradient").cols;
  expectNumel(em, k.outputs[0], K * N, "weight gradient");
  const rt::DType abType = computeTypeOf(k);
  const auto r = emitRoundedOperands(
      em, out, abType,
      {{CudaEmitter::buf(k.inputs[0]), B, K}, {CudaEmitter::buf(k.inputs[1]), B, N}});
  emitGemm(out, makeGemm(K, N, B, true, false, abType), r[0], r[1], CudaEmitter::buf(k.outputs[0]));
}

// bias_grad: dy (B x N) -> db = column sums of dy, overwritten.
void lowerBiasGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 1, 1);
  const auto [rows, cols] = f32Rows(em, k.inputs[0], -1, -1, "output gradient");
  ColumnSum c;
  c.hint = k.op;
  c.rows = rows, c.cols = cols;
  c.dy = CudaEmitter::buf(k.inputs[0]);
  biasArg(em, k.outputs[0], c.cols);
  c.db = CudaEmitter::buf(k.outputs[0]);
  emitColumnSums(em, c, out);
}

} // namespace

EMBC_CUDA_LOWERING(Dense, lowerDense)
EMBC_CUDA_LOWERING(DenseAct, lowerDenseAct)
EMBC_CUDA_LOWERING(DenseActGrad, lowerDenseActGrad)
EMBC_CUDA_LOWERING(DenseMulti, lowerDenseMulti)
EMBC_CUDA_LOWERING(DenseMultiGrad, lowerDenseMultiGrad)
EMBC_CUDA_LOWERING(DenseGradInput, lowerDenseGradInput)
EMBC_CUDA_LOWERING(DenseGradWeight, lowerDenseGradWeight)
EMBC_CUDA_LOWERING(BiasGrad, lowerBiasGrad)
