//===- CudaCollectives.cpp - a plan's collectives on a Device ------------===//
//
// See CudaCollectives.h. Each collective does what its CPU binding does
// (runtime/lib/backends/cpu/CommBindings.cpp, ShardBindings.cpp), on device
// addresses: the two backends must train the same model bit for bit on the
// emulation, and within the CUDA backend's tolerance on a GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaCollectives.h"

#include "embc/runtime/plan/KernelCatalogue.h"

#include <cstring>

using namespace embc::runtime;
using namespace embc::runtime::cuda;

namespace {

int64_t paramOf(const CudaLaunch &l, const char *name, const std::string &where) {
  auto it = l.params.find(name);
  if (it == l.params.end() || !it->is_number_integer())
    throw PlanError(where + ": collective '" + l.entry + "' needs integer param '" + name + "'");
  return it->get<int64_t>();
}

std::byte *asBytes(void *p) { return static_cast<std::byte *>(p); }

} // namespace

int32_t CudaCollectives::prepare(const Plan &plan, const CudaLaunch &l, const std::string &where) {
  Prepared p;
  p.args = l.args;
  auto expectArgs = [&](size_t n) {
    if (l.args.size() != n)
      throw PlanError(where + ": collective '" + l.entry + "' takes " + std::to_string(n) +
                      " args, the plan gives " + std::to_string(l.args.size()));
  };
  auto owner = [&] {
    int64_t o = paramOf(l, "owner", where);
    if (o < -1 || o >= plan.config.jobRanks())
      throw PlanError(where + ": owner rank " + std::to_string(o) + " is not a rank of the job");
    return int(o);
  };
  // Besides the all-reduce's two halves, a collective is the plan kernel
  // it runs (its catalogue name).
  const KernelSpec *kernel = findKernel(l.entry);
  auto is = [&](KernelOp op) { return kernel && kernel->op == op; };
  if (l.entry == "all_reduce_start" || l.entry == "all_reduce_wait") {
    expectArgs(1);
    p.group = l.args[0].buffer;
    if (p.group < 0)
      throw PlanError(where + ": collective '" + l.entry + "' needs a gradient buffer");
    p.kind = Kind::AllReduceWait;
    if (l.entry == "all_reduce_start") {
      p.kind = Kind::AllReduceStart;
      p.offset = paramOf(l, "offset", where);
      p.count = paramOf(l, "count", where);
      const Buffer &grad = plan.buffers[size_t(p.group)];
      if (p.offset < 0 || p.count <= 0 || (p.offset + p.count) * 4 > grad.bytes)
        throw PlanError(where + ": slice [" + std::to_string(p.offset) + ", +" +
                        std::to_string(p.count) + ") lies outside gradient '" + grad.name + "'");
    }
  } else if (is(KernelOp::GatherRows)) {
    expectArgs(5);
    p.kind = Kind::GatherRows;
    p.dim = paramOf(l, "dim", where);
    p.capacity = paramOf(l, "capacity", where);
  } else if (is(KernelOp::ShardIds) || is(KernelOp::ShardIdsGroup)) {
    // shard_ids: one member, its params at the top; a group: "members".
    p.kind = Kind::ShardIds;
    bool group = is(KernelOp::ShardIdsGroup);
    std::vector<const nlohmann::json *> members;
    if (!group) {
      members.push_back(&l.params);
    } else {
      auto it = l.params.find("members");
      if (it == l.params.end() || !it->is_array() || it->empty())
        throw PlanError(where + ": collective 'shard_ids_group' needs its 'members'");
      for (const nlohmann::json &m : *it)
        members.push_back(&m);
    }
    std::vector<ShardIdsSpec> specs;
    size_t args = 0;
    for (const nlohmann::json *m : members) {
      CudaLaunch member; // paramOf reads a launch's params
      member.entry = l.entry;
      member.params = *m;
      bool weighted = m->value("weighted", false), weightsOut = m->value("weights_out", false);
      p.weighted.push_back(weighted);
      args += 6 + (weighted ? 1 : 0) + (weightsOut ? 2 : 0);
      ShardIdsSpec spec;
      spec.op = l.entry;
      spec.table = m->value("table", std::string());
      spec.rows = paramOf(member, "rows", where);
      spec.bags = paramOf(member, "bags", where);
      spec.capacity = paramOf(member, "capacity", where);
      spec.perBagMean = m->value("per_bag_mean", false);
      spec.weightsOut = weightsOut;
      if (!m->contains("bounds") || !(*m)["bounds"].is_array())
        throw PlanError(where + ": collective '" + l.entry + "' needs the shard 'bounds'");
      spec.bounds = (*m)["bounds"].get<std::vector<int64_t>>();
      if (int64_t(spec.bounds.size()) != plan.config.jobRanks() + 1)
        throw PlanError(where + ": " + std::to_string(spec.bounds.size()) +
                        " shard bounds for a job of " + std::to_string(plan.config.jobRanks()) +
                        " ranks");
      specs.push_back(std::move(spec));
    }
    expectArgs(args);
    p.exchange = std::make_shared<ShardIdsExchange>(std::move(specs));
  } else if (is(KernelOp::ShardPoolGroup) || is(KernelOp::ShardPoolGradGroup)) {
    p.kind = is(KernelOp::ShardPoolGroup) ? Kind::ShardPoolGroup : Kind::ShardPoolGradGroup;
    auto it = l.params.find("members");
    if (it == l.params.end() || !it->is_array() || it->empty())
      throw PlanError(where + ": collective '" + l.entry + "' needs its 'members'");
    std::vector<PooledMember> members;
    for (const nlohmann::json &m : *it) {
      CudaLaunch member;
      member.entry = l.entry;
      member.params = m;
      int64_t block = paramOf(member, "block", where), o = paramOf(member, "owner", where);
      if (block <= 0 || o < -1 || o >= plan.config.jobRanks())
        throw PlanError(where + ": a member of collective '" + l.entry + "' has block " +
                        std::to_string(block) + " and owner " + std::to_string(o));
      members.push_back({size_t(block), int(o)});
    }
    expectArgs(2 * members.size() + 1);
    p.pooled = std::make_shared<PooledRowsGroup>(std::move(members),
                                                 int(plan.config.jobRanks()));
    int64_t staging = paramOf(l, "staging", where);
    if (staging < int64_t(p.pooled->stagingFloats()) || l.args.back().scratch < 0)
      throw PlanError(where + ": collective '" + l.entry + "' stages " +
                      std::to_string(p.pooled->stagingFloats()) +
                      " floats twice in its last arg (scratch), the plan gives " +
                      std::to_string(staging));
  } else if (is(KernelOp::ShardPool) || is(KernelOp::ShardPoolGrad)) {
    expectArgs(2);
    p.kind = is(KernelOp::ShardPool) ? Kind::ShardPool : Kind::ShardPoolGrad;
    p.block = paramOf(l, "block", where);
    p.owner = owner();
  } else {
    throw PlanError(where + ": unknown collective '" + l.entry + "'");
  }
  prepared_.push_back(std::move(p));
  return int32_t(prepared_.size() - 1);
}

comm::Communicator &CudaCollectives::onDevice(const ExecState &state, const char *op) {
  comm::Communicator &job = jobCommunicator(state, op);
  if (onDevice_) {
    if (onDevice_->size() != job.size())
      throw PlanError(std::string("kernel '") + op + "': the device communicator has " +
                      std::to_string(onDevice_->size()) + " ranks, the job " +
                      std::to_string(job.size()));
    return *onDevice_;
  }
  if (device_.nativeStream())
    throw PlanError(std::string("kernel '") + op +
                    "': collectives on a GPU run over NCCL, and this backend was given no NCCL "
                    "communicator (embrun creates one under mpirun where it was built with NCCL)");
  return job;
}

int64_t CudaCollectives::readCell(void *cell) {
  int64_t value = 0;
  device_.toHost(&value, asBytes(cell), sizeof value);
  return value;
}

void CudaCollectives::writeCell(void *cell, int64_t value) {
  device_.toDevice(asBytes(cell), &value, sizeof value);
}

void CudaCollectives::run(int32_t handle, void *const *args, ExecState &state, const char *op) {
  const Prepared &p = prepared_.at(size_t(handle));
  switch (p.kind) {
  case Kind::AllReduceStart: {
    comm::Communicator &c = onDevice(state, op);
    float *slice = static_cast<float *>(args[0]) + p.offset;
    pending_[p.group].push_back(
        c.startAllReduce(slice, size_t(p.count), comm::DType::F32, comm::ReduceOp::Sum));
    return;
  }
  case Kind::AllReduceWait: {
    comm::Communicator &c = onDevice(state, op);
    // In start order: every rank waits on the same sequence.
    std::vector<comm::Request> &requests = pending_[p.group];
    for (comm::Request request : requests)
      c.wait(request);
    requests.clear();
    return;
  }
  case Kind::GatherRows:
    return gatherRows(p, args, state, op);
  case Kind::ShardIds:
    return shardIds(p, args, state, op);
  case Kind::ShardPool:
  case Kind::ShardPoolGrad:
    return shardPool(p, args, state, op);
  case Kind::ShardPoolGroup:
  case Kind::ShardPoolGradGroup:
    return shardPoolGroup(p, args, state, op);
  }
}

void CudaCollectives::gatherRows(const Prepared &p, void *const *args, ExecState &state,
                                 const char *op) {
  comm::Communicator &job = jobCommunicator(state, op), &c = onDevice(state, op);
  // The counts travel on the host (they are there after the read-back);
  // the rows between device buffers.
  int64_t n = readCell(args[2]);
  std::vector<int64_t> counts(size_t(job.size()), 0);
  job.allGather(&n, counts.data(), 1, comm::DType::I64);
  int64_t total = 0;
  std::vector<size_t> idCounts, valueCounts;
  for (int64_t count : counts) {
    total += count;
    idCounts.push_back(size_t(count));
    valueCounts.push_back(size_t(count * p.dim));
  }
  // Every rank sees the same counts, so every rank throws here alike.
  const Buffer &rows = state.plan->buffers[size_t(p.args[0].buffer)];
  if (total > p.capacity)
    throw std::runtime_error("sparse gradient '" + rows.name + "': the ranks' " +
                             std::to_string(total) + " rows overflow its capacity of " +
                             std::to_string(p.capacity));
  std::byte *stagedIds = asBytes(args[4]), *stagedValues = stagedIds + p.capacity * 8;
  device_.copy(stagedIds, asBytes(args[0]), size_t(n) * 8);
  device_.copy(stagedValues, asBytes(args[1]), size_t(n * p.dim) * 4);
  c.allGatherV(stagedIds, args[0], idCounts, comm::DType::I64);
  c.allGatherV(stagedValues, args[1], valueCounts, comm::DType::F32);
  writeCell(args[2], total);
  writeCell(args[3], total);
  state.length[size_t(p.args[0].buffer)] = state.length[size_t(p.args[1].buffer)] = total;
}

void CudaCollectives::shardIds(const Prepared &p, void *const *args, ExecState &state,
                               const char *op) {
  comm::Communicator &job = jobCommunicator(state, op);
  const std::vector<ShardIdsSpec> &members = p.exchange->members();
  const size_t T = members.size();
  int64_t ranks = int64_t(members.front().bounds.size()) - 1;
  bags_.resize(T);
  std::vector<ShardIdsIn> in(T);
  std::vector<ShardIdsOut> out(T);
  // Args per member: ids, offsets, len(ids), local ids, local offsets,
  // len(local ids) (, weights)(, local weights, len(local weights)).
  std::vector<size_t> first(T);
  for (size_t t = 0, at = 0; t < T; ++t) {
    const ShardIdsSpec &spec = members[t];
    const std::vector<CudaArg> &a = p.args;
    HostBags &h = bags_[t];
    first[t] = at;
    int64_t n = readCell(args[at + 2]);
    if (n < 0 || n > state.plan->buffers[size_t(a[at].buffer)].shape[0])
      throw std::runtime_error(std::string("kernel '") + op + "': " + std::to_string(n) +
                               " ids exceed their buffer");
    h.ids.resize(size_t(n));
    h.offsets.resize(size_t(spec.bags + 1));
    device_.toHost(h.ids.data(), asBytes(args[at]), size_t(n) * 8);
    device_.toHost(h.offsets.data(), asBytes(args[at + 1]), h.offsets.size() * 8);
    at += 6;
    if (p.weighted[t]) {
      h.weights.resize(size_t(n));
      device_.toHost(h.weights.data(), asBytes(args[at++]), size_t(n) * 4);
    }
    at += spec.weightsOut ? 2 : 0;
    h.localIds.resize(size_t(spec.capacity));
    h.localOffsets.resize(size_t(ranks * spec.bags + 1));
    if (spec.weightsOut)
      h.localWeights.resize(size_t(spec.capacity));
    in[t] = {h.ids.data(), n, h.offsets.data(), p.weighted[t] ? h.weights.data() : nullptr};
    out[t] = {h.localIds.data(), h.localOffsets.data(),
              spec.weightsOut ? h.localWeights.data() : nullptr};
  }
  const std::vector<int64_t> &totals = p.exchange->runGroup(job, in, out);
  for (size_t t = 0; t < T; ++t) {
    const ShardIdsSpec &spec = members[t];
    const HostBags &h = bags_[t];
    size_t at = first[t];
    int64_t total = totals[t];
    device_.toDevice(asBytes(args[at + 3]), h.localIds.data(), size_t(total) * 8);
    device_.toDevice(asBytes(args[at + 4]), h.localOffsets.data(), h.localOffsets.size() * 8);
    writeCell(args[at + 5], total);
    state.length[size_t(p.args[at + 3].buffer)] = total;
    if (spec.weightsOut) {
      size_t lw = at + 6 + (p.weighted[t] ? 1 : 0);
      device_.toDevice(asBytes(args[lw]), h.localWeights.data(), size_t(total) * 4);
      writeCell(args[lw + 1], total);
      state.length[size_t(p.args[lw].buffer)] = total;
    }
  }
}

void CudaCollectives::shardPool(const Prepared &p, void *const *args, ExecState &state,
                                const char *op) {
  exchangePooledRows(onDevice(state, op), args[0], args[1], size_t(p.block), p.owner,
                     p.kind == Kind::ShardPoolGrad, [this](void *at, size_t bytes) {
                       device_.zero(asBytes(at), bytes);
                     });
}

void CudaCollectives::shardPoolGroup(const Prepared &p, void *const *args, ExecState &state,
                                     const char *op) {
  const size_t T = p.pooled->members().size();
  std::vector<const float *> in(T);
  std::vector<float *> out(T);
  for (size_t t = 0; t < T; ++t) {
    in[t] = static_cast<const float *>(args[t]);
    out[t] = static_cast<float *>(args[T + t]);
  }
  float *send = static_cast<float *>(args[2 * T]), *recv = send + p.pooled->stagingFloats();
  PooledMemory memory{[this](void *dst, const void *src, size_t bytes) {
                        device_.copy(asBytes(dst), static_cast<const std::byte *>(src), bytes);
                      },
                      [this](void *dst, size_t bytes) { device_.zero(asBytes(dst), bytes); }};
  p.pooled->run(onDevice(state, op), in, out, p.kind == Kind::ShardPoolGradGroup, send, recv,
                memory);
}
