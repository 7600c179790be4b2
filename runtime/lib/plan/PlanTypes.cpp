//===- PlanTypes.cpp - names of dtypes and roles, path helpers -------------===//
//
// The words the plan body uses for DType and BufferRole, in one place so the
// writer, the reader and the messages cannot disagree, plus the small helpers
// every stage of the reader uses to name where a problem is.
//
//===----------------------------------------------------------------------===//

#include "PlanInternal.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

using namespace embc::runtime;

namespace {

/// The plan's spelling of `e` (EMBC_PLAN_ENUM); only a value cast from an
/// out-of-range integer is rejected.
template <class E> const char *checkedName(E e, const char *type) {
  if (static_cast<size_t>(e) >= enumCount<E>())
    throw std::invalid_argument("invalid " + std::string(type) + " value " +
                                std::to_string(static_cast<int>(e)));
  return enumName(e).data(); // the spellings are string literals
}

} // namespace

const char *embc::runtime::dtypeName(DType type) { return checkedName(type, "DType"); }

int64_t embc::runtime::dtypeBytes(DType type) {
  switch (type) {
  case DType::F32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::U8:
    return 1;
  }
  throw std::invalid_argument("invalid DType value " +
                              std::to_string(static_cast<int>(type)));
}

const char *embc::runtime::roleName(BufferRole role) { return checkedName(role, "BufferRole"); }

int64_t Plan::bytesWithRole(BufferRole role) const {
  int64_t total = 0;
  for (const Buffer &buffer : buffers)
    if (buffer.role == role && buffer.parent < 0)
      total += buffer.bytes;
  return total;
}

std::vector<Placement> Plan::bufferPlacements() const {
  std::vector<Placement> placement(buffers.size(), Placement::Device);
  auto mark = [&](int32_t b, Placement p) {
    if (b >= 0 && size_t(b) < buffers.size())
      placement[size_t(b)] = p;
  };
  auto markAll = [&](int32_t buffer, int32_t qparams, const std::vector<int32_t> &state,
                     Placement p) {
    mark(buffer, p);
    mark(qparams, p);
    for (int32_t s : state)
      mark(s, p);
  };
  for (const TableBatch &batch : tableBatches)
    markAll(batch.buffer, batch.qparams, batch.state, batch.placement);
  for (const Table &table : tables)
    markAll(table.buffer, table.qparams, table.state, table.placement);
  // A view lies in its parent's memory.
  for (size_t i = 0; i < buffers.size(); ++i) {
    int32_t parent = buffers[i].parent;
    if (parent >= 0 && size_t(parent) < buffers.size() && buffers[size_t(parent)].parent < 0)
      placement[i] = placement[size_t(parent)];
  }
  return placement;
}

std::vector<int64_t> Plan::liveBytes() const {
  const int64_t positions = int64_t(step.size() + update.size());
  // A difference array over the timeline; sums saturate instead of
  // overflowing (the reader calls this on plans it has not yet trusted).
  std::vector<int64_t> delta(size_t(std::max<int64_t>(positions, 1)) + 1, 0);
  auto add = [](int64_t &to, int64_t value) {
    if (__builtin_add_overflow(to, value, &to))
      to = value > 0 ? INT64_MAX : INT64_MIN;
  };
  for (const Buffer &b : buffers) {
    if (b.parent >= 0 || b.bytes < 0)
      continue;
    int64_t bytes;
    if (__builtin_mul_overflow(b.bytes, std::max<int64_t>(b.slots, 1), &bytes))
      bytes = INT64_MAX;
    bool whole = b.firstUse < 0 || b.lastUse < b.firstUse || b.firstUse >= positions;
    int64_t first = whole ? 0 : b.firstUse;
    int64_t last = whole ? std::max<int64_t>(positions, 1) - 1 : std::min(b.lastUse, positions - 1);
    add(delta[size_t(first)], bytes);
    add(delta[size_t(last + 1)], -bytes);
  }
  std::vector<int64_t> live(delta.size() - 1);
  int64_t sum = 0;
  for (size_t p = 0; p < live.size(); ++p) {
    add(sum, delta[p]);
    live[p] = sum;
  }
  return live;
}

namespace embc::runtime::detail {

int64_t liveLowerBound(const Plan &plan) {
  std::vector<int64_t> live = plan.liveBytes();
  return *std::max_element(live.begin(), live.end());
}

void failAt(const std::string &path, const std::string &what) {
  throw PlanFormatError(path.empty() ? what : path + ": " + what);
}

std::string childPath(const std::string &parent, const std::string &key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string childPath(const std::string &parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::optional<DType> parseDType(const std::string &name) { return parseEnum<DType>(name); }

const std::vector<BufferRole> &allRoles() {
  static const std::vector<BufferRole> roles = {
      BufferRole::Table,      BufferRole::Param,     BufferRole::Grad,
      BufferRole::OptimizerState, BufferRole::Input, BufferRole::Activation,
      BufferRole::Workspace};
  return roles;
}

std::optional<BufferRole> parseRole(const std::string &name) {
  return parseEnum<BufferRole>(name);
}

std::string joinAlternatives(const std::vector<std::string> &words) {
  std::string text;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0)
      text += i + 1 == words.size() ? " or " : ", ";
    text += words[i];
  }
  return text;
}

} // namespace embc::runtime::detail
