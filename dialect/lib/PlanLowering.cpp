//===- PlanLowering.cpp - the PlanEmitter helpers every op shares ---------===//
//
// What the ops' lowerToPlan implementations have in common: the default
// lowering (the catalogue's kernel named like the op, on its operands and
// results, with the attributes the catalogue declares copied from the op's)
// and the outputs of an update's target.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

PlanEmitter::~PlanEmitter() = default;

double PlanEmitter::gradScale() {
  const rt::TrainingConfig &c = plan().config;
  return 1.0 / double(c.gradAccumulation * c.microBatches * c.dataParallel);
}

rt::Kernel PlanEmitter::kernel(rt::KernelOp op) {
  rt::Kernel k;
  k.op = rt::kernelName(op);
  return k;
}

LogicalResult PlanEmitter::emitOnOperands(Operation *op, rt::Kernel k) {
  for (Value v : op->getOperands())
    k.inputs.push_back(buffer(v));
  for (Value r : op->getResults()) {
    FailureOr<int32_t> out = activation(op, r, k.op);
    if (failed(out))
      return failure();
    k.outputs.push_back(*out);
  }
  emit(std::move(k));
  return success();
}

rt::Storage PlanEmitter::updateTarget(StringRef name, rt::Kernel &k) {
  auto append = [&](int32_t values, const std::vector<int32_t> &state) {
    k.outputs.push_back(values);
    k.outputs.insert(k.outputs.end(), state.begin(), state.end());
  };
  if (std::optional<int32_t> b = batch(name)) {
    const rt::TableBatch &tb = plan().tableBatches[*b];
    k.attrs["batch"] = *b;
    append(tb.buffer, tb.state);
    return tb.storage;
  }
  const int32_t t = table(name);
  const rt::Table &table = plan().tables[t];
  k.attrs["table"] = t;
  append(table.buffer, table.state);
  return table.storage;
}

LogicalResult embc::emb::lowerToNamedKernel(Operation *op, PlanEmitter &emitter) {
  llvm::StringRef name = op->getName().stripDialect();
  const rt::KernelSpec *spec = rt::findKernel(std::string_view(name.data(), name.size()));
  if (!spec)
    return op->emitOpError("has no kernel in the plan's catalogue");
  rt::Kernel k = PlanEmitter::kernel(spec->op);
  // The kernel's declared attributes, from the op's attributes of the same
  // name: numbers and flags map directly; anything else needs the op's own
  // lowerToPlan.
  for (const rt::AttrSpec &a : spec->attrs) {
    Attribute value = op->getAttr(llvm::StringRef(a.name.data(), a.name.size()));
    if (!value)
      continue;
    std::string name(a.name);
    if (auto f = dyn_cast<FloatAttr>(value); f && a.type == rt::AttrType::Real)
      k.attrs[name] = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(value);
             i && (a.type == rt::AttrType::Int || a.type == rt::AttrType::Count))
      k.attrs[name] = i.getInt();
    else if (auto flag = dyn_cast<BoolAttr>(value); flag && a.type == rt::AttrType::Bool)
      k.attrs[name] = flag.getValue();
    else
      return op->emitOpError("attribute '")
             << name << "' has no default plan lowering: the op needs its own lowerToPlan";
  }
  return emitter.emitOnOperands(op, std::move(k));
}
