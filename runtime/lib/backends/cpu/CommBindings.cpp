//===- CommBindings.cpp - collective kernels on the CPU backend ------------===//
//
// A data-parallel plan (config.data_parallel N > 1) runs on each of N ranks,
// every rank with its slice of the global batch; these kernels exchange
// gradients through ExecState::comm so that every rank takes the same
// optimizer step:
//
//  - grad_all_reduce_start sums a slice of a dense gradient over the ranks
//    in place without blocking; grad_all_reduce_wait on the same buffer
//    completes every start since the last wait;
//  - gather_rows replaces a sparse gradient (row ids and rows) by every
//    rank's, in rank order: the counts are all-gathered first, then the ids
//    and the rows with allGatherV.
//
// The communicator must have exactly N ranks; anything else is refused with
// the count the plan was compiled for, since a wrong count would silently
// train another model.
//
//===----------------------------------------------------------------------===//

#include "CommBindings.h"

#include <cstring>
#include <string>

using namespace embc::runtime;

namespace {

/// The dense gradient a start or wait names: a pack's or a parameter's.
int32_t denseGradient(const Binder &b) {
  int32_t grad;
  if (b.k.attrs.contains("pack")) {
    int64_t i = b.integer("pack");
    if (i < 0 || i >= int64_t(b.p.packs.size()))
      b.fail("pack index " + std::to_string(i) + " out of range");
    grad = b.p.packs[i].grad;
  } else {
    grad = b.param().grad;
  }
  if (b.k.outputs[0] != grad)
    b.fail("output " + std::to_string(b.k.outputs[0]) +
           " is not the gradient of its pack or param (" + std::to_string(grad) + ")");
  if (b.out(0).dtype != DType::F32)
    b.fail("gradient '" + b.out(0).name + "' is not f32");
  return grad;
}

} // namespace

BoundKernel CommBinder::bindAllReduceStart(const Binder &b) {
  const Kernel &k = b.k;
  const std::string op = k.op;
  b.expectCounts(0, 1);
  int32_t grad = denseGradient(b);
  int64_t offset = b.integer("offset"), size = b.integer("size");
  if (offset < 0 || size <= 0 || offset + size > Binder::numel(b.out(0)))
    b.fail("slice [" + std::to_string(offset) + ", +" + std::to_string(size) +
           ") lies outside gradient '" + b.out(0).name + "' of " +
           std::to_string(Binder::numel(b.out(0))) + " elements");
  std::shared_ptr<Requests> &pending = pending_[grad];
  if (!pending)
    pending = std::make_shared<Requests>();
  return [=, requests = pending](ExecState &s) {
    comm::Communicator &c = jobCommunicator(s, op);
    requests->push_back(c.startAllReduce(s.data<float>(grad) + offset, size_t(size),
                                         comm::DType::F32, comm::ReduceOp::Sum));
  };
}

BoundKernel CommBinder::bindAllReduceWait(const Binder &b) {
  const Kernel &k = b.k;
  const std::string op = k.op;
  b.expectCounts(0, 1);
  int32_t grad = denseGradient(b);
  std::shared_ptr<Requests> &pending = pending_[grad];
  if (!pending)
    pending = std::make_shared<Requests>();
  return [=, requests = pending](ExecState &s) {
    comm::Communicator &c = jobCommunicator(s, op);
    // In start order: every rank waits on the same sequence.
    for (comm::Request request : *requests)
      c.wait(request);
    requests->clear();
  };
}

namespace {

BoundKernel bindGatherRows(const Binder &b) {
  const Kernel &k = b.k;
  const std::string op = k.op;
  b.expectCounts(0, 2);
  int64_t D = b.sparseTarget().dim;
  const Buffer &rowsBuffer = b.out(0), &valuesBuffer = b.out(1);
  if (rowsBuffer.dtype != DType::I64 || valuesBuffer.dtype != DType::F32 ||
      !rowsBuffer.dynamic || !valuesBuffer.dynamic || valuesBuffer.shape.size() != 2 ||
      valuesBuffer.shape[0] != rowsBuffer.shape[0] || valuesBuffer.shape[1] != D)
    b.fail("expected the sparse gradient's i64 row ids [C] and f32 rows [C, " +
           std::to_string(D) + "] (dynamic)");
  int64_t capacity = rowsBuffer.shape[0];
  int32_t rows = k.outputs[0], values = k.outputs[1];
  std::string name = rowsBuffer.name;
  // This rank's rows, copied out: allGatherV does not work in place.
  auto ids = std::make_shared<std::vector<int64_t>>();
  auto local = std::make_shared<std::vector<float>>();
  return [=](ExecState &s) {
    comm::Communicator &c = jobCommunicator(s, op);
    int64_t n = s.length[rows];
    int64_t ranks = c.size();
    std::vector<int64_t> counts(size_t(ranks), 0);
    c.allGather(&n, counts.data(), 1, comm::DType::I64);
    int64_t total = 0;
    for (int64_t count : counts)
      total += count;
    // Every rank sees the same counts, so every rank throws here alike.
    if (total > capacity)
      throw std::runtime_error("sparse gradient '" + name + "': the ranks' " +
                               std::to_string(total) + " rows overflow its capacity of " +
                               std::to_string(capacity));
    ids->assign(s.data<int64_t>(rows), s.data<int64_t>(rows) + n);
    local->assign(s.data<float>(values), s.data<float>(values) + n * D);
    std::vector<size_t> idCounts, valueCounts;
    for (int64_t count : counts) {
      idCounts.push_back(size_t(count));
      valueCounts.push_back(size_t(count * D));
    }
    c.allGatherV(ids->data(), s.data<int64_t>(rows), idCounts, comm::DType::I64);
    c.allGatherV(local->data(), s.data<float>(values), valueCounts, comm::DType::F32);
    s.length[rows] = s.length[values] = total;
  };
}

CommBinder &commOf(const Binder &b) {
  if (!b.comm)
    b.fail("bound without the backend's collective state");
  return *b.comm;
}

} // namespace

std::vector<CpuBinding> embc::runtime::commBindings() {
  std::vector<CpuBinding> out = {
      {KernelOp::GradAllReduceStart,
       [](const Binder &b) { return commOf(b).bindAllReduceStart(b); }},
      {KernelOp::GradAllReduceWait, [](const Binder &b) { return commOf(b).bindAllReduceWait(b); }},
      {KernelOp::GatherRows, bindGatherRows}};
  for (const CpuBinding &shard : shardBindings())
    out.push_back(shard);
  return out;
}
