//===- KernelOperandsEmbedding.cpp - operands of the embedding kernels ----===//
//
// KernelOperands.cpp's checks for the lookups and their gradients, the
// sparse gradients, the updates and the collectives: ids and offsets (i64)
// of matching bags, rows of the table's dim, and the very buffers of what
// a kernel updates, with the rows it addresses within them.
//
//===----------------------------------------------------------------------===//

#include "OperandChecks.h"

namespace embc::runtime::operands {
namespace {

/// check(target, owner) on the table or the table batch the kernel's
/// `table` or `batch` attribute names (checkKernel made sure it has one of
/// them, in range): both name their values, state, gradient and rows alike.
template <class F> void forTableOrBatch(const Kernel &kernel, const Plan &plan, F &&check) {
  if (kernel.attrs.contains("batch")) {
    const TableBatch &batch = plan.tableBatches[size_t(kernel.attrs.at("batch").get<int64_t>())];
    check(batch, "table batch '" + batch.name + "'");
  } else {
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    check(t, "table '" + t.name + "'");
  }
}

} // namespace

bool checkEmbeddingOperands(KernelOp op, Operands &o, const Kernel &kernel, const Plan &plan) {
  const size_t ins = kernel.inputs.size();
  switch (op) {
  case KernelOp::Lookup: { // ids (n), offsets (B + 1), [weights (n)] -> B x D
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.i64(true, 0);
    o.i64(true, 1);
    auto [B, D] = o.matrix(false, 0, -1, t.dim);
    (void)D;
    o.count(true, 1, B + 1);
    if (ins == 3)
      o.count(true, 2, numel(o.in(0)));
    break;
  }
  case KernelOp::RowIds: { // -> the table's row ids 0 .. rows - 1
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.i64(false, 0);
    o.vector(false, 0);
    o.count(false, 0, t.rows);
    break;
  }
  case KernelOp::SequenceLookup: { // ids (n), offsets (B + 1) -> B x L x D
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    const auto [B, L, D] = o.sequence(false, 0, t.dim);
    (void)L, (void)D;
    o.bags(0, 1, B);
    break;
  }
  case KernelOp::SequenceLookupGrad: { // ids, offsets, dy (B x L x D) -> per-id rows
    const auto [B, L, D] = o.sequence(true, 2);
    (void)L;
    o.bags(0, 1, B);
    o.f32(false, 0);
    o.matrix(false, 0, -1, D);
    if (o.ok() && o.out(0).shape[0] < numel(o.in(0)))
      o.fail(false, 0, "must hold a row for each of the " + std::to_string(numel(o.in(0))) +
                           " ids, got " + shapeText(o.out(0)));
    break;
  }
  case KernelOp::Gather: { // ids (n) -> n x D
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.i64(true, 0);
    o.count(false, 0, numel(o.in(0)) * t.dim);
    break;
  }
  // The dense updates: grad, [scale] -> values, state... of a parameter or pack.
  case KernelOp::UpdateParam: {
    const Param &param = plan.params[size_t(kernel.attrs.at("param").get<int64_t>())];
    o.denseUpdate(param, "parameter '" + param.name + "'");
    break;
  }
  case KernelOp::UpdatePacked: {
    const ParamPack &pack = plan.packs[size_t(kernel.attrs.at("pack").get<int64_t>())];
    o.denseUpdate(pack, "pack '" + pack.name + "'");
    break;
  }
  case KernelOp::UpdateTable: { // rows (n), values (n x D), [scale] -> values, state...
    // A lone table and a table batch name these the same.
    auto check = [&](const auto &target, const std::string &owner) {
      o.writes(target.buffer, target.state, owner);
      o.i64(true, 0);
      if (o.ok() && o.in(0).shape.size() != 1)
        o.fail(true, 0, "must be a vector of rows, got " + shapeText(o.in(0)));
      if (o.ok())
        o.count(true, 1, numel(o.in(0)) * target.dim);
      o.clipScale(2);
    };
    forTableOrBatch(kernel, plan, check);
    break;
  }
  case KernelOp::Hash: // raw ids -> hashed ids, as many
    o.i64(true, 0);
    o.i64(false, 0);
    o.atLeast(false, 0, numel(o.in(0)));
    break;
  case KernelOp::LookupGrad: { // ids, offsets, [weights], dy (B x D) -> per-id rows
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.f32(true, ins - 1);
    auto [B, D] = o.matrix(true, ins - 1, -1, t.dim);
    (void)D;
    o.bags(0, 1, B, ins == 4 ? 2 : -1);
    o.f32(false, 0);
    o.matrix(false, 0, -1, t.dim);
    if (o.ok() && o.out(0).shape[0] < numel(o.in(0)))
      o.fail(false, 0, "must hold a row for each of the " + std::to_string(numel(o.in(0))) +
                           " ids, got " + shapeText(o.out(0)));
    break;
  }
  case KernelOp::AccumulateRows: { // ids, per-id rows -> the gradient's rows and values
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.sparseGradient(t, "table '" + t.name + "'");
    o.i64(true, 0); // a vector of ids, or B x K negatives
    o.f32(true, 1); // the ids' shape x D
    if (o.ok() && (o.in(1).shape.empty() || o.in(1).shape.back() != t.dim ||
                   numel(o.in(1)) < numel(o.in(0)) * t.dim))
      o.fail(true, 1, "must hold a row of " + std::to_string(t.dim) + " for each of the " +
                          std::to_string(numel(o.in(0))) + " ids, got " + shapeText(o.in(1)));
    break;
  }
  case KernelOp::CoalesceRows:
  case KernelOp::GatherRows:
    forTableOrBatch(kernel, plan, [&](const auto &target, const std::string &owner) {
      o.sparseGradient(target, owner);
    });
    break;
  case KernelOp::FusedLookup: { // per member: ids, offsets, [weights] -> y, [hashed ids]
    size_t in = 0, out = 0;
    const nlohmann::json &members = kernel.attrs.at("members");
    for (size_t m = 0; m < members.size() && o.ok(); ++m) {
      const nlohmann::json &member = members[m];
      const Table &t = plan.tables[size_t(member.at("table").get<int64_t>())];
      const bool weighted = member.at("weighted").get<bool>();
      const bool hashed = member.at("hash").get<bool>() && member.at("hashed_output").get<bool>();
      const size_t takes = weighted ? 3 : 2, gives = hashed ? 2 : 1;
      if (in + takes > ins || out + gives > kernel.outputs.size()) {
        o.failAt("attrs.members[" + std::to_string(m) + "]",
                 "has too few operands for member " + std::to_string(m));
        break;
      }
      o.f32(false, out);
      auto [B, D] = o.matrix(false, out, -1, t.dim);
      (void)D;
      o.bags(in, in + 1, B, weighted ? int(in + 2) : -1);
      if (hashed) {
        o.i64(false, out + 1);
        o.atLeast(false, out + 1, numel(o.in(in)));
      }
      in += takes, out += gives;
    }
    if (o.ok() && (in != ins || out != kernel.outputs.size()))
      o.failAt("inputs", "has " + std::to_string(ins) + " inputs and " +
                             std::to_string(kernel.outputs.size()) + " outputs; its members take " +
                             std::to_string(in) + " and " + std::to_string(out));
    break;
  }
  case KernelOp::EmbeddingUpdate: { // per source: bag or rows -> values, state
    auto check = [&](const auto &target, const std::string &owner) {
      o.writes(target.buffer, target.state, owner);
      size_t in = 0;
      const nlohmann::json &sources = kernel.attrs.at("sources");
      for (size_t i = 0; i < sources.size() && o.ok(); ++i) {
        const nlohmann::json &source = sources[i];
        const std::string field = "attrs.sources[" + std::to_string(i) + "]";
        o.rowRange(field, source.at("row_offset").get<int64_t>(), source.at("rows").get<int64_t>(),
                   target.rows, owner);
        const bool bag = source.at("kind").get<std::string>() == "bag";
        const bool weighted = bag && source.value("weighted", false);
        const size_t takes = bag ? (weighted ? 4 : 3) : 2;
        if (in + takes > ins) {
          o.failAt(field, "has too few inputs for source " + std::to_string(i));
          break;
        }
        if (bag) { // ids, offsets, [weights], dy (B x D)
          o.f32(true, in + takes - 1);
          auto [B, D] = o.matrix(true, in + takes - 1, -1, target.dim);
          (void)D;
          o.bags(in, in + 1, B, weighted ? int(in + 2) : -1);
        } else { // ids (n or B x K), values (the ids' shape x D)
          o.i64(true, in);
          o.f32(true, in + 1);
          if (o.ok() && (o.in(in + 1).shape.empty() || o.in(in + 1).shape.back() != target.dim ||
                         numel(o.in(in + 1)) != numel(o.in(in)) * target.dim))
            o.fail(true, in + 1, "must hold a row of " + std::to_string(target.dim) +
                                     " for each of the " + std::to_string(numel(o.in(in))) +
                                     " ids, got " + shapeText(o.in(in + 1)));
        }
        in += takes;
      }
      if (o.ok() && in != ins)
        o.failAt("inputs", "has " + std::to_string(ins) + " inputs; its sources take " +
                               std::to_string(in));
    };
    forTableOrBatch(kernel, plan, check);
    break;
  }
  case KernelOp::SkipgramStep: {
    // centre ids, offsets (B + 1), context ids, offsets (B + 1), negatives
    // (B x K) -> loss, scores (B), the target's values and state.
    auto check = [&](const auto &target, const std::string &owner) {
      o.writes(target.buffer, target.state, owner, 2);
      for (const char *range : {"center", "context", "negatives"}) {
        const nlohmann::json &r = kernel.attrs.at(range);
        o.rowRange(std::string("attrs.") + range, r.at("row_offset").get<int64_t>(),
                   r.at("rows").get<int64_t>(), target.rows, owner);
      }
    };
    forTableOrBatch(kernel, plan, check);
    const int64_t B = numel(o.in(1)) - 1;
    o.bags(0, 1, B);
    o.bags(2, 3, B);
    o.i64(true, 4);
    o.matrix(true, 4, B);
    o.f32(false, 0);
    o.count(false, 0, 1);
    o.f32(false, 1);
    o.count(false, 1, B);
    break;
  }
  case KernelOp::GradAllReduceStart:
  case KernelOp::GradAllReduceWait: { // the gradient of a pack or param, in place
    auto check = [&](const auto &target, const std::string &owner) {
      o.is(false, 0, target.grad, "the gradient of " + owner);
      o.f32(false, 0);
      if (op == KernelOp::GradAllReduceStart && o.ok())
        o.rowRange("attrs.offset", kernel.attrs.at("offset").get<int64_t>(),
                   kernel.attrs.at("size").get<int64_t>(), numel(o.out(0)),
                   "the gradient of " + owner);
    };
    if (kernel.attrs.contains("pack")) {
      const ParamPack &pack = plan.packs[size_t(kernel.attrs.at("pack").get<int64_t>())];
      check(pack, "pack '" + pack.name + "'");
    } else {
      const Param &param = plan.params[size_t(kernel.attrs.at("param").get<int64_t>())];
      check(param, "parameter '" + param.name + "'");
    }
    break;
  }
  default:
    return false;
  }
  return true;
}

} // namespace embc::runtime::operands
