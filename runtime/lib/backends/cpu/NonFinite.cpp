//===- NonFinite.cpp - the message of an update that wrote NaN or infinity ----===//

#include "NonFinite.h"

#include "CpuBinder.h"

#include <cmath>
#include <sstream>

namespace embc::runtime {

namespace {

/// "name[i] = value" of the first value of `span` that is not finite, or "".
std::string firstBad(const ValueSpan &span) {
  for (int64_t i = 0; i < span.n; ++i)
    if (!std::isfinite(span.values[i])) {
      std::ostringstream o;
      const int64_t at = span.first + i;
      o << span.buffer;
      if (span.width > 1)
        o << "[" << at / span.width << "][" << at % span.width << "]";
      else
        o << "[" << at << "]";
      o << " = " << span.values[i];
      return o.str();
    }
  return "";
}

} // namespace

void throwNonFinite(const ExecState &s, const std::string &op, const std::string &what,
                    const std::vector<ValueSpan> &written, const ValueSpan &gradient,
                    const std::string &otherwise) {
  std::string value;
  for (const ValueSpan &span : written)
    if (value = firstBad(span); !value.empty())
      break;
  std::ostringstream o;
  o << "step " << s.step << ": " << op << " left " << what << " not finite";
  if (!value.empty())
    o << " (" << value << ")";
  else if (!otherwise.empty())
    o << " (" << otherwise << ")";
  o << ". ";
  if (gradient.n > 0) {
    if (const std::string g = firstBad(gradient); !g.empty())
      o << "Its gradient was already not finite (" << g
        << "): the forward or backward pass overflowed. ";
    else
      o << "Its gradient was finite: the optimizer step overflowed. ";
  }
  o << "Training diverged: lower the learning rate or clip gradients "
       "(training.grad_clip_norm)";
  throw NonFiniteError(o.str());
}

std::string tableRow(const Plan &plan, const std::string &name, int64_t row) {
  const std::string plain = "row " + std::to_string(row) + " of table '" + name + "'";
  for (const TableBatch &batch : plan.tableBatches) {
    if (batch.name != name)
      continue;
    for (size_t m = batch.members.size(); m-- > 0;)
      if (m < batch.rowOffsets.size() && batch.rowOffsets[m] <= row &&
          size_t(batch.members[m]) < plan.tables.size())
        return "row " + std::to_string(row - batch.rowOffsets[m]) + " of table '" +
               plan.tables[size_t(batch.members[m])].name + "' (row " + std::to_string(row) +
               " of table batch '" + name + "')";
  }
  return plain;
}

std::vector<ValueSpan> rowSpans(const ExecState &s, const std::vector<int32_t> &buffers,
                                int64_t row, int64_t D) {
  std::vector<ValueSpan> spans;
  if (buffers.empty() || D <= 0)
    return spans;
  const int64_t rows = Binder::numel(s.buffer(buffers[0])) / D;
  for (int32_t id : buffers) {
    const Buffer &b = s.buffer(id);
    const int64_t perRow = rows > 0 ? Binder::numel(b) / rows : 0;
    spans.push_back({b.name, s.data<float>(id) + row * perRow, perRow, row * perRow, perRow});
  }
  return spans;
}

std::vector<ValueSpan> elementSpans(const ExecState &s, const std::vector<int32_t> &buffers,
                                    int64_t index, int64_t rowLength) {
  std::vector<ValueSpan> spans;
  if (buffers.empty())
    return spans;
  const int64_t n = Binder::numel(s.buffer(buffers[0]));
  for (int32_t id : buffers) {
    const Buffer &b = s.buffer(id);
    const int64_t at = Binder::numel(b) == n || rowLength <= 0 ? index : index / rowLength;
    const int64_t width = Binder::numel(b) == n && b.shape.size() >= 2 ? b.shape.back() : 1;
    spans.push_back({b.name, s.data<float>(id) + at, 1, at, width});
  }
  return spans;
}

ValueSpan gradientRow(const ExecState &s, int32_t values, int64_t entry, int64_t D) {
  if (entry < 0)
    return {};
  return {s.buffer(values).name, s.data<float>(values) + entry * D, D, entry * D, D};
}

} // namespace embc::runtime
