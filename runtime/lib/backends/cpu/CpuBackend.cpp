//===- CpuBackend.cpp - plan kernels bound to the CPU kernels ------------===//
//
// Binds each kernel of the plan's catalogue (docs/plan-format.md) to the
// float CPU kernels in cpu/Kernels.h: operand counts, dtypes and shapes are
// checked once at bind time, so a step only calls functions on pointers.
// Dynamic buffers (ids, sparse-gradient rows) carry their filled length in
// ExecState::length.
//
//===----------------------------------------------------------------------===//

#include "CommBindings.h"
#include "CpuBinder.h"
#include "NonFinite.h"
#include "TeamTuner.h"

#include "embc/runtime/backends/CpuBackend.h"
#include "embc/runtime/cpu/AttentionKernels.h"
#include "embc/runtime/cpu/DropoutKernels.h"
#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/cpu/MaskKernels.h"
#include "embc/runtime/cpu/NormKernels.h"
#include "embc/runtime/cpu/SequenceKernels.h"
#include "embc/runtime/cpu/Parallel.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>

extern "C" void openblas_set_num_threads(int);

using namespace embc::runtime;
namespace cpu = embc::runtime::cpu;

namespace {

BoundKernel bindHash(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(1, 1);
  int64_t buckets = b.integer("buckets");
  uint64_t seed = uint64_t(b.integer("seed"));
  int32_t in = k.inputs[0], out = k.outputs[0];
  return [=](ExecState &s) {
    int64_t n = idCount(s, in);
    cpu::hashIds(s.data<int64_t>(in), s.data<int64_t>(out), n, buckets, seed);
    s.length[out] = n;
  };
}

BoundKernel bindLookup(const Binder &b) {
  const Kernel &k = b.k;
  bool weighted = k.inputs.size() == 3;
  b.expectCounts(weighted ? 3 : 2, 1);
  const Table &t = b.table();
  cpu::Pooling pooling = poolingOf(b);
  int64_t B = b.dim(b.out(0), 0), D = t.dim;
  int32_t ids = k.inputs[0], offsets = k.inputs[1], y = k.outputs[0];
  int32_t weights = weighted ? k.inputs[2] : -1, table = t.buffer;
  return [=, &t](ExecState &s) {
    checkIds(s.data<int64_t>(ids), idCount(s, ids), t.rowsOn(s.rank()), t);
    cpu::lookupForward(s.data<float>(table), D, s.data<int64_t>(ids),
                       s.data<int64_t>(offsets),
                       weights >= 0 ? s.data<float>(weights) : nullptr, B,
                       pooling, s.data<float>(y));
  };
}

BoundKernel bindGather(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(1, 1);
  const Table &t = b.table();
  int64_t n = Binder::numel(b.in(0)), D = t.dim, rows = t.rows;
  int32_t ids = k.inputs[0], y = k.outputs[0], table = t.buffer;
  return [=, &t](ExecState &s) {
    checkIds(s.data<int64_t>(ids), n, rows, t);
    cpu::gatherForward(s.data<float>(table), D, s.data<int64_t>(ids), n,
                       s.data<float>(y));
  };
}

BoundKernel bindDense(const Binder &b) {
  const Kernel &k = b.k;
  bool bias = k.inputs.size() == 3;
  b.expectCounts(bias ? 3 : 2, 1);
  int64_t B = b.rows(b.in(0)), K = b.cols(b.in(0)), N = b.dim(b.in(1), 1);
  if (b.dim(b.in(1), 0) != K)
    b.fail("weight rows != input columns");
  int32_t x = k.inputs[0], w = k.inputs[1], bb = bias ? k.inputs[2] : -1,
          y = k.outputs[0];
  cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    cpu::denseForward(s.data<float>(x), s.data<float>(w),
                      bb >= 0 ? s.data<float>(bb) : nullptr, s.data<float>(y),
                      B, K, N, compute);
  };
}

BoundKernel bindActivation(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(1, 1);
  cpu::Activation f = activationOf(b);
  int64_t n = Binder::numel(b.in(0));
  int32_t x = k.inputs[0], y = k.outputs[0];
  return [=](ExecState &s) {
    cpu::activationForward(f, s.data<float>(x), s.data<float>(y), n);
  };
}

BoundKernel bindConcat(const Binder &b) {
  const Kernel &k = b.k;
  b.expectMinInputs(1, 1);
  std::vector<int64_t> widths = widthsOf(b, 0, k.inputs.size());
  int64_t B = b.dim(b.out(0), 0);
  std::vector<int32_t> ins = k.inputs;
  int32_t y = k.outputs[0];
  return [=](ExecState &s) {
    std::vector<const float *> xs;
    for (int32_t i : ins)
      xs.push_back(s.data<float>(i));
    cpu::concatForward(xs, widths, s.data<float>(y), B);
  };
}

BoundKernel bindAdd(const Binder &b) {
  const Kernel &k = b.k;
  bool bias = b.flag("bias");
  b.expectMinInputs(bias ? 2 : 1, 1);
  int64_t B = b.rows(b.out(0)), N = b.cols(b.out(0));
  std::vector<int32_t> ins(k.inputs.begin(), k.inputs.end() - (bias ? 1 : 0));
  int32_t bb = bias ? k.inputs.back() : -1, y = k.outputs[0];
  return [=](ExecState &s) {
    std::vector<const float *> xs;
    for (int32_t i : ins)
      xs.push_back(s.data<float>(i));
    cpu::addForward(xs, bb >= 0 ? s.data<float>(bb) : nullptr,
                    s.data<float>(y), B, N);
  };
}

BoundKernel bindInteraction(const Binder &b) {
  const Kernel &k = b.k;
  b.expectMinInputs(2, 1);
  bool self = b.flag("self");
  int64_t B = b.dim(b.in(0), 0), D = b.dim(b.in(0), 1);
  std::vector<int32_t> ins = k.inputs;
  int32_t y = k.outputs[0];
  cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    std::vector<const float *> xs;
    for (int32_t i : ins)
      xs.push_back(s.data<float>(i));
    cpu::interactionForward(xs, s.data<float>(y), B, D, self, compute);
  };
}

BoundKernel bindCross(const Binder &b) {
  const Kernel &k = b.k;
  // A second output keeps xl w for cross_grad (emb.cross's `linear`).
  b.expectCounts(4, k.outputs.size() == 2 ? 2 : 1);
  int64_t B = b.dim(b.in(0), 0), D = b.dim(b.in(0), 1);
  auto in = k.inputs;
  int32_t y = k.outputs[0], linear = k.outputs.size() == 2 ? k.outputs[1] : -1;
  if (linear >= 0 && Binder::numel(b.out(1)) != B * D)
    b.fail("the kept product xl w must have " + std::to_string(B * D) + " elements");
  cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    cpu::crossForward(s.data<float>(in[0]), s.data<float>(in[1]),
                      s.data<float>(in[2]), s.data<float>(in[3]),
                      s.data<float>(y), B, D, compute,
                      linear >= 0 ? s.data<float>(linear) : nullptr);
  };
}

BoundKernel bindDot(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 1);
  int64_t B = b.dim(b.in(0), 0), D = b.dim(b.in(0), 1);
  int64_t K = b.in(1).shape.size() == 3 ? b.in(1).shape[1] : 0;
  int32_t l = k.inputs[0], r = k.inputs[1], y = k.outputs[0];
  return [=](ExecState &s) {
    cpu::dotForward(s.data<float>(l), s.data<float>(r), s.data<float>(y), B,
                    K, D);
  };
}

BoundKernel bindLoss(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 1);
  cpu::LossKind kind = lossOf(b);
  int32_t in = k.inputs[0], target = k.inputs[1], out = k.outputs[0];
  if (kind == cpu::LossKind::SequenceSoftmaxCe) {
    const int64_t B = b.dim(b.in(0), 0), L = b.dim(b.in(0), 1), C = b.dim(b.in(0), 2);
    return [=](ExecState &s) {
      *s.data<float>(out) =
          cpu::sequenceLossForward(s.data<float>(in), s.data<float>(target), B, L, C);
    };
  }
  int64_t B = b.dim(b.in(0), 0);
  int64_t C = kind == cpu::LossKind::NegSampling ? b.dim(b.in(1), 1)
                                                 : b.dim(b.in(0), 1);
  return [=](ExecState &s) {
    *s.data<float>(out) = cpu::lossForward(kind, s.data<float>(in),
                                           s.data<float>(target), B, C);
  };
}


BoundKernel bindLossGrad(const Binder &b) {
  const Kernel &k = b.k;
  cpu::LossKind kind = lossOf(b);
  bool twoSided = kind == cpu::LossKind::NegSampling;
  b.expectCounts(2, twoSided ? 2 : 1);
  int64_t B = b.dim(b.in(0), 0);
  int64_t C = twoSided ? b.dim(b.in(1), 1) : b.dim(b.in(0), 1);
  int32_t in = k.inputs[0], target = k.inputs[1], din = k.outputs[0];
  int32_t dtarget = twoSided ? k.outputs[1] : -1;
  // fp16 loss scaling: the gradient leaves the loss multiplied by the
  // current scale, so every gradient behind it (dense and embedding) is.
  bool scaled = b.flag("loss_scaled");
  if (scaled && !b.p.config.lossScaling.enabled)
    b.fail("loss_scaled is set but the plan's config.loss_scaling is disabled");
  int64_t nIn = Binder::numel(b.out(0)), nTarget = twoSided ? Binder::numel(b.out(1)) : 0;
  const bool sequence = kind == cpu::LossKind::SequenceSoftmaxCe;
  const int64_t L = sequence ? b.dim(b.in(0), 1) : 1, classes = sequence ? b.dim(b.in(0), 2) : C;
  return [=](ExecState &s) {
    if (sequence)
      cpu::sequenceLossGrad(s.data<float>(in), s.data<float>(target), s.data<float>(din), B, L,
                            classes);
    else
      cpu::lossGrad(kind, s.data<float>(in), s.data<float>(target), s.data<float>(din),
                    dtarget >= 0 ? s.data<float>(dtarget) : nullptr, B, C);
    if (!scaled)
      return;
    const float scale = float(s.lossScale.scale);
    for (auto [buffer, n] : {std::pair{din, nIn}, std::pair{dtarget, nTarget}}) {
      float *g = buffer >= 0 ? s.data<float>(buffer) : nullptr;
      for (int64_t i = 0; g && i < n; ++i)
        g[i] *= scale;
    }
  };
}

BoundKernel bindDenseGradInput(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 1);
  int64_t B = b.rows(b.in(0)), N = b.cols(b.in(0)), K = b.dim(b.in(1), 0);
  int32_t dy = k.inputs[0], w = k.inputs[1], dx = k.outputs[0];
  cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    cpu::denseGradInput(s.data<float>(dy), s.data<float>(w),
                        s.data<float>(dx), B, K, N, compute);
  };
}

BoundKernel bindDenseGradWeight(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 1);
  int64_t B = b.rows(b.in(0)), K = b.cols(b.in(0)), N = b.cols(b.in(1));
  int32_t x = k.inputs[0], dy = k.inputs[1], dw = k.outputs[0];
  cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    cpu::denseGradWeight(s.data<float>(x), s.data<float>(dy),
                         s.data<float>(dw), B, K, N, compute);
  };
}

/// Rows and width of a layer_norm operand x (rows x D, any leading dims).
/// The plan reader checked the other operands against it
/// (KernelOperands.cpp), so the kernels may trust them.
std::pair<int64_t, int64_t> normRows(const Binder &b, const Buffer &x) {
  return {b.rows(x), b.cols(x)};
}

/// layer_norm: x, gamma, beta (D) -> y like x.
BoundKernel bindLayerNorm(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(3, 1);
  const auto [rows, D] = normRows(b, b.in(0));
  const double eps = b.real("eps");
  const int32_t in = k.inputs[0], gamma = k.inputs[1], beta = k.inputs[2], y = k.outputs[0];
  return [=](ExecState &s) {
    cpu::layerNormForward(s.data<float>(in), s.data<float>(gamma), s.data<float>(beta),
                          s.data<float>(y), rows, D, eps);
  };
}

/// layer_norm_grad: dy, x, gamma -> dx, dgamma, dbeta.
BoundKernel bindLayerNormGrad(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(3, 3);
  const auto [rows, D] = normRows(b, b.in(1));
  const double eps = b.real("eps");
  const int32_t dy = k.inputs[0], in = k.inputs[1], gamma = k.inputs[2];
  const int32_t dx = k.outputs[0], dgamma = k.outputs[1], dbeta = k.outputs[2];
  return [=](ExecState &s) {
    cpu::layerNormBackward(s.data<float>(dy), s.data<float>(in), s.data<float>(gamma),
                           s.data<float>(dx), s.data<float>(dgamma), s.data<float>(dbeta), rows,
                           D, eps);
  };
}

/// dropout, dropout_grad: x -> y like x, scaled or zeroed by the mask of
/// (seed, stream, step) at each element's place in the global batch; a
/// copy outside training (DropoutKernels.h). The gradient applies the
/// forward's mask, so both kernels are this one.
BoundKernel bindDropout(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(1, 1);
  const Buffer &x = b.in(0);
  if (b.out(0).shape != x.shape)
    b.fail("the result must have the input's shape");
  const double rate = b.real("rate");
  if (!(rate >= 0.0 && rate < 1.0))
    b.fail("rate must be in [0, 1), got " + std::to_string(rate));
  const int64_t stream = b.integer("stream");
  const int64_t n = Binder::numel(x), rows = x.shape.empty() ? 1 : b.dim(x, 0);
  const int64_t perExample = rows > 0 ? n / rows : 0, padded = Binder::paddedPerExample(x);
  const int32_t in = k.inputs[0], y = k.outputs[0];
  return [=](ExecState &s) {
    const float *src = s.data<float>(in);
    float *dst = s.data<float>(y);
    if (!s.training || rate == 0.0) {
      if (src != dst)
        std::memcpy(dst, src, size_t(n) * sizeof(float));
      return;
    }
    const int64_t example = s.exampleOffset + int64_t(s.microBatch) * rows;
    cpu::dropoutApplyPadded(src, dst, n, perExample, padded,
                            cpu::dropoutKey(s.seed, stream, s.step), uint64_t(example * padded),
                            rate);
  };
}

/// B, L and D of a sequence operand (B x L x D); the plan reader checked
/// the offsets (B + 1) and the other operands against it.
struct SequenceShape {
  int64_t B, L, D;
};
SequenceShape sequenceShape(const Binder &b, const Buffer &seq) {
  return {b.dim(seq, 0), b.dim(seq, 1), b.dim(seq, 2)};
}

BoundKernel bindSequenceLookup(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 1);
  const Table &t = b.table();
  const auto [B, L, D] = sequenceShape(b, b.out(0));
  const int32_t ids = k.inputs[0], offsets = k.inputs[1], y = k.outputs[0], table = t.buffer;
  return [=, &t](ExecState &s) {
    const int64_t n = idCount(s, ids);
    checkIds(s.data<int64_t>(ids), n, t.rowsOn(s.rank()), t);
    checkSequences(s.data<int64_t>(offsets), B, L, n, "table '" + t.name + "'");
    cpu::sequenceLookupForward(s.data<float>(table), D, s.data<int64_t>(ids),
                               s.data<int64_t>(offsets), B, L, s.data<float>(y));
  };
}

/// next_token_targets: ids, offsets -> B x L.
BoundKernel bindNextTokenTargets(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 1);
  const int64_t B = b.dim(b.out(0), 0), L = b.dim(b.out(0), 1);
  const int32_t ids = k.inputs[0], offsets = k.inputs[1], out = k.outputs[0];
  return [=](ExecState &s) {
    checkSequences(s.data<int64_t>(offsets), B, L, idCount(s, ids), "the next-token targets");
    cpu::nextTokenTargets(s.data<int64_t>(ids), s.data<int64_t>(offsets), B, L,
                          s.data<float>(out));
  };
}

/// mask_tokens: ids, offsets -> masked ids, targets (B x L).
BoundKernel bindMaskTokens(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 2);
  const int64_t B = b.dim(b.out(1), 0), L = b.dim(b.out(1), 1);
  const double rate = b.real("rate");
  const int64_t maskId = b.integer("mask_id"), vocab = b.integer("vocab"),
                stream = b.integer("stream");
  const int32_t ids = k.inputs[0], offsets = k.inputs[1], masked = k.outputs[0],
                targets = k.outputs[1];
  const int64_t counterL = Binder::paddedLength(b.out(1));
  return [=](ExecState &s) {
    const int64_t n = idCount(s, ids);
    checkSequences(s.data<int64_t>(offsets), B, L, n, "the masked tokens");
    const uint64_t step = s.training ? uint64_t(s.step) : cpu::masking::kEvaluationStep;
    cpu::maskTokens(s.data<int64_t>(ids), s.data<int64_t>(offsets), n, B, L, rate, maskId, vocab,
                    cpu::maskKey(s.seed, stream, step),
                    uint64_t(s.exampleOffset + int64_t(s.microBatch) * B),
                    s.data<int64_t>(masked), s.data<float>(targets), counterL);
    s.length[masked] = n;
  };
}

/// select_targets: x (B x L x D), targets (B x L) -> rows (B x P x D), B x P.
BoundKernel bindSelectTargets(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 2);
  const auto [B, L, D] = sequenceShape(b, b.in(0));
  const int64_t P = b.dim(b.out(0), 1);
  const int32_t x = k.inputs[0], targets = k.inputs[1], rows = k.outputs[0],
                selected = k.outputs[1];
  return [=](ExecState &s) {
    const int64_t over = cpu::selectTargets(s.data<float>(x), s.data<float>(targets), B, L, D, P,
                                            s.data<float>(rows), s.data<float>(selected));
    if (over >= 0)
      throw data::DataError("sequence " + std::to_string(over) + " has more than " +
                            std::to_string(P) + " targets, the most select_targets keeps");
  };
}

/// select_targets_grad: dy (B x P x D), targets (B x L) -> dx (B x L x D).
BoundKernel bindSelectTargetsGrad(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 1);
  const auto [B, L, D] = sequenceShape(b, b.out(0));
  const int64_t P = b.dim(b.in(0), 1);
  const int32_t dy = k.inputs[0], targets = k.inputs[1], dx = k.outputs[0];
  return [=](ExecState &s) {
    cpu::selectTargetsBackward(s.data<float>(dy), s.data<float>(targets), B, L, D, P,
                               s.data<float>(dx));
  };
}

/// row_ids: -> 0 .. rows - 1 (the ids of a gradient over a whole table).
BoundKernel bindRowIds(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(0, 1);
  const int64_t rows = Binder::numel(b.out(0));
  const int32_t out = k.outputs[0];
  return [=](ExecState &s) {
    int64_t *ids = s.data<int64_t>(out);
    for (int64_t i = 0; i < rows; ++i)
      ids[i] = i;
  };
}

/// sequence_lookup_grad: ids, offsets, dy (B x L x D) -> one row per id.
BoundKernel bindSequenceLookupGrad(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(3, 1);
  const auto [B, L, D] = sequenceShape(b, b.in(2));
  const int32_t ids = k.inputs[0], offsets = k.inputs[1], dy = k.inputs[2], out = k.outputs[0];
  return [=](ExecState &s) {
    const int64_t n = idCount(s, ids);
    cpu::sequenceLookupBackward(s.data<float>(dy), s.data<int64_t>(offsets), B, L, D, n,
                                s.data<float>(out));
    s.length[out] = n;
  };
}

/// positions: x (B x L x D), offsets, [table (>= L x D): learned] -> y.
BoundKernel bindPositions(const Binder &b) {
  const Kernel &k = b.k;
  const PositionKind kind = wordOf<PositionKind>(b, "kind");
  const bool learned = kind == PositionKind::Learned;
  b.expectCounts(learned ? 3 : 2, 1);
  const auto [B, L, D] = sequenceShape(b, b.in(0));
  const int32_t x = k.inputs[0], offsets = k.inputs[1], table = learned ? k.inputs[2] : -1,
                y = k.outputs[0];
  // Sinusoids are the same every step: computed once, here.
  auto sinusoids = std::make_shared<std::vector<float>>(
      learned ? std::vector<float>() : cpu::sinusoidTable<float>(L, D));
  return [=](ExecState &s) {
    cpu::positionsForward(s.data<float>(x), s.data<int64_t>(offsets),
                          learned ? s.data<float>(table) : sinusoids->data(), B, L, D,
                          s.data<float>(y));
  };
}

/// positions_grad: dy, offsets -> dx, [dtable: learned].
BoundKernel bindPositionsGrad(const Binder &b) {
  const Kernel &k = b.k;
  const bool learned = wordOf<PositionKind>(b, "kind") == PositionKind::Learned;
  b.expectCounts(2, learned ? 2 : 1);
  const auto [B, L, D] = sequenceShape(b, b.in(0));
  const int64_t tableRows = learned ? b.dim(b.out(1), 0) : 0;
  const int32_t dy = k.inputs[0], offsets = k.inputs[1], dx = k.outputs[0],
                dtable = learned ? k.outputs[1] : -1;
  return [=](ExecState &s) {
    cpu::positionsBackward(s.data<float>(dy), s.data<int64_t>(offsets), B, L, D,
                           s.data<float>(dx), learned ? s.data<float>(dtable) : nullptr,
                           tableRows);
  };
}

/// The attention's shape: its sequences (operand `seq`), heads and mask.
cpu::AttentionShape attentionShape(const Binder &b, const Buffer &seq) {
  const auto [B, L, D] = sequenceShape(b, seq);
  return {B, L, D, b.integer("heads"), b.flag("causal")};
}

/// attention: q, k, v (B x L x D), offsets -> o.
/// An attention kernel's weight dropout (`dropout`, `stream`; none when
/// absent or 0): the launch's AttentionDropout while training.
struct WeightDropout {
  double rate = 0;
  int64_t stream = 0, B = 0, counterL = 0;
  std::optional<cpu::AttentionDropout> at(const ExecState &s) const {
    if (!s.training || rate == 0.0)
      return std::nullopt;
    return cpu::AttentionDropout{rate, cpu::dropoutKey(s.seed, stream, s.step),
                                 s.exampleOffset + int64_t(s.microBatch) * B, counterL};
  }
};
WeightDropout weightDropout(const Binder &b, const cpu::AttentionShape &shape,
                            const Buffer &seq) {
  WeightDropout d;
  d.B = shape.B;
  d.counterL = Binder::paddedLength(seq);
  if (!b.k.attrs.contains("dropout"))
    return d;
  d.rate = b.real("dropout");
  if (!(d.rate >= 0.0 && d.rate < 1.0))
    b.fail("dropout must be in [0, 1), got " + std::to_string(d.rate));
  if (!b.k.attrs.contains("stream"))
    b.fail("dropout needs its 'stream'");
  d.stream = b.integer("stream");
  return d;
}

BoundKernel bindAttention(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(4, 1);
  const cpu::AttentionShape shape = attentionShape(b, b.in(0));
  const int32_t q = k.inputs[0], key = k.inputs[1], v = k.inputs[2], offsets = k.inputs[3],
                o = k.outputs[0];
  const WeightDropout drop = weightDropout(b, shape, b.in(0));
  return [=](ExecState &s) {
    const std::optional<cpu::AttentionDropout> d = drop.at(s);
    cpu::attentionForward(s.data<float>(q), s.data<float>(key), s.data<float>(v),
                          s.data<int64_t>(offsets), shape, s.data<float>(o), d ? &*d : nullptr);
  };
}

/// attention_grad: dy, q, k, v, offsets -> dq, dk, dv.
BoundKernel bindAttentionGrad(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(5, 3);
  const cpu::AttentionShape shape = attentionShape(b, b.in(1));
  const int32_t dy = k.inputs[0], q = k.inputs[1], key = k.inputs[2], v = k.inputs[3],
                offsets = k.inputs[4], dq = k.outputs[0], dk = k.outputs[1], dv = k.outputs[2];
  const WeightDropout drop = weightDropout(b, shape, b.in(1));
  return [=](ExecState &s) {
    const std::optional<cpu::AttentionDropout> d = drop.at(s);
    cpu::attentionBackward(s.data<float>(dy), s.data<float>(q), s.data<float>(key),
                           s.data<float>(v), s.data<int64_t>(offsets), shape, s.data<float>(dq),
                           s.data<float>(dk), s.data<float>(dv), d ? &*d : nullptr);
  };
}

/// sequence_pool: x (B x L x D), offsets -> B x D.
BoundKernel bindSequencePool(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 1);
  const auto [B, L, D] = sequenceShape(b, b.in(0));
  const SequencePooling mode = wordOf<SequencePooling>(b, "mode");
  const int32_t x = k.inputs[0], offsets = k.inputs[1], y = k.outputs[0];
  return [=](ExecState &s) {
    cpu::sequencePoolForward(s.data<float>(x), s.data<int64_t>(offsets), B, L, D, mode,
                             s.data<float>(y));
  };
}

/// sequence_pool_grad: dy (B x D), offsets, [x for max] -> dx (B x L x D).
BoundKernel bindSequencePoolGrad(const Binder &b) {
  const Kernel &k = b.k;
  const SequencePooling mode = wordOf<SequencePooling>(b, "mode");
  const bool max = mode == SequencePooling::Max;
  b.expectCounts(max ? 3 : 2, 1);
  const auto [B, L, D] = sequenceShape(b, b.out(0));
  const int32_t dy = k.inputs[0], offsets = k.inputs[1], x = max ? k.inputs[2] : -1,
                dx = k.outputs[0];
  return [=](ExecState &s) {
    cpu::sequencePoolBackward(s.data<float>(dy), s.data<int64_t>(offsets),
                              max ? s.data<float>(x) : nullptr, B, L, D, mode,
                              s.data<float>(dx));
  };
}

BoundKernel bindBiasGrad(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(1, 1);
  int64_t B = b.rows(b.in(0)), N = b.cols(b.in(0));
  int32_t dy = k.inputs[0], db = k.outputs[0];
  return [=](ExecState &s) {
    cpu::biasGrad(s.data<float>(dy), s.data<float>(db), B, N);
  };
}

BoundKernel bindActivationGrad(const Binder &b) {
  const Kernel &k = b.k;
  if (b.flag("from_output"))
    return nullptr; // FusedDenseBindings.cpp binds it
  b.expectCounts(2, 1);
  cpu::Activation f = activationOf(b);
  int64_t n = Binder::numel(b.in(0));
  int32_t dy = k.inputs[0], x = k.inputs[1], dx = k.outputs[0];
  return [=](ExecState &s) {
    cpu::activationGrad(f, s.data<float>(dy), s.data<float>(x),
                        s.data<float>(dx), n);
  };
}

BoundKernel bindSlice(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(1, 1);
  int64_t B = b.dim(b.in(0), 0), N = b.dim(b.in(0), 1);
  int64_t offset = b.integer("offset"), width = b.dim(b.out(0), 1);
  int32_t x = k.inputs[0], y = k.outputs[0];
  return [=](ExecState &s) {
    cpu::sliceColumns(s.data<float>(x), s.data<float>(y), B, N, offset, width);
  };
}

BoundKernel bindInteractionGrad(const Binder &b) {
  const Kernel &k = b.k;
  b.expectMinInputs(3, k.inputs.size() - 1);
  bool self = b.flag("self");
  int64_t B = b.dim(b.in(1), 0), D = b.dim(b.in(1), 1);
  int32_t dy = k.inputs[0];
  std::vector<int32_t> xs(k.inputs.begin() + 1, k.inputs.end());
  std::vector<int32_t> dxs = k.outputs;
  cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    std::vector<const float *> x;
    std::vector<float *> dx;
    for (int32_t i : xs)
      x.push_back(s.data<float>(i));
    for (int32_t i : dxs)
      dx.push_back(s.data<float>(i));
    cpu::interactionGrad(s.data<float>(dy), x, dx, B, D, self, compute);
  };
}

BoundKernel bindCrossGrad(const Binder &b) {
  const Kernel &k = b.k;
  // A sixth input is the forward's xl w (cross_grad's `linear`).
  b.expectCounts(k.inputs.size() == 6 ? 6 : 5, 4);
  int64_t B = b.dim(b.in(1), 0), D = b.dim(b.in(1), 1);
  auto in = k.inputs;
  auto out = k.outputs;
  int32_t linear = in.size() == 6 ? in[5] : -1;
  if (linear >= 0 && Binder::numel(b.in(5)) != B * D)
    b.fail("the kept product xl w must have " + std::to_string(B * D) + " elements");
  cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    cpu::crossGrad(s.data<float>(in[0]), s.data<float>(in[1]),
                   s.data<float>(in[2]), s.data<float>(in[3]),
                   s.data<float>(in[4]), s.data<float>(out[0]),
                   s.data<float>(out[1]), s.data<float>(out[2]),
                   s.data<float>(out[3]), B, D, compute,
                   linear >= 0 ? s.data<const float>(linear) : nullptr);
  };
}

BoundKernel bindDotGrad(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(3, 2);
  int64_t B = b.dim(b.in(1), 0), D = b.dim(b.in(1), 1);
  int64_t K = b.in(2).shape.size() == 3 ? b.in(2).shape[1] : 0;
  auto in = k.inputs;
  auto out = k.outputs;
  return [=](ExecState &s) {
    cpu::dotGrad(s.data<float>(in[0]), s.data<float>(in[1]),
                 s.data<float>(in[2]), s.data<float>(out[0]),
                 s.data<float>(out[1]), B, K, D);
  };
}

BoundKernel bindLookupGrad(const Binder &b) {
  const Kernel &k = b.k;
  bool weighted = k.inputs.size() == 4;
  b.expectCounts(weighted ? 4 : 3, 1);
  const Table &t = b.table();
  cpu::Pooling pooling = poolingOf(b);
  int32_t ids = k.inputs[0], offsets = k.inputs[1];
  int32_t weights = weighted ? k.inputs[2] : -1, dy = k.inputs.back();
  int64_t B = b.dim(b.p.buffers[dy], 0), D = t.dim;
  int32_t out = k.outputs[0], table = t.buffer;
  return [=](ExecState &s) {
    cpu::lookupGrad(s.data<float>(table), D, s.data<int64_t>(ids),
                    s.data<int64_t>(offsets),
                    weights >= 0 ? s.data<float>(weights) : nullptr, B,
                    pooling, s.data<float>(dy), s.data<float>(out));
    // Ids outside every bag get no gradient. Their rows are written as
    // zeros: with buffers reused between lifetimes (-emb-plan-memory) they
    // would otherwise hold another value's bytes.
    int64_t n = idCount(s, ids);
    const int64_t *o = s.data<int64_t>(offsets);
    int64_t lo = B > 0 ? std::clamp<int64_t>(o[0], 0, n) : n;
    int64_t hi = B > 0 ? std::clamp<int64_t>(o[B], lo, n) : n;
    float *rows = s.data<float>(out);
    std::fill(rows, rows + lo * D, 0.0f);
    std::fill(rows + hi * D, rows + n * D, 0.0f);
    s.length[out] = n;
  };
}

BoundKernel bindAccumulateGrad(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(1, 1);
  int64_t n = Binder::numel(b.in(0));
  if (n != Binder::numel(b.out(0)))
    b.fail("gradient size != accumulator size");
  int32_t g = k.inputs[0], acc = k.outputs[0];
  return [=](ExecState &s) {
    float *a = s.data<float>(acc);
    cpu::addTwo(a, s.data<float>(g), a, n);
  };
}

BoundKernel bindAccumulateRows(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(2, 2);
  const Table &t = b.table();
  int64_t D = t.dim, capacity = b.dim(b.out(0), 0);
  // A batched table's ids become batch rows (docs/plan-format.md).
  int64_t rowOffset = k.attrs.contains("row_offset") ? b.integer("row_offset") : 0;
  int32_t ids = k.inputs[0], vals = k.inputs[1];
  int32_t rows = k.outputs[0], values = k.outputs[1];
  return [=, &t](ExecState &s) {
    int64_t n = idCount(s, ids), at = s.length[rows];
    if (at + n > capacity)
      throw std::runtime_error("sparse gradient of table '" + t.name +
                               "' overflows its capacity of " +
                               std::to_string(capacity) + " rows");
    const int64_t *in = s.data<int64_t>(ids);
    int64_t *out = s.data<int64_t>(rows) + at;
    for (int64_t i = 0; i < n; ++i)
      out[i] = in[i] + rowOffset;
    std::memcpy(s.data<float>(values) + at * D, s.data<float>(vals),
                size_t(n * D) * sizeof(float));
    s.length[rows] = s.length[values] = at + n;
  };
}


BoundKernel bindCoalesceRows(const Binder &b) {
  const Kernel &k = b.k;
  b.expectCounts(0, 2);
  int64_t D = b.sparseTarget().dim;
  int32_t rows = k.outputs[0], values = k.outputs[1];
  return [=](ExecState &s) {
    int64_t n = cpu::coalesceRows(s.data<int64_t>(rows), s.data<float>(values),
                                  s.length[rows], D);
    s.length[rows] = s.length[values] = n;
  };
}

BoundKernel bindClipGradNorm(const Binder &b) {
  const Kernel &k = b.k;
  b.expectMinInputs(1, 1);
  double maxNorm = b.real("max_norm"), gradScale = b.real("grad_scale");
  std::vector<int32_t> grads = k.inputs;
  int32_t out = k.outputs[0];
  return [=](ExecState &s) {
    double sum = 0;
    for (int32_t g : grads) {
      const Buffer &buf = s.buffer(g);
      if (buf.dynamic) {
        // Sparse values: the filled rows, each row's sum added in row
        // order, so one batched table gives the sum its members give apart.
        int64_t D = Binder::numel(buf) / buf.shape[0];
        const float *v = s.data<float>(g);
        for (int64_t r = 0; r < s.length[g]; ++r)
          sum += cpu::sumSquares(v + r * D, D);
      } else {
        sum += cpu::sumSquares(s.data<float>(g), Binder::numel(buf));
      }
    }
    double norm = std::sqrt(sum) * gradScale;
    *s.data<float>(out) = float(std::min(1.0, maxNorm / (norm + 1e-6)));
  };
}

BoundKernel bindUpdateParam(const Binder &b) {
  const std::string kernelOp = b.k.op; // for messages
  const Kernel &k = b.k;
  const Param &p = b.param();
  bool clipped = k.inputs.size() == 2;
  b.expectCounts(clipped ? 2 : 1, 1 + p.state.size());
  cpu::OptimizerParams opt = optimizerOf(b, p.optimizer);
  const Buffer &w = b.out(0);
  int64_t n = Binder::numel(w), rowLength = w.shape.back();
  double gradScale = b.real("grad_scale");
  int32_t g = k.inputs[0], scale = clipped ? k.inputs[1] : -1;
  std::vector<int32_t> out = k.outputs;
  const std::string what = "parameter '" + p.name + "'";
  return [=](ExecState &s) {
    double factor = gradScale * (scale >= 0 ? *s.data<float>(scale) : 1.0);
    const int64_t bad = cpu::denseUpdate(opt, s.optimizerStep, s.lrScale, factor,
                                         s.data<float>(out[0]), s.data<float>(g),
                                         out.size() > 1 ? s.data<float>(out[1]) : nullptr,
                                         out.size() > 2 ? s.data<float>(out[2]) : nullptr, n,
                                         rowLength);
    if (bad >= 0)
      throwNonFinite(s, kernelOp, what, elementSpans(s, out, bad, rowLength),
                     elementSpans(s, {g}, bad, rowLength).front());
  };
}

BoundKernel bindUpdateTable(const Binder &b) {
  const std::string kernelOp = b.k.op; // for messages
  const Kernel &k = b.k;
  Binder::SparseTarget t = b.sparseTarget();
  bool clipped = k.inputs.size() == 3;
  b.expectCounts(clipped ? 3 : 2, 1 + t.state.size());
  cpu::OptimizerParams opt = optimizerOf(b, t.optimizer);
  double gradScale = b.real("grad_scale");
  int64_t D = t.dim;
  // A sharded table's update sees its shard's rows only (global weight
  // decay included).
  const Table *sharded = k.attrs.contains("table") ? &b.table() : nullptr;
  int64_t allRows = t.rows;
  int32_t rows = k.inputs[0], values = k.inputs[1];
  int32_t scale = clipped ? k.inputs[2] : -1;
  std::vector<int32_t> out = k.outputs;
  const std::string name = t.name;
  return [=](ExecState &s) {
    double factor = gradScale * (scale >= 0 ? *s.data<float>(scale) : 1.0);
    int64_t rowsCount = sharded ? sharded->rowsOn(s.rank()) : allRows;
    const cpu::SparseNonFinite bad =
        cpu::sparseUpdate(opt, s.optimizerStep, s.lrScale, factor, s.data<float>(out[0]),
                          rowsCount, D, s.data<int64_t>(rows), s.data<float>(values),
                          s.length[rows], out.size() > 1 ? s.data<float>(out[1]) : nullptr,
                          out.size() > 2 ? s.data<float>(out[2]) : nullptr);
    if (bad)
      throwNonFinite(s, kernelOp, tableRow(*s.plan, name, bad.row),
                     rowSpans(s, out, bad.row, D), gradientRow(s, values, bad.entry, D));
  };
}


} // namespace

std::vector<CpuBinding> embc::runtime::coreBindings() {
  return {
      {KernelOp::Hash, bindHash},
      {KernelOp::Lookup, bindLookup},
      {KernelOp::Gather, bindGather},
      {KernelOp::Dense, bindDense},
      {KernelOp::Activation, bindActivation},
      {KernelOp::Concat, bindConcat},
      {KernelOp::Add, bindAdd},
      {KernelOp::Interaction, bindInteraction},
      {KernelOp::Cross, bindCross},
      {KernelOp::Dot, bindDot},
      {KernelOp::LayerNorm, bindLayerNorm},
      {KernelOp::SequenceLookup, bindSequenceLookup},
      {KernelOp::SequencePool, bindSequencePool},
      {KernelOp::NextTokenTargets, bindNextTokenTargets},
      {KernelOp::RowIds, bindRowIds},
      {KernelOp::MaskTokens, bindMaskTokens},
      {KernelOp::SelectTargets, bindSelectTargets},
      {KernelOp::SelectTargetsGrad, bindSelectTargetsGrad},
      {KernelOp::Positions, bindPositions},
      {KernelOp::Attention, bindAttention},
      {KernelOp::Loss, bindLoss},
      {KernelOp::LossGrad, bindLossGrad},
      {KernelOp::DenseGradInput, bindDenseGradInput},
      {KernelOp::DenseGradWeight, bindDenseGradWeight},
      {KernelOp::BiasGrad, bindBiasGrad},
      {KernelOp::ActivationGrad, bindActivationGrad},
      {KernelOp::Slice, bindSlice},
      {KernelOp::InteractionGrad, bindInteractionGrad},
      {KernelOp::CrossGrad, bindCrossGrad},
      {KernelOp::DotGrad, bindDotGrad},
      {KernelOp::LayerNormGrad, bindLayerNormGrad},
      {KernelOp::Dropout, bindDropout},
      {KernelOp::DropoutGrad, bindDropout},
      {KernelOp::SequenceLookupGrad, bindSequenceLookupGrad},
      {KernelOp::SequencePoolGrad, bindSequencePoolGrad},
      {KernelOp::PositionsGrad, bindPositionsGrad},
      {KernelOp::AttentionGrad, bindAttentionGrad},
      {KernelOp::LookupGrad, bindLookupGrad},
      {KernelOp::AccumulateGrad, bindAccumulateGrad},
      {KernelOp::AccumulateRows, bindAccumulateRows},
      {KernelOp::CoalesceRows, bindCoalesceRows},
      {KernelOp::ClipGradNorm, bindClipGradNorm},
      {KernelOp::UpdateParam, bindUpdateParam},
      {KernelOp::UpdateTable, bindUpdateTable},
  };
}

namespace {

const std::vector<std::vector<BindFn>> &cpuBindingTable();

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(int threads)
      : tuner_(threads > 0 ? threads : cpu::availableCpus(), tuningEnabled()) {
    // One team for every kernel (Parallel.h). The BLAS runs single-threaded
    // inside the team's GEMM blocks, so it must not start threads of its own.
    // Every thread the tuner may use is created now (parked when unused): a
    // --threads beyond what the system allows fails here, before any work.
    cpu::setTeamSize(threads > 0 ? threads : cpu::availableCpus());
    cpu::setTeamSize(tuner_.current());
    openblas_set_num_threads(1);
  }
  ~CpuBackend() override {
    if (arena_)
      ::munmap(arena_, arenaBytes_);
  }
  const char *name() const override { return "cpu"; }
  std::optional<BackendNote> stepTimed(double seconds, double work) override {
    const int64_t trials = tuner_.trials();
    if (std::optional<int> size = tuner_.stepTimed(seconds, work))
      cpu::setTeamSize(*size);
    if (tuner_.trials() == trials)
      return std::nullopt;
    BackendNote note{"cpu_team", tuner_.decision(), {{"threads", double(tuner_.current())}}};
    for (const auto &[size, mean] : tuner_.lastTrial())
      note.values["mean_step_ms_" + std::to_string(size)] = mean * 1e3;
    return note;
  }
  int threads() const override { return cpu::teamSize(); }
  /// Its kernels read their sizes when bound: every multiple of 8 (fewer
  /// bindings than every length, and whole vectors in the row loops).
  std::vector<int64_t> sequenceLengths(const Plan &, int64_t maxLen,
                                       std::string &) const override {
    std::vector<int64_t> lengths;
    for (int64_t length = 8; length < maxLen; length += 8)
      lengths.push_back(length);
    return lengths;
  }
  void hostFor(int64_t n, bool parallel,
               const std::function<void(int64_t, int64_t)> &body) override {
    cpu::parallelFor(n, parallel, [&body](int64_t begin, int64_t end) { body(begin, end); });
  }

  std::byte *allocateArena(size_t bytes) override {
    // Anonymous pages: zero until written, and only the pages touched take
    // memory (a large arena whose tables are placed on disk is mostly
    // file-backed; backWithFile maps those pages over it).
    arenaBytes_ = (std::max<size_t>(bytes, 64) + 4095) / 4096 * 4096;
    void *arena = ::mmap(nullptr, arenaBytes_, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (arena == MAP_FAILED)
      throw std::runtime_error("cannot allocate the " + std::to_string(bytes) +
                               "-byte arena: " + std::strerror(errno));
    arena_ = arena;
    return static_cast<std::byte *>(arena_);
  }

  void backWithFile(int64_t offset, int64_t bytes, const std::string &directory) override {
    std::string path = (directory.empty() ? std::string("/tmp") : directory) +
                       "/embc-table-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0)
      throw std::runtime_error("cannot create a table file in " + directory + ": " +
                               std::strerror(errno));
    ::unlink(path.c_str()); // scratch: gone with the process (checkpoints keep the values)
    const bool sized = ::ftruncate(fd, off_t(bytes)) == 0;
    void *at = sized ? ::mmap(static_cast<std::byte *>(arena_) + offset, size_t(bytes),
                              PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0)
                     : MAP_FAILED;
    const int error = errno;
    ::close(fd);
    if (at == MAP_FAILED)
      throw std::runtime_error("cannot back " + std::to_string(bytes) +
                               " bytes of table with a file in " + directory + ": " +
                               std::strerror(error));
    mapped_.push_back({at, size_t(bytes)});
    adviseDiskAccess(DiskAccess::Random);
  }

  void adviseDiskAccess(DiskAccess access) override {
    // A batch reads rows at random: without MADV_RANDOM a fault reads
    // ahead and around the row (128 KiB by default) and writes as much
    // back, for a row of 64-512 bytes (3.4x the MLPerf-size model's step
    // rate, docs/performance.md). A pass over whole tables wants the
    // opposite. Advice only: a kernel that ignores it costs speed.
    for (auto [at, bytes] : mapped_)
      ::madvise(at, bytes, access == DiskAccess::Random ? MADV_RANDOM : MADV_SEQUENTIAL);
  }

  BoundKernel bind(const Kernel &kernel, const Plan &plan) override {
    Binder binder(kernel, plan);
    binder.comm = &comm_;
    for (const std::vector<int32_t> *list : {&kernel.inputs, &kernel.outputs})
      for (int32_t i : *list)
        if (i < 0 || i >= int32_t(plan.buffers.size()))
          binder.fail("buffer index " + std::to_string(i) + " out of range");
    const KernelSpec *spec = findKernel(kernel.op);
    if (!spec)
      binder.fail("not in the CPU backend's kernel catalogue");
    for (BindFn bind : cpuBindingTable()[size_t(spec->op)])
      if (BoundKernel bound = bind(binder))
        return bound;
    binder.fail("no CPU binding accepts this kernel");
  }

private:
  static bool tuningEnabled() {
    const char *v = std::getenv("EMBC_CPU_TUNE");
    return !(v && std::string(v) == "0");
  }

  void *arena_ = nullptr;
  size_t arenaBytes_ = 0;
  /// The file-backed ranges of the arena (backWithFile).
  std::vector<std::pair<void *, size_t>> mapped_;
  CommBinder comm_;
  TeamTuner tuner_;
};

/// Every CPU binding, indexed by KernelOp, in the order they are tried: a
/// quantised table's first (they decline f32 tables), then the plain ones.
const std::vector<std::vector<BindFn>> &cpuBindingTable() {
  static const std::vector<std::vector<BindFn>> table = [] {
    std::vector<std::vector<BindFn>> byOp(kernelCatalogue().size());
    for (auto list : {quantizedBindings, coreBindings, packedBindings, fusedDenseBindings,
                      fusedEmbeddingBindings, lossScalingBindings, commBindings,
                      sampledSoftmaxBindings})
      for (const CpuBinding &binding : list())
        byOp[size_t(binding.op)].push_back(binding.bind);
    return byOp;
  }();
  return table;
}

} // namespace

bool embc::runtime::cpuBackendBinds(KernelOp op) {
  return !cpuBindingTable()[size_t(op)].empty();
}

std::unique_ptr<Backend> embc::runtime::createCpuBackend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}
