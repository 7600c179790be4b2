//===- FusedDenseBindings.cpp - bind the fused dense kernels --------------===//
//
// Binds what -emb-fuse produces for the MLP side (activation_grad from the
// output, dense_act, dense_act_grad, elementwise, interaction_concat and its
// gradient) to cpu/FusedDenseKernels.h. Every operand count, shape and
// attribute is checked here, once; the returned lambdas only compute. They
// keep their pointer vectors between calls (filled in place each step), so
// a step allocates nothing.
//
//===----------------------------------------------------------------------===//

#include "CpuBinder.h"

#include "embc/runtime/cpu/FusedDenseKernels.h"
#include "embc/runtime/cpu/NormKernels.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using namespace embc::runtime;

namespace {

/// The "kind" attribute; unlike activationOf it accepts "none" (a fused
/// dense layer or chain step without activation).
cpu::Activation kindOf(const Binder &b) { return wordOf<cpu::Activation>(b, "kind"); }

/// Fails unless `buf` holds exactly `n` elements.
void expectNumel(const Binder &b, const Buffer &buf, int64_t n, const std::string &what) {
  if (Binder::numel(buf) != n)
    b.fail(what + " '" + buf.name + "' has " + std::to_string(Binder::numel(buf)) +
           " elements, expected " + std::to_string(n));
}

/// Fails unless `buf` is rows x cols.
void expectMatrix(const Binder &b, const Buffer &buf, int64_t rows, int64_t cols,
                  const std::string &what) {
  if (buf.shape.size() != 2 || buf.shape[0] != rows || buf.shape[1] != cols)
    b.fail(what + " '" + buf.name + "' is not " + std::to_string(rows) + " x " +
           std::to_string(cols));
}

/// `buf` read as `rows` x `cols` (Binder::rows): a dense layer's input,
/// output and their gradients, B x K or B x L x K.
void expectRows(const Binder &b, const Buffer &buf, int64_t rows, int64_t cols,
                const std::string &what) {
  if (buf.shape.size() < 2 || b.rows(buf) != rows || b.cols(buf) != cols)
    b.fail(what + " '" + buf.name + "' is not " + std::to_string(rows) + " rows of " +
           std::to_string(cols));
}

int64_t pairCount(int64_t F, bool self) { return self ? F * (F + 1) / 2 : F * (F - 1) / 2; }

/// An integer list attribute.
std::vector<int64_t> integers(const Binder &b, const char *key) {
  const nlohmann::json &attrs = b.k.attrs;
  if (!attrs.contains(key) || !attrs[key].is_array())
    b.fail(std::string("missing integer list attribute '") + key + "'");
  std::vector<int64_t> out;
  for (const nlohmann::json &v : attrs[key]) {
    if (!v.is_number_integer())
      b.fail(std::string("attribute '") + key + "' holds a non-integer");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

/// activation_grad with from_output (-emb-fuse's rewrite); the plain
/// backend binds the others.
BoundKernel bindActivationGradFromOutput(const Binder &b) {
  if (!b.flag("from_output"))
    return nullptr;
  b.expectCounts(2, 1);
  cpu::Activation f = kindOf(b);
  if (!cpu::hasDerivativeFromOutput(f))
    b.fail("gelu cannot be differentiated from its output");
  int64_t n = Binder::numel(b.in(0));
  expectNumel(b, b.in(1), n, "activation output");
  expectNumel(b, b.out(0), n, "gradient");
  int32_t dy = b.k.inputs[0], y = b.k.inputs[1], dx = b.k.outputs[0];
  return [=](ExecState &s) {
    cpu::activationGradFromOutput(f, s.data<float>(dy), s.data<float>(y), s.data<float>(dx), n);
  };
}

BoundKernel bindDenseAct(const Binder &b) {
  const Kernel &k = b.k;
  const bool bias = b.flag("bias");
  const cpu::Activation f = kindOf(b);
  if (k.inputs.size() != (bias ? 3u : 2u) || k.outputs.empty() || k.outputs.size() > 2)
    b.fail(std::string("expected ") + (bias ? "3 inputs (x, w, b)" : "2 inputs (x, w)") +
           " and 1 or 2 outputs (y, [z]), got " + std::to_string(k.inputs.size()) + " and " +
           std::to_string(k.outputs.size()));
  const int64_t B = b.rows(b.in(0)), K = b.cols(b.in(0)), N = b.dim(b.in(1), 1);
  expectMatrix(b, b.in(1), K, N, "weight");
  if (bias)
    expectNumel(b, b.in(2), N, "bias");
  expectRows(b, b.out(0), B, N, "output");
  if (k.outputs.size() == 2)
    expectRows(b, b.out(1), B, N, "pre-activation output");
  int32_t x = k.inputs[0], w = k.inputs[1], bb = bias ? k.inputs[2] : -1;
  int32_t y = k.outputs[0], z = k.outputs.size() == 2 ? k.outputs[1] : -1;
  const cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    cpu::denseActForward(f, s.data<float>(x), s.data<float>(w),
                         bb >= 0 ? s.data<float>(bb) : nullptr, s.data<float>(y),
                         z >= 0 ? s.data<float>(z) : nullptr, B, K, N, compute);
  };
}

BoundKernel bindDenseActGrad(const Binder &b) {
  const Kernel &k = b.k;
  const cpu::Activation f = kindOf(b);
  const bool activated = f != cpu::Activation::None;
  const bool fromOutput = b.flag("from_output"), bias = b.flag("bias");
  const bool inputGrad = b.flag("input_grad");
  if (fromOutput && !cpu::hasDerivativeFromOutput(f))
    b.fail("gelu cannot be differentiated from its output");
  const size_t ins = activated ? 4 : 3;
  const size_t outs = size_t(activated) + 1 + size_t(bias) + size_t(inputGrad);
  b.expectCounts(ins, outs);
  // Operand positions: inputs [dy, (a), x, w]; outputs [(dz), dW, (db), (dx)].
  const size_t xAt = activated ? 2 : 1;
  const Buffer &dyBuf = b.in(0), &xBuf = b.in(xAt), &wBuf = b.in(xAt + 1);
  const int64_t B = b.rows(dyBuf), N = b.cols(dyBuf), K = b.cols(xBuf);
  expectRows(b, xBuf, B, K, "layer input");
  expectMatrix(b, wBuf, K, N, "weight");
  if (activated)
    expectNumel(b, b.in(1), B * N, fromOutput ? "activation output" : "pre-activation");
  size_t o = 0;
  int32_t dz = -1, db = -1, dx = -1;
  if (activated) {
    expectNumel(b, b.out(o), B * N, "dz workspace");
    dz = k.outputs[o++];
  }
  expectNumel(b, b.out(o), K * N, "weight gradient");
  int32_t dw = k.outputs[o++];
  if (bias) {
    expectNumel(b, b.out(o), N, "bias gradient");
    db = k.outputs[o++];
  }
  if (inputGrad) {
    expectNumel(b, b.out(o), B * K, "input gradient");
    dx = k.outputs[o++];
  }
  int32_t dy = k.inputs[0], a = activated ? k.inputs[1] : -1, x = k.inputs[xAt],
          w = k.inputs[xAt + 1];
  const cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) {
    auto ptr = [&s](int32_t buf) { return buf >= 0 ? s.data<float>(buf) : nullptr; };
    cpu::denseActGrad(f, fromOutput, s.data<float>(dy), ptr(a), s.data<float>(x),
                      s.data<float>(w), ptr(dz), s.data<float>(dw), ptr(db), ptr(dx), B, K, N,
                      compute);
  };
}

/// The "biases" list of a dense_multi(_grad) kernel.
std::vector<bool> biasesOf(const Binder &b) {
  if (!b.k.attrs.contains("biases") || !b.k.attrs["biases"].is_array())
    b.fail("missing list attribute 'biases'");
  std::vector<bool> biases;
  for (const nlohmann::json &v : b.k.attrs["biases"]) {
    if (!v.is_boolean())
      b.fail("'biases' must hold booleans");
    biases.push_back(v.get<bool>());
  }
  if (biases.empty())
    b.fail("'biases' names no layer");
  return biases;
}

/// dense_multi: x, w_0 .. w_n-1, [b_i] -> y_0 .. y_n-1.
BoundKernel bindDenseMulti(const Binder &b) {
  const Kernel &k = b.k;
  const std::vector<bool> biases = biasesOf(b);
  const size_t n = biases.size(), withBias = size_t(std::count(biases.begin(), biases.end(), true));
  b.expectCounts(1 + n + withBias, n);
  const int64_t B = b.rows(b.in(0)), K = b.cols(b.in(0));
  std::vector<int64_t> widths;
  for (size_t i = 0, bi = 1 + n; i < n; ++i) {
    const int64_t N = b.cols(b.in(1 + i));
    expectMatrix(b, b.in(1 + i), K, N, "weight");
    expectRows(b, b.out(i), B, N, "output");
    if (biases[i])
      expectNumel(b, b.in(bi++), N, "bias");
    widths.push_back(N);
  }
  const std::vector<int32_t> ins = k.inputs, outs = k.outputs;
  const cpu::ComputeType compute = computeOf(b);
  std::vector<cpu::SharedInputLayer<float>> layers(n);
  return [=](ExecState &s) mutable {
    for (size_t i = 0, bi = 1 + n; i < n; ++i)
      layers[i] = {s.data<float>(ins[1 + i]), biases[i] ? s.data<float>(ins[bi++]) : nullptr,
                   s.data<float>(outs[i]), widths[i]};
    cpu::denseMultiForward(s.data<float>(ins[0]), B, K, layers, compute);
  };
}

/// dense_multi_grad: dy_0 .. dy_n-1, x, w_0 .. w_n-1 -> dx, dW_0 .. dW_n-1, [db_i].
BoundKernel bindDenseMultiGrad(const Binder &b) {
  const Kernel &k = b.k;
  const std::vector<bool> biases = biasesOf(b);
  const size_t n = biases.size(), withBias = size_t(std::count(biases.begin(), biases.end(), true));
  b.expectCounts(2 * n + 1, 1 + n + withBias);
  const int64_t B = b.rows(b.in(n)), K = b.cols(b.in(n));
  expectRows(b, b.out(0), B, K, "input gradient");
  std::vector<int64_t> widths;
  for (size_t i = 0, bi = 1 + n; i < n; ++i) {
    const int64_t N = b.cols(b.in(i));
    expectRows(b, b.in(i), B, N, "output gradient");
    expectMatrix(b, b.in(n + 1 + i), K, N, "weight");
    expectNumel(b, b.out(1 + i), K * N, "weight gradient");
    if (biases[i])
      expectNumel(b, b.out(bi++), N, "bias gradient");
    widths.push_back(N);
  }
  const std::vector<int32_t> ins = k.inputs, outs = k.outputs;
  const cpu::ComputeType compute = computeOf(b);
  std::vector<cpu::SharedInputLayerGrad<float>> layers(n);
  return [=](ExecState &s) mutable {
    for (size_t i = 0, bi = 1 + n; i < n; ++i)
      layers[i] = {s.data<float>(ins[i]), s.data<float>(ins[n + 1 + i]),
                   s.data<float>(outs[1 + i]), biases[i] ? s.data<float>(outs[bi++]) : nullptr,
                   widths[i]};
    cpu::denseMultiGrad(s.data<float>(ins[n]), s.data<float>(outs[0]), B, K, layers, compute);
  };
}

/// One step of the "ops" attribute of an elementwise kernel.
cpu::ElementwiseStep parseStep(const Binder &b, const nlohmann::json &op, size_t j) {
  const std::string where = "step " + std::to_string(j) + " of 'ops': ";
  if (!op.is_object())
    b.fail(where + "not an object");
  if (!op.contains("args") || !op["args"].is_array())
    b.fail(where + "missing the list 'args'");
  cpu::ElementwiseStep step;
  for (const nlohmann::json &arg : op["args"]) {
    if (!arg.is_number_integer())
      b.fail(where + "'args' holds a non-integer");
    step.args.push_back(arg.get<int32_t>());
  }
  auto boolean = [&](const char *key) {
    if (!op.contains(key))
      return false;
    if (!op[key].is_boolean())
      b.fail(where + "'" + key + "' is not a boolean");
    return op[key].get<bool>();
  };
  step.op = wordIn<ElementwiseOp>(b, op, "op", where);
  if (step.op == ElementwiseOp::Add)
    step.bias = boolean("bias");
  else
    step.kind = wordIn<cpu::Activation>(b, op, "kind", where);
  if (step.op == ElementwiseOp::ActivationGrad)
    step.fromOutput = boolean("from_output");
  return step;
}

BoundKernel bindElementwise(const Binder &b) {
  const Kernel &k = b.k;
  if (k.outputs.empty())
    b.fail("expected at least 1 output");
  cpu::ElementwiseChain chain;
  chain.width = b.integer("width");
  chain.inputs = int32_t(k.inputs.size());
  if (!k.attrs.contains("ops") || !k.attrs["ops"].is_array())
    b.fail("missing list attribute 'ops'");
  for (size_t j = 0; j < k.attrs["ops"].size(); ++j)
    chain.steps.push_back(parseStep(b, k.attrs["ops"][j], j));
  for (int64_t r : integers(b, "results"))
    chain.results.push_back(int32_t(r));
  if (chain.results.size() != k.outputs.size())
    b.fail(std::to_string(chain.results.size()) + " results for " +
           std::to_string(k.outputs.size()) + " outputs");
  try {
    cpu::checkElementwiseChain(chain);
  } catch (const std::invalid_argument &e) {
    b.fail(e.what());
  }
  const int64_t n = Binder::numel(b.out(0));
  if (n % chain.width != 0)
    b.fail("output '" + b.out(0).name + "' has " + std::to_string(n) +
           " elements, not whole rows of width " + std::to_string(chain.width));
  for (size_t o = 0; o < k.outputs.size(); ++o)
    expectNumel(b, b.out(o), n, "output");
  // Every use of an input fixes its size: a bias has `width` values, any
  // other argument or a result n.
  auto full = [&](int32_t r) {
    if (r < chain.inputs)
      expectNumel(b, b.in(size_t(r)), n, "input " + std::to_string(r));
  };
  for (const cpu::ElementwiseStep &step : chain.steps) {
    const size_t fullArgs = step.args.size() - (step.bias ? 1 : 0);
    for (size_t i = 0; i < fullArgs; ++i)
      full(step.args[i]);
    if (step.bias)
      expectNumel(b, b.in(size_t(step.args.back())), chain.width, "bias input");
  }
  for (int32_t r : chain.results)
    full(r);

  std::vector<int32_t> inBufs = k.inputs, outBufs = k.outputs;
  std::vector<const float *> ins(inBufs.size());
  std::vector<float *> outs(outBufs.size());
  return [=](ExecState &s) mutable {
    for (size_t i = 0; i < inBufs.size(); ++i)
      ins[i] = s.data<float>(inBufs[i]);
    for (size_t o = 0; o < outBufs.size(); ++o)
      outs[o] = s.data<float>(outBufs[o]);
    cpu::elementwiseForward(chain, ins.data(), outs.data(), n);
  };
}

BoundKernel bindInteractionConcat(const Binder &b) {
  const Kernel &k = b.k;
  const bool self = b.flag("self");
  const int64_t C = b.integer("copies"), position = b.integer("position");
  if (C < 0 || int64_t(k.inputs.size()) < C + 2 || k.outputs.size() != 1)
    b.fail("expected " + std::to_string(C) + " copies and at least 2 interaction inputs, and 1 "
           "output; got " + std::to_string(k.inputs.size()) + " inputs and " +
           std::to_string(k.outputs.size()) + " outputs");
  if (position < 0 || position > C)
    b.fail("position " + std::to_string(position) + " outside [0, " + std::to_string(C) + "]");
  const int64_t F = int64_t(k.inputs.size()) - C;
  const Buffer &first = b.in(size_t(C));
  const int64_t B = b.dim(first, 0), D = b.dim(first, 1);
  for (int64_t i = 0; i < F; ++i)
    expectMatrix(b, b.in(size_t(C + i)), B, D, "interaction input");
  std::vector<int64_t> widths;
  int64_t W = pairCount(F, self);
  for (int64_t j = 0; j < C; ++j) {
    const Buffer &copy = b.in(size_t(j));
    widths.push_back(b.dim(copy, 1));
    expectMatrix(b, copy, B, widths.back(), "copied input");
    W += widths.back();
  }
  expectMatrix(b, b.out(0), B, W, "output");

  std::vector<int32_t> copyBufs(k.inputs.begin(), k.inputs.begin() + C);
  std::vector<int32_t> xBufs(k.inputs.begin() + C, k.inputs.end());
  int32_t y = k.outputs[0];
  std::vector<const float *> copies(copyBufs.size()), xs(xBufs.size());
  const cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) mutable {
    for (size_t j = 0; j < copyBufs.size(); ++j)
      copies[j] = s.data<float>(copyBufs[j]);
    for (size_t i = 0; i < xBufs.size(); ++i)
      xs[i] = s.data<float>(xBufs[i]);
    cpu::interactionConcatForward(copies, widths, position, xs, s.data<float>(y), B, D, self,
                                  compute);
  };
}

BoundKernel bindInteractionConcatGrad(const Binder &b) {
  const Kernel &k = b.k;
  const bool self = b.flag("self");
  const int64_t C = b.integer("copies"), position = b.integer("position");
  const std::vector<int64_t> widths = integers(b, "copy_widths");
  const std::vector<int64_t> into = integers(b, "copy_into");
  if (C < 0 || int64_t(widths.size()) != C || int64_t(into.size()) != C)
    b.fail("'copy_widths' and 'copy_into' must each have 'copies' (" + std::to_string(C) +
           ") entries, got " + std::to_string(widths.size()) + " and " +
           std::to_string(into.size()));
  if (position < 0 || position > C)
    b.fail("position " + std::to_string(position) + " outside [0, " + std::to_string(C) + "]");
  if (k.inputs.size() < 3)
    b.fail("expected dy and at least 2 interaction inputs, got " +
           std::to_string(k.inputs.size()) + " inputs");
  const int64_t F = int64_t(k.inputs.size()) - 1;
  const int64_t B = b.dim(b.in(1), 0), D = b.dim(b.in(1), 1);
  int64_t copiedOut = 0;
  for (int64_t j = 0; j < C; ++j) {
    if (widths[j] < 0)
      b.fail("copy " + std::to_string(j) + " has negative width");
    if (into[j] == -1)
      ++copiedOut;
    else if (into[j] < 0 || into[j] >= F)
      b.fail("copy_into[" + std::to_string(j) + "] = " + std::to_string(into[j]) +
             " is neither -1 nor an interaction input (0.." + std::to_string(F - 1) + ")");
    else if (widths[j] != D)
      b.fail("copy " + std::to_string(j) + " (width " + std::to_string(widths[j]) +
             ") is added into interaction input " + std::to_string(into[j]) + " of width " +
             std::to_string(D));
  }
  b.expectCounts(size_t(F + 1), size_t(F + copiedOut));
  int64_t W = pairCount(F, self);
  for (int64_t w : widths)
    W += w;
  expectMatrix(b, b.in(0), B, W, "output gradient");
  for (int64_t i = 0; i < F; ++i) {
    expectMatrix(b, b.in(size_t(1 + i)), B, D, "interaction input");
    expectMatrix(b, b.out(size_t(i)), B, D, "input gradient");
  }
  // Output index of each copy's gradient (-1: it goes into an input's).
  std::vector<int32_t> copyOut(static_cast<size_t>(C), -1), copyInto(static_cast<size_t>(C));
  for (int64_t j = 0, o = F; j < C; ++j) {
    copyInto[j] = int32_t(into[j]);
    if (into[j] == -1) {
      expectMatrix(b, b.out(size_t(o)), B, widths[j], "copy gradient");
      copyOut[j] = k.outputs[size_t(o++)];
    }
  }

  int32_t dy = k.inputs[0];
  std::vector<int32_t> xBufs(k.inputs.begin() + 1, k.inputs.end());
  std::vector<int32_t> dxBufs(k.outputs.begin(), k.outputs.begin() + F);
  std::vector<const float *> xs(static_cast<size_t>(F));
  std::vector<float *> dxs(static_cast<size_t>(F)), dcopies(static_cast<size_t>(C), nullptr);
  const cpu::ComputeType compute = computeOf(b);
  return [=](ExecState &s) mutable {
    for (int64_t i = 0; i < F; ++i) {
      xs[i] = s.data<float>(xBufs[i]);
      dxs[i] = s.data<float>(dxBufs[i]);
    }
    for (int64_t j = 0; j < C; ++j)
      dcopies[j] = copyOut[j] >= 0 ? s.data<float>(copyOut[j]) : nullptr;
    cpu::interactionConcatGrad(s.data<float>(dy), widths, position, copyInto, xs, dxs, dcopies, B,
                               D, self, compute);
  };
}

} // namespace

namespace {

/// The dropout a residual-norm kernel applies (attributes "rate" and
/// "stream", absent: none), numbered as the dropout kernel numbers the
/// elements of an operand like `x` (its leading dimension is the batch).
struct ResidualDropout {
  bool drops = false;
  double rate = 0.0;
  int64_t stream = 0, batch = 1, perExample = 0, rowsPerExample = 0, paddedRowsPerExample = 0;

  ResidualDropout(const Binder &b, const Buffer &x) {
    drops = b.k.attrs.contains("rate");
    rate = drops ? b.real("rate") : 0.0;
    if (!(rate >= 0.0 && rate < 1.0))
      b.fail("rate must be in [0, 1), got " + std::to_string(rate));
    stream = drops ? b.integer("stream") : 0;
    batch = b.dim(x, 0);
    perExample = Binder::paddedPerExample(x);
    // Rows of D: a dynamically padded batch numbers its rows as max_len's.
    rowsPerExample = b.rows(x) / std::max<int64_t>(batch, 1);
    paddedRowsPerExample = perExample / std::max<int64_t>(b.cols(x), 1);
  }
  /// The step's draw while training, none otherwise.
  std::optional<cpu::DropoutDraw> at(const ExecState &s) const {
    if (!drops || !s.training || rate == 0.0)
      return std::nullopt;
    const int64_t example = s.exampleOffset + int64_t(s.microBatch) * batch;
    return cpu::DropoutDraw{cpu::dropoutKey(s.seed, stream, s.step),
                            uint64_t(example * perExample), rate, rowsPerExample,
                            paddedRowsPerExample};
  }
};

/// add_layer_norm: x, p, gamma, beta -> y[, h]: y = layer_norm(x + d), d
/// = p dropped as the dropout kernel would drop it (rate, stream), or p.
BoundKernel bindAddLayerNorm(const Binder &b) {
  const Kernel &k = b.k;
  if (k.inputs.size() != 4 || k.outputs.empty() || k.outputs.size() > 2)
    b.fail("expected 4 inputs and 1 or 2 outputs");
  const Buffer &x = b.in(0);
  const int64_t D = b.cols(x), rows = b.rows(x);
  if (b.in(1).shape != x.shape || b.out(0).shape != x.shape ||
      (k.outputs.size() == 2 && b.out(1).shape != x.shape))
    b.fail("p, y and h must have x's shape");
  if (Binder::numel(b.in(2)) != D || Binder::numel(b.in(3)) != D)
    b.fail("gamma and beta must have " + std::to_string(D) + " entries");
  const double eps = b.real("eps");
  const ResidualDropout dropout(b, x);
  const int32_t xi = k.inputs[0], pi = k.inputs[1], gamma = k.inputs[2], beta = k.inputs[3],
                y = k.outputs[0], h = k.outputs.size() == 2 ? k.outputs[1] : -1;
  return [=](ExecState &s) {
    cpu::addLayerNormForward(s.data<float>(xi), s.data<float>(pi), s.data<float>(gamma),
                             s.data<float>(beta), h >= 0 ? s.data<float>(h) : nullptr,
                             s.data<float>(y), rows, D, eps, dropout.at(s));
  };
}

/// add_layer_norm_grad: dy, h, gamma[, other] -> dh, dgamma, dbeta[, dp]:
/// layer_norm_grad's dx plus other, and its dropout_grad.
BoundKernel bindAddLayerNormGrad(const Binder &b) {
  const Kernel &k = b.k;
  const bool other = b.flag("other"), drops = k.attrs.contains("rate");
  b.expectCounts(other ? 4 : 3, drops ? 4 : 3);
  const Buffer &h = b.in(1);
  const int64_t D = b.cols(h), rows = b.rows(h);
  if (b.in(0).shape != h.shape || b.out(0).shape != h.shape ||
      (other && b.in(3).shape != h.shape) || (drops && b.out(3).shape != h.shape))
    b.fail("dy, other, dh and dp must have h's shape");
  if (Binder::numel(b.in(2)) != D || Binder::numel(b.out(1)) != D || Binder::numel(b.out(2)) != D)
    b.fail("gamma, dgamma and dbeta must have " + std::to_string(D) + " entries");
  const double eps = b.real("eps");
  const ResidualDropout dropout(b, h);
  const int32_t dy = k.inputs[0], hi = k.inputs[1], gamma = k.inputs[2],
                oi = other ? k.inputs[3] : -1, dh = k.outputs[0], dgamma = k.outputs[1],
                dbeta = k.outputs[2], dp = drops ? k.outputs[3] : -1;
  return [=](ExecState &s) {
    cpu::addLayerNormBackward(s.data<float>(dy), s.data<float>(hi), s.data<float>(gamma),
                              oi >= 0 ? s.data<float>(oi) : nullptr, s.data<float>(dh),
                              s.data<float>(dgamma), s.data<float>(dbeta),
                              dp >= 0 ? s.data<float>(dp) : nullptr, rows, D, eps,
                              dropout.at(s));
  };
}

} // namespace

std::vector<CpuBinding> embc::runtime::fusedDenseBindings() {
  return {{KernelOp::ActivationGrad, bindActivationGradFromOutput},
          {KernelOp::AddLayerNorm, bindAddLayerNorm},
          {KernelOp::AddLayerNormGrad, bindAddLayerNormGrad},
          {KernelOp::DenseAct, bindDenseAct},
          {KernelOp::DenseActGrad, bindDenseActGrad},
          {KernelOp::DenseMulti, bindDenseMulti},
          {KernelOp::DenseMultiGrad, bindDenseMultiGrad},
          {KernelOp::Elementwise, bindElementwise},
          {KernelOp::InteractionConcat, bindInteractionConcat},
          {KernelOp::InteractionConcatGrad, bindInteractionConcatGrad}};
}
