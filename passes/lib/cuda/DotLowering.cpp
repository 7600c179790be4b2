//===- DotLowering.cpp - row-wise dot products (matrix factorisation) -----===//
//
// dot and dot_grad (docs/plan-format.md): lhs B x D against rhs B x D or
// B x K x D. One thread per output dot, summed as the CPU's detail::dot is
// (InteractionKernels.cpp dotForward; 4 lanes, see InteractionLowering.cpp),
// which with float4 loads is simply one accumulator per component. The
// gradient takes one thread per (row, column): d lhs sums over the K dots in
// order from zero, d rhs is one product each (dotGrad).
//
//===----------------------------------------------------------------------===//

#include "ModelLowering.h"

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;

namespace {

struct Shape {
  int64_t B = 0, D = 0, perRow = 1;
};

/// lhs B x D and rhs B x D or B x K x D (K >= 1).
Shape shapeOf(CudaEmitter &em, int32_t lhs, int32_t rhs) {
  Shape s;
  const rt::Buffer &l = f32Matrix(em, lhs, -1, -1, "lhs");
  s.B = l.shape[0];
  s.D = l.shape[1];
  const rt::Buffer &r = f32Buffer(em, rhs, "rhs");
  if (r.shape.size() == 3) {
    if (r.shape[0] != s.B || r.shape[2] != s.D || r.shape[1] < 1)
      throw CodegenError("rhs '" + r.name + "' is not " + std::to_string(s.B) + " x K x " +
                         std::to_string(s.D));
    s.perRow = r.shape[1];
  } else {
    f32Matrix(em, rhs, s.B, s.D, "rhs");
  }
  return s;
}

/// Fails unless buffer `id` is f32 with n values.
void expectValues(const CudaEmitter &em, int32_t id, int64_t n, const std::string &what) {
  const int64_t have = numel(f32Buffer(em, id, what));
  if (have != n)
    throw CodegenError(what + " has " + std::to_string(have) + " values, expected " +
                       std::to_string(n));
}

void lowerDot(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const Shape s = shapeOf(em, k.inputs[0], k.inputs[1]);
  expectValues(em, k.outputs[0], s.B * s.perRow, "output");
  std::vector<rt::CudaArg> args = operandArgs(k);
  useHelpers(em);
  const bool vec = s.D % 4 == 0 && aligned16(em, args[0]) && aligned16(em, args[1]);
  const std::string name = em.entryName(k.op);
  const int64_t n = s.B * s.perRow;
  std::string sum;
  if (vec) {
    sum = R"CUDA(    const emb_mf4 *u = (const emb_mf4 *)(L + b * $D), *v = (const emb_mf4 *)(R + i * $D);
    for (int q = 0; q < $D4; ++q) {
      const emb_mf4 x = u[q], z = v[q];
      l0 += x.x * z.x;
      l1 += x.y * z.y;
      l2 += x.z * z.z;
      l3 += x.w * z.w;
    }
)CUDA";
  } else {
    sum = "    const float *u = L + b * $D, *v = R + i * $D;\n";
    if (s.D / 4 > 0)
      sum += "    for (int k = 0; k < $D4 * 4; k += 4) {\n"
             "      l0 += u[k] * v[k];\n      l1 += u[k + 1] * v[k + 1];\n"
             "      l2 += u[k + 2] * v[k + 2];\n      l3 += u[k + 3] * v[k + 3];\n    }\n";
    if (s.D % 4)
      sum += "    for (int k = $D4 * 4; k < $D; ++k) l0 += u[k] * v[k];\n";
  }
  em.append(subst(R"CUDA(
// $NAME: $N row-wise dots of width $D ($K per lhs row).
extern "C" __global__ void $NAME(EmbArgs a) {
  const float *L = (const float *)a.p[0], *R = (const float *)a.p[1];
  float *Y = (float *)a.p[2];
  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < $N;
       i += (emb_i64)gridDim.x * blockDim.x) {
    const emb_i64 b = i / $K;
    float l0 = 0.0f, l1 = 0.0f, l2 = 0.0f, l3 = 0.0f;
$SUM    Y[i] = ((l0 + l1) + l2) + l3;
  }
}
)CUDA",
                  {{"NAME", name},
                   {"N", lit(n)},
                   {"D", lit(s.D)},
                   {"D4", lit(s.D / 4)},
                   {"K", lit(s.perRow)},
                   {"SUM", subst(sum, {{"D", lit(s.D)}, {"D4", lit(s.D / 4)}})}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(name, std::move(args), gridFor(n, 256), 256));
}

void lowerDotGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 3, 2);
  const Shape s = shapeOf(em, k.inputs[1], k.inputs[2]);
  expectValues(em, k.inputs[0], s.B * s.perRow, "output gradient");
  f32Matrix(em, k.outputs[0], s.B, s.D, "lhs gradient");
  expectValues(em, k.outputs[1], s.B * s.perRow * s.D, "rhs gradient");
  std::vector<rt::CudaArg> args = operandArgs(k);
  const std::string name = em.entryName(k.op);
  const int64_t n = s.B * s.D;
  em.append(subst(R"CUDA(
// $NAME: gradients of $B x $K row-wise dots of width $D.
extern "C" __global__ void $NAME(EmbArgs a) {
  const float *DY = (const float *)a.p[0], *L = (const float *)a.p[1];
  const float *R = (const float *)a.p[2];
  float *DL = (float *)a.p[3], *DR = (float *)a.p[4];
  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < $N;
       i += (emb_i64)gridDim.x * blockDim.x) {
    const emb_i64 b = i / $D, j = i - b * $D;
    const float l = L[i];
    float dl = 0.0f;
    for (int k = 0; k < $K; ++k) {
      const emb_i64 row = b * $K + k;
      const float g = DY[row];
      dl += g * R[row * $D + j];
      DR[row * $D + j] = g * l;
    }
    DL[i] = dl;
  }
}
)CUDA",
                  {{"NAME", name},
                   {"N", lit(n)},
                   {"B", lit(s.B)},
                   {"D", lit(s.D)},
                   {"K", lit(s.perRow)}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(name, std::move(args), gridFor(n, 256), 256));
}

} // namespace

EMBC_CUDA_LOWERING(Dot, lowerDot)
EMBC_CUDA_LOWERING(DotGrad, lowerDotGrad)
