//===- QuantizedBindings.cpp - kernels on tables in quantised storage -----===//
//
// Binds the kernels that read or update a table stored as f16, bf16, int8 or
// int4
// (-emb-quantize; docs/plan-format.md, "Quantised tables") to
// cpu/QuantizedKernels.h: lookup, gather, sequence_lookup, max-pooled lookup_grad,
// update_table (lone table or batch), fused_lookup with a quantised member
// and embedding_update of a quantised table or batch. Kernels on f32 tables
// are left to the other bind functions (this one returns nullptr).
//
// The compiler marks each such kernel ("dequantize": storage on a lookup,
// "requantize": "stochastic" on an update); a plan that reads quantised
// storage without saying so is refused. The fused kernels run the same
// arithmetic as the unfused chain (hash, lookup; lookupGrad, coalesceRows,
// update), so fusion does not change a quantised run.
//
//===----------------------------------------------------------------------===//

#include "CpuBinder.h"
#include "NonFinite.h"

#include "embc/runtime/cpu/QuantizedKernels.h"
#include "embc/runtime/data/CounterRandom.h"

#include <cstring>
#include <string>
#include <vector>

using namespace embc::runtime;

namespace {

/// What a kernel reads or updates: a table or a batch, in its storage.
struct Target {
  std::string name;
  Storage storage = Storage::F32;
  int32_t buffer = -1, qparams = -1;
  int64_t rows = 0, dim = 0;
  std::vector<int32_t> state;
  const Optimizer *optimizer = nullptr;
  std::vector<cpu::RowSegment> segments;

  cpu::QuantizedTable view(const ExecState &s) const {
    return {storage, s.data<std::byte>(buffer),
            qparams >= 0 ? s.data<uint16_t>(qparams) : nullptr, rows, dim};
  }
};

/// Stops the run: an update left row `row` of the quantised table `t` not
/// finite. Its f32 row was not stored (quantizedSparseUpdate), so the
/// message names the optimizer state's value, if one is not finite, and
/// the storage that could not hold the row otherwise.
[[noreturn]] void throwQuantizedNonFinite(const ExecState &s, const std::string &op, const Target &t,
                                          const std::vector<int32_t> &out, int64_t row,
                                          const ValueSpan &gradient) {
  std::vector<ValueSpan> written;
  for (size_t j = 1; j < out.size(); ++j) {
    const Buffer &b = s.buffer(out[j]);
    const int64_t perRow = t.rows > 0 ? Binder::numel(b) / t.rows : 0;
    written.push_back({b.name, s.data<float>(out[j]) + row * perRow, perRow, row * perRow, perRow});
  }
  throwNonFinite(s, op, tableRow(*s.plan, t.name, row), written, gradient,
                 "its step went beyond the range of its " + std::string(enumName(t.storage)) +
                     " storage");
}

Target tableTarget(const Table &t) {
  return {t.name, t.storage, t.buffer, t.qparams, t.rows, t.dim, t.state, &t.optimizer,
          {{0, data::hashName(t.name)}}};
}

Target tableTarget(const Binder &b, int64_t index) {
  if (index < 0 || index >= int64_t(b.p.tables.size()))
    b.fail("table index " + std::to_string(index) + " out of range");
  return tableTarget(b.p.tables[index]);
}

/// The "table" or "batch" a sparse update names. Batch members keep their
/// own rounding keys (RowSegment), so batching does not change the draws.
Target updateTarget(const Binder &b) {
  if (!b.k.attrs.contains("batch"))
    return tableTarget(b, b.integer("table"));
  int64_t i = b.integer("batch");
  if (i < 0 || i >= int64_t(b.p.tableBatches.size()))
    b.fail("table batch index " + std::to_string(i) + " out of range");
  const TableBatch &t = b.p.tableBatches[i];
  Target target{t.name, t.storage, t.buffer, t.qparams, t.rows, t.dim, t.state, &t.optimizer, {}};
  for (size_t m = 0; m < t.members.size() && m < t.rowOffsets.size(); ++m)
    target.segments.push_back(
        {t.rowOffsets[m], data::hashName(b.p.tables.at(t.members[m]).name)});
  return target;
}

/// The kernel's "dequantize" must name the table's storage.
void expectDequantize(const Binder &b, const nlohmann::json &attrs, const Target &t) {
  const std::string storage = enumString(t.storage);
  if (!attrs.contains("dequantize") || attrs["dequantize"] != storage)
    b.fail("reads table '" + t.name + "' stored as " + storage +
           " but does not say \"dequantize\": \"" + storage + "\"");
}

BoundKernel bindLookup(const Binder &b, const Target &t) {
  const Kernel &k = b.k;
  expectDequantize(b, k.attrs, t);
  const Table &table = b.table();
  if (k.op == kernelName(KernelOp::SequenceLookup)) {
    b.expectCounts(2, 1);
    const int64_t B = b.dim(b.out(0), 0), L = b.dim(b.out(0), 1);
    if (b.dim(b.out(0), 2) != t.dim)
      b.fail("output rows must be the table's dim " + std::to_string(t.dim));
    const int32_t ids = k.inputs[0], offsets = k.inputs[1], y = k.outputs[0];
    return [=, &table](ExecState &s) {
      const int64_t n = idCount(s, ids);
      checkIds(s.data<int64_t>(ids), n, t.rows, table);
      checkSequences(s.data<int64_t>(offsets), B, L, n, "table '" + t.name + "'");
      cpu::quantizedSequenceLookup(t.view(s), s.data<int64_t>(ids), s.data<int64_t>(offsets), B,
                                   L, s.data<float>(y));
    };
  }
  if (k.op == kernelName(KernelOp::Gather)) {
    b.expectCounts(1, 1);
    int64_t n = Binder::numel(b.in(0));
    int32_t ids = k.inputs[0], y = k.outputs[0];
    return [=, &table](ExecState &s) {
      checkIds(s.data<int64_t>(ids), n, t.rows, table);
      cpu::quantizedGather(t.view(s), s.data<int64_t>(ids), n, s.data<float>(y));
    };
  }
  cpu::Pooling pooling = poolingOf(b);
  if (k.op == kernelName(KernelOp::LookupGrad)) {
    bool weighted = k.inputs.size() == 4;
    b.expectCounts(weighted ? 4 : 3, 1);
    int32_t ids = k.inputs[0], offsets = k.inputs[1], weights = weighted ? k.inputs[2] : -1;
    int32_t dy = k.inputs.back(), out = k.outputs[0];
    int64_t B = b.dim(b.p.buffers[dy], 0);
    return [=](ExecState &s) {
      cpu::quantizedLookupGrad(t.view(s), s.data<int64_t>(ids), s.data<int64_t>(offsets),
                               weights >= 0 ? s.data<float>(weights) : nullptr, B, pooling,
                               s.data<float>(dy), s.data<float>(out));
      s.length[out] = idCount(s, ids);
    };
  }
  bool weighted = k.inputs.size() == 3;
  b.expectCounts(weighted ? 3 : 2, 1);
  int64_t B = b.dim(b.out(0), 0);
  int32_t ids = k.inputs[0], offsets = k.inputs[1], weights = weighted ? k.inputs[2] : -1;
  int32_t y = k.outputs[0];
  return [=, &table](ExecState &s) {
    checkIds(s.data<int64_t>(ids), idCount(s, ids), t.rows, table);
    cpu::quantizedLookup(t.view(s), s.data<int64_t>(ids), s.data<int64_t>(offsets),
                         weights >= 0 ? s.data<float>(weights) : nullptr, B, pooling,
                         s.data<float>(y));
  };
}

/// update_table: the coalesced sparse gradient into quantised rows.
BoundKernel bindUpdateTable(const Binder &b, const Target &t) {
  const std::string kernelOp = b.k.op; // for messages
  const Kernel &k = b.k;
  bool clipped = k.inputs.size() == 3;
  b.expectCounts(clipped ? 3 : 2, 1 + t.state.size());
  if (k.outputs[0] != t.buffer)
    b.fail("must update the values of '" + t.name + "'");
  cpu::OptimizerParams opt = optimizerOf(b, *t.optimizer);
  double gradScale = b.real("grad_scale");
  int32_t rows = k.inputs[0], values = k.inputs[1], scale = clipped ? k.inputs[2] : -1;
  std::vector<int32_t> out = k.outputs;
  return [=](ExecState &s) {
    double factor = gradScale * (scale >= 0 ? *s.data<float>(scale) : 1.0);
    cpu::QuantizedTable q = t.view(s);
    const cpu::SparseNonFinite bad = cpu::quantizedSparseUpdate(
        opt, s.optimizerStep, s.lrScale, factor, q, s.data<int64_t>(rows), s.data<float>(values),
        s.length[rows], out.size() > 1 ? s.data<float>(out[1]) : nullptr,
        out.size() > 2 ? s.data<float>(out[2]) : nullptr, s.seed, t.segments);
    if (bad)
      throwQuantizedNonFinite(s, kernelOp, t, out, bad.row,
                              gradientRow(s, values, bad.entry, t.dim));
  };
}

/// embedding_update: per-id gradient rows (lookupGrad for bags, the values
/// for rows), shifted to the target's rows, coalesced, then update_table's
/// quantised step: the unfused chain's arithmetic in one kernel.
BoundKernel bindEmbeddingUpdate(const Binder &b, const Target &t) {
  const std::string kernelOp = b.k.op; // for messages
  const Kernel &k = b.k;
  if (k.outputs.size() != 1 + t.state.size() || k.outputs[0] != t.buffer)
    b.fail("must write the values and optimizer state of '" + t.name + "'");
  cpu::OptimizerParams opt = optimizerOf(b, *t.optimizer);
  double gradScale = b.real("grad_scale");
  struct Source {
    bool bag;
    int32_t ids, offsets, weights, grad; // grad: dy (bag) or values (rows)
    int64_t rowOffset, rows, B;
    cpu::Pooling pooling;
  };
  if (!k.attrs.contains("sources") || !k.attrs["sources"].is_array())
    b.fail("missing list attribute 'sources'");
  std::vector<Source> sources;
  size_t in = 0;
  for (const nlohmann::json &j : k.attrs["sources"]) {
    Source src{};
    src.bag = j.value("kind", "") == "bag";
    src.rowOffset = j.value("row_offset", int64_t(-1));
    src.rows = j.value("rows", int64_t(-1));
    if (src.rowOffset < 0 || src.rows <= 0 || src.rowOffset + src.rows > t.rows)
      b.fail("a source addresses rows outside '" + t.name + "'");
    bool weighted = src.bag && j.value("weighted", false);
    size_t ins = src.bag ? (weighted ? 4 : 3) : 2;
    if (in + ins > k.inputs.size())
      b.fail("the sources need more inputs than the kernel has");
    src.ids = k.inputs[in];
    src.offsets = src.bag ? k.inputs[in + 1] : -1;
    src.weights = weighted ? k.inputs[in + 2] : -1;
    src.grad = k.inputs[in + ins - 1];
    if (src.bag) {
      src.pooling = wordIn<cpu::Pooling>(b, j, "pooling", "a bag source's ");
      if (src.pooling == cpu::Pooling::Max)
        b.fail("a bag source must use sum or mean pooling");
      src.B = b.dim(b.p.buffers[src.grad], 0);
    }
    sources.push_back(src);
    in += ins;
  }
  if (in != k.inputs.size())
    b.fail("the sources take " + std::to_string(in) + " inputs, got " +
           std::to_string(k.inputs.size()));
  int64_t D = t.dim;
  std::vector<int32_t> out = k.outputs;
  return [=](ExecState &s) {
    thread_local std::vector<int64_t> rows;
    thread_local std::vector<float> values;
    int64_t total = 0;
    for (const Source &src : sources)
      total += idCount(s, src.ids);
    rows.resize(size_t(total));
    values.resize(size_t(total * D));
    int64_t at = 0;
    for (const Source &src : sources) {
      int64_t n = idCount(s, src.ids);
      const int64_t *ids = s.data<int64_t>(src.ids);
      for (int64_t i = 0; i < n; ++i) {
        if (ids[i] < 0 || ids[i] >= src.rows)
          throw data::DataError("id " + std::to_string(ids[i]) + " is outside rows 0.." +
                                std::to_string(src.rows - 1) + " of a table of '" + t.name + "'");
        rows[size_t(at + i)] = ids[i] + src.rowOffset;
      }
      if (src.bag)
        cpu::lookupGrad<float>(nullptr, D, ids, s.data<int64_t>(src.offsets),
                               src.weights >= 0 ? s.data<float>(src.weights) : nullptr, src.B,
                               src.pooling, s.data<float>(src.grad), values.data() + at * D);
      else
        std::memcpy(values.data() + at * D, s.data<float>(src.grad),
                    sizeof(float) * size_t(n * D));
      at += n;
    }
    int64_t distinct = cpu::coalesceRows(rows.data(), values.data(), total, D);
    cpu::QuantizedTable q = t.view(s);
    const cpu::SparseNonFinite bad = cpu::quantizedSparseUpdate(
        opt, s.optimizerStep, s.lrScale, gradScale, q, rows.data(), values.data(), distinct,
        out.size() > 1 ? s.data<float>(out[1]) : nullptr,
        out.size() > 2 ? s.data<float>(out[2]) : nullptr, s.seed, t.segments);
    if (bad) // the summed gradient rows are this binding's scratch, not a plan buffer
      throwQuantizedNonFinite(
          s, kernelOp, t, out, bad.row,
          {"the summed gradient of '" + t.name + "'", values.data() + bad.entry * t.dim, t.dim,
           bad.entry * t.dim, t.dim});
  };
}

/// fused_lookup with at least one quantised member: each member hashed (if
/// asked) and looked up in turn, by its storage.
BoundKernel bindFusedLookup(const Binder &b) {
  const Kernel &k = b.k;
  struct Member {
    Target table;
    int64_t tableIndex;
    int32_t ids, offsets, weights, y, hashed;
    bool hash;
    int64_t buckets, B;
    uint64_t seed;
    cpu::Pooling pooling;
  };
  std::vector<Member> members;
  size_t in = 0, out = 0;
  for (const nlohmann::json &j : k.attrs["members"]) {
    if (!j.is_object())
      b.fail("a member is not an object");
    int64_t index = j.value("table", int64_t(-1));
    Member m{tableTarget(b, index), index, -1, -1, -1, -1, -1, false, 0, 0, 0, cpu::Pooling::Sum};
    if (m.table.storage != Storage::F32)
      expectDequantize(b, j, m.table);
    m.pooling = wordIn<cpu::Pooling>(b, j, "pooling", "a member's ");
    bool weighted = j.value("weighted", false), hashedOutput = j.value("hashed_output", false);
    m.hash = j.value("hash", false);
    m.buckets = j.value("buckets", int64_t(0));
    m.seed = uint64_t(j.value("seed", int64_t(0)));
    if (m.hash && m.buckets <= 0)
      b.fail("member of table '" + m.table.name + "' hashes into no buckets");
    size_t ins = weighted ? 3 : 2, outs = hashedOutput ? 2 : 1;
    if (in + ins > k.inputs.size() || out + outs > k.outputs.size())
      b.fail("the members need more operands than the kernel has");
    m.ids = k.inputs[in];
    m.offsets = k.inputs[in + 1];
    m.weights = weighted ? k.inputs[in + 2] : -1;
    m.y = k.outputs[out];
    m.hashed = hashedOutput ? k.outputs[out + 1] : -1;
    m.B = b.dim(b.out(out), 0);
    members.push_back(m);
    in += ins;
    out += outs;
  }
  if (in != k.inputs.size() || out != k.outputs.size())
    b.fail("the members do not take all of the kernel's operands");
  const Plan *plan = &b.p;
  return [members, plan](ExecState &s) {
    thread_local std::vector<int64_t> hashed;
    for (const Member &m : members) {
      int64_t n = idCount(s, m.ids);
      const int64_t *ids = s.data<int64_t>(m.ids);
      if (m.hash) {
        int64_t *to = m.hashed >= 0 ? s.data<int64_t>(m.hashed) : nullptr;
        if (!to) {
          hashed.resize(size_t(n));
          to = hashed.data();
        }
        cpu::hashIds(ids, to, n, m.buckets, m.seed);
        if (m.hashed >= 0)
          s.length[m.hashed] = n;
        ids = to;
      }
      checkIds(ids, n, m.table.rows, plan->tables[size_t(m.tableIndex)]);
      cpu::quantizedLookup(m.table.view(s), ids, s.data<int64_t>(m.offsets),
                           m.weights >= 0 ? s.data<float>(m.weights) : nullptr, m.B, m.pooling,
                           s.data<float>(m.y));
    }
  };
}

bool quantised(const Target &t) { return t.storage != Storage::F32; }

} // namespace

namespace {

BoundKernel bindQuantizedLookup(const Binder &b) {
  if (b.k.op == kernelName(KernelOp::LookupGrad) && poolingOf(b) != cpu::Pooling::Max)
    return nullptr; // sum and mean gradients never read the table
  Target t = tableTarget(b, b.integer("table"));
  return quantised(t) ? bindLookup(b, t) : nullptr;
}

BoundKernel bindQuantizedUpdate(const Binder &b) {
  Target t = updateTarget(b);
  if (!quantised(t))
    return nullptr;
  if (!b.k.attrs.contains("requantize") || b.k.attrs["requantize"] != enumString(Requantize::Stochastic))
    b.fail("updates '" + t.name + "' stored as " + enumString(t.storage) +
           " but does not say \"requantize\": \"stochastic\"");
  return b.k.op == kernelName(KernelOp::UpdateTable) ? bindUpdateTable(b, t) : bindEmbeddingUpdate(b, t);
}

BoundKernel bindQuantizedFusedLookup(const Binder &b) {
  for (const nlohmann::json &j : b.k.attrs["members"])
    if (quantised(tableTarget(b, j["table"].get<int64_t>())))
      return bindFusedLookup(b);
  return nullptr;
}

} // namespace

std::vector<CpuBinding> embc::runtime::quantizedBindings() {
  return {{KernelOp::Lookup, bindQuantizedLookup},
          {KernelOp::Gather, bindQuantizedLookup},
          {KernelOp::SequenceLookup, bindQuantizedLookup},
          {KernelOp::LookupGrad, bindQuantizedLookup},
          {KernelOp::UpdateTable, bindQuantizedUpdate},
          {KernelOp::EmbeddingUpdate, bindQuantizedUpdate},
          {KernelOp::FusedLookup, bindQuantizedFusedLookup}};
}
