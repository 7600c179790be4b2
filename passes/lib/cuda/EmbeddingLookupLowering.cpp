//===- EmbeddingLookupLowering.cpp - hash, lookup, gather, fused_lookup --===//
//
// The forward side of the embedding catalogue. A bag (or a gathered id) is
// served by a group of L lanes (EmbeddingLowering.h, groupLayout): each lane
// owns V-wide vectors of the row, so a 16-wide table uses 4 lanes and a
// warp pools 8 bags at once, while a 128-wide f32 table uses the whole warp
// with 16-byte loads. Pooling runs over the bag's ids in bag order with the
// CPU's arithmetic (runtime/lib/cpu/EmbeddingKernels.cpp lookupForward,
// QuantizedKernels.cpp quantizedLookup: out = 0, out += w row, then * 1/n
// for mean; max keeps the first of equal values), so results are
// bit-identical. Columns never cross lanes, so there are no reductions and
// no atomics. fused_lookup is one kernel for all members: each member owns a
// range of blocks and its own specialised code (dims, storage, pooling).
//
//===----------------------------------------------------------------------===//

#include "EmbeddingLowering.h"

#include "embc/runtime/cuda/KernelAbi.h"

using namespace embc::codegen;
using namespace embc::codegen::emb;

namespace {

/// One table read by a lookup (or a fused_lookup member).
struct Member {
  const rt::Table *table = nullptr;
  Storage storage;
  Layout layout;
  rt::Pooling pooling = rt::Pooling::Sum;
  bool weighted = false;
  bool hash = false;
  int64_t buckets = 0;
  uint64_t seed = 0;
  bool hashedOutput = false;
  int64_t B = 0;
  int32_t ids = -1, offsets = -1, weights = -1, y = -1, hashed = -1;
};

/// The code resolving the raw id `RAW` of a member into `id`.
std::string resolve(const Member &m, const std::string &raw) {
  if (!m.hash)
    return "const emb_i64 id = " + raw + ";";
  return "const emb_i64 id = emb_hash_id(" + raw + ", " + ulit(m.seed) + ", " +
         ulit(uint64_t(m.buckets)) + ");";
}

/// Checks the "dequantize" attribute the CPU insists on for a quantised table.
void expectDequantize(const nlohmann::json &attrs, const Member &m) {
  if (!m.storage.quantised())
    return;
  if (!attrs.contains("dequantize") || attrs["dequantize"] != m.storage.name())
    throw CodegenError("reads table '" + m.table->name + "' stored as " + m.storage.name() +
                       " but does not say \"dequantize\": \"" + m.storage.name() + "\"");
}

/// A __device__ function pooling bag `b` of a member into y[b] (and, for
/// the first and last bag, checking, and hashing into the hashed output,
/// the ids outside every bag, as the CPU does). Returns its name.
std::string emitBagFunction(CudaEmitter &em, const Member &m) {
  const Layout &l = m.layout;
  const std::string K = std::to_string(l.K());
  const std::string name = em.entryName("bag_" + m.table->name);
  const int code = em.errorCode("ids of table '" + m.table->name + "' outside [0, " +
                                std::to_string(m.table->rows) + ")");
  const std::string weight = m.weighted ? "weights[i] * " : "";
  std::string pool;
  if (m.pooling == rt::Pooling::Max) {
    // lookupForward's max: the first id's weighted row, then strictly larger
    // values win (ties keep the first id, the one lookup_grad credits).
    pool = "if (first) {\n" + forValues(l, "acc[t] = " + weight + "row[t];") + "} else {\n" +
           forValues(l, "const float v = " + weight + "row[t]; acc[t] = v > acc[t] ? v : acc[t];") +
           "}\n first = false;\n";
  } else {
    pool = forValues(l, "acc[t] += " + weight + "row[t];");
  }
  std::string mean;
  if (m.pooling == rt::Pooling::Mean)
    mean = "if (!bad && end > begin) {\n const float inv = 1.0f / (float)(end - begin);\n" +
           forValues(l, "acc[t] *= inv;") + "}\n";
  const std::string hashedWrite =
      m.hashedOutput ? "if (lane == 0) hashed[i] = id;" : "";
  em.append(subst(R"(
// Bag b of table '$TNAME' ($STORAGE, D $DIM, $POOLING$WEIGHTED$HASH): $L lanes, $V-wide.
__device__ __forceinline__ void $NAME(const emb_i64 *__restrict ids, emb_i64 n,
    const emb_i64 *__restrict offsets, const float *__restrict weights,
    const $ELEM *__restrict table, const emb_u16 *__restrict qp, float *__restrict y,
    emb_i64 *__restrict hashed, emb_i64 b, int lane, EmbStep *step) {
  (void)weights; (void)qp; (void)hashed;
  // Ids outside every bag (normally none) are still checked, and hashed
  // into the hashed output, by the first and the last bag's group.
  if (b == 0) {
    const emb_i64 hi = offsets[0] < 0 ? 0 : (offsets[0] < n ? offsets[0] : n);
    for (emb_i64 i = lane; i < hi; i += $L) {
      $RESOLVEI
      $HASHEDI
      if (id < 0 || id >= $ROWS) emb_set_error(step, $CODE, id);
    }
  }
  if (b == $B - 1) {
    const emb_i64 lo = offsets[$B] < 0 ? 0 : offsets[$B];
    for (emb_i64 i = lo + lane; i < n; i += $L) {
      $RESOLVEI
      $HASHEDI
      if (id < 0 || id >= $ROWS) emb_set_error(step, $CODE, id);
    }
  }
  emb_i64 begin = offsets[b], end = offsets[b + 1];
  if (begin < 0) begin = 0;
  if (end > n) end = n; // never read past the filled ids
  float acc[$K];
#pragma unroll
  for (int t = 0; t < $K; ++t) acc[t] = 0.0f;
  bool bad = false;
  $FIRSTDECL
  for (emb_i64 i = begin; i < end; ++i) {
    $RESOLVEI
    $HASHEDWRITE
    if (id < 0 || id >= $ROWS) {
      // Never read outside the table: the bag pools to zeros and the runtime
      // raises the error after the step.
      if (lane == 0) emb_set_error(step, $CODE, id);
      bad = true;
      continue;
    }
    float row[$K];
$LOAD
$POOL
  }
  if (bad) {
#pragma unroll
    for (int t = 0; t < $K; ++t) acc[t] = 0.0f;
  }
$MEAN
$STORE
}
)",
                  {{"TNAME", m.table->name},
                   {"STORAGE", m.storage.name()},
                   {"DIM", std::to_string(l.D)},
                   {"POOLING", rt::enumString(m.pooling)},
                   {"WEIGHTED", m.weighted ? ", weighted" : ""},
                   {"HASH", m.hash ? ", hashed" : ""},
                   {"L", std::to_string(l.L)},
                   {"V", std::to_string(l.V)},
                   {"NAME", name},
                   {"ELEM", m.storage.elemType()},
                   {"B", lit(m.B)},
                   {"RESOLVEI", resolve(m, "ids[i]")},
                   {"HASHEDI", m.hashedOutput ? "hashed[i] = id;" : ""},
                   {"HASHEDWRITE", hashedWrite},
                   {"ROWS", lit(m.table->rows)},
                   {"CODE", std::to_string(code)},
                   {"K", K},
                   {"LOAD", loadRow(m.storage, l, "table", "qp", "id", "row")},
                   {"POOL", pool},
                   {"MEAN", mean},
                   {"FIRSTDECL", m.pooling == rt::Pooling::Max ? "bool first = true;" : ""},
                   {"STORE", storeF32(l, "y + b * " + lit(l.D), "acc")}}));
  return name;
}

/// The call of a member's bag function for bag `bag` (args added to `args`).
std::string bagCall(CudaEmitter &em, const Member &m, const std::string &fn, Args &args,
                    const std::string &bag) {
  const rt::Buffer &ids = em.buffer(m.ids);
  const std::string idsP = args.buffer(m.ids, "const emb_i64");
  const std::string n = args.count(ids, m.ids, numel(ids));
  const std::string offsets = args.buffer(m.offsets, "const emb_i64");
  const std::string weights = m.weighted ? args.buffer(m.weights, "const float") : "0";
  const std::string table = args.buffer(m.table->buffer, "const " + m.storage.elemType());
  const std::string qp = m.storage.rowwise() ? args.buffer(m.table->qparams, "const emb_u16") : "0";
  const std::string y = args.buffer(m.y, "float");
  const std::string hashed = m.hashedOutput ? args.buffer(m.hashed, "emb_i64") : "0";
  return fn + "(" + idsP + ", " + n + ", " + offsets + ", " + weights + ", " + table + ", " + qp +
         ", " + y + ", " + hashed + ", " + bag + ", lane, a.step);";
}

/// Blocks of kBlock threads that give each of B bags a group of L lanes.
/// The row layout of a member: vectors as wide as its table's rows and its
/// output rows (y) allow.
Layout memberLayout(const CudaEmitter &em, const Member &m) {
  const int64_t D = m.table->dim;
  return groupLayout(D, vectorWidthFor(em, D,
                                       {{CudaEmitter::buf(m.table->buffer), storageBits(m.storage)},
                                        {CudaEmitter::buf(m.y), 32}}));
}

int64_t blocksFor(int64_t items, const Layout &l) {
  return std::max<int64_t>((items * l.L + kBlock - 1) / kBlock, 1);
}

// --- hash ---------------------------------------------------------------------

void lowerHash(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.inputs.size() != 1 || k.outputs.size() != 1)
    throw CodegenError("expected 1 input and 1 output");
  const int64_t buckets = intAttr(k, "buckets");
  if (buckets <= 0)
    throw CodegenError("bucket count " + std::to_string(buckets) + " must be positive");
  const uint64_t seed = uint64_t(intAttr(k, "seed"));
  appendHelpers(em);
  const rt::Buffer &in = em.buffer(k.inputs[0]), &outBuf = em.buffer(k.outputs[0]);
  Args args;
  const std::string inP = args.buffer(k.inputs[0], "const emb_i64");
  const std::string outP = args.buffer(k.outputs[0], "emb_i64");
  const std::string n = args.count(in, k.inputs[0], numel(in));
  const std::string setLength =
      outBuf.dynamic ? "if (i == 0) *" + args.lengthCell(k.outputs[0]) + " = n;" : "";
  const std::string entry = em.entryName(k.op);
  em.append(subst(R"(
// hash: xxh64(id, seed $SEED) mod $BUCKETS, one thread per id.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x;
  const emb_i64 n = $N;
  $SETLEN
  if (i < n) $OUT[i] = emb_hash_id($IN[i], $SEEDU, $BUCKETSU);
}
)",
                  {{"ENTRY", entry},
                   {"SEED", std::to_string(seed)},
                   {"BUCKETS", std::to_string(buckets)},
                   {"N", n},
                   {"SETLEN", setLength},
                   {"OUT", outP},
                   {"IN", inP},
                   {"SEEDU", ulit(seed)},
                   {"BUCKETSU", ulit(uint64_t(buckets))}}));
  const int64_t cap = numel(in);
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, (cap + kBlock - 1) / kBlock, kBlock));
}

// --- lookup -------------------------------------------------------------------

void lowerLookup(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  Member m;
  m.weighted = k.inputs.size() == 3;
  if ((k.inputs.size() != 2 && !m.weighted) || k.outputs.size() != 1)
    throw CodegenError("expected 2 or 3 inputs and 1 output");
  m.table = &tableOf(em.plan(), intAttr(k, "table"));
  m.storage = storageOf(m.table->storage);
  expectDequantize(k.attrs, m);
  m.pooling = wordOf<rt::Pooling>(stringAttr(k, "pooling"), "the lookup");
  m.ids = k.inputs[0];
  m.offsets = k.inputs[1];
  m.weights = m.weighted ? k.inputs[2] : -1;
  m.y = k.outputs[0];
  m.layout = memberLayout(em, m);
  m.B = leading(em.buffer(m.y));
  appendHelpers(em);
  const std::string fn = emitBagFunction(em, m);
  Args args;
  const std::string call = bagCall(em, m, fn, args, "g");
  const std::string entry = em.entryName("lookup_" + m.table->name);
  em.append(subst(R"(
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 g = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) / $L;
  const int lane = (int)(threadIdx.x % $L);
  if (g >= $B) return;
  $CALL
}
)",
                  {{"ENTRY", entry},
                   {"L", std::to_string(m.layout.L)},
                   {"B", lit(m.B)},
                   {"CALL", call}}));
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, blocksFor(m.B, m.layout), kBlock));
}

// --- gather -------------------------------------------------------------------

void lowerGather(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.inputs.size() != 1 || k.outputs.size() != 1)
    throw CodegenError("expected 1 input and 1 output");
  const rt::Table &table = tableOf(em.plan(), intAttr(k, "table"));
  Member m;
  m.table = &table;
  m.storage = storageOf(table.storage);
  expectDequantize(k.attrs, m);
  m.y = k.outputs[0];
  const Layout l = memberLayout(em, m);
  appendHelpers(em);
  const int64_t n = numel(em.buffer(k.inputs[0])); // static ids (B x K negatives)
  const int code = em.errorCode("ids of table '" + table.name + "' outside [0, " +
                                std::to_string(table.rows) + ")");
  Args args;
  const std::string ids = args.buffer(k.inputs[0], "const emb_i64");
  const std::string tbl = args.buffer(table.buffer, "const " + m.storage.elemType());
  const std::string qp = m.storage.rowwise() ? args.buffer(table.qparams, "const emb_u16") : "0";
  const std::string y = args.buffer(k.outputs[0], "float");
  const std::string entry = em.entryName("gather_" + table.name);
  em.append(subst(R"(
// gather of '$TNAME' ($STORAGE): unpooled rows, one group of $L lanes per id.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 i = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) / $L;
  const int lane = (int)(threadIdx.x % $L);
  if (i >= $N) return;
  const emb_i64 id = $IDS[i];
  if (id < 0 || id >= $ROWS) {
    if (lane == 0) emb_set_error(a.step, $CODE, id);
    return;
  }
  const $ELEM *table = $TBL;
  $QPDECL
  float row[$K];
$LOAD
$STORE
}
)",
                  {{"TNAME", table.name},
                   {"STORAGE", m.storage.name()},
                   {"L", std::to_string(l.L)},
                   {"ENTRY", entry},
                   {"N", lit(n)},
                   {"IDS", ids},
                   {"ROWS", lit(table.rows)},
                   {"CODE", std::to_string(code)},
                   {"ELEM", m.storage.elemType()},
                   {"TBL", tbl},
                   {"QPDECL", m.storage.rowwise() ? "const emb_u16 *qp = " + qp + ";" : ""},
                   {"K", std::to_string(l.K())},
                   {"LOAD", loadRow(m.storage, l, "table", "qp", "id", "row")},
                   {"STORE", storeF32(l, y + " + i * " + lit(l.D), "row")}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, blocksFor(n, l), kBlock));
}

// --- fused_lookup ---------------------------------------------------------------

void lowerFusedLookup(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (!k.attrs.contains("members") || !k.attrs["members"].is_array() ||
      k.attrs["members"].empty())
    throw CodegenError("missing or empty list attribute 'members'");
  appendHelpers(em);
  std::vector<Member> members;
  size_t in = 0, outIndex = 0;
  for (const nlohmann::json &j : k.attrs["members"]) {
    const std::string where = "member " + std::to_string(members.size());
    if (!j.is_object() || !j.contains("table") || !j["table"].is_number_integer())
      throw CodegenError(where + " has no integer 'table'");
    Member m;
    m.table = &tableOf(em.plan(), j["table"].get<int64_t>());
    m.storage = storageOf(m.table->storage);
    expectDequantize(j, m);
    m.pooling = wordOf<rt::Pooling>(j.value("pooling", ""), where);
    m.weighted = j.value("weighted", false);
    m.hash = j.value("hash", false);
    m.hashedOutput = m.hash && j.value("hashed_output", false);
    if (m.hash) {
      m.buckets = j.value("buckets", int64_t(0));
      m.seed = uint64_t(j.value("seed", int64_t(0)));
      if (m.buckets <= 0)
        throw CodegenError(where + " hashes into " + std::to_string(m.buckets) +
                           " buckets (must be positive)");
    }
    const size_t ins = m.weighted ? 3 : 2, outs = m.hashedOutput ? 2 : 1;
    if (in + ins > k.inputs.size() || outIndex + outs > k.outputs.size())
      throw CodegenError(where + " needs more operands than the kernel has");
    m.ids = k.inputs[in];
    m.offsets = k.inputs[in + 1];
    m.weights = m.weighted ? k.inputs[in + 2] : -1;
    m.y = k.outputs[outIndex];
    m.hashed = m.hashedOutput ? k.outputs[outIndex + 1] : -1;
    m.B = leading(em.buffer(m.y));
    m.layout = memberLayout(em, m);
    members.push_back(m);
    in += ins;
    outIndex += outs;
  }
  if (in != k.inputs.size() || outIndex != k.outputs.size())
    throw CodegenError("the members do not take all of the kernel's operands");

  // One kernel: member m owns blocks [first_m, first_m + blocks_m), so a
  // block's branch is uniform and each member runs its own specialised code.
  // A kernel takes at most EMB_MAX_ARGS operands, so many tables (DLRM's 26)
  // are split over as few launches as fit.
  Args args;
  std::string body;
  int64_t first = 0;
  auto flush = [&] {
    if (body.empty())
      return;
    const std::string entry = em.entryName("fused_lookup");
    em.append("\nextern \"C\" __global__ void " + entry +
              "(EmbArgs a) {\n  const emb_i64 blk = blockIdx.x;" + body + "\n}\n");
    out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, first, kBlock));
    args = Args();
    body.clear();
    first = 0;
  };
  for (const Member &m : members) {
    const std::string fn = emitBagFunction(em, m);
    const int64_t blocks = blocksFor(m.B, m.layout);
    auto memberCode = [&](Args &into) {
      std::string lengths;
      if (m.hashedOutput && em.buffer(m.hashed).dynamic) {
        const rt::Buffer &ids = em.buffer(m.ids);
        lengths = "if (local == 0 && threadIdx.x == 0) *" + into.lengthCell(m.hashed) + " = " +
                  into.count(ids, m.ids, numel(ids)) + ";\n    ";
      }
      return subst(R"(
  if (blk >= $FIRST && blk < $END) {
    const emb_i64 local = blk - $FIRST;
    $LENGTHS const emb_i64 g = (local * blockDim.x + threadIdx.x) / $L;
    const int lane = (int)(threadIdx.x % $L);
    if (g < $B) { $CALL }
    return;
  })",
                   {{"FIRST", lit(first)},
                    {"END", lit(first + blocks)},
                    {"LENGTHS", lengths},
                    {"L", std::to_string(m.layout.L)},
                    {"B", lit(m.B)},
                    {"CALL", bagCall(em, m, fn, into, "g")}});
    };
    Args trial = args;
    memberCode(trial);
    if (trial.list.size() > EMB_MAX_ARGS)
      flush();
    body += memberCode(args);
    first += blocks;
  }
  flush();
}

} // namespace

emb::SequenceLookupCodes emb::sequenceLookupCodes(CudaEmitter &em, const rt::Table &table,
                                                  int64_t L) {
  return {em.errorCode("ids of table '" + table.name + "' outside [0, " +
                       std::to_string(table.rows) + ")"),
          em.errorCode("a sequence of table '" + table.name + "' longer than its max_len " +
                       std::to_string(L) + " or outside its ids (the value is the sequence)")};
}

// sequence_lookup of a quantised table: gather's row loads, one group of
// lanes per position (b, l), zeros past each sequence.
void emb::lowerQuantizedSequenceLookup(CudaEmitter &em, const rt::Kernel &k,
                                       rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const rt::Table &table = tableOf(em.plan(), intAttr(k, "table"));
  Member m;
  m.table = &table;
  m.storage = storageOf(table.storage);
  expectDequantize(k.attrs, m);
  m.y = k.outputs[0];
  const rt::Buffer &yBuf = f32Buffer(em, k.outputs[0], "sequence_lookup output");
  if (yBuf.shape.size() != 3 || yBuf.shape[2] != table.dim)
    throw CodegenError("sequence_lookup output '" + yBuf.name + "' must be B x L x " +
                       std::to_string(table.dim));
  const int64_t B = yBuf.shape[0], L = yBuf.shape[1];
  expectOffsets(em, k.inputs[1], B);
  const Layout l = memberLayout(em, m);
  appendHelpers(em);
  const auto [idCode, lengthCode] = sequenceLookupCodes(em, table, L);
  Args args;
  const rt::Buffer &idsBuf = em.buffer(k.inputs[0]);
  const std::string ids = args.buffer(k.inputs[0], "const emb_i64");
  const std::string n = args.count(idsBuf, k.inputs[0], numel(idsBuf));
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string tbl = args.buffer(table.buffer, "const " + m.storage.elemType());
  const std::string qp = m.storage.rowwise() ? args.buffer(table.qparams, "const emb_u16") : "0";
  const std::string y = args.buffer(k.outputs[0], "float");
  const std::string entry = em.entryName("sequence_lookup_" + table.name);
  em.append(subst(R"(
// sequence_lookup of '$TNAME' ($STORAGE): $B x $SEQ positions, $L lanes each, zeros past each sequence.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 i = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) / $L;
  const int lane = (int)(threadIdx.x % $L);
  if (i >= $POSITIONS) return;
  const emb_i64 n = $COUNT;
  const emb_i64 b = i / $SEQ, p = i % $SEQ;
  const emb_i64 lo = $OFFSETS[b], len = $OFFSETS[b + 1] - lo;
  const $ELEM *table = $TBL;
  $QPDECL
  float row[$K];
#pragma unroll
  for (int t = 0; t < $K; ++t) row[t] = 0.0f;
  if (len < 0 || len > $SEQ || lo < 0 || lo + len > n) {
    if (p == 0 && lane == 0) emb_set_error(a.step, $LENCODE, b);
  } else if (p < len) {
    const emb_i64 id = $IDS[lo + p];
    if (id < 0 || id >= $ROWS) {
      if (lane == 0) emb_set_error(a.step, $IDCODE, id);
    } else {
$LOAD
    }
  }
$STORE
}
)",
                  {{"TNAME", table.name},
                   {"STORAGE", m.storage.name()},
                   {"B", lit(B)},
                   {"SEQ", lit(L)},
                   {"L", std::to_string(l.L)},
                   {"ENTRY", entry},
                   {"POSITIONS", lit(B * L)},
                   {"COUNT", n},
                   {"OFFSETS", offsets},
                   {"IDS", ids},
                   {"ROWS", lit(table.rows)},
                   {"IDCODE", std::to_string(idCode)},
                   {"LENCODE", std::to_string(lengthCode)},
                   {"ELEM", m.storage.elemType()},
                   {"TBL", tbl},
                   {"QPDECL", m.storage.rowwise() ? "const emb_u16 *qp = " + qp + ";" : ""},
                   {"K", std::to_string(l.K())},
                   {"LOAD", loadRow(m.storage, l, "table", "qp", "id", "row")},
                   {"STORE", storeF32(l, y + " + i * " + lit(l.D), "row")}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, blocksFor(B * L, l), kBlock));
}

EMBC_CUDA_LOWERING(Hash, lowerHash)
EMBC_CUDA_LOWERING(Lookup, lowerLookup)
EMBC_CUDA_LOWERING(Gather, lowerGather)
EMBC_CUDA_LOWERING(FusedLookup, lowerFusedLookup)
