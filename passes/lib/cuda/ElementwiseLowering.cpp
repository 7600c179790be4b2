//===- ElementwiseLowering.cpp - elementwise and column-copy dense ops ----===//
//
// activation, activation_grad, add, accumulate_grad and the fused
// `elementwise` chain become one generated elementwise kernel each
// (DenseLowering.cpp: float4 where the operands allow, grid-stride); concat
// and slice become row/column copy kernels. Every output element is written
// by one thread from values it read first, so an output that is also an
// input (accumulate_grad, an add into its first operand) is safe. The
// arithmetic is the CPU's (DenseKernels.cpp, FusedDenseKernels.cpp): sums
// in operand order, the bias last.
//
//===----------------------------------------------------------------------===//

#include "DenseLowering.h"

#include <algorithm>
#include <map>
#include <sstream>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::dense;

namespace {

// activation: y = f(x) elementwise.
void lowerActivation(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 1, 1);
  const std::string kind = stringAttr(k, "kind");
  const int64_t n = numel(f32Buffer(em, k.inputs[0], "input"));
  expectNumel(em, k.outputs[0], n, "output");
  Elementwise e;
  e.hint = "activation_" + kind;
  e.n = n;
  e.inputs = {{CudaEmitter::buf(k.inputs[0]), false}};
  e.outputs = {CudaEmitter::buf(k.outputs[0])};
  e.body = "  y0 = " + activationExpr(em, kind, "x0") + ";\n";
  emitElementwise(em, e, out);
}

// activation_grad: dx = dy * f'(x), or f' from y = f(x) with from_output.
void lowerActivationGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const std::string kind = stringAttr(k, "kind");
  const bool fromOutput = boolAttr(k, "from_output");
  const int64_t n = numel(f32Buffer(em, k.inputs[0], "output gradient"));
  expectNumel(em, k.inputs[1], n, fromOutput ? "activation output" : "activation input");
  expectNumel(em, k.outputs[0], n, "input gradient");
  Elementwise e;
  e.hint = "activation_grad_" + kind;
  e.n = n;
  e.inputs = {{CudaEmitter::buf(k.inputs[0]), false}, {CudaEmitter::buf(k.inputs[1]), false}};
  e.outputs = {CudaEmitter::buf(k.outputs[0])};
  e.body = "  y0 = " + activationGradExpr(em, kind, fromOutput, "x0", "x1") + ";\n";
  emitElementwise(em, e, out);
}

// add: y = x_0 + ... + x_n-1 (+ bias, the last operand, broadcast over rows).
void lowerAdd(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const bool bias = boolAttr(k, "bias");
  if (k.inputs.size() < (bias ? 2u : 1u) || k.outputs.size() != 1)
    throw CodegenError(std::string("expected at least ") +
                       (bias ? "2 inputs (with the bias)" : "1 input") + " and 1 output, got " +
                       std::to_string(k.inputs.size()) + " and " +
                       std::to_string(k.outputs.size()));
  const auto [B, N] = f32Rows(em, k.outputs[0], -1, -1, "output");
  Elementwise e;
  e.hint = k.op;
  e.n = B * N;
  e.width = N;
  const size_t full = k.inputs.size() - (bias ? 1 : 0);
  std::string sum;
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const bool isBias = i == full;
    expectNumel(em, k.inputs[i], isBias ? N : B * N, isBias ? "bias" : "addend");
    e.inputs.push_back({CudaEmitter::buf(k.inputs[i]), isBias});
    sum += (i ? " + x" : "x") + std::to_string(i);
  }
  e.outputs = {CudaEmitter::buf(k.outputs[0])};
  e.body = "  y0 = " + sum + ";\n";
  emitElementwise(em, e, out);
}

// accumulate_grad: grad += g (the parameter's gradient accumulator).
void lowerAccumulateGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 1, 1);
  const int64_t n = numel(f32Buffer(em, k.inputs[0], "gradient"));
  expectNumel(em, k.outputs[0], n, "gradient accumulator");
  Elementwise e;
  e.hint = k.op;
  e.n = n;
  e.inputs = {{CudaEmitter::buf(k.outputs[0]), false}, {CudaEmitter::buf(k.inputs[0]), false}};
  e.outputs = {CudaEmitter::buf(k.outputs[0])};
  e.body = "  y0 = x0 + x1;\n";
  emitElementwise(em, e, out);
}

// elementwise: a chain of add / activation / activation_grad steps kept in
// registers; `results[o]` names what output o receives.
void lowerElementwiseChain(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.outputs.empty())
    throw CodegenError("expected at least 1 output");
  const int64_t width = intAttr(k, "width");
  if (width < 1)
    throw CodegenError("width " + std::to_string(width) + " < 1");
  const nlohmann::json &ops = k.attrs.contains("ops") ? k.attrs["ops"] : nlohmann::json();
  if (!ops.is_array())
    throw CodegenError("missing list attribute 'ops'");
  const nlohmann::json &results =
      k.attrs.contains("results") ? k.attrs["results"] : nlohmann::json();
  if (!results.is_array() || results.size() != k.outputs.size())
    throw CodegenError("'results' must list one reference per output (" +
                       std::to_string(k.outputs.size()) + ")");
  const int64_t m = int64_t(k.inputs.size());
  const int64_t n = numel(f32Buffer(em, k.outputs[0], "output"));
  if (n % width != 0)
    throw CodegenError(std::to_string(n) + " output elements are not whole rows of width " +
                       std::to_string(width));
  for (int32_t o : k.outputs)
    expectNumel(em, o, n, "output");

  // Inputs the chain reads, in first-use order, and how: a bias (width
  // values) or a full operand (n values).
  std::map<int64_t, size_t> position;
  Elementwise e;
  e.hint = k.op;
  e.n = n;
  e.width = width;
  auto input = [&](int64_t r, bool broadcast) {
    auto [it, fresh] = position.try_emplace(r, e.inputs.size());
    if (fresh) {
      expectNumel(em, k.inputs[size_t(r)], broadcast ? width : n,
                  broadcast ? "bias input" : "input");
      e.inputs.push_back({CudaEmitter::buf(k.inputs[size_t(r)]), broadcast});
    } else if (e.inputs[it->second].broadcast != broadcast && n != width) {
      throw CodegenError("input " + std::to_string(r) + " is used both as a bias (" +
                         std::to_string(width) + " values) and as a full operand (" +
                         std::to_string(n) + ")");
    }
    return "x" + std::to_string(it->second);
  };
  auto ref = [&](const nlohmann::json &v, size_t step, const std::string &where) {
    if (!v.is_number_integer())
      throw CodegenError(where + "a reference is not an integer");
    const int64_t r = v.get<int64_t>();
    if (r < 0 || r >= m + int64_t(step))
      throw CodegenError(where + "reference " + std::to_string(r) +
                         " is not an input or an earlier step (" + std::to_string(m) + " inputs)");
    return r;
  };
  // Value names: an input's parameter, or step j's temporary t<j>.
  auto value = [&](int64_t r) { return r < m ? input(r, false) : "t" + std::to_string(r - m); };

  std::ostringstream body;
  for (size_t j = 0; j < ops.size(); ++j) {
    const nlohmann::json &op = ops[j];
    const std::string where = "step " + std::to_string(j) + " of 'ops': ";
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("args") ||
        !op["args"].is_array())
      throw CodegenError(where + "not an object with a string 'op' and a list 'args'");
    const std::string name = op["op"].get<std::string>();
    using Step = rt::ElementwiseOp;
    const std::optional<Step> step = rt::parseEnum<Step>(name);
    const nlohmann::json &args = op["args"];
    auto flag = [&](const char *key) {
      if (!op.contains(key))
        return false;
      if (!op[key].is_boolean())
        throw CodegenError(where + "'" + key + "' is not a boolean");
      return op[key].get<bool>();
    };
    auto kind = [&]() {
      if (!op.contains("kind") || !op["kind"].is_string())
        throw CodegenError(where + "missing string 'kind'");
      return op["kind"].get<std::string>();
    };
    std::string expr;
    if (step == Step::Add) {
      const bool bias = flag("bias");
      if (args.size() < (bias ? 2u : 1u))
        throw CodegenError(where + "add needs at least " +
                           (bias ? "2 arguments with a bias" : "1 argument"));
      // addForward's order: x_0 + x_1 + ... then the bias.
      for (size_t i = 0; i < args.size(); ++i) {
        const int64_t r = ref(args[i], j, where);
        const bool isBias = bias && i + 1 == args.size();
        if (isBias && r >= m)
          throw CodegenError(where + "the bias (reference " + std::to_string(r) +
                             ") must be an input, not a step's value");
        expr += (i ? " + " : "") + (isBias ? input(r, true) : value(r));
      }
    } else if (step == Step::Activation) {
      if (args.size() != 1)
        throw CodegenError(where + "activation takes 1 argument, got " +
                           std::to_string(args.size()));
      expr = activationExpr(em, kind(), value(ref(args[0], j, where)));
    } else if (step == Step::ActivationGrad) {
      if (args.size() != 2)
        throw CodegenError(where + "activation_grad takes 2 arguments (dy, a), got " +
                           std::to_string(args.size()));
      const std::string dy = value(ref(args[0], j, where)), a = value(ref(args[1], j, where));
      expr = activationGradExpr(em, kind(), flag("from_output"), dy, a);
    } else {
      throw CodegenError(where + "unknown op '" + name + "' (" + rt::enumChoices<Step>() + ")");
    }
    body << "  const float t" << j << " = " << expr << ";\n";
  }
  for (size_t o = 0; o < results.size(); ++o)
    body << "  y" << o << " = " << value(ref(results[o], ops.size(), "'results': ")) << ";\n";
  for (int32_t o : k.outputs)
    e.outputs.push_back(CudaEmitter::buf(o));
  e.body = body.str();
  emitElementwise(em, e, out);
}

/// A kernel that fills a B x W matrix y from column blocks of other B x w
/// matrices: output columns [at_s, at_s + width_s) of row r are columns
/// [from_s, from_s + width_s) of source s's row r (row length rowLength_s).
/// float4 when every width, offset and address allows it.
struct ColumnBlock {
  Arg source;
  int64_t rowLength = 0, from = 0, width = 0;
};
void emitColumnCopy(CudaEmitter &em, const std::string &hint,
                    const std::vector<ColumnBlock> &blocks, Arg y, int64_t B, int64_t W,
                    rt::CudaKernel &out) {
  bool vec = W % 4 == 0 && aligned16(em, y);
  for (const ColumnBlock &c : blocks)
    vec = vec && c.rowLength % 4 == 0 && c.from % 4 == 0 && c.width % 4 == 0 &&
          aligned16(em, c.source);
  const int64_t v = vec ? 4 : 1; // elements per item
  const int64_t rowItems = W / v, count = B * rowItems;
  constexpr int64_t kBlock = 256;
  const int64_t grid = gridFor(count, kBlock);
  // The index type must hold the largest source offset too (a slice reads
  // a wider matrix than it writes).
  int64_t limit = count + grid * kBlock;
  for (const ColumnBlock &c : blocks)
    limit = std::max(limit, B * c.rowLength / v);
  const std::string idx = limit < (int64_t(1) << 30) ? "int" : "emb_i64";
  const std::string type = vec ? "float4" : "float";
  const std::string name = kNamePlaceholder;
  std::ostringstream k;
  k << "extern \"C\" __global__ void " << name << "(EmbArgs a) {\n"
    << "  " << type << " *y = (" << type << " *)a.p[" << blocks.size() << "];\n"
    << "  for (" << idx << " i = (" << idx << ")blockIdx.x * blockDim.x + threadIdx.x; i < "
    << count << "; i += (" << idx << ")gridDim.x * blockDim.x) {\n"
    << "    const " << idx << " r = i / " << rowItems << ";\n"
    << "    const int c = (int)(i - r * " << rowItems << ");\n";
  int64_t at = 0;
  for (size_t s = 0; s < blocks.size(); ++s) {
    const ColumnBlock &c = blocks[s];
    const int64_t end = at + c.width / v;
    k << "    " << (s ? "else " : "");
    if (s + 1 < blocks.size())
      k << "if (c < " << end << ") ";
    const int64_t shift = c.from / v - at; // source column = output column + shift
    k << "y[i] = ((const " << type << " *)a.p[" << s << "])[r * " << c.rowLength / v << " + c";
    if (shift)
      k << (shift > 0 ? " + " : " - ") << (shift > 0 ? shift : -shift);
    k << "];\n";
    at = end;
  }
  k << "  }\n}\n";
  const std::string entry = defineKernel(em, hint, k.str());
  std::vector<Arg> args;
  for (const ColumnBlock &c : blocks)
    args.push_back(c.source);
  args.push_back(y);
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, std::move(args), grid, kBlock));
}

// concat: y (B x sum w_i) = [x_0 | x_1 | ...] row by row.
void lowerConcat(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.inputs.empty() || k.outputs.size() != 1)
    throw CodegenError("expected at least 1 input and 1 output, got " +
                       std::to_string(k.inputs.size()) + " and " +
                       std::to_string(k.outputs.size()));
  const rt::Buffer &y = f32Matrix(em, k.outputs[0], -1, -1, "output");
  const int64_t B = y.shape[0];
  std::vector<ColumnBlock> blocks;
  int64_t W = 0;
  for (int32_t in : k.inputs) {
    const int64_t w = f32Matrix(em, in, B, -1, "input").shape[1];
    blocks.push_back({CudaEmitter::buf(in), w, 0, w});
    W += w;
  }
  if (W != y.shape[1])
    throw CodegenError("inputs have " + std::to_string(W) + " columns in all, the output '" +
                       y.name + "' " + std::to_string(y.shape[1]));
  emitColumnCopy(em, k.op, blocks, CudaEmitter::buf(k.outputs[0]), B, W, out);
}

// slice: y = columns [offset, offset + width) of x, width from y.
void lowerSlice(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 1, 1);
  const rt::Buffer &x = f32Matrix(em, k.inputs[0], -1, -1, "input");
  const int64_t B = x.shape[0], N = x.shape[1];
  const int64_t width = f32Matrix(em, k.outputs[0], B, -1, "output").shape[1];
  const int64_t offset = intAttr(k, "offset");
  if (offset < 0 || offset + width > N)
    throw CodegenError("columns [" + std::to_string(offset) + ", " +
                       std::to_string(offset + width) + ") are outside a row of " +
                       std::to_string(N));
  emitColumnCopy(em, k.op, {{CudaEmitter::buf(k.inputs[0]), N, offset, width}},
                 CudaEmitter::buf(k.outputs[0]), B, width, out);
}

} // namespace

EMBC_CUDA_LOWERING(Activation, lowerActivation)
EMBC_CUDA_LOWERING(ActivationGrad, lowerActivationGrad)
EMBC_CUDA_LOWERING(Add, lowerAdd)
EMBC_CUDA_LOWERING(AccumulateGrad, lowerAccumulateGrad)
EMBC_CUDA_LOWERING(Elementwise, lowerElementwiseChain)
EMBC_CUDA_LOWERING(Concat, lowerConcat)
EMBC_CUDA_LOWERING(Slice, lowerSlice)
