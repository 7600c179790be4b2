//===- KernelCatalogue.cpp - the declaration of every plan kernel ---------===//
//
// One entry per KernelOp, in enumerator order (checked when the table is
// built). What each kernel computes and its operands in detail are in
// docs/plan-format.md, "Kernel catalogue", which a unit test checks against
// the names and attributes here.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/plan/KernelCatalogue.h"

#include "embc/runtime/Plan.h"

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

using namespace embc::runtime;
using nlohmann::json;

namespace {

using A = AttrType;
using N = AttrNeed;
using P = KernelPhase;

constexpr size_t kMany = kAnyCount;

AttrSpec word(std::string_view name, WordSet words, AttrNeed need = N::Required) {
  return {name, A::Word, need, words};
}
AttrSpec opt(std::string_view name, AttrType type) { return {name, type, N::Optional}; }
AttrSpec req(std::string_view name, AttrType type) { return {name, type, N::Required}; }

// Attributes several kernels share.
const AttrSpec kCompute = word("compute", wordsOf<ComputeType>(), N::Optional);
const AttrSpec kDequantize = word("dequantize", wordsOf<Storage>(), N::Optional);
const AttrSpec kRequantize = word("requantize", wordsOf<Requantize>(), N::Optional);
const AttrSpec kPooling = word("pooling", wordsOf<Pooling>());
const AttrSpec kActivationKind = word("kind", wordsOf<Activation>());
const AttrSpec kGradScale = req("grad_scale", A::Real);
const AttrSpec kTableOrBatch[] = {{"table", A::Table, N::OneOf}, {"batch", A::Batch, N::OneOf}};
const AttrSpec kPackOrParam[] = {{"pack", A::Pack, N::OneOf}, {"param", A::Param, N::OneOf}};
/// The rows of one table inside a table or a batch.
const std::vector<AttrSpec> kRowRange = {req("row_offset", A::Count), req("rows", A::Count)};

std::vector<AttrSpec> with(std::initializer_list<AttrSpec> first,
                           std::initializer_list<AttrSpec> more = {}) {
  std::vector<AttrSpec> out(first);
  out.insert(out.end(), more);
  return out;
}

std::vector<KernelSpec> declare() {
  using K = KernelOp;
  const AttrSpec table = req("table", A::Table);
  const AttrSpec self = opt("self", A::Bool);
  std::vector<KernelSpec> c = {
      // --- Forward
      {K::Hash, "hash", P::Step, {1, 1}, {1, 1}, {req("buckets", A::Count), req("seed", A::Int)}},
      {K::Lookup, "lookup", P::Step, {2, 3}, {1, 1}, {table, kPooling, kDequantize}},
      {K::Gather, "gather", P::Step, {1, 1}, {1, 1}, {table, kDequantize}},
      {K::Dense, "dense", P::Step, {2, 3}, {1, 1}, {opt("bias", A::Bool), kCompute}},
      {K::Activation, "activation", P::Step, {1, 1}, {1, 1}, {kActivationKind}},
      {K::Concat, "concat", P::Step, {1, kMany}, {1, 1}, {}},
      {K::Add, "add", P::Step, {1, kMany}, {1, 1}, {opt("bias", A::Bool)}},
      {K::Interaction, "interaction", P::Step, {2, kMany}, {1, 1}, {self, kCompute}},
      {K::Cross, "cross", P::Step, {4, 4}, {1, 2}, {kCompute}},
      {K::Dot, "dot", P::Step, {2, 2}, {1, 1}, {}},
      {K::LayerNorm, "layer_norm", P::Step, {3, 3}, {1, 1}, {req("eps", A::Real)}},
      {K::Loss, "loss", P::Step, {2, 2}, {1, 1}, {word("kind", wordsOf<LossKind>())}},
      // --- Backward
      {K::LossGrad, "loss_grad", P::Step, {2, 2}, {1, 2},
       {word("kind", wordsOf<LossKind>()), opt("loss_scaled", A::Bool)}},
      {K::DenseGradInput, "dense_grad_input", P::Step, {2, 2}, {1, 1}, {kCompute}},
      {K::DenseGradWeight, "dense_grad_weight", P::Step, {2, 2}, {1, 1}, {kCompute}},
      {K::BiasGrad, "bias_grad", P::Step, {1, 1}, {1, 1}, {}},
      {K::ActivationGrad, "activation_grad", P::Step, {2, 2}, {1, 1},
       {kActivationKind, opt("from_output", A::Bool)}},
      {K::Slice, "slice", P::Step, {1, 1}, {1, 1}, {req("offset", A::Count)}},
      {K::InteractionGrad, "interaction_grad", P::Step, {3, kMany}, {2, kMany}, {self, kCompute}},
      {K::CrossGrad, "cross_grad", P::Step, {5, 6}, {4, 4}, {kCompute}},
      {K::DotGrad, "dot_grad", P::Step, {3, 3}, {2, 2}, {}},
      {K::LayerNormGrad, "layer_norm_grad", P::Step, {3, 3}, {3, 3}, {req("eps", A::Real)}},
      {K::LookupGrad, "lookup_grad", P::Step, {3, 4}, {1, 1}, {table, kPooling, kDequantize}},
      {K::AccumulateGrad, "accumulate_grad", P::Step, {1, 1}, {1, 1}, {req("param", A::Param)}},
      {K::AccumulateRows, "accumulate_rows", P::Step, {2, 2}, {2, 2},
       {table, opt("row_offset", A::Count)}},
      // --- Update
      {K::CoalesceRows, "coalesce_rows", P::Update, {0, 0}, {2, 2},
       {kTableOrBatch[0], kTableOrBatch[1]}},
      {K::ClipGradNorm, "clip_grad_norm", P::Update, {0, kMany}, {1, 1},
       {req("max_norm", A::Real), kGradScale}},
      {K::UnscaleGrads, "unscale_grads", P::Update, {0, 0}, {0, kMany}, {}},
      {K::UpdateParam, "update_param", P::Update, {1, 2}, {1, 3}, {req("param", A::Param), kGradScale}},
      {K::UpdatePacked, "update_packed", P::Update, {1, 2}, {1, 3}, {req("pack", A::Pack), kGradScale}},
      {K::UpdateTable, "update_table", P::Update, {2, 3}, {1, 3},
       {kTableOrBatch[0], kTableOrBatch[1], kGradScale, kRequantize}},
      // --- Collectives
      {K::GradAllReduceStart, "grad_all_reduce_start", P::Either, {0, 0}, {1, 1},
       {kPackOrParam[0], kPackOrParam[1], req("offset", A::Count), req("size", A::Count)}},
      {K::GradAllReduceWait, "grad_all_reduce_wait", P::Update, {0, 0}, {1, 1},
       {kPackOrParam[0], kPackOrParam[1]}},
      {K::GatherRows, "gather_rows", P::Update, {0, 0}, {2, 2}, {kTableOrBatch[0], kTableOrBatch[1]}},
      {K::ShardIds, "shard_ids", P::Step, {2, 3}, {2, 3}, {table, opt("per_bag_mean", A::Bool)}},
      {K::ShardPool, "shard_pool", P::Step, {1, 1}, {1, 1}, {table}},
      {K::ShardPoolGrad, "shard_pool_grad", P::Step, {1, 1}, {1, 1}, {table}},
      {K::ShardIdsGroup, "shard_ids_group", P::Step, {2, kMany}, {2, kMany},
       {req("tables", A::TableList), req("weighted", A::BoolList), req("per_bag_mean", A::BoolList)}},
      {K::ShardPoolGroup, "shard_pool_group", P::Step, {1, kMany}, {1, kMany},
       {req("tables", A::TableList)}},
      {K::ShardPoolGradGroup, "shard_pool_grad_group", P::Step, {1, kMany}, {1, kMany},
       {req("tables", A::TableList)}},
      // --- Fused
      {K::FusedLookup, "fused_lookup", P::Step, {2, kMany}, {1, kMany},
       {{"members", A::ObjectList, N::Required, {},
         {table, kPooling, req("weighted", A::Bool), req("hash", A::Bool), req("buckets", A::Count),
          req("seed", A::Int), req("hashed_output", A::Bool), kDequantize}}}},
      {K::DenseAct, "dense_act", P::Step, {2, 3}, {1, 2},
       {kActivationKind, opt("bias", A::Bool), kCompute}},
      {K::DenseActGrad, "dense_act_grad", P::Step, {3, 4}, {1, 4},
       {kActivationKind, opt("from_output", A::Bool), opt("bias", A::Bool), opt("input_grad", A::Bool),
        kCompute}},
      {K::Elementwise, "elementwise", P::Step, {1, kMany}, {1, kMany},
       {req("width", A::Count),
        {"ops", A::ObjectList, N::Required, {},
         {word("op", wordsOf<ElementwiseOp>()), req("args", A::IntList), opt("bias", A::Bool),
          word("kind", wordsOf<Activation>(), N::Optional), opt("from_output", A::Bool)}},
        req("results", A::IntList)}},
      {K::InteractionConcat, "interaction_concat", P::Step, {2, kMany}, {1, 1},
       {self, req("copies", A::Count), req("position", A::Count), kCompute}},
      {K::InteractionConcatGrad, "interaction_concat_grad", P::Step, {3, kMany}, {2, kMany},
       {self, req("copies", A::Count), req("position", A::Count), req("copy_widths", A::IntList),
        req("copy_into", A::IntList), kCompute}},
      {K::EmbeddingUpdate, "embedding_update", P::Step, {2, kMany}, {1, 3},
       with({kTableOrBatch[0], kTableOrBatch[1], kGradScale, kRequantize},
            {{"sources", A::ObjectList, N::Required, {},
              {word("kind", wordsOf<RowSource>()), word("pooling", wordsOf<Pooling>(), N::Optional),
               opt("weighted", A::Bool), req("row_offset", A::Count), req("rows", A::Count)}}})},
      {K::SkipgramStep, "skipgram_step", P::Step, {5, 5}, {3, 5},
       {word("mode", wordsOf<SkipgramMode>()), kTableOrBatch[0], kTableOrBatch[1],
        {"center", A::Object, N::Required, {}, kRowRange},
        {"context", A::Object, N::Required, {}, kRowRange},
        {"negatives", A::Object, N::Required, {}, kRowRange}},
       /*cuda=*/false},
  };
  for (size_t i = 0; i < c.size(); ++i)
    if (size_t(c[i].op) != i)
      throw std::logic_error("kernel catalogue: entry " + std::to_string(i) + " ('" +
                             std::string(c[i].name) + "') is out of KernelOp order");
  return c;
}

std::string path(std::string_view parent, std::string_view key) {
  return std::string(parent) + "." + std::string(key);
}
std::string path(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

/// Checks one attribute value against its spec; returns the first problem.
std::optional<std::string> checkValue(const AttrSpec &spec, const json &v, const Plan &plan,
                                      const std::string &at);

std::optional<std::string> checkIndex(const json &v, size_t size, const char *what,
                                      const std::string &at) {
  if (!v.is_number_integer())
    return at + ": expected an index into " + what + ", got " + v.dump();
  int64_t i = v.get<int64_t>();
  if (i < 0 || i >= int64_t(size))
    return at + ": " + std::to_string(i) + " is not an index into " + what + " (" +
           std::to_string(size) + " of them)";
  return std::nullopt;
}

/// Checks the attributes of an object (a kernel's attrs, or a nested one).
std::optional<std::string> checkFields(const std::vector<AttrSpec> &specs, const json &object,
                                       const Plan &plan, const std::string &at) {
  if (!object.is_object())
    return at + ": expected an object, got " + std::string(object.type_name());
  std::set<std::string_view> known;
  int oneOfPresent = 0, oneOfDeclared = 0;
  std::string oneOfNames;
  for (const AttrSpec &spec : specs) {
    known.insert(spec.name);
    auto it = object.find(spec.name);
    bool present = it != object.end();
    if (spec.need == N::OneOf) {
      ++oneOfDeclared;
      oneOfPresent += present;
      oneOfNames += (oneOfNames.empty() ? "'" : " or '") + std::string(spec.name) + "'";
    }
    if (!present) {
      if (spec.need == N::Required)
        return path(at, spec.name) + ": missing";
      continue;
    }
    if (auto problem = checkValue(spec, *it, plan, path(at, spec.name)))
      return problem;
  }
  if (oneOfDeclared && oneOfPresent != 1)
    return at + ": needs exactly one of " + oneOfNames + ", has " + std::to_string(oneOfPresent);
  for (auto it = object.begin(); it != object.end(); ++it)
    if (!known.count(it.key()))
      return path(at, it.key()) + ": not an attribute of this kernel";
  return std::nullopt;
}

std::optional<std::string> checkValue(const AttrSpec &spec, const json &v, const Plan &plan,
                                      const std::string &at) {
  auto expected = [&](const char *what) {
    return at + ": expected " + what + ", got " + v.dump();
  };
  switch (spec.type) {
  case A::Int:
    return v.is_number_integer() ? std::nullopt : std::optional(expected("an integer"));
  case A::Count:
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      return expected("an integer >= 0");
    return std::nullopt;
  case A::Real:
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      return expected("a finite number");
    return std::nullopt;
  case A::Bool:
    return v.is_boolean() ? std::nullopt : std::optional(expected("true or false"));
  case A::Word: {
    if (v.is_string())
      for (size_t i = 0; i < spec.words.count; ++i)
        if (spec.words.names[i] == v.get<std::string>())
          return std::nullopt;
    std::string choices;
    for (size_t i = 0; i < spec.words.count; ++i)
      choices += (i ? ", " : "") + std::string(spec.words.names[i]);
    return at + ": " + v.dump() + " is not a " + std::string(spec.words.what) + " (" + choices +
           ")";
  }
  case A::IntList:
  case A::BoolList:
  case A::TableList:
    if (!v.is_array())
      return expected("an array");
    for (size_t i = 0; i < v.size(); ++i) {
      const json &e = v[i];
      if (spec.type == A::TableList) {
        if (auto problem = checkIndex(e, plan.tables.size(), "tables", path(at, i)))
          return problem;
      } else if (spec.type == A::IntList ? !e.is_number_integer() : !e.is_boolean()) {
        return path(at, i) + ": expected " +
               (spec.type == A::IntList ? "an integer" : "true or false") + ", got " + e.dump();
      }
    }
    return std::nullopt;
  case A::Table:
    return checkIndex(v, plan.tables.size(), "tables", at);
  case A::Batch:
    return checkIndex(v, plan.tableBatches.size(), "table_batches", at);
  case A::Param:
    return checkIndex(v, plan.params.size(), "params", at);
  case A::Pack:
    return checkIndex(v, plan.packs.size(), "packs", at);
  case A::Object:
    return checkFields(spec.fields, v, plan, at);
  case A::ObjectList:
    if (!v.is_array())
      return expected("an array");
    for (size_t i = 0; i < v.size(); ++i)
      if (auto problem = checkFields(spec.fields, v[i], plan, path(at, i)))
        return problem;
    return std::nullopt;
  }
  return std::nullopt;
}

std::string countText(Arity a) {
  if (a.min == a.max)
    return std::to_string(a.min);
  if (a.max == kAnyCount)
    return "at least " + std::to_string(a.min);
  return std::to_string(a.min) + " to " + std::to_string(a.max);
}

} // namespace

const std::vector<KernelSpec> &embc::runtime::kernelCatalogue() {
  static const std::vector<KernelSpec> catalogue = declare();
  return catalogue;
}

const KernelSpec *embc::runtime::findKernel(std::string_view name) {
  for (const KernelSpec &spec : kernelCatalogue())
    if (spec.name == name)
      return &spec;
  return nullptr;
}

std::optional<std::string> embc::runtime::checkKernel(const Kernel &kernel, const Plan &plan,
                                                      bool update, std::string_view at) {
  const KernelSpec *spec = findKernel(kernel.op);
  if (!spec)
    return path(at, "op") + ": '" + kernel.op + "' is not a kernel of the catalogue";
  if (spec->phase == (update ? P::Step : P::Update))
    return path(at, "op") + ": '" + kernel.op + "' runs in the " +
           (update ? "step" : "update") + ", not the " + (update ? "update" : "step");
  auto inRange = [](size_t n, Arity a) { return n >= a.min && n <= a.max; };
  if (!inRange(kernel.inputs.size(), spec->inputs))
    return path(at, "inputs") + ": '" + kernel.op + "' takes " + countText(spec->inputs) +
           " operand(s), got " + std::to_string(kernel.inputs.size());
  if (!inRange(kernel.outputs.size(), spec->outputs))
    return path(at, "outputs") + ": '" + kernel.op + "' has " + countText(spec->outputs) +
           " result(s), got " + std::to_string(kernel.outputs.size());
  return checkFields(spec->attrs, kernel.attrs, plan, path(at, "attrs"));
}
