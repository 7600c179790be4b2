//===- SequenceLayout.cpp - the sequence buffers of a plan ----------------===//

#include "embc/runtime/plan/SequenceLayout.h"
#include "embc/runtime/Plan.h"

#include <algorithm>

namespace embc::runtime {

namespace {

std::vector<size_t> allOutputs(const Kernel &k) {
  std::vector<size_t> all(k.outputs.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  return all;
}

bool flag(const Kernel &k, const char *key) {
  return k.attrs.contains(key) && k.attrs[key].is_boolean() && k.attrs[key].get<bool>();
}

} // namespace

std::optional<SequenceRule> sequenceRule(KernelOp op, const Kernel &k) {
  switch (op) {
  // Kernels that read a sequence's offsets.
  case KernelOp::SequenceLookup:
  case KernelOp::Positions:
  case KernelOp::NextTokenTargets:
    return SequenceRule{1, {0}};
  case KernelOp::PositionsGrad:   // dx; the learned table's gradient is max_len rows
  case KernelOp::SequencePoolGrad:
    return SequenceRule{1, {0}};
  case KernelOp::MaskTokens: // the masked ids are the ids' list; the targets B x L
    return SequenceRule{1, {1}};
  case KernelOp::Attention:
    return SequenceRule{3, {0}};
  case KernelOp::AttentionGrad:
    return SequenceRule{4, {0, 1, 2}};
  case KernelOp::SequencePool:      // B x D
  case KernelOp::SequenceLookupGrad: // one row per id
    return SequenceRule{1, {}};
  // Kernels that keep their input's rows.
  case KernelOp::Dense:
  case KernelOp::DenseAct:
  case KernelOp::Activation:
  case KernelOp::ActivationGrad:
  case KernelOp::Add:
  case KernelOp::Concat:
  case KernelOp::Slice:
  case KernelOp::LayerNorm:
  case KernelOp::AddLayerNorm:
  case KernelOp::Dropout:
  case KernelOp::DropoutGrad:
  case KernelOp::DenseGradInput:
  case KernelOp::Elementwise:
  case KernelOp::DenseMulti:
    return SequenceRule{-1, allOutputs(k)};
  case KernelOp::DenseMultiGrad: // dx; the weight and bias gradients are the layers'
    return SequenceRule{-1, {0}};
  case KernelOp::LayerNormGrad: // dx; dgamma and dbeta are D
  case KernelOp::LossGrad:
  case KernelOp::SelectTargetsGrad:
  case KernelOp::SampledLogitsGrad:
    return SequenceRule{-1, {0}};
  case KernelOp::AddLayerNormGrad: // dh[, dp]
    return SequenceRule{-1, k.outputs.size() == 4 ? std::vector<size_t>{0, 3}
                                                  : std::vector<size_t>{0}};
  case KernelOp::SampledLogits: // logits and classes; the candidates are S
    return SequenceRule{-1, {0, 1}};
  case KernelOp::DenseActGrad: { // [(dz), dW, (db), (dx)]
    const bool activated = k.attrs.value("kind", "none") != "none";
    std::vector<size_t> outs;
    if (activated)
      outs.push_back(0);
    if (flag(k, "input_grad"))
      outs.push_back(k.outputs.size() - 1);
    return SequenceRule{-1, outs};
  }
  // Kernels that reduce a sequence away.
  case KernelOp::Loss:
  case KernelOp::SelectTargets: // B x P rows, P the most targets kept
  case KernelOp::DenseGradWeight:
  case KernelOp::BiasGrad:
    return SequenceRule{-1, {}};
  default:
    return std::nullopt;
  }
}

SequenceLayout findSequenceLayout(const Plan &plan) {
  SequenceLayout l;
  l.of.assign(plan.buffers.size(), -1);
  auto fail = [&](size_t i, const std::string &why) {
    if (l.unsupported.empty())
      l.unsupported = "step kernel " + std::to_string(i) + " (" + plan.step[i].op + ") " + why;
  };
  auto sequenceOf = [&](size_t i, int32_t offsets) -> int32_t {
    for (size_t s = 0; s < l.sequences.size(); ++s)
      if (l.sequences[s].offsets == offsets)
        return int32_t(s);
    SequenceLayout::Sequence s;
    s.offsets = offsets;
    for (size_t in = 0; in < plan.inputs.size(); ++in)
      if (plan.inputs[in].buffer == offsets && plan.inputs[in].role == InputRole::Offsets)
        s.input = int32_t(in);
    if (s.input < 0)
      fail(i, "reads offsets '" + plan.buffers[size_t(offsets)].name +
                  "' that are not a plan input");
    l.sequences.push_back(s);
    return int32_t(l.sequences.size() - 1);
  };
  // Rules only ever add a sequence to a buffer, so this reaches a fixpoint;
  // the step's order is its dependences', so one pass usually does.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < plan.step.size(); ++i) {
      const Kernel &k = plan.step[i];
      const KernelSpec *spec = findKernel(k.op);
      const std::optional<SequenceRule> rule = spec ? sequenceRule(spec->op, k) : std::nullopt;
      int32_t seq = -1;
      bool mixed = false;
      for (int32_t in : k.inputs)
        if (in >= 0 && size_t(in) < l.of.size() && l.of[size_t(in)] >= 0) {
          mixed |= seq >= 0 && seq != l.of[size_t(in)];
          seq = l.of[size_t(in)];
        }
      if (rule && rule->offsets >= 0 && size_t(rule->offsets) < k.inputs.size()) {
        const int32_t s = sequenceOf(i, k.inputs[size_t(rule->offsets)]);
        mixed |= seq >= 0 && seq != s;
        seq = s;
      }
      if (seq < 0)
        continue;
      if (!rule) {
        fail(i, "reads a sequence buffer and has no dynamic-padding rule");
        continue;
      }
      if (mixed)
        fail(i, "mixes two sequence features");
      SequenceLayout::Sequence &sq = l.sequences[size_t(seq)];
      const int64_t B = plan.buffers[size_t(sq.offsets)].shape.empty()
                            ? 0
                            : plan.buffers[size_t(sq.offsets)].shape[0] - 1;
      for (size_t o : rule->outputs) {
        if (o >= k.outputs.size())
          continue;
        const int32_t out = k.outputs[o];
        const Buffer &b = plan.buffers[size_t(out)];
        if (sq.maxLen == 0 && b.shape.size() >= 2)
          sq.maxLen = b.shape[1];
        if (b.shape.size() < 2 || b.shape[0] != B || b.shape[1] != sq.maxLen || b.dynamic) {
          fail(i, "writes '" + b.name + "', which is not " + std::to_string(B) + " x " +
                      std::to_string(sq.maxLen) + " x ...");
          continue;
        }
        if (l.of[size_t(out)] == seq)
          continue;
        if (l.of[size_t(out)] >= 0)
          fail(i, "writes '" + b.name + "' of another sequence feature");
        l.of[size_t(out)] = seq;
        changed = true;
      }
    }
    if (!l.unsupported.empty())
      break;
  }
  for (size_t i = 0; i < plan.step.size(); ++i) {
    const Kernel &k = plan.step[i];
    bool touches = false;
    for (const std::vector<int32_t> *list : {&k.inputs, &k.outputs})
      for (int32_t b : *list)
        touches |= b >= 0 && size_t(b) < l.of.size() && l.of[size_t(b)] >= 0;
    if (touches)
      l.kernels.push_back(i);
  }
  return l;
}

int64_t SequenceLayout::sequenceBytes(const Plan &plan) const {
  int64_t bytes = 0;
  for (size_t b = 0; b < of.size(); ++b)
    if (of[b] >= 0 && plan.buffers[b].parent < 0)
      bytes += plan.buffers[b].bytes * std::max<int32_t>(plan.buffers[b].slots, 1);
  return bytes;
}

Plan specialiseLengths(const Plan &plan, const SequenceLayout &layout,
                       const std::vector<int64_t> &lengths) {
  Plan out = plan;
  for (size_t b = 0; b < layout.of.size(); ++b) {
    const int32_t s = layout.of[b];
    if (s < 0)
      continue;
    Buffer &buf = out.buffers[b];
    buf.paddedLength = layout.sequences[size_t(s)].maxLen;
    buf.shape[1] = lengths.at(size_t(s));
  }
  // The CUDA program's launches for the sequence kernels at these lengths
  // (its length variant), or none: bind then refuses rather than run
  // kernels generated for max_len on shorter buffers.
  CudaProgram &cuda = out.cuda;
  bool atMax = true;
  for (size_t s = 0; s < lengths.size(); ++s)
    atMax &= lengths[s] == layout.sequences[s].maxLen;
  if (cuda.source.empty() || atMax)
    return out;
  const CudaLengthVariant *variant = nullptr;
  if (lengths.size() == 1)
    for (const CudaLengthVariant &v : cuda.lengths)
      if (v.length == lengths[0])
        variant = &v;
  const bool matches = variant && cuda.lengthKernels.size() == layout.kernels.size() &&
                       variant->step.size() == layout.kernels.size();
  for (size_t j = 0; j < layout.kernels.size(); ++j) {
    const size_t i = layout.kernels[j];
    if (i < cuda.step.size())
      cuda.step[i] = matches && cuda.lengthKernels[j] == int64_t(i) ? variant->step[j]
                                                                   : CudaKernel{};
  }
  return out;
}

} // namespace embc::runtime
