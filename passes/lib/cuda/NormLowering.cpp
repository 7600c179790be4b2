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

// layer_norm_grad: dy, x, gamma -> dx, dgamma, dbeta. The row pass keeps
// each row's mean and rstd in scratch for the column pass.
void lowerLayerNormGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 3, 3);
  const auto [R, D] = normShape(em, k.inputs[1], {{k.inputs[0], "dy"}, {k.outputs[0], "dx"}},
                                {{k.inputs[2], "gamma"}, {k.outputs[1], "dgamma"},
                                 {k.outputs[2], "dbeta"}});
  const rt::CudaArg stats = CudaEmitter::scratchAt(em.scratch(R * 16));
  std::ostringstream rows;
  rows << "// layer_norm_grad, dx of " << R << " rows of " << D << ": one warp per row.\n"
       << "extern \"C\" __global__ void " << kNamePlaceholder << "(EmbArgs a) {\n"
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
       << "  }\n"
       << "  if (lane == 0) {\n"
       << "    stats[2 * row] = mean;\n"
       << "    stats[2 * row + 1] = rstd;\n"
       << "  }\n"
       << kEndRows << "}\n";
  const std::string rowEntry = defineKernel(em, "layer_norm_grad_rows", rows.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(
      rowEntry,
      {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]), CudaEmitter::buf(k.inputs[2]),
       CudaEmitter::buf(k.outputs[0]), stats},
      gridFor(R, kRowsPerBlock), kBlock));

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

} // namespace

EMBC_CUDA_LOWERING(LayerNorm, lowerLayerNorm)
EMBC_CUDA_LOWERING(LayerNormGrad, lowerLayerNormGrad)
