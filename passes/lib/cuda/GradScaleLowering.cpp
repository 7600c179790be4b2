//===- GradScaleLowering.cpp - clip_grad_norm and unscale_grads -----------===//
//
// The two update kernels that look at every gradient at once
// (docs/plan-format.md): dense gradients whole, sparse gradient values over
// their filled rows (the length cell of the buffer). Both run as one
// "segmented" grid: each gradient owns a fixed range of blocks that
// grid-stride over it (ModelLowering.h planSegments), so the launch is the
// same every step whatever the sparse lengths (CUDA graphs).
//
//  - clip_grad_norm: each block writes its sum of squares (double, fixed
//    order within the block) to scratch; one block then adds the partial
//    sums in block order and writes LossKernels' clip scale
//    min(1, max_norm / (norm x grad_scale + 1e-6)). Deterministic; the
//    CPU's sum is also double, in another fixed order (~1e-16 apart).
//  - unscale_grads: grad *= 1 / S (S = a.step->lossScale, the inverse
//    rounded to f32 as the CPU does) and any non-finite result sets
//    a.step->skip, which every later update kernel tests; the host then
//    applies the scale policy (backoff / growth).
//
//===----------------------------------------------------------------------===//

#include "ModelLowering.h"

#include "embc/runtime/cuda/KernelAbi.h"

#include <sstream>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;

namespace {

/// Blocks a single gradient may get.
constexpr int64_t kMaxSegmentBlocks = 512;

/// One launch's share of the segments: args are the buffers, then the
/// length cells of the dynamic ones, then `extra` args.
struct Group {
  std::vector<Segment> segs;
};

/// Splits segments into launches that fit EmbArgs with `extra` more args.
std::vector<Group> groupSegments(const std::vector<Segment> &segs, size_t extra) {
  std::vector<Group> groups(1);
  size_t used = 0;
  for (const Segment &s : segs) {
    const size_t need = s.dynamic ? 2 : 1;
    if (used + need + extra > size_t(EMB_MAX_ARGS) && !groups.back().segs.empty()) {
      groups.emplace_back();
      used = 0;
    }
    groups.back().segs.push_back(s);
    used += need;
  }
  return groups;
}

/// The if-chain that hands each block its segment: calls
/// CALL(ptr, n, blockInSegment, blocksOfSegment EXTRA) with the segment's
/// pointer as `float *` (or emb_mf4 * when vectorised: CALLV) and its live
/// count (in emb_mf4 then).
std::string segmentChain(const Group &g, const SegmentPlan &plan, const std::string &call,
                         const std::string &callVec, const std::string &extra = "") {
  std::ostringstream o;
  size_t lengthArg = g.segs.size();
  for (size_t s = 0; s < g.segs.size(); ++s) {
    const Segment &seg = g.segs[s];
    const int64_t end = plan.first[s] + plan.count[s];
    o << "  " << (s ? "else " : "") << "if (blockIdx.x < " << end << ") {\n";
    if (seg.dynamic) {
      o << "    emb_i64 n = *(const emb_i64 *)a.p[" << lengthArg++ << "] * " << seg.rowElements
        << ";\n    if (n > " << seg.elements << ") n = " << seg.elements
        << ";\n    if (n < 0) n = 0;\n";
    } else {
      o << "    const emb_i64 n = " << seg.elements << ";\n";
    }
    const std::string &c = seg.vec ? callVec : call;
    o << "    " << c << "(" << (seg.vec ? "(emb_mf4 *)" : "(float *)") << "a.p[" << s << "], "
      << (seg.vec ? "n / 4" : "n") << ", blockIdx.x - " << plan.first[s] << ", " << plan.count[s] << extra
      << ");\n  }\n";
  }
  return o.str();
}

std::vector<rt::CudaArg> segmentArgs(const Group &g) {
  std::vector<rt::CudaArg> args;
  for (const Segment &s : g.segs)
    args.push_back(s.buffer);
  for (const Segment &s : g.segs)
    if (s.dynamic)
      args.push_back(CudaEmitter::lengthOf(s.buffer.buffer));
  return args;
}

void lowerClipGradNorm(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.inputs.empty() || k.outputs.size() != 1)
    throw CodegenError("expected at least 1 gradient input and 1 output, got " +
                       std::to_string(k.inputs.size()) + " and " +
                       std::to_string(k.outputs.size()));
  const double maxNorm = realAttr(k, "max_norm"), gradScale = realAttr(k, "grad_scale");
  if (numel(f32Buffer(em, k.outputs[0], "clip scale")) < 1)
    throw CodegenError("the clip scale output is empty");
  useHelpers(em);
  const std::vector<Segment> segs = gradSegments(em, k.inputs, "gradient");
  const std::vector<Group> groups = groupSegments(segs, 1);

  std::vector<SegmentPlan> plans;
  int64_t partials = 0;
  for (const Group &g : groups) {
    plans.push_back(planSegments(g.segs, kBlock, kMaxSegmentBlocks));
    partials += plans.back().blocks;
  }
  const int64_t partialAt = em.scratch(partials * 8);

  // Level 1: per block, the sum of squares of its share.
  const std::string sq = em.entryName("clip_sumsq");
  em.append(subst(R"CUDA(
// $NAME: sums of squares of the gradients, one per block (clip_grad_norm).
__device__ __forceinline__ double ${NAME}_f(const float *p, emb_i64 n, emb_i64 b, emb_i64 nb) {
  double s = 0.0;
  for (emb_i64 i = b * blockDim.x + threadIdx.x; i < n; i += nb * blockDim.x) {
    const double v = p[i];
    s += v * v;
  }
  return s;
}
__device__ __forceinline__ double ${NAME}_v(const emb_mf4 *p, emb_i64 n, emb_i64 b, emb_i64 nb) {
  double s = 0.0;
  for (emb_i64 i = b * blockDim.x + threadIdx.x; i < n; i += nb * blockDim.x) {
    const emb_mf4 q = p[i];
    const double x = q.x, y = q.y, z = q.z, w = q.w;
    s += x * x + y * y + z * z + w * w;
  }
  return s;
}
)CUDA",
                  {{"NAME", sq}}));
  int64_t base = 0;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group &g = groups[gi];
    const SegmentPlan &plan = plans[gi];
    const std::string name = gi == 0 ? sq : em.entryName("clip_sumsq");
    std::vector<rt::CudaArg> args = segmentArgs(g);
    const size_t partialArg = args.size();
    args.push_back(CudaEmitter::scratchAt(partialAt));
    em.append(subst(R"CUDA(extern "C" __global__ void $NAME(EmbArgs a) {
  __shared__ double red[32];
  if (a.step->skip) return;
  double s = 0.0;
$CHAIN  s = emb_block_sum_f64(s, red);
  if (threadIdx.x == 0) ((double *)a.p[$PARG])[$BASE + blockIdx.x] = s;
}
)CUDA",
                    {{"NAME", name},
                     {"CHAIN", segmentChain(g, plan, "s = " + sq + "_f", "s = " + sq + "_v")},
                     {"PARG", std::to_string(partialArg)},
                     {"BASE", lit(base)}}));
    out.launches.push_back(CudaEmitter::kernelLaunch(name, std::move(args), plan.blocks, kBlock));
    base += plan.blocks;
  }

  // Level 2: the partial sums in block order, then the scale.
  const std::string fin = em.entryName("clip_scale");
  em.append(subst(R"CUDA(
// $NAME: scale = min(1, max_norm / (norm x grad_scale + 1e-6)) (clip_grad_norm).
extern "C" __global__ void $NAME(EmbArgs a) {
  __shared__ double red[32];
  if (a.step->skip) return;
  const double *part = (const double *)a.p[0];
  double s = 0.0;
  for (int i = threadIdx.x; i < $PARTIALS; i += blockDim.x) s += part[i];
  s = emb_block_sum_f64(s, red);
  if (threadIdx.x == 0) {
    const double norm = emb_sqrt_f64(s) * $GSCALE;
    const double r = $MAXNORM / (norm + 1e-6);
    *(float *)a.p[1] = (float)(r < 1.0 ? r : 1.0);
  }
}
)CUDA",
                  {{"NAME", fin},
                   {"PARTIALS", lit(partials)},
                   {"GSCALE", doubleLiteral(gradScale)},
                   {"MAXNORM", doubleLiteral(maxNorm)}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      fin, {CudaEmitter::scratchAt(partialAt), CudaEmitter::buf(k.outputs[0])}, 1, kBlock));
}

void lowerUnscaleGrads(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (!em.plan().config.lossScaling.enabled)
    throw CodegenError("the plan's config.loss_scaling is disabled; unscale_grads needs it");
  if (!k.inputs.empty() || k.outputs.empty())
    throw CodegenError("expected no inputs and at least one gradient output, got " +
                       std::to_string(k.inputs.size()) + " and " +
                       std::to_string(k.outputs.size()));
  for (int32_t o : k.outputs)
    if (f32Buffer(em, o, "gradient").role != rt::BufferRole::Grad)
      throw CodegenError("output '" + em.buffer(o).name + "' is not a gradient");
  useHelpers(em);
  const std::vector<Segment> segs = gradSegments(em, k.outputs, "gradient");
  const std::string fn = em.entryName("unscale");
  em.append(subst(R"CUDA(
// $NAME: grad *= 1 / S in place; a non-finite result skips the update.
__device__ __forceinline__ bool ${NAME}_f(float *p, emb_i64 n, emb_i64 b, emb_i64 nb, float inv) {
  bool bad = false;
  for (emb_i64 i = b * blockDim.x + threadIdx.x; i < n; i += nb * blockDim.x) {
    const float v = p[i] * inv;
    p[i] = v;
    bad = bad || !isfinite(v);
  }
  return bad;
}
__device__ __forceinline__ bool ${NAME}_v(emb_mf4 *p, emb_i64 n, emb_i64 b, emb_i64 nb, float inv) {
  bool bad = false;
  for (emb_i64 i = b * blockDim.x + threadIdx.x; i < n; i += nb * blockDim.x) {
    emb_mf4 q = p[i];
    q.x *= inv;
    q.y *= inv;
    q.z *= inv;
    q.w *= inv;
    p[i] = q;
    bad = bad || !isfinite(q.x) || !isfinite(q.y) || !isfinite(q.z) || !isfinite(q.w);
  }
  return bad;
}
)CUDA",
                  {{"NAME", fn}}));
  for (const Group &g : groupSegments(segs, 0)) {
    const SegmentPlan plan = planSegments(g.segs, kBlock, kMaxSegmentBlocks);
    const std::string name = em.entryName(k.op);
    const std::string chain =
        segmentChain(g, plan, "bad = " + fn + "_f", "bad = " + fn + "_v", ", inv");
    em.append(subst(R"CUDA(extern "C" __global__ void $NAME(EmbArgs a) {
  // The CPU's float(1.0 / S), S in double there (a power of two in practice).
  const float inv = (float)(1.0 / (double)a.step->lossScale);
  bool bad = false;
$CHAIN  if (bad) a.step->skip = 1;
}
)CUDA",
                    {{"NAME", name}, {"CHAIN", chain}}));
    out.launches.push_back(CudaEmitter::kernelLaunch(name, segmentArgs(g), plan.blocks, kBlock));
  }
}

} // namespace

EMBC_CUDA_LOWERING(ClipGradNorm, lowerClipGradNorm)
EMBC_CUDA_LOWERING(UnscaleGrads, lowerUnscaleGrads)
