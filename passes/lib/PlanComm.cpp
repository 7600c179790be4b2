//===- PlanComm.cpp - the collectives of -emb-distribute in the plan -------===//
//
// Each collective op becomes one kernel that names the buffers it exchanges
// as outputs (it rewrites them in place) and its target by index, so the
// runtime binding needs nothing but the plan and the communicator:
//
//   grad_all_reduce_start  outputs [grad]                   pack|param, offset, size
//   grad_all_reduce_wait   outputs [grad]                   pack|param
//   gather_rows            outputs [grad_rows, grad_values] table|batch
//
//===----------------------------------------------------------------------===//

#include "PlanBuilder.h"

using namespace mlir;
using namespace embc::emb;
using namespace embc::planbuilder;

FailureOr<rt::Kernel> PlanBuilder::lowerCollective(Operation *op) {
  rt::Kernel k = kernelFor(op);
  // The dense gradient of a pack or of an unpacked parameter.
  auto denseTarget = [&](StringRef target) {
    if (auto pack = packIndex.find(target); pack != packIndex.end()) {
      k.attrs["pack"] = pack->second;
      k.outputs = {plan.packs[pack->second].grad};
    } else {
      int32_t p = paramIndex.lookup(target);
      k.attrs["param"] = p;
      k.outputs = {plan.params[p].grad};
    }
  };
  if (auto start = dyn_cast<GradAllReduceStartOp>(op)) {
    denseTarget(start.getTarget());
    k.attrs["offset"] = int64_t(start.getOffset());
    k.attrs["size"] = int64_t(start.getSize());
    return k;
  }
  if (auto wait = dyn_cast<GradAllReduceWaitOp>(op)) {
    denseTarget(wait.getTarget());
    return k;
  }
  if (auto gather = dyn_cast<GatherRowsOp>(op)) {
    if (auto batch = batchIndex.find(gather.getTarget()); batch != batchIndex.end()) {
      const rt::TableBatch &b = plan.tableBatches[batch->second];
      k.attrs["batch"] = batch->second;
      k.outputs = {b.gradRows, b.gradValues};
    } else {
      int32_t t = tableIndex.lookup(gather.getTarget());
      k.attrs["table"] = t;
      k.outputs = {plan.tables[t].gradRows, plan.tables[t].gradValues};
    }
    return k;
  }
  return op->emitOpError("is not a collective");
}
