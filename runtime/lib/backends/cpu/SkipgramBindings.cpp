//===- SkipgramBindings.cpp - skipgram_step ----------------------------------===//
//
// Binds -emb-fuse's skipgram kernel (docs/plan-format.md) to
// cpu/SkipgramKernel.h: operands, the update target and each role's rows are
// checked here, once. An id outside its table becomes a data::DataError
// naming the table, as in the other embedding kernels.
//
//===----------------------------------------------------------------------===//

#include "CpuBinder.h"
#include "NonFinite.h"

#include "embc/runtime/cpu/SkipgramKernel.h"

#include <string>

using namespace embc::runtime;

BoundKernel embc::runtime::bindSkipgram(const Binder &b) {
  const std::string kernelOp = b.k.op; // for messages
  const Kernel &k = b.k;
  const cpu::SkipgramMode m = wordOf<cpu::SkipgramMode>(b, "mode");
  const Binder::SparseTarget target = b.sparseTarget();
  const int32_t values = k.attrs.contains("batch")
                             ? b.p.tableBatches[size_t(b.integer("batch"))].buffer
                             : b.table().buffer;
  const std::string targetName = target.name;
  const cpu::OptimizerParams opt = optimizerOf(b, target.optimizer);
  const size_t states = target.optimizer.stateBuffers();
  if (target.state.size() != states)
    b.fail("the target has " + std::to_string(target.state.size()) + " state buffers but " +
           enumString(target.optimizer.kind) + " keeps " + std::to_string(states));
  b.expectCounts(5, 3 + states);
  if (k.outputs[2] != values)
    b.fail("output 2 must be the target's values (buffer " + std::to_string(values) + ")");
  for (size_t i = 0; i < states; ++i)
    if (k.outputs[3 + i] != target.state[i])
      b.fail("output " + std::to_string(3 + i) + " must be the target's state " +
             std::to_string(i));
  if (b.out(2).dtype != DType::F32 || Binder::numel(b.out(2)) != target.rows * target.dim)
    b.fail("the target's values must be " + std::to_string(target.rows * target.dim) +
           " f32 values (tables of another storage have no per-example kernel)");
  if (opt.globalDecay && opt.weightDecay > 0)
    b.fail("global weight decay has no per-example form; use lazy decay");

  // Roles: the rows each reads, inside the target.
  auto role = [&](const char *key) {
    if (!k.attrs.contains(key) || !k.attrs[key].is_object() ||
        !k.attrs[key].contains("row_offset") || !k.attrs[key].contains("rows") ||
        !k.attrs[key]["row_offset"].is_number_integer() ||
        !k.attrs[key]["rows"].is_number_integer())
      b.fail(std::string("missing '") + key + "': {\"row_offset\": integer, \"rows\": integer}");
    cpu::SkipgramRole r{k.attrs[key]["row_offset"].get<int64_t>(),
                        k.attrs[key]["rows"].get<int64_t>()};
    if (r.rowOffset < 0 || r.rows < 1 || r.rowOffset + r.rows > target.rows)
      b.fail(std::string("'") + key + "' rows [" + std::to_string(r.rowOffset) + ", " +
             std::to_string(r.rowOffset + r.rows) + ") are not in the target's " +
             std::to_string(target.rows));
    return r;
  };
  // The table a role reads, for error messages: the batch member at its
  // row offset, or the lone table.
  auto tableAt = [&](const cpu::SkipgramRole &r) -> std::string {
    if (!k.attrs.contains("batch"))
      return b.table().name;
    const TableBatch &batch = b.p.tableBatches[size_t(b.integer("batch"))];
    for (size_t m = 0; m < batch.members.size() && m < batch.rowOffsets.size(); ++m)
      if (batch.rowOffsets[m] == r.rowOffset && batch.members[m] >= 0 &&
          batch.members[m] < int32_t(b.p.tables.size()))
        return b.p.tables[size_t(batch.members[m])].name;
    b.fail("rows from " + std::to_string(r.rowOffset) + " are no member of table batch '" +
           batch.name + "'");
  };
  const cpu::SkipgramRole center = role("center"), context = role("context"),
                          negative = role("negatives");
  const std::string names[5] = {tableAt(center), "", tableAt(context), "", tableAt(negative)};

  const Buffer &centerOffsets = b.in(1), &contextOffsets = b.in(3), &negatives = b.in(4);
  for (size_t i = 0; i < 5; ++i)
    if (b.in(i).dtype != DType::I64)
      b.fail("input " + std::to_string(i) + " '" + b.in(i).name + "' must be i64");
  if (centerOffsets.shape.size() != 1 || contextOffsets.shape != centerOffsets.shape)
    b.fail("the centre and context offsets must be two B + 1 vectors");
  const int64_t B = centerOffsets.shape[0] - 1;
  if (negatives.shape.size() != 2 || negatives.shape[0] != B)
    b.fail("the negatives must be B x K (B = " + std::to_string(B) + ")");
  const int64_t K = negatives.shape[1];
  if (Binder::numel(b.out(0)) != 1 || Binder::numel(b.out(1)) != B ||
      b.out(0).dtype != DType::F32 || b.out(1).dtype != DType::F32)
    b.fail("outputs 0 and 1 must be the loss (1 f32) and the positive scores (B f32)");

  const int32_t in0 = k.inputs[0], in1 = k.inputs[1], in2 = k.inputs[2], in3 = k.inputs[3],
                in4 = k.inputs[4], loss = k.outputs[0], scores = k.outputs[1];
  const int32_t state0 = states > 0 ? target.state[0] : -1;
  const int32_t state1 = states > 1 ? target.state[1] : -1;
  const int64_t D = target.dim, rows = target.rows;
  return [=](ExecState &s) {
    cpu::SkipgramStep step;
    step.centerIds = s.data<int64_t>(in0);
    step.centerOffsets = s.data<int64_t>(in1);
    step.contextIds = s.data<int64_t>(in2);
    step.contextOffsets = s.data<int64_t>(in3);
    step.negatives = s.data<int64_t>(in4);
    step.centerIdCount = idCount(s, in0);
    step.contextIdCount = idCount(s, in2);
    step.B = B, step.K = K, step.D = D;
    step.center = center, step.context = context, step.negative = negative;
    step.table = s.data<float>(values);
    step.targetRows = rows;
    step.state0 = state0 >= 0 ? s.data<float>(state0) : nullptr;
    step.state1 = state1 >= 0 ? s.data<float>(state1) : nullptr;
    step.optimizer = opt;
    step.optimizerStep = s.optimizerStep;
    step.lrScale = s.lrScale;
    step.mode = m;
    step.update = s.training;
    step.loss = s.data<float>(loss);
    step.scores = s.data<float>(scores);
    int64_t bad = -1;
    try {
      bad = cpu::skipgramStep(step);
    } catch (const cpu::IdOutOfRange &e) {
      throw data::DataError("id " + std::to_string(e.id) + " is outside table '" +
                            names[e.operand] + "' (rows 0.." + std::to_string(e.rows - 1) + ")");
    }
    if (bad >= 0) {
      std::vector<int32_t> written{values};
      for (int32_t st : {state0, state1})
        if (st >= 0)
          written.push_back(st);
      throwNonFinite(s, kernelOp, tableRow(*s.plan, targetName, bad),
                     rowSpans(s, written, bad, D));
    }
  };
}
