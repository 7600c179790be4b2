//===- OperandChecks.h - the helpers of the plan reader's operand checks ===//
//
// What KernelOperands.cpp and KernelOperandsEmbedding.cpp share: an
// Operands reader that checks one kernel's operands and keeps the first
// problem with its JSON path. Private to the plan library.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_PLAN_OPERANDCHECKS_H
#define EMBC_RUNTIME_PLAN_OPERANDCHECKS_H

#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>

namespace embc::runtime::operands {

inline int64_t numel(const Buffer &b) {
  return std::accumulate(b.shape.begin(), b.shape.end(), int64_t(1), std::multiplies<>());
}

inline std::string shapeText(const Buffer &b) {
  std::string s;
  for (int64_t d : b.shape)
    s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s.empty() ? "a scalar" : s;
}

/// Reads a kernel's operands and remembers the first problem, with its path.
class Operands {
public:
  Operands(const Kernel &k, const Plan &p, std::string_view at) : k(k), p(p), at(at) {}

  const Buffer &in(size_t i) const { return p.buffers[size_t(k.inputs[i])]; }
  const Buffer &out(size_t i) const { return p.buffers[size_t(k.outputs[i])]; }
  bool ok() const { return problem.empty(); }
  std::optional<std::string> result() const {
    return problem.empty() ? std::nullopt : std::optional<std::string>(problem);
  }

  /// Every operand (and, unless `inputsOnly`, every result) is an f32 buffer.
  void allF32(bool inputsOnly = false) {
    for (size_t i = 0; i < k.inputs.size(); ++i)
      f32(in(i), "inputs", i);
    for (size_t i = 0; i < k.outputs.size() && !inputsOnly; ++i)
      f32(out(i), "outputs", i);
  }
  /// Input (or output) `i` is `rows` x `cols` (-1: any); returns its dims.
  std::pair<int64_t, int64_t> matrix(bool input, size_t i, int64_t rows = -1, int64_t cols = -1) {
    const Buffer &b = input ? in(i) : out(i);
    if (!ok())
      return {0, 0};
    if (b.shape.size() != 2)
      fail(input, i, "must be a matrix, got " + shapeText(b));
    else if ((rows >= 0 && b.shape[0] != rows) || (cols >= 0 && b.shape[1] != cols))
      fail(input, i,
           "must be " + (rows >= 0 ? std::to_string(rows) : std::string("any")) + " x " +
               (cols >= 0 ? std::to_string(cols) : std::string("any")) + ", got " + shapeText(b));
    return ok() ? std::pair{b.shape[0], b.shape[1]} : std::pair<int64_t, int64_t>{0, 0};
  }
  /// Input (or output) `i` is read as rows x columns: rank 2 or more, its
  /// rows every dimension but the last (B, or B x L of a sequence), each
  /// `rows` and `cols` when >= 0; returns them.
  std::pair<int64_t, int64_t> rows(bool input, size_t i, int64_t rows = -1, int64_t cols = -1) {
    const Buffer &b = input ? in(i) : out(i);
    if (!ok())
      return {0, 0};
    int64_t r = 1;
    for (size_t d = 0; d + 1 < b.shape.size(); ++d)
      r *= b.shape[d];
    const int64_t c = b.shape.empty() ? 0 : b.shape.back();
    if (b.shape.size() < 2)
      fail(input, i, "must be rows x columns (rank 2 or more), got " + shapeText(b));
    else if ((rows >= 0 && r != rows) || (cols >= 0 && c != cols))
      fail(input, i,
           "must be " + (rows >= 0 ? std::to_string(rows) : std::string("any")) + " rows of " +
               (cols >= 0 ? std::to_string(cols) : std::string("any")) + ", got " + shapeText(b));
    return ok() ? std::pair{r, c} : std::pair<int64_t, int64_t>{0, 0};
  }
  /// Input (or output) `i` holds `n` values.
  void count(bool input, size_t i, int64_t n) {
    const Buffer &b = input ? in(i) : out(i);
    if (ok() && numel(b) != n)
      fail(input, i, "must hold " + std::to_string(n) + " values, got " + shapeText(b));
  }
  /// Input (or output) `i` has exactly `shape`.
  void sameShape(bool input, size_t i, const Buffer &like) {
    const Buffer &b = input ? in(i) : out(i);
    if (ok() && b.shape != like.shape)
      fail(input, i, "must be " + shapeText(like) + " (as '" + like.name + "'), got " +
                         shapeText(b));
  }
  /// Input (or output) `i` holds f32 values.
  void f32(bool input, size_t i) { f32(input ? in(i) : out(i), input ? "inputs" : "outputs", i); }
  /// Input (or output) `i` holds at least `n` values (a dynamic buffer's capacity).
  void atLeast(bool input, size_t i, int64_t n) {
    const Buffer &b = input ? in(i) : out(i);
    if (ok() && numel(b) < n)
      fail(input, i, "must hold at least " + std::to_string(n) + " values, got " + shapeText(b));
  }
  /// Input (or output) `i` is a vector (ids, offsets, rows).
  void vector(bool input, size_t i) {
    const Buffer &b = input ? in(i) : out(i);
    if (ok() && b.shape.size() != 1)
      fail(input, i, "must be a vector, got " + shapeText(b));
  }
  /// Input (or output) `i` holds i64 values (ids, offsets, rows).
  void i64(bool input, size_t i) {
    const Buffer &b = input ? in(i) : out(i);
    if (ok() && b.dtype != DType::I64)
      fail(input, i, "must be i64, got " + std::string(dtypeName(b.dtype)));
  }
  /// Input (or output) `i` is the plan's buffer `buffer` (`what` names it).
  void is(bool input, size_t i, int32_t buffer, const std::string &what) {
    if (!ok() || i >= (input ? k.inputs.size() : k.outputs.size()))
      return;
    const int32_t got = input ? k.inputs[i] : k.outputs[i];
    if (got != buffer)
      fail(input, i, "must be " + what + " (buffer " + std::to_string(buffer) + "), got buffer " +
                         std::to_string(got));
  }
  /// The outputs from `first` on are `values` then `state`, one result each.
  void writes(int32_t values, const std::vector<int32_t> &state, const std::string &owner,
              size_t first = 0) {
    if (ok() && k.outputs.size() != first + 1 + state.size())
      problem = std::string(at) + ".outputs: the '" + k.op + "' kernel of " + owner + " writes " +
                std::to_string(first + 1 + state.size()) +
                " buffers (its values and optimizer state), got " +
                std::to_string(k.outputs.size());
    is(false, first, values, "the values of " + owner);
    for (size_t j = 0; j < state.size(); ++j)
      is(false, first + 1 + j, state[j], "state " + std::to_string(j) + " of " + owner);
  }
  /// The outputs are the sparse gradient (rows, values) of `owner`.
  template <class Target> void sparseGradient(const Target &target, const std::string &owner) {
    is(false, 0, target.gradRows, "the gradient rows of " + owner);
    is(false, 1, target.gradValues, "the gradient values of " + owner);
    i64(false, 0);
    f32(false, 1);
    matrix(false, 1, -1, target.dim);
    if (ok())
      count(false, 0, out(1).shape[0]);
  }
  /// Input (or output) `i` is a B x L x D sequence of f32 (D: `width`
  /// when >= 0); returns {B, L, D}.
  std::array<int64_t, 3> sequence(bool input, size_t i, int64_t width = -1) {
    const Buffer &b = input ? in(i) : out(i);
    f32(input, i);
    if (!ok())
      return {0, 0, 0};
    if (b.shape.size() != 3 || (width >= 0 && b.shape[2] != width))
      fail(input, i, "must be B x L x " + (width >= 0 ? std::to_string(width) : std::string("D")) +
                         ", got " + shapeText(b));
    return ok() ? std::array<int64_t, 3>{b.shape[0], b.shape[1], b.shape[2]}
                : std::array<int64_t, 3>{0, 0, 0};
  }
  /// Input (or output) `i` is an f32 table of at least `positions` rows of
  /// `width`: one row per position of a sequence.
  void positionTable(bool input, size_t i, int64_t positions, int64_t width) {
    f32(input, i);
    const auto [rows, cols] = matrix(input, i, -1, width);
    (void)cols;
    if (ok() && rows < positions)
      fail(input, i, "must hold a row for each of the " + std::to_string(positions) +
                         " positions, got " + shapeText(input ? in(i) : out(i)));
  }
  /// Jagged bags: ids (input `ids`, i64 vector), offsets (B + 1 i64), and
  /// when `weights` >= 0 one f32 weight per id.
  void bags(size_t ids, size_t offsets, int64_t B, int weights = -1) {
    i64(true, ids);
    vector(true, ids);
    i64(true, offsets);
    count(true, offsets, B + 1);
    if (weights >= 0) {
      f32(true, size_t(weights));
      count(true, size_t(weights), numel(in(ids)));
    }
  }
  /// update_param / update_packed of `target` (a Param or a ParamPack):
  /// its gradient and optional clip scale in, its values and state out.
  template <class Target> void denseUpdate(const Target &target, const std::string &owner) {
    writes(target.buffer, target.state, owner);
    is(true, 0, target.grad, "the gradient of " + owner);
    clipScale(1);
  }
  /// Input `i`, when there, is the one-value clip scale.
  void clipScale(size_t i) {
    if (k.inputs.size() > i) {
      f32(in(i), "inputs", i);
      count(true, i, 1);
    }
  }
  /// A problem of the kernel as a whole, at its field `field`.
  void failAt(const std::string &field, const std::string &why) {
    if (problem.empty())
      problem = std::string(at) + "." + field + ": the '" + k.op + "' kernel " + why;
  }
  /// [offset, offset + rows) lies within the `total` rows (or elements) of `owner`.
  void rowRange(const std::string &field, int64_t offset, int64_t rows, int64_t total,
                const std::string &owner) {
    if (offset < 0 || rows < 0 || offset > total || rows > total - offset)
      failAt(field, "covers [" + std::to_string(offset) + ", " + std::to_string(offset + rows) +
                        ") of " + owner + ", which has " + std::to_string(total));
  }
  void fail(bool input, size_t i, const std::string &why) {
    if (problem.empty())
      problem = std::string(at) + "." + (input ? "inputs" : "outputs") + "[" + std::to_string(i) +
                "]: buffer '" + (input ? in(i) : out(i)).name + "' of the '" + k.op + "' kernel " +
                why;
  }

private:
  void f32(const Buffer &b, const char *what, size_t i) {
    if (ok() && b.dtype != DType::F32)
      problem = std::string(at) + "." + what + "[" + std::to_string(i) + "]: buffer '" + b.name +
                "' of the '" + k.op + "' kernel must be f32, got " + std::string(dtypeName(b.dtype));
  }

  const Kernel &k;
  const Plan &p;
  std::string_view at;
  std::string problem;
};

/// Columns of an interaction of `features` inputs: pairs i < j (i <= j
/// with `self`).
inline int64_t interactionPairs(int64_t features, bool self) {
  return self ? features * (features + 1) / 2 : features * (features - 1) / 2;
}

/// The checks of the embedding, sparse-gradient, update and collective
/// kernels (KernelOperandsEmbedding.cpp); false when `op` is none of them.
bool checkEmbeddingOperands(KernelOp op, Operands &o, const Kernel &kernel, const Plan &plan);
/// The checks of the sharding exchanges (KernelOperandsShard.cpp); false
/// when `op` is none of them.
bool checkShardOperands(KernelOp op, Operands &o, const Kernel &kernel, const Plan &plan);

} // namespace embc::runtime::operands

#endif // EMBC_RUNTIME_PLAN_OPERANDCHECKS_H
