//===- CrossLowering.cpp - the DCN-v2 cross layer and its gradient -------===//
//
// cross: y = x0 * (xl w + b) + xl; cross_grad: with u = xl w + b,
//   du = dy * x0, dx0 = dy * u, dxl = du w^T + dy, dw = xl^T du,
//   db = column sums of du (all four overwritten),
// xl w read from the forward when it kept it (emb.cross's `linear`),
// as runtime/lib/cpu/InteractionKernels.cpp computes them: the D x D
// products are GEMMs (operands rounded first for a bf16/fp16 compute type),
// the rest one elementwise kernel before and one after. dx0 holds du until
// the last GEMM overwrites it with xl w (the CPU does the same), so no
// scratch is needed in f32. In f32 db comes from the dw GEMM's bgradb
// epilogue (the column sums of its B operand, du, overwriting db); in
// bf16/fp16 that operand is the rounded du, so db is a column-sum kernel
// over the f32 du instead.
//
//===----------------------------------------------------------------------===//

#include "DenseLowering.h"

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::dense;
namespace rt = embc::runtime;

namespace {

/// Checks a cross layer's x0, xl (B x D), w (D x D) and b (D); returns B, D.
std::pair<int64_t, int64_t> crossShape(const CudaEmitter &em, int32_t x0, int32_t xl, int32_t w,
                                       int32_t b) {
  const rt::Buffer &x = f32Matrix(em, x0, -1, -1, "x0");
  const int64_t B = x.shape[0], D = x.shape[1];
  f32Matrix(em, xl, B, D, "xl");
  f32Matrix(em, w, D, D, "weight");
  const rt::Buffer &bias = f32Buffer(em, b, "bias");
  if (numel(bias) != D)
    throw CodegenError("bias '" + bias.name + "' has " + std::to_string(numel(bias)) +
                       " values, expected " + std::to_string(D));
  return {B, D};
}

// cross: x0, xl, w, b -> y = x0 * (xl w + b) + xl (, xl w kept for
// cross_grad: emb.cross's `linear`).
void lowerCross(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const bool keep = k.outputs.size() == 2;
  expectCounts(k, 4, keep ? 2 : 1);
  const auto [B, D] = crossShape(em, k.inputs[0], k.inputs[1], k.inputs[2], k.inputs[3]);
  f32Matrix(em, k.outputs[0], B, D, "output");
  if (keep)
    f32Matrix(em, k.outputs[1], B, D, "kept product xl w");
  const Arg x0 = CudaEmitter::buf(k.inputs[0]), xl = CudaEmitter::buf(k.inputs[1]);
  const Arg w = CudaEmitter::buf(k.inputs[2]), b = CudaEmitter::buf(k.inputs[3]);
  const Arg y = CudaEmitter::buf(k.outputs[0]);
  const Arg product = keep ? CudaEmitter::buf(k.outputs[1]) : y;
  const rt::DType abType = computeTypeOf(k);
  const int64_t Dp = paddedK(D, abType); // zero pads (DenseLowering.h)
  const auto r = emitRoundedOperands(em, out, abType, {{xl, B, D}, {w, D, D, Dp}});
  emitGemm(out, makeGemm(B, D, Dp, false, false, abType), r[0], r[1], product);
  Elementwise e;
  e.hint = k.op;
  e.n = B * D;
  e.width = D;
  e.inputs = {{x0, false}, {product, false}, {b, true}, {xl, false}};
  e.outputs = {y};
  e.body = "  y0 = x0 * (x1 + x2) + x3;\n";
  emitElementwise(em, e, out);
}

// cross_grad: dy, x0, xl, w, b (, the forward's xl w) -> dx0, dxl, dw, db.
void lowerCrossGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const bool kept = k.inputs.size() == 6;
  expectCounts(k, kept ? 6 : 5, 4);
  const auto [B, D] = crossShape(em, k.inputs[1], k.inputs[2], k.inputs[3], k.inputs[4]);
  f32Matrix(em, k.inputs[0], B, D, "output gradient");
  f32Matrix(em, k.outputs[0], B, D, "x0 gradient");
  f32Matrix(em, k.outputs[1], B, D, "xl gradient");
  const rt::Buffer &dwb = f32Buffer(em, k.outputs[2], "weight gradient");
  const rt::Buffer &dbb = f32Buffer(em, k.outputs[3], "bias gradient");
  if (numel(dwb) != D * D || numel(dbb) != D)
    throw CodegenError("weight and bias gradients '" + dwb.name + "', '" + dbb.name + "' have " +
                       std::to_string(numel(dwb)) + " and " + std::to_string(numel(dbb)) +
                       " elements, expected " + std::to_string(D * D) + " and " +
                       std::to_string(D));
  const Arg dy = CudaEmitter::buf(k.inputs[0]), x0 = CudaEmitter::buf(k.inputs[1]);
  const Arg xl = CudaEmitter::buf(k.inputs[2]), w = CudaEmitter::buf(k.inputs[3]);
  const Arg b = CudaEmitter::buf(k.inputs[4]);
  const Arg dx0 = CudaEmitter::buf(k.outputs[0]), dxl = CudaEmitter::buf(k.outputs[1]);
  const Arg dw = CudaEmitter::buf(k.outputs[2]), db = CudaEmitter::buf(k.outputs[3]);
  const rt::DType abType = computeTypeOf(k);

  // du = dy * x0, into dx0.
  Elementwise du;
  du.hint = "cross_grad_du";
  du.n = B * D;
  du.inputs = {{dy, false}, {x0, false}};
  du.outputs = {dx0};
  du.body = "  y0 = x0 * x1;\n";
  emitElementwise(em, du, out);

  // dw = xl^T du and db; dxl = du w^T (dy is added below).
  const int64_t Dp = paddedK(D, abType); // zero pads (DenseLowering.h)
  const auto r = emitRoundedOperands(em, out, abType, {{xl, B, D}, {dx0, B, D}, {w, D, D, Dp}});
  runtime::cuda::GemmSpec gw = makeGemm(D, D, B, true, false, abType);
  if (abType == rt::DType::F32) {
    gw.epilogue = runtime::GemmEpilogue::BGradB;
    emitGemm(out, gw, r[0], r[1], dw, db);
  } else {
    emitGemm(out, gw, r[0], r[1], dw);
    ColumnSum c;
    c.hint = k.op;
    c.rows = B, c.cols = D;
    c.dy = dx0;
    c.db = db;
    emitColumnSums(em, c, out);
  }
  emitGemm(out, makeGemm(B, D, Dp, false, true, abType), r[1], r[2], dxl);

  // dx0 = dy * (xl w + b), dxl += dy. Without the forward's xl w, the GEMM
  // reads the rounded xl and w (the same scratch) and overwrites du, which
  // nothing reads any more.
  Arg product = dx0;
  if (kept) {
    f32Matrix(em, k.inputs[5], B, D, "kept product xl w");
    product = CudaEmitter::buf(k.inputs[5]);
  } else {
    emitGemm(out, makeGemm(B, D, Dp, false, false, abType), r[0], r[2], dx0);
  }
  Elementwise e;
  e.hint = k.op;
  e.n = B * D;
  e.width = D;
  e.inputs = {{dy, false}, {product, false}, {b, true}, {dxl, false}};
  e.outputs = {dx0, dxl};
  e.body = "  y0 = x0 * (x1 + x2);\n  y1 = x3 + x0;\n";
  emitElementwise(em, e, out);
}

} // namespace

EMBC_CUDA_LOWERING(Cross, lowerCross)
EMBC_CUDA_LOWERING(CrossGrad, lowerCrossGrad)
