//===- Fuse.cpp - -emb-fuse ------------------------------------------------===//
//
// Finds groups of ops in @train_step that one kernel can run and wraps each
// in an emb.fused of the matching kind (see Passes.td for the list). A group
// is formed only where it can sit at one position of the block without
// reordering anything it depends on: at its last op (when nothing outside
// uses its values earlier) or at its first (when all it reads exists by
// then). The embedding_update group also moves its table's coalesce and
// update from @update into the step. A skip-gram model trained with
// per-example updates becomes one `skipgram` group (the whole step).
//
//===----------------------------------------------------------------------===//

#include "GradientsFromOutputs.h"
#include "PipelineSchedule.h"
#include "QuantizeDense.h"
#include "TrainingFuncs.h"

#include "embc/passes/Passes.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "emb-fuse"

namespace embc {
#define GEN_PASS_DEF_EMBFUSEPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// The op of `block` that is or contains `op` (uses may sit in other groups).
Operation *inBlock(Block *block, Operation *op) {
  return block->findAncestorOpInBlock(*op);
}

/// Wraps `ops` (one block, any order) in an emb.fused of `kind`. Returns
/// nullptr when no single position can hold them.
FusedOp formGroup(ArrayRef<Operation *> opsIn, FusionKind kind) {
  SmallVector<Operation *> ops(opsIn.begin(), opsIn.end());
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Block *block = ops.front()->getBlock();
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());

  SmallVector<Value> yielded;
  bool usedBeforeLast = false, readsAfterFirst = false;
  for (Operation *op : ops) {
    for (Value result : op->getResults()) {
      bool outside = false;
      for (Operation *user : result.getUsers()) {
        Operation *at = inBlock(block, user);
        if (members.contains(at))
          continue;
        outside = true;
        usedBeforeLast |= at->isBeforeInBlock(ops.back());
      }
      if (outside)
        yielded.push_back(result);
    }
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || members.contains(def))
        continue;
      Operation *at = inBlock(block, def);
      readsAfterFirst |= at && ops.front()->isBeforeInBlock(at);
    }
  }
  OpBuilder b(ops.front()->getContext());
  if (!usedBeforeLast)
    b.setInsertionPointAfter(ops.back());
  else if (!readsAfterFirst)
    b.setInsertionPoint(ops.front());
  else
    return nullptr;

  SmallVector<Type> types;
  for (Value v : yielded)
    types.push_back(v.getType());
  auto fused = FusedOp::create(b, ops.front()->getLoc(), types, kind);
  Block *body = b.createBlock(&fused.getBody());
  for (Operation *op : ops)
    op->moveBefore(body, body->end());
  b.setInsertionPointToEnd(body);
  YieldOp::create(b, fused.getLoc(), yielded);
  for (auto [value, result] : llvm::zip(yielded, fused.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !fused->isAncestor(use.getOwner());
    });
  return fused;
}

/// The single user of `v`, if it has exactly one use.
Operation *singleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

bool isTopLevel(Operation *op, Block *block) { return op->getBlock() == block; }

struct FusePass : embc::impl::EmbFusePassBase<FusePass> {
  using Base::Base;
  void runOnOperation() override;

private:
  void group(ArrayRef<Operation *> ops, FusionKind kind) {
    // A kernel runs on one pipeline stage: never group across stages.
    if (ops.size() < 2 || llvm::any_of(ops, [&](Operation *op) {
          return pipeline::stageOf(op) != pipeline::stageOf(ops.front());
        }))
      return;
    // A gradient all-reduce (-emb-distribute) that starts between the
    // group's first and last op must not start before the group's
    // accumulations when the group lands at its last op: it moves after the
    // group (later is always safe; the wait is in @update).
    Operation *first = ops.front(), *last = ops.front();
    for (Operation *op : ops) {
      first = op->isBeforeInBlock(first) ? op : first;
      last = last->isBeforeInBlock(op) ? op : last;
    }
    SmallVector<Operation *> starts;
    for (Operation *op = first->getNextNode(); op && op != last; op = op->getNextNode())
      if (isa<GradAllReduceStartOp>(op))
        starts.push_back(op);
    FusedOp fused = formGroup(ops, kind);
    if (!fused)
      return;
    Operation *after = fused;
    for (Operation *start : starts)
      if (start->isBeforeInBlock(fused)) {
        start->moveAfter(after);
        after = start;
      }
    if (Attribute stage = ops.front()->getAttr(pipeline::kStageAttrName))
      fused->setAttr(pipeline::kStageAttrName, stage);
    ++numGroups;
    numFusedOps += ops.size();
    LLVM_DEBUG(llvm::dbgs() << "emb-fuse: " << stringifyFusionKind(kind) << " group of "
                            << ops.size() << " ops at " << fused.getLoc() << "\n");
  }
  void denseActivations(Block *block);
  void denseBackward(Block *block);
  /// Plain dense layers reading one input (Q, K and V), and their backward.
  void sharedInputDenses(Block *block);
  void sharedInputBackward(Block *block);
  void interactions(Block *block);
  void interactionBackward(Block *block);
  void lookups(Block *block);
  void embeddingUpdates(ModuleOp module, Block *block, func::FuncOp update);
  void elementwiseChains(Block *block);
  /// layer_norm of a two-input add (a residual), with the dropout that
  /// feeds the add when there is one: one pass over the rows.
  void residualNorms(Block *block);
  /// The skipgram group; false (after an error) when the model asks for
  /// per-example updates that its step cannot have.
  bool skipgram(ModuleOp module, Block *block, func::FuncOp update, bool &formed);
};

void FusePass::denseActivations(Block *block) {
  for (auto dense : llvm::make_early_inc_range(block->getOps<DenseOp>())) {
    ActivationOp act;
    for (Operation *user : dense.getResult().getUsers())
      if (auto a = dyn_cast<ActivationOp>(user); a && isTopLevel(a, block))
        act = act ? ActivationOp() : a; // exactly one activation
    if (act)
      group({dense, act}, FusionKind::dense_act);
  }
}

/// dense_grad_weight(x, dz) with its accumulate_grad, and when present
/// bias_grad(dz) + accumulate_grad, dense_grad_input(dz, w), and the
/// activation_grad producing dz.
void FusePass::denseBackward(Block *block) {
  for (auto weight : llvm::make_early_inc_range(block->getOps<DenseGradWeightOp>())) {
    auto accW = dyn_cast_or_null<AccumulateGradOp>(singleUser(weight.getResult()));
    if (!accW || !isTopLevel(accW, block))
      continue;
    Value dz = weight.getGrad();
    SmallVector<Operation *> ops = {weight, accW};
    bool onlyLayerUses = true;
    int biases = 0, inputs = 0;
    for (Operation *user : dz.getUsers()) {
      if (user == weight.getOperation())
        continue;
      if (auto bias = dyn_cast<BiasGradOp>(user)) {
        auto accB = dyn_cast_or_null<AccumulateGradOp>(singleUser(bias.getResult()));
        if (accB && isTopLevel(bias, block) && isTopLevel(accB, block)) {
          ops.append({bias, accB});
          ++biases;
          continue;
        }
      }
      if (auto input = dyn_cast<DenseGradInputOp>(user); input && isTopLevel(input, block)) {
        ops.push_back(input);
        ++inputs;
        continue;
      }
      onlyLayerUses = false;
    }
    if (!onlyLayerUses || biases > 1 || inputs > 1)
      continue;
    // Every use of dz is in the layer (checked above), so its producer can
    // join: dz then never leaves the kernel's workspace.
    if (auto act = dz.getDefiningOp<ActivationGradOp>(); act && isTopLevel(act, block))
      ops.push_back(act);
    group(ops, FusionKind::dense_act_grad);
  }
}

/// The dense layers left after denseActivations (no activation joined
/// them) that read one input in one compute precision: a Transformer
/// layer's query, key and value projections.
void FusePass::sharedInputDenses(Block *block) {
  llvm::MapVector<Value, SmallVector<Operation *>> byInput;
  for (auto dense : block->getOps<DenseOp>())
    byInput[dense.getInput()].push_back(dense);
  for (auto &[input, ops] : byInput) {
    Attribute compute = ops.front()->getAttr(kComputeAttrName);
    if (ops.size() >= 2 && llvm::all_of(ops, [&](Operation *op) {
          return op->getAttr(kComputeAttrName) == compute;
        }))
      group(ops, FusionKind::dense_multi);
  }
}

/// The input gradients of dense layers that read one input, summed by a
/// left-leaning chain of adds ((g_0 + g_1) + g_2 ..., autodiff's
/// accumulation), with each layer's weight gradient, bias gradient and
/// their accumulate_grads: one dense_multi_grad. Before denseBackward,
/// which would take the layers one by one.
void FusePass::sharedInputBackward(Block *block) {
  auto chainAdd = [&](Value v) -> AddOp {
    auto add = v.getDefiningOp<AddOp>();
    return add && isTopLevel(add, block) && !add.getBias() && add.getInputs().size() == 2 &&
                   v.hasOneUse()
               ? add
               : AddOp();
  };
  auto leaf = [&](Value v) -> DenseGradInputOp {
    auto input = v.getDefiningOp<DenseGradInputOp>();
    return input && isTopLevel(input, block) && v.hasOneUse() ? input : DenseGradInputOp();
  };
  for (auto root : llvm::make_early_inc_range(block->getOps<AddOp>())) {
    if (root.getBias() || root.getInputs().size() != 2)
      continue;
    if (auto next = dyn_cast_or_null<AddOp>(singleUser(root.getResult()));
        next && isTopLevel(next, block) && !next.getBias() && next.getInputs().size() == 2 &&
        next.getInputs()[0] == root.getResult())
      continue; // the chain goes on
    SmallVector<Operation *> adds;
    SmallVector<DenseGradInputOp> leaves; // last first
    for (AddOp add = root; add;) {
      adds.push_back(add);
      DenseGradInputOp right = leaf(add.getInputs()[1]);
      if (!right)
        break;
      leaves.push_back(right);
      Value left = add.getInputs()[0];
      if (AddOp deeper = chainAdd(left)) {
        add = deeper;
      } else {
        if (DenseGradInputOp first = leaf(left))
          leaves.push_back(first);
        else
          leaves.clear();
        add = AddOp();
      }
    }
    if (leaves.size() < 2 || leaves.size() != adds.size() + 1)
      continue;
    // Every layer's weight gradient (with its accumulate_grad) reads one x;
    // its bias gradient joins when it has one.
    SmallVector<Operation *> ops(adds.begin(), adds.end());
    llvm::SmallPtrSet<Operation *, 8> taken;
    Value x;
    Attribute compute = leaves.front()->getAttr(kComputeAttrName);
    bool complete = true;
    for (DenseGradInputOp input : leaves) {
      // Layers may share dy (Q and V feeding one add do): the weight
      // gradient is the one accumulated into this layer's weight, a bias
      // gradient any of dy's not taken yet (each is dy's column sums).
      auto get = input.getWeight().getDefiningOp<GetOp>();
      DenseGradWeightOp weight;
      BiasGradOp bias;
      AccumulateGradOp accW, accB;
      for (Operation *user : input.getGrad().getUsers()) {
        if (taken.contains(user) || !isTopLevel(user, block))
          continue;
        if (auto w = dyn_cast<DenseGradWeightOp>(user); w && get && !weight)
          if (auto acc = dyn_cast_or_null<AccumulateGradOp>(singleUser(w.getResult()));
              acc && isTopLevel(acc, block) && acc.getParamAttr() == get.getParamAttr())
            weight = w, accW = acc;
        if (auto b = dyn_cast<BiasGradOp>(user); b && !bias)
          if (auto acc = dyn_cast_or_null<AccumulateGradOp>(singleUser(b.getResult()));
              acc && isTopLevel(acc, block))
            bias = b, accB = acc;
      }
      if (weight)
        taken.insert(weight);
      if (bias)
        taken.insert(bias);
      if (!weight || (x && weight.getInput() != x) ||
          input->getAttr(kComputeAttrName) != compute ||
          weight->getAttr(kComputeAttrName) != compute) {
        complete = false;
        break;
      }
      x = weight.getInput();
      ops.append({input, weight, accW});
      if (bias)
        ops.append({bias, accB});
    }
    if (complete)
      group(ops, FusionKind::dense_multi_grad);
  }
}

void FusePass::residualNorms(Block *block) {
  for (auto norm : llvm::make_early_inc_range(block->getOps<LayerNormOp>())) {
    auto add = norm.getInput().getDefiningOp<AddOp>();
    if (!add || !isTopLevel(add, block) || add.getBias() || add.getInputs().size() != 2 ||
        add.getResult().getType() != norm.getInput().getType())
      continue;
    SmallVector<Operation *> ops = {add, norm};
    for (Value in : add.getInputs())
      if (auto drop = in.getDefiningOp<DropoutOp>();
          drop && isTopLevel(drop, block) && drop.getResult().hasOneUse()) {
        ops.push_back(drop);
        break;
      }
    group(ops, FusionKind::add_layer_norm);
  }
  // The backward: the norm's input gradient added to the sum's other
  // gradient (the residual stream's), and the dropout's gradient of that.
  for (auto grad : llvm::make_early_inc_range(block->getOps<LayerNormGradOp>())) {
    SmallVector<Operation *> ops = {grad};
    Value dh = grad.getInputGrad();
    if (auto add = dyn_cast_or_null<AddOp>(singleUser(dh));
        add && isTopLevel(add, block) && !add.getBias() && add.getInputs().size() == 2 &&
        add.getInputs()[0] != add.getInputs()[1]) {
      ops.push_back(add);
      dh = add.getResult();
    }
    for (Operation *user : dh.getUsers())
      if (auto drop = dyn_cast<DropoutGradOp>(user); drop && isTopLevel(drop, block)) {
        ops.push_back(drop);
        break;
      }
    if (ops.size() > 1)
      group(ops, FusionKind::add_layer_norm_grad);
  }
}

/// interaction whose only use is a concat: written into the concat directly.
void FusePass::interactions(Block *block) {
  for (auto inter : llvm::make_early_inc_range(block->getOps<InteractionOp>())) {
    auto concat = dyn_cast_or_null<ConcatOp>(singleUser(inter.getResult()));
    if (concat && isTopLevel(concat, block))
      group({inter, concat}, FusionKind::interaction_concat);
  }
}

/// The concat's gradient is cut by slices; the interaction part feeds
/// interaction_grad, and a copied part that is also an interaction input is
/// added to that input's gradient.
void FusePass::interactionBackward(Block *block) {
  for (auto grad : llvm::make_early_inc_range(block->getOps<InteractionGradOp>())) {
    auto slice = grad.getGrad().getDefiningOp<SliceOp>();
    if (!slice || !isTopLevel(slice, block))
      continue;
    Value whole = slice.getInput();
    SmallVector<Operation *> ops = {grad};
    bool allSlices = true;
    int64_t width = 0;
    for (Operation *user : whole.getUsers()) {
      auto part = dyn_cast<SliceOp>(user);
      if (!part || !isTopLevel(part, block)) {
        allSlices = false;
        break;
      }
      width += cast<RankedTensorType>(part.getType()).getDimSize(1);
      ops.push_back(part);
      if (part == slice)
        continue;
      // A copy that is also an interaction input: fold the add.
      auto add = dyn_cast_or_null<AddOp>(singleUser(part.getResult()));
      if (add && isTopLevel(add, block) && !add.getBias() && add.getInputs().size() == 2) {
        Value other = add.getInputs()[0] == part.getResult() ? add.getInputs()[1]
                                                               : add.getInputs()[0];
        if (other.getDefiningOp() == grad.getOperation() && other.hasOneUse())
          ops.push_back(add);
      }
    }
    if (!allSlices || width != cast<RankedTensorType>(whole.getType()).getDimSize(1))
      continue;
    group(ops, FusionKind::interaction_concat_grad);
  }
}

/// Every table's lookup (with the hash of its raw ids) in one launch.
void FusePass::lookups(Block *block) {
  SmallVector<Operation *> ops;
  for (auto lookup : block->getOps<LookupOp>()) {
    // A sharded table's lookup reads the local shard between two exchanges.
    if (isa_and_present<ShardIdsOp, ShardIdsGroupOp>(lookup.getIds().getDefiningOp()))
      continue;
    ops.push_back(lookup);
    if (auto hash = lookup.getIds().getDefiningOp<HashOp>();
        hash && isTopLevel(hash, block) && isa<BlockArgument>(hash.getIds()) &&
        !llvm::is_contained(ops, hash.getOperation()))
      ops.push_back(hash);
  }
  int lookupsFound = llvm::count_if(ops, [](Operation *op) { return isa<LookupOp>(op); });
  if (lookupsFound >= 2)
    group(ops, FusionKind::lookup);
}

/// A table's (or batch's) sparse backward and optimizer step as one kernel.
void FusePass::embeddingUpdates(ModuleOp module, Block *block,
                                func::FuncOp update) {
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  if (!training || training.getGradAccumulation() != 1 ||
      training.getGradClipNorm() != 0.0 || !update.getOps<ClipGradNormOp>().empty() ||
      !update.getOps<UnscaleGradsOp>().empty())
    return; // the update must wait for all gradients of the step (and, with
            // fp16 loss scaling, for their overflow check: it may be skipped)

  if (auto step = block->getParentOp();
      step && step->hasAttr(pipeline::kMicroBatchesAttrName))
    return; // pipelined: the update is the schedule's step, after every micro-batch
  SymbolTableCollection symbols;
  // A gathered table (-emb-distribute) needs every rank's gradient rows
  // before its update: the fused kernel never materialises them, so such a
  // table keeps the unfused chain (equal by construction; the speed loss is
  // the per-id rows written once).
  llvm::DenseSet<Attribute> gathered;
  for (auto gather : update.getOps<GatherRowsOp>())
    gathered.insert(gather.getTargetAttr());
  for (auto upd : llvm::make_early_inc_range(update.getOps<UpdateOp>())) {
    if (upd.getScale() || gathered.contains(upd.getTargetAttr()))
      continue;
    Operation *target = symbols.lookupNearestSymbolFrom(module, upd.getTargetAttr());
    if (target && target->hasAttr(kShardRowsAttrName))
      continue; // a sharded table keeps its chain (its rows are local ones)
    SmallVector<Attribute> tables;
    if (isa_and_nonnull<TableOp>(target))
      tables.push_back(upd.getTargetAttr());
    else if (auto batch = dyn_cast_or_null<TableBatchOp>(target))
      tables.append(batch.getMembers().begin(), batch.getMembers().end());
    else
      continue;
    CoalesceRowsOp coalesce;
    for (auto c : update.getOps<CoalesceRowsOp>())
      if (c.getTableAttr() == upd.getTargetAttr())
        coalesce = c;
    if (!coalesce)
      continue;

    SmallVector<Operation *> ops;
    bool fusable = true;
    Operation *last = nullptr;
    for (Operation &op : *block) {
      if (auto acc = dyn_cast<AccumulateRowsOp>(op);
          acc && llvm::is_contained(tables, acc.getTableAttr())) {
        ops.push_back(acc);
        last = acc;
        if (auto grad = acc.getValues().getDefiningOp<LookupGradOp>();
            grad && isTopLevel(grad, block) && grad.getResult().hasOneUse() &&
            grad.getIds() == acc.getIds()) {
          if (grad.getPooling() == Pooling::max)
            fusable = false; // max pooling reads the table it would update
          ops.push_back(grad);
        }
      }
    }
    if (!fusable || !last)
      continue;
    // Nothing after the update may read the tables it changes.
    for (Operation *op = last->getNextNode(); op && fusable; op = op->getNextNode())
      op->walk([&](Operation *inner) {
        for (NamedAttribute attr : inner->getAttrs())
          if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
              ref && llvm::is_contained(tables, ref))
            fusable = false;
      });
    if (!fusable)
      continue;
    coalesce->moveAfter(last);
    upd->moveAfter(coalesce);
    ops.append({coalesce, upd});
    group(ops, FusionKind::embedding_update);
  }
}

/// Chains of adds and activations where each value feeds only the next op.
void FusePass::elementwiseChains(Block *block) {
  auto elementwise = [&](Operation *op) {
    return op && isTopLevel(op, block) && isa<AddOp, ActivationOp, ActivationGradOp>(op);
  };
  llvm::EquivalenceClasses<Operation *> chains;
  SmallVector<Operation *> order;
  for (Operation &op : *block) {
    if (!elementwise(&op))
      continue;
    order.push_back(&op);
    chains.insert(&op);
    Operation *user = singleUser(op.getResult(0));
    if (elementwise(user) && user->getResult(0).getType() == op.getResult(0).getType())
      chains.unionSets(&op, user);
  }
  llvm::SetVector<Operation *> leaders;
  for (Operation *op : order)
    leaders.insert(chains.getLeaderValue(op));
  for (Operation *leader : leaders) {
    SmallVector<Operation *> ops;
    for (Operation *op : order)
      if (chains.getLeaderValue(op) == leader)
        ops.push_back(op);
    group(ops, FusionKind::elementwise);
  }
}

/// With embedding_updates = per_example or hogwild: the whole step of a
/// skip-gram model as one group. The step must be exactly that model: a
/// neg_sampling loss of dot(centre, context) and dot(centre, negatives),
/// the centre and context sum-pooled lookups of unhashed ids, the negatives
/// a gather, the autodiff's backward of these, and one update of the table
/// (or table batch) holding all three tables, with nothing else to train.
bool FusePass::skipgram(ModuleOp module, Block *block, func::FuncOp update, bool &formed) {
  formed = false;
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  if (!training || training.getEmbeddingUpdates() == EmbeddingUpdates::batch)
    return true;
  const std::string mode = stringifyEmbeddingUpdates(training.getEmbeddingUpdates()).str();
  auto refuse = [&](Location loc, const Twine &why) {
    emitError(loc) << "embedding_updates = " << mode
                   << " needs a skip-gram step (a neg_sampling loss of dot(centre, context) and "
                      "dot(centre, negatives) and nothing else to train): "
                   << why;
    return false;
  };
  if (training.getGradAccumulation() != 1 || training.getGradClipNorm() != 0.0 ||
      training.getPrecision() != Precision::fp32)
    return refuse(module.getLoc(), "per-example updates take no gradient accumulation, "
                                   "clipping or 16-bit compute");
  if (auto step = block->getParentOp(); step && step->hasAttr(pipeline::kMicroBatchesAttrName))
    return refuse(module.getLoc(), "per-example updates take no micro-batches");

  SmallVector<LossOp> losses(block->getOps<LossOp>());
  if (losses.size() != 1 || losses.front().getKind() != LossKind::neg_sampling)
    return refuse(module.getLoc(), "the step's loss is not one neg_sampling loss");
  LossOp loss = losses.front();
  auto pos = loss.getInput().getDefiningOp<DotOp>();
  auto neg = loss.getTarget().getDefiningOp<DotOp>();
  if (!pos || !neg || pos.getLhs() != neg.getLhs())
    return refuse(loss.getLoc(), "its scores are not dots of one centre vector");
  auto center = pos.getLhs().getDefiningOp<LookupOp>();
  auto context = pos.getRhs().getDefiningOp<LookupOp>();
  auto negatives = neg.getRhs().getDefiningOp<GatherOp>();
  if (!center || !context || !negatives)
    return refuse(pos.getLoc(), "the centre and context are not lookups, or the negatives "
                                "not a gather");
  for (LookupOp lookup : {center, context})
    if (lookup.getPooling() != Pooling::sum || lookup.getWeights() ||
        !isa<BlockArgument>(lookup.getIds()) || !isa<BlockArgument>(lookup.getOffsets()))
      return refuse(lookup.getLoc(), "its lookups must be sum-pooled, unweighted and of the "
                                     "step's own ids (no hashing)");
  if (!isa<BlockArgument>(negatives.getIds()))
    return refuse(negatives.getLoc(), "the negatives must be the step's own ids");

  SymbolTableCollection symbols;
  for (FlatSymbolRefAttr table :
       {center.getTableAttr(), context.getTableAttr(), negatives.getTableAttr()}) {
    auto op = symbols.lookupNearestSymbolFrom<TableOp>(module, table);
    if (!op || op.getStorage() != StorageType::f32 || op.getSharding() != Sharding::none)
      return refuse(module.getLoc(), "table '" + table.getValue() +
                                         "' must be f32 and unsharded (not quantised)");
  }
  SmallVector<Operation *> ops;
  for (Operation &op : block->without_terminator()) {
    if (!isa<LookupOp, GatherOp, DotOp, LossOp, LossGradOp, DotGradOp, AddOp, LookupGradOp,
             AccumulateRowsOp>(op))
      return refuse(op.getLoc(), "the step also runs '" + op.getName().getStringRef() + "'");
    ops.push_back(&op);
  }
  // @update: the tables' coalesce and step only, one target for all three.
  SmallVector<Operation *> updates;
  for (Operation &op : update.getBody().front().without_terminator()) {
    if (!isa<CoalesceRowsOp, UpdateOp>(op))
      return refuse(op.getLoc(), "the update also runs '" + op.getName().getStringRef() + "'");
    updates.push_back(&op);
  }
  SmallVector<UpdateOp> steps(update.getOps<UpdateOp>());
  if (steps.size() != 1 || steps.front().getScale())
    return refuse(module.getLoc(),
                  "its tables must take one unscaled update: pack them into one table batch "
                  "(-emb-pack-params does when they share dim, storage and optimizer)");
  Operation *target = symbols.lookupNearestSymbolFrom(module, steps.front().getTargetAttr());
  SmallVector<Attribute> members;
  if (isa_and_nonnull<TableOp>(target))
    members.push_back(steps.front().getTargetAttr());
  else if (auto batch = dyn_cast_or_null<TableBatchOp>(target))
    members.append(batch.getMembers().begin(), batch.getMembers().end());
  for (FlatSymbolRefAttr table :
       {center.getTableAttr(), context.getTableAttr(), negatives.getTableAttr()})
    if (!llvm::is_contained(members, table))
      return refuse(module.getLoc(), "table '" + table.getValue() +
                                         "' is not in the one table (batch) the update steps");
  for (Operation *op : updates)
    op->moveBefore(block->getTerminator());
  ops.append(updates.begin(), updates.end());
  FusedOp fused = formGroup(ops, FusionKind::skipgram);
  if (!fused)
    return refuse(module.getLoc(), "its ops cannot form one group");
  ++numGroups;
  numFusedOps += ops.size();
  formed = true;
  return true;
}

void FusePass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<TrainingFuncs> funcs = lookupTrainingFuncs(module, "-emb-fuse");
  if (failed(funcs))
    return signalPassFailure();
  if (funcs->step.walk([](FusedOp) { return WalkResult::interrupt(); }).wasInterrupted()) {
    module.emitError("@train_step is already fused (it holds emb.fused groups)");
    return signalPassFailure();
  }
  Block *block = &funcs->step.getBody().front();
  bool skipgramFormed = false;
  if (!skipgram(module, block, funcs->update, skipgramFormed))
    return signalPassFailure();
  if (skipgramFormed)
    return; // the whole step is one group
  // The forward GEMM + activation need not keep z.
  gradientsFromOutputs(*block, /*keepAttrs=*/true);
  denseActivations(block);
  sharedInputDenses(block);
  sharedInputBackward(block);
  denseBackward(block);
  interactions(block);
  interactionBackward(block);
  lookups(block);
  embeddingUpdates(module, block, funcs->update);
  residualNorms(block);
  elementwiseChains(block);
}

} // namespace
