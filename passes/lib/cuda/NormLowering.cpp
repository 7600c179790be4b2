//===- NormLowering.cpp - layer normalisation and its gradient ------------===//
//
// layer_norm and layer_norm_grad as runtime/include/embc/runtime/cpu/
// NormKernels.h computes them: row statistics in double, the forward and
// dx one warp per row (8 rows a 256-thread block, lanes striding the row so
// a warp reads it coalesced), dgamma and dbeta one thread per column summing
// the rows in order. The warp's butterfly adds the lanes' partial sums in
// another order than the CPU's sequential loop, so the statistics may differ
// in the last bits of a double (the f32 results almost never); the column
// sums are the CPU's, operation for operation.
//
//===----------------------------------------------------------------------===//

#include "DenseLowering.h"
#include "DropoutLowering.h"
#include "EmbeddingLowering.h"

#include "embc/runtime/cpu/DropoutKernels.h"

#include <optional>
#include <sstream>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::dense;

namespace {

constexpr int64_t kBlock = 256, kRowsPerBlock = kBlock / 32;

/// Rows and width of a layer_norm operand x (any rank >= 2: rows are all
/// but the last dimension), with gamma-like operands of D values checked.
std::pair<int64_t, int64_t> normShape(const CudaEmitter &em, int32_t x,
                                      std::initializer_list<std::pair<int32_t, const char *>> rows,
                                      std::initializer_list<std::pair<int32_t, const char *>> columns) {
  const rt::Buffer &xb = f32Buffer(em, x, "input");
  if (xb.shape.size() < 2 || numel(xb) < 1)
    throw CodegenError("layer_norm input '" + xb.name + "' must be a non-empty tensor of rank 2 or more");
  const int64_t D = xb.shape.back(), R = numel(xb) / D;
  for (auto [id, what] : rows)
    if (f32Buffer(em, id, what).shape != xb.shape)
      throw CodegenError(std::string("layer_norm ") + what + " must have the input's shape");
  for (auto [id, what] : columns)
    if (numel(f32Buffer(em, id, what)) != D)
      throw CodegenError(std::string("layer_norm ") + what + " must have " + std::to_string(D) +
                         " values (the input's last dimension)");
  return {R, D};
}

double epsOf(const rt::Kernel &k) {
  if (!k.attrs.contains("eps") || !k.attrs["eps"].is_number())
    throw CodegenError("layer_norm needs a number 'eps'");
  return k.attrs["eps"].get<double>();
}

/// Device code that sets `mean` and `rstd` (doubles) of the row at `xr`,
/// the warp's lanes striding it.
std::string rowStats(int64_t D, double eps) {
  std::ostringstream s;
  s << "  double sum = 0.0;\n"
    << "  for (int j = lane; j < " << D << "; j += 32) sum += (double)xr[j];\n"
    << "  const double mean = emb_warp_sum_f64(sum) / " << D << ".0;\n"
    << "  double sq = 0.0;\n"
    << "  for (int j = lane; j < " << D << "; j += 32) {\n"
    << "    const double d = (double)xr[j] - mean;\n"
    << "    sq += d * d;\n"
    << "  }\n"
    << "  const double rstd = 1.0 / sqrt(emb_warp_sum_f64(sq) / " << D << ".0 + "
    << doubleLiteral(eps) << ");\n";
  return s.str();
}

/// The first lines of a warp-per-row kernel: `lane`, and a loop over the
/// warp's rows `row` (the grid is capped by gridFor, so a warp may own
/// several; `row` is the same for the whole warp, so the shuffles inside
/// see every lane). The kernel closes the loop with kEndRows.
std::string warpPerRow(int64_t R) {
  std::ostringstream s;
  s << "  const int lane = threadIdx.x & 31;\n"
    << "  for (emb_i64 row = (emb_i64)blockIdx.x * " << kRowsPerBlock
    << " + (threadIdx.x >> 5); row < " << R << "; row += (emb_i64)gridDim.x * " << kRowsPerBlock
    << ") {\n";
  return s.str();
}
constexpr const char *kEndRows = "  }\n";

// layer_norm: x, gamma, beta -> y.
void lowerLayerNorm(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 3, 1);
  const auto [R, D] = normShape(em, k.inputs[0], {{k.outputs[0], "output"}},
                                {{k.inputs[1], "gamma"}, {k.inputs[2], "beta"}});
  std::ostringstream t;
  t << "// layer_norm of " << R << " rows of " << D << ": one warp per row.\n"
    << "extern \"C\" __global__ void " << kNamePlaceholder << "(EmbArgs a) {\n"
    << warpPerRow(R)
    << "  const float *xr = (const float *)a.p[0] + row * " << D << ";\n"
    << "  const float *gamma = (const float *)a.p[1], *beta = (const float *)a.p[2];\n"
    << "  float *yr = (float *)a.p[3] + row * " << D << ";\n"
    << rowStats(D, epsOf(k))
    << "  for (int j = lane; j < " << D << "; j += 32)\n"
    << "    yr[j] = (float)(((double)xr[j] - mean) * rstd * (double)gamma[j] + (double)beta[j]);\n"
    << kEndRows << "}\n";
  const std::string entry = defineKernel(em, k.op, t.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(
      entry,
      {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]), CudaEmitter::buf(k.inputs[2]),
       CudaEmitter::buf(k.outputs[0])},
      gridFor(R, kRowsPerBlock), kBlock));
}

/// What add_layer_norm_grad adds to layer_norm_grad's row pass: the sum's
/// other gradient (an input) and the dropout gradient of dh (an output).
struct ResidualGrad {
  bool other = false, dropout = false;
  double rate = 0.0;
  int64_t stream = 0, batch = 1, perExample = 0, paddedPerExample = 0;
};

// layer_norm_grad: dy, x, gamma -> dx, dgamma, dbeta. The row pass keeps
// each row's mean and rstd in scratch for the column pass. With `extra`
// (add_layer_norm_grad): dx + other as dh, and dp, dh dropped as
// dropout_grad drops it, in the same row pass.
void emitLayerNormGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out,
                       const std::optional<ResidualGrad> &extra) {
  const auto [R, D] = normShape(em, k.inputs[1], {{k.inputs[0], "dy"}, {k.outputs[0], "dx"}},
                                {{k.inputs[2], "gamma"}, {k.outputs[1], "dgamma"},
                                 {k.outputs[2], "dbeta"}});
  const rt::CudaArg stats = CudaEmitter::scratchAt(em.scratch(R * 16));
  std::vector<rt::CudaArg> rowArgs = {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]),
                                      CudaEmitter::buf(k.inputs[2]), CudaEmitter::buf(k.outputs[0]),
                                      stats};
  std::string finish, head;
  if (extra) {
    if (extra->other)
      f32Buffer(em, k.inputs[3], "other");
    if (extra->dropout)
      f32Buffer(em, k.outputs[3], "dp");
    appendDropoutHelpers(em);
    rowArgs.push_back(CudaEmitter::buf(extra->other ? k.inputs[3] : k.inputs[0]));
    rowArgs.push_back(CudaEmitter::buf(extra->dropout ? k.outputs[3] : k.outputs[0]));
    std::ostringstream h;
    h << "  const bool drop = a.step->training != 0 && "
      << (extra->dropout && extra->rate > 0.0 ? "true" : "false") << ";\n"
      << dropoutKeyCode("key", extra->stream)
      << "  const emb_u64 first = (emb_u64)((a.step->exampleOffset + (emb_i64)a.step->microBatch * "
      << codegen::emb::lit(extra->batch) << ") * " << codegen::emb::lit(extra->paddedPerExample)
      << ");\n"
      << "  emb_drop_cache cache = {~0ULL, 0};\n"
      << "  (void)drop; (void)first; (void)cache;\n";
    head = h.str();
    std::ostringstream f;
    f << "    float v = dxr[j];\n";
    if (extra->other)
      f << "    v = ((const float *)a.p[5])[row * " << D << " + j] + v;\n"
        << "    dxr[j] = v;\n";
    if (extra->dropout)
      f << "    if (drop) v = v * emb_drop_factor(key, first + (emb_u64)"
        << paddedIndex("row * " + std::to_string(D) + " + j", extra->perExample,
                       extra->paddedPerExample)
        << ", "
        << runtime::cpu::dropoutThreshold(extra->rate) << "u, "
        << floatLiteral(float(1.0 / (1.0 - extra->rate))) << ", cache);\n"
        << "    ((float *)a.p[6])[row * " << D << " + j] = v;\n";
    finish = f.str();
  }
  std::ostringstream rows;
  rows << "// " << k.op << ", dx of " << R << " rows of " << D << ": one warp per row.\n"
       << "extern \"C\" __global__ void " << kNamePlaceholder << "(EmbArgs a) {\n"
       << head
       << warpPerRow(R)
       << "  const float *dyr = (const float *)a.p[0] + row * " << D << ";\n"
       << "  const float *xr = (const float *)a.p[1] + row * " << D << ";\n"
       << "  const float *gamma = (const float *)a.p[2];\n"
       << "  float *dxr = (float *)a.p[3] + row * " << D << ";\n"
       << "  double *stats = (double *)a.p[4];\n"
       << rowStats(D, epsOf(k))
       << "  double g = 0.0, gx = 0.0;\n"
       << "  for (int j = lane; j < " << D << "; j += 32) {\n"
       << "    const double gj = (double)dyr[j] * (double)gamma[j];\n"
       << "    g += gj;\n"
       << "    gx += gj * ((double)xr[j] - mean) * rstd;\n"
       << "  }\n"
       << "  const double meanG = emb_warp_sum_f64(g) / " << D << ".0;\n"
       << "  const double meanGx = emb_warp_sum_f64(gx) / " << D << ".0;\n"
       << "  for (int j = lane; j < " << D << "; j += 32) {\n"
       << "    const double xhat = ((double)xr[j] - mean) * rstd;\n"
       << "    const double gj = (double)dyr[j] * (double)gamma[j];\n"
       << "    dxr[j] = (float)(rstd * (gj - meanG - xhat * meanGx));\n"
       << finish
       << "  }\n"
       << "  if (lane == 0) {\n"
       << "    stats[2 * row] = mean;\n"
       << "    stats[2 * row + 1] = rstd;\n"
       << "  }\n"
       << kEndRows << "}\n";
  const std::string rowEntry = defineKernel(em, k.op + "_rows", rows.str());
  out.launches.push_back(
      CudaEmitter::kernelLaunch(rowEntry, rowArgs, gridFor(R, kRowsPerBlock), kBlock));

  std::ostringstream cols;
  cols << "// layer_norm_grad, dgamma and dbeta of " << D
       << " columns: one thread per column, rows in order (as the CPU).\n"
       << "extern \"C\" __global__ void " << kNamePlaceholder << "(EmbArgs a) {\n"
       << "  const emb_i64 col = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x;\n"
       << "  if (col >= " << D << ") return;\n"
       << "  const float *dy = (const float *)a.p[0], *x = (const float *)a.p[1];\n"
       << "  const double *stats = (const double *)a.p[2];\n"
       << "  double sumG = 0.0, sumB = 0.0;\n"
       << "  for (emb_i64 r = 0; r < " << R << "; ++r) {\n"
       << "    const double d = (double)dy[r * " << D << " + col];\n"
       << "    sumG += d * ((double)x[r * " << D << " + col] - stats[2 * r]) * stats[2 * r + 1];\n"
       << "    sumB += d;\n"
       << "  }\n"
       << "  ((float *)a.p[3])[col] = (float)sumG;\n"
       << "  ((float *)a.p[4])[col] = (float)sumB;\n"
       << "}\n";
  const std::string colEntry = defineKernel(em, "layer_norm_grad_columns", cols.str());
  constexpr int64_t kColumnBlock = 128;
  out.launches.push_back(CudaEmitter::kernelLaunch(
      colEntry,
      {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]), stats,
       CudaEmitter::buf(k.outputs[1]), CudaEmitter::buf(k.outputs[2])},
      gridFor(D, kColumnBlock), kColumnBlock));
}

void lowerLayerNormGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 3, 3);
  emitLayerNormGrad(em, k, out, std::nullopt);
}

// add_layer_norm_grad: dy, h, gamma[, other] -> dh, dgamma, dbeta[, dp].
void lowerAddLayerNormGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  ResidualGrad extra;
  extra.other = boolAttr(k, "other");
  extra.dropout = k.attrs.contains("rate");
  expectCounts(k, extra.other ? 4 : 3, extra.dropout ? 4 : 3);
  if (extra.dropout) {
    if (!k.attrs["rate"].is_number())
      throw CodegenError("add_layer_norm_grad needs a number 'rate'");
    extra.rate = k.attrs["rate"].get<double>();
    if (!(extra.rate >= 0.0 && extra.rate < 1.0))
      throw CodegenError("add_layer_norm_grad rate must be in [0, 1), got " +
                         std::to_string(extra.rate));
    extra.stream = intAttr(k, "stream");
  }
  const rt::Buffer &h = em.buffer(k.inputs[1]);
  extra.batch = h.shape.empty() ? 1 : h.shape[0];
  extra.perExample = numel(h) / std::max<int64_t>(extra.batch, 1);
  extra.paddedPerExample = paddedPerExample(h);
  emitLayerNormGrad(em, k, out, extra);
}

// add_layer_norm: x, p, gamma, beta -> y[, h]: a warp per row writes
// h = x + d (d = p, dropped as the dropout kernel drops it while training
// when the kernel has a rate), then the row's layer_norm from h.
void lowerAddLayerNorm(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.inputs.size() != 4 || k.outputs.empty() || k.outputs.size() > 2)
    throw CodegenError("add_layer_norm expects 4 inputs and 1 or 2 outputs");
  const bool keepH = k.outputs.size() == 2;
  const auto [R, D] = normShape(em, k.inputs[0], {{k.inputs[1], "p"}, {k.outputs[0], "output"}},
                                {{k.inputs[2], "gamma"}, {k.inputs[3], "beta"}});
  if (keepH && f32Buffer(em, k.outputs[1], "h").shape != em.buffer(k.inputs[0]).shape)
    throw CodegenError("add_layer_norm h must have the input's shape");
  const bool drops = k.attrs.contains("rate");
  if (drops && !k.attrs["rate"].is_number())
    throw CodegenError("add_layer_norm needs a number 'rate'");
  const double rate = drops ? k.attrs["rate"].get<double>() : 0.0;
  if (!(rate >= 0.0 && rate < 1.0))
    throw CodegenError("add_layer_norm rate must be in [0, 1), got " + std::to_string(rate));
  const int64_t stream = drops ? intAttr(k, "stream") : 0;
  const rt::Buffer &x = em.buffer(k.inputs[0]);
  const int64_t batch = x.shape[0], perExample = numel(x) / std::max<int64_t>(batch, 1),
                padded = paddedPerExample(x);
  const rt::CudaArg h = keepH ? CudaEmitter::buf(k.outputs[1])
                              : CudaEmitter::scratchAt(em.scratch(R * D * 4));
  appendDropoutHelpers(em);
  std::ostringstream t;
  t << "// add_layer_norm of " << R << " rows of " << D
    << (drops ? ", dropout rate " + std::to_string(rate) + " stream " + std::to_string(stream)
              : std::string())
    << ": one warp per row.\n"
    << "extern \"C\" __global__ void " << kNamePlaceholder << "(EmbArgs a) {\n"
    << "  const bool drop = a.step->training != 0 && " << (drops && rate > 0.0 ? "true" : "false")
    << ";\n"
    << dropoutKeyCode("key", stream)
    << "  const emb_u64 first = (emb_u64)((a.step->exampleOffset + (emb_i64)a.step->microBatch * "
    << codegen::emb::lit(batch) << ") * " << codegen::emb::lit(padded) << ");\n"
    << "  emb_drop_cache cache = {~0ULL, 0};\n"
    << warpPerRow(R)
    << "  const float *xin = (const float *)a.p[0] + row * " << D << ";\n"
    << "  const float *pr = (const float *)a.p[1] + row * " << D << ";\n"
    << "  const float *gamma = (const float *)a.p[2], *beta = (const float *)a.p[3];\n"
    << "  float *yr = (float *)a.p[4] + row * " << D << ";\n"
    << "  float *hr = (float *)a.p[5] + row * " << D << ";\n"
    << "  for (int j = lane; j < " << D << "; j += 32) {\n"
    << "    float d = pr[j];\n"
    << "    if (drop) d = d * emb_drop_factor(key, first + (emb_u64)"
    << paddedIndex("row * " + std::to_string(D) + " + j", perExample, padded) << ", "
    << runtime::cpu::dropoutThreshold(rate) << "u, " << floatLiteral(float(1.0 / (1.0 - rate)))
    << ", cache);\n"
    << "    hr[j] = xin[j] + d;\n"
    << "  }\n"
    << "  // Each lane reads back only the h values it wrote (the same j).\n"
    << "  const float *xr = hr;\n"
    << rowStats(D, epsOf(k))
    << "  for (int j = lane; j < " << D << "; j += 32)\n"
    << "    yr[j] = (float)(((double)xr[j] - mean) * rstd * (double)gamma[j] + (double)beta[j]);\n"
    << kEndRows << "}\n";
  const std::string entry = defineKernel(em, k.op, t.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(
      entry,
      {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]), CudaEmitter::buf(k.inputs[2]),
       CudaEmitter::buf(k.inputs[3]), CudaEmitter::buf(k.outputs[0]), h},
      gridFor(R, kRowsPerBlock), kBlock));
}

} // namespace

EMBC_CUDA_LOWERING(LayerNorm, lowerLayerNorm)
EMBC_CUDA_LOWERING(LayerNormGrad, lowerLayerNormGrad)
EMBC_CUDA_LOWERING(AddLayerNorm, lowerAddLayerNorm)
EMBC_CUDA_LOWERING(AddLayerNormGrad, lowerAddLayerNormGrad)
