//===- PlanBuffers.h - buffers and kernels of hand-built plans --*- C++ -*-===//
//
// Shared by the unit tests that build plans by hand (runtime/plan, exec,
// cpu; compiler/): buffers are laid out one after another at 64-byte
// boundaries, as the compiler's memory planner would without reuse.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_TEST_UNIT_RUNTIME_PLANBUFFERS_H
#define EMBC_TEST_UNIT_RUNTIME_PLANBUFFERS_H

#include "embc/runtime/Plan.h"

#include <string>
#include <utility>
#include <vector>

namespace embc::runtime::testing {

/// Appends a buffer of `shape` x `dtype` at the end of the arena (64-byte
/// aligned) and grows the arena; returns the buffer's index.
inline int32_t addBuffer(Plan &plan, std::string name, BufferRole role, DType dtype,
                         std::vector<int64_t> shape, bool dynamic = false) {
  Buffer buffer;
  buffer.name = std::move(name);
  buffer.role = role;
  buffer.dtype = dtype;
  buffer.shape = std::move(shape);
  buffer.dynamic = dynamic;
  buffer.bytes = dtypeBytes(dtype);
  for (int64_t dim : buffer.shape)
    buffer.bytes *= dim;
  buffer.offset = plan.arenaBytes;
  plan.arenaBytes = (buffer.offset + buffer.bytes + 63) / 64 * 64;
  plan.buffers.push_back(std::move(buffer));
  return static_cast<int32_t>(plan.buffers.size() - 1);
}

/// A kernel of the catalogue's `op` on buffer indices.
inline Kernel makeKernel(const std::string &op, std::vector<int32_t> inputs,
                         std::vector<int32_t> outputs,
                         nlohmann::json attrs = nlohmann::json::object()) {
  Kernel k;
  k.op = op;
  k.inputs = std::move(inputs);
  k.outputs = std::move(outputs);
  k.attrs = std::move(attrs);
  return k;
}

/// A feature's ids (`maxIds`, dynamic) and offsets (`batch` + 1) input
/// buffers, with their plan inputs; returns {ids, offsets}.
inline std::pair<int32_t, int32_t> addIdsInput(Plan &plan, const std::string &feature,
                                               int64_t maxIds, int64_t batch) {
  const int32_t ids =
      addBuffer(plan, feature + ".ids", BufferRole::Input, DType::I64, {maxIds}, true);
  const int32_t offsets =
      addBuffer(plan, feature + ".offsets", BufferRole::Input, DType::I64, {batch + 1});
  Input in;
  in.feature = feature;
  in.role = InputRole::Ids;
  in.buffer = ids;
  plan.inputs.push_back(in);
  in.role = InputRole::Offsets;
  in.buffer = offsets;
  plan.inputs.push_back(in);
  return {ids, offsets};
}

} // namespace embc::runtime::testing

#endif // EMBC_TEST_UNIT_RUNTIME_PLANBUFFERS_H
