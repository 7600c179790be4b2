//===- SampledSoftmaxBindings.cpp - sampled_logits on the CPU --------------===//
//
// `sampled_logits` draws its candidates while training (the step's key:
// cpu::samplingKey) and computes the full softmax's logits in evaluation;
// `sampled_logits_grad` reads the forward's candidates from their buffer.
// Each bound kernel owns its scratch (SampledShape::scratchSize), sized
// once here.
//
//===----------------------------------------------------------------------===//

#include "CpuBinder.h"

#include "embc/runtime/cpu/SampledSoftmaxKernels.h"

#include <memory>
#include <stdexcept>

using namespace embc::runtime;

namespace {

/// x (rows x D), the weight (D x V, or V x D when tied), target (x's rows)
/// and S candidates, checked.
cpu::SampledShape sampledShape(const Binder &b, const Buffer &x, const Buffer &weight,
                               const Buffer &target, int64_t S) {
  cpu::SampledShape s;
  s.tied = b.flag("tied");
  s.D = b.cols(x);
  s.rows = b.rows(x);
  if (weight.shape.size() != 2 || b.dim(weight, s.tied ? 1 : 0) != s.D)
    b.fail("weight '" + weight.name + "' must be " + (s.tied ? "V x D" : "D x V") + " with D = " +
           std::to_string(s.D));
  s.V = b.dim(weight, s.tied ? 0 : 1);
  s.S = S;
  if (Binder::numel(target) != s.rows)
    b.fail("target '" + target.name + "' must have one entry per row of '" + x.name + "' (" +
           std::to_string(s.rows) + ")");
  if (s.V < 2 || s.S < 1)
    b.fail("needs 2 or more classes and 1 or more candidates");
  return s;
}

/// A std::invalid_argument of the kernels (a bad target) is the data's.
template <class F> void rethrowAsDataError(F &&f) {
  try {
    f();
  } catch (const std::invalid_argument &e) {
    throw data::DataError(e.what());
  }
}

/// sampled_logits: x, weight, target[, bias] -> logits, classes, candidates.
BoundKernel bindSampledLogits(const Binder &b) {
  const Kernel &k = b.k;
  if (k.inputs.size() < 3 || k.inputs.size() > 4 || k.outputs.size() != 3)
    b.fail("expected 3 or 4 inputs and 3 outputs");
  const int64_t S = b.integer("num_sampled"), stream = b.integer("stream");
  const cpu::SampledShape shape = sampledShape(b, b.in(0), b.in(1), b.in(2), S);
  if (Binder::numel(b.out(0)) != shape.rows * (S + 1) || Binder::numel(b.out(1)) != shape.rows ||
      Binder::numel(b.out(2)) != S || b.out(2).dtype != DType::I64)
    b.fail("outputs must be rows x (1 + num_sampled) logits, one class a row and num_sampled "
           "i64 candidates");
  if (k.inputs.size() == 4 && Binder::numel(b.in(3)) != shape.V)
    b.fail("bias must have " + std::to_string(shape.V) + " entries");
  const int32_t x = k.inputs[0], w = k.inputs[1], target = k.inputs[2],
                bias = k.inputs.size() == 4 ? k.inputs[3] : -1, logits = k.outputs[0],
                classes = k.outputs[1], candidates = k.outputs[2];
  auto scratch = std::make_shared<std::vector<float>>(size_t(shape.scratchSize()));
  return [=](ExecState &s) {
    const float *biasData = bias >= 0 ? s.data<float>(bias) : nullptr;
    rethrowAsDataError([&] {
      if (!s.training) {
        cpu::sampledLogitsEval(s.data<float>(x), s.data<float>(w), biasData,
                               s.data<float>(target), shape, s.data<float>(logits),
                               s.data<float>(classes), scratch->data());
        return;
      }
      int64_t *ids = s.data<int64_t>(candidates);
      cpu::sampleCandidates(cpu::samplingKey(s.seed, stream, uint64_t(s.step)), shape.V, S, ids);
      cpu::sampledLogitsTrain(s.data<float>(x), s.data<float>(w), biasData, s.data<float>(target),
                              ids, shape, s.data<float>(logits), s.data<float>(classes),
                              scratch->data());
    });
  };
}

/// sampled_logits_grad: dlogits, x, weight, target, candidates -> dx,
/// dweight[, dbias].
BoundKernel bindSampledLogitsGrad(const Binder &b) {
  const Kernel &k = b.k;
  if (k.inputs.size() != 5 || k.outputs.size() < 2 || k.outputs.size() > 3)
    b.fail("expected 5 inputs and 2 or 3 outputs");
  const Buffer &candidates = b.in(4);
  if (candidates.dtype != DType::I64 || candidates.shape.size() != 1)
    b.fail("candidates '" + candidates.name + "' must be an i64 vector");
  const cpu::SampledShape shape =
      sampledShape(b, b.in(1), b.in(2), b.in(3), Binder::numel(candidates));
  if (Binder::numel(b.in(0)) != shape.rows * (shape.S + 1))
    b.fail("the logits' gradient must be rows x (1 + S)");
  if (b.out(0).shape != b.in(1).shape || b.out(1).shape != b.in(2).shape ||
      (k.outputs.size() == 3 && Binder::numel(b.out(2)) != shape.V))
    b.fail("the gradients must have the shapes of x, the weight and the bias");
  const int32_t dy = k.inputs[0], x = k.inputs[1], w = k.inputs[2], target = k.inputs[3],
                ids = k.inputs[4], dx = k.outputs[0], dw = k.outputs[1],
                db = k.outputs.size() == 3 ? k.outputs[2] : -1;
  auto scratch = std::make_shared<std::vector<float>>(size_t(shape.scratchSize()));
  return [=](ExecState &s) {
    rethrowAsDataError([&] {
      cpu::sampledLogitsGrad(s.data<float>(dy), s.data<float>(x), s.data<float>(w),
                             s.data<float>(target), s.data<int64_t>(ids), shape,
                             s.data<float>(dx), s.data<float>(dw),
                             db >= 0 ? s.data<float>(db) : nullptr, scratch->data());
    });
  };
}

} // namespace

std::vector<CpuBinding> embc::runtime::sampledSoftmaxBindings() {
  return {{KernelOp::SampledLogits, bindSampledLogits},
          {KernelOp::SampledLogitsGrad, bindSampledLogitsGrad}};
}
