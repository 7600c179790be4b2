//===- InteractionLowering.cpp - DLRM's pairwise dot interaction ----------===//
//
// interaction, interaction_grad, interaction_concat and
// interaction_concat_grad (docs/plan-format.md). Each generated kernel is
// specialised on F (inputs), D, `self` and, for the concat forms, the copies'
// widths, position and targets. A block takes SPB samples: their F x D
// features are staged in shared memory (rounded to the compute type, as
// Rounding.h rounds the CPU's operands), with an odd row stride so threads
// reading the same column of different features hit different banks.
//
// Summation orders follow the CPU (runtime/lib/cpu/InteractionKernels.cpp):
//  - a pair's dot is detail::dot, which GCC vectorises 4 lanes wide
//    (x86-64-v2): lane q sums the elements k = q mod 4 of the first D/4*4,
//    the tail goes into lane 0, and the lanes are added 0 + 1 + 2 + 3;
//  - dx_m[k] is interactionGrad's axpy sequence: the pairs holding m in
//    ascending pair order, from zero, then (concat) the copied columns that
//    are x_m, in copy order.
// Only FMA contraction (nvcc's default) can make the last bit differ.
//
// Features too large for shared memory (F x D beyond 40 KiB) are read from
// global memory instead, rounded on every read.
//
//===----------------------------------------------------------------------===//

#include "ModelLowering.h"

#include <algorithm>
#include <sstream>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::model;

namespace {

/// Shared-memory floats a block may stage (40 KiB of the 48 KiB static limit).
constexpr int64_t kSmemFloats = 10240;

/// What both directions are specialised on.
struct Spec {
  int64_t B = 0, D = 0, F = 0, P = 0;
  bool self = false;
  runtime::DType compute = runtime::DType::F32;
  // The concat forms (C == 0 otherwise): copies, their widths, where the
  // interaction's P columns start (`at`) and the row width W.
  int64_t C = 0, position = 0, at = 0, W = 0;
  std::vector<int64_t> widths;
  std::vector<int64_t> copyInto; // grad only: an x index or -1 per copy

  /// Column of y (or dy) where copy j starts.
  int64_t copyColumn(int64_t j) const {
    int64_t c = 0;
    for (int64_t i = 0; i < j; ++i)
      c += widths[size_t(i)];
    return c + (j >= position ? P : 0);
  }
  /// Odd shared-memory row stride.
  int64_t stride() const { return D % 2 == 0 ? D + 1 : D; }
};

int64_t pairCount(int64_t F, bool self) { return self ? F * (F + 1) / 2 : F * (F - 1) / 2; }

int64_t roundUp32(int64_t n) { return (n + 31) / 32 * 32; }

std::string replaceAll(std::string text, const std::string &from, const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// Samples per block and threads: enough items for ~256 threads, limited by
/// shared memory (perSample floats each; 0 = not staged) and the batch.
std::pair<int64_t, int64_t> blockShape(const Spec &s, int64_t itemsPerSample, int64_t perSample) {
  int64_t spb = std::max<int64_t>(1, (256 + itemsPerSample - 1) / itemsPerSample);
  if (perSample > 0)
    spb = std::min(spb, kSmemFloats / perSample);
  spb = std::clamp<int64_t>(spb, 1, s.B);
  const int64_t threads = std::clamp<int64_t>(roundUp32(spb * itemsPerSample), 64, 512);
  return {spb, threads};
}

/// `__shared__ T *name[n]` filled by thread 0 with a.p[first + i]: a pointer
/// table indexed at run time (indexing a.p itself with a variable would
/// copy the whole parameter block to local memory).
std::string pointerTable(const std::string &type, const std::string &name,
                         const std::vector<int64_t> &args) {
  if (args.empty())
    return "";
  std::ostringstream o;
  o << "  __shared__ " << type << " *" << name << "[" << args.size() << "];\n"
    << "  if (threadIdx.x == 0) {\n";
  for (size_t i = 0; i < args.size(); ++i)
    o << "    " << name << "[" << i << "] = (" << type << " *)a.p[" << args[i] << "];\n";
  o << "  }\n";
  return o.str();
}

/// The pairwise dot of the CPU's detail::dot (see the file comment) of
/// u[0..D) and v[0..D); `rd` wraps each read (rounding in global mode).
std::string dotCode(const Spec &s, const std::string &rd) {
  auto R = [&](const std::string &x) { return rd.empty() ? x : rd + "(" + x + ")"; };
  const int64_t D4 = s.D / 4 * 4;
  std::string code = "    float l0 = 0.0f, l1 = 0.0f, l2 = 0.0f, l3 = 0.0f;\n";
  if (D4 > 0)
    code += "    for (int k = 0; k < " + lit(D4) + "; k += 4) {\n"
            "      l0 += " + R("u[k]") + " * " + R("v[k]") + ";\n"
            "      l1 += " + R("u[k + 1]") + " * " + R("v[k + 1]") + ";\n"
            "      l2 += " + R("u[k + 2]") + " * " + R("v[k + 2]") + ";\n"
            "      l3 += " + R("u[k + 3]") + " * " + R("v[k + 3]") + ";\n"
            "    }\n";
  if (D4 < s.D)
    code += "    for (int k = " + lit(D4) + "; k < " + lit(s.D) + "; ++k) l0 += " + R("u[k]") +
            " * " + R("v[k]") + ";\n";
  return code + "    const float dot = ((l0 + l1) + l2) + l3;\n";
}

/// detail::dot's order from shared memory in 16-byte loads (D % 4 == 0, rows
/// 16-byte aligned): lane q of the CPU's 4-wide sum is component q of the
/// vectors, so the sums are the same, with a quarter of the load
/// instructions.
std::string dotCodeVec4(const Spec &s) {
  return "    float l0 = 0.0f, l1 = 0.0f, l2 = 0.0f, l3 = 0.0f;\n"
         "    for (int k = 0; k < " + lit(s.D) + "; k += 4) {\n"
         "      const float4 a4 = emb_vload<float4>(u + k), b4 = emb_vload<float4>(v + k);\n"
         "      l0 += a4.x * b4.x;\n      l1 += a4.y * b4.y;\n"
         "      l2 += a4.z * b4.z;\n      l3 += a4.w * b4.w;\n"
         "    }\n"
         "    const float dot = ((l0 + l1) + l2) + l3;\n";
}

/// Copies the block's samples' F features into shared memory `xs` (rows
/// `stride` floats apart, sample s's feature i at row s * F + i), rounded by
/// `rnd` (""). One flat loop so every thread has work whatever D and the
/// block's samples; consecutive threads read consecutive addresses. With
/// `vec`, 16-byte loads and stores (D % 4 == 0, the x operands and the rows
/// 16-byte aligned).
std::string stagingCode(const Spec &s, int64_t spb, int64_t stride, bool vec,
                        const std::string &rnd) {
  auto R = [&](const std::string &x) { return rnd.empty() ? x : rnd + "(" + x + ")"; };
  const int64_t per = vec ? s.D / 4 : s.D; // items per row
  std::string code =
      "  for (int e = threadIdx.x; e < " + lit(s.F * spb * per) + "; e += blockDim.x) {\n"
      "    const int i = e / " + lit(spb * per) + ", r = e - i * " + lit(spb * per) + ", s = r / " +
      lit(per) + ", q = r - s * " + lit(per) + ";\n"
      "    if (s >= ns) continue;\n";
  if (vec)
    code += "    float4 v = emb_vload<float4>(xp[i] + (emb_i64)(b0 + s) * " + lit(s.D) +
            " + 4 * q);\n"
            "    v.x = " + R("v.x") + "; v.y = " + R("v.y") + "; v.z = " + R("v.z") +
            "; v.w = " + R("v.w") + ";\n"
            "    emb_vstore<float4>(xs + (s * " + lit(s.F) + " + i) * " + lit(stride) +
            " + 4 * q, v);\n";
  else
    code += "    xs[(s * " + lit(s.F) + " + i) * " + lit(stride) + " + q] = " +
            R("xp[i][(emb_i64)(b0 + s) * " + lit(s.D) + " + q]") + ";\n";
  return code + "  }\n";
}

/// (i, j) of pair p of the row-major upper triangle, row i holding
/// F - i - off pairs: row i starts at i (T - i) / 2 with T = 2F - 2off + 1,
/// so i is the root of that quadratic, corrected for float rounding.
std::string pairIndexCode(const Spec &s) {
  const int64_t off = s.self ? 0 : 1, T = 2 * s.F - 2 * off + 1;
  const std::string t = lit(T);
  return "    int i = (int)((" + t + ".0f - sqrtf((float)(" + lit(T * T) +
         " - 8 * p))) * 0.5f);\n"
         "    i = i < 0 ? 0 : (i > " + lit(s.F - 1) + " ? " + lit(s.F - 1) + " : i);\n"
         "    while (i > 0 && i * (" + t + " - i) / 2 > p) --i;\n"
         "    while ((i + 1) * (" + t + " - i - 1) / 2 <= p) ++i;\n"
         "    const int j = i + " + lit(off) + " + (p - i * (" + t + " - i) / 2);\n";
}

/// The index of pair (lo, hi), lo <= hi (lo < hi without self pairs), in
/// the row-major upper triangle: row lo starts at lo FO - lo (lo - 1) / 2,
/// FO = F - 1 pairs in row 0 (F with self pairs).
std::string pairIndex(const Spec &s, const std::string &lo, const std::string &hi) {
  const int64_t off = s.self ? 0 : 1;
  return lo + " * " + lit(s.F - off) + " - " + lo + " * (" + lo + " - 1) / 2 + (" + hi + " - " +
         lo + " - " + lit(off) + ")";
}

/// Whether every arg in [first, first + n) is 16-byte aligned.
bool allAligned16(const CudaEmitter &em, const std::vector<rt::CudaArg> &args, int64_t first,
                  int64_t n) {
  for (int64_t i = first; i < first + n; ++i)
    if (!aligned16(em, args[size_t(i)]))
      return false;
  return true;
}

/// The round-to-compute device function of a kernel ("" for f32).
std::string roundFunction(const Spec &s, const std::string &name) {
  if (s.compute == runtime::DType::F32)
    return "";
  return "__device__ __forceinline__ float " + name + "(float x) { return " +
         roundExpr(s.compute, "x") + "; }\n";
}

// --- Forward ---------------------------------------------------------------------------

/// interaction (C == 0) and interaction_concat. Args: copies (C), x (F), y.
void emitForward(CudaEmitter &em, const Spec &s, const std::string &hint,
                 std::vector<rt::CudaArg> args, rt::CudaKernel &out) {
  // D % 4 == 0: rows D + 4 apart, so a quarter-warp's 16-byte loads of 8
  // different rows fall in 8 different bank groups; else an odd stride.
  const bool vec4 = s.D % 4 == 0;
  const int64_t S = vec4 ? s.D + 4 : s.stride();
  const bool smem = s.F * S <= kSmemFloats;
  auto [spb, threads] = blockShape(s, s.P, smem ? s.F * S : 0);
  const std::string name = em.entryName(hint);
  const std::string rnd = s.compute == runtime::DType::F32 ? "" : name + "_round";

  std::vector<int64_t> xArgs, cArgs;
  for (int64_t j = 0; j < s.C; ++j)
    cArgs.push_back(j);
  for (int64_t i = 0; i < s.F; ++i)
    xArgs.push_back(s.C + i);
  const int64_t CW = s.W - s.P; // copied columns per row

  Vars v = {{"NAME", name},         {"F", lit(s.F)},   {"D", lit(s.D)},   {"S", lit(S)},
            {"P", lit(s.P)},        {"B", lit(s.B)},   {"W", lit(s.W)},   {"AT", lit(s.at)},
            {"SPB", lit(spb)},      {"YARG", lit(s.C + s.F)},
            {"CW", lit(CW)},
            {"XP", pointerTable("const float", "xp", xArgs)},
            {"CP", pointerTable("const float", "cp", cArgs)},
            {"ROUNDFN", roundFunction(s, rnd)}};

  std::string body = R"CUDA(
// $NAME: pairwise dots of $F features of width $D ($SPB samples a block).
${ROUNDFN}extern "C" __global__ void $NAME(EmbArgs a) {
$XP$CP)CUDA";
  if (smem && vec4)
    body += "  __shared__ float4 xs4[$SPB * $F * $S / 4];\n  float *xs = (float *)xs4;\n";
  else if (smem)
    body += "  __shared__ float xs[$SPB * $F * $S];\n";
  body += R"CUDA(  __syncthreads();
  float *y = (float *)a.p[$YARG];
  const int b0 = blockIdx.x * $SPB;
  const int ns = $B - b0 < $SPB ? $B - b0 : $SPB;
)CUDA";
  if (smem)
    body += stagingCode(s, spb, S, vec4 && allAligned16(em, args, s.C, s.F), rnd) +
            "  __syncthreads();\n";
  body += R"CUDA(  for (int t = threadIdx.x; t < ns * $P; t += blockDim.x) {
    const int s = t / $P, p = t - s * $P;
)CUDA" + pairIndexCode(s);
  if (smem)
    body += "    const float *u = xs + (s * $F + i) * $S, *v = xs + (s * $F + j) * $S;\n" +
            (vec4 ? dotCodeVec4(s) : dotCode(s, ""));
  else
    body += "    const float *u = xp[i] + (emb_i64)(b0 + s) * $D, *v = xp[j] + (emb_i64)(b0 + s) * "
            "$D;\n" +
            dotCode(s, rnd);
  body += "    y[(emb_i64)(b0 + s) * $W + $AT + p] = dot;\n  }\n";

  if (CW > 0) {
    // The copies' columns, verbatim (no rounding: they are not products).
    std::ostringstream c;
    c << "  for (int t = threadIdx.x; t < ns * $CW; t += blockDim.x) {\n"
      << "    const int s = t / $CW, c = t - s * $CW;\n"
      << "    const emb_i64 b = b0 + s;\n";
    int64_t start = 0;
    bool first = true;
    for (int64_t j = 0; j < s.C; ++j) {
      const int64_t w = s.widths[size_t(j)];
      if (w == 0)
        continue;
      c << "    " << (first ? "" : "else ") << "if (c < " << start + w << ") y[b * $W + "
        << s.copyColumn(j) << " + (c - " << start << ")] = cp[" << j << "][b * " << w
        << " + (c - " << start << ")];\n";
      start += w;
      first = false;
    }
    c << "  }\n";
    body += c.str();
  }
  body += "}\n";
  em.append(subst(body, v));
  const int64_t grid = (s.B + spb - 1) / spb;
  out.launches.push_back(CudaEmitter::kernelLaunch(name, std::move(args), grid, threads));
}

// --- Backward ----------------------------------------------------------------------------

/// The code that copies dy's columns of the copies that are not added into
/// an x (dcp[slot]) for samples b0 .. b0 + ns of the block.
std::string copyOutCode(const Spec &s) {
  int64_t CW = 0;
  for (int64_t j = 0; j < s.C; ++j)
    if (s.copyInto[size_t(j)] < 0)
      CW += s.widths[size_t(j)];
  if (CW == 0)
    return "";
  std::ostringstream c;
  c << "  for (int t = threadIdx.x; t < ns * " << CW << "; t += blockDim.x) {\n"
    << "    const int s = t / " << CW << ", c = t - s * " << CW << ";\n"
    << "    const emb_i64 b = b0 + s;\n";
  int64_t start = 0, o = 0;
  bool first = true;
  for (int64_t j = 0; j < s.C; ++j) {
    if (s.copyInto[size_t(j)] >= 0)
      continue;
    const int64_t w = s.widths[size_t(j)];
    const int64_t slot = o++;
    if (w == 0)
      continue;
    c << "    " << (first ? "" : "else ") << "if (c < " << start + w << ") dcp[" << slot
      << "][b * " << w << " + (c - " << start << ")] = dy[b * $WDY + " << s.copyColumn(j)
      << " + (c - " << start << ")];\n";
    start += w;
    first = false;
  }
  c << "  }\n";
  return c.str();
}

/// The placeholders both gradient kernels use: sizes, dy's row width (WDY)
/// and where the interaction's columns start in it (AT), whether pairs
/// include self pairs (SELF), the pointer tables of x (args 1..F), dx
/// (F + 1..2F) and the copied-out gradients, and the rounding function.
Vars gradVars(const Spec &s, const std::string &name, const std::string &rnd) {
  std::vector<int64_t> xArgs, dxArgs, dcArgs;
  for (int64_t i = 0; i < s.F; ++i) {
    xArgs.push_back(1 + i);
    dxArgs.push_back(1 + s.F + i);
  }
  int64_t outCopies = 0;
  for (int64_t j = 0; j < s.C; ++j)
    if (s.copyInto[size_t(j)] < 0)
      dcArgs.push_back(1 + 2 * s.F + outCopies++);
  return {{"NAME", name},
          {"F", lit(s.F)},
          {"D", lit(s.D)},
          {"B", lit(s.B)},
          {"WDY", lit(s.C == 0 ? s.P : s.W)},
          {"AT", lit(s.at)},
          {"SELF", s.self ? "true" : "false"},
          {"XP", pointerTable("const float", "xp", xArgs)},
          {"DXP", pointerTable("float", "dxp", dxArgs)},
          {"DCP", pointerTable("float", "dcp", dcArgs)},
          {"ROUNDFN", roundFunction(s, rnd)}};
}

/// Shared-memory floats a sample takes in the tiled gradient: its F x D
/// features and the F x F4 coefficient matrix.
int64_t tiledGradFloats(const Spec &s) { return s.F * s.D + s.F * ((s.F + 3) / 4 * 4); }

/// Whether the tiled gradient applies: rows of 16-byte vectors (D % 4 == 0,
/// every x and dx 16-byte aligned) and a sample's operands in shared memory.
bool tiledGradFits(const CudaEmitter &em, const Spec &s, const std::vector<rt::CudaArg> &args) {
  if (s.D % 4 != 0 || tiledGradFloats(s) > kSmemFloats)
    return false;
  for (int64_t i = 1; i <= 2 * s.F; ++i) // x (F), then dx (F)
    if (!aligned16(em, args[size_t(i)]))
      return false;
  return true;
}

/// The gradient as dx = (G + G^T) x per sample, G the F x F matrix of the
/// pairs' dy (the diagonal twice dy for `self`): the block first writes
/// G + G^T transposed (gt[l][m], the coefficient of x_l in dx_m; F4
/// columns, zero past F) and the features to shared memory; then each
/// thread owns 4 consecutive m and 4 consecutive k, and per l reads one
/// float4 of coefficients (a broadcast: a warp shares m) and one of x_l,
/// for 16 FMAs. Each dx_m[k] still sums its terms in ascending l, the order
/// of the pairs holding m (the non-self diagonal is skipped, not added as
/// zero), then the copies into x_m: the same sums as the scalar form.
void emitGradTiled(CudaEmitter &em, const Spec &s, const std::string &hint,
                   std::vector<rt::CudaArg> args, rt::CudaKernel &out) {
  const int64_t F4 = (s.F + 3) / 4 * 4, MG = F4 / 4, KG = s.D / 4;
  auto [spb, threads] = blockShape(s, MG * KG, tiledGradFloats(s));
  const std::string name = em.entryName(hint);
  const std::string rnd = s.compute == runtime::DType::F32 ? "" : name + "_round";
  auto R = [&](const std::string &x) { return rnd.empty() ? x : rnd + "(" + x + ")"; };
  const int64_t Wdy = s.C == 0 ? s.P : s.W;
  Vars v = gradVars(s, name, rnd);
  v.insert({{"F4", lit(F4)}, {"MG", lit(MG)}, {"KG", lit(KG)}, {"SPB", lit(spb)},
            {"STAGE", "  float *xs = (float *)xs4;\n" + stagingCode(s, spb, s.D, true, rnd)},
            {"LOADG", R("dy[(emb_i64)(b0 + s) * " + lit(Wdy) + " + " + lit(s.at) + " + " +
                        pairIndex(s, "lo", "hi") + "]")}});

  std::string body = R"CUDA(
// $NAME: gradient of the pairwise dots of $F features of width $D, as
// (G + G^T) x: 4 m x 4 k a thread, $SPB samples a block.
${ROUNDFN}extern "C" __global__ void $NAME(EmbArgs a) {
$XP$DXP$DCP  __shared__ float4 xs4[$SPB * $F * $KG]; // [s][l][k / 4]
  __shared__ float4 gt4[$SPB * $F * $MG]; // [s][l][m / 4]: x_l's coefficient in dx_m
  __syncthreads();
  const float *dy = (const float *)a.p[0];
  const int b0 = blockIdx.x * $SPB;
  const int ns = $B - b0 < $SPB ? $B - b0 : $SPB;
$STAGE  float *gt = (float *)gt4;
  for (int e = threadIdx.x; e < ns * $F * $F4; e += blockDim.x) {
    const int s = e / ($F * $F4), r = e - s * ($F * $F4), l = r / $F4, m = r - l * $F4;
    float c = 0.0f;
    if (m < $F && (l != m || $SELF)) {
      const int lo = l < m ? l : m, hi = l < m ? m : l;
      c = $LOADG;
      if (l == m)
        c = 2.0f * c;
    }
    gt[e] = c;
  }
  __syncthreads();
  for (int t = threadIdx.x; t < ns * $MG * $KG; t += blockDim.x) {
    const int s = t / ($MG * $KG), r = t - s * ($MG * $KG), mg = r / $KG, q = r - mg * $KG;
    const int m0 = 4 * mg;
    const float4 *x = xs4 + s * $F * $KG + q;
    const float4 *g = gt4 + s * $F * $MG + mg;
    float4 acc0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
)CUDA";
  // acc_i += g_i * x_l, component by component; `skip` leaves out i == l - m0.
  auto step = [](bool skip) {
    std::string c = "      const float4 xv = x[l * $KG], gv = g[l * $MG];\n";
    const char *gc[4] = {"gv.x", "gv.y", "gv.z", "gv.w"};
    for (int i = 0; i < 4; ++i) {
      std::string a = "acc" + std::to_string(i), g = gc[i];
      std::string line = a + ".x += " + g + " * xv.x; " + a + ".y += " + g + " * xv.y; " + a +
                         ".z += " + g + " * xv.z; " + a + ".w += " + g + " * xv.w;";
      c += skip ? "      if (l != m0 + " + std::to_string(i) + ") { " + line + " }\n"
                : "      " + line + "\n";
    }
    return c;
  };
  if (s.self) {
    body += "    for (int l = 0; l < $F; ++l) {\n" + step(false) + "    }\n";
  } else {
    body += "    for (int l = 0; l < m0; ++l) {\n" + step(false) + "    }\n"
            "    const int mEnd = m0 + 4 < $F ? m0 + 4 : $F;\n"
            "    for (int l = m0; l < mEnd; ++l) {\n" + step(true) + "    }\n"
            "    for (int l = m0 + 4; l < $F; ++l) {\n" + step(false) + "    }\n";
  }
  // Copies that are x_m (DLRM's bottom MLP output): their dy columns, after
  // the interaction's terms (interactionConcatGrad).
  body += "    const emb_i64 b = b0 + s;\n";
  for (int64_t j = 0; j < s.C; ++j) {
    const int64_t into = s.copyInto[size_t(j)];
    if (into < 0)
      continue;
    const std::string acc = "acc" + std::to_string(into % 4);
    const std::string col = "b * $WDY + " + lit(s.copyColumn(j)) + " + 4 * q";
    body += "    if (m0 == " + lit(into / 4 * 4) + ") { " + acc + ".x += dy[" + col + "]; " + acc +
            ".y += dy[" + col + " + 1]; " + acc + ".z += dy[" + col + " + 2]; " + acc +
            ".w += dy[" + col + " + 3]; }\n";
  }
  body += R"CUDA(    emb_vstore<float4>(dxp[m0] + b * $D + 4 * q, acc0);
    if (m0 + 1 < $F) emb_vstore<float4>(dxp[m0 + 1] + b * $D + 4 * q, acc1);
    if (m0 + 2 < $F) emb_vstore<float4>(dxp[m0 + 2] + b * $D + 4 * q, acc2);
    if (m0 + 3 < $F) emb_vstore<float4>(dxp[m0 + 3] + b * $D + 4 * q, acc3);
  }
)CUDA";
  body += copyOutCode(s) + "}\n";
  em.append(subst(body, v));
  const int64_t grid = (s.B + spb - 1) / spb;
  out.launches.push_back(CudaEmitter::kernelLaunch(name, std::move(args), grid, threads));
}

/// interaction_grad (C == 0) and interaction_concat_grad. Args: dy, x (F),
/// dx (F), then the gradients of the copies with copyInto == -1.
void emitGrad(CudaEmitter &em, const Spec &s, const std::string &hint,
              std::vector<rt::CudaArg> args, rt::CudaKernel &out) {
  if (tiledGradFits(em, s, args))
    return emitGradTiled(em, s, hint, std::move(args), out);
  const int64_t S = s.stride();
  const int64_t perSample = s.F * S + s.P;
  const bool smem = perSample <= kSmemFloats;
  auto [spb, threads] = blockShape(s, s.F * s.D, smem ? perSample : 0);
  const std::string name = em.entryName(hint);
  const std::string rnd = s.compute == runtime::DType::F32 ? "" : name + "_round";
  auto R = [&](const std::string &x) { return rnd.empty() ? x : rnd + "(" + x + ")"; };
  const int64_t Wdy = s.C == 0 ? s.P : s.W;
  Vars v = gradVars(s, name, rnd);
  v.insert({{"S", lit(S)}, {"P", lit(s.P)}, {"SPB", lit(spb)}, {"FD", lit(s.F * s.D)},
            {"LOADG", R("dy[(emb_i64)(b0 + s) * " + lit(Wdy) + " + " + lit(s.at) + " + p]")}});

  std::string body = R"CUDA(
// $NAME: gradient of the pairwise dots of $F features of width $D.
${ROUNDFN}extern "C" __global__ void $NAME(EmbArgs a) {
$XP$DXP$DCP)CUDA";
  if (smem)
    body += "  __shared__ float xs[$SPB * $F * $S];\n  __shared__ float gs[$SPB * $P];\n";
  body += R"CUDA(  __syncthreads();
  const float *dy = (const float *)a.p[0];
  const int b0 = blockIdx.x * $SPB;
  const int ns = $B - b0 < $SPB ? $B - b0 : $SPB;
)CUDA";
  if (smem)
    body += stagingCode(s, spb, S, false, rnd) + R"CUDA(  for (int e = threadIdx.x; e < ns * $P; e += blockDim.x) {
    const int s = e / $P, p = e - s * $P;
    gs[e] = $LOADG;
  }
  __syncthreads();
)CUDA";
  body += R"CUDA(  for (int t = threadIdx.x; t < ns * $FD; t += blockDim.x) {
    const int s = t / $FD, r = t - s * $FD, m = r / $D, k = r - m * $D;
)CUDA";
  std::string g, x;
  if (smem) {
    body += "    const float *g = gs + s * $P;\n";
    g = "g[$PIDX]";
    x = "xs[(s * $F + $L) * $S + k]";
  } else {
    body += "    const float *g = dy + (emb_i64)(b0 + s) * $WDY + $AT;\n";
    g = R("g[$PIDX]");
    x = R("xp[$L][(emb_i64)(b0 + s) * $D + k]");
  }
  const std::string gp = replaceAll(g, "$PIDX", "(" + pairIndex(s, "lo", "hi") + ")");
  std::string selfTerm;
  if (s.self)
    selfTerm = "        { const int lo = m, hi = m; acc += (2.0f * " + gp + ") * " +
               replaceAll(x, "$L", "m") + "; }\n";
  body += "    float acc = 0.0f;\n"
          "    for (int l = 0; l < $F; ++l) {\n"
          "      if (l == m) {\n" +
          selfTerm +
          "        continue;\n"
          "      }\n"
          "      const int lo = l < m ? l : m, hi = l < m ? m : l;\n"
          "      acc += " + gp + " * " + replaceAll(x, "$L", "l") + ";\n    }\n";
  // Copies that are x_m (DLRM's bottom MLP output): their dy columns, in
  // copy order, after the interaction's terms (interactionConcatGrad).
  for (int64_t j = 0; j < s.C; ++j)
    if (s.copyInto[size_t(j)] >= 0)
      body += "    if (m == " + lit(s.copyInto[size_t(j)]) + ") acc += dy[(emb_i64)(b0 + s) * $WDY + " +
              lit(s.copyColumn(j)) + " + k];\n";
  body += "    dxp[m][(emb_i64)(b0 + s) * $D + k] = acc;\n  }\n";

  // The other copies' gradients: dy's columns, copied out.
  body += copyOutCode(s);
  body += "}\n";
  em.append(subst(body, v));
  const int64_t grid = (s.B + spb - 1) / spb;
  out.launches.push_back(CudaEmitter::kernelLaunch(name, std::move(args), grid, threads));
}

// --- Lowerings -----------------------------------------------------------------------------

/// F interaction inputs at kernel.inputs[first ..]: B x D each.
void readFeatures(CudaEmitter &em, const rt::Kernel &k, size_t first, Spec &s) {
  if (k.inputs.size() < first + 2)
    throw CodegenError("expected at least 2 interaction inputs, got " +
                       std::to_string(k.inputs.size() > first ? k.inputs.size() - first : 0));
  s.F = int64_t(k.inputs.size() - first);
  const rt::Buffer &x0 = f32Matrix(em, k.inputs[first], -1, -1, "interaction input");
  s.B = x0.shape[0];
  s.D = x0.shape[1];
  for (size_t i = first; i < k.inputs.size(); ++i)
    f32Matrix(em, k.inputs[i], s.B, s.D, "interaction input");
  s.self = boolAttr(k, "self");
  s.P = pairCount(s.F, s.self);
  s.compute = computeTypeOf(k);
}

void lowerInteraction(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.outputs.size() != 1)
    throw CodegenError("expected 1 output, got " + std::to_string(k.outputs.size()));
  Spec s;
  readFeatures(em, k, 0, s);
  s.W = s.P;
  f32Matrix(em, k.outputs[0], s.B, s.P, "output");
  std::vector<rt::CudaArg> args = operandArgs(k);
  emitForward(em, s, k.op, std::move(args), out);
}

void lowerInteractionGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  Spec s;
  readFeatures(em, k, 1, s);
  expectCounts(k, size_t(s.F + 1), size_t(s.F));
  s.W = s.P;
  f32Matrix(em, k.inputs[0], s.B, s.P, "output gradient");
  for (int32_t o : k.outputs)
    f32Matrix(em, o, s.B, s.D, "input gradient");
  std::vector<rt::CudaArg> args = operandArgs(k);
  emitGrad(em, s, k.op, std::move(args), out);
}

void readCopies(const rt::Kernel &k, Spec &s) {
  s.C = intAttr(k, "copies");
  s.position = intAttr(k, "position");
  if (s.C < 0)
    throw CodegenError("'copies' is negative");
  if (s.position < 0 || s.position > s.C)
    throw CodegenError("position " + std::to_string(s.position) + " outside [0, " +
                       std::to_string(s.C) + "]");
}

void lowerInteractionConcat(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  Spec s;
  readCopies(k, s);
  if (k.outputs.size() != 1 || int64_t(k.inputs.size()) < s.C + 2)
    throw CodegenError("expected " + std::to_string(s.C) +
                       " copies and at least 2 interaction inputs, and 1 output; got " +
                       std::to_string(k.inputs.size()) + " inputs and " +
                       std::to_string(k.outputs.size()) + " outputs");
  readFeatures(em, k, size_t(s.C), s);
  s.W = s.P;
  for (int64_t j = 0; j < s.C; ++j) {
    const rt::Buffer &c = f32Matrix(em, k.inputs[size_t(j)], s.B, -1, "copied input");
    s.widths.push_back(c.shape[1]);
    s.W += c.shape[1];
    if (j < s.position)
      s.at += c.shape[1];
  }
  f32Matrix(em, k.outputs[0], s.B, s.W, "output");
  std::vector<rt::CudaArg> args = operandArgs(k);
  emitForward(em, s, k.op, std::move(args), out);
}

void lowerInteractionConcatGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  Spec s;
  readCopies(k, s);
  s.widths = intsAttr(k, "copy_widths");
  s.copyInto = intsAttr(k, "copy_into");
  if (int64_t(s.widths.size()) != s.C || int64_t(s.copyInto.size()) != s.C)
    throw CodegenError("'copy_widths' and 'copy_into' must each have 'copies' (" +
                       std::to_string(s.C) + ") entries, got " +
                       std::to_string(s.widths.size()) + " and " +
                       std::to_string(s.copyInto.size()));
  readFeatures(em, k, 1, s);
  int64_t copiedOut = 0;
  s.W = s.P;
  for (int64_t j = 0; j < s.C; ++j) {
    const int64_t w = s.widths[size_t(j)], into = s.copyInto[size_t(j)];
    if (w < 0)
      throw CodegenError("copy " + std::to_string(j) + " has negative width");
    if (into == -1)
      ++copiedOut;
    else if (into < 0 || into >= s.F)
      throw CodegenError("copy_into[" + std::to_string(j) + "] = " + std::to_string(into) +
                         " is neither -1 nor an interaction input (0.." +
                         std::to_string(s.F - 1) + ")");
    else if (w != s.D)
      throw CodegenError("copy " + std::to_string(j) + " (width " + std::to_string(w) +
                         ") is added into interaction input " + std::to_string(into) +
                         " of width " + std::to_string(s.D));
    s.W += w;
    if (j < s.position)
      s.at += w;
  }
  expectCounts(k, size_t(s.F + 1), size_t(s.F + copiedOut));
  f32Matrix(em, k.inputs[0], s.B, s.W, "output gradient");
  for (int64_t i = 0; i < s.F; ++i)
    f32Matrix(em, k.outputs[size_t(i)], s.B, s.D, "input gradient");
  for (int64_t j = 0, o = s.F; j < s.C; ++j)
    if (s.copyInto[size_t(j)] == -1)
      f32Matrix(em, k.outputs[size_t(o++)], s.B, s.widths[size_t(j)], "copy gradient");
  std::vector<rt::CudaArg> args = operandArgs(k);
  emitGrad(em, s, k.op, std::move(args), out);
}

} // namespace

EMBC_CUDA_LOWERING(Interaction, lowerInteraction)
EMBC_CUDA_LOWERING(InteractionGrad, lowerInteractionGrad)
EMBC_CUDA_LOWERING(InteractionConcat, lowerInteractionConcat)
EMBC_CUDA_LOWERING(InteractionConcatGrad, lowerInteractionConcatGrad)
