//===- NonFinite.h - the message of an update that wrote NaN or infinity -*- C++ -*-===//
//
// Every CPU update kernel reports the first value it left not finite
// (cpu::denseUpdate and the others return its index); its binding then
// stops the run with NonFiniteError through throwNonFinite, which names the
// step, the kernel, the tensor, the element and its value, and says whether
// the gradient was already not finite (the forward or backward pass
// overflowed) or the optimizer step itself overflowed.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_BACKENDS_CPU_NONFINITE_H
#define EMBC_RUNTIME_BACKENDS_CPU_NONFINITE_H

#include "embc/runtime/exec/Executor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace embc::runtime {

/// `n` values of a plan buffer starting at its element `first`: a row of a
/// table, of its optimizer state or of a gradient, or one value. With a
/// `width` above 1 messages name an element as [row][column].
struct ValueSpan {
  std::string buffer;
  const float *values = nullptr;
  int64_t n = 0;
  int64_t first = 0;
  int64_t width = 1;
};

/// Throws NonFiniteError: at training step s.step, kernel `op` left `what`
/// ("row 17 of table 'user'") not finite. `written` are the spans it wrote
/// (the first non-finite value among them is named); `gradient`, when the
/// kernel read one (n = 0 otherwise), tells the cause. `otherwise` says
/// what was not finite when no written value is (a quantised row, which is
/// not stored).
[[noreturn]] void throwNonFinite(const ExecState &s, const std::string &op, const std::string &what,
                                 const std::vector<ValueSpan> &written,
                                 const ValueSpan &gradient = {},
                                 const std::string &otherwise = "");

/// "row 17 of table 'user'" for row `row` of the table or table batch
/// `name`; a batch's row is named in its member table too.
std::string tableRow(const Plan &plan, const std::string &name, int64_t row);

/// The spans of row `row` of a table of width D whose values and optimizer
/// state buffers are `buffers` (values first; a state of one value per row,
/// rowwise_adagrad's, when its buffer holds `rows` values).
std::vector<ValueSpan> rowSpans(const ExecState &s, const std::vector<int32_t> &buffers,
                                int64_t row, int64_t D);

/// The spans of element `index` of a dense parameter whose values, state
/// (or gradient) buffers are `buffers` (values first): one value each, a
/// state of one value per row of `rowLength` (rowwise_adagrad's) at
/// index / rowLength.
std::vector<ValueSpan> elementSpans(const ExecState &s, const std::vector<int32_t> &buffers,
                                    int64_t index, int64_t rowLength);

/// Entry `entry` (D values) of a sparse gradient's values buffer; empty
/// when entry < 0.
ValueSpan gradientRow(const ExecState &s, int32_t values, int64_t entry, int64_t D);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_BACKENDS_CPU_NONFINITE_H
