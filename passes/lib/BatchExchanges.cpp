//===- BatchExchanges.cpp - -emb-batch-exchanges ---------------------------===//
//
// Merges the per-table exchanges of sharded tables (emb.shard_ids,
// emb.shard_pool, emb.shard_pool_grad) into one group op per kind, so a
// step runs a handful of collectives instead of five per table (see
// Passes.td). Each kind is grouped on its own, in program order: a group
// goes right before the first user of any member's result, which must come
// after every member's operands.
//
//===----------------------------------------------------------------------===//

#include "PipelineSchedule.h"

#include "embc/dialect/EmbDialect.h"
#include "embc/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>
#include <vector>
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "emb-batch-exchanges"

namespace embc {
#define GEN_PASS_DEF_EMBBATCHEXCHANGESPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// Where ops sit in their block, and the window in which an op that
/// replaces some of them may go.
class Positions {
public:
  explicit Positions(Block &block) : block_(block) {
    for (Operation &op : block) {
      index_[&op] = int(ops_.size());
      ops_.push_back(&op);
    }
  }

  /// After this position every operand of `op` exists (-1: block arguments
  /// and values from outside the block only).
  int operandsReady(Operation *op) const {
    int latest = -1;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        if (Operation *mine = block_.findAncestorOpInBlock(*def))
          latest = std::max(latest, index_.lookup(mine));
    return latest;
  }

  /// The first op of the block that uses a result of `op` (the terminator's
  /// position when nothing does).
  int firstUse(Operation *op) const {
    int first = index_.lookup(block_.getTerminator());
    for (Operation *user : op->getUsers())
      if (Operation *mine = block_.findAncestorOpInBlock(*user))
        first = std::min(first, index_.lookup(mine));
    return first;
  }

  Operation *at(int position) const { return ops_[size_t(position)]; }

private:
  Block &block_;
  llvm::DenseMap<Operation *, int> index_;
  std::vector<Operation *> ops_; ///< in block order: ops_[index_[op]] == op
};

/// Moves the side-effect-free ops that compute `op`'s operands (a hash of
/// raw ids, say) as early as their own operands allow, so that exchanges
/// whose ids are hashed between another table's lookups can still join one
/// group. Moving a pure op earlier never changes what it computes.
void hoistPureOperands(Operation *op, Block &block) {
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &block || def->getNumRegions() != 0 ||
        !isMemoryEffectFree(def))
      continue;
    hoistPureOperands(def, block);
    // Right after the latest of its operands' definitions in the block.
    Operation *after = nullptr;
    for (Value operand : def->getOperands())
      if (Operation *d = operand.getDefiningOp())
        if (Operation *mine = block.findAncestorOpInBlock(*d))
          if (!after || after->isBeforeInBlock(mine))
            after = mine;
    if (after)
      def->moveAfter(after);
    else
      def->moveBefore(&block, block.begin());
  }
}

/// Members of one future group and the op before which it goes.
struct Group {
  SmallVector<Operation *> members;
  int ready = -1;
  int firstUse = std::numeric_limits<int>::max();
};

/// Groups the ops of kind `OpT` in `block`: per stage, in program order,
/// greedily while the window (ready, firstUse) stays open.
template <typename OpT>
SmallVector<Group> formGroups(Block &block, const Positions &pos) {
  llvm::MapVector<Attribute, SmallVector<Group>> byStage;
  for (auto op : block.getOps<OpT>()) {
    Attribute stage = op->getAttr(pipeline::kStageAttrName);
    SmallVector<Group> &groups = byStage[stage];
    int ready = pos.operandsReady(op), use = pos.firstUse(op);
    if (!groups.empty()) {
      Group &g = groups.back();
      int r = std::max(g.ready, ready), u = std::min(g.firstUse, use);
      if (r < u) {
        g.members.push_back(op);
        g.ready = r;
        g.firstUse = u;
        continue;
      }
    }
    groups.push_back(Group{{op}, ready, use});
  }
  SmallVector<Group> out;
  for (auto &[stage, groups] : byStage)
    for (Group &g : groups)
      if (g.members.size() >= 2)
        out.push_back(std::move(g));
  return out;
}

ArrayAttr tablesOf(OpBuilder &b, ArrayRef<Operation *> members) {
  SmallVector<Attribute> tables;
  for (Operation *op : members)
    tables.push_back(op->getAttrOfType<FlatSymbolRefAttr>("table"));
  return b.getArrayAttr(tables);
}

/// The group op goes before the first use; it keeps the members' stage.
void placeGroup(Operation *group, const Group &g) {
  if (Attribute stage = g.members.front()->getAttr(pipeline::kStageAttrName))
    group->setAttr(pipeline::kStageAttrName, stage);
}

void mergeIds(const Group &g, Operation *before) {
  OpBuilder b(before);
  SmallVector<Value> ids, offsets, weights;
  SmallVector<Type> localIds, localOffsets, localWeights;
  SmallVector<bool> weighted, perBagMean;
  for (Operation *op : g.members) {
    auto m = cast<ShardIdsOp>(op);
    ids.push_back(m.getIds());
    offsets.push_back(m.getOffsets());
    localIds.push_back(m.getLocalIds().getType());
    localOffsets.push_back(m.getLocalOffsets().getType());
    weighted.push_back(bool(m.getWeights()));
    perBagMean.push_back(m.getPerBagMean());
    if (Value w = m.getWeights())
      weights.push_back(w);
    if (Value w = m.getLocalWeights())
      localWeights.push_back(w.getType());
  }
  auto group = ShardIdsGroupOp::create(
      b, b.getFusedLoc(llvm::map_to_vector(g.members, [](Operation *op) { return op->getLoc(); })),
      localIds, localOffsets, localWeights, tablesOf(b, g.members), ids, offsets, weights,
      b.getDenseBoolArrayAttr(weighted), b.getDenseBoolArrayAttr(perBagMean));
  placeGroup(group, g);
  for (auto [i, op] : llvm::enumerate(g.members)) {
    auto m = cast<ShardIdsOp>(op);
    m.getLocalIds().replaceAllUsesWith(group.getLocalIds()[i]);
    m.getLocalOffsets().replaceAllUsesWith(group.getLocalOffsets()[i]);
    if (Value w = m.getLocalWeights())
      w.replaceAllUsesWith(group.getMemberLocalWeights(unsigned(i)));
    m.erase();
  }
}

/// shard_pool and shard_pool_grad: one value in, one out per member.
template <typename GroupOpT>
void mergePooled(const Group &g, Operation *before) {
  OpBuilder b(before);
  SmallVector<Value> in;
  SmallVector<Type> out;
  for (Operation *op : g.members) {
    in.push_back(op->getOperand(0));
    out.push_back(op->getResult(0).getType());
  }
  auto group = GroupOpT::create(
      b, b.getFusedLoc(llvm::map_to_vector(g.members, [](Operation *op) { return op->getLoc(); })),
      out, tablesOf(b, g.members), in);
  placeGroup(group, g);
  for (auto [i, op] : llvm::enumerate(g.members)) {
    op->getResult(0).replaceAllUsesWith(group->getResult(unsigned(i)));
    op->erase();
  }
}

struct BatchExchangesPass
    : public embc::impl::EmbBatchExchangesPassBase<BatchExchangesPass> {
  using EmbBatchExchangesPassBase::EmbBatchExchangesPassBase;

  /// Forms and rewrites the groups of one kind in `block`.
  template <typename OpT>
  void batch(Block &block, function_ref<void(const Group &, Operation *)> merge) {
    auto ops = block.getOps<OpT>();
    if (std::distance(ops.begin(), ops.end()) < 2)
      return; // nothing to merge: leave the block as it is
    for (auto op : llvm::make_early_inc_range(ops))
      hoistPureOperands(op, block);
    Positions pos(block);
    SmallVector<Group> groups = formGroups<OpT>(block, pos);
    // Positions are looked up before any rewrite: each group's anchor is an
    // op that exists now and that no merge erases (a use, not a member).
    SmallVector<Operation *> anchors;
    for (const Group &g : groups)
      anchors.push_back(pos.at(g.firstUse));
    for (auto [g, anchor] : llvm::zip(groups, anchors)) {
      LLVM_DEBUG(llvm::dbgs() << "emb-batch-exchanges: " << g.members.size() << " x "
                              << OpT::getOperationName() << " merged\n");
      merge(g, anchor);
      ++numGroups;
      numMerged += g.members.size();
    }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &block = func.getBody().front();
      batch<ShardIdsOp>(block, mergeIds);
      batch<ShardPoolOp>(block, mergePooled<ShardPoolGroupOp>);
      batch<ShardPoolGradOp>(block, mergePooled<ShardPoolGradGroupOp>);
    }
  }
};

} // namespace
