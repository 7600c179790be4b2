//===- ModelLowering.cpp - the model family's registration and helpers ----===//
//
// registerModelLowerings() collects the interaction, dot and loss lowerings
// from their files; the rest of this file is what they and the optimizer
// lowerings share (ModelLowering.h).
//
//===----------------------------------------------------------------------===//

#include "ModelLowering.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;
namespace rt = embc::runtime;

void embc::codegen::registerModelLowerings(LoweringTable &table) {
  registerInteractionLowerings(table);
  registerDotLowerings(table);
  registerLossLowerings(table);
}

// --- Text ---------------------------------------------------------------------------

std::string model::subst(const std::string &text, const Vars &vars) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out += text[i];
      continue;
    }
    // $NAME, or ${NAME} where letters follow it ("${NAME}_f").
    const bool braced = i + 1 < text.size() && text[i + 1] == '{';
    size_t j = i + (braced ? 2 : 1);
    const size_t begin = j;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
      ++j;
    const std::string name = text.substr(begin, j - begin);
    if (braced && (j >= text.size() || text[j] != '}'))
      throw CodegenError("internal: unterminated template placeholder '${" + name + "'");
    auto it = vars.find(name);
    if (name.empty() || it == vars.end())
      throw CodegenError("internal: template placeholder '$" + name + "' has no value");
    out += it->second;
    i = braced ? j : j - 1;
  }
  return out;
}

std::string model::lit(int64_t v) {
  const bool small = v >= -(int64_t(1) << 31) + 1 && v < (int64_t(1) << 31);
  return std::to_string(v) + (small ? "" : "ll");
}

std::string model::dlit(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", v);
  std::string s = text;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

// --- Attributes and operands -----------------------------------------------------------

double model::realAttr(const rt::Kernel &k, const char *name) {
  auto it = k.attrs.find(name);
  if (it == k.attrs.end() || !it->is_number())
    throw CodegenError(std::string("missing numeric attribute '") + name + "'");
  return it->get<double>();
}

std::vector<int64_t> model::intsAttr(const rt::Kernel &k, const char *name) {
  auto it = k.attrs.find(name);
  if (it == k.attrs.end() || !it->is_array())
    throw CodegenError(std::string("missing integer-list attribute '") + name + "'");
  std::vector<int64_t> out;
  for (const auto &v : *it) {
    if (!v.is_number_integer())
      throw CodegenError(std::string("attribute '") + name + "' holds a non-integer");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

int64_t model::numel(const rt::Buffer &b) {
  int64_t n = 1;
  for (int64_t d : b.shape)
    n *= d;
  return n;
}

const rt::Buffer &model::f32(const CudaEmitter &em, int32_t id, const std::string &what) {
  if (id < 0 || size_t(id) >= em.plan().buffers.size())
    throw CodegenError(what + ": buffer " + std::to_string(id) + " is not in the plan");
  const rt::Buffer &b = em.buffer(id);
  if (b.dtype != rt::DType::F32)
    throw CodegenError(what + " '" + b.name + "' is " + rt::dtypeName(b.dtype) +
                       ", expected f32");
  if (b.shape.empty())
    throw CodegenError(what + " '" + b.name + "' has no shape");
  return b;
}

const rt::Buffer &model::f32Matrix(const CudaEmitter &em, int32_t id, int64_t rows,
                                   int64_t cols, const std::string &what) {
  const rt::Buffer &b = f32(em, id, what);
  auto text = [](int64_t v, const char *any) { return v >= 0 ? std::to_string(v) : any; };
  if (b.shape.size() != 2 || (rows >= 0 && b.shape[0] != rows) ||
      (cols >= 0 && b.shape[1] != cols)) {
    std::string shape;
    for (size_t i = 0; i < b.shape.size(); ++i)
      shape += (i ? " x " : "") + std::to_string(b.shape[i]);
    throw CodegenError(what + " '" + b.name + "' is [" + shape + "], expected " +
                       text(rows, "B") + " x " + text(cols, "N"));
  }
  if (b.shape[0] < 1 || b.shape[1] < 1)
    throw CodegenError(what + " '" + b.name + "' is empty");
  return b;
}

void model::expectCounts(const rt::Kernel &k, size_t ins, size_t outs) {
  if (k.inputs.size() != ins || k.outputs.size() != outs)
    throw CodegenError("expected " + std::to_string(ins) + " inputs and " + std::to_string(outs) +
                       " outputs, got " + std::to_string(k.inputs.size()) + " and " +
                       std::to_string(k.outputs.size()));
}

std::string model::computeOf(const rt::Kernel &k) {
  auto it = k.attrs.find("compute");
  if (it == k.attrs.end())
    return "f32";
  if (!it->is_string())
    throw CodegenError("attribute 'compute' is not a string");
  const std::string c = it->get<std::string>();
  if (c == "fp32")
    return "f32";
  if (c == "bf16")
    return "bf16";
  if (c == "fp16")
    return "f16";
  throw CodegenError("unknown compute type '" + c + "' (expected fp32, bf16 or fp16)");
}

std::string model::roundExpr(const std::string &compute, const std::string &x) {
  if (compute == "bf16")
    return "emb_bf16_to_float(emb_float_to_bf16(" + x + "))";
  if (compute == "f16")
    return "emb_half_to_float(emb_float_to_half(" + x + "))";
  return x;
}

bool model::aligned16(const CudaEmitter &em, const rt::CudaArg &arg) {
  if (arg.buffer < 0)
    return arg.scratch >= 0 && arg.scratch % 16 == 0;
  // Every slot (micro-batch copy) must keep the alignment, and so must the
  // parent of a view (its offset is absolute in the arena either way).
  auto keeps = [](const rt::Buffer &b) {
    return b.offset % 16 == 0 && (b.slots == 1 || b.bytes % 16 == 0);
  };
  const rt::Buffer &b = em.buffer(arg.buffer);
  return keeps(b) && (b.parent < 0 || keeps(em.buffer(b.parent)));
}

int64_t model::gridFor(int64_t count, int64_t block) {
  // Twice an H200's resident blocks at 256 threads (132 SMs x 8 x 2); a
  // grid-stride loop covers the rest.
  constexpr int64_t kMaxBlocks = 2112;
  return std::clamp<int64_t>((count + block - 1) / block, 1, kMaxBlocks);
}

// --- Device helpers -------------------------------------------------------------------

namespace {

const char *kHelpers = R"CUDA(
// --- Model and optimizer helpers (passes/lib/cuda/ModelLowering.cpp) ---
// Four floats moved as one 16-byte access.
struct alignas(16) emb_mf4 { float x, y, z, w; };
// log(1 + x) for x >= 0 without log1p: Goldberg's correction makes
// logf(1 + x) accurate to a few ulp even when 1 + x rounds (tiny x).
__device__ __forceinline__ float emb_log1pf(float x) {
  const float u = 1.0f + x;
  if (u == 1.0f) return x;
  return logf(u) * (x / (u - 1.0f));
}
// log(1 + exp(-|x|)): the part of softplus(x) = max(x, 0) + log1p(exp(-|x|))
// that is not exact, in f32 (the caller adds the exact part in double).
__device__ __forceinline__ float emb_softplus_tail(float x) {
  return emb_log1pf(expf(-fabsf(x)));
}
// 1 / (1 + exp(-x)) without overflow (LossKernels.cpp stableSigmoid).
__device__ __forceinline__ float emb_stable_sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
  const float e = expf(x);
  return e / (1.0f + e);
}
// beta^t in double by squaring (Adam's bias corrections).
__device__ __forceinline__ double emb_powi_f64(double b, emb_i64 t) {
  double r = 1.0;
  while (t > 0) {
    if (t & 1) r *= b;
    b *= b;
    t >>= 1;
  }
  return r;
}
// sqrt in double: sqrtf, then one Newton step in double (~1e-15 relative).
__device__ __forceinline__ double emb_sqrt_f64(double x) {
  const double y = (double)sqrtf((float)x);
  if (!(y > 0.0) || isinf(y)) return y;
  return 0.5 * (y + x / y);
}
// The sum of v over the block in a fixed order (a butterfly within each
// warp, then the warp totals in warp order), so it is deterministic.
// blockDim.x must be a multiple of 32; every thread gets the total. `red`
// is 32 doubles of the caller's shared memory.
__device__ __forceinline__ double emb_block_sum_f64(double v, double *red) {
  v = emb_warp_sum_f64(v);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  double t = 0.0;
  for (int w = 0; w < (int)(blockDim.x >> 5); ++w) t += red[w];
  return t;
}
)CUDA";

} // namespace

void model::useHelpers(CudaEmitter &em) { em.appendOnce("emb_model_helpers", kHelpers); }

// --- Segmented launches -------------------------------------------------------------------

SegmentPlan model::planSegments(const std::vector<Segment> &segs, int64_t block,
                                int64_t maxBlocks) {
  SegmentPlan p;
  for (const Segment &s : segs) {
    const int64_t items = s.vec ? s.elements / 4 : s.elements;
    // About 8 items per thread, at most maxBlocks per segment.
    const int64_t n = std::clamp<int64_t>((items + block * 8 - 1) / (block * 8), 1, maxBlocks);
    p.first.push_back(p.blocks);
    p.count.push_back(n);
    p.blocks += n;
  }
  return p;
}

std::vector<Segment> model::gradSegments(const CudaEmitter &em, const std::vector<int32_t> &ids,
                                         const std::string &what) {
  std::vector<Segment> segs;
  for (int32_t id : ids) {
    const rt::Buffer &b = f32(em, id, what);
    Segment s;
    s.buffer = CudaEmitter::buf(id);
    s.elements = numel(b);
    s.rowElements = b.shape[0] > 0 ? s.elements / b.shape[0] : 0;
    s.dynamic = b.dynamic;
    // A dynamic buffer's live part is whole rows: float4 needs rows of 4.
    s.vec = s.elements % 4 == 0 && aligned16(em, s.buffer) && (!s.dynamic || s.rowElements % 4 == 0);
    segs.push_back(s);
  }
  return segs;
}
