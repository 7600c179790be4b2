//===- PlanLayout.cpp - where the plan's buffers come from and lie ---------===//
//
// Two parts of -emb-to-plan that read the whole plan once it is built:
//  - each buffer's origin, the pass that made it (the memory report groups
//    by it), from the op that defines its value or else from its role;
//  - the layout, a plan-level step after lowering: by default one buffer
//    after another; after -emb-plan-memory, by the strategy it recorded on
//    the module (MemoryPlanner.cpp places the buffers).
// Lifetimes are filled either way: they are facts of the schedule, and the
// report's lower bound needs them.
//
//===----------------------------------------------------------------------===//

#include "MemoryPlanner.h"
#include "PlanBuilder.h"

using namespace mlir;
using namespace embc::emb;
using namespace embc::planbuilder;

namespace {

/// Origins in the order a buffer defined by several values takes them: the
/// most specific pass wins (a fused group's result is also its inner value).
constexpr const char *kOriginPriority[] = {"emb-remat",      "emb-fuse",     "emb-quantize",
                                           "emb-pipeline",   "emb-autodiff", "emb-pack-params",
                                           "emb-to-plan",    "frontend"};

int priorityOf(StringRef origin) {
  for (auto [i, name] : llvm::enumerate(kOriginPriority))
    if (origin == name)
      return int(i);
  return int(std::size(kOriginPriority));
}

/// The pass whose op defines `v` (RULES: IR conventions between passes).
StringRef originOfValue(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return "frontend"; // an argument of @train_step: a data input
  if (auto fused = dyn_cast<FusedOp>(def)) {
    Value inner = fused.getBody().front().getTerminator()->getOperand(
        cast<OpResult>(v).getResultNumber());
    Operation *innerDef = inner.getDefiningOp();
    return innerDef && innerDef->hasAttr("emb.remat") ? "emb-remat" : "emb-fuse";
  }
  if (def->hasAttr("emb.remat"))
    return "emb-remat";
  if (isa_and_nonnull<FusedOp>(def->getParentOp()))
    return "emb-fuse";
  if (def->getName().stripDialect().contains("quantize"))
    return "emb-quantize";
  if (def->hasTrait<BackwardOp>())
    return "emb-autodiff";
  return "frontend";
}

/// The pass behind a buffer no value names, by what it holds.
const char *originOfRole(rt::BufferRole role) {
  switch (role) {
  case rt::BufferRole::Table:
  case rt::BufferRole::Param:
  case rt::BufferRole::Input:
    return "frontend";
  case rt::BufferRole::Grad:           // gradients and the optimizer's
  case rt::BufferRole::OptimizerState: // state exist for @update
    return "emb-autodiff";
  case rt::BufferRole::Activation:
  case rt::BufferRole::Workspace:
    return "emb-to-plan";
  }
  return "emb-to-plan";
}

} // namespace

void PlanBuilder::assignOrigins() {
  std::vector<std::string> origin(plan_.buffers.size());
  auto offer = [&](int32_t id, StringRef candidate) {
    if (id < 0 || size_t(id) >= origin.size())
      return;
    if (origin[id].empty() || priorityOf(candidate) < priorityOf(origin[id]))
      origin[id] = candidate.str();
  };
  // Packs and batches are -emb-pack-params' own buffers (their members'
  // views keep the origin of what they hold).
  for (const rt::ParamPack &p : plan_.packs) {
    for (int32_t id : {p.buffer, p.grad})
      offer(id, "emb-pack-params");
    for (int32_t id : p.state)
      offer(id, "emb-pack-params");
  }
  for (const rt::TableBatch &b : plan_.tableBatches) {
    for (int32_t id : {b.buffer, b.gradRows, b.gradValues})
      offer(id, "emb-pack-params");
    for (int32_t id : b.state)
      offer(id, "emb-pack-params");
  }
  for (auto &[value, id] : bufferOf)
    if (plan_.buffers[id].role == rt::BufferRole::Activation ||
        plan_.buffers[id].role == rt::BufferRole::Input)
      offer(id, originOfValue(value));
  for (auto [i, b] : llvm::enumerate(plan_.buffers)) {
    if (!b.origin.empty()) // set where the buffer was made (e.g. -emb-quantize's)
      continue;
    b.origin = origin[i].empty() ? originOfRole(b.role) : origin[i];
  }
}

LogicalResult PlanBuilder::layoutMemory() {
  auto recorded = module->getAttrOfType<DictionaryAttr>(embc::memory::kMemoryPlanAttrName);
  if (!recorded) {
    embc::memory::planMemory(plan_, embc::memory::Strategy::Sequential);
    memoryNote = "-emb-to-plan: buffers laid out without reuse (-emb-plan-memory not run)";
    return success();
  }
  auto name = recorded.getAs<StringAttr>("strategy");
  std::optional<embc::memory::Strategy> strategy =
      name ? embc::memory::parseStrategy(name.str()) : std::nullopt;
  if (!strategy || recorded.size() != 1)
    return module.emitError("malformed ")
           << embc::memory::kMemoryPlanAttrName << " " << recorded
           << ": expected {strategy = " << embc::memory::strategyNames()
           << "} as -emb-plan-memory writes it";
  embc::memory::planMemory(plan_, *strategy);
  memoryNote = "-emb-plan-memory: " + plan_.memory.strategy + " layout, peak " +
               std::to_string(plan_.memory.peakBytes) + " bytes (lower bound " +
               std::to_string(plan_.memory.lowerBoundBytes) + ")";
  return success();
}

/// Buffers one after another, each 64-byte aligned, before -emb-plan-memory's
/// strategy (layoutMemory) reuses memory; views lie inside their parents.
void PlanBuilder::layout() {
  int64_t offset = 0;
  for (rt::Buffer &b : plan_.buffers) {
    if (b.parent >= 0)
      continue; // placed with its parent below
    b.offset = offset;
    offset += (b.bytes * b.slots + 63) / 64 * 64; // copies per micro-batch in flight
  }
  for (auto [id, relative] : viewOffset)
    plan_.buffers[id].offset = plan_.buffers[plan_.buffers[id].parent].offset + relative;
  plan_.arenaBytes = offset;
}
