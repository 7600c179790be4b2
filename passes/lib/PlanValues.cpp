//===- PlanValues.cpp - the PlanEmitter of -emb-to-plan -------------------===//
//
// The buffers of SSA values and what ops ask of the plan while they lower
// themselves (PlanEmitter.h): a buffer per value, created on first use and
// sized by its ids' bound when dynamic; table and parameter lookups; the
// dequantize attribute of ops that read quantised tables.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"
#include "PlanBuilder.h"

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::planbuilder;
namespace rt = embc::runtime;

int32_t PlanBuilder::addBuffer(std::string name, rt::BufferRole role,
                               rt::DType dtype, std::vector<int64_t> shape,
                               bool dynamic) {
  rt::Buffer buffer;
  buffer.name = std::move(name);
  buffer.role = role;
  buffer.dtype = dtype;
  if (shape.empty())
    shape.push_back(1); // scalars are one-element buffers
  buffer.shape = std::move(shape);
  buffer.dynamic = dynamic;
  buffer.bytes = rt::dtypeBytes(dtype);
  for (int64_t d : buffer.shape)
    buffer.bytes *= d;
  plan_.buffers.push_back(std::move(buffer));
  return int32_t(plan_.buffers.size() - 1);
}

int32_t PlanBuilder::addView(std::string name, int32_t parent,
                             int64_t relativeBytes, std::vector<int64_t> shape) {
  const rt::Buffer &whole = plan_.buffers[parent];
  int32_t id = addBuffer(std::move(name), whole.role, whole.dtype, std::move(shape));
  plan_.buffers[id].parent = parent;
  viewOffset[id] = relativeBytes;
  return id;
}

std::vector<int32_t> PlanBuilder::addStateBuffers(const std::string &owner,
                                                  const rt::Optimizer &opt,
                                                  const std::vector<int64_t> &shape) {
  std::vector<int32_t> state;
  for (auto [i, s] : llvm::enumerate(stateShapes(opt, shape)))
    state.push_back(addBuffer("state/" + owner + "/" + std::to_string(i),
                              rt::BufferRole::OptimizerState, rt::DType::F32, s));
  return state;
}

/// Upper bound on the number of ids a value holds in one batch.
int64_t PlanBuilder::idCapacity(Value ids) {
  auto type = cast<RankedTensorType>(ids.getType());
  if (type.hasStaticShape())
    return type.getNumElements();
  if (auto arg = dyn_cast<BlockArgument>(ids)) {
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (auto max = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                      kMaxIdsArgAttrName))
      return max.getInt();
  }
  if (Operation *def = ids.getDefiningOp()) {
    if (isa<HashOp>(def) || (isa<MaskTokensOp>(def) && cast<OpResult>(ids).getResultNumber() == 0))
      return idCapacity(def->getOperand(0));
    if (auto exchange = dyn_cast<ShardIdsOp>(def)) {
      // Every rank may send all its ids to this one.
      auto bags = [](Value offsets) {
        return cast<RankedTensorType>(offsets.getType()).getDimSize(0) - 1;
      };
      int64_t mine = idCapacity(exchange.getIds());
      int64_t ranks = bags(exchange.getLocalOffsets()) / bags(exchange.getOffsets());
      return mine < 0 ? -1 : mine * ranks;
    }
    if (auto group = dyn_cast<ShardIdsGroupOp>(def)) {
      // The member whose local ids or local weights `ids` is.
      unsigned r = cast<OpResult>(ids).getResultNumber(), n = unsigned(group.getTables().size());
      unsigned member = r;
      if (r >= 2 * n)
        for (unsigned i = 0, seen = 0; i < n; ++i)
          if (group.getMemberLocalWeights(i) && seen++ == r - 2 * n)
            member = i;
      int64_t mine = idCapacity(group.getIds()[member]);
      auto bags = [](Value offsets) {
        return cast<RankedTensorType>(offsets.getType()).getDimSize(0) - 1;
      };
      int64_t ranks = bags(group.getLocalOffsets()[member]) / bags(group.getOffsets()[member]);
      return mine < 0 ? -1 : mine * ranks;
    }
    if (auto fused = dyn_cast<FusedOp>(def)) // what the group yields
      return idCapacity(fused.getBody().front().getTerminator()->getOperand(
          cast<OpResult>(ids).getResultNumber()));
  }
  return -1;
}

/// The buffer of `v`, created on first use as an activation. Dynamic 1-D
/// id tensors and per-id gradient rows are sized by their id capacity.
FailureOr<int32_t> PlanBuilder::valueBuffer(Operation *op, Value v,
                                            rt::BufferRole role,
                                            StringRef name) {
  auto it = bufferOf.find(v);
  if (it != bufferOf.end())
    return it->second;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return op->emitOpError("produces a non-tensor value; the plan has no "
                           "buffer for ")
           << v.getType();
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  bool dynamic = !type.hasStaticShape();
  if (dynamic) {
    int64_t capacity = -1;
    if (auto grad = dyn_cast_or_null<LookupGradOp>(v.getDefiningOp()))
      capacity = idCapacity(grad.getIds());
    else if (auto grad = dyn_cast_or_null<SequenceLookupGradOp>(v.getDefiningOp()))
      capacity = idCapacity(grad.getIds());
    else
      capacity = idCapacity(v);
    if (capacity < 0 || !type.isDynamicDim(0) || type.getNumDynamicDims() != 1)
      return op->emitOpError("cannot bound the size of ")
             << v.getType()
             << ": a dynamic tensor needs an emb.max_ids bound on its ids";
    shape[0] = capacity;
  }
  Type element = type.getElementType();
  rt::DType dtype;
  if (element.isF32())
    dtype = rt::DType::F32;
  else if (element.isF64())
    dtype = rt::DType::F64;
  else if (element.isSignlessInteger(64))
    dtype = rt::DType::I64;
  else
    return op->emitOpError("element type ")
           << element << " has no CPU kernels (f32, f64 and i64 do)";
  int32_t id = addBuffer(name.str(), role, dtype, std::move(shape), dynamic);
  bufferOf[v] = id;
  return id;
}

FailureOr<int32_t> PlanBuilder::activation(Operation *op, Value v, StringRef what) {
  return valueBuffer(op, v, rt::BufferRole::Activation,
                     "act/" + std::to_string(plan_.buffers.size()) + "/" + what.str());
}

StorageType PlanBuilder::storageOf(StringRef name) {
  // Through the collection's cached table: a module lookup is a linear walk.
  auto table = symbols.lookupSymbolIn<TableOp>(module, StringAttr::get(module.getContext(), name));
  return table ? table.getStorage() : StorageType::f32;
}

LogicalResult PlanBuilder::dequantize(Operation *op, StringRef table,
                                          nlohmann::json &attrs) {
  StorageType storage = storageOf(table);
  if (storage == StorageType::f32)
    return success();
  auto marked = op->getAttrOfType<StorageTypeAttr>(kDequantizeAttrName);
  if (!marked || marked.getValue() != storage)
    return op->emitOpError("reads table @")
           << table << " stored as " << stringifyStorageType(storage)
           << " but is not marked " << kDequantizeAttrName << " = #emb<storage "
           << stringifyStorageType(storage) << ">: run -emb-quantize";
  attrs["dequantize"] = rt::enumString(planStorage(storage));
  return success();
}
