//===- EmbeddingLowering.cpp - shared parts of the embedding lowerings ---===//
//
// What the three EmbeddingLowering files share: the row layout, table-row reads in every
// storage, the optimizer row step and the stochastic requantisation of a
// row held by one warp (see EmbeddingLowering.h). Every formula mirrors the
// CPU code it names, operation for operation, so that the generated kernels
// store the same bits (runtime/lib/cpu/OptimizerRow.h, QuantizedKernels.cpp).
//
//===----------------------------------------------------------------------===//

#include "EmbeddingLowering.h"

#include <algorithm>
#include <cstdio>

using namespace embc::codegen;
using namespace embc::codegen::emb;

// --- Text helpers ----------------------------------------------------------------

std::string emb::subst(std::string text, const std::map<std::string, std::string> &values) {
  std::vector<std::pair<std::string, std::string>> order(values.begin(), values.end());
  std::sort(order.begin(), order.end(),
            [](const auto &a, const auto &b) { return a.first.size() > b.first.size(); });
  for (const auto &[name, value] : order) {
    const std::string key = "$" + name;
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  }
  return text;
}

std::string emb::lit(int64_t v) { return std::to_string(v) + "LL"; }

std::string emb::ulit(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%016llxULL", static_cast<unsigned long long>(v));
  return text;
}

int64_t emb::leading(const rt::Buffer &b) { return b.shape.empty() ? 1 : b.shape[0]; }

int emb::bitWidth(uint64_t x) {
  int bits = 0;
  while (x) {
    ++bits;
    x >>= 1;
  }
  return bits;
}

uint64_t emb::hashName(const std::string &name) {
  auto mix64 = [](uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  };
  uint64_t h = 0xCBF29CE484222325ull;
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  return mix64(h);
}

// --- Layouts and storages -----------------------------------------------------------

/// The widest vector (values per access) at most maxV that divides D:
/// 16-byte f32 accesses when D % 4 == 0 and the operands allow them
/// (vectorWidthFor).
static int64_t vectorWidth(int64_t D, int64_t maxV) {
  for (int64_t v : {4, 2})
    if (v <= maxV && D % v == 0)
      return v;
  return 1;
}

int emb::storageBits(const Storage &s) {
  switch (s.kind) {
  case rt::Storage::F32:
    return 32;
  case rt::Storage::Int8:
    return 8;
  case rt::Storage::Int4:
    return 4;
  case rt::Storage::F16:
  case rt::Storage::BF16:
    break;
  }
  return 16;
}

int64_t emb::vectorWidthFor(const CudaEmitter &em, int64_t D,
                            const std::vector<RowOperand> &operands) {
  for (int64_t v : {4, 2}) {
    if (D % v != 0)
      continue;
    bool ok = true;
    for (const RowOperand &op : operands) {
      const int64_t bytes = v * op.bits / 8;
      ok = ok && (bytes <= 1 || alignmentOf(em, op.arg) % bytes == 0);
    }
    if (ok)
      return v;
  }
  return 1;
}

Layout emb::groupLayout(int64_t D, int64_t maxV) {
  Layout l;
  l.D = D;
  l.V = vectorWidth(D, maxV);
  l.NV = D / l.V;
  l.L = 1;
  while (l.L < 32 && l.L < l.NV)
    l.L *= 2;
  l.CH = (l.NV + l.L - 1) / l.L;
  return l;
}

std::string emb::groupLanes(const Layout &l, const std::string &thread) {
  const std::string L = std::to_string(l.L);
  if (l.L == 32)
    return "  const int lane = (int)(" + thread + " & 31);\n"
           "  const unsigned emb_gm = 0xffffffffu;\n";
  return "  const int lane = (int)(" + thread + " & " + std::to_string(l.L - 1) + ");\n"
         "  const unsigned emb_gm = ((1u << " + L + ") - 1u) << ((" + thread + " & 31) & ~" +
         std::to_string(l.L - 1) + "u);\n";
}

int emb::groupShift(const Layout &l) {
  int s = 0;
  while ((int64_t(1) << s) < l.L)
    ++s;
  return s;
}

/// The loop skeletons' placeholders: chunks, lanes, vectors, vector width.
static std::map<std::string, std::string> layoutVars(const Layout &l) {
  return {{"CH", std::to_string(l.CH)},
          {"L", std::to_string(l.L)},
          {"NV", std::to_string(l.NV)},
          {"V", std::to_string(l.V)}};
}

std::string emb::forValues(const Layout &l, const std::string &body) {
  // The skeleton's placeholders first, the body (which has its own) last.
  return subst(subst(R"(
#pragma unroll
    for (int c = 0; c < $CH; ++c) {
      const int vi = c * $L + lane;
      if (vi < $NV) {
#pragma unroll
        for (int e = 0; e < $V; ++e) {
          const int t = c * $V + e;
          const int j = vi * $V + e;
          (void)t; (void)j;
          $BODY
        }
      }
    }
)",
               layoutVars(l)),
               {{"BODY", body}});
}

std::string Storage::elemType() const {
  if (kind == rt::Storage::F32)
    return "float";
  if (kind == rt::Storage::F16 || kind == rt::Storage::BF16)
    return "emb_u16";
  return "emb_u8";
}

Storage emb::storageOf(rt::Storage kind) {
  Storage s;
  s.kind = kind;
  return s;
}

/// Per-vector loop skeleton shared by the row loads and stores.
static std::string forVectors(const Layout &l, const std::string &body) {
  return subst(subst(R"(
#pragma unroll
    for (int c = 0; c < $CH; ++c) {
      const int vi = c * $L + lane;
      if (vi < $NV) {
        const int j = vi * $V;
        $BODY
      }
    }
)",
               layoutVars(l)),
               {{"BODY", body}});
}

/// The one of `v4`, `v2` and `v1` for the layout's vector width (values a
/// lane moves in one access).
static std::string byWidth(const Layout &l, const char *v4, const char *v2, const char *v1) {
  return l.V == 4 ? v4 : l.V == 2 ? v2 : v1;
}

/// A block that declares `head` and runs `body` per vector of the row.
static std::string vectorBlock(const Layout &l, const std::string &head, const std::string &body) {
  return "{\n    " + head + "\n" + forVectors(l, body) + "  }\n";
}

std::string emb::loadF32(const Layout &l, const std::string &src, const std::string &out) {
  const std::string body =
      byWidth(l,
              "const emb_f4 q = emb_vload<emb_f4>(emb_src + j); $OUT[c * 4] = q.x; "
              "$OUT[c * 4 + 1] = q.y; $OUT[c * 4 + 2] = q.z; $OUT[c * 4 + 3] = q.w;",
              "const emb_f2 q = emb_vload<emb_f2>(emb_src + j); $OUT[c * 2] = q.x; "
              "$OUT[c * 2 + 1] = q.y;",
              "$OUT[c] = emb_src[j];");
  return vectorBlock(l, "const float *emb_src = " + src + ";", subst(body, {{"OUT", out}}));
}

std::string emb::storeF32(const Layout &l, const std::string &dst, const std::string &in) {
  const std::string body =
      byWidth(l,
              "emb_f4 q; q.x = $IN[c * 4]; q.y = $IN[c * 4 + 1]; q.z = $IN[c * 4 + 2]; "
              "q.w = $IN[c * 4 + 3]; emb_vstore(emb_dst + j, q);",
              "emb_f2 q; q.x = $IN[c * 2]; q.y = $IN[c * 2 + 1]; emb_vstore(emb_dst + j, q);",
              "emb_dst[j] = $IN[c];");
  return vectorBlock(l, "float *emb_dst = " + dst + ";", subst(body, {{"IN", in}}));
}

std::string emb::loadRow(const Storage &s, const Layout &l, const std::string &table,
                         const std::string &qp, const std::string &row, const std::string &out) {
  const std::string D = lit(l.D);
  if (s.kind == rt::Storage::F32)
    return loadF32(l, table + " + (" + row + ") * " + D, out);
  std::string head, body;
  if (s.kind == rt::Storage::F16 || s.kind == rt::Storage::BF16) {
    const std::string cvt = s.kind == rt::Storage::F16 ? "emb_half_to_float" : "emb_bf16_to_float";
    head = "const emb_u16 *emb_src = " + table + " + (" + row + ") * " + D + ";";
    body = byWidth(l,
                   "const emb_h4 q = emb_vload<emb_h4>(emb_src + j); $OUT[c * 4] = $CVT(q.x); "
                   "$OUT[c * 4 + 1] = $CVT(q.y); $OUT[c * 4 + 2] = $CVT(q.z); "
                   "$OUT[c * 4 + 3] = $CVT(q.w);",
                   "const emb_h2 q = emb_vload<emb_h2>(emb_src + j); $OUT[c * 2] = $CVT(q.x); "
                   "$OUT[c * 2 + 1] = $CVT(q.y);",
                   "$OUT[c] = $CVT(emb_src[j]);");
    body = subst(body, {{"CVT", cvt}});
  } else {
    // value = scale * q + bias in f32 from the row's fp16 scale and bias
    // (QuantizedKernels.cpp dequantizeRow).
    const bool int4 = s.kind == rt::Storage::Int4;
    head = "const emb_u8 *emb_src = " + table + " + (" + row + ") * " +
           lit(int4 ? l.D / 2 : l.D) + ";\n    const float emb_sc = emb_half_to_float(" + qp +
           "[2 * (" + row + ")]), emb_bi = emb_half_to_float(" + qp + "[2 * (" + row +
           ") + 1]);";
    if (!int4) {
      body = byWidth(l,
                     "const emb_u32 q = emb_vload<emb_u32>(emb_src + j);\n"
                     "#pragma unroll\n for (int e = 0; e < 4; ++e) $OUT[c * 4 + e] = emb_sc * "
                     "(float)((q >> (8 * e)) & 0xffu) + emb_bi;",
                     "const emb_u16 q = emb_vload<emb_u16>(emb_src + j);\n"
                     "#pragma unroll\n for (int e = 0; e < 2; ++e) $OUT[c * 2 + e] = emb_sc * "
                     "(float)((q >> (8 * e)) & 0xffu) + emb_bi;",
                     "$OUT[c] = emb_sc * (float)emb_src[j] + emb_bi;");
    } else {
      // Element 2k in the low nibble of byte k; V is even for int4 (D even).
      const char *pair = "const emb_u8 q = emb_src[j / 2]; "
                         "$OUT[c * 2] = emb_sc * (float)(q & 0xfu) + emb_bi; "
                         "$OUT[c * 2 + 1] = emb_sc * (float)(q >> 4) + emb_bi;";
      body = byWidth(l,
                     "const emb_u16 q = emb_vload<emb_u16>(emb_src + j / 2);\n"
                     "#pragma unroll\n for (int e = 0; e < 4; ++e) $OUT[c * 4 + e] = emb_sc * "
                     "(float)((q >> (4 * e)) & 0xfu) + emb_bi;",
                     pair, pair);
    }
  }
  return vectorBlock(l, head, subst(body, {{"OUT", out}}));
}

// --- Device helpers ---------------------------------------------------------------

namespace {

const char *kHelpers = R"CUDA(
// ---- embedding helpers (passes/lib/cuda/EmbeddingLowering.cpp) ----
// Row vectors: a lane moves V consecutive values of a row in one access.
struct alignas(16) emb_f4 { float x, y, z, w; };
struct alignas(8) emb_f2 { float x, y; };
struct alignas(8) emb_h4 { emb_u16 x, y, z, w; };
struct alignas(4) emb_h2 { emb_u16 x, y; };

__device__ __forceinline__ emb_u64 emb_rotl64(emb_u64 x, int r) {
  return (x << r) | (x >> (64 - r));
}
// XXH64 of the id's 8 little-endian bytes with `seed`, mod buckets: the
// 8-byte path of xxHash (one round, then the avalanche), equal to the CPU's
// XXH64 bit for bit (runtime/lib/cpu/EmbeddingKernels.cpp hashIds).
__device__ __forceinline__ emb_i64 emb_hash_id(emb_i64 id, emb_u64 seed, emb_u64 buckets) {
  const emb_u64 p1 = 0x9E3779B185EBCA87ULL, p2 = 0xC2B2AE3D27D4EB4FULL,
                p3 = 0x165667B19E3779F9ULL, p4 = 0x85EBCA77C2B2AE63ULL,
                p5 = 0x27D4EB2F165667C5ULL;
  emb_u64 h = seed + p5 + 8ULL;
  emb_u64 k = (emb_u64)id * p2;
  k = emb_rotl64(k, 31) * p1;
  h ^= k;
  h = emb_rotl64(h, 27) * p1 + p4;
  h ^= h >> 33;
  h *= p2;
  h ^= h >> 29;
  h *= p3;
  h ^= h >> 32;
  return (emb_i64)(h % buckets);
}

// Counter-based random words (runtime/include/embc/runtime/data/CounterRandom.h).
__device__ __forceinline__ emb_u64 emb_mix64(emb_u64 x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
__device__ __forceinline__ emb_u64 emb_hash_word(emb_u64 h, emb_u64 w) {
  return emb_mix64(h ^ emb_mix64(w + 0x632BE59BD9B4E019ULL));
}
// rowKey(seed, tableKey, row, step) = hashOf(seed, tableKey, row, step).
__device__ __forceinline__ emb_u64 emb_row_key(emb_u64 seed, emb_u64 table, emb_i64 row,
                                               emb_i64 step) {
  emb_u64 h = emb_mix64(seed ^ 0x2545F4914F6CDD1DULL);
  h = emb_hash_word(h, table);
  h = emb_hash_word(h, (emb_u64)row);
  return emb_hash_word(h, (emb_u64)step);
}
__device__ __forceinline__ double emb_uniform01(emb_u64 h) {
  return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

// Neighbouring bit patterns of a sign-magnitude 16-bit float (fp16, bf16).
__device__ __forceinline__ emb_u16 emb_next_up16(emb_u16 h) {
  if (h & 0x8000u) return h == 0x8000u ? (emb_u16)0x0001u : (emb_u16)(h - 1u);
  return (emb_u16)(h + 1u);
}
__device__ __forceinline__ emb_u16 emb_next_down16(emb_u16 h) {
  if (h & 0x8000u) return (emb_u16)(h + 1u);
  return h == 0 ? (emb_u16)0x8001u : (emb_u16)(h - 1u);
}
__device__ __forceinline__ float emb_dec16(emb_u16 h, bool bf) {
  return bf ? emb_bf16_to_float(h) : emb_half_to_float(h);
}
__device__ __forceinline__ emb_u16 emb_enc16(float f, bool bf) {
  return bf ? emb_float_to_bf16(f) : emb_float_to_half(f);
}
// Stochastic rounding to fp16/bf16 (QuantizedKernels.cpp stochastic16).
__device__ __forceinline__ emb_u16 emb_stochastic16(float x, emb_u64 bits, bool bf) {
  const emb_u16 r = emb_enc16(x, bf);
  if (!isfinite(x)) return r;
  const float fr = emb_dec16(r, bf);
  if (fr == x || !isfinite(fr)) return r;
  const emb_u16 other = fr < x ? emb_next_up16(r) : emb_next_down16(r);
  const float fo = emb_dec16(other, bf);
  const emb_u16 lo = fr < x ? r : other, hi = fr < x ? other : r;
  const double flo = fr < x ? fr : fo, fhi = fr < x ? fo : fr;
  if (!isfinite(fhi) || !isfinite(flo)) return r;
  const double pUp = ((double)x - flo) / (fhi - flo);
  return emb_uniform01(bits) < pUp ? hi : lo;
}
// The row's fp16 scale and bias, rounded outwards (rowwiseParams).
__device__ __forceinline__ void emb_rowwise_params(float lo, float hi, int maxCode,
                                                   emb_u16 *scale, emb_u16 *bias) {
  const float kHalfMax = 65504.0f;
  lo = lo < -kHalfMax ? -kHalfMax : (kHalfMax < lo ? kHalfMax : lo);
  hi = hi < lo ? lo : (kHalfMax < hi ? kHalfMax : hi);
  emb_u16 b = emb_float_to_half(lo);
  if (emb_half_to_float(b) > lo) b = emb_next_down16(b);
  const double span = ((double)hi - (double)emb_half_to_float(b)) / (double)maxCode;
  emb_u16 s = emb_float_to_half((float)span);
  if ((double)emb_half_to_float(s) < span) s = emb_next_up16(s);
  *scale = s;
  *bias = b;
}
// A stochastically rounded code (quantizeCode, nearest = false). q is
// clamped to [-1, maxCode + 1] first: it changes no result (codes are
// clamped to 0..maxCode) and keeps the integer cast of the floor exact.
__device__ __forceinline__ emb_u32 emb_quantize_code(float x, float scale, float bias,
                                                     emb_u64 bits, int maxCode) {
  if (!(scale > 0.0f)) return 0u;
  double q = ((double)x - (double)bias) / (double)scale;
  if (q < -1.0) q = -1.0;
  if (q > maxCode + 1.0) q = maxCode + 1.0;
  double code = (double)(emb_i64)q;
  if (code > q) code -= 1.0;
  if (emb_uniform01(bits) < q - code) code += 1.0;
  return code < 0.0 ? 0u : (code > (double)maxCode ? (emb_u32)maxCode : (emb_u32)code);
}
// beta^t for Adam's bias corrections (t >= 0), by squaring in double.
__device__ __forceinline__ double emb_pow_int(double b, emb_i64 t) {
  double r = 1.0;
  while (t > 0) {
    if (t & 1) r *= b;
    b *= b;
    t >>= 1;
  }
  return r;
}
)CUDA";

} // namespace

void emb::appendHelpers(CudaEmitter &em) { em.appendOnce("emb_embedding_helpers", kHelpers); }

// --- Targets and optimizers ------------------------------------------------------------

const rt::Table &emb::tableOf(const rt::Plan &plan, int64_t index) {
  if (index < 0 || index >= int64_t(plan.tables.size()))
    throw CodegenError("table index " + std::to_string(index) + " out of range (the plan has " +
                       std::to_string(plan.tables.size()) + " tables)");
  return plan.tables[size_t(index)];
}

Target emb::targetOf(const rt::Plan &plan, const rt::Kernel &k) {
  Target t;
  // A lone table and a table batch name these the same.
  auto readTarget = [&t](const auto &src) {
    t.name = src.name;
    t.rows = src.rows;
    t.dim = src.dim;
    t.buffer = src.buffer;
    t.qparams = src.qparams;
    t.gradRows = src.gradRows;
    t.gradValues = src.gradValues;
    t.state = src.state;
    t.optimizer = src.optimizer;
    t.storage = storageOf(src.storage);
  };
  if (!k.attrs.contains("batch")) {
    const rt::Table &tb = tableOf(plan, intAttr(k, "table"));
    readTarget(tb);
    t.segments.push_back({0, tb.rows, tb.name, hashName(tb.name)});
  } else {
    const int64_t i = intAttr(k, "batch");
    if (i < 0 || i >= int64_t(plan.tableBatches.size()))
      throw CodegenError("table batch index " + std::to_string(i) + " out of range");
    const rt::TableBatch &b = plan.tableBatches[size_t(i)];
    readTarget(b);
    if (b.members.size() != b.rowOffsets.size() || b.members.empty())
      throw CodegenError("table batch '" + b.name + "' has " + std::to_string(b.members.size()) +
                         " members and " + std::to_string(b.rowOffsets.size()) + " row offsets");
    for (size_t m = 0; m < b.members.size(); ++m) {
      const rt::Table &tb = tableOf(plan, b.members[m]);
      t.segments.push_back({b.rowOffsets[m], tb.rows, tb.name, hashName(tb.name)});
    }
    std::sort(t.segments.begin(), t.segments.end(),
              [](const auto &x, const auto &y) { return x.firstRow < y.firstRow; });
    if (t.segments.front().firstRow != 0)
      throw CodegenError("table batch '" + b.name + "': the row segments must start at row 0");
  }
  if (t.storage.kind == rt::Storage::Int4 && t.dim % 2 != 0)
    throw CodegenError("int4 table '" + t.name + "' has an odd dim " + std::to_string(t.dim));
  if (t.storage.rowwise() && t.qparams < 0)
    throw CodegenError("table '" + t.name + "' is " + t.storage.name() + " but has no qparams");
  return t;
}

OptSpec emb::optSpec(const Target &t) {
  const rt::Optimizer &p = t.optimizer;
  OptSpec o;
  static_cast<rt::Optimizer &>(o) = p;
  o.states = int(p.stateBuffers());
  if (int(t.state.size()) != o.states)
    throw CodegenError("'" + t.name + "' has " + std::to_string(t.state.size()) +
                       " state buffers but " + rt::enumString(o.kind) + " keeps " + std::to_string(o.states));
  const bool hasDecay = p.weightDecay != 0;
  o.coupled = hasDecay && o.kind != rt::OptimizerKind::AdamW && o.kind != rt::OptimizerKind::Lamb;
  o.decoupled = hasDecay && o.kind == rt::OptimizerKind::AdamW;
  // applyGlobalDecay: every row scaled by (1 - lr wd) first, then the plain
  // step; defined only where an untouched row's decay needs no state.
  if (p.weightDecayMode == rt::WeightDecayMode::Global && p.weightDecay > 0) {
    if (t.storage.quantised())
      throw CodegenError("global weight decay of '" + t.name +
                         "' would requantise every row every step; quantised tables take "
                         "lazy decay");
    if (!(o.kind == rt::OptimizerKind::Sgd && p.momentum == 0) && o.kind != rt::OptimizerKind::AdamW)
      throw CodegenError("global weight decay of '" + t.name + "' (" + rt::enumString(o.kind) +
                         (o.kind == rt::OptimizerKind::Sgd ? " with momentum" : "") +
                         ") is only defined for sgd without momentum and adamw; use lazy decay");
    o.globalDecay = true;
    o.coupled = o.decoupled = false;
  }
  return o;
}

std::string emb::hyperCode(const OptSpec &o, const std::string &gradScale) {
  // makeHyper: lr in double (lr * lrScale), then every scalar rounded to f32.
  std::string code = subst(R"(
  const double emb_lr = $LRBASE * (double)a.step->lrScale;
  const float LR = (float)emb_lr;
  const float GS = (float)($GSCALE);
  const float DS = (float)(1.0 - emb_lr * $WDD);
  (void)LR; (void)GS; (void)DS;
)",
                           {{"LRBASE", doubleLiteral(o.lr)},
                            {"GSCALE", gradScale},
                            {"WDD", doubleLiteral(o.weightDecay)}});
  if (o.adamFamily())
    code += subst(R"(
  const float IB1 = (float)(1.0 / (1.0 - emb_pow_int($B1D, a.step->optimizerStep)));
  const float IB2 = (float)(1.0 / (1.0 - emb_pow_int($B2D, a.step->optimizerStep)));
)",
                  {{"B1D", doubleLiteral(o.beta1)}, {"B2D", doubleLiteral(o.beta2)}});
  return code;
}

/// A loop over the values of a group's row in row order (j = 0 .. D - 1),
/// each broadcast to every lane of the group: the CPU's sequential
/// reductions, with the same order and therefore the same rounding. `arr`
/// is a lane's K values of type `type`; BODY sees `x`.
static std::string orderedLoop(const Layout &l, const std::string &type, const std::string &arr,
                               const std::string &body) {
  return subst(R"(
#pragma unroll
    for (int c = 0; c < $CH; ++c)
      for (int l = 0; l < $L; ++l)
        if (c * $L + l < $NV) {
#pragma unroll
          for (int e = 0; e < $V; ++e) {
            const $TYPE x = __shfl_sync(emb_gm, $ARR[c * $V + e], l, $L);
            $BODY
          }
        }
)",
               {{"CH", std::to_string(l.CH)},
                {"L", std::to_string(l.L)},
                {"NV", std::to_string(l.NV)},
                {"V", std::to_string(l.V)},
                {"TYPE", type},
                {"ARR", arr},
                {"BODY", body}});
}

std::string emb::rowUpdateCode(CudaEmitter &em, const Target &t, const OptSpec &o,
                               const Layout &l) {
  const std::string D = lit(l.D), K = std::to_string(l.K());
  const bool rowwise = o.kind == rt::OptimizerKind::RowwiseAdagrad;
  std::map<std::string, std::string> v = {
      {"K", K},
      {"D", D},
      {"LRD", doubleLiteral(o.lr)},
      {"WD", floatLiteral(o.coupled ? o.weightDecay : 0.0)},
      {"LWD", floatLiteral(o.weightDecay)},
      {"MOM", floatLiteral(o.momentum)},
      {"B1", floatLiteral(o.beta1)},
      {"OMB1", floatLiteral(1.0 - o.beta1)}, // 1 - beta in double, as the bias correction
      {"B2", floatLiteral(o.beta2)},
      {"OMB2", floatLiteral(1.0 - o.beta2)},
      {"EPS", floatLiteral(o.eps)},
      {"SCALE", o.decoupled ? "DS" : "1.0f"},
  };
  // Only the state arrays the optimizer keeps (values of missing vectors
  // stay 0 and are never stored).
  std::string arrays = "w";
  if (o.states >= 1 && !rowwise)
    arrays += ", s0";
  if (o.states >= 2)
    arrays += ", s1";
  std::string code;
  for (const char *name : {"w", "s0", "s1"})
    if (arrays.find(name) != std::string::npos)
      code += std::string("  float ") + name + "[" + K + "];\n#pragma unroll\n  for (int t = 0; t < " +
              K + "; ++t) " + name + "[t] = 0.0f;\n";
  code += loadRow(t.storage, l, "TBL", "QP", "r", "w");
  // The state rows s0 (rowwise adagrad: the row's one accumulator) and s1,
  // moved by `move` (loadF32 or storeF32) or, the accumulator, by `acc`.
  auto stateRows = [&](std::string (*move)(const Layout &, const std::string &,
                                           const std::string &),
                       const char *acc) {
    std::string rowsCode;
    if (o.states >= 1 && !rowwise)
      rowsCode += move(l, "S0 + r * " + D, "s0");
    if (rowwise)
      rowsCode += acc;
    if (o.states >= 2)
      rowsCode += move(l, "S1 + r * " + D, "s1");
    return rowsCode;
  };
  code += stateRows(loadF32, "  float acc0 = S0[r];\n");

  // OptimizerRow.h, expression for expression.
  if (o.kind == rt::OptimizerKind::Sgd && o.momentum == 0) {
    code += forValues(l, "w[t] -= LR * (GS * g[t] + $WD * w[t]);");
  } else if (o.kind == rt::OptimizerKind::Sgd) {
    code += forValues(l, "s0[t] = $MOM * s0[t] + (GS * g[t] + $WD * w[t]); w[t] -= LR * s0[t];");
  } else if (o.kind == rt::OptimizerKind::Adagrad) {
    code += forValues(l, "const float gi = GS * g[t] + $WD * w[t]; s0[t] += gi * gi; "
                         "w[t] -= LR * gi / (sqrtf(s0[t]) + $EPS);");
  } else if (rowwise) {
    code += "  double sq[" + K + "];\n#pragma unroll\n  for (int t = 0; t < " + K +
            "; ++t) sq[t] = 0.0;\n";
    code += forValues(l, "const double gi = (double)(GS * g[t] + $WD * w[t]); sq[t] = gi * gi;");
    code += "  double sumSq = 0.0;\n" + orderedLoop(l, "double", "sq", "sumSq += x;");
    code += "  acc0 += (float)(sumSq / (double)$D);\n"
            "  const float rowStep = LR / (sqrtf(acc0) + $EPS);\n";
    code += forValues(l, "w[t] -= rowStep * (GS * g[t] + $WD * w[t]);");
  } else if (o.kind == rt::OptimizerKind::Adam || o.kind == rt::OptimizerKind::AdamW) {
    code += forValues(l, "const float gi = GS * g[t] + $WD * w[t]; "
                         "s0[t] = $B1 * s0[t] + $OMB1 * gi; "
                         "s1[t] = $B2 * s1[t] + $OMB2 * gi * gi; "
                         "const float mh = s0[t] * IB1, vh = s1[t] * IB2; "
                         "w[t] = $SCALE * w[t] - LR * mh / (sqrtf(vh) + $EPS);");
  } else { // lamb: moments, norms of w and r over the row (double, row order), step
    code += forValues(l, "const float gi = GS * g[t]; "
                         "s0[t] = $B1 * s0[t] + $OMB1 * gi; "
                         "s1[t] = $B2 * s1[t] + $OMB2 * gi * gi;");
    code += "  double w2v[" + K + "], r2v[" + K + "];\n#pragma unroll\n  for (int t = 0; t < " +
            K + "; ++t) w2v[t] = r2v[t] = 0.0;\n";
    code += forValues(l, "const double rr = (double)(s0[t] * IB1 / (sqrtf(s1[t] * IB2) + $EPS) "
                         "+ $LWD * w[t]); w2v[t] = (double)w[t] * (double)w[t]; "
                         "r2v[t] = rr * rr;");
    code += "  double w2 = 0.0, r2 = 0.0;\n" + orderedLoop(l, "double", "w2v", "w2 += x;") +
            orderedLoop(l, "double", "r2v", "r2 += x;");
    code += "  const float trust = w2 > 0 && r2 > 0 ? (float)(sqrt(w2) / sqrt(r2)) : 1.0f;\n"
            "  const float lambStep = LR * trust;\n";
    code += forValues(l, "w[t] -= lambStep * (s0[t] * IB1 / (sqrtf(s1[t] * IB2) + $EPS) + "
                         "$LWD * w[t]);");
  }

  // The finite check of every update (OptimizerRow.h's spans): a lane whose
  // values or state the step left NaN or infinite reports the row; the CPU
  // stops at such a row too (docs/training.md, "Non-finite values").
  const int nonFinite = em.nonFiniteCode(
      "an update of table '" + t.name +
      "' left row {} not finite (NaN or infinity in its values or optimizer state)");
  std::string finite = "stepFinite = stepFinite && isfinite(w[t])";
  if (o.states >= 1 && !rowwise)
    finite += " && isfinite(s0[t])";
  if (o.states >= 2)
    finite += " && isfinite(s1[t])";
  code += std::string("  bool stepFinite = ") + (rowwise ? "isfinite(acc0)" : "true") + ";\n";
  code += forValues(l, finite + ";");
  code += "  if (!stepFinite) emb_set_error(a.step, " + std::to_string(nonFinite) + ", r);\n";

  // State first: the CPU updates it in place before it requantises the row
  // (a non-finite row then fails with its state written, as there).
  code += stateRows(storeF32, "  if (lane == 0) S0[r] = acc0;\n");

  if (!t.storage.quantised()) {
    code += storeF32(l, "TBL + r * " + D, "w");
    return subst(code, v);
  }

  // The stochastic-rounding key of the row: (seed, its member, row in the
  // member, step), so a batched table draws what it draws alone.
  code += "  emb_u64 tableKey = " + ulit(t.segments[0].tableKey) + ";\n  emb_i64 firstRow = 0;\n";
  for (size_t s = 1; s < t.segments.size(); ++s)
    code += "  if (r >= " + lit(t.segments[s].firstRow) + ") { tableKey = " +
            ulit(t.segments[s].tableKey) + "; firstRow = " + lit(t.segments[s].firstRow) +
            "; }\n";
  code += "  const emb_u64 rkey = emb_row_key((emb_u64)a.step->seed, tableKey, r - firstRow, "
          "a.step->optimizerStep);\n";
  if (t.storage.kind == rt::Storage::F16 || t.storage.kind == rt::Storage::BF16) {
    // A finite f32 value past the storage's range rounds to infinity: the
    // finite check counts the row as stored (storage::quantizeRow).
    const bool bf16 = t.storage.kind == rt::Storage::BF16;
    const int overflow = em.nonFiniteCode(
        "an update of table '" + t.name + "' left row {} not finite (a value went beyond the "
        "range of its " + rt::enumString(t.storage.kind) + " storage)");
    code += forValues(l, std::string("{ const emb_u16 q = emb_stochastic16(w[t], emb_mix64(rkey + "
                                     "(emb_u64)j), ") +
                             (bf16 ? "true" : "false") + "); TBL[r * $D + j] = q; if ((q & " +
                             (bf16 ? "0x7f80" : "0x7c00") + ") == " + (bf16 ? "0x7f80" : "0x7c00") +
                             ") emb_set_error(a.step, " + std::to_string(overflow) + ", r); }");
    return subst(code, v);
  }
  // int8 / int4: min, max and finiteness in row order (ties keep the first
  // value, as std::min/max do), the fp16 scale and bias, then the codes.
  const bool int4 = t.storage.kind == rt::Storage::Int4;
  const int code_ = em.nonFiniteCode("an update of table '" + t.name + "' left row {} not "
                                     "finite; " + t.storage.name() + " storage cannot hold it");
  code += "  float lo = __shfl_sync(emb_gm, w[0], 0, " + std::to_string(l.L) +
          "), hi = lo;\n  bool finite = true;\n";
  code += orderedLoop(l, "float", "w",
                      "finite = finite && isfinite(x); lo = x < lo ? x : lo; hi = hi < x ? x : hi;");
  code += "  if (!finite) {\n    if (lane == 0) emb_set_error(a.step, " + std::to_string(code_) +
          ", r);\n  } else {\n"
          "    emb_u16 scb, bib;\n    emb_rowwise_params(lo, hi, $MAXC, &scb, &bib);\n"
          "    if (lane == 0) { QP[2 * r] = scb; QP[2 * r + 1] = bib; }\n"
          "    const float scf = emb_half_to_float(scb), bif = emb_half_to_float(bib);\n";
  if (!int4) {
    code += forValues(l, "TBL[r * $D + j] = (emb_u8)emb_quantize_code(w[t], scf, bif, "
                         "emb_mix64(rkey + (emb_u64)j), $MAXC);");
  } else {
    code += forValues(l, "if ((e & 1) == 0) TBL[r * $HALF + j / 2] = (emb_u8)("
                         "emb_quantize_code(w[t], scf, bif, emb_mix64(rkey + (emb_u64)j), $MAXC) | "
                         "(emb_quantize_code(w[t + 1], scf, bif, emb_mix64(rkey + (emb_u64)(j + 1)), "
                         "$MAXC) << 4));");
  }
  code += "  }\n";
  v["MAXC"] = int4 ? "15" : "255";
  v["HALF"] = lit(l.D / 2);
  return subst(code, v);
}

void emb::emitRunNumbering(CudaEmitter &em, rt::CudaKernel &out, const std::string &hint,
                           int64_t count, const std::string &pad, int64_t keys, int64_t flags,
                           int64_t runOf, int64_t total) {
  Args args;
  const std::string ko = args.scratch(keys, "const emb_i64");
  const std::string f = args.scratch(flags, "int");
  const std::string entry = em.entryName(hint + "_heads");
  em.append(subst(R"(
// 1 where a run of equal sorted keys starts (the padding key is no run).
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= $C) return;
  const emb_i64 key = $KO[i];
  $F[i] = key != $PAD && (i == 0 || $KO[i - 1] != key) ? 1 : 0;
}
)",
                  {{"ENTRY", entry}, {"C", lit(count)}, {"KO", ko}, {"F", f}, {"PAD", pad}}));
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, (count + kBlock - 1) / kBlock, kBlock));
  out.launches.push_back(CudaEmitter::namedLaunch(
      "library", "exclusive_scan",
      {CudaEmitter::scratchAt(flags), CudaEmitter::scratchAt(runOf), CudaEmitter::scratchAt(total)},
      {{"count", count}}));
}

rt::CudaLaunch emb::globalDecayLaunch(CudaEmitter &em, const Target &t, const OptSpec &o,
                                      bool bailOnError) {
  Args args;
  const int64_t n = t.rows * t.dim;
  // 16-byte vectors where the table's start allows them (a table of a
  // packed batch starts where the one before it ends).
  const bool vec = n % 4 == 0 && aligned16(em, CudaEmitter::buf(t.buffer));
  const int64_t items = vec ? n / 4 : n;
  const std::string entry = em.entryName("global_decay_" + t.name);
  const std::string tbl = args.buffer(t.buffer, vec ? "emb_f4" : "float");
  std::string body = vec ? "emb_f4 q = emb_vload<emb_f4>(TBL + i); q.x *= DS; q.y *= DS; "
                           "q.z *= DS; q.w *= DS; emb_vstore(TBL + i, q);"
                         : "TBL[i] *= DS;";
  em.append(subst(R"(
// Global weight decay of '$NAME' (OptimizerRow.h applyGlobalDecay): every
// row *= 1 - lr wd before the touched rows take their step.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  if (a.step->skip$BAIL) return;
$HYPER
  $TYPE *TBL = $TBLP;
  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < $ITEMS;
       i += (emb_i64)gridDim.x * blockDim.x) {
    $BODY
  }
}
)",
                  {{"NAME", t.name},
                   {"ENTRY", entry},
                   {"BAIL", bailOnError ? " || a.step->error" : ""},
                   {"HYPER", hyperCode(o, "1.0")},
                   {"TYPE", vec ? "emb_f4" : "float"},
                   {"TBLP", tbl},
                   {"ITEMS", lit(items)},
                   {"BODY", body}}));
  // Grid-stride: enough blocks to fill an H200 (132 SMs x 8), not one per row.
  const int64_t blocks = std::min<int64_t>((items + kBlock - 1) / kBlock, 1056);
  return CudaEmitter::kernelLaunch(entry, args.list, blocks, kBlock);
}
