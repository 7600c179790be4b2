//===- LossLowering.cpp - training losses and their input gradients -------===//
//
// loss and loss_grad (docs/plan-format.md) for bce_with_logits, mse,
// softmax_ce and neg_sampling, with runtime/lib/cpu/LossKernels.cpp's
// formulas:
//  - `loss` is one block: each thread sums the losses of rows t, t + T, ...
//    in double and the block adds the partial sums in a fixed order
//    (emb_block_sum_f64), so the mean is deterministic without atomics. The
//    CPU evaluates a row in double with log1p; here the part of softplus
//    that is not exact (log1p(exp(-|x|))) is f32 with Goldberg's log1p and
//    the rest is double, which keeps bce's softplus(x) - x y free of
//    cancellation (agreement ~1e-7 relative). softmax_ce's log-sum-exp is
//    split the same way: (max - x_c) + log1p(sum of the other exps).
//  - `loss_grad` is elementwise (bce, mse) or one thread per row (softmax,
//    neg_sampling), f32 expressions in the CPU's order, 1/B included; a
//    loss-scaled gradient is then multiplied by the step's loss scale
//    (a.step->lossScale), as the CPU binding does after the kernel.
// A softmax_ce target that is not a class index is a data error (the row is
// reported; the CPU throws the same).
//
//===----------------------------------------------------------------------===//

#include "ModelLowering.h"

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;

namespace {

struct LossShape {
  rt::LossKind loss = rt::LossKind::BceWithLogits;
  std::string kind; ///< its spelling, in kernel names and comments
  int64_t B = 0, C = 0;
};

LossShape shapeOf(CudaEmitter &em, const rt::Kernel &k) {
  LossShape s;
  s.kind = stringAttr(k, "kind");
  const std::optional<rt::LossKind> loss = rt::parseEnum<rt::LossKind>(s.kind);
  if (!loss)
    throw CodegenError("unknown loss '" + s.kind + "'");
  s.loss = *loss;
  const rt::Buffer &in = f32Matrix(em, k.inputs[0], -1, -1, "loss input");
  const rt::Buffer &target = f32Buffer(em, k.inputs[1], "loss target");
  s.B = in.shape[0];
  if (s.loss == rt::LossKind::NegSampling) {
    if (in.shape[1] != 1)
      throw CodegenError("neg_sampling input '" + in.name + "' must be B x 1");
    f32Matrix(em, k.inputs[1], s.B, -1, "negative scores");
    s.C = target.shape[1];
  } else {
    s.C = in.shape[1];
    const int64_t want = s.loss == rt::LossKind::SoftmaxCe ? s.B : s.B * s.C;
    if (numel(target) != want)
      throw CodegenError("loss target '" + target.name + "' has " +
                         std::to_string(numel(target)) + " values, expected " +
                         std::to_string(want));
  }
  return s;
}

/// The softmax_ce class of row b into `c`, or a data error (and `bad`).
std::string classIndexCode(CudaEmitter &em, const LossShape &s) {
  const int code = em.errorCode("loss (softmax_ce): a target is not a class index in [0, " +
                                std::to_string(s.C) + "); batch row");
  return subst(R"CUDA(    const float raw = T[b];
    const int c = (int)raw;
    const bool bad = !(raw >= 0.0f) || !(raw < (float)$C) || (float)c != raw;
    if (bad) emb_set_error(a.step, $CODE, b);
)CUDA",
               {{"C", lit(s.C)}, {"CODE", std::to_string(code)}});
}

/// True for the kind SequenceLossLowering.cpp lowers.
bool sequenceLoss(const rt::Kernel &k) {
  return stringAttr(k, "kind") == rt::enumName(rt::LossKind::SequenceSoftmaxCe);
}

void lowerLoss(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (sequenceLoss(k))
    return lowerSequenceLoss(em, k, out);
  expectCounts(k, 2, 1);
  const LossShape s = shapeOf(em, k);
  if (numel(f32Buffer(em, k.outputs[0], "loss output")) != 1)
    throw CodegenError("the loss output must hold 1 value");
  useHelpers(em);
  std::string row;
  if (s.loss == rt::LossKind::BceWithLogits) {
    // softplus(x) - x y = (max(x, 0) - x y) + log1p(exp(-|x|)).
    row = R"CUDA(    for (int j = 0; j < $C; ++j) {
      const float x = X[b * $C + j], y = T[b * $C + j];
      sum += ((double)fmaxf(x, 0.0f) - (double)x * (double)y) + (double)emb_softplus_tail(x);
    }
)CUDA";
  } else if (s.loss == rt::LossKind::Mse) {
    row = R"CUDA(    for (int j = 0; j < $C; ++j) {
      const double d = (double)X[b * $C + j] - (double)T[b * $C + j];
      sum += d * d;
    }
)CUDA";
  } else if (s.loss == rt::LossKind::SoftmaxCe) {
    row = classIndexCode(em, s) + R"CUDA(    if (!bad) {
      const float *r = X + b * $C;
      float mx = r[0];
      int at = 0;
      for (int j = 1; j < $C; ++j)
        if (mx < r[j]) { mx = r[j]; at = j; }
      // log(sum exp(r - mx)) = log1p(the sum without the maximum's exp(0) = 1).
      double rest = 0.0;
      for (int j = 0; j < $C; ++j)
        if (j != at) rest += (double)expf(r[j] - mx);
      sum += ((double)mx - (double)r[c]) + (double)emb_log1pf((float)rest);
    }
)CUDA";
  } else { // neg_sampling: softplus(-pos) + sum_k softplus(neg_k)
    row = R"CUDA(    {
      const float p = -X[b];
      sum += (double)fmaxf(p, 0.0f) + (double)emb_softplus_tail(p);
    }
    for (int j = 0; j < $C; ++j) {
      const float n = T[b * $C + j];
      sum += (double)fmaxf(n, 0.0f) + (double)emb_softplus_tail(n);
    }
)CUDA";
  }
  const std::string name = em.entryName("loss_" + s.kind);
  constexpr int64_t kThreads = 512;
  em.append(subst(R"CUDA(
// $NAME: mean $KIND loss over $B rows (one block, fixed-order sum).
extern "C" __global__ void $NAME(EmbArgs a) {
  __shared__ double red[32];
  const float *X = (const float *)a.p[0], *T = (const float *)a.p[1];
  double sum = 0.0;
  for (emb_i64 b = threadIdx.x; b < $B; b += blockDim.x) {
$ROW  }
  const double total = emb_block_sum_f64(sum, red);
  if (threadIdx.x == 0) *(float *)a.p[2] = (float)(total / (double)$B);
}
)CUDA",
                  {{"NAME", name},
                   {"KIND", s.kind},
                   {"B", lit(s.B)},
                   {"ROW", subst(row, {{"C", lit(s.C)}})}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      name, {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]),
             CudaEmitter::buf(k.outputs[0])},
      1, kThreads));
}

void lowerLossGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (sequenceLoss(k))
    return lowerSequenceLossGrad(em, k, out);
  if (k.inputs.size() != 2)
    throw CodegenError("expected 2 inputs, got " + std::to_string(k.inputs.size()));
  const LossShape s = shapeOf(em, k);
  const bool twoSided = s.loss == rt::LossKind::NegSampling;
  expectCounts(k, 2, twoSided ? 2 : 1);
  if (numel(f32Buffer(em, k.outputs[0], "input gradient")) != numel(em.buffer(k.inputs[0])))
    throw CodegenError("the input gradient's size differs from the input's");
  if (twoSided && numel(f32Buffer(em, k.outputs[1], "target gradient")) != s.B * s.C)
    throw CodegenError("the negative-score gradient's size differs from the scores'");
  const bool scaled = boolAttr(k, "loss_scaled");
  if (scaled && !em.plan().config.lossScaling.enabled)
    throw CodegenError("loss_scaled is set but the plan's config.loss_scaling is disabled");
  useHelpers(em);

  // invB = T(1) / T(B) in f32, printed exactly.
  const std::string invB = floatLiteral(double(1.0f / float(s.B)));
  // The loss-scaled gradient: the CPU multiplies the stored value by S.
  const std::string S = scaled ? " * S" : "";
  std::string body;
  int64_t items = 0;
  if (s.loss == rt::LossKind::BceWithLogits || s.loss == rt::LossKind::Mse) {
    items = s.B * s.C;
    const std::string g = s.loss == rt::LossKind::Mse ? "2.0f * (X[i] - T[i]) * $INVB"
                                          : "(emb_stable_sigmoid(X[i]) - T[i]) * $INVB";
    body = "    float g = " + g + ";\n" + (scaled ? "    g = g * S;\n" : "") +
           "    DX[i] = g;\n";
  } else if (s.loss == rt::LossKind::SoftmaxCe) {
    items = s.B;
    body = "    const emb_i64 b = i;\n" + classIndexCode(em, s) + R"CUDA(    const float *r = X + b * $C;
    float *o = DX + b * $C;
    if (bad) {
      for (int j = 0; j < $C; ++j) o[j] = 0.0f;
      continue;
    }
    float mx = r[0];
    for (int j = 1; j < $C; ++j) mx = mx < r[j] ? r[j] : mx;
    float sumExp = 0.0f;
    for (int j = 0; j < $C; ++j) {
      o[j] = expf(r[j] - mx);
      sumExp += o[j];
    }
    const float scale = $INVB / sumExp;
    for (int j = 0; j < $C; ++j) o[j] *= scale;
    o[c] -= $INVB;
)CUDA";
    if (scaled)
      body += "    for (int j = 0; j < $C; ++j) o[j] = o[j] * S;\n";
  } else { // neg_sampling
    items = s.B;
    body = R"CUDA(    DX[i] = -emb_stable_sigmoid(-X[i]) * $INVB$S;
    for (int j = 0; j < $C; ++j) {
      const emb_i64 e = i * $C + j;
      DT[e] = emb_stable_sigmoid(T[e]) * $INVB$S;
    }
)CUDA";
  }
  const std::string name = em.entryName("loss_grad_" + s.kind);
  em.append(subst(R"CUDA(
// $NAME: d(mean $KIND loss)/d input over $B rows$SCALED.
extern "C" __global__ void $NAME(EmbArgs a) {
  const float *X = (const float *)a.p[0], *T = (const float *)a.p[1];
  float *DX = (float *)a.p[2];
  $DTDECL
  const float S = a.step->lossScale;
  (void)S;
  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < $N;
       i += (emb_i64)gridDim.x * blockDim.x) {
$BODY  }
}
)CUDA",
                  {{"NAME", name},
                   {"KIND", s.kind},
                   {"B", lit(s.B)},
                   {"SCALED", scaled ? ", times the loss scale" : ""},
                   {"DTDECL", twoSided ? "float *DT = (float *)a.p[3];" : ""},
                   {"N", lit(items)},
                   {"BODY", subst(body, {{"C", lit(s.C)}, {"INVB", invB}, {"S", S}})}}));
  std::vector<rt::CudaArg> args = {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.inputs[1]),
                                   CudaEmitter::buf(k.outputs[0])};
  if (twoSided)
    args.push_back(CudaEmitter::buf(k.outputs[1]));
  out.launches.push_back(
      CudaEmitter::kernelLaunch(name, std::move(args), gridFor(items, 256), 256));
}

} // namespace

EMBC_CUDA_LOWERING(Loss, lowerLoss)
EMBC_CUDA_LOWERING(LossGrad, lowerLossGrad)
