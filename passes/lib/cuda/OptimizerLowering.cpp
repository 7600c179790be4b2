//===- OptimizerLowering.cpp - dense optimizer updates --------------------===//
//
// update_param and update_packed (docs/plan-format.md), with the formulas of
// runtime/lib/cpu/OptimizerRow.h expression for expression (f32, in the
// CPU's order; the scalars of makeHyper computed in double from the step's
// lrScale and optimizerStep, then rounded to f32). Every kernel returns at
// once when a.step->skip is set (unscale_grads found an overflow).
//
//  - sgd (with or without momentum), adagrad, adam, adamw: one elementwise
//    kernel over the whole parameter or pack (float4 where aligned); a
//    pack's alignment gaps hold zeros and stay zero, as on the CPU.
//  - lamb, per member (its trust ratio is per parameter): moments + the
//    block sums of w^2 and r^2 (double), then one block per member adds
//    its partial sums in block order (deterministic) into the trust ratio,
//    then the step.
//  - rowwise_adagrad: one warp per row (the last dimension of each
//    member); the mean squared gradient is a double warp sum.
//
// clip_grad_norm and unscale_grads are in GradScaleLowering.cpp.
//
//===----------------------------------------------------------------------===//

#include "ModelLowering.h"

#include <algorithm>
#include <sstream>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;

namespace {

struct Opt {
  rt::OptimizerKind kind = rt::OptimizerKind::Sgd;
  rt::Optimizer p;
  int states = 0;
  bool coupled = false, decoupled = false;
  bool adamFamily() const { return kind == rt::OptimizerKind::Adam || kind == rt::OptimizerKind::AdamW || kind == rt::OptimizerKind::Lamb; }
  bool perMember() const { return kind == rt::OptimizerKind::Lamb || kind == rt::OptimizerKind::RowwiseAdagrad; }
};

Opt optOf(const rt::Optimizer &p) {
  Opt o;
  o.kind = p.kind;
  o.p = p;
  o.states = int(p.stateBuffers());
  const bool hasDecay = p.weightDecay != 0;
  o.coupled = hasDecay && o.kind != rt::OptimizerKind::AdamW && o.kind != rt::OptimizerKind::Lamb;
  o.decoupled = hasDecay && o.kind == rt::OptimizerKind::AdamW;
  return o;
}

/// One parameter of the update: where its values start in the buffer, how
/// many, its row length (rowwise_adagrad) and its first accumulator.
struct Member {
  int64_t offset = 0, n = 0, rowLength = 1, stateOffset = 0;
};

/// What one update kernel is lowered from.
struct Update {
  std::string name; ///< param or pack, for comments and kernel names
  Opt opt;
  int64_t n = 0; ///< values of the buffer (the whole pack)
  std::vector<Member> members;
  bool clipped = false;
  double gradScale = 1;
  std::vector<rt::CudaArg> args; ///< grad, [scale], values, states...
};

/// makeHyper's scalars as f32 locals LR, GS, DS, IB1, IB2 (and the early
/// return on a skipped update).
std::string hyperCode(const Update &u) {
  const Opt &o = u.opt;
  std::string code = subst(R"CUDA(  if (a.step->skip) return;
  const double emb_lr = $LRD * (double)a.step->lrScale;
  const float LR = (float)emb_lr;
  const float GS = (float)($GSD * $CLIP);
  const float DS = (float)(1.0 - emb_lr * $WDD);
)CUDA",
                           {{"LRD", doubleLiteral(o.p.lr)},
                            {"GSD", doubleLiteral(u.gradScale)},
                            {"CLIP", u.clipped ? "(double)*(const float *)a.p[1]" : "1.0"},
                            {"WDD", doubleLiteral(o.p.weightDecay)}});
  if (o.adamFamily())
    code += subst(R"CUDA(  const float IB1 = (float)(1.0 / (1.0 - emb_powi_f64($B1D, a.step->optimizerStep)));
  const float IB2 = (float)(1.0 / (1.0 - emb_powi_f64($B2D, a.step->optimizerStep)));
)CUDA",
                  {{"B1D", doubleLiteral(o.p.beta1)}, {"B2D", doubleLiteral(o.p.beta2)}});
  else
    code += "  const float IB1 = 0.0f, IB2 = 0.0f;\n";
  return code + "  (void)LR; (void)GS; (void)DS; (void)IB1; (void)IB2;\n";
}

Vars constants(const Opt &o) {
  return {{"WD", floatLiteral(o.coupled ? o.p.weightDecay : 0.0)},
          {"LWD", floatLiteral(o.p.weightDecay)},
          {"MOM", floatLiteral(o.p.momentum)},
          {"B1", floatLiteral(o.p.beta1)},
      {"OMB1", floatLiteral(1.0 - o.p.beta1)}, // 1 - beta in double, as the bias correction
          {"B2", floatLiteral(o.p.beta2)},
      {"OMB2", floatLiteral(1.0 - o.p.beta2)},
          {"EPS", floatLiteral(o.p.eps)},
          {"SC", o.decoupled ? "DS" : "1.0f"}};
}

int outArg(const Update &u, int i) { return (u.clipped ? 2 : 1) + i; }

/// The finite check's error of update `u` (CudaEmitter::nonFiniteCode).
int nonFiniteCode(CudaEmitter &em, const Update &u) {
  return em.nonFiniteCode("an update of '" + u.name + "' left element {} not finite (NaN or "
                          "infinity in its values or optimizer state)");
}

// --- Elementwise optimizers --------------------------------------------------------

void emitElementwise(CudaEmitter &em, const Update &u, rt::CudaKernel &out) {
  const Opt &o = u.opt;
  std::string body;
  if (o.kind == rt::OptimizerKind::Sgd && o.p.momentum == 0)
    body = "w -= LR * (GS * g + $WD * w);";
  else if (o.kind == rt::OptimizerKind::Sgd)
    body = "m = $MOM * m + (GS * g + $WD * w);\n  w -= LR * m;";
  else if (o.kind == rt::OptimizerKind::Adagrad)
    body = "const float gi = GS * g + $WD * w;\n  m += gi * gi;\n"
           "  w -= LR * gi / (sqrtf(m) + $EPS);";
  else // adam, adamw
    body = "const float gi = GS * g + $WD * w;\n"
           "  m = $B1 * m + $OMB1 * gi;\n"
           "  v = $B2 * v + $OMB2 * gi * gi;\n"
           "  const float mh = m * IB1, vh = v * IB2;\n"
           "  w = $SC * w - LR * mh / (sqrtf(vh) + $EPS);";
  // float4 when every array is 16-byte aligned (the clip scale, one float,
  // is read as a scalar).
  bool vec = u.n % 4 == 0;
  for (size_t i = 0; i < u.args.size(); ++i)
    if (!(u.clipped && i == 1))
      vec = vec && aligned16(em, u.args[i]);
  const int64_t count = vec ? u.n / 4 : u.n;
  const std::string name = em.entryName("update_" + u.name);
  const std::string T = vec ? "emb_mf4" : "float";
  std::ostringstream loop;
  loop << "    " << T << " w = W[i], m, v;\n    const " << T << " g = G[i];\n";
  loop << "    " << (o.states >= 1 ? "m = M[i];" : "m = w;") << "\n";
  loop << "    " << (o.states >= 2 ? "v = V[i];" : "v = w;") << "\n";
  if (vec)
    for (const char *c : {"x", "y", "z", "w"})
      loop << "    " << name << "_e(w." << c << ", g." << c << ", m." << c << ", v." << c
           << ", LR, GS, DS, IB1, IB2);\n";
  else
    loop << "    " << name << "_e(w, g, m, v, LR, GS, DS, IB1, IB2);\n";
  // The finite check of every update: the first value (of a vector) that the
  // step left NaN or infinite, in the values or the state, reports its index.
  const std::string code = std::to_string(nonFiniteCode(em, u));
  for (int c = 0; c < (vec ? 4 : 1); ++c) {
    const std::string at = vec ? std::string(".") + "xyzw"[c] : "";
    loop << "    if (!(isfinite(w" << at << ")" << (o.states >= 1 ? " && isfinite(m" + at + ")" : "")
         << (o.states >= 2 ? " && isfinite(v" + at + ")" : "") << ")) emb_set_error(a.step, "
         << code << ", " << (vec ? "4 * i + " + std::to_string(c) : "i") << ");\n";
  }
  if (o.states >= 1)
    loop << "    M[i] = m;\n";
  if (o.states >= 2)
    loop << "    V[i] = v;\n";
  loop << "    W[i] = w;\n";
  Vars v = constants(o);
  v["NAME"] = name;
  v["OPT"] = rt::enumString(o.kind);
  v["WHAT"] = u.name;
  v["BODY"] = subst(body, constants(o));
  v["HYPER"] = hyperCode(u);
  v["T"] = T;
  v["WARG"] = std::to_string(outArg(u, 0));
  v["MDECL"] = o.states >= 1 ? T + " *M = (" + T + " *)a.p[" + std::to_string(outArg(u, 1)) + "];" : "";
  v["VDECL"] = o.states >= 2 ? T + " *V = (" + T + " *)a.p[" + std::to_string(outArg(u, 2)) + "];" : "";
  v["COUNT"] = lit(count);
  v["LOOP"] = loop.str();
  em.append(subst(R"CUDA(
// $NAME: $OPT step of '$WHAT' (OptimizerRow.h).
__device__ __forceinline__ void ${NAME}_e(float &w, const float g, float &m, float &v,
    const float LR, const float GS, const float DS, const float IB1, const float IB2) {
  (void)m; (void)v; (void)DS; (void)IB1; (void)IB2;
  $BODY
}
extern "C" __global__ void $NAME(EmbArgs a) {
$HYPER  const $T *G = (const $T *)a.p[0];
  $T *W = ($T *)a.p[$WARG];
  $MDECL
  $VDECL
  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < $COUNT;
       i += (emb_i64)gridDim.x * blockDim.x) {
$LOOP  }
}
)CUDA",
                  v));
  out.launches.push_back(CudaEmitter::kernelLaunch(name, u.args, gridFor(count, kBlock), kBlock));
}

// --- LAMB ------------------------------------------------------------------------------

/// The if-chain giving a block its member: m (index), off, n, bb (block in
/// the member), nb (the member's blocks).
std::string memberChain(const std::vector<Member> &ms, const std::vector<int64_t> &first,
                        const std::vector<int64_t> &count) {
  std::ostringstream o;
  o << "  int mi = 0;\n  emb_i64 off = 0, n = 0, bb = 0, nb = 1;\n";
  for (size_t i = 0; i < ms.size(); ++i)
    o << "  " << (i ? "else " : "") << "if (blockIdx.x < " << first[i] + count[i] << ") { mi = "
      << i << "; off = " << ms[i].offset << "; n = " << ms[i].n << "; bb = blockIdx.x - "
      << first[i] << "; nb = " << count[i] << "; }\n";
  o << "  (void)mi;\n";
  return o.str();
}

void emitLamb(CudaEmitter &em, const Update &u, rt::CudaKernel &out) {
  useHelpers(em);
  std::vector<int64_t> first, count;
  int64_t blocks = 0;
  for (const Member &m : u.members) {
    const int64_t c = std::clamp<int64_t>((m.n + kBlock * 8 - 1) / (kBlock * 8), 1, 256);
    first.push_back(blocks);
    count.push_back(c);
    blocks += c;
  }
  const int64_t partAt = em.scratch(blocks * 16);
  const int64_t trustAt = em.scratch(int64_t(u.members.size()) * 4);
  std::vector<rt::CudaArg> args = u.args;
  const size_t partArg = args.size(), trustArg = partArg + 1;
  args.push_back(CudaEmitter::scratchAt(partAt));
  args.push_back(CudaEmitter::scratchAt(trustAt));

  Vars v = constants(u.opt);
  v["HYPER"] = hyperCode(u);
  v["CHAIN"] = memberChain(u.members, first, count);
  v["WARG"] = std::to_string(outArg(u, 0));
  v["MARG"] = std::to_string(outArg(u, 1));
  v["VARG"] = std::to_string(outArg(u, 2));
  v["PART"] = std::to_string(partArg);
  v["TRUST"] = std::to_string(trustArg);
  v["WHAT"] = u.name;
  v["MEMBERS"] = lit(int64_t(u.members.size()));
  v["NONFINITE"] = std::to_string(nonFiniteCode(em, u));
  const std::string decl = R"CUDA(  const float *G = (const float *)a.p[0];
  float *W = (float *)a.p[$WARG], *M = (float *)a.p[$MARG], *V = (float *)a.p[$VARG];
  double *PART = (double *)a.p[$PART];
  float *TRUST = (float *)a.p[$TRUST];
  (void)G; (void)PART; (void)TRUST;
)CUDA";
  // lambDirection: m / (1 - b1^t) / (sqrt(v / (1 - b2^t)) + eps) + wd w.
  const std::string r = "M[i] * IB1 / (sqrtf(V[i] * IB2) + $EPS) + $LWD * W[i]";

  v["NAME"] = em.entryName("lamb_moments_" + u.name);
  v["DECL"] = subst(decl, v);
  v["R"] = subst(r, v);
  em.append(subst(R"CUDA(
// $NAME: lamb moments of '$WHAT' and each block's sums of w^2 and r^2.
extern "C" __global__ void $NAME(EmbArgs a) {
  __shared__ double red[32];
$HYPER$DECL$CHAIN  double w2 = 0.0, r2 = 0.0;
  for (emb_i64 i = off + bb * blockDim.x + threadIdx.x; i < off + n; i += nb * blockDim.x) {
    const float gi = GS * G[i];
    M[i] = $B1 * M[i] + $OMB1 * gi;
    V[i] = $B2 * V[i] + $OMB2 * gi * gi;
    if (!(isfinite(M[i]) && isfinite(V[i]))) emb_set_error(a.step, $NONFINITE, i);
    const double rr = (double)($R);
    w2 += (double)W[i] * (double)W[i];
    r2 += rr * rr;
  }
  w2 = emb_block_sum_f64(w2, red);
  r2 = emb_block_sum_f64(r2, red);
  if (threadIdx.x == 0) { PART[2 * blockIdx.x] = w2; PART[2 * blockIdx.x + 1] = r2; }
}
)CUDA",
                  v));
  out.launches.push_back(CudaEmitter::kernelLaunch(v["NAME"], args, blocks, kBlock));

  // Trust ratios: one block per member, partial sums in block order.
  std::ostringstream range;
  range << "  emb_i64 p0 = 0, pn = 0;\n";
  for (size_t i = 0; i < u.members.size(); ++i)
    range << "  " << (i ? "else " : "") << "if (blockIdx.x == " << i << ") { p0 = " << first[i]
          << "; pn = " << count[i] << "; }\n";
  v["NAME"] = em.entryName("lamb_trust_" + u.name);
  v["RANGE"] = range.str();
  em.append(subst(R"CUDA(
// $NAME: lamb trust ratio of each member of '$WHAT'.
extern "C" __global__ void $NAME(EmbArgs a) {
  __shared__ double red[32];
  if (a.step->skip) return;
  const double *PART = (const double *)a.p[$PART];
  float *TRUST = (float *)a.p[$TRUST];
$RANGE  double w2 = 0.0, r2 = 0.0;
  for (emb_i64 b = threadIdx.x; b < pn; b += blockDim.x) {
    w2 += PART[2 * (p0 + b)];
    r2 += PART[2 * (p0 + b) + 1];
  }
  w2 = emb_block_sum_f64(w2, red);
  r2 = emb_block_sum_f64(r2, red);
  if (threadIdx.x == 0)
    TRUST[blockIdx.x] = w2 > 0.0 && r2 > 0.0 ? (float)(emb_sqrt_f64(w2) / emb_sqrt_f64(r2)) : 1.0f;
}
)CUDA",
                  v));
  out.launches.push_back(CudaEmitter::kernelLaunch(v["NAME"], args, int64_t(u.members.size()), kBlock));

  v["NAME"] = em.entryName("lamb_apply_" + u.name);
  em.append(subst(R"CUDA(
// $NAME: lamb step of '$WHAT': w -= lr trust r.
extern "C" __global__ void $NAME(EmbArgs a) {
$HYPER$DECL$CHAIN  const float step = LR * TRUST[mi];
  for (emb_i64 i = off + bb * blockDim.x + threadIdx.x; i < off + n; i += nb * blockDim.x) {
    W[i] -= step * ($R);
    if (!isfinite(W[i])) emb_set_error(a.step, $NONFINITE, i);
  }
}
)CUDA",
                  v));
  out.launches.push_back(CudaEmitter::kernelLaunch(v["NAME"], std::move(args), blocks, kBlock));
}

// --- Row-wise Adagrad ----------------------------------------------------------------------

void emitRowwiseAdagrad(CudaEmitter &em, const Update &u, rt::CudaKernel &out) {
  std::ostringstream chain;
  chain << "    emb_i64 base = 0, len = 1, at = 0;\n";
  int64_t rows = 0;
  for (size_t i = 0; i < u.members.size(); ++i) {
    const Member &m = u.members[i];
    if (m.rowLength <= 0 || m.n % m.rowLength != 0)
      throw CodegenError("rowwise_adagrad: row length " + std::to_string(m.rowLength) +
                         " does not divide the " + std::to_string(m.n) + " values of member " +
                         std::to_string(i) + " of '" + u.name + "'");
    const int64_t mr = m.n / m.rowLength;
    chain << "    " << (i ? "else " : "") << "if (r < " << rows + mr << ") { base = " << m.offset
          << " + (r - " << rows << ") * " << m.rowLength << "; len = " << m.rowLength
          << "; at = " << m.stateOffset << " + (r - " << rows << "); }\n";
    rows += mr;
  }
  Vars v = constants(u.opt);
  v["NAME"] = em.entryName("rowwise_adagrad_" + u.name);
  v["WHAT"] = u.name;
  v["HYPER"] = hyperCode(u);
  v["CHAIN"] = chain.str();
  v["ROWS"] = lit(rows);
  v["WARG"] = std::to_string(outArg(u, 0));
  v["AARG"] = std::to_string(outArg(u, 1));
  v["NONFINITE"] = std::to_string(nonFiniteCode(em, u));
  em.append(subst(R"CUDA(
// $NAME: row-wise adagrad of '$WHAT', one warp per row.
extern "C" __global__ void $NAME(EmbArgs a) {
$HYPER  const float *G = (const float *)a.p[0];
  float *W = (float *)a.p[$WARG], *A = (float *)a.p[$AARG];
  const int lane = threadIdx.x & 31;
  const emb_i64 warps = ((emb_i64)gridDim.x * blockDim.x) >> 5;
  for (emb_i64 r = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < $ROWS; r += warps) {
$CHAIN    // Every lane reads the accumulator before the warp sum (a warp-wide
    // synchronisation): lane 0 writes it back below.
    const float acc0 = A[at];
    double sq = 0.0;
    for (emb_i64 e = lane; e < len; e += 32) {
      const double gi = (double)(GS * G[base + e] + $WD * W[base + e]);
      sq += gi * gi;
    }
    sq = emb_warp_sum_f64(sq);
    const float acc = acc0 + (float)(sq / (double)len);
    const float rowStep = LR / (sqrtf(acc) + $EPS);
    for (emb_i64 e = lane; e < len; e += 32) {
      W[base + e] -= rowStep * (GS * G[base + e] + $WD * W[base + e]);
      if (!(isfinite(W[base + e]) && isfinite(acc))) emb_set_error(a.step, $NONFINITE, base + e);
    }
    if (lane == 0) A[at] = acc;
  }
}
)CUDA",
                  v));
  out.launches.push_back(
      CudaEmitter::kernelLaunch(v["NAME"], u.args, gridFor(rows * 32, kBlock), kBlock));
}

void emitUpdate(CudaEmitter &em, const Update &u, rt::CudaKernel &out) {
  useHelpers(em);
  if (u.opt.kind == rt::OptimizerKind::Lamb)
    emitLamb(em, u, out);
  else if (u.opt.kind == rt::OptimizerKind::RowwiseAdagrad)
    emitRowwiseAdagrad(em, u, out);
  else
    emitElementwise(em, u, out);
}

// --- Lowerings ------------------------------------------------------------------------------

/// Inputs grad, [scale]; outputs values then `states` state buffers.
void readArgs(CudaEmitter &em, const rt::Kernel &k, Update &u, int64_t stateElems) {
  u.clipped = k.inputs.size() == 2;
  expectCounts(k, u.clipped ? 2 : 1, size_t(1 + u.opt.states));
  u.gradScale = realAttr(k, "grad_scale");
  if (numel(f32Buffer(em, k.inputs[0], "gradient")) < u.n)
    throw CodegenError("gradient '" + em.buffer(k.inputs[0]).name + "' is smaller than '" +
                       u.name + "'");
  if (u.clipped && numel(f32Buffer(em, k.inputs[1], "clip scale")) < 1)
    throw CodegenError("the clip scale is empty");
  for (size_t i = 1; i < k.outputs.size(); ++i) {
    const int64_t want = u.opt.kind == rt::OptimizerKind::RowwiseAdagrad ? stateElems : u.n;
    if (numel(f32Buffer(em, k.outputs[i], "optimizer state")) < want)
      throw CodegenError("optimizer state '" + em.buffer(k.outputs[i]).name + "' holds " +
                         std::to_string(numel(em.buffer(k.outputs[i]))) + " values, expected " +
                         std::to_string(want));
  }
  u.args = operandArgs(k);
}

void lowerUpdateParam(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const int64_t index = intAttr(k, "param");
  if (index < 0 || index >= int64_t(em.plan().params.size()))
    throw CodegenError("param index " + std::to_string(index) + " out of range");
  const rt::Param &p = em.plan().params[size_t(index)];
  Update u;
  u.name = p.name;
  u.opt = optOf(p.optimizer);
  if (k.outputs.empty())
    throw CodegenError("expected the parameter's values as output 0");
  const rt::Buffer &w = f32Buffer(em, k.outputs[0], "parameter");
  u.n = numel(w);
  Member m;
  m.n = u.n;
  m.rowLength = w.shape.back();
  u.members.push_back(m);
  readArgs(em, k, u, m.rowLength > 0 ? u.n / m.rowLength : 0);
  emitUpdate(em, u, out);
}

void lowerUpdatePacked(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const int64_t index = intAttr(k, "pack");
  const rt::Plan &plan = em.plan();
  if (index < 0 || index >= int64_t(plan.packs.size()))
    throw CodegenError("pack index " + std::to_string(index) + " out of range");
  const rt::ParamPack &pack = plan.packs[size_t(index)];
  Update u;
  u.name = pack.name;
  u.opt = optOf(pack.optimizer);
  if (k.inputs.empty() || k.outputs.empty() || k.inputs[0] != pack.grad ||
      k.outputs[0] != pack.buffer)
    throw CodegenError("must read the pack's gradient and write its values");
  const rt::Buffer &whole = f32Buffer(em, pack.buffer, "pack");
  u.n = numel(whole);
  int64_t stateElems = 0;
  for (int32_t mi : pack.members) {
    if (mi < 0 || mi >= int32_t(plan.params.size()))
      throw CodegenError("pack member " + std::to_string(mi) + " out of range");
    const rt::Param &param = plan.params[size_t(mi)];
    const rt::Buffer &values = f32Buffer(em, param.buffer, "pack member");
    Member m;
    m.offset = (values.offset - whole.offset) / 4;
    m.n = numel(values);
    m.rowLength = values.shape.back();
    if (m.offset < 0 || m.offset + m.n > u.n)
      throw CodegenError("member '" + param.name + "' lies outside pack '" + pack.name + "'");
    if (u.opt.kind == rt::OptimizerKind::RowwiseAdagrad) {
      if (param.state.empty() || pack.state.empty())
        throw CodegenError("rowwise_adagrad member '" + param.name + "' has no accumulator");
      m.stateOffset = (plan.buffers.at(size_t(param.state[0])).offset -
                       plan.buffers.at(size_t(pack.state[0])).offset) / 4;
      stateElems = std::max(stateElems, m.stateOffset + m.n / std::max<int64_t>(m.rowLength, 1));
    }
    u.members.push_back(m);
  }
  if (u.members.empty())
    throw CodegenError("pack '" + pack.name + "' has no members");
  readArgs(em, k, u, stateElems);
  emitUpdate(em, u, out);
}

} // namespace

EMBC_CUDA_LOWERING(UpdateParam, lowerUpdateParam)
EMBC_CUDA_LOWERING(UpdatePacked, lowerUpdatePacked)
