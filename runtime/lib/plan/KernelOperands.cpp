//===- KernelOperands.cpp - the operands' dtypes and shapes of each kernel ===//
//
// The catalogue (KernelCatalogue.def) says how many operands a kernel takes;
// this says what they must be: the dtypes and shapes the backends derive
// loop bounds from and index the other operands with, and for the kernels
// that write a parameter, a table, their optimizer state or their gradient,
// that those are the very buffers and that the rows they address lie within
// them. A plan that breaks these is refused when it is read, with the JSON
// path of the operand, instead of reading or writing past a buffer at run
// time, on the CPU or on a GPU: a valid checksum says the file is the one
// written, not that its writer was right. The embedding kernels' checks
// are in KernelOperandsEmbedding.cpp, the sharding exchanges' in
// KernelOperandsShard.cpp.
//
//===----------------------------------------------------------------------===//

#include "OperandChecks.h"

namespace embc::runtime {
using namespace operands;

/// A sequence_softmax_ce loss reads B x L x C logits and B x L targets.
static void sequenceLossShapes(Operands &o, const Kernel &kernel) {
  if (!o.ok() || kernel.attrs.at("kind").get<std::string>() !=
                     enumName(LossKind::SequenceSoftmaxCe))
    return;
  const auto [B, L, C] = o.sequence(true, 0);
  (void)C;
  o.matrix(true, 1, B, L);
}

std::optional<std::string> checkKernelOperands(KernelOp op, const Kernel &kernel, const Plan &plan,
                                               std::string_view at) {
  Operands o(kernel, plan, at);
  const size_t ins = kernel.inputs.size();
  switch (op) {
  // B below is the rows: the batch, or B x L positions of a sequence.
  case KernelOp::Dense:      // x (B x K), w (K x N), [b (N)] -> B x N
  case KernelOp::DenseAct: { // the same -> y (B x N), [z (B x N)]
    o.allF32();
    auto [B, K] = o.rows(true, 0);
    auto [K2, N] = o.matrix(true, 1, K);
    (void)K2;
    if (ins == 3)
      o.count(true, 2, N);
    for (size_t i = 0; i < kernel.outputs.size(); ++i)
      o.rows(false, i, B, N);
    break;
  }
  case KernelOp::DenseGradInput: { // dy (B x N), w (K x N) -> B x K
    o.allF32();
    auto [B, N] = o.rows(true, 0);
    auto [K, N2] = o.matrix(true, 1, -1, N);
    (void)N2;
    o.rows(false, 0, B, K);
    break;
  }
  case KernelOp::DenseGradWeight: { // x (B x K), dy (B x N) -> K x N
    o.allF32();
    auto [B, K] = o.rows(true, 0);
    auto [B2, N] = o.rows(true, 1, B);
    (void)B2;
    o.matrix(false, 0, K, N);
    break;
  }
  case KernelOp::BiasGrad: { // dy (B x N) -> N
    o.allF32();
    auto [B, N] = o.rows(true, 0);
    (void)B;
    o.count(false, 0, N);
    break;
  }
  case KernelOp::Activation: // elementwise
    o.allF32();
    o.count(false, 0, numel(o.in(0)));
    break;
  case KernelOp::Dropout:     // x -> like x: a mask element per element
  case KernelOp::DropoutGrad: // dy -> like dy
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
    sequenceLossShapes(o, kernel);
    o.count(false, 0, 1);
    break;
  case KernelOp::LossGrad: // input, target -> d input, [d target]
    o.allF32();
    sequenceLossShapes(o, kernel);
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
  case KernelOp::NextTokenTargets: { // ids (n), offsets (B + 1) -> B x L
    o.f32(false, 0);
    auto [B, L] = o.matrix(false, 0);
    (void)L;
    o.bags(0, 1, B);
    break;
  }
  case KernelOp::MaskTokens: { // ids (n), offsets (B + 1) -> masked ids (n), targets (B x L)
    o.f32(false, 1);
    auto [B, L] = o.matrix(false, 1);
    (void)L;
    o.bags(0, 1, B);
    o.i64(false, 0);
    o.count(false, 0, numel(o.in(0)));
    const double rate = kernel.attrs.at("rate").get<double>();
    if (o.ok() && !(rate > 0.0 && rate < 1.0))
      o.failAt("attrs.rate", "must be in (0, 1), got " + std::to_string(rate));
    if (o.ok() && kernel.attrs.at("vocab").get<int64_t>() < 1)
      o.failAt("attrs.vocab", "must be at least 1");
    break;
  }
  case KernelOp::SelectTargets: { // x (B x L x D), targets (B x L) -> rows (B x P x D), B x P
    const auto [B, L, D] = o.sequence(true, 0);
    o.f32(true, 1);
    o.matrix(true, 1, B, L);
    const auto [B2, P, D2] = o.sequence(false, 0, D);
    (void)B2, (void)D2;
    // A batch run at its own length (dynamic padding) keeps max_len's P.
    const int64_t most = o.ok() && o.in(0).paddedLength > 0 ? o.in(0).paddedLength : L;
    if (o.ok() && (o.out(0).shape[0] != B || P < 1 || P > most))
      o.fail(false, 0, "must be " + std::to_string(B) + " x P x " + std::to_string(D) +
                           " with 1 <= P <= " + std::to_string(most) + ", got " +
                           shapeText(o.out(0)));
    o.f32(false, 1);
    o.matrix(false, 1, B, P);
    break;
  }
  case KernelOp::SelectTargetsGrad: { // dy (B x P x D), targets (B x L) -> dx (B x L x D)
    const auto [B, L, D] = o.sequence(false, 0);
    o.f32(true, 1);
    o.matrix(true, 1, B, L);
    const auto [B2, P, D2] = o.sequence(true, 0, D);
    (void)D2;
    const int64_t most = o.ok() && o.out(0).paddedLength > 0 ? o.out(0).paddedLength : L;
    if (o.ok() && (B2 != B || P < 1 || P > most))
      o.fail(true, 0, "must be " + std::to_string(B) + " x P x " + std::to_string(D) +
                          " with 1 <= P <= " + std::to_string(most) + ", got " +
                          shapeText(o.in(0)));
    break;
  }
  case KernelOp::SequencePool: { // x (B x L x D), offsets (B + 1) -> B x D
    const auto [B, L, D] = o.sequence(true, 0);
    (void)L;
    o.i64(true, 1);
    o.count(true, 1, B + 1);
    o.f32(false, 0);
    o.matrix(false, 0, B, D);
    break;
  }
  case KernelOp::Attention:       // q, k, v (B x L x D), offsets -> o (like q)
  case KernelOp::AttentionGrad: { // dy, q, k, v, offsets -> dq, dk, dv (like q)
    const size_t first = op == KernelOp::Attention ? 0 : 1;
    const auto [B, L, D] = o.sequence(true, first);
    (void)L;
    for (size_t i = 0; i < first + 3; ++i)
      o.sameShape(true, i, o.in(first));
    o.i64(true, first + 3);
    o.count(true, first + 3, B + 1);
    for (size_t i = 0; i < kernel.outputs.size(); ++i) {
      o.f32(false, i);
      o.sameShape(false, i, o.in(first));
    }
    const int64_t heads = kernel.attrs.at("heads").get<int64_t>();
    if (o.ok() && (heads < 1 || D % heads != 0))
      o.failAt("attrs.heads", "has " + std::to_string(heads) + " heads, which do not divide its " +
                                  std::to_string(D) + " columns");
    break;
  }
  case KernelOp::Positions: { // x (B x L x D), offsets, [table (>= L x D)] -> like x
    const auto [B, L, D] = o.sequence(true, 0);
    o.i64(true, 1);
    o.count(true, 1, B + 1);
    const bool learned =
        kernel.attrs.at("kind").get<std::string>() == enumName(PositionKind::Learned);
    if (o.ok() && learned != (kernel.inputs.size() == 3))
      o.failAt("inputs", learned ? "with learned positions needs the table as its third operand"
                                 : "with sinusoidal positions takes no table");
    if (kernel.inputs.size() == 3)
      o.positionTable(true, 2, L, D);
    o.f32(false, 0);
    o.sameShape(false, 0, o.in(0));
    break;
  }
  case KernelOp::PositionsGrad: { // dy, offsets -> dx (like dy), [dtable (>= L x D)]
    const auto [B, L, D] = o.sequence(true, 0);
    o.i64(true, 1);
    o.count(true, 1, B + 1);
    const bool learned =
        kernel.attrs.at("kind").get<std::string>() == enumName(PositionKind::Learned);
    if (o.ok() && learned != (kernel.outputs.size() == 2))
      o.failAt("outputs", learned ? "with learned positions writes the table's gradient second"
                                  : "with sinusoidal positions writes only dx");
    o.f32(false, 0);
    o.sameShape(false, 0, o.in(0));
    if (kernel.outputs.size() == 2)
      o.positionTable(false, 1, L, D);
    break;
  }
  case KernelOp::SequencePoolGrad: { // dy (B x D), offsets, [x for max] -> dx (B x L x D)
    const auto [B, L, D] = o.sequence(false, 0);
    (void)L;
    o.f32(true, 0);
    o.matrix(true, 0, B, D);
    o.i64(true, 1);
    o.count(true, 1, B + 1);
    const bool max = kernel.attrs.at("mode").get<std::string>() == enumName(SequencePooling::Max);
    if (o.ok() && max != (kernel.inputs.size() == 3))
      o.failAt("inputs", std::string(max ? "with max pooling needs" : "reads") +
                             " the forward input as its third operand" +
                             (max ? "" : " only with max pooling"));
    if (kernel.inputs.size() == 3)
      o.sameShape(true, 2, o.out(0));
    break;
  }
  case KernelOp::AccumulateGrad: // g -> the param's grad, same size
    o.allF32();
    o.count(true, 0, numel(o.out(0)));
    break;
  case KernelOp::Add: { // x_i (B x N), [bias (N), last] -> B x N
    o.allF32();
    const bool bias = kernel.attrs.value("bias", false);
    auto [B, N] = o.rows(false, 0);
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
  case KernelOp::DenseMulti: { // x, w_0 .. w_n-1, [b_i] -> y_0 .. y_n-1
    o.allF32();
    const std::vector<bool> biases = kernel.attrs.at("biases").get<std::vector<bool>>();
    const size_t n = biases.size(), withBias = size_t(std::count(biases.begin(), biases.end(), true));
    if (n < 1 || ins != 1 + n + withBias || kernel.outputs.size() != n) {
      o.failAt("attrs.biases", "gives " + std::to_string(n) + " layers (" +
                                   std::to_string(withBias) + " with a bias): expected " +
                                   std::to_string(1 + n + withBias) + " inputs and " +
                                   std::to_string(n) + " outputs");
      break;
    }
    auto [B, K] = o.rows(true, 0);
    for (size_t i = 0, b = 1 + n; i < n && o.ok(); ++i) {
      const int64_t N = o.matrix(true, 1 + i, K).second;
      if (biases[i])
        o.count(true, b++, N);
      o.rows(false, i, B, N);
    }
    break;
  }
  case KernelOp::DenseMultiGrad: { // dy_0 .. dy_n-1, x, w_i -> dx, dW_i, [db_i]
    o.allF32();
    const std::vector<bool> biases = kernel.attrs.at("biases").get<std::vector<bool>>();
    const size_t n = biases.size(), withBias = size_t(std::count(biases.begin(), biases.end(), true));
    if (n < 1 || ins != 2 * n + 1 || kernel.outputs.size() != 1 + n + withBias) {
      o.failAt("attrs.biases", "gives " + std::to_string(n) + " layers (" +
                                   std::to_string(withBias) + " with a bias): expected " +
                                   std::to_string(2 * n + 1) + " inputs and " +
                                   std::to_string(1 + n + withBias) + " outputs");
      break;
    }
    auto [B, K] = o.rows(true, n);
    o.rows(false, 0, B, K);
    for (size_t i = 0, b = 1 + n; i < n && o.ok(); ++i) {
      const int64_t N = o.rows(true, i, B).second;
      o.matrix(true, n + 1 + i, K, N);
      o.count(false, 1 + i, K * N);
      if (biases[i])
        o.count(false, b++, N);
    }
    break;
  }
  case KernelOp::DenseActGrad: { // dy, [a], x, w -> [dz], dW, [db], [dx]
    o.allF32();
    const size_t x = ins - 2, w = ins - 1;
    auto [B, N] = o.rows(true, 0);
    auto [B2, K] = o.rows(true, x, B);
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
  default: // the embedding kernels, then the sharding exchanges
    if (!checkEmbeddingOperands(op, o, kernel, plan))
      checkShardOperands(op, o, kernel, plan);
    break;
  }
  return o.result();
}

} // namespace embc::runtime
