//===- SampledSoftmaxLowering.cpp - sampled_logits and its gradient --------===//
//
// The CUDA of runtime/include/embc/runtime/cpu/SampledSoftmaxKernels.h.
// Forward, three launches; each returns at once in the mode it is not for
// (EmbStep::training), so one captured graph serves training and
// evaluation:
//  - draw (training): thread j draws candidate j with the CPU's key and
//    inverse CDF, writes it with its offset bias - log(S Q), and gathers
//    w(c_j, :) into scratch as D x S, so the row kernel's warps read 32
//    consecutive candidates (coalesced);
//  - rows (training): a block per row: x_r in shared memory, the target's
//    logit as a block sum in double, then a thread per candidate;
//  - full (evaluation): a block per row: threads over the V classes keep a
//    running maximum and sum of exponentials (double), combined in a fixed
//    order, and the target's logit.
// Gradient, four launches, no atomics, the CPU's orders:
//  - g: thread (j, d) of S x (D + 1) sums dz[r, j] x[r, d] over the rows in
//    order (d = D: dz's column sum, the bias's), and gathers w(c_j, d) as
//    S x D for dx;
//  - dx: a block per row, a thread per d: dz_r . w_c + dz_t w_t;
//  - zero the weight's and bias's gradients;
//  - scatter: thread d adds g's candidates in slot order, then the targets'
//    dz_t x_r in row order (thread D: the bias's).
// A target that is neither -1 nor a class below V is a data error.
//
//===----------------------------------------------------------------------===//

#include "DropoutLowering.h"
#include "ModelLowering.h"

#include "embc/runtime/cpu/SampledSoftmaxKernels.h"

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;

namespace {

constexpr int64_t kRowBlock = 128;
/// Resident row blocks a SM the row kernels' launch bounds ask for: 128
/// registers a thread.
constexpr int64_t kRowMinBlocks = 4;
constexpr int64_t kMaxRowBlocks = 65535;
/// x_r lives in shared memory: at most 32 KiB of it.
constexpr int64_t kMaxWidth = 8192;

struct Shape {
  int64_t rows = 0, D = 0, V = 0, S = 0;
  bool tied = false;
};

/// x, the weight and the target of either kernel, checked.
Shape shapeOf(CudaEmitter &em, const rt::Kernel &k, int32_t x, int32_t weight, int32_t target,
              int64_t S) {
  Shape s;
  s.tied = boolAttr(k, "tied");
  const RowMatrix in = f32Rows(em, x, -1, -1, "sampled_logits input");
  s.rows = in.rows;
  s.D = in.cols;
  const rt::Buffer &w = f32Buffer(em, weight, "sampled_logits weight");
  if (w.shape.size() != 2 || w.shape[s.tied ? 1 : 0] != s.D)
    throw CodegenError("sampled_logits weight '" + w.name + "' must be " +
                       (s.tied ? "V x D" : "D x V") + " with D = " + std::to_string(s.D));
  s.V = w.shape[s.tied ? 0 : 1];
  s.S = S;
  expectNumel(em, target, s.rows, "sampled_logits target");
  if (s.V < 2 || s.S < 1)
    throw CodegenError("sampled_logits needs 2 or more classes and 1 or more candidates");
  if (s.D > kMaxWidth)
    throw CodegenError("sampled_logits input rows of " + std::to_string(s.D) +
                       " exceed the kernel's shared-memory row of " + std::to_string(kMaxWidth));
  return s;
}

Vars varsOf(CudaEmitter &em, const Shape &s) {
  const int code = em.errorCode("sampled_logits: a target is neither -1 nor a class index in "
                                "[0, " + std::to_string(s.V) + "); row");
  return {{"ROWS", lit(s.rows)},
          {"D", lit(s.D)},
          {"V", lit(s.V)},
          {"S", lit(s.S)},
          {"S1", lit(s.S + 1)},
          {"CODE", std::to_string(code)},
          // sampling::kExcluded, -infinity.
          {"EXCLUDED", "__int_as_float(0xff800000)"},
          // w(v, d): a table's row v, or a dense layer's column v.
          {"WAT", s.tied ? "W[(emb_i64)(v) * $D + (d)]" : "W[(emb_i64)(d) * $V + (v)]"}};
}

/// `text` filled from `vars` and NAME; a value may hold placeholders of
/// plain values ($WAT's $D and $V).
std::string withName(const std::string &text, const Vars &vars, const std::string &name) {
  Vars filled = vars;
  for (auto &[key, value] : filled)
    if (value.find('$') != std::string::npos)
      value = subst(value, vars);
  filled["NAME"] = name;
  return subst(text, filled);
}

const char *kSamplingHelpers = R"CUDA(
// --- sampled_logits (passes/lib/cuda/SampledSoftmaxLowering.cpp) ---
// sampling::logUniformId and logExpectedCount (SampledSoftmaxKernels.h).
__device__ __forceinline__ emb_i64 emb_log_uniform_id(emb_u64 key, emb_i64 j, emb_i64 V) {
  const double u = emb_uniform01(emb_hash_word(key, (emb_u64)j));
  const emb_i64 id = (emb_i64)exp(u * log((double)V + 1.0)) - 1;
  return id < 0 ? 0 : (id > V - 1 ? V - 1 : id);
}
__device__ __forceinline__ double emb_log_expected_count(emb_i64 v, emb_i64 V, emb_i64 S) {
  return log((double)S) + log(log1p(1.0 / (double)(v + 1)) / log((double)V + 1.0));
}
)CUDA";

void appendSamplingHelpers(CudaEmitter &em) {
  appendDropoutHelpers(em); // emb_mix64, emb_hash_word, emb_uniform01
  appendTokenRowHelpers(em);
  em.appendOnce("emb_sampled_logits_helpers", kSamplingHelpers);
}

int64_t rowBlocks(const Shape &s) { return std::min(s.rows, kMaxRowBlocks); }

void lowerSampledLogits(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.inputs.size() < 3 || k.inputs.size() > 4 || k.outputs.size() != 3)
    throw CodegenError("sampled_logits expects 3 or 4 inputs and 3 outputs");
  const int64_t S = intAttr(k, "num_sampled"), stream = intAttr(k, "stream");
  const Shape s = shapeOf(em, k, k.inputs[0], k.inputs[1], k.inputs[2], S);
  const bool bias = k.inputs.size() == 4;
  if (bias)
    expectNumel(em, k.inputs[3], s.V, "sampled_logits bias");
  expectNumel(em, k.outputs[0], s.rows * (S + 1), "sampled_logits logits");
  expectNumel(em, k.outputs[1], s.rows, "sampled_logits classes");
  const rt::Buffer &cand = em.buffer(k.outputs[2]);
  if (cand.dtype != rt::DType::I64 || numel(cand) != S)
    throw CodegenError("sampled_logits candidates '" + cand.name + "' must be " +
                       std::to_string(S) + " i64");
  appendSamplingHelpers(em);
  Vars vars = varsOf(em, s);
  vars["BIAS"] = bias ? "(double)BIAS[$IDX]" : "0.0";
  const int64_t wt = em.scratch(s.D * S * 4), offsets = em.scratch(S * 4);
  const rt::CudaArg biasArg = bias ? CudaEmitter::buf(k.inputs[3]) : CudaEmitter::buf(k.inputs[1]);

  const std::string draw = em.entryName("sampled_logits_draw");
  Vars drawVars = vars;
  drawVars["BIAS"] = bias ? "(double)BIAS[id]" : "0.0";
  em.append(withName(R"CUDA(
// $NAME: the step's $S log-uniform candidates below $V and their weights, D x S.
extern "C" __global__ void $NAME(EmbArgs a) {
  if (!a.step->training) return;
  const float *W = (const float *)a.p[0], *BIAS = (const float *)a.p[1];
  emb_i64 *cand = (emb_i64 *)a.p[2];
  float *WT = (float *)a.p[3], *OFF = (float *)a.p[4];
  (void)BIAS;
)CUDA" + counterKeyCode("key", runtime::cpu::sampling::kTag, stream, "(emb_u64)a.step->step") +
                         R"CUDA(  for (emb_i64 j = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; j < $S;
       j += (emb_i64)gridDim.x * blockDim.x) {
    const emb_i64 id = emb_log_uniform_id(key, j, $V), v = id;
    cand[j] = id;
    OFF[j] = (float)($BIAS - emb_log_expected_count(id, $V, $S));
    // Consecutive threads write consecutive candidates of a row of WT.
    for (emb_i64 d = 0; d < $D; ++d) WT[d * $S + j] = $WAT;
  }
}
)CUDA",
                         drawVars, draw));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      draw,
      {CudaEmitter::buf(k.inputs[1]), biasArg, CudaEmitter::buf(k.outputs[2]),
       CudaEmitter::scratchAt(wt), CudaEmitter::scratchAt(offsets)},
      gridFor(S, 256), 256));

  // The target's logit: a block sum in double (every thread gets it).
  const std::string targetLogit = R"CUDA(    double part = 0.0;
    for (emb_i64 d = threadIdx.x; d < $D; d += blockDim.x) { const emb_i64 v = c; part += (double)xs[d] * (double)$WAT; }
    const double zt = emb_block_sum_f64(part, dred))CUDA";
  const std::string rowHead = R"CUDA(  __shared__ float xs[$D];
  __shared__ double dred[32];
  __shared__ float fred[32];
  (void)fred;
  const float *X = (const float *)a.p[0], *W = (const float *)a.p[1],
              *T = (const float *)a.p[2], *BIAS = (const float *)a.p[3];
  float *Y = (float *)a.p[4], *CLS = (float *)a.p[5];
  (void)BIAS;
  for (emb_i64 r = blockIdx.x; r < $ROWS; r += gridDim.x) {
    __syncthreads();
    for (emb_i64 d = threadIdx.x; d < $D; d += blockDim.x) xs[d] = X[r * $D + d];
    __syncthreads();
    float *row = Y + r * $S1;
    const int c = emb_token_class(T[r], $V);
    if (c < 0) {
      if (c == -2 && threadIdx.x == 0) emb_set_error(a.step, $CODE, r);
      for (emb_i64 j = threadIdx.x; j < $S1; j += blockDim.x) row[j] = 0.0f;
      if (threadIdx.x == 0) CLS[r] = -1.0f;
      continue;
    }
)CUDA";
  std::vector<rt::CudaArg> rowArgs = {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]),
                                      CudaEmitter::buf(k.inputs[2]), biasArg,
                                      CudaEmitter::buf(k.outputs[0]), CudaEmitter::buf(k.outputs[1]),
                                      CudaEmitter::buf(k.outputs[2]), CudaEmitter::scratchAt(wt),
                                      CudaEmitter::scratchAt(offsets)};

  const std::string rows = em.entryName("sampled_logits_rows");
  Vars rowVars = vars;
  rowVars["IDX"] = "c";
  em.append(withName(R"CUDA(
// $NAME: training's 1 + $S logits of each of $ROWS rows (a block per row).
extern "C" __global__ void $NAME(EmbArgs a) {
  if (!a.step->training) return;
  const emb_i64 *cand = (const emb_i64 *)a.p[6];
  const float *WT = (const float *)a.p[7], *OFF = (const float *)a.p[8];
)CUDA" + rowHead + targetLogit +
                         R"CUDA(;
    if (threadIdx.x == 0) {
      row[0] = (float)(zt + $BIAS - emb_log_expected_count(c, $V, $S));
      CLS[r] = 0.0f;
    }
    for (emb_i64 j = threadIdx.x; j < $S; j += blockDim.x) {
      if (cand[j] == c) { row[1 + j] = $EXCLUDED; continue; }
      float z = 0.0f;
      for (emb_i64 d = 0; d < $D; ++d) z += xs[d] * WT[d * $S + j];
      row[1 + j] = z + OFF[j];
    }
  }
}
)CUDA",
                         rowVars, rows));
  // The target's double dot and a candidate's loop need more than the
  // default 64 registers on sm_80 (they spilled): 4 blocks of 128 a SM.
  em.setMinBlocks(rows, kRowMinBlocks);
  out.launches.push_back(CudaEmitter::kernelLaunch(rows, rowArgs, rowBlocks(s), kRowBlock));

  const std::string full = em.entryName("sampled_logits_full");
  Vars fullVars = vars;
  fullVars["IDX"] = "c";
  fullVars["BIASV"] = bias ? "BIAS[v]" : "0.0f";
  em.append(withName(R"CUDA(
// $NAME: evaluation's full softmax over $V classes in the sampled layout.
extern "C" __global__ void $NAME(EmbArgs a) {
  if (a.step->training) return;
)CUDA" + rowHead + targetLogit +
                         R"CUDA(;
    float m = __int_as_float(0xff800000);  // -inf
    double sum = 0.0;
    for (emb_i64 v = threadIdx.x; v < $V; v += blockDim.x) {
      if (v == c) continue;
      float z = 0.0f;
      for (emb_i64 d = 0; d < $D; ++d) z += xs[d] * $WAT;
      z += $BIASV;
      if (z > m) { sum = sum * exp((double)m - (double)z) + 1.0; m = z; }
      else sum += exp((double)z - (double)m);
    }
    const float mx = emb_block_max_f32(m, fred);
    const double total = emb_block_sum_f64(m == mx ? sum : sum * exp((double)m - (double)mx), dred);
    for (emb_i64 j = 2 + threadIdx.x; j < $S1; j += blockDim.x) row[j] = $EXCLUDED;
    if (threadIdx.x == 0) {
      row[0] = (float)(zt + $BIAS);
      row[1] = (float)((double)mx + log(total));
      CLS[r] = 0.0f;
    }
  }
}
)CUDA",
                         fullVars, full));
  em.setMinBlocks(full, kRowMinBlocks);
  out.launches.push_back(CudaEmitter::kernelLaunch(full, rowArgs, rowBlocks(s), kRowBlock));
}

void lowerSampledLogitsGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.inputs.size() != 5 || k.outputs.size() < 2 || k.outputs.size() > 3)
    throw CodegenError("sampled_logits_grad expects 5 inputs and 2 or 3 outputs");
  const rt::Buffer &cand = em.buffer(k.inputs[4]);
  if (cand.dtype != rt::DType::I64 || cand.shape.size() != 1)
    throw CodegenError("sampled_logits_grad candidates '" + cand.name + "' must be an i64 vector");
  const Shape s = shapeOf(em, k, k.inputs[1], k.inputs[2], k.inputs[3], numel(cand));
  expectNumel(em, k.inputs[0], s.rows * (s.S + 1), "sampled_logits_grad dlogits");
  expectNumel(em, k.outputs[0], s.rows * s.D, "sampled_logits_grad dx");
  expectNumel(em, k.outputs[1], s.V * s.D, "sampled_logits_grad dweight");
  const bool bias = k.outputs.size() == 3;
  if (bias)
    expectNumel(em, k.outputs[2], s.V, "sampled_logits_grad dbias");
  appendSamplingHelpers(em);
  Vars vars = varsOf(em, s);
  const int64_t wc = em.scratch(s.S * s.D * 4), g = em.scratch(s.S * (s.D + 1) * 4);
  const rt::CudaArg dy = CudaEmitter::buf(k.inputs[0]), x = CudaEmitter::buf(k.inputs[1]),
                    w = CudaEmitter::buf(k.inputs[2]), t = CudaEmitter::buf(k.inputs[3]),
                    c = CudaEmitter::buf(k.inputs[4]), dx = CudaEmitter::buf(k.outputs[0]),
                    dw = CudaEmitter::buf(k.outputs[1]),
                    db = bias ? CudaEmitter::buf(k.outputs[2]) : dw;
  // dz[r, j], 0 for a row without a (valid) target.
  const std::string dzOf = "(emb_token_class(T[r], $V) >= 0 ? DY[r * $S1 + 1 + j] : 0.0f)";

  const std::string gName = em.entryName("sampled_logits_grad_g");
  em.append(withName(R"CUDA(
// $NAME: g[j, d] = sum_r dz[r, j] x[r, d] (d = $D: sum_r dz[r, j]) in row
// order, and the candidates' weights as S x D.
extern "C" __global__ void $NAME(EmbArgs a) {
  const float *DY = (const float *)a.p[0], *X = (const float *)a.p[1], *W = (const float *)a.p[2],
              *T = (const float *)a.p[3];
  const emb_i64 *cand = (const emb_i64 *)a.p[4];
  float *WC = (float *)a.p[5], *G = (float *)a.p[6];
  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < $S * ($D + 1);
       i += (emb_i64)gridDim.x * blockDim.x) {
    const emb_i64 j = i / ($D + 1), d = i % ($D + 1);
    float acc = 0.0f;
    for (emb_i64 r = 0; r < $ROWS; ++r) acc += )CUDA" + dzOf + R"CUDA( * (d < $D ? X[r * $D + d] : 1.0f);
    G[i] = acc;
    if (d < $D) { const emb_i64 v = cand[j]; WC[j * $D + d] = $WAT; }
  }
}
)CUDA",
                     vars, gName));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      gName, {dy, x, w, t, c, CudaEmitter::scratchAt(wc), CudaEmitter::scratchAt(g)},
      gridFor(s.S * (s.D + 1), 256), 256));

  const std::string dxName = em.entryName("sampled_logits_grad_dx");
  em.append(withName(R"CUDA(
// $NAME: dx[r] = dz_r . w_c + dz_t w_t, a block per row.
extern "C" __global__ void $NAME(EmbArgs a) {
  const float *DY = (const float *)a.p[0], *W = (const float *)a.p[1], *T = (const float *)a.p[2],
              *WC = (const float *)a.p[3];
  float *DX = (float *)a.p[4];
  for (emb_i64 r = blockIdx.x; r < $ROWS; r += gridDim.x) {
    const int c = emb_token_class(T[r], $V);
    for (emb_i64 d = threadIdx.x; d < $D; d += blockDim.x) {
      if (c < 0) { DX[r * $D + d] = 0.0f; continue; }
      float acc = 0.0f;
      for (emb_i64 j = 0; j < $S; ++j) acc += DY[r * $S1 + 1 + j] * WC[j * $D + d];
      const emb_i64 v = c;
      DX[r * $D + d] = acc + DY[r * $S1] * $WAT;
    }
  }
}
)CUDA",
                     vars, dxName));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      dxName, {dy, w, t, CudaEmitter::scratchAt(wc), dx}, rowBlocks(s), kRowBlock));

  Vars zeroVars = vars;
  zeroVars["NB"] = bias ? "$V" : "0";
  const std::string zero = em.entryName("sampled_logits_grad_zero");
  em.append(withName(R"CUDA(
// $NAME: the weight's (and bias's) gradient cleared.
extern "C" __global__ void $NAME(EmbArgs a) {
  float *DW = (float *)a.p[0], *DB = (float *)a.p[1];
  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < $V * $D + $NB;
       i += (emb_i64)gridDim.x * blockDim.x) {
    if (i < $V * $D) DW[i] = 0.0f; else DB[i - $V * $D] = 0.0f;
  }
}
)CUDA",
                     zeroVars, zero));
  out.launches.push_back(
      CudaEmitter::kernelLaunch(zero, {dw, db}, gridFor(s.V * s.D + (bias ? s.V : 0), 256), 256));

  Vars scatterVars = vars;
  scatterVars["LAST"] = bias ? "$D + 1" : "$D";
  const std::string scatter = em.entryName("sampled_logits_grad_scatter");
  em.append(withName(R"CUDA(
// $NAME: thread d adds the candidates' g[j, d] in slot order, then the
// targets' dz_t x[r, d] in row order (thread $D: the bias).
extern "C" __global__ void $NAME(EmbArgs a) {
  const float *DY = (const float *)a.p[0], *X = (const float *)a.p[1], *T = (const float *)a.p[2],
              *G = (const float *)a.p[3];
  const emb_i64 *cand = (const emb_i64 *)a.p[4];
  float *DW = (float *)a.p[5], *DB = (float *)a.p[6];
  const emb_i64 d = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (d >= $LAST) return;
  float *W = d < $D ? DW : DB;
  for (emb_i64 j = 0; j < $S; ++j) {
    const emb_i64 v = cand[j];
    if (d < $D) $WAT += G[j * ($D + 1) + d]; else DB[v] += G[j * ($D + 1) + $D];
  }
  for (emb_i64 r = 0; r < $ROWS; ++r) {
    const int v = emb_token_class(T[r], $V);
    if (v < 0) continue;
    if (d < $D) $WAT += DY[r * $S1] * X[r * $D + d]; else DB[v] += DY[r * $S1];
  }
  (void)W;
}
)CUDA",
                     scatterVars, scatter));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      scatter, {dy, x, t, CudaEmitter::scratchAt(g), c, dw, db},
      (s.D + (bias ? 1 : 0) + kRowBlock - 1) / kRowBlock, kRowBlock));
}

} // namespace

EMBC_CUDA_LOWERING(SampledLogits, lowerSampledLogits)
EMBC_CUDA_LOWERING(SampledLogitsGrad, lowerSampledLogitsGrad)
