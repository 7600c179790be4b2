//===- PlanBuilder.h - -emb-to-plan's state, shared by its files -*- C++ -*-===//
//
// -emb-to-plan's driver (ToPlan.cpp) lays out the plan's storage
// (PlanStorage.cpp: inputs, parameters, tables; PlanPacking.cpp: packs and
// table batches as views of one buffer), then asks each op of @train_step
// and @update to lower itself through the PlanEmitter this class implements
// (PlanValues.cpp), then runs the plan-level steps: the pipeline schedule
// (PlanSchedule.cpp), memory layout (PlanLayout.cpp, by the strategy -emb-plan-memory records), the
// precision checks (PlanPrecision.cpp) and the notes (PlanNotes.cpp). The
// kernels themselves are written beside their ops (dialect/lib).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_PLANBUILDER_H
#define EMBC_PASSES_LIB_PLANBUILDER_H

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"
#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ErrorHandling.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace embc::planbuilder {

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

/// The plan's enumerator for a word the dialect spells (EmbEnums.td and
/// plan/Enums.h spell each word alike; a divergence is a bug, caught by
/// every lit test that builds a plan).
template <class E> E planEnum(llvm::StringRef word) {
  std::optional<E> value = rt::parseEnum<E>(std::string_view(word.data(), word.size()));
  if (!value)
    llvm::report_fatal_error(llvm::Twine("the plan has no ") +
                             std::string(rt::EnumTraits<E>::what) + " '" + word + "'");
  return *value;
}

inline rt::Initializer convertInit(InitializerAttr init) {
  rt::Initializer out;
  out.kind = planEnum<rt::InitKind>(stringifyInitKind(init.getKind()));
  out.value = init.getValue();
  out.low = init.getLow();
  out.high = init.getHigh();
  out.mean = init.getMean();
  out.std = init.getStd();
  out.gain = init.getGain();
  return out;
}

inline rt::Optimizer convertOptimizer(OptimizerAttr opt) {
  rt::Optimizer out;
  out.kind = planEnum<rt::OptimizerKind>(stringifyOptimizerKind(opt.getKind()));
  out.lr = opt.getLr();
  out.momentum = opt.getMomentum();
  out.beta1 = opt.getBeta1();
  out.beta2 = opt.getBeta2();
  out.eps = opt.getEps();
  out.weightDecay = opt.getWeightDecay();
  out.initialAccumulator = opt.getInitialAccumulator();
  out.weightDecayMode =
      planEnum<rt::WeightDecayMode>(stringifyWeightDecayMode(opt.getWeightDecayMode()));
  return out;
}

/// A table's placement in the plan (Table::placement).
inline rt::Placement planPlacement(Placement placement) {
  return planEnum<rt::Placement>(stringifyPlacement(placement));
}

/// A table's storage in the plan (Table::storage; the dialect spells the
/// row-wise ones int8_rowwise / int4_rowwise).
inline rt::Storage planStorage(StorageType storage) {
  switch (storage) {
  case StorageType::f16:
    return rt::Storage::F16;
  case StorageType::bf16:
    return rt::Storage::BF16;
  case StorageType::int8_rowwise:
    return rt::Storage::Int8;
  case StorageType::int4_rowwise:
    return rt::Storage::Int4;
  case StorageType::f32:
    break;
  }
  return rt::Storage::F32;
}
/// The dtype of a table's values buffer (-emb-quantize).
inline rt::DType storageDType(StorageType storage) {
  return rt::storageDType(planStorage(storage));
}
/// The shape of a rows x dim table's values buffer: int4 packs two codes per
/// byte (low nibble first), so its U8 buffer is rows x dim/2.
inline std::vector<int64_t> storageShape(StorageType storage, int64_t rows, int64_t dim) {
  return {rows, storage == StorageType::int4_rowwise ? dim / 2 : dim};
}
/// Row-wise storages (int8, int4) keep a rows x 2 F16 (scale, bias) buffer.
inline bool hasRowParams(StorageType storage) { return rt::isRowwise(planStorage(storage)); }

/// Optimizer state buffers (shape of each) for a value of `shape`; rowwise
/// Adagrad keeps one accumulator per row (leading dimension).
inline SmallVector<std::vector<int64_t>> stateShapes(const rt::Optimizer &opt,
                                             const std::vector<int64_t> &shape) {
  if (opt.kind == rt::OptimizerKind::Sgd)
    return opt.momentum != 0.0 ? SmallVector<std::vector<int64_t>>{shape}
                               : SmallVector<std::vector<int64_t>>{};
  if (opt.kind == rt::OptimizerKind::Adagrad)
    return {shape};
  if (opt.kind == rt::OptimizerKind::RowwiseAdagrad)
    return {{shape.size() > 1 ? shape.front() : 1}};
  return {shape, shape}; // adam, adamw, lamb: first and second moments
}

class PlanBuilder : public PlanEmitter {
public:
  explicit PlanBuilder(ModuleOp module) : module(module) {}
  FailureOr<rt::Plan> build();

  // PlanEmitter (PlanValues.cpp)
  rt::Plan &plan() override { return plan_; }
  int32_t buffer(Value v) override { return bufferOf.lookup(v); }
  bool hasBuffer(Value v) override { return bufferOf.count(v); }
  void bind(Value v, int32_t buffer) override { bufferOf[v] = buffer; }
  FailureOr<int32_t> activation(Operation *op, Value v, StringRef what) override;
  int32_t addBuffer(std::string name, rt::BufferRole role, rt::DType dtype,
                    std::vector<int64_t> shape) override {
    return addBuffer(std::move(name), role, dtype, std::move(shape), false);
  }
  int32_t table(StringRef name) override { return tableIndex.lookup(name); }
  std::optional<int32_t> param(StringRef name) override { return find(paramIndex, name); }
  std::optional<int32_t> pack(StringRef name) override { return find(packIndex, name); }
  std::optional<int32_t> batch(StringRef name) override { return find(batchIndex, name); }
  int64_t batchRowOffset(StringRef name) override { return batchOfTable.lookup(name).second; }
  LogicalResult dequantize(Operation *op, StringRef table, nlohmann::json &attrs) override;
  void emit(rt::Kernel kernel) override { emitted->push_back(std::move(kernel)); }

private:
  static std::optional<int32_t> find(const llvm::StringMap<int32_t> &index, StringRef name) {
    auto it = index.find(name);
    return it == index.end() ? std::nullopt : std::optional<int32_t>(it->second);
  }
  /// Where `emit` appends: plan_.step or plan_.update.
  std::vector<rt::Kernel> *emitted = nullptr;

  ModuleOp module;
  rt::Plan plan_;
  DenseMap<Value, int32_t> bufferOf;
  llvm::StringMap<int32_t> paramIndex, tableIndex, packIndex, batchIndex;
  /// Per table in a batch: its batch and first batch row.
  llvm::StringMap<std::pair<int32_t, int64_t>> batchOfTable;
  /// Views (packing): buffer -> bytes from its parent's start.
  DenseMap<int32_t, int64_t> viewOffset;
  SymbolTableCollection symbols;

  int32_t addBuffer(std::string name, rt::BufferRole role, rt::DType dtype,
                    std::vector<int64_t> shape, bool dynamic);
  /// A buffer that lies inside `parent`, `relativeBytes` from its start.
  int32_t addView(std::string name, int32_t parent, int64_t relativeBytes,
                  std::vector<int64_t> shape);
  /// The optimizer state of `owner`: a buffer "state/<owner>/<i>" for each
  /// of stateShapes(opt, shape).
  std::vector<int32_t> addStateBuffers(const std::string &owner, const rt::Optimizer &opt,
                                       const std::vector<int64_t> &shape);
  FailureOr<int32_t> valueBuffer(Operation *op, Value v, rt::BufferRole role,
                                 StringRef name);
  int64_t idCapacity(Value ids);
  LogicalResult addParamsAndTables(func::FuncOp step, int64_t accumulation);
  /// The storage of table `name` (f32 for a pack or unknown symbol).
  StorageType storageOf(StringRef name);
  LogicalResult addInputs(func::FuncOp step);
  /// Asks each op of `func` to lower itself; kernels go to `kernels`.
  LogicalResult lowerOps(func::FuncOp func, std::vector<rt::Kernel> &kernels, bool step);
  void layout();
  /// PlanNotes.cpp: what each pass did, for the report.
  void addNotes(func::FuncOp step);

  // PlanSchedule.cpp (-emb-pipeline)
  /// config.microBatches/pipelineStages/schedule from the emb.schedule.
  LogicalResult readPipelineConfig(func::FuncOp step);
  /// Plan.schedule with the send/recv boundary buffers, then the slots.
  LogicalResult lowerSchedule(func::FuncOp step);
  /// Buffer.slots: copies per micro-batch in flight, from the schedule.
  void computeSlots();
  /// Buffer.rank of the buffers only one rank's stages touch (stage ranks).
  void placeBuffersOnRanks();

  // PlanLayout.cpp
  /// Fills Buffer::origin (the pass that made each buffer) where unset.
  void assignOrigins();
  /// Lifetimes and offsets, a plan-level step after lowering: by the
  /// strategy -emb-plan-memory recorded (emb.memory_plan), else one buffer
  /// after another. Sets memoryNote.
  LogicalResult layoutMemory();
  std::string memoryNote;

  // PlanPacking.cpp
  /// Creates the packs' buffers; members then get views (packedParam).
  LogicalResult addPacks(const rt::Optimizer &dense);
  /// Creates the batches' buffers, given each table's sparse-gradient capacity.
  LogicalResult addTableBatches(const llvm::StringMap<int64_t> &gradCapacity);
  /// Fills a packed parameter's buffers as views; false if not packed.
  bool packedParam(ParamOp param, rt::Param &p);
  /// Fills a batched table's buffers as views; false if not batched.
  bool batchedTable(TableOp table, rt::Table &t);

  // PlanPrecision.cpp (-emb-quantize's dense half)
  /// Refuses a module whose dense ops, loss gradient or update disagree
  /// with its training precision.
  LogicalResult checkPrecision(func::FuncOp step, func::FuncOp update);
  /// "compute" / "loss_scaled" of the kernel lowered from `op` (or a group).
  void precisionAttrs(Operation *op, nlohmann::json &attrs);

};

} // namespace embc::planbuilder

#endif // EMBC_PASSES_LIB_PLANBUILDER_H
