//===- PackedBindings.cpp - the update kernel of packed parameters --------===//
//
// -emb-pack-params gives one buffer per pack (values, gradient, each state).
// (A table batch is one table to coalesce_rows and update_table, which
// CpuBackend.cpp binds for both.) The optimizer runs once per pack: elementwise
// optimizers over the whole buffer in one pass (the gaps that align members
// hold zeros and stay zero), LAMB and row-wise Adagrad per member, since
// their norms and rows are per parameter. Every value gets the arithmetic it
// gets unpacked, so training is bit-identical.
//
//===----------------------------------------------------------------------===//

#include "CpuBinder.h"
#include "NonFinite.h"

using namespace embc::runtime;

namespace {

const ParamPack &packOf(const Binder &b) {
  int64_t i = b.integer("pack");
  if (i < 0 || i >= int64_t(b.p.packs.size()))
    b.fail("pack index " + std::to_string(i) + " out of range");
  return b.p.packs[i];
}

/// One member of a pack: where its values, gradient and state start.
struct Segment {
  int64_t offset;     ///< element offset in the pack
  int64_t n;          ///< values
  int64_t rowLength;  ///< last dimension (rowwise_adagrad's row)
  int64_t stateOffset; ///< rowwise_adagrad: first accumulator of the member
  std::string name;    ///< the member parameter's
};

BoundKernel bindUpdatePacked(const Binder &b) {
  const std::string kernelOp = b.k.op; // for messages
  const Kernel &k = b.k;
  const ParamPack &pack = packOf(b);
  bool clipped = k.inputs.size() == 2;
  b.expectCounts(clipped ? 2 : 1, 1 + pack.state.size());
  if (k.inputs[0] != pack.grad || k.outputs[0] != pack.buffer)
    b.fail("must read the pack's gradient and write its values");
  cpu::OptimizerParams opt = optimizerOf(b, pack.optimizer);
  double gradScale = b.real("grad_scale");
  int64_t size = Binder::numel(b.out(0));
  const Buffer &whole = b.out(0);
  bool perMember = opt.kind == cpu::OptimizerKind::Lamb ||
                   opt.kind == cpu::OptimizerKind::RowwiseAdagrad;
  std::vector<Segment> segments;
  for (int32_t m : pack.members) {
    const Param &param = b.p.params.at(m);
    const Buffer &values = b.p.buffers.at(param.buffer);
    Segment s{(values.offset - whole.offset) / int64_t(sizeof(float)), Binder::numel(values),
              values.shape.back(), 0, param.name};
    if (opt.kind == cpu::OptimizerKind::RowwiseAdagrad)
      s.stateOffset = (b.p.buffers.at(param.state.at(0)).offset -
                       b.p.buffers.at(pack.state.at(0)).offset) /
                      int64_t(sizeof(float));
    segments.push_back(s);
  }
  int32_t g = k.inputs[0], scale = clipped ? k.inputs[1] : -1;
  std::vector<int32_t> out = k.outputs;
  const bool rowwise = opt.kind == cpu::OptimizerKind::RowwiseAdagrad;
  // Stops the run at element `at` of the pack that an update left not
  // finite, naming the member it belongs to.
  auto nonFinite = [=](const ExecState &s, int64_t at) {
    const Segment *m = &segments.front();
    for (const Segment &seg : segments)
      if (seg.offset <= at && at < seg.offset + seg.n)
        m = &seg;
    const int64_t stateAt = rowwise ? m->stateOffset + (at - m->offset) / m->rowLength : at;
    std::vector<ValueSpan> written;
    for (size_t j = 0; j < out.size(); ++j) {
      const int64_t i = j == 1 ? stateAt : at;
      written.push_back({s.buffer(out[j]).name, s.data<float>(out[j]) + i, 1, i});
    }
    throwNonFinite(s, kernelOp,
                   "element " + std::to_string(at - m->offset) + " of parameter '" + m->name +
                       "' (pack '" + s.buffer(out[0]).name + "')",
                   written, {s.buffer(g).name, s.data<float>(g) + at, 1, at});
  };
  return [=](ExecState &s) {
    double factor = gradScale * (scale >= 0 ? *s.data<float>(scale) : 1.0);
    float *w = s.data<float>(out[0]);
    const float *grad = s.data<float>(g);
    float *s0 = out.size() > 1 ? s.data<float>(out[1]) : nullptr;
    float *s1 = out.size() > 2 ? s.data<float>(out[2]) : nullptr;
    if (!perMember) {
      if (const int64_t bad =
              cpu::denseUpdate(opt, s.optimizerStep, s.lrScale, factor, w, grad, s0, s1, size, 1);
          bad >= 0)
        nonFinite(s, bad);
      return;
    }
    for (const Segment &m : segments) {
      const int64_t bad = cpu::denseUpdate(
          opt, s.optimizerStep, s.lrScale, factor, w + m.offset, grad + m.offset,
          s0 ? s0 + (rowwise ? m.stateOffset : m.offset) : nullptr, s1 ? s1 + m.offset : nullptr,
          m.n, m.rowLength);
      if (bad >= 0)
        nonFinite(s, m.offset + bad);
    }
  };
}

} // namespace

std::vector<CpuBinding> embc::runtime::packedBindings() {
  return {{KernelOp::UpdatePacked, bindUpdatePacked}};
}
