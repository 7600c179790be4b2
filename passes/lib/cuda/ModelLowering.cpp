//===- ModelLowering.cpp - what the model family's lowerings share --------===//
//
// What the interaction, dot, loss and optimizer lowerings share
// (ModelLowering.h).
//
//===----------------------------------------------------------------------===//

#include "ModelLowering.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;

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

std::string model::roundExpr(runtime::DType compute, const std::string &x) {
  if (compute == runtime::DType::BF16)
    return "emb_bf16_to_float(emb_float_to_bf16(" + x + "))";
  if (compute == runtime::DType::F16)
    return "emb_half_to_float(emb_float_to_half(" + x + "))";
  return x;
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
    const rt::Buffer &b = f32Buffer(em, id, what);
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
