//===- PlanNotes.cpp - what each pass did, in the plan's notes ------------===//
//
// The lines `embc --report` prints under the memory report: one per pass
// that changed the plan (its choice, or what it made), then the kernel
// counts. They read the module's attributes and the finished plan.
//
//===----------------------------------------------------------------------===//

#include "Distribute.h"
#include "PlanBuilder.h"
#include "Quantize.h"

#include <map>

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::planbuilder;
namespace rt = embc::runtime;

void PlanBuilder::addNotes(func::FuncOp step) {
  rt::TrainingConfig &config = plan_.config;
  // -emb-auto's explanation of what it chose, first: it shaped the rest.
  if (auto lines = module->getAttrOfType<ArrayAttr>("emb.auto"))
    for (auto line : lines.getAsRange<StringAttr>())
      plan_.notes.push_back(line.str());
  if (!plan_.packs.empty() || !plan_.tableBatches.empty())
    plan_.notes.push_back("-emb-pack-params: " + std::to_string(plan_.packs.size()) +
                         " parameter pack(s), " +
                         std::to_string(plan_.tableBatches.size()) + " table batch(es)");
  if (module->hasAttr(kQuantizedAttrName)) {
    std::map<std::string, int64_t> byStorage;
    for (const rt::Table &t : plan_.tables)
      ++byStorage[rt::enumString(t.storage)]; // words in alphabetical order
    std::string counts;
    for (auto &[storage, n] : byStorage)
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + storage;
    plan_.notes.push_back("-emb-quantize: tables " + counts + " (" +
                         std::to_string(plan_.bytesWithRole(rt::BufferRole::Table)) +
                         " bytes with row-wise scale/bias)");
  }
  if (auto remat = module->getAttrOfType<StringAttr>("emb.remat_note"))
    plan_.notes.push_back("-emb-remat: " + remat.str());
  if (config.jobRanks() == 1) {
    // A sharding asked for on one rank is the whole table: say so rather
    // than drop it silently.
    int64_t asked = 0;
    module.walk([&](TableOp t) { asked += t.getSharding() != Sharding::none; });
    if (asked)
      plan_.notes.push_back("-emb-distribute: one rank: the sharding of " + std::to_string(asked) +
                           " table(s) has no effect (set plan.data_parallel to shard them)");
  }
  if (config.jobRanks() > 1) {
    // What -emb-distribute inserted: the same collectives serve both layouts.
    int64_t allReduces = 0, gathers = 0, sharded = 0, placed = 0;
    module.walk([&](Operation *op) {
      allReduces += isa<GradAllReduceStartOp>(op);
      gathers += isa<GatherRowsOp>(op);
    });
    for (const rt::Table &t : plan_.tables)
      sharded += !t.shardRows.empty();
    for (const rt::Buffer &b : plan_.buffers)
      placed += b.rank >= 0;
    std::string ranks;
    for (int32_t r : config.stageRanks)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    plan_.notes.push_back(
        config.dataParallel > 1
            ? "-emb-distribute: " + std::to_string(config.dataParallel) +
                  " data-parallel ranks of " + std::to_string(config.batchSize) +
                  " examples each; " + std::to_string(allReduces) +
                  " gradient all-reduce bucket(s), " + std::to_string(gathers) +
                  " sparse gradient(s) all-gathered, " + std::to_string(sharded) +
                  " table(s) sharded"
            : "-emb-distribute: " + std::to_string(config.pipelineStages) +
                  " pipeline stages on " + std::to_string(config.pipelineRanks()) +
                  " ranks [" + ranks + "]; " + std::to_string(sharded) +
                  " table(s) on one rank, " + std::to_string(gathers) +
                  " replicated with gathered gradients, " + std::to_string(allReduces) +
                  " dense all-reduce bucket(s); " + std::to_string(placed) +
                  " buffer(s) on one rank only");
  }
  int64_t fused = 0;
  step.walk([&](FusedOp) { ++fused; });
  if (fused)
    plan_.notes.push_back("-emb-fuse: " + std::to_string(fused) +
                         " fused kernels in the step");
  plan_.notes.push_back("step: " + std::to_string(plan_.forwardKernels) + " forward and " +
                       std::to_string(plan_.step.size() - plan_.forwardKernels) +
                       " backward kernels; update: " +
                       std::to_string(plan_.update.size()) + " kernels");
}
