//===- CollectiveLowering.cpp - the collectives of a distributed plan ----===//
//
// -emb-distribute's kernels (docs/plan-format.md, "Collectives") become one
// `collective` launch each: the CUDA backend runs it on the job's device
// communicator, in stream order with the kernels (runtime/lib/cuda/
// CudaCollectives.cpp). No device code is generated; the lowering fixes the
// operands, sizes and staging scratch, so the backend checks nothing at
// run time that the compiler knew.
//
//   entry             args                                  params
//   all_reduce_start  [grad]                                offset, count
//   all_reduce_wait   [grad]                                -
//   gather_rows       [rows, values, len(rows),             dim, capacity
//                      len(values), staging]
//   shard_ids         [ids, offsets, len(ids), local ids,   table, rows, bounds,
//                      local offsets, len(local ids)        bags, capacity,
//                      (, weights)(, local weights,         weighted, weights_out,
//                      len(local weights))]                 per_bag_mean
//   shard_pool        [partial rows, pooled]                block, owner
//   shard_pool_grad   [pooled gradient, rows' gradient]     block, owner
//
// `owner` is the single rank storing a table_wise table's rows (-1: several).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

using namespace embc;
using namespace embc::codegen;
namespace rt = embc::runtime;

namespace {

rt::CudaLaunch collective(const char *entry, std::vector<rt::CudaArg> args,
                          nlohmann::json params) {
  return CudaEmitter::namedLaunch("collective", entry, std::move(args), std::move(params));
}

/// The sharded table a shard kernel names.
const rt::Table &shardedTable(const CudaEmitter &em, const rt::Kernel &k) {
  int64_t t = intAttr(k, "table");
  if (t < 0 || t >= int64_t(em.plan().tables.size()))
    throw CodegenError("table index " + std::to_string(t) + " out of range");
  const rt::Table &table = em.plan().tables[size_t(t)];
  if (table.shardRows.size() < 2)
    throw CodegenError("table '" + table.name + "' is not sharded (no shard_rows)");
  return table;
}

/// The f32 dense gradient a start or wait names (its only output).
int32_t denseGradient(CudaEmitter &em, const rt::Kernel &k) {
  expectCounts(k, 0, 1);
  f32Buffer(em, k.outputs[0], "gradient");
  return k.outputs[0];
}

void lowerAllReduceStart(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  int32_t grad = denseGradient(em, k);
  int64_t offset = intAttr(k, "offset"), size = intAttr(k, "size");
  if (offset < 0 || size <= 0 || offset + size > numel(em.buffer(grad)))
    throw CodegenError("slice [" + std::to_string(offset) + ", +" + std::to_string(size) +
                       ") lies outside gradient '" + em.buffer(grad).name + "'");
  out.launches.push_back(collective("all_reduce_start", {CudaEmitter::buf(grad)},
                                    {{"offset", offset}, {"count", size}}));
}

void lowerAllReduceWait(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  int32_t grad = denseGradient(em, k);
  out.launches.push_back(
      collective("all_reduce_wait", {CudaEmitter::buf(grad)}, nlohmann::json::object()));
}

void lowerGatherRows(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 0, 2);
  const rt::Buffer &rows = em.buffer(k.outputs[0]), &values = em.buffer(k.outputs[1]);
  if (rows.dtype != rt::DType::I64 || values.dtype != rt::DType::F32 || !rows.dynamic ||
      !values.dynamic || values.shape.size() != 2 || values.shape[0] != rows.shape[0])
    throw CodegenError("expected the sparse gradient's i64 row ids [C] and f32 rows [C, D] "
                       "(dynamic)");
  int64_t capacity = rows.shape[0], dim = values.shape[1];
  // This rank's rows are copied aside first: the gather writes every rank's
  // rows over them.
  int64_t staging = em.scratch(capacity * 8 + capacity * dim * 4);
  out.launches.push_back(collective(
      "gather_rows",
      {CudaEmitter::buf(k.outputs[0]), CudaEmitter::buf(k.outputs[1]),
       CudaEmitter::lengthOf(k.outputs[0]), CudaEmitter::lengthOf(k.outputs[1]),
       CudaEmitter::scratchAt(staging)},
      {{"dim", dim}, {"capacity", capacity}}));
}

void lowerShardIds(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const rt::Table &t = shardedTable(em, k);
  bool weighted = k.inputs.size() == 3, perBagMean = boolAttr(k, "per_bag_mean");
  bool weightsOut = weighted || perBagMean;
  expectCounts(k, weighted ? 3 : 2, weightsOut ? 3 : 2);
  int64_t bags = numel(em.buffer(k.inputs[1])) - 1;
  int64_t ranks = int64_t(t.shardRows.size()) - 1;
  if (numel(em.buffer(k.outputs[1])) != ranks * bags + 1)
    throw CodegenError("local offsets must hold " + std::to_string(ranks) + " x " +
                       std::to_string(bags) + " + 1 entries");
  for (int32_t id : {k.inputs[0], k.outputs[0]})
    if (!em.buffer(id).dynamic || em.buffer(id).dtype != rt::DType::I64)
      throw CodegenError("ids '" + em.buffer(id).name + "' are not dynamic i64");
  std::vector<rt::CudaArg> args = {
      CudaEmitter::buf(k.inputs[0]),  CudaEmitter::buf(k.inputs[1]),
      CudaEmitter::lengthOf(k.inputs[0]), CudaEmitter::buf(k.outputs[0]),
      CudaEmitter::buf(k.outputs[1]), CudaEmitter::lengthOf(k.outputs[0])};
  if (weighted)
    args.push_back(CudaEmitter::buf(k.inputs[2]));
  if (weightsOut) {
    if (!em.buffer(k.outputs[2]).dynamic)
      throw CodegenError("local weights '" + em.buffer(k.outputs[2]).name + "' are not dynamic");
    args.push_back(CudaEmitter::buf(k.outputs[2]));
    args.push_back(CudaEmitter::lengthOf(k.outputs[2]));
  }
  out.launches.push_back(collective(
      "shard_ids", std::move(args),
      {{"table", t.name},
       {"rows", t.rows},
       {"bounds", t.shardRows},
       {"bags", bags},
       {"capacity", em.buffer(k.outputs[0]).shape[0]},
       {"weighted", weighted},
       {"weights_out", weightsOut},
       {"per_bag_mean", perBagMean}}));
}

template <bool Gradient>
void lowerShardPool(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const rt::Table &t = shardedTable(em, k);
  expectCounts(k, 1, 1);
  int64_t ranks = int64_t(t.shardRows.size()) - 1;
  // pool: N x B rows in, B out; its gradient: B in, N x B out.
  int32_t few = Gradient ? k.inputs[0] : k.outputs[0], many = Gradient ? k.outputs[0] : k.inputs[0];
  const rt::Buffer &fewRows = f32Matrix(em, few, -1, t.dim, "pooled rows");
  int64_t bags = fewRows.shape[0];
  f32Matrix(em, many, ranks * bags, t.dim, "every rank's pooled rows");
  out.launches.push_back(collective(
      Gradient ? "shard_pool_grad" : "shard_pool",
      {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.outputs[0])},
      {{"block", bags * t.dim}, {"owner", em.buffer(t.buffer).rank}}));
}

} // namespace

void codegen::registerCollectiveLowerings(LoweringTable &table) {
  table["grad_all_reduce_start"] = lowerAllReduceStart;
  table["grad_all_reduce_wait"] = lowerAllReduceWait;
  table["gather_rows"] = lowerGatherRows;
  table["shard_ids"] = lowerShardIds;
  table["shard_pool"] = lowerShardPool<false>;
  table["shard_pool_grad"] = lowerShardPool<true>;
}
