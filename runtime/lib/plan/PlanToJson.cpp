//===- PlanToJson.cpp - a Plan as the JSON body of a plan file -------------===//
//
// Mirrors the structs of Plan.h with snake_case keys (docs/plan-format.md).
// nlohmann::json keeps object keys sorted, so dump() of the result is the
// same bytes for the same plan: the file is deterministic without an ordered
// map. Every field is written, defaults included, so the reader can insist
// on all of them and a missing field always means a damaged or foreign body.
//
//===----------------------------------------------------------------------===//

#include "PlanInternal.h"

#include <cmath>
#include <stdexcept>

using namespace embc::runtime;
using namespace embc::runtime::detail;
using nlohmann::json;

namespace {

/// JSON has no NaN or infinity (nlohmann would write `null`, which no reader
/// accepts back), so a non-finite value is a bug in whoever built the plan.
json finite(double value, const std::string &path) {
  if (!std::isfinite(value))
    throw std::invalid_argument(path + ": " + std::to_string(value) +
                                " cannot be stored: a plan holds finite "
                                "numbers only");
  return value;
}

json initializerJson(const Initializer &init, const std::string &path) {
  return {{"kind", enumString(init.kind)},
          {"value", finite(init.value, childPath(path, "value"))},
          {"low", finite(init.low, childPath(path, "low"))},
          {"high", finite(init.high, childPath(path, "high"))},
          {"mean", finite(init.mean, childPath(path, "mean"))},
          {"std", finite(init.std, childPath(path, "std"))},
          {"gain", finite(init.gain, childPath(path, "gain"))}};
}

json optimizerJson(const Optimizer &opt, const std::string &path) {
  return {{"kind", std::string(enumName(opt.kind))},
          {"lr", finite(opt.lr, childPath(path, "lr"))},
          {"momentum", finite(opt.momentum, childPath(path, "momentum"))},
          {"beta1", finite(opt.beta1, childPath(path, "beta1"))},
          {"beta2", finite(opt.beta2, childPath(path, "beta2"))},
          {"eps", finite(opt.eps, childPath(path, "eps"))},
          {"weight_decay", finite(opt.weightDecay, childPath(path, "weight_decay"))},
          {"initial_accumulator",
           finite(opt.initialAccumulator, childPath(path, "initial_accumulator"))},
          {"weight_decay_mode", std::string(enumName(opt.weightDecayMode))}};
}

/// fp16 dynamic loss scaling (-emb-quantize); always written, disabled
/// unless the plan computes in fp16.
json lossScalingJson(const LossScaling &ls) {
  return {{"enabled", ls.enabled},
          {"initial", finite(ls.initial, "config.loss_scaling.initial")},
          {"growth", finite(ls.growth, "config.loss_scaling.growth")},
          {"backoff", finite(ls.backoff, "config.loss_scaling.backoff")},
          {"interval", ls.interval}};
}

json configJson(const TrainingConfig &config) {
  return {{"batch_size", config.batchSize},
          {"grad_accumulation", config.gradAccumulation},
          {"grad_clip_norm", finite(config.gradClipNorm, "config.grad_clip_norm")},
          {"lr_schedule", enumString(config.lrSchedule)},
          {"warmup_steps", config.warmupSteps},
          {"decay_steps", config.decaySteps},
          {"seed", config.seed},
          {"loss", enumString(config.loss)},
          {"precision", enumString(config.precision)},
          {"loss_scaling", lossScalingJson(config.lossScaling)},
          {"micro_batches", config.microBatches},
          {"pipeline_stages", config.pipelineStages},
          {"schedule", enumString(config.schedule)},
          {"data_parallel", config.dataParallel},
          {"stage_ranks", config.stageRanks}};
}

json bufferJson(const Buffer &buffer) {
  return {{"name", buffer.name},
          {"role", roleName(buffer.role)},
          {"dtype", dtypeName(buffer.dtype)},
          {"shape", buffer.shape},
          {"dynamic", buffer.dynamic},
          {"offset", buffer.offset},
          {"bytes", buffer.bytes},
          {"parent", buffer.parent},
          {"slots", buffer.slots},
          {"origin", buffer.origin},
          {"first_use", buffer.firstUse},
          {"last_use", buffer.lastUse},
          {"rank", buffer.rank}};
}

json packJson(const ParamPack &pack, const std::string &path) {
  return {{"name", pack.name},
          {"buffer", pack.buffer},
          {"grad", pack.grad},
          {"state", pack.state},
          {"members", pack.members},
          {"buckets", pack.buckets},
          {"optimizer", optimizerJson(pack.optimizer, childPath(path, "optimizer"))}};
}

/// `placement` is written only when it is not device, so a plan without
/// tiered tables reads as before.
void placementJson(json &out, Placement placement) {
  if (placement != Placement::Device)
    out["placement"] = enumString(placement);
}

json tableBatchJson(const TableBatch &batch, const std::string &path) {
  json out = {{"name", batch.name},
              {"rows", batch.rows},
              {"dim", batch.dim},
              {"buffer", batch.buffer},
              {"grad_rows", batch.gradRows},
              {"grad_values", batch.gradValues},
              {"state", batch.state},
              {"members", batch.members},
              {"row_offsets", batch.rowOffsets},
              {"storage", enumString(batch.storage)},
              {"qparams", batch.qparams},
              {"optimizer", optimizerJson(batch.optimizer, childPath(path, "optimizer"))}};
  placementJson(out, batch.placement);
  return out;
}

json paramJson(const Param &param, const std::string &path) {
  return {{"name", param.name},
          {"buffer", param.buffer},
          {"grad", param.grad},
          {"state", param.state},
          {"init", initializerJson(param.init, childPath(path, "init"))},
          {"optimizer", optimizerJson(param.optimizer, childPath(path, "optimizer"))}};
}

json tableJson(const Table &table, const std::string &path) {
  json out = {{"name", table.name},
              {"rows", table.rows},
              {"dim", table.dim},
              {"buffer", table.buffer},
              {"grad_rows", table.gradRows},
              {"grad_values", table.gradValues},
              {"state", table.state},
              {"storage", enumString(table.storage)},
              {"qparams", table.qparams},
              {"shard_rows", table.shardRows},
              {"init", initializerJson(table.init, childPath(path, "init"))},
              {"optimizer", optimizerJson(table.optimizer, childPath(path, "optimizer"))}};
  placementJson(out, table.placement);
  return out;
}

json inputJson(const Input &input, const std::string &path) {
  return {{"feature", input.feature},
          {"source", input.source},
          {"role", enumString(input.role)},
          {"buffer", input.buffer},
          {"width", input.width},
          {"vocab", input.vocab},
          {"hotness", input.hotness},
          {"label_kind", input.labelKind ? enumString(*input.labelKind) : ""},
          {"power", finite(input.power, childPath(path, "power"))}};
}

json kernelsJson(const std::vector<Kernel> &kernels) {
  json list = json::array();
  for (const Kernel &kernel : kernels)
    list.push_back({{"op", kernel.op},
                    {"inputs", kernel.inputs},
                    {"outputs", kernel.outputs},
                    {"attrs", kernel.attrs},
                    {"bytes", kernel.bytes},
                    {"stage", kernel.stage}});
  return list;
}

json scheduleJson(const std::vector<ScheduleOp> &schedule) {
  json list = json::array();
  for (const ScheduleOp &op : schedule)
    list.push_back({{"kind", op.kind},
                    {"stage", op.stage},
                    {"micro_batch", op.microBatch},
                    {"peer", op.peer},
                    {"buffers", op.buffers}});
  return list;
}

/// Builds a list with the path of each element, for the finite() messages.
template <class T, class F>
json listJson(const std::vector<T> &items, const std::string &path, F toJson) {
  json list = json::array();
  for (size_t i = 0; i < items.size(); ++i)
    list.push_back(toJson(items[i], childPath(path, i)));
  return list;
}

json cudaArgJson(const CudaArg &arg) {
  if (arg.buffer >= 0)
    return {{"buffer", arg.buffer}};
  if (arg.length >= 0)
    return {{"length", arg.length}};
  return {{"scratch", arg.scratch}};
}

json cudaKernelsJson(const std::vector<CudaKernel> &kernels) {
  json list = json::array();
  for (const CudaKernel &kernel : kernels) {
    json launches = json::array();
    for (const CudaLaunch &l : kernel.launches) {
      json args = json::array();
      for (const CudaArg &a : l.args)
        args.push_back(cudaArgJson(a));
      launches.push_back({{"kind", l.kind},
                          {"entry", l.entry},
                          {"args", args},
                          {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
                          {"block", l.block},
                          {"shared", l.shared},
                          {"params", l.params}});
    }
    list.push_back(launches);
  }
  return list;
}

/// Absent when the plan has no CUDA program (embc --target=cpu).
json cudaJson(const CudaProgram &cuda) {
  json out = {{"arch", cuda.arch},
              {"source", cuda.source},
              {"scratch_bytes", cuda.scratchBytes},
              {"errors", cuda.errors},
              {"step", cudaKernelsJson(cuda.step)},
              {"update", cudaKernelsJson(cuda.update)}};
  if (!cuda.nonFiniteErrors.empty())
    out["non_finite_errors"] = cuda.nonFiniteErrors;
  if (!cuda.lengths.empty()) {
    out["length_kernels"] = cuda.lengthKernels;
    json variants = json::array();
    for (const CudaLengthVariant &v : cuda.lengths)
      variants.push_back({{"length", v.length}, {"step", cudaKernelsJson(v.step)}});
    out["lengths"] = variants;
  }
  return out;
}

} // namespace

json embc::runtime::detail::memoryReportJson(const Plan &plan) {
  json byRole = json::object();
  for (BufferRole role : allRoles())
    byRole[roleName(role)] = plan.bytesWithRole(role);
  return {{"arena_bytes", plan.arenaBytes},
          {"by_role", byRole},
          {"strategy", plan.memory.strategy},
          {"peak_bytes", plan.arenaBytes},
          {"lower_bound_bytes", liveLowerBound(plan)}};
}

json embc::runtime::planToJson(const Plan &plan) {
  json buffers = json::array();
  for (const Buffer &buffer : plan.buffers)
    buffers.push_back(bufferJson(buffer));
  json body = {{"format", kPlanFormatName},
          {"version", plan.version},
          {"model", plan.model},
          {"compiler", plan.compiler},
          {"config", configJson(plan.config)},
          {"buffers", buffers},
          {"params", listJson(plan.params, "params", paramJson)},
          {"tables", listJson(plan.tables, "tables", tableJson)},
          {"packs", listJson(plan.packs, "packs", packJson)},
          {"table_batches", listJson(plan.tableBatches, "table_batches", tableBatchJson)},
          {"inputs", listJson(plan.inputs, "inputs", inputJson)},
          {"step", kernelsJson(plan.step)},
          {"update", kernelsJson(plan.update)},
          {"forward_kernels", plan.forwardKernels},
          {"schedule", scheduleJson(plan.schedule)},
          {"loss_buffer", plan.lossBuffer},
          {"prediction_buffer", plan.predictionBuffer},
          {"arena_bytes", plan.arenaBytes},
          {"notes", plan.notes},
          {"memory", memoryReportJson(plan)}};
  if (!plan.overrides.empty())
    body["overrides"] = plan.overrides;
  if (plan.dataSchema) // absent: the model has no data schema
    body["data"] = data::dataSchemaToJson(*plan.dataSchema);
  if (!plan.cuda.source.empty())
    body["cuda"] = cudaJson(plan.cuda);
  return body;
}
