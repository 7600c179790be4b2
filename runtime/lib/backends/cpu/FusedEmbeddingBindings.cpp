//===- FusedEmbeddingBindings.cpp - fused_lookup, embedding_update --------===//
//
// Binds the embedding kernels -emb-fuse produces (docs/plan-format.md) to
// cpu/FusedEmbeddingKernels.h. Every operand count, dtype, shape, table or
// batch index, source range and optimizer state is checked here, once; the
// bound lambdas only fill pointers and lengths and call the kernel. An id
// outside its table becomes a data::DataError naming the table, like the
// plain lookup's checkIds.
//
//===----------------------------------------------------------------------===//

#include "CpuBinder.h"
#include "NonFinite.h"

#include "embc/runtime/cpu/FusedEmbeddingKernels.h"

#include <string>
#include <vector>

using namespace embc::runtime;

namespace {

/// Checked reads of one entry of a list attribute ("members", "sources");
/// errors name the kernel, the list and the entry.
class Entry {
public:
  Entry(const Binder &b, const nlohmann::json &j, std::string where)
      : b(b), j(j), where(std::move(where)) {
    if (!j.is_object())
      fail("is not an object");
  }
  [[noreturn]] void fail(const std::string &why) const { b.fail(where + " " + why); }
  int64_t integer(const char *key) const {
    if (!j.contains(key) || !j[key].is_number_integer())
      fail(std::string("has no integer '") + key + "'");
    return j[key].get<int64_t>();
  }
  std::string str(const char *key) const {
    if (!j.contains(key) || !j[key].is_string())
      fail(std::string("has no string '") + key + "'");
    return j[key].get<std::string>();
  }
  /// Absent means false; present it must be a boolean.
  bool flag(const char *key) const {
    if (!j.contains(key))
      return false;
    if (!j[key].is_boolean())
      fail(std::string("has a non-boolean '") + key + "'");
    return j[key].get<bool>();
  }
  cpu::Pooling pooling() const { return wordIn<cpu::Pooling>(b, j, "pooling", where + " "); }
  /// Checks a buffer's dtype and rank; `what` names it in errors.
  const Buffer &expect(const Buffer &buf, const char *what, DType dtype, size_t rank) const {
    if (buf.dtype != dtype)
      fail(std::string(what) + " '" + buf.name + "' is " + dtypeName(buf.dtype) + ", expected " +
           dtypeName(dtype));
    if (rank && buf.shape.size() != rank)
      fail(std::string(what) + " '" + buf.name + "' has rank " + std::to_string(buf.shape.size()) +
           ", expected " + std::to_string(rank));
    return buf;
  }
  /// A bag of `B` examples holds B + 1 offsets and, when weighted, as many
  /// weights (input `weightsIn`) as ids.
  void checkBag(const Buffer &ids, const Buffer &offsets, int64_t B, bool weighted,
                size_t weightsIn) const {
    if (offsets.shape[0] != B + 1)
      fail("offsets '" + offsets.name + "' hold " + std::to_string(offsets.shape[0]) +
           " values for a batch of " + std::to_string(B) + " (expected B + 1)");
    if (weighted &&
        Binder::numel(expect(b.in(weightsIn), "weights", DType::F32, 0)) != Binder::numel(ids))
      fail("weights '" + b.in(weightsIn).name + "' do not match ids '" + ids.name + "' in size");
  }

private:
  const Binder &b;
  const nlohmann::json &j;
  std::string where;
};

/// The list attribute `key`, non-empty.
const nlohmann::json &entries(const Binder &b, const char *key) {
  if (!b.k.attrs.contains(key) || !b.k.attrs[key].is_array() || b.k.attrs[key].empty())
    b.fail(std::string("missing or empty list attribute '") + key + "'");
  return b.k.attrs[key];
}

/// checkIds' message for an id the fused kernels found outside `table`.
[[noreturn]] void throwBadId(const cpu::IdOutOfRange &e, const std::string &table) {
  throw data::DataError("id " + std::to_string(e.id) + " is outside table '" + table +
                        "' (rows 0.." + std::to_string(e.rows - 1) + ")");
}

// --- fused_lookup -------------------------------------------------------------------

BoundKernel bindFusedLookup(const Binder &b) {
  const Kernel &k = b.k;
  const nlohmann::json &list = entries(b, "members");
  struct Member {
    int32_t table, ids, offsets, weights, y, hashed; // buffers; -1 when absent
  };
  std::vector<Member> members;
  std::vector<cpu::LookupMember<float>> proto;
  std::vector<std::string> names;
  size_t in = 0, out = 0;
  for (size_t m = 0; m < list.size(); ++m) {
    const Entry e(b, list[m], "member " + std::to_string(m));
    const int64_t t = e.integer("table");
    if (t < 0 || t >= int64_t(b.p.tables.size()))
      e.fail("has table index " + std::to_string(t) + " out of range (the plan has " +
             std::to_string(b.p.tables.size()) + " tables)");
    const Table &table = b.p.tables[t];
    cpu::LookupMember<float> lm;
    lm.rows = table.rows;
    lm.D = table.dim;
    lm.pooling = e.pooling();
    const bool weighted = e.flag("weighted");
    lm.hash = e.flag("hash");
    const bool hashedOutput = lm.hash && e.flag("hashed_output");
    if (lm.hash) {
      lm.buckets = e.integer("buckets");
      lm.seed = uint64_t(e.integer("seed"));
      if (lm.buckets <= 0)
        e.fail("hashes into " + std::to_string(lm.buckets) + " buckets (must be positive)");
    }
    const size_t ins = weighted ? 3 : 2, outs = hashedOutput ? 2 : 1;
    if (in + ins > k.inputs.size() || out + outs > k.outputs.size())
      e.fail("needs " + std::to_string(ins) + " inputs and " + std::to_string(outs) +
             " outputs, but the kernel has only " + std::to_string(k.inputs.size()) +
             " inputs and " + std::to_string(k.outputs.size()) + " outputs in all");
    Member mb{table.buffer,     k.inputs[in],
              k.inputs[in + 1], weighted ? k.inputs[in + 2] : -1,
              k.outputs[out],   hashedOutput ? k.outputs[out + 1] : -1};
    const Buffer &ids = e.expect(b.in(in), "ids", DType::I64, 0);
    const Buffer &offsets = e.expect(b.in(in + 1), "offsets", DType::I64, 1);
    const Buffer &y = e.expect(b.out(out), "output", DType::F32, 2);
    lm.B = y.shape[0];
    if (y.shape[1] != table.dim)
      e.fail("output '" + y.name + "' has width " + std::to_string(y.shape[1]) + " but table '" +
             table.name + "' has dim " + std::to_string(table.dim));
    e.checkBag(ids, offsets, lm.B, weighted, in + 2);
    if (hashedOutput &&
        Binder::numel(e.expect(b.out(out + 1), "hashed ids", DType::I64, 0)) != Binder::numel(ids))
      e.fail("hashed ids '" + b.out(out + 1).name + "' do not match ids '" + ids.name +
             "' in size");
    members.push_back(mb);
    proto.push_back(lm);
    names.push_back(table.name);
    in += ins;
    out += outs;
  }
  if (in != k.inputs.size() || out != k.outputs.size())
    b.fail("the members take " + std::to_string(in) + " inputs and " + std::to_string(out) +
           " outputs, got " + std::to_string(k.inputs.size()) + " and " +
           std::to_string(k.outputs.size()));

  return [members, names, lookup = proto](ExecState &s) mutable {
    for (size_t m = 0; m < members.size(); ++m) {
      const Member &mb = members[m];
      cpu::LookupMember<float> &lm = lookup[m];
      lm.table = s.data<float>(mb.table);
      lm.ids = s.data<int64_t>(mb.ids);
      lm.n = idCount(s, mb.ids);
      lm.offsets = s.data<int64_t>(mb.offsets);
      lm.weights = mb.weights >= 0 ? s.data<float>(mb.weights) : nullptr;
      lm.y = s.data<float>(mb.y);
      lm.hashedIds = mb.hashed >= 0 ? s.data<int64_t>(mb.hashed) : nullptr;
    }
    try {
      cpu::fusedLookup(lookup.data(), lookup.size());
    } catch (const cpu::IdOutOfRange &e) {
      throwBadId(e, names[e.operand]);
    }
    for (size_t m = 0; m < members.size(); ++m)
      if (members[m].hashed >= 0)
        s.length[members[m].hashed] = lookup[m].n;
  };
}

// --- embedding_update ---------------------------------------------------------------

BoundKernel bindEmbeddingUpdate(const Binder &b) {
  const std::string kernelOp = b.k.op; // for messages
  const Kernel &k = b.k;
  const bool isBatch = k.attrs.contains("batch");
  if (isBatch == k.attrs.contains("table"))
    b.fail("needs exactly one of the attributes 'table' and 'batch'");

  // What is updated: a lone table, or a whole table batch whose members
  // are addressed by their row offsets.
  std::string name;
  int64_t rows, D;
  int32_t buffer;
  std::vector<int32_t> state;
  const Optimizer *optimizer;
  const TableBatch *batch = nullptr;
  const Table *lone = nullptr;
  // A table batch and a lone table name these the same.
  auto readTarget = [&](const auto &target) {
    name = target.name;
    rows = target.rows;
    D = target.dim;
    buffer = target.buffer;
    state = target.state;
    optimizer = &target.optimizer;
  };
  if (isBatch) {
    const int64_t i = b.integer("batch");
    if (i < 0 || i >= int64_t(b.p.tableBatches.size()))
      b.fail("table batch index " + std::to_string(i) + " out of range (the plan has " +
             std::to_string(b.p.tableBatches.size()) + " table batches)");
    batch = &b.p.tableBatches[i];
    readTarget(*batch);
    if (batch->rowOffsets.size() != batch->members.size())
      b.fail("table batch '" + name + "' has " + std::to_string(batch->members.size()) +
             " members but " + std::to_string(batch->rowOffsets.size()) + " row offsets");
  } else {
    lone = &b.table();
    readTarget(*lone);
  }

  const cpu::OptimizerParams opt = optimizerOf(b, *optimizer);
  const size_t states = optimizer->stateBuffers();
  if (state.size() != states)
    b.fail("'" + name + "' has " + std::to_string(state.size()) + " state buffers but " +
           enumString(optimizer->kind) +
           (opt.kind == cpu::OptimizerKind::Sgd && states ? " with momentum" : "") + " keeps " +
           std::to_string(states));
  if (opt.globalDecay && opt.weightDecay > 0 &&
      !(opt.kind == cpu::OptimizerKind::Sgd && opt.momentum == 0) &&
      opt.kind != cpu::OptimizerKind::AdamW)
    b.fail("global weight decay of '" + name +
           "' is only defined for sgd without momentum and "
           "adamw; use lazy decay");
  if (k.outputs.size() != 1 + states)
    b.fail("expected " + std::to_string(1 + states) + " outputs (the values of '" + name +
           "' and its optimizer state), got " + std::to_string(k.outputs.size()));
  for (size_t i = 0; i <= states; ++i) {
    const int32_t want = i == 0 ? buffer : state[i - 1];
    if (k.outputs[i] != want)
      b.fail("output " + std::to_string(i) + " is buffer " + std::to_string(k.outputs[i]) +
             ", but " + (i == 0 ? "the values" : "state " + std::to_string(i - 1)) + " of '" +
             name + "' is buffer " + std::to_string(want));
    const Buffer &buf = b.out(i);
    const bool perRow = i == 1 && opt.kind == cpu::OptimizerKind::RowwiseAdagrad;
    const int64_t expected = perRow ? rows : rows * D;
    if (buf.dtype != DType::F32 || Binder::numel(buf) != expected)
      b.fail("buffer '" + buf.name + "' of '" + name + "' should be " + std::to_string(expected) +
             " f32 values, is " + std::to_string(Binder::numel(buf)) + " " + dtypeName(buf.dtype));
  }
  const double gradScale = b.real("grad_scale");

  struct Source {
    int32_t ids, offsets, weights, dy, values; // buffers; -1 when absent
  };
  const nlohmann::json &list = entries(b, "sources");
  std::vector<Source> sources;
  std::vector<cpu::GradSource<float>> proto;
  std::vector<std::string> names; // the table each source's ids address
  size_t in = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const Entry e(b, list[i], "source " + std::to_string(i));
    cpu::GradSource<float> gs;
    gs.rowOffset = e.integer("row_offset");
    gs.rows = e.integer("rows");
    // The range a source addresses must be exactly one table: the batch
    // member at that offset, or the lone table.
    std::string table;
    if (batch) {
      for (size_t m = 0; m < batch->members.size() && table.empty(); ++m) {
        const int32_t t = batch->members[m];
        if (t >= 0 && t < int32_t(b.p.tables.size()) && batch->rowOffsets[m] == gs.rowOffset &&
            b.p.tables[t].rows == gs.rows)
          table = b.p.tables[t].name;
      }
      if (table.empty())
        e.fail("addresses rows [" + std::to_string(gs.rowOffset) + ", " +
               std::to_string(gs.rowOffset + gs.rows) + "), which is no member of table batch '" +
               name + "'");
    } else {
      if (gs.rowOffset != 0 || gs.rows != rows)
        e.fail("has row_offset " + std::to_string(gs.rowOffset) + " and rows " +
               std::to_string(gs.rows) + ", but table '" + name + "' is alone (0 and " +
               std::to_string(rows) + ")");
      table = name;
    }
    const std::string kind = e.str("kind");
    Source src{-1, -1, -1, -1, -1};
    if (kind == "bag") {
      gs.kind = cpu::GradSource<float>::Kind::Bag;
      gs.pooling = e.pooling();
      if (gs.pooling == cpu::Pooling::Max)
        e.fail("uses max pooling, which embedding_update does not fuse (its gradient reads the "
               "table the update changes)");
      const bool weighted = e.flag("weighted");
      const size_t ins = weighted ? 4 : 3;
      if (in + ins > k.inputs.size())
        e.fail("needs " + std::to_string(ins) + " inputs, but the kernel has only " +
               std::to_string(k.inputs.size()) + " in all");
      src.ids = k.inputs[in];
      src.offsets = k.inputs[in + 1];
      src.weights = weighted ? k.inputs[in + 2] : -1;
      src.dy = k.inputs[in + ins - 1];
      const Buffer &ids = e.expect(b.in(in), "ids", DType::I64, 0);
      const Buffer &offsets = e.expect(b.in(in + 1), "offsets", DType::I64, 1);
      const Buffer &dy = e.expect(b.in(in + ins - 1), "dy", DType::F32, 2);
      gs.B = dy.shape[0];
      if (dy.shape[1] != D)
        e.fail("dy '" + dy.name + "' has width " + std::to_string(dy.shape[1]) + " but '" + name +
               "' has dim " + std::to_string(D));
      e.checkBag(ids, offsets, gs.B, weighted, in + 2);
      in += ins;
    } else if (kind == "rows") {
      gs.kind = cpu::GradSource<float>::Kind::Rows;
      if (in + 2 > k.inputs.size())
        e.fail("needs 2 inputs, but the kernel has only " + std::to_string(k.inputs.size()) +
               " in all");
      src.ids = k.inputs[in];
      src.values = k.inputs[in + 1];
      const Buffer &ids = e.expect(b.in(in), "ids", DType::I64, 0);
      // One row of D values per id, in the ids' shape (n, or B x K for negatives).
      const Buffer &values = e.expect(b.in(in + 1), "values", DType::F32, 0);
      if (values.shape.size() < 2 || values.shape.back() != D)
        e.fail("values '" + values.name + "' have width " + std::to_string(values.shape.back()) +
               " but '" + name + "' has dim " + std::to_string(D));
      if (Binder::numel(values) / D != Binder::numel(ids))
        e.fail("values '" + values.name + "' hold " + std::to_string(Binder::numel(values) / D) +
               " rows for ids '" + ids.name + "' of capacity " +
               std::to_string(Binder::numel(ids)));
      in += 2;
    } else {
      e.fail("has unknown kind '" + kind + "' (expected bag or rows)");
    }
    sources.push_back(src);
    proto.push_back(gs);
    names.push_back(table);
  }
  if (in != k.inputs.size())
    b.fail("the sources take " + std::to_string(in) + " inputs, got " +
           std::to_string(k.inputs.size()));

  const std::vector<int32_t> out = k.outputs;
  return [=, grads = proto](ExecState &s) mutable {
    for (size_t i = 0; i < sources.size(); ++i) {
      const Source &src = sources[i];
      cpu::GradSource<float> &gs = grads[i];
      gs.ids = s.data<int64_t>(src.ids);
      gs.n = idCount(s, src.ids);
      if (src.offsets >= 0) {
        gs.offsets = s.data<int64_t>(src.offsets);
        gs.weights = src.weights >= 0 ? s.data<float>(src.weights) : nullptr;
        gs.dy = s.data<float>(src.dy);
      } else {
        gs.values = s.data<float>(src.values);
      }
    }
    int64_t bad = -1;
    try {
      bad = cpu::embeddingUpdate(opt, s.optimizerStep, s.lrScale, gradScale,
                                 s.data<float>(out[0]), rows, D, grads.data(), grads.size(),
                                 out.size() > 1 ? s.data<float>(out[1]) : nullptr,
                                 out.size() > 2 ? s.data<float>(out[2]) : nullptr);
    } catch (const cpu::IdOutOfRange &e) {
      throwBadId(e, names[e.operand]);
    }
    if (bad >= 0)
      throwNonFinite(s, kernelOp, tableRow(*s.plan, name, bad),
                     rowSpans(s, out, bad, D));
  };
}

} // namespace

std::vector<CpuBinding> embc::runtime::fusedEmbeddingBindings() {
  return {{KernelOp::FusedLookup, bindFusedLookup},
          {KernelOp::EmbeddingUpdate, bindEmbeddingUpdate},
          {KernelOp::SkipgramStep, bindSkipgram}};
}
