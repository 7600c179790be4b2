//===- SequenceLossLowering.cpp - sequence_softmax_ce and its gradient ----===//
//
// loss and loss_grad of kind sequence_softmax_ce (LossKernels.cpp's
// formulas): B x L x C logits against B x L class indices, -1 where a
// position has no target. The vocabulary C is large (thousands), so a
// position's row is a block's work, never a thread's serial loop:
//  - loss, pass 1: a block per row: the row maximum (a block max), the sum
//    of expf(x - max) in double (emb_block_sum_f64, a fixed order), and
//    (max - x_c) + log(sum) into scratch (0 for a row without target);
//  - loss, pass 2: one block; a thread per sequence sums its rows in order
//    and divides by its count of targets; the block adds the sequences in a
//    fixed order and divides by B. No atomics: the loss is deterministic.
//  - loss_grad: a block per row: the same maximum and sum, then
//    (expf(x - max) / sum - [j == c]) / (B n_b), times the loss scale when
//    the gradient is loss-scaled; zeros for a row without target. n_b is
//    counted by the block from the sequence's L targets.
// Threads walk a row's columns with the block's stride, so each warp reads
// 32 consecutive logits (coalesced). A target that is neither -1 nor a
// class index is a data error (the row is reported; the CPU throws).
//
//===----------------------------------------------------------------------===//

#include "ModelLowering.h"

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;

namespace {

/// Threads per row: a vocabulary of thousands gives each ~C / 256 columns.
constexpr int64_t kRowBlock = 256;
/// Blocks of the row kernels; more rows than this stride.
constexpr int64_t kMaxRowBlocks = 65535;

struct Shape {
  int64_t B = 0, L = 0, C = 0;
};

Shape shapeOf(CudaEmitter &em, const rt::Kernel &k) {
  const rt::Buffer &in = f32Buffer(em, k.inputs[0], "loss input");
  if (in.shape.size() != 3 || numel(in) < 1)
    throw CodegenError("sequence_softmax_ce input '" + in.name + "' must be B x L x C");
  const Shape s{in.shape[0], in.shape[1], in.shape[2]};
  if (s.C < 2)
    throw CodegenError("sequence_softmax_ce input '" + in.name + "' needs 2 or more classes");
  f32Matrix(em, k.inputs[1], s.B, s.L, "loss target");
  return s;
}

const char *kRowHelpers = R"CUDA(
// --- sequence_softmax_ce (passes/lib/cuda/SequenceLossLowering.cpp) ---
// The maximum of v over the block, in a fixed order (every thread gets it).
// `red` is 32 floats of shared memory; blockDim.x a multiple of 32.
__device__ __forceinline__ float emb_block_max_f32(float v, float *red) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = red[0];
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) t = fmaxf(t, red[w]);
  return t;
}
// The class of a target: -1 (none), an index below C, or -2 (not a class).
__device__ __forceinline__ int emb_token_class(float raw, int C) {
  if (raw == -1.0f) return -1;
  const int c = (int)raw;
  return raw >= 0.0f && raw < (float)C && (float)c == raw ? c : -2;
}
)CUDA";

/// The row loop's head shared by both row kernels: row r's logits X_r, its
/// class c, its maximum m and sum of exponentials `sum` (double).
const char *kRowStats = R"CUDA(    const float *xr = X + r * $C;
    const int c = emb_token_class(T[r], $C);
    if (c == -2 && threadIdx.x == 0) emb_set_error(a.step, $CODE, r / $L);
    float m = __int_as_float(0xff800000);  // -inf
    for (int j = threadIdx.x; j < $C; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = emb_block_max_f32(m, fred);
    double part = 0.0;
    for (int j = threadIdx.x; j < $C; j += blockDim.x) part += (double)expf(xr[j] - m);
    const double sum = emb_block_sum_f64(part, dred);
)CUDA";

int badTargetCode(CudaEmitter &em, const Shape &s) {
  return em.errorCode("loss (sequence_softmax_ce): a target is neither -1 nor a class index in "
                      "[0, " + std::to_string(s.C) + "); batch row");
}

int64_t rowBlocks(const Shape &s) { return std::min(s.B * s.L, kMaxRowBlocks); }

} // namespace

namespace embc::codegen::model {

void appendTokenRowHelpers(CudaEmitter &em) {
  useHelpers(em);
  em.appendOnce("emb_sequence_loss_helpers", kRowHelpers);
}

void lowerSequenceLoss(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const Shape s = shapeOf(em, k);
  if (numel(f32Buffer(em, k.outputs[0], "loss output")) != 1)
    throw CodegenError("the loss output must hold 1 value");
  appendTokenRowHelpers(em);
  const int64_t rows = s.B * s.L;
  const int64_t perRow = em.scratch(rows * 8);
  const Vars vars = {{"B", lit(s.B)},
                     {"L", lit(s.L)},
                     {"C", lit(s.C)},
                     {"ROWS", lit(rows)},
                     {"CODE", std::to_string(badTargetCode(em, s))}};
  const std::string rowsName = em.entryName("loss_sequence_softmax_ce_rows");
  em.append(subst(R"CUDA(
// $NAME: cross-entropy of each of the $ROWS positions (a block per row).
extern "C" __global__ void $NAME(EmbArgs a) {
  __shared__ double dred[32];
  __shared__ float fred[32];
  const float *X = (const float *)a.p[0], *T = (const float *)a.p[1];
  double *ce = (double *)a.p[2];
  for (emb_i64 r = blockIdx.x; r < $ROWS; r += gridDim.x) {
)CUDA" + std::string(kRowStats) +
                      R"CUDA(    if (threadIdx.x == 0)
      ce[r] = c >= 0 ? ((double)m - (double)xr[c]) + log(sum) : 0.0;
  }
}
)CUDA",
                  [&] {
                    Vars v = vars;
                    v["NAME"] = rowsName;
                    return v;
                  }()));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      rowsName,
      {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]),
       CudaEmitter::scratchAt(perRow)},
      rowBlocks(s), kRowBlock));

  const std::string meanName = em.entryName("loss_sequence_softmax_ce_mean");
  em.append(subst(R"CUDA(
// $NAME: each sequence's mean over its targets, then the mean over $B
// sequences (one block, fixed-order sums).
extern "C" __global__ void $NAME(EmbArgs a) {
  __shared__ double red[32];
  const float *T = (const float *)a.p[0];
  const double *ce = (const double *)a.p[1];
  double total = 0.0;
  for (emb_i64 b = threadIdx.x; b < $B; b += blockDim.x) {
    double seq = 0.0;
    int n = 0;
    for (emb_i64 l = 0; l < $L; ++l)
      if (emb_token_class(T[b * $L + l], $C) >= 0) {
        seq += ce[b * $L + l];
        ++n;
      }
    if (n > 0) total += seq / (double)n;
  }
  total = emb_block_sum_f64(total, red);
  if (threadIdx.x == 0) *(float *)a.p[2] = (float)(total / (double)$B);
}
)CUDA",
                  [&] {
                    Vars v = vars;
                    v["NAME"] = meanName;
                    return v;
                  }()));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      meanName,
      {CudaEmitter::buf(k.inputs[1]), CudaEmitter::scratchAt(perRow),
       CudaEmitter::buf(k.outputs[0])},
      1, 512));
}

void lowerSequenceLossGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const Shape s = shapeOf(em, k);
  if (numel(f32Buffer(em, k.outputs[0], "input gradient")) != s.B * s.L * s.C)
    throw CodegenError("the input gradient's size differs from the input's");
  const bool scaled = boolAttr(k, "loss_scaled");
  if (scaled && !em.plan().config.lossScaling.enabled)
    throw CodegenError("loss_scaled is set but the plan's config.loss_scaling is disabled");
  appendTokenRowHelpers(em);
  const std::string name = em.entryName("loss_grad_sequence_softmax_ce");
  em.append(subst(R"CUDA(
// $NAME: d(mean sequence_softmax_ce)/d logits, a block per row$SCALED.
extern "C" __global__ void $NAME(EmbArgs a) {
  __shared__ double dred[32];
  __shared__ float fred[32];
  const float *X = (const float *)a.p[0], *T = (const float *)a.p[1];
  float *DX = (float *)a.p[2];
  const float S = a.step->lossScale;
  (void)S;
  for (emb_i64 r = blockIdx.x; r < $ROWS; r += gridDim.x) {
    float *o = DX + r * $C;
    if (emb_token_class(T[r], $C) < 0) {
      if (emb_token_class(T[r], $C) == -2 && threadIdx.x == 0) emb_set_error(a.step, $CODE, r / $L);
      for (int j = threadIdx.x; j < $C; j += blockDim.x) o[j] = 0.0f;
      continue;
    }
)CUDA" + std::string(kRowStats) +
                      R"CUDA(    // n_b: the targets of this row's sequence.
    const emb_i64 b = r / $L;
    double has = 0.0;
    for (emb_i64 l = threadIdx.x; l < $L; l += blockDim.x)
      has += emb_token_class(T[b * $L + l], $C) >= 0 ? 1.0 : 0.0;
    const double n = emb_block_sum_f64(has, dred);
    const double weight = 1.0 / ((double)$B * n);
    const float scale = (float)(weight / sum), w = (float)weight;
    for (int j = threadIdx.x; j < $C; j += blockDim.x) {
      float g = expf(xr[j] - m) * scale;
      if (j == c) g -= w;
      o[j] = g$S;
    }
  }
}
)CUDA",
                  {{"NAME", name},
                   {"B", lit(s.B)},
                   {"L", lit(s.L)},
                   {"C", lit(s.C)},
                   {"ROWS", lit(s.B * s.L)},
                   {"CODE", std::to_string(badTargetCode(em, s))},
                   {"SCALED", scaled ? ", times the loss scale" : ""},
                   {"S", scaled ? " * S" : ""}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      name,
      {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]),
       CudaEmitter::buf(k.outputs[0])},
      rowBlocks(s), kRowBlock));
}

} // namespace embc::codegen::model
