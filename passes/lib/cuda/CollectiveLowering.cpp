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
//   shard_ids_group   shard_ids' args of each member,       members: shard_ids'
//                     one member after another              params of each
//   shard_pool_group  [partials..., pooled..., staging]     members: {block,
//   shard_pool_grad_  [gradients..., rows' gradients...,    owner} each;
//     group            staging]                             staging (floats)
//
// `owner` is the single rank storing a table_wise table's rows (-1: several).
// A group whose args exceed EMB_MAX_ARGS becomes several launches.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "embc/runtime/ShardGroupAttrs.h"
#include "embc/runtime/cuda/KernelAbi.h"

using namespace embc;
using namespace embc::codegen;

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
      k.op.c_str(),
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
      k.op.c_str(), std::move(args),
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
      k.op.c_str(),
      {CudaEmitter::buf(k.inputs[0]), CudaEmitter::buf(k.outputs[0])},
      {{"block", bags * t.dim}, {"owner", em.buffer(t.buffer).rank}}));
}

/// A group kernel's attributes (-emb-batch-exchanges), or a codegen error.
rt::ShardGroupAttrs groupAttrs(const CudaEmitter &em, const rt::Kernel &k) {
  try {
    return rt::readShardGroupAttrs(em.plan(), k);
  } catch (const std::invalid_argument &e) {
    throw CodegenError(e.what());
  }
}

/// A launch takes at most EMB_MAX_ARGS args: a group too large for one is
/// split into consecutive launches of whole members (each its own set of
/// collectives; every rank runs the same launches in the same order).
template <typename AddMember>
void chunkedLaunches(rt::CudaKernel &out, const char *entry, size_t members,
                     size_t argsPerMemberMax, size_t fixedArgs, AddMember add) {
  size_t perLaunch = std::max<size_t>(1, (EMB_MAX_ARGS - fixedArgs) / argsPerMemberMax);
  for (size_t first = 0; first < members; first += perLaunch) {
    size_t last = std::min(members, first + perLaunch);
    std::vector<rt::CudaArg> args;
    nlohmann::json params = nlohmann::json::object();
    params["members"] = nlohmann::json::array();
    add(first, last, args, params);
    out.launches.push_back(collective(entry, std::move(args), std::move(params)));
  }
}

/// shard_ids_group: per member the args and params of shard_ids, members
/// one after another ("members": their params).
void lowerShardIdsGroup(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  rt::ShardGroupAttrs a = groupAttrs(em, k);
  const std::vector<const rt::Table *> &tables = a.tables;
  const size_t T = tables.size();
  expectCounts(k, 2 * T + a.weights(), 2 * T + a.localWeights());
  struct Member {
    std::vector<rt::CudaArg> args;
    nlohmann::json params;
  };
  std::vector<Member> members;
  size_t w = 2 * T, lw = 2 * T;
  for (size_t t = 0; t < T; ++t) {
    const rt::Table &table = *tables[t];
    int32_t ids = k.inputs[t], offsets = k.inputs[T + t];
    int32_t localIds = k.outputs[t], localOffsets = k.outputs[T + t];
    bool weightsOut = a.weightsOut(t);
    int64_t bags = numel(em.buffer(offsets)) - 1;
    int64_t ranks = int64_t(table.shardRows.size()) - 1;
    if (numel(em.buffer(localOffsets)) != ranks * bags + 1)
      throw CodegenError("local offsets of table '" + table.name + "' must hold " +
                         std::to_string(ranks) + " x " + std::to_string(bags) + " + 1 entries");
    for (int32_t id : {ids, localIds})
      if (!em.buffer(id).dynamic || em.buffer(id).dtype != rt::DType::I64)
        throw CodegenError("ids '" + em.buffer(id).name + "' are not dynamic i64");
    Member m;
    m.args = {CudaEmitter::buf(ids),      CudaEmitter::buf(offsets),
              CudaEmitter::lengthOf(ids), CudaEmitter::buf(localIds),
              CudaEmitter::buf(localOffsets), CudaEmitter::lengthOf(localIds)};
    if (a.weighted[t])
      m.args.push_back(CudaEmitter::buf(k.inputs[w++]));
    if (weightsOut) {
      int32_t lwBuffer = k.outputs[lw++];
      if (!em.buffer(lwBuffer).dynamic)
        throw CodegenError("local weights '" + em.buffer(lwBuffer).name + "' are not dynamic");
      m.args.push_back(CudaEmitter::buf(lwBuffer));
      m.args.push_back(CudaEmitter::lengthOf(lwBuffer));
    }
    m.params = {{"table", table.name},
                {"rows", table.rows},
                {"bounds", table.shardRows},
                {"bags", bags},
                {"capacity", em.buffer(localIds).shape[0]},
                {"weighted", bool(a.weighted[t])},
                {"weights_out", weightsOut},
                {"per_bag_mean", bool(a.perBagMean[t])}};
    members.push_back(std::move(m));
  }
  chunkedLaunches(out, k.op.c_str(), T, 9, 0,
                  [&](size_t first, size_t last, std::vector<rt::CudaArg> &args,
                      nlohmann::json &params) {
                    for (size_t t = first; t < last; ++t) {
                      args.insert(args.end(), members[t].args.begin(), members[t].args.end());
                      params["members"].push_back(members[t].params);
                    }
                  });
}

/// shard_pool_group / shard_pool_grad_group: args [in..., out..., staging]
/// ("members": each one's block and owner, "staging": floats in each of the
/// two staging halves of the scratch).
template <bool Gradient>
void lowerShardPoolGroup(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  rt::ShardGroupAttrs a = groupAttrs(em, k);
  const std::vector<const rt::Table *> &tables = a.tables;
  const size_t T = tables.size();
  expectCounts(k, T, T);
  const int64_t ranks = a.ranks();
  std::vector<nlohmann::json> members;
  for (size_t t = 0; t < T; ++t) {
    const rt::Table &table = *tables[t];
    int32_t few = Gradient ? k.inputs[t] : k.outputs[t], many = Gradient ? k.outputs[t] : k.inputs[t];
    int64_t bags = f32Matrix(em, few, -1, table.dim, "pooled rows").shape[0];
    f32Matrix(em, many, ranks * bags, table.dim, "every rank's pooled rows");
    members.push_back({{"block", bags * table.dim}, {"owner", em.buffer(table.buffer).rank}});
  }
  chunkedLaunches(
      out, k.op.c_str(), T, 2, 1,
      [&](size_t first, size_t last, std::vector<rt::CudaArg> &args, nlohmann::json &params) {
        // Each kind with two or more members is packed: at most N blocks of
        // its members (the runtime checks this against its own count).
        int64_t rowWise = 0, tableWise = 0, rowMembers = 0, tableMembers = 0;
        for (size_t t = first; t < last; ++t) {
          args.push_back(CudaEmitter::buf(k.inputs[t]));
          params["members"].push_back(members[t]);
          bool row = members[t]["owner"].get<int64_t>() < 0;
          (row ? rowWise : tableWise) += members[t]["block"].get<int64_t>();
          ++(row ? rowMembers : tableMembers);
        }
        for (size_t t = first; t < last; ++t)
          args.push_back(CudaEmitter::buf(k.outputs[t]));
        int64_t staging = ranks * std::max(rowMembers > 1 ? rowWise : 0,
                                           tableMembers > 1 ? tableWise : 0);
        params["staging"] = staging;
        args.push_back(CudaEmitter::scratchAt(em.scratch(int64_t(2 * staging * 4))));
      });
}

} // namespace

EMBC_CUDA_LOWERING(ShardIdsGroup, lowerShardIdsGroup)
EMBC_CUDA_LOWERING(ShardPoolGroup, lowerShardPoolGroup<false>)
EMBC_CUDA_LOWERING(ShardPoolGradGroup, lowerShardPoolGroup<true>)
EMBC_CUDA_LOWERING(GradAllReduceStart, lowerAllReduceStart)
EMBC_CUDA_LOWERING(GradAllReduceWait, lowerAllReduceWait)
EMBC_CUDA_LOWERING(GatherRows, lowerGatherRows)
EMBC_CUDA_LOWERING(ShardIds, lowerShardIds)
EMBC_CUDA_LOWERING(ShardPool, lowerShardPool<false>)
EMBC_CUDA_LOWERING(ShardPoolGrad, lowerShardPool<true>)
