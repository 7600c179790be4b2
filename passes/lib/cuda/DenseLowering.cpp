//===- DenseLowering.cpp - what the dense family's lowerings share --------===//
//
// The dense ops (GEMM layers, elementwise ops, the cross layer, layer norm)
// are lowered in their own files; this one holds what they share
// (DenseLowering.h): operand checks, activation expressions, the generated
// elementwise / rounding / column-sum kernels and GEMM launches.
//
//===----------------------------------------------------------------------===//

#include "DenseLowering.h"

#include "embc/runtime/plan/ActivationMath.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::dense;
namespace cu = embc::runtime::cuda;

// --- Operands -------------------------------------------------------------------

namespace {

/// The C type of a loop index that counts to `limit` (plus one grid stride)
/// without overflow: 32-bit arithmetic where it fits is cheaper.
std::string indexType(int64_t limit) { return limit < (int64_t(1) << 30) ? "int" : "emb_i64"; }

/// FNV-1a, for kernel names derived from their text.
uint64_t fnv1a(const std::string &text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

} // namespace

std::string dense::defineKernel(CudaEmitter &em, const std::string &hint, const std::string &text) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  const std::string name = "emb_d_" + hint + "_" + hash;
  std::string code = text;
  for (size_t at = code.find(kNamePlaceholder); at != std::string::npos;
       at = code.find(kNamePlaceholder, at + name.size()))
    code.replace(at, std::string(kNamePlaceholder).size(), name);
  // Keyed by the name's other part and the text itself: a (vanishingly
  // unlikely) hash collision gives two definitions of one name, which fails
  // to compile instead of silently sharing the wrong kernel.
  em.appendOnce("dense:" + hint + ":" + text, code);
  return name;
}

// --- Activations ------------------------------------------------------------------

namespace {

/// The device side of the activations: plan/ActivationMath.h's formulas,
/// stringized, with its tokens spelt the device way (f32 literals, expf,
/// tanhf, gelu's constants as the CPU's float constants round them), so
/// both backends evaluate the same operations in the same order. The text
/// around the formulas (and its comment naming DenseKernels.cpp) is kept
/// byte for byte as it was before the formulas moved to the header: a
/// program's text is part of the plan's fingerprint.
std::string activationHelpers() {
  std::string text = "\n"
    "// Activations and their gradients (runtime/lib/cpu/DenseKernels.cpp).\n"
    "__device__ __forceinline__ float emb_relu(float x) { return "
    EMB_ACT_STR(EMB_ACT_RELU(x)) "; }\n"
    "__device__ __forceinline__ float emb_sigmoid(float x) { return "
    EMB_ACT_STR(EMB_ACT_SIGMOID(x)) "; }\n"
    "__device__ __forceinline__ float emb_gelu(float v) {\n"
    "  return " EMB_ACT_STR(EMB_ACT_GELU(v)) ";\n"
    "}\n"
    "// dy * f'(x) from the activation's input; the kink of relu gets 0.\n"
    "__device__ __forceinline__ float emb_relu_grad(float dy, float x) { return "
    EMB_ACT_STR(EMB_ACT_RELU_GRAD(dy, x)) "; }\n"
    "__device__ __forceinline__ float emb_sigmoid_grad(float dy, float x) {\n"
    "  const float s = emb_sigmoid(x);\n"
    "  return " EMB_ACT_STR(EMB_ACT_SIGMOID_GRAD(dy, s)) ";\n"
    "}\n"
    "__device__ __forceinline__ float emb_tanh_grad(float dy, float x) {\n"
    "  const float t = " EMB_ACT_STR(EMB_ACT_TANH(x)) ";\n"
    "  return " EMB_ACT_STR(EMB_ACT_TANH_GRAD(dy, t)) ";\n"
    "}\n"
    "__device__ __forceinline__ float emb_gelu_grad(float dy, float v) {\n"
    "  const float s = " EMB_ACT_STR(EMB_ACT_GELU_S(v)) ";\n"
    "  const float dInner = " EMB_ACT_STR(EMB_ACT_GELU_DINNER(v)) ";\n"
    "  return " EMB_ACT_STR(EMB_ACT_GELU_GRAD(dy, v, s, dInner)) ";\n"
    "}\n"
    "// dy * f'(x) from the output y = f(x) (FusedDenseKernels.cpp).\n"
    "__device__ __forceinline__ float emb_sigmoid_grad_out(float dy, float y) {\n"
    "  return " EMB_ACT_STR(EMB_ACT_SIGMOID_GRAD(dy, y)) ";\n"
    "}\n"
    "__device__ __forceinline__ float emb_tanh_grad_out(float dy, float y) {\n"
    "  return " EMB_ACT_STR(EMB_ACT_TANH_GRAD(dy, y)) ";\n"
    "}\n";
  // The header's tokens, longest first where one is a prefix of another.
  const std::pair<const char *, std::string> tokens[] = {
      {"EMB_GELU_C2", floatLiteral(EMB_ACT_GELU_C2_VALUE)},
      {"EMB_GELU_A", floatLiteral(EMB_ACT_GELU_A_VALUE)},
      {"EMB_HALF", "0.5f"},
      {"EMB_EXP", "expf"},
      {"EMB_TANH", "tanhf"},
      {"EMB_0", "0.0f"},
      {"EMB_1", "1.0f"},
      {"EMB_3", "3.0f"}};
  for (const auto &[key, value] : tokens)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at))
      text.replace(at, std::string(key).size(), value);
  return text;
}

/// tanh's forward is inlined into kernels as a call, the header's formula.
std::string tanhCall(const std::string &x) {
  std::string call = EMB_ACT_STR(EMB_ACT_TANH(X));
  call.replace(call.find("EMB_TANH"), 8, "tanhf");
  call.replace(call.find("X"), 1, x);
  return call;
}

void useActivations(CudaEmitter &em) {
  em.appendOnce("emb_dense_activations", activationHelpers());
}

} // namespace

rt::Activation dense::checkActivation(const std::string &kind) {
  if (std::optional<rt::Activation> a = rt::parseEnum<rt::Activation>(kind))
    return *a;
  throw CodegenError("unknown activation '" + kind + "' (" + rt::enumChoices<rt::Activation>() +
                     ")");
}

std::string dense::activationExpr(CudaEmitter &em, const std::string &kind, const std::string &x) {
  const rt::Activation a = checkActivation(kind);
  if (a == rt::Activation::None)
    return x;
  useActivations(em);
  if (a == rt::Activation::Tanh)
    return tanhCall(x);
  return "emb_" + kind + "(" + x + ")";
}

std::string dense::activationGradExpr(CudaEmitter &em, const std::string &kind, bool fromOutput,
                                      const std::string &dy, const std::string &a) {
  const rt::Activation f = checkActivation(kind);
  if (f == rt::Activation::None)
    return dy;
  useActivations(em);
  if (!fromOutput)
    return "emb_" + kind + "_grad(" + dy + ", " + a + ")";
  if (f == rt::Activation::Gelu)
    throw CodegenError("gelu cannot be differentiated from its output");
  // relu's derivative reads the same from y = relu(x) as from x.
  if (f == rt::Activation::Relu)
    return "emb_relu_grad(" + dy + ", " + a + ")";
  return "emb_" + kind + "_grad_out(" + dy + ", " + a + ")";
}

// --- Generated elementwise kernels ----------------------------------------------------

void dense::emitElementwise(CudaEmitter &em, const Elementwise &s, rt::CudaKernel &out) {
  bool broadcast = false;
  for (const Elementwise::Input &in : s.inputs)
    broadcast |= in.broadcast;
  if (broadcast && (s.width < 1 || s.n % s.width != 0))
    throw CodegenError(std::to_string(s.n) + " elements are not whole rows of width " +
                       std::to_string(s.width));
  // float4 when every element group of 4 stays inside a row of the
  // broadcast operands and every address is 16-byte aligned.
  bool vec = s.n % 4 == 0 && (!broadcast || s.width % 4 == 0);
  for (const Elementwise::Input &in : s.inputs)
    vec = vec && aligned16(em, in.arg);
  for (const rt::CudaArg &o : s.outputs)
    vec = vec && aligned16(em, o);
  const int64_t count = vec ? s.n / 4 : s.n;
  constexpr int64_t kBlock = 256;
  const int64_t grid = gridFor(count, kBlock);
  const std::string idx = indexType(count + grid * kBlock);
  const std::string name = kNamePlaceholder;
  const size_t m = s.inputs.size();

  std::ostringstream k;
  // The per-element function: inputs by value, so an output that is also an
  // input is read before it is written.
  k << "__device__ __forceinline__ void " << name << "_f(";
  for (size_t i = 0; i < m; ++i)
    k << (i ? ", " : "") << "const float x" << i;
  for (size_t o = 0; o < s.outputs.size(); ++o)
    k << (m + o ? ", " : "") << "float &y" << o;
  k << ") {\n" << s.body << "}\n";
  k << "extern \"C\" __global__ void " << name << "(EmbArgs a) {\n";
  for (size_t i = 0; i < m; ++i)
    k << "  const float *p" << i << " = (const float *)a.p[" << i << "];\n";
  for (size_t o = 0; o < s.outputs.size(); ++o)
    k << "  float *q" << o << " = (float *)a.p[" << m + o << "];\n";
  k << "  for (" << idx << " i = (" << idx << ")blockIdx.x * blockDim.x + threadIdx.x; i < "
    << count << "; i += (" << idx << ")gridDim.x * blockDim.x) {\n";
  if (vec) {
    for (size_t i = 0; i < m; ++i)
      k << "    const float4 v" << i << " = ((const float4 *)p" << i << ")["
        << (s.inputs[i].broadcast ? "i % " + std::to_string(s.width / 4) : std::string("i"))
        << "];\n";
    for (size_t o = 0; o < s.outputs.size(); ++o)
      k << "    float4 w" << o << ";\n";
    for (const char *lane : {"x", "y", "z", "w"}) {
      k << "    " << name << "_f(";
      for (size_t i = 0; i < m; ++i)
        k << (i ? ", " : "") << "v" << i << "." << lane;
      for (size_t o = 0; o < s.outputs.size(); ++o)
        k << (m + o ? ", " : "") << "w" << o << "." << lane;
      k << ");\n";
    }
    for (size_t o = 0; o < s.outputs.size(); ++o)
      k << "    ((float4 *)q" << o << ")[i] = w" << o << ";\n";
  } else {
    for (size_t o = 0; o < s.outputs.size(); ++o)
      k << "    float w" << o << ";\n";
    k << "    " << name << "_f(";
    for (size_t i = 0; i < m; ++i)
      k << (i ? ", " : "") << "p" << i << "["
        << (s.inputs[i].broadcast ? "i % " + std::to_string(s.width) : std::string("i")) << "]";
    for (size_t o = 0; o < s.outputs.size(); ++o)
      k << (m + o ? ", " : "") << "w" << o;
    k << ");\n";
    for (size_t o = 0; o < s.outputs.size(); ++o)
      k << "    q" << o << "[i] = w" << o << ";\n";
  }
  k << "  }\n}\n";
  const std::string entry = defineKernel(em, s.hint, k.str());

  std::vector<rt::CudaArg> args;
  for (const Elementwise::Input &in : s.inputs)
    args.push_back(in.arg);
  args.insert(args.end(), s.outputs.begin(), s.outputs.end());
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, std::move(args), grid, kBlock));
}

// --- GEMMs ---------------------------------------------------------------------------

void dense::emitGemm(rt::CudaKernel &out, cu::GemmSpec spec, GemmOperand a, GemmOperand b,
                     rt::CudaArg c, std::optional<rt::CudaArg> bias) {
  if (a.ld)
    spec.lda = a.ld;
  if (b.ld)
    spec.ldb = b.ld;
  const bool wantsBias = rt::hasBias(spec.epilogue);
  if (wantsBias != bias.has_value())
    throw CodegenError("gemm epilogue '" + rt::enumString(spec.epilogue) + "' " +
                       (wantsBias ? "needs" : "takes no") + " bias argument");
  rt::CudaLaunch l;
  l.kind = "gemm";
  l.args = {a.arg, b.arg, c};
  if (bias)
    l.args.push_back(*bias);
  l.params = cu::gemmToJson(spec);
  out.launches.push_back(std::move(l));
}

std::vector<GemmOperand> dense::emitRoundedOperands(CudaEmitter &em, rt::CudaKernel &out,
                                                    runtime::DType abType,
                                                    const std::vector<MatrixOperand> &operands) {
  std::vector<GemmOperand> result;
  if (abType == runtime::DType::F32) {
    for (const MatrixOperand &op : operands)
      result.push_back(op.arg);
    return result;
  }
  const char *convert = abType == runtime::DType::BF16 ? "emb_float_to_bf16" : "emb_float_to_half";
  // One grid-stride loop over the operands one after another; each operand
  // moves 4 values per item (a float4 in, 8 bytes out) when its address
  // allows, else 1.
  const std::string name = kNamePlaceholder;
  std::ostringstream body;
  std::vector<rt::CudaArg> args;
  int64_t end = 0;
  for (size_t s = 0; s < operands.size(); ++s) {
    const MatrixOperand &op = operands[s];
    const rt::CudaArg arg = op.arg;
    const int64_t ld = (op.cols + 7) / 8 * 8;
    const int64_t rows = std::max(op.rows, op.storedRows);
    const bool padded = ld != op.cols || rows != op.rows;
    const int64_t n = padded ? rows * ld : op.rows * op.cols; // elements written
    const rt::CudaArg dst = CudaEmitter::scratchAt(em.scratch(rows * ld * 2));
    result.push_back(GemmOperand(dst, ld));
    args.push_back(arg);
    args.push_back(dst);
    const bool vec = !padded && n % 4 == 0 && aligned16(em, arg);
    const int64_t begin = end;
    end += vec ? n / 4 : n;
    const std::string src = "a.p[" + std::to_string(2 * s) + "]";
    const std::string to = "a.p[" + std::to_string(2 * s + 1) + "]";
    body << "    " << (s ? "else " : "") << "if (i < " << end << ") {\n"
         << "      const emb_i64 j = i - " << begin << ";\n";
    if (padded) // element (r, c) of the padded matrix: the value, or a zero pad
      body << "      const emb_i64 r = j / " << ld << ", c = j % " << ld << ";\n"
           << "      ((emb_u16 *)" << to << ")[j] = r < " << op.rows << " && c < " << op.cols
           << " ? " << convert << "(((const float *)" << src << ")[r * " << op.cols
           << " + c]) : (emb_u16)0;\n";
    else if (vec)
      body << "      const float4 f = ((const float4 *)" << src << ")[j];\n"
           << "      ((emb_u64 *)" << to << ")[j] = (emb_u64)" << convert << "(f.x) | ((emb_u64)"
           << convert << "(f.y) << 16) |\n"
           << "          ((emb_u64)" << convert << "(f.z) << 32) | ((emb_u64)" << convert
           << "(f.w) << 48);\n";
    else
      body << "      ((emb_u16 *)" << to << ")[j] = " << convert << "(((const float *)" << src
           << ")[j]);\n";
    body << "    }\n";
  }
  constexpr int64_t kBlock = 256;
  const int64_t grid = gridFor(end, kBlock);
  std::ostringstream k;
  k << "// Rounds GEMM operands to " << runtime::enumName(abType) << " (RNE, as the CPU's Rounding.h).\n"
    << "extern \"C\" __global__ void " << name << "(EmbArgs a) {\n"
    << "  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < " << end
    << "; i += (emb_i64)gridDim.x * blockDim.x) {\n"
    << body.str() << "  }\n}\n";
  const std::string entry = defineKernel(em, "round_" + runtime::enumString(abType), k.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, std::move(args), grid, kBlock));
  return result;
}

// --- Column sums ---------------------------------------------------------------------

void dense::emitColumnSums(CudaEmitter &em, const ColumnSum &s, rt::CudaKernel &out) {
  const int64_t B = s.rows, N = s.cols;
  if (B < 1 || N < 1)
    throw CodegenError("column sums of an empty " + std::to_string(B) + " x " + std::to_string(N) +
                       " matrix");
  // A block is TX columns x TY row lanes (256 threads, TX a power of two up
  // to a warp, so a warp reads whole row segments); narrow matrices put more
  // lanes on the rows.
  constexpr int64_t kBlock = 256;
  int64_t TX = 1;
  while (TX < N && TX < 32)
    TX *= 2;
  const int64_t TY = kBlock / TX;
  const int64_t tiles = (N + TX - 1) / TX;
  // Row chunks: at least 4 rows per thread, at most ~1024 blocks in all.
  constexpr int64_t kMaxBlocks = 1024, kMinRowsPerThread = 4;
  int64_t chunks = std::clamp<int64_t>((B + TY * kMinRowsPerThread - 1) / (TY * kMinRowsPerThread),
                                       1, std::max<int64_t>(1, kMaxBlocks / tiles));
  int64_t R = (B + chunks - 1) / chunks;
  R = (R + TY - 1) / TY * TY;
  chunks = (B + R - 1) / R;
  const bool direct = chunks == 1; // one chunk: the block's sum is the total
  const std::string idx = indexType(B * N);
  const std::string assign = s.accumulate ? " += " : " = ";

  const std::string name = kNamePlaceholder;
  std::string g = "dy[i]";
  if (s.gradKind)
    g = activationGradExpr(em, *s.gradKind, s.fromOutput, "dy[i]", "act[i]");
  std::ostringstream k;
  k << "// Column sums of a " << B << " x " << N << " matrix"
    << (s.gradKind ? " g = dy * f'(a) (stored)" : "") << ": block b sums rows [" << R << " * (b / "
    << tiles << "), +" << R << ") of " << TX
    << " columns;\n// lanes stride the rows, then a fixed tree adds them (deterministic).\n"
    << "extern \"C\" __global__ void " << name << "(EmbArgs a) {\n"
    << "  const float *dy = (const float *)a.p[0];\n";
  int next = 1;
  if (s.gradKind) {
    k << "  const float *act = (const float *)a.p[1];\n"
      << "  float *dz = (float *)a.p[2];\n";
    next = 3;
  }
  k << "  float *out = (float *)a.p[" << next << "];\n"
    << "  __shared__ float s[" << TY << "][" << TX << "];\n"
    << "  const int tile = blockIdx.x % " << tiles << ", chunk = blockIdx.x / " << tiles << ";\n"
    << "  const int tx = threadIdx.x % " << TX << ", ty = threadIdx.x / " << TX << ";\n"
    << "  const int col = tile * " << TX << " + tx;\n"
    << "  const int last = (chunk + 1) * " << R << ", end = last < " << B << " ? last : " << B
    << ";\n"
    << "  float sum = 0.0f;\n"
    << "  if (col < " << N << ")\n"
    << "    for (int r = chunk * " << R << " + ty; r < end; r += " << TY << ") {\n"
    << "      const " << idx << " i = (" << idx << ")r * " << N << " + col;\n"
    << "      const float g = " << g << ";\n";
  if (s.gradKind)
    k << "      dz[i] = g;\n";
  k << "      sum += g;\n"
    << "    }\n"
    << "  s[ty][tx] = sum;\n"
    << "  __syncthreads();\n"
    << "  for (int h = " << TY / 2 << "; h > 0; h >>= 1) {\n"
    << "    if (ty < h) s[ty][tx] += s[ty + h][tx];\n"
    << "    __syncthreads();\n"
    << "  }\n"
    << "  if (ty == 0 && col < " << N << ") out["
    << (direct ? std::string("col]") + assign
               : "(" + indexType(chunks * N) + ")chunk * " + std::to_string(N) + " + col] = ")
    << "s[0][tx];\n"
    << "}\n";
  const std::string entry = defineKernel(em, s.hint + "_colsum", k.str());

  std::vector<rt::CudaArg> args = {s.dy};
  if (s.gradKind) {
    args.push_back(s.act);
    args.push_back(s.dz);
  }
  if (direct) {
    args.push_back(s.db);
    out.launches.push_back(CudaEmitter::kernelLaunch(entry, std::move(args), tiles, kBlock));
    return;
  }
  const rt::CudaArg partials = CudaEmitter::scratchAt(em.scratch(chunks * N * 4));
  args.push_back(partials);
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, std::move(args), tiles * chunks, kBlock));

  // Second pass: each column's partials in chunk order.
  const std::string total = kNamePlaceholder;
  std::ostringstream t;
  t << "extern \"C\" __global__ void " << total << "(EmbArgs a) {\n"
    << "  const float *part = (const float *)a.p[0];\n"
    << "  float *db = (float *)a.p[1];\n"
    << "  const int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
    << "  if (col >= " << N << ") return;\n"
    << "  float sum = part[col];\n"
    << "  for (int c = 1; c < " << chunks << "; ++c) sum += part[(" << indexType(chunks * N)
    << ")c * " << N << " + col];\n"
    << "  db[col]" << assign << "sum;\n"
    << "}\n";
  const std::string totalEntry = defineKernel(em, s.hint + "_colsum_total", t.str());
  constexpr int64_t kTotalBlock = 128;
  out.launches.push_back(CudaEmitter::kernelLaunch(
      totalEntry, {partials, s.db}, (N + kTotalBlock - 1) / kTotalBlock, kTotalBlock));
}
