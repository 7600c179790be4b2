//===- KernelCatalogue.cpp - the declaration of every plan kernel ---------===//
//
// The table of KernelCatalogue.def's entries, in KernelOp order (the same
// list makes the enum), with the attribute helpers its lines use, and the
// validation of a kernel against its entry. What each kernel computes and its operands in detail are in
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
const AttrSpec kSequencePooling = word("mode", wordsOf<SequencePooling>());
const AttrSpec kPositionKind = word("kind", wordsOf<PositionKind>());
const AttrSpec kHeads = req("heads", A::Count);
const AttrSpec kCausal = opt("causal", A::Bool);
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
  const AttrSpec table = req("table", A::Table);
  const AttrSpec self = opt("self", A::Bool);
  std::vector<KernelSpec> c = {
#define EMBC_KERNEL(op, ...) {KernelOp::op, __VA_ARGS__},
#include "embc/runtime/plan/KernelCatalogue.def"
#undef EMBC_KERNEL
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
  if (auto problem = checkFields(spec->attrs, kernel.attrs, plan, path(at, "attrs")))
    return problem;
  return checkKernelOperands(spec->op, kernel, plan, at);
}

std::vector<FusedLookupMember> embc::runtime::fusedLookupMembers(const Kernel &kernel) {
  std::vector<FusedLookupMember> members;
  if (kernel.op != kernelName(KernelOp::FusedLookup) || !kernel.attrs.contains("members") ||
      !kernel.attrs["members"].is_array())
    return members;
  size_t in = 0, index = 0;
  for (const json &member : kernel.attrs["members"]) {
    if (in >= kernel.inputs.size())
      break;
    members.push_back({index++, in});
    in += member.is_object() && member.value("weighted", false) ? 3 : 2;
  }
  return members;
}
