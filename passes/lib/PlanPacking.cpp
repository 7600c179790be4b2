//===- PlanPacking.cpp - packs and table batches in the plan ---------------===//
//
// -emb-pack-params declares emb.param_pack and emb.table_batch; here they get
// their buffers (values, gradient, each optimizer state), and the members'
// buffers become views into them. One update kernel then serves each pack or
// batch.
//
//===----------------------------------------------------------------------===//

#include "PlanBuilder.h"

using namespace mlir;
using namespace embc::emb;
using namespace embc::planbuilder;

namespace {

int64_t leadingRows(ArrayRef<int64_t> shape) {
  return shape.size() > 1 ? shape.front() : 1;
}

} // namespace

LogicalResult PlanBuilder::addPacks(const rt::Optimizer &dense) {
  for (auto pack : module.getOps<ParamPackOp>()) {
    if (!pack.getElementType().isF32())
      return pack.emitOpError("packs ")
             << pack.getElementType() << "; the CPU runtime trains f32 parameters";
    rt::ParamPack p;
    p.name = pack.getSymName().str();
    p.optimizer = dense;
    p.buckets.assign(pack.getBuckets().begin(), pack.getBuckets().end());
    int64_t size = pack.getSize();
    p.buffer = addBuffer("pack/" + p.name, rt::BufferRole::Param, rt::DType::F32, {size});
    p.grad = addBuffer("grad/" + p.name, rt::BufferRole::Grad, rt::DType::F32, {size});
    // rowwise_adagrad keeps one accumulator per member row.
    int64_t rows = 0;
    for (Attribute ref : pack.getMembers()) {
      auto param = symbols.lookupNearestSymbolFrom<ParamOp>(module, cast<FlatSymbolRefAttr>(ref));
      rows += leadingRows(cast<RankedTensorType>(param.getType()).getShape());
    }
    std::vector<int64_t> stateShape =
        dense.kind == rt::OptimizerKind::RowwiseAdagrad ? std::vector<int64_t>{rows} : std::vector<int64_t>{size};
    for (size_t i = 0, e = stateShapes(dense, {size, 1}).size(); i < e; ++i)
      p.state.push_back(addBuffer("state/" + p.name + "/" + std::to_string(i),
                                  rt::BufferRole::OptimizerState, rt::DType::F32, stateShape));
    packIndex[p.name] = int32_t(plan_.packs.size());
    plan_.packs.push_back(std::move(p));
  }
  return success();
}

bool PlanBuilder::packedParam(ParamOp param, rt::Param &p) {
  for (auto pack : module.getOps<ParamPackOp>()) {
    int64_t rowOffset = 0;
    for (auto [ref, offset] : llvm::zip(pack.getMembers(), pack.getOffsets())) {
      auto type = cast<RankedTensorType>(
          symbols.lookupNearestSymbolFrom<ParamOp>(module, cast<FlatSymbolRefAttr>(ref))
              .getType());
      if (cast<FlatSymbolRefAttr>(ref).getValue() != param.getSymName()) {
        rowOffset += leadingRows(type.getShape());
        continue;
      }
      int32_t index = packIndex.lookup(pack.getSymName());
      rt::ParamPack &whole = plan_.packs[index];
      std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
      int64_t bytes = offset * 4;
      p.buffer = addView("param/" + p.name, whole.buffer, bytes, shape);
      p.grad = addView("grad/" + p.name, whole.grad, bytes, shape);
      bool rowwise = whole.optimizer.kind == rt::OptimizerKind::RowwiseAdagrad;
      for (auto [i, state] : llvm::enumerate(whole.state))
        p.state.push_back(addView("state/" + p.name + "/" + std::to_string(i), state,
                                  rowwise ? rowOffset * 4 : bytes,
                                  rowwise ? std::vector<int64_t>{leadingRows(shape)} : shape));
      // Members in pack order (by offset), as emb.param_pack lists them.
      auto at = llvm::find_if(whole.members, [&](int32_t m) {
        return viewOffset.lookup(plan_.params[m].buffer) > bytes;
      });
      whole.members.insert(at, int32_t(plan_.params.size()));
      return true;
    }
  }
  return false;
}

LogicalResult
PlanBuilder::addTableBatches(const llvm::StringMap<int64_t> &gradCapacity) {
  for (auto batch : module.getOps<TableBatchOp>()) {
    rt::TableBatch b;
    b.name = batch.getSymName().str();
    SmallVector<int64_t> offsets = batch.getRowOffsets(symbols);
    int64_t capacity = 0;
    std::optional<StorageType> storage;
    std::optional<Placement> placement;
    for (auto [ref, offset] : llvm::zip(batch.getMembers(), offsets)) {
      auto symbol = cast<FlatSymbolRefAttr>(ref);
      auto table = symbols.lookupNearestSymbolFrom<TableOp>(module, symbol);
      if (storage && table.getStorage() != *storage)
        return batch.emitOpError("batches tables stored as ")
               << stringifyStorageType(*storage) << " and "
               << stringifyStorageType(table.getStorage())
               << "; one buffer holds one storage";
      if (placement && table.getPlacement() != *placement)
        return batch.emitOpError("batches tables placed on ")
               << stringifyPlacement(*placement) << " and "
               << stringifyPlacement(table.getPlacement())
               << "; one buffer lives in one place";
      storage = table.getStorage();
      placement = table.getPlacement();
      b.rows += int64_t(table.getRows());
      b.dim = int64_t(table.getDim());
      b.optimizer = convertOptimizer(table.getOptimizer());
      b.rowOffsets.push_back(offset);
      capacity += gradCapacity.lookup(symbol.getValue());
      batchOfTable[symbol.getValue()] = {int32_t(plan_.tableBatches.size()), offset};
    }
    capacity = std::max<int64_t>(capacity, 1);
    std::vector<int64_t> shape = {b.rows, b.dim};
    b.storage = planStorage(storage.value_or(StorageType::f32));
    b.placement = planPlacement(placement.value_or(Placement::device));
    StorageType kind = storage.value_or(StorageType::f32);
    b.buffer = addBuffer("tables/" + b.name, rt::BufferRole::Table, storageDType(kind),
                         storageShape(kind, b.rows, b.dim));
    if (hasRowParams(kind)) {
      b.qparams = addBuffer("qparams/" + b.name, rt::BufferRole::Table, rt::DType::F16,
                            {b.rows, 2});
      plan_.buffers[b.qparams].origin = "emb-quantize";
    }
    b.gradRows = addBuffer("grad_rows/" + b.name, rt::BufferRole::Grad, rt::DType::I64,
                           {capacity}, /*dynamic=*/true);
    b.gradValues = addBuffer("grad_values/" + b.name, rt::BufferRole::Grad, rt::DType::F32,
                             {capacity, b.dim}, /*dynamic=*/true);
    b.state = addStateBuffers(b.name, b.optimizer, shape);
    batchIndex[b.name] = int32_t(plan_.tableBatches.size());
    plan_.tableBatches.push_back(std::move(b));
  }
  return success();
}

bool PlanBuilder::batchedTable(TableOp table, rt::Table &t) {
  auto it = batchOfTable.find(table.getSymName());
  if (it == batchOfTable.end())
    return false;
  auto [index, rowOffset] = it->second;
  rt::TableBatch &batch = plan_.tableBatches[index];
  const rt::Buffer &values = plan_.buffers[batch.buffer];
  int64_t columns = values.shape[1]; // dim, or dim/2 for int4
  int64_t rowBytes = columns * rt::dtypeBytes(values.dtype);
  t.buffer = addView("table/" + t.name, batch.buffer, rowOffset * rowBytes, {t.rows, columns});
  if (batch.qparams >= 0) // rows x 2 fp16
    t.qparams = addView("qparams/" + t.name, batch.qparams, rowOffset * 2 * 2, {t.rows, 2});
  t.gradRows = batch.gradRows;
  t.gradValues = batch.gradValues;
  for (auto [i, state] : llvm::enumerate(batch.state)) {
    bool perRow = plan_.buffers[state].shape.size() == 1; // rowwise_adagrad
    t.state.push_back(addView("state/" + t.name + "/" + std::to_string(i), state,
                              perRow ? rowOffset * 4 : rowOffset * t.dim * 4,
                              perRow ? std::vector<int64_t>{t.rows}
                                     : std::vector<int64_t>{t.rows, t.dim}));
  }
  batch.members.push_back(int32_t(plan_.tables.size()));
  return true;
}
