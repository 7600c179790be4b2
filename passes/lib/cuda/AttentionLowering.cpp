//===- AttentionLowering.cpp - multi-head attention and its gradient ------===//
//
// attention and attention_grad as runtime/include/embc/runtime/cpu/
// AttentionKernels.h computes them, operation for operation: scores are dot
// products in column order (float), the softmax's maximum in float, its
// exponentials and their sum in double, a weight is the double quotient
// rounded to float, and weighted sums add in position order. Only the
// double exp may differ from the host's in its last bit, which the float
// rounding almost always hides.
//
// One thread per (sequence, head, query position, chunk of up to 32 of the
// head's columns) for the forward and the backward's row pass (dq and each
// row's statistics, kept in scratch), one per (sequence, head, key position,
// chunk) for the key pass (dk, dv): every value is written by one thread, so
// there are no atomics and the result is the same every run. The threads of
// a row's chunks compute its scores each (the same values in the same
// order), so each keeps only its chunk's accumulators in registers: dh = 64
// in one thread spilled in the key pass. A warp's threads read the same key
// and value rows at once (a broadcast). Built for the short sequences of recommendation and
// classification models (O(L^2 dh) per head and sequence, no tiling).
//
//===----------------------------------------------------------------------===//

#include "DropoutLowering.h"
#include "EmbeddingLowering.h"
#include "embc/runtime/cpu/DropoutKernels.h"

#include <sstream>

using namespace embc::codegen;
using namespace embc::codegen::emb;

namespace {

constexpr int64_t kAttentionBlock = 128;

struct Shape {
  int64_t B, L, D, H, dh;
  bool causal;
  double dropout = 0; ///< the weights' dropout rate (0: none)
  int64_t stream = 0;
  /// The L the weights' dropout numbers by: max_len when the batch runs
  /// padded to a shorter length (Buffer::paddedLength), as on the CPU.
  int64_t counterL = 0;
  /// Columns of the head a thread accumulates: the largest divisor of dh up
  /// to 32, so that the key pass's two accumulators fit in registers (dh =
  /// 64 in one thread spilled). Threads of one row share its scores, each
  /// computing them again: the same values, in the same order.
  int64_t chunk() const {
    int64_t c = std::min<int64_t>(dh, 32);
    while (dh % c != 0)
      --c;
    return c;
  }
  int64_t chunks() const { return dh / chunk(); }
  int64_t items() const { return B * H * L * chunks(); }
};

/// The attention's shape from operand `seq` and the kernel's attributes.
Shape shapeOf(const CudaEmitter &em, const rt::Kernel &k, int32_t seq) {
  const rt::Buffer &b = f32Buffer(em, seq, "query");
  if (b.shape.size() != 3 || numel(b) < 1)
    throw CodegenError("attention operand '" + b.name + "' must be a non-empty B x L x D tensor");
  const int64_t heads = intAttr(k, "heads");
  if (heads < 1 || b.shape[2] % heads != 0)
    throw CodegenError(std::to_string(heads) + " heads do not divide the " +
                       std::to_string(b.shape[2]) + " columns");
  Shape s{b.shape[0], b.shape[1], b.shape[2], heads, b.shape[2] / heads,
          boolAttr(k, "causal")};
  s.counterL = b.paddedLength > 0 ? b.paddedLength : s.L;
  if (k.attrs.contains("dropout")) {
    if (!k.attrs["dropout"].is_number())
      throw CodegenError(k.op + " needs a number 'dropout'");
    s.dropout = k.attrs["dropout"].get<double>();
    if (!(s.dropout >= 0.0 && s.dropout < 1.0))
      throw CodegenError(k.op + " dropout must be in [0, 1), got " + std::to_string(s.dropout));
    s.stream = intAttr(k, "stream");
    if (s.stream < 0)
      throw CodegenError(k.op + " stream must be non-negative");
  }
  return s;
}

/// The weights' dropout, as code: `setup` (the kernel's first statements:
/// the key, whether this launch trains, the cache of round keys and the
/// global index of sequence 0) and `factor` (an expression for the factor
/// of weight (b, h, i, j), 1 outside training); both empty without
/// dropout, so such kernels keep their text.
struct DropCode {
  std::string setup, factor;
};
DropCode dropCode(CudaEmitter &em, const Shape &s) {
  if (s.dropout == 0.0)
    return {};
  appendDropoutHelpers(em);
  DropCode d;
  d.setup = dropoutKeyCode("dkey", s.stream) +
            "  const bool drop = a.step->training != 0;\n"
            "  emb_drop_cache dc = {~0ULL, 0ULL};\n"
            "  const emb_i64 e0 = a.step->exampleOffset + (emb_i64)a.step->microBatch * " +
            lit(s.B) + ";\n";
  d.factor = "(drop ? emb_drop_factor(dkey, (emb_u64)((((e0 + b) * " + lit(s.H) + " + h) * " +
             lit(s.counterL) + " + i) * " + lit(s.counterL) + " + j), " +
             std::to_string(embc::runtime::cpu::dropoutThreshold(s.dropout)) + "u, " +
             floatLiteral(1.0 / (1.0 - s.dropout)) + ", dc) : 1.0f)";
  return d;
}

/// Device helpers for heads of dh columns: the dot product in column order,
/// and a weight from a row's statistics (cpu::attention::weight).
std::string helpers(CudaEmitter &em, const Shape &s) {
  const std::string suffix = std::to_string(s.dh);
  em.appendOnce("attention_" + suffix, subst(R"(
__device__ __forceinline__ float emb_attn_dot_$DH(const float *x, const float *y) {
  float sum = 0.0f;
  for (int c = 0; c < $DH; ++c) sum += x[c] * y[c];
  return sum;
}
__device__ __forceinline__ float emb_attn_weight_$DH(const float *qi, const float *kj, float m, double sum) {
  return (float)(exp((double)(emb_attn_dot_$DH(qi, kj) * $SCALE) - (double)m) / sum);
}
)",
                                                             {{"DH", suffix},
                                                              {"SCALE", floatLiteral(1.0 / std::sqrt(double(s.dh)))}}));
  return suffix;
}

/// Code that sets `n` (the length of sequence b, clamped to [0, L]) and,
/// for query row i < n, `keys`, `m` and `sum` (the row's softmax statistics).
std::string rowStats(const Shape &s, const std::string &dh, const std::string &offsets) {
  return subst(R"(    emb_i64 n = $OFF[b + 1] - $OFF[b];
    n = n < 0 ? 0 : (n > $L ? $L : n);
)",
               {{"OFF", offsets}, {"L", lit(s.L)}}) +
         subst(R"(    const emb_i64 keys = $CAUSAL ? (i + 1 < n ? i + 1 : n) : n;
    float m = __int_as_float(0xff800000);
    double sum = 0.0;
    if (i < n) {
      for (emb_i64 j = 0; j < keys; ++j) {
        const float sc = emb_attn_dot_$DH(qi, K + (b * $L + j) * $D + h * $DH) * $SCALE;
        m = m < sc ? sc : m;
      }
      for (emb_i64 j = 0; j < keys; ++j)
        sum += exp((double)(emb_attn_dot_$DH(qi, K + (b * $L + j) * $D + h * $DH) * $SCALE) - (double)m);
    }
)",
               {{"CAUSAL", s.causal ? "true" : "false"},
                {"DH", dh},
                {"L", lit(s.L)},
                {"D", lit(s.D)},
                {"SCALE", floatLiteral(1.0 / std::sqrt(double(s.dh)))}});
}

/// The loop over (b, h, position, column chunk) items; `pos` names the
/// position, `row` = (b H + h) L + pos the row of the statistics, and the
/// thread's columns are cb .. cb + $C - 1 of the head.
std::string items(const Shape &s, const std::string &pos) {
  return subst(R"(  for (emb_i64 item = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; item < $N;
       item += (emb_i64)gridDim.x * blockDim.x) {
    const emb_i64 row = item / $NC, cb = item % $NC * $C;
    const emb_i64 $POS = row % $L, b = row / $L / $H, h = row / $L % $H;
)",
               {{"N", lit(s.items())},
                {"NC", lit(s.chunks())},
                {"C", std::to_string(s.chunk())},
                {"L", lit(s.L)},
                {"H", lit(s.H)},
                {"POS", pos}});
}

void launch(CudaEmitter &em, rt::CudaKernel &out, const std::string &entry, Args &args,
            const Shape &s) {
  em.setMinBlocks(entry, 2);
  out.launches.push_back(CudaEmitter::kernelLaunch(
      entry, args.list, gridFor(s.items(), kAttentionBlock), kAttentionBlock));
}

// attention: q, k, v, offsets -> o.
void lowerAttention(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 4, 1);
  const Shape s = shapeOf(em, k, k.inputs[0]);
  const std::string dh = helpers(em, s);
  Args args;
  const std::string q = args.buffer(k.inputs[0], "const float");
  const std::string key = args.buffer(k.inputs[1], "const float");
  const std::string v = args.buffer(k.inputs[2], "const float");
  const std::string offsets = args.buffer(k.inputs[3], "const emb_i64");
  const std::string o = args.buffer(k.outputs[0], "float");
  const std::string entry = em.entryName(k.op);
  const DropCode drop = dropCode(em, s);
  em.append(subst(R"(// attention of $B x $L x $D, $H heads of $DH$CAUSALNOTE: a thread per (sequence, head, query).
extern "C" __global__ void $ENTRY(EmbArgs a) {
$DROPSETUP  const float *K = $KP, *V = $VP;
$ITEMS    const float *qi = $QP + (b * $L + i) * $D + h * $DH;
$STATS    float acc[$C];
#pragma unroll
    for (int c = 0; c < $C; ++c) acc[c] = 0.0f;
    if (i < n)
      for (emb_i64 j = 0; j < keys; ++j) {
        const float p = emb_attn_weight_$DH(qi, K + (b * $L + j) * $D + h * $DH, m, sum)$DROPMUL;
        const float *vj = V + (b * $L + j) * $D + h * $DH + cb;
#pragma unroll
        for (int c = 0; c < $C; ++c) acc[c] += p * vj[c];
      }
    float *oi = $OP + (b * $L + i) * $D + h * $DH + cb;
#pragma unroll
    for (int c = 0; c < $C; ++c) oi[c] = acc[c];
  }
}
)",
                  {{"B", std::to_string(s.B)},
                   {"L", lit(s.L)},
                   {"D", lit(s.D)},
                   {"H", std::to_string(s.H)},
                   {"DH", dh},
                   {"CAUSALNOTE", s.causal ? ", causal" : ""},
                   {"DROPSETUP", drop.setup},
                   {"DROPMUL", drop.factor.empty() ? "" : " * " + drop.factor},
                   {"ENTRY", entry},
                   {"KP", key},
                   {"VP", v},
                   {"QP", q},
                   {"OP", o},
                   {"C", std::to_string(s.chunk())},
                   {"ITEMS", items(s, "i")},
                   {"STATS", rowStats(s, dh, offsets)}}));
  launch(em, out, entry, args, s);
}

/// The operands both backward passes read, registered in this order.
struct GradOperands {
  std::string dy, q, key, v, offsets;
  GradOperands(Args &args, const rt::Kernel &k)
      : dy(args.buffer(k.inputs[0], "const float")), q(args.buffer(k.inputs[1], "const float")),
        key(args.buffer(k.inputs[2], "const float")), v(args.buffer(k.inputs[3], "const float")),
        offsets(args.buffer(k.inputs[4], "const emb_i64")) {}
};

// attention_grad: dy, q, k, v, offsets -> dq, dk, dv. The row pass keeps
// each query row's maximum, sum and t_i in scratch for the key pass.
void lowerAttentionGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 5, 3);
  const Shape s = shapeOf(em, k, k.inputs[1]);
  const std::string dh = helpers(em, s);
  const int64_t rows = s.B * s.H * s.L; // one set of statistics per query row
  const int64_t sums = em.scratch(rows * 8), floats = em.scratch(rows * 8);
  const std::string scale = floatLiteral(1.0 / std::sqrt(double(s.dh)));
  const std::map<std::string, std::string> common = {{"L", lit(s.L)},
                                                     {"D", lit(s.D)},
                                                     {"H", std::to_string(s.H)},
                                                     {"DH", dh},
                                                     {"C", std::to_string(s.chunk())},
                                                     {"SCALE", scale},
                                                     {"CAUSAL", s.causal ? "true" : "false"}};
  const DropCode drop = dropCode(em, s);
  // dP_ij = (dy_i . v_j) times the weight's dropout factor, if any.
  const std::string dp = "emb_attn_dot_$DH(gi, $VJ)" + (drop.factor.empty() ? "" : " * " + drop.factor);
  auto with = [&](std::map<std::string, std::string> more) {
    more.insert(common.begin(), common.end());
    more.insert({"DROPSETUP", drop.setup});
    return more;
  };
  {
    Args args;
    const GradOperands in(args, k);
    const std::string dq = args.buffer(k.outputs[0], "float");
    const std::string sumP = args.scratch(sums, "double");
    const std::string statP = args.scratch(floats, "float");
    const std::string entry = em.entryName("attention_grad_rows");
    em.append(subst(R"(// attention_grad, dq: a thread per (sequence, head, query row).
extern "C" __global__ void $ENTRY(EmbArgs a) {
$DROPSETUP  const float *K = $KP, *V = $VP;
$ITEMS    const float *qi = $QP + (b * $L + i) * $D + h * $DH;
    const float *gi = $GP + (b * $L + i) * $D + h * $DH;
$STATS    float acc[$C];
#pragma unroll
    for (int c = 0; c < $C; ++c) acc[c] = 0.0f;
    if (i < n) {
      double t = 0.0;
      for (emb_i64 j = 0; j < keys; ++j)
        t += (double)emb_attn_weight_$DH(qi, K + (b * $L + j) * $D + h * $DH, m, sum) *
             (double)($DPROW);
      const float tf = (float)t;
      for (emb_i64 j = 0; j < keys; ++j) {
        const float *kj = K + (b * $L + j) * $D + h * $DH;
        const float p = emb_attn_weight_$DH(qi, kj, m, sum);
        const float ds = p * (($DPROW) - tf);
#pragma unroll
        for (int c = 0; c < $C; ++c) acc[c] += ds * kj[cb + c];
      }
      if (cb == 0) {
        $SUMS[row] = sum;
        $STATSP[2 * row] = m;
        $STATSP[2 * row + 1] = tf;
      }
    }
    float *dqi = $DQ + (b * $L + i) * $D + h * $DH + cb;
#pragma unroll
    for (int c = 0; c < $C; ++c) dqi[c] = acc[c] * $SCALE;
  }
}
)",
                    with({{"ENTRY", entry},
                          {"KP", in.key},
                          {"VP", in.v},
                          {"QP", in.q},
                          {"GP", in.dy},
                          {"DQ", dq},
                          {"SUMS", sumP},
                          {"STATSP", statP},
                          {"ITEMS", items(s, "i")},
                          {"DPROW", subst(dp, {{"VJ", "V + (b * $L + j) * $D + h * $DH"}})},
                          {"STATS", rowStats(s, dh, in.offsets)}})));
    launch(em, out, entry, args, s);
  }
  Args args;
  const GradOperands in(args, k);
  const std::string dk = args.buffer(k.outputs[1], "float");
  const std::string dv = args.buffer(k.outputs[2], "float");
  const std::string sumP = args.scratch(sums, "const double");
  const std::string statP = args.scratch(floats, "const float");
  const std::string entry = em.entryName("attention_grad_keys");
  em.append(subst(R"(// attention_grad, dk and dv: a thread per (sequence, head, key row), query rows in order.
extern "C" __global__ void $ENTRY(EmbArgs a) {
$DROPSETUP  const float *Q = $QP, *G = $GP;
$ITEMS    emb_i64 n = $OFF[b + 1] - $OFF[b];
    n = n < 0 ? 0 : (n > $L ? $L : n);
    const float *kj = $KP + (b * $L + j) * $D + h * $DH;
    const float *vj = $VP + (b * $L + j) * $D + h * $DH;
    float accK[$C], accV[$C];
#pragma unroll
    for (int c = 0; c < $C; ++c) accK[c] = accV[c] = 0.0f;
    if (j < n)
      for (emb_i64 i = $CAUSAL ? j : 0; i < n; ++i) {
        const emb_i64 r = (b * $H + h) * $L + i;
        const float *qi = Q + (b * $L + i) * $D + h * $DH;
        const float *gi = G + (b * $L + i) * $D + h * $DH;
        const float p = emb_attn_weight_$DH(qi, kj, $STATSP[2 * r], $SUMS[r]);
        const float ds = p * (($DPKEY) - $STATSP[2 * r + 1]);
$PDLINE#pragma unroll
        for (int c = 0; c < $C; ++c) {
          accK[c] += ds * qi[cb + c];
          accV[c] += $PD * gi[cb + c];
        }
      }
    float *dkj = $DK + (b * $L + j) * $D + h * $DH + cb;
    float *dvj = $DV + (b * $L + j) * $D + h * $DH + cb;
#pragma unroll
    for (int c = 0; c < $C; ++c) {
      dkj[c] = accK[c] * $SCALE;
      dvj[c] = accV[c];
    }
  }
}
)",
                  with({{"ENTRY", entry},
                        {"QP", in.q},
                        {"GP", in.dy},
                        {"KP", in.key},
                        {"VP", in.v},
                        {"OFF", in.offsets},
                        {"DK", dk},
                        {"DV", dv},
                        {"SUMS", sumP},
                        {"STATSP", statP},
                        {"DPKEY", subst(dp, {{"VJ", "vj"}})},
                        {"PDLINE", drop.factor.empty()
                                       ? ""
                                       : "        const float pd = p * " + drop.factor + ";\n"},
                        {"PD", drop.factor.empty() ? "p" : "pd"},
                        {"ITEMS", items(s, "j")}})));
  launch(em, out, entry, args, s);
}

} // namespace

EMBC_CUDA_LOWERING(Attention, lowerAttention)
EMBC_CUDA_LOWERING(AttentionGrad, lowerAttentionGrad)
