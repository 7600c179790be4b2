//===- KernelBytes.cpp - the bytes a kernel moves per launch --------------===//
//
// The estimate the compiler writes into each kernel (Kernel::bytes) for the
// report and the runtime's bandwidth figures, declared with the catalogue
// because it depends on each kernel's operands and attributes.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <algorithm>
#include <unordered_set>

namespace embc::runtime {

// KernelCatalogue.h says what counts.
int64_t estimateKernelBytes(const Plan &plan, const Kernel &kernel) {
  // Kernels outside the catalogue are refused when the plan is validated.
  const KernelSpec *spec = findKernel(kernel.op);
  const std::optional<KernelOp> op =
      spec ? std::optional<KernelOp>(spec->op) : std::nullopt;
  int64_t rowsTouched = 0;
  for (int32_t i : kernel.inputs)
    if (plan.buffers[i].dtype == DType::I64 && plan.buffers[i].dynamic)
      rowsTouched += plan.buffers[i].shape[0];
  auto numel = [&](int32_t id) {
    int64_t n = 1;
    for (int64_t d : plan.buffers[id].shape)
      n *= d;
    return n;
  };
  // A table's row: its values (and its row-wise scale and bias).
  auto rowBytes = [&](const Table &t) {
    const Buffer &b = plan.buffers[t.buffer];
    int64_t bytes = b.bytes / std::max<int64_t>(b.shape[0], 1);
    if (t.qparams >= 0)
      bytes += 4;
    return bytes;
  };
  auto tableAt = [&](const nlohmann::json &index) -> const Table * {
    if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
        index.get<size_t>() >= plan.tables.size())
      return nullptr;
    return &plan.tables[index.get<size_t>()];
  };
  int64_t rowsRead = 0;
  if ((op == KernelOp::Lookup || op == KernelOp::Gather) && kernel.attrs.contains("table") &&
      !kernel.inputs.empty())
    if (const Table *t = tableAt(kernel.attrs["table"]))
      rowsRead += numel(kernel.inputs[0]) * rowBytes(*t);
  for (const FusedLookupMember &member : fusedLookupMembers(kernel)) {
    const nlohmann::json &m = kernel.attrs["members"][member.index];
    if (m.contains("table"))
      if (const Table *t = tableAt(m["table"]))
        rowsRead += numel(kernel.inputs[member.ids]) * rowBytes(*t);
  }
  if (op == KernelOp::SkipgramStep && kernel.inputs.size() == 5 &&
      kernel.attrs.contains("center")) {
    // Every example reads and writes its centre, context and negatives rows.
    const int64_t rows = numel(kernel.inputs[0]) + numel(kernel.inputs[2]) +
                         numel(kernel.inputs[4]);
    const Buffer &values = plan.buffers[kernel.outputs.size() > 2 ? kernel.outputs[2] : 0];
    const int64_t rowBytesOfTarget = values.shape.size() == 2 ? values.bytes / values.shape[0] : 0;
    rowsRead += rows * rowBytesOfTarget;
    rowsTouched = rows;
  }
  if (op == KernelOp::EmbeddingUpdate && kernel.attrs.contains("sources")) {
    int64_t distinct = 0;
    size_t in = 0;
    for (const nlohmann::json &s : kernel.attrs["sources"]) {
      if (in < kernel.inputs.size())
        distinct += std::min(numel(kernel.inputs[in]), s.value("rows", int64_t(0)));
      in += s.value("kind", "") == "rows" ? 2 : s.value("weighted", false) ? 4 : 3;
    }
    rowsTouched = distinct;
  }
  int64_t total = rowsRead;
  std::unordered_set<int32_t> seen;
  auto count = [&](int32_t id, int factor) {
    if (!seen.insert(id).second)
      return;
    const Buffer &b = plan.buffers[id];
    bool table = rowsTouched > 0 &&
                 (b.role == BufferRole::Table ||
                  (b.role == BufferRole::OptimizerState && b.shape[0] > rowsTouched));
    // Tables, their state and shared sparse gradients: only the rows this
    // launch's ids reach.
    if (table || (b.dynamic && rowsTouched > 0))
      total += factor * std::min(b.bytes, rowsTouched * (b.bytes / b.shape[0]));
    else
      total += factor * b.bytes;
  };
  for (int32_t i : kernel.inputs)
    count(i, 1);
  for (int32_t o : kernel.outputs) // written; read too when it accumulates or updates
    count(o, plan.buffers[o].role == BufferRole::Activation ? 1 : 2);
  return total;
}

} // namespace embc::runtime
