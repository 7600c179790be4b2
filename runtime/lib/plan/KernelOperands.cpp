//===- KernelOperands.cpp - the operands' dtypes and shapes of each kernel ===//
//
// The catalogue (KernelCatalogue.def) says how many operands a kernel takes;
// this says what they must be, for the kernels whose backends derive loop
// bounds from one operand's shape and then index the others with them (the
// dense family, activations, concat and slice, dot, losses, layer norm,
// gradient accumulation, table lookups) or that write a parameter, a table
// and their optimizer state (the updates: their operands must be those very
// buffers). A plan that breaks these is refused when it is
// read, with the JSON path of the operand, instead of reading or writing
// past a buffer at run time: a valid checksum says the file is the one
// written, not that its writer was right.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <numeric>
#include <string>

namespace embc::runtime {
namespace {

int64_t numel(const Buffer &b) {
  return std::accumulate(b.shape.begin(), b.shape.end(), int64_t(1), std::multiplies<>());
}

std::string shapeText(const Buffer &b) {
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
int64_t interactionPairs(int64_t features, bool self) {
  return self ? features * (features + 1) / 2 : features * (features - 1) / 2;
}

} // namespace

std::optional<std::string> checkKernelOperands(KernelOp op, const Kernel &kernel, const Plan &plan,
                                               std::string_view at) {
  Operands o(kernel, plan, at);
  const size_t ins = kernel.inputs.size();
  switch (op) {
  case KernelOp::Dense: { // x (B x K), w (K x N), [b (N)] -> B x N
    o.allF32();
    auto [B, K] = o.matrix(true, 0);
    auto [K2, N] = o.matrix(true, 1, K);
    (void)K2;
    if (ins == 3)
      o.count(true, 2, N);
    o.matrix(false, 0, B, N);
    break;
  }
  case KernelOp::DenseGradInput: { // dy (B x N), w (K x N) -> B x K
    o.allF32();
    auto [B, N] = o.matrix(true, 0);
    auto [K, N2] = o.matrix(true, 1, -1, N);
    (void)N2;
    o.matrix(false, 0, B, K);
    break;
  }
  case KernelOp::DenseGradWeight: { // x (B x K), dy (B x N) -> K x N
    o.allF32();
    auto [B, K] = o.matrix(true, 0);
    auto [B2, N] = o.matrix(true, 1, B);
    (void)B2;
    o.matrix(false, 0, K, N);
    break;
  }
  case KernelOp::BiasGrad: { // dy (B x N) -> N
    o.allF32();
    auto [B, N] = o.matrix(true, 0);
    (void)B;
    o.count(false, 0, N);
    break;
  }
  case KernelOp::Activation: // elementwise
    o.allF32();
    o.count(false, 0, numel(o.in(0)));
    break;
  case KernelOp::ActivationGrad:
    o.allF32();
    o.count(true, 1, numel(o.in(0)));
    o.count(false, 0, numel(o.in(0)));
    break;
  case KernelOp::Concat: { // x_i (B x w_i) -> B x sum(w_i)
    o.allF32();
    auto [B, W] = o.matrix(false, 0);
    int64_t width = 0;
    for (size_t i = 0; i < ins && o.ok(); ++i)
      width += o.matrix(true, i, B).second;
    if (o.ok() && width != W)
      o.fail(false, 0, "must be " + std::to_string(width) + " columns wide (the inputs' sum)");
    break;
  }
  case KernelOp::Slice: { // x (B x N) -> B x width, columns [offset, offset + width)
    o.allF32();
    auto [B, N] = o.matrix(true, 0);
    auto [B2, width] = o.matrix(false, 0, B);
    (void)B2;
    const int64_t offset = kernel.attrs.value("offset", int64_t(0));
    if (o.ok() && offset + width > N)
      o.fail(false, 0, "takes columns [" + std::to_string(offset) + ", " +
                           std::to_string(offset + width) + ") of " + std::to_string(N));
    break;
  }
  case KernelOp::Dot: { // lhs (B x D), rhs (B x D or B x K x D) -> B or B x K values
    o.allF32();
    auto [B, D] = o.matrix(true, 0);
    const Buffer &rhs = o.in(1);
    const bool candidates = rhs.shape.size() == 3;
    if (o.ok() && !(rhs.shape == o.in(0).shape ||
                    (candidates && rhs.shape[0] == B && rhs.shape[2] == D)))
      o.fail(true, 1, "must be " + std::to_string(B) + " x " + std::to_string(D) + " or " +
                          std::to_string(B) + " x K x " + std::to_string(D) + ", got " +
                          shapeText(rhs));
    o.count(false, 0, candidates ? B * rhs.shape[1] : B);
    break;
  }
  case KernelOp::DotGrad: { // dy, lhs, rhs -> d lhs, d rhs
    o.allF32();
    auto [B, D] = o.matrix(true, 1);
    (void)D;
    const Buffer &rhs = o.in(2);
    o.count(true, 0, rhs.shape.size() == 3 ? B * rhs.shape[1] : B);
    o.sameShape(false, 0, o.in(1));
    o.sameShape(false, 1, rhs);
    break;
  }
  case KernelOp::Loss: // input, target (B rows each) -> a scalar (f32 or f64)
    o.allF32(/*inputsOnly=*/true);
    if (o.in(0).shape.empty() || o.in(1).shape.empty() ||
        o.in(0).shape[0] != o.in(1).shape[0])
      o.fail(true, 1, "must have as many rows as the input (" + shapeText(o.in(0)) + "), got " +
                          shapeText(o.in(1)));
    o.count(false, 0, 1);
    break;
  case KernelOp::LossGrad: // input, target -> d input, [d target]
    o.allF32();
    o.sameShape(false, 0, o.in(0));
    if (kernel.outputs.size() == 2)
      o.sameShape(false, 1, o.in(1));
    break;
  case KernelOp::LayerNorm: { // x (rows x D), gamma (D), beta (D) -> like x
    o.allF32();
    const int64_t D = o.in(0).shape.empty() ? 0 : o.in(0).shape.back();
    o.count(true, 1, D);
    o.count(true, 2, D);
    o.sameShape(false, 0, o.in(0));
    break;
  }
  case KernelOp::LayerNormGrad: { // dy, x, gamma -> dx, dgamma, dbeta
    o.allF32();
    const int64_t D = o.in(1).shape.empty() ? 0 : o.in(1).shape.back();
    o.sameShape(true, 0, o.in(1));
    o.count(true, 2, D);
    o.sameShape(false, 0, o.in(1));
    o.count(false, 1, D);
    o.count(false, 2, D);
    break;
  }
  case KernelOp::AccumulateGrad: // g -> the param's grad, same size
    o.allF32();
    o.count(true, 0, numel(o.out(0)));
    break;
  case KernelOp::Lookup: { // ids (n), offsets (B + 1), [weights (n)] -> B x D
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.i64(true, 0);
    o.i64(true, 1);
    auto [B, D] = o.matrix(false, 0, -1, t.dim);
    (void)D;
    o.count(true, 1, B + 1);
    if (ins == 3)
      o.count(true, 2, numel(o.in(0)));
    break;
  }
  case KernelOp::Gather: { // ids (n) -> n x D
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.i64(true, 0);
    o.count(false, 0, numel(o.in(0)) * t.dim);
    break;
  }
  // The dense updates: grad, [scale] -> values, state... of a parameter or pack.
  case KernelOp::UpdateParam: {
    const Param &param = plan.params[size_t(kernel.attrs.at("param").get<int64_t>())];
    o.denseUpdate(param, "parameter '" + param.name + "'");
    break;
  }
  case KernelOp::UpdatePacked: {
    const ParamPack &pack = plan.packs[size_t(kernel.attrs.at("pack").get<int64_t>())];
    o.denseUpdate(pack, "pack '" + pack.name + "'");
    break;
  }
  case KernelOp::UpdateTable: { // rows (n), values (n x D), [scale] -> values, state...
    // A lone table and a table batch name these the same.
    auto check = [&](const auto &target, const char *kind) {
      o.writes(target.buffer, target.state, std::string(kind) + " '" + target.name + "'");
      o.i64(true, 0);
      if (o.ok() && o.in(0).shape.size() != 1)
        o.fail(true, 0, "must be a vector of rows, got " + shapeText(o.in(0)));
      if (o.ok())
        o.count(true, 1, numel(o.in(0)) * target.dim);
      o.clipScale(2);
    };
    if (kernel.attrs.contains("batch"))
      check(plan.tableBatches[size_t(kernel.attrs.at("batch").get<int64_t>())], "table batch");
    else
      check(plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())], "table");
    break;
  }
  case KernelOp::Hash: // raw ids -> hashed ids, as many
    o.i64(true, 0);
    o.i64(false, 0);
    o.atLeast(false, 0, numel(o.in(0)));
    break;
  case KernelOp::Add: { // x_i (B x N), [bias (N), last] -> B x N
    o.allF32();
    const bool bias = kernel.attrs.value("bias", false);
    auto [B, N] = o.matrix(false, 0);
    if (bias && ins < 2)
      o.fail(true, 0, "is alone, but the kernel adds a bias after its inputs");
    for (size_t i = 0; i + (bias ? 1 : 0) < ins; ++i)
      o.count(true, i, B * N);
    if (bias && ins >= 2)
      o.count(true, ins - 1, N);
    break;
  }
  case KernelOp::Interaction: { // x_i (B x D) -> B x P
    o.allF32();
    auto [B, D] = o.matrix(true, 0);
    for (size_t i = 1; i < ins; ++i)
      o.matrix(true, i, B, D);
    o.count(false, 0, B * interactionPairs(int64_t(ins), kernel.attrs.value("self", false)));
    break;
  }
  case KernelOp::InteractionGrad: { // dy (B x P), x_i (B x D) -> dx_i like x_i
    o.allF32();
    const int64_t F = int64_t(ins) - 1;
    if (o.ok() && kernel.outputs.size() != size_t(F))
      o.fail(false, 0, "is one of " + std::to_string(kernel.outputs.size()) +
                           " gradients for " + std::to_string(F) + " inputs");
    auto [B, D] = o.matrix(true, 1);
    for (size_t i = 2; i < ins; ++i)
      o.matrix(true, i, B, D);
    o.count(true, 0, B * interactionPairs(F, kernel.attrs.value("self", false)));
    for (size_t i = 0; o.ok() && i < kernel.outputs.size(); ++i)
      o.sameShape(false, i, o.in(1 + i));
    break;
  }
  case KernelOp::Cross: { // x0, xl (B x D), w (D x D), b (D) -> B x D, [xl w: B x D]
    o.allF32();
    auto [B, D] = o.matrix(true, 0);
    o.matrix(true, 1, B, D);
    o.matrix(true, 2, D, D);
    o.count(true, 3, D);
    for (size_t i = 0; i < kernel.outputs.size(); ++i)
      o.count(false, i, B * D);
    break;
  }
  case KernelOp::CrossGrad: { // dy, x0, xl, w, b, [xl w] -> dx0, dxl, dw, db
    o.allF32();
    auto [B, D] = o.matrix(true, 1);
    o.count(true, 0, B * D);
    o.matrix(true, 2, B, D);
    o.matrix(true, 3, D, D);
    o.count(true, 4, D);
    if (ins == 6)
      o.count(true, 5, B * D);
    o.count(false, 0, B * D);
    o.count(false, 1, B * D);
    o.count(false, 2, D * D);
    o.count(false, 3, D);
    break;
  }
  case KernelOp::LookupGrad: { // ids, offsets, [weights], dy (B x D) -> per-id rows
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.f32(true, ins - 1);
    auto [B, D] = o.matrix(true, ins - 1, -1, t.dim);
    (void)D;
    o.bags(0, 1, B, ins == 4 ? 2 : -1);
    o.f32(false, 0);
    o.matrix(false, 0, -1, t.dim);
    if (o.ok() && o.out(0).shape[0] < numel(o.in(0)))
      o.fail(false, 0, "must hold a row for each of the " + std::to_string(numel(o.in(0))) +
                           " ids, got " + shapeText(o.out(0)));
    break;
  }
  case KernelOp::AccumulateRows: { // ids, per-id rows -> the gradient's rows and values
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    o.sparseGradient(t, "table '" + t.name + "'");
    o.i64(true, 0); // a vector of ids, or B x K negatives
    o.f32(true, 1); // the ids' shape x D
    if (o.ok() && (o.in(1).shape.empty() || o.in(1).shape.back() != t.dim ||
                   numel(o.in(1)) < numel(o.in(0)) * t.dim))
      o.fail(true, 1, "must hold a row of " + std::to_string(t.dim) + " for each of the " +
                          std::to_string(numel(o.in(0))) + " ids, got " + shapeText(o.in(1)));
    break;
  }
  case KernelOp::CoalesceRows:
  case KernelOp::GatherRows:
    if (kernel.attrs.contains("batch")) {
      const TableBatch &batch = plan.tableBatches[size_t(kernel.attrs.at("batch").get<int64_t>())];
      o.sparseGradient(batch, "table batch '" + batch.name + "'");
    } else {
      const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
      o.sparseGradient(t, "table '" + t.name + "'");
    }
    break;
  case KernelOp::ClipGradNorm: // gradients (f32, a dynamic one with rows) -> the scale
    o.allF32();
    for (size_t i = 0; i < ins && o.ok(); ++i)
      if (o.in(i).dynamic && (o.in(i).shape.empty() || o.in(i).shape[0] <= 0))
        o.fail(true, i, "is a dynamic gradient without rows, got " + shapeText(o.in(i)));
    o.count(false, 0, 1);
    break;
  case KernelOp::UnscaleGrads:
    o.allF32();
    break;
  case KernelOp::DenseAct: { // x (B x K), w (K x N), [b (N)] -> y (B x N), [z (B x N)]
    o.allF32();
    auto [B, K] = o.matrix(true, 0);
    auto [K2, N] = o.matrix(true, 1, K);
    (void)K2;
    if (ins == 3)
      o.count(true, 2, N);
    for (size_t i = 0; i < kernel.outputs.size(); ++i)
      o.matrix(false, i, B, N);
    break;
  }
  case KernelOp::DenseActGrad: { // dy, [a], x, w -> [dz], dW, [db], [dx]
    o.allF32();
    const size_t x = ins - 2, w = ins - 1;
    auto [B, N] = o.matrix(true, 0);
    auto [B2, K] = o.matrix(true, x, B);
    (void)B2;
    o.matrix(true, w, K, N);
    if (ins == 4)
      o.count(true, 1, B * N);
    // The outputs, in order: [dz] unless the kind is none, dW, [db] with
    // bias, [dx] with input_grad.
    std::vector<int64_t> sizes;
    if (kernel.attrs.value("kind", std::string()) != "none")
      sizes.push_back(B * N);
    sizes.push_back(K * N);
    if (kernel.attrs.value("bias", false))
      sizes.push_back(N);
    if (kernel.attrs.value("input_grad", false))
      sizes.push_back(B * K);
    if (o.ok() && kernel.outputs.size() != sizes.size())
      o.fail(false, 0, "is one of " + std::to_string(kernel.outputs.size()) +
                           " results, where its kind, bias and input_grad give " +
                           std::to_string(sizes.size()));
    for (size_t i = 0; i < sizes.size() && o.ok(); ++i)
      o.count(false, i, sizes[i]);
    break;
  }
  case KernelOp::Elementwise: { // every operand n values or a bias of `width`
    o.allF32();
    const int64_t n = numel(o.out(0));
    const int64_t width = kernel.attrs.value("width", int64_t(0));
    if (o.ok() && (width <= 0 || n % width != 0))
      o.fail(false, 0, "holds " + std::to_string(n) + " values, not rows of width " +
                           std::to_string(width));
    for (size_t i = 1; i < kernel.outputs.size(); ++i)
      o.count(false, i, n);
    for (size_t i = 0; i < ins && o.ok(); ++i)
      if (numel(o.in(i)) != n && numel(o.in(i)) != width)
        o.fail(true, i, "must hold " + std::to_string(n) + " values (or a bias of " +
                            std::to_string(width) + "), got " + shapeText(o.in(i)));
    break;
  }
  case KernelOp::InteractionConcat: { // copies (B x w_j), x_i (B x D) -> B x (sum w_j + P)
    o.allF32();
    const int64_t C = kernel.attrs.value("copies", int64_t(0));
    const int64_t position = kernel.attrs.value("position", int64_t(0));
    if (C < 0 || C + 2 > int64_t(ins) || position < 0 || position > C) {
      o.fail(true, 0, "starts " + std::to_string(C) + " copies at position " +
                          std::to_string(position) + " of " + std::to_string(ins) +
                          " inputs (at least 2 interaction inputs follow them)");
      break;
    }
    auto [B, D] = o.matrix(true, size_t(C));
    int64_t W = interactionPairs(int64_t(ins) - C, kernel.attrs.value("self", false));
    for (size_t i = size_t(C) + 1; i < ins; ++i)
      o.matrix(true, i, B, D);
    for (size_t j = 0; j < size_t(C) && o.ok(); ++j)
      W += o.matrix(true, j, B).second;
    o.matrix(false, 0, B, W);
    break;
  }
  case KernelOp::InteractionConcatGrad: // dy (B x W), x_i (B x D) -> dx_i, dcopies
    o.allF32();
    if (ins >= 3) {
      auto [B, D] = o.matrix(true, 1);
      for (size_t i = 2; i < ins; ++i)
        o.matrix(true, i, B, D);
      for (size_t i = 0; i + 1 < ins && i < kernel.outputs.size(); ++i)
        o.sameShape(false, i, o.in(1 + i));
      const int64_t F = int64_t(ins) - 1;
      int64_t W = interactionPairs(F, kernel.attrs.value("self", false));
      const nlohmann::json widths = kernel.attrs.value("copy_widths", nlohmann::json::array());
      const nlohmann::json into = kernel.attrs.value("copy_into", nlohmann::json::array());
      size_t copied = size_t(F);
      for (size_t j = 0; j < widths.size() && o.ok(); ++j) {
        const int64_t w = widths[j].is_number_integer() ? widths[j].get<int64_t>() : -1;
        const int64_t target = j < into.size() && into[j].is_number_integer()
                                   ? into[j].get<int64_t>() : -2;
        if (w < 0 || target < -1 || target >= F || (target >= 0 && w != D)) {
          o.fail(true, 0, "has copy " + std::to_string(j) + " of width " + std::to_string(w) +
                              " into " + std::to_string(target) + ", for " + std::to_string(F) +
                              " inputs of width " + std::to_string(D));
          break;
        }
        W += w;
        if (target == -1 && copied < kernel.outputs.size())
          o.matrix(false, copied++, B, w);
      }
      o.matrix(true, 0, B, W);
    }
    break;
  default: // the other kernels' bindings check their operands themselves
    break;
  }
  return o.result();
}

} // namespace embc::runtime
