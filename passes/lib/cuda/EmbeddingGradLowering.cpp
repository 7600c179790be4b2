//===- EmbeddingGradLowering.cpp - lookup_grad, accumulate_rows, coalesce_rows ===//
//
// The unfused embedding backward (the chain -emb-fuse replaces with
// embedding_update; `embc --no-fuse` keeps it):
//
//  - lookup_grad: one group of lanes per bag writes the bag's per-id rows
//    (dy[b] x weight, / bag size for mean; for max only the per-column
//    argmax, found by reading the table in bag order as the CPU does);
//  - accumulate_rows: appends (id + row_offset, row) at the filled length,
//    then a one-thread launch moves the length (every block must have read
//    the old one first, and launches are stream-ordered);
//  - coalesce_rows: the deterministic sort-and-sum of
//    runtime/lib/cpu/EmbeddingKernels.cpp coalesceRows: (row, position)
//    pairs sorted stably by row (`sort_pairs`), run heads flagged and
//    numbered (`exclusive_scan`), each run summed by one group in sorted
//    (= original) order from a copy of its first row, compacted ascending.
//    No float atomics: every output row has exactly one writer.
//
//===----------------------------------------------------------------------===//

#include "EmbeddingLowering.h"

using namespace embc::codegen;
using namespace embc::codegen::emb;

namespace {

int64_t blocksFor(int64_t items, int64_t lanes) {
  return std::max<int64_t>((items * lanes + kBlock - 1) / kBlock, 1);
}

rt::CudaLaunch libraryLaunch(const std::string &entry, std::vector<rt::CudaArg> args,
                             nlohmann::json params) {
  return CudaEmitter::namedLaunch("library", entry, std::move(args), std::move(params));
}

// --- lookup_grad -------------------------------------------------------------------

void lowerLookupGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const bool weighted = k.inputs.size() == 4;
  if ((k.inputs.size() != 3 && !weighted) || k.outputs.size() != 1)
    throw CodegenError("expected 3 or 4 inputs and 1 output");
  const rt::Table &table = tableOf(em.plan(), intAttr(k, "table"));
  const rt::Pooling pooling = wordOf<rt::Pooling>(stringAttr(k, "pooling"), "the lookup_grad");
  const Storage storage = storageOf(table.storage);
  const bool max = pooling == rt::Pooling::Max;
  if (max && storage.quantised() &&
      (!k.attrs.contains("dequantize") || k.attrs["dequantize"] != storage.name()))
    throw CodegenError("reads table '" + table.name + "' stored as " + storage.name() +
                       " but does not say \"dequantize\": \"" + storage.name() + "\"");
  appendHelpers(em);
  const int32_t dyBuf = k.inputs.back(), outBuf = k.outputs[0];
  const Layout l = groupLayout(
      table.dim, vectorWidthFor(em, table.dim,
                                {{CudaEmitter::buf(dyBuf), 32},
                                 {CudaEmitter::buf(outBuf), 32},
                                 {CudaEmitter::buf(table.buffer), storageBits(storage)}}));
  const std::string D = lit(l.D);
  const int64_t B = leading(em.buffer(dyBuf));

  Args args;
  const rt::Buffer &idsBuf = em.buffer(k.inputs[0]);
  const std::string ids = args.buffer(k.inputs[0], "const emb_i64");
  const std::string n = args.count(idsBuf, k.inputs[0], numel(idsBuf));
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string weights = weighted ? args.buffer(k.inputs[2], "const float") : "0";
  const std::string dy = args.buffer(dyBuf, "const float");
  const std::string rows = args.buffer(outBuf, "float");
  const std::string setLength = em.buffer(outBuf).dynamic
                                    ? "if (g == 0 && lane == 0) *" + args.lengthCell(outBuf) +
                                          " = n;"
                                    : "";
  const std::string w = weighted ? "weights[i]" : "1.0f";
  std::string body;
  if (!max) {
    // lookupGrad: s = scale * weight, row = s * dy[b] (two roundings, as the CPU).
    body = "const float scale = $MEAN && end > begin ? 1.0f / (float)(end - begin) : 1.0f;\n"
           "  for (emb_i64 i = begin; i < end; ++i) {\n"
           "    const float s = scale * $W;\n"
           "    float row[$K];\n" +
           forValues(l, "row[t] = s * gr[t];") + storeF32(l, "rows + i * $D", "row") + "  }\n";
  } else {
    // Per column the first id whose weighted value is the largest gets
    // weight * dy; every other id of the bag gets 0 (lookupGrad's rule).
    const std::string tableP = args.buffer(table.buffer, "const " + storage.elemType());
    const std::string qp = storage.rowwise() ? args.buffer(table.qparams, "const emb_u16") : "0";
    body = "const " + storage.elemType() + " *table = " + tableP + ";\n" +
           (storage.rowwise() ? "  const emb_u16 *qp = " + qp + ";\n" : "") + "  float best[$K];\n  emb_i64 arg[$K];\n"
           "#pragma unroll\n  for (int t = 0; t < $K; ++t) { best[t] = 0.0f; arg[t] = -1; }\n"
           "  for (emb_i64 i = begin; i < end; ++i) {\n"
           "    const emb_i64 id = ids[i];\n"
           "    if (id < 0 || id >= $ROWS) continue; // the forward lookup reported it\n"
           "    float row[$K];\n" +
           loadRow(storage, l, "table", "qp", "id", "row") +
           forValues(l, "const float v = $W * row[t]; if (arg[t] < 0 || v > best[t]) "
                        "{ best[t] = v; arg[t] = i; }") +
           "  }\n  for (emb_i64 i = begin; i < end; ++i) {\n    float row[$K];\n" +
           forValues(l, "row[t] = arg[t] == i ? $WARG * gr[t] : 0.0f;") +
           storeF32(l, "rows + i * $D", "row") + "  }\n";
    // weightOf(weights, arg) * dy, or dy alone without weights (1 * x == x).
  }
  const std::string entry = em.entryName("lookup_grad_" + table.name);
  em.append(subst(R"(
// lookup_grad of '$TNAME' ($POOLING): per-id gradient rows, one group of $L lanes per bag.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 g = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) / $L;
  const int lane = (int)(threadIdx.x % $L);
  if (g >= $B) return;
  $IDSDECL
  const emb_i64 n = $N;
  const emb_i64 *offsets = $OFFSETS;
  $WEIGHTSDECL
  float *rows = $ROWSP;
  $SETLEN
  // Rows of ids outside every bag are written as zeros (the buffer may hold
  // another value's bytes under memory reuse), as the CPU does.
  {
    const emb_i64 lo = offsets[0] < 0 ? 0 : (offsets[0] > n ? n : offsets[0]);
    const emb_i64 hi = offsets[$B] < lo ? lo : (offsets[$B] > n ? n : offsets[$B]);
    float zero[$K];
#pragma unroll
    for (int t = 0; t < $K; ++t) zero[t] = 0.0f;
    if (g == 0)
      for (emb_i64 i = 0; i < lo; ++i) $STOREZERO
    if (g == $B - 1)
      for (emb_i64 i = hi; i < n; ++i) $STOREZERO
  }
  emb_i64 begin = offsets[g], end = offsets[g + 1];
  if (begin < 0) begin = 0;
  if (end > n) end = n;
  float gr[$K];
$LOADDY
  $BODY
}
)",
                  {{"TNAME", table.name},
                   {"POOLING", rt::enumString(pooling)},
                   {"L", std::to_string(l.L)},
                   {"ENTRY", entry},
                   {"B", lit(B)},
                   {"IDSDECL", max ? "const emb_i64 *ids = " + ids + ";" : ""},
                   {"N", n},
                   {"OFFSETS", offsets},
                   {"WEIGHTSDECL", weighted ? "const float *weights = " + weights + ";" : ""},
                   {"ROWSP", rows},
                   {"SETLEN", setLength},
                   {"STOREZERO", storeF32(l, "rows + i * " + D, "zero")},
                   {"LOADDY", loadF32(l, dy + " + g * " + D, "gr")},
                   {"BODY", subst(body, {{"MEAN", pooling == rt::Pooling::Mean ? "true" : "false"},
                                         {"W", w},
                                         {"WARG", weighted ? "weights[arg[t]]" : "1.0f"},
                                         {"K", std::to_string(l.K())},
                                         {"ROWS", lit(table.rows)},
                                         {"D", D}})},
                   {"K", std::to_string(l.K())}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, blocksFor(B, l.L), kBlock));
}

// --- accumulate_rows ---------------------------------------------------------------

void lowerAccumulateRows(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.inputs.size() != 2 || k.outputs.size() != 2)
    throw CodegenError("expected 2 inputs and 2 outputs");
  const rt::Table &table = tableOf(em.plan(), intAttr(k, "table"));
  const int64_t rowOffset = k.attrs.contains("row_offset") ? intAttr(k, "row_offset") : 0;
  const int32_t idsBuf = k.inputs[0], valsBuf = k.inputs[1];
  const int32_t rowsBuf = k.outputs[0], valuesBuf = k.outputs[1];
  const Layout l = groupLayout(
      table.dim, vectorWidthFor(em, table.dim,
                                {{CudaEmitter::buf(valsBuf), 32}, {CudaEmitter::buf(valuesBuf), 32}}));
  const std::string D = lit(l.D);
  const int64_t capacity = leading(em.buffer(rowsBuf));
  const int64_t idCapacity = numel(em.buffer(idsBuf));
  const int code = em.errorCode("sparse gradient of table '" + table.name +
                                "' overflows its capacity of " + std::to_string(capacity) +
                                " rows (rows needed)");
  appendHelpers(em);

  Args args;
  const std::string ids = args.buffer(idsBuf, "const emb_i64");
  const std::string n = args.count(em.buffer(idsBuf), idsBuf, idCapacity);
  const std::string vals = args.buffer(valsBuf, "const float");
  const std::string rows = args.buffer(rowsBuf, "emb_i64");
  const std::string values = args.buffer(valuesBuf, "float");
  const std::string at = args.lengthCell(rowsBuf);
  const std::string entry = em.entryName("accumulate_rows_" + table.name);
  em.append(subst(R"(
// accumulate_rows of '$TNAME': appends (id + $OFF, row) at the filled length.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 i = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) / $L;
  const int lane = (int)(threadIdx.x % $L);
  const emb_i64 n = $N, at = *$AT;
  if (at + n > $CAP) {
    if (i == 0 && lane == 0) emb_set_error(a.step, $CODE, at + n);
    return;
  }
  if (i >= n) return;
  if (lane == 0) $ROWS[at + i] = $IDS[i] + $OFF;
  float row[$K];
$LOAD
$STORE
}
)",
                  {{"TNAME", table.name},
                   {"ENTRY", entry},
                   {"L", std::to_string(l.L)},
                   {"N", n},
                   {"AT", at},
                   {"CAP", lit(capacity)},
                   {"CODE", std::to_string(code)},
                   {"ROWS", rows},
                   {"IDS", ids},
                   {"OFF", lit(rowOffset)},
                   {"K", std::to_string(l.K())},
                   {"LOAD", loadF32(l, vals + " + i * " + D, "row")},
                   {"STORE", storeF32(l, values + " + (at + i) * " + D, "row")}}));
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, blocksFor(idCapacity, l.L), kBlock));

  // The lengths move only after every block has read the old one.
  Args largs;
  const std::string n2 = largs.count(em.buffer(idsBuf), idsBuf, idCapacity);
  const std::string rowsLen = largs.lengthCell(rowsBuf);
  const std::string valuesLen = largs.lengthCell(valuesBuf);
  const std::string lentry = em.entryName("accumulate_rows_length_" + table.name);
  em.append(subst(R"(
extern "C" __global__ void $ENTRY(EmbArgs a) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const emb_i64 at = *$RL, n = $N;
  if (at + n <= $CAP) *$RL = *$VL = at + n;
}
)",
                  {{"ENTRY", lentry},
                   {"RL", rowsLen},
                   {"VL", valuesLen},
                   {"N", n2},
                   {"CAP", lit(capacity)}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(lentry, largs.list, 1, 32));
}

// --- coalesce_rows -------------------------------------------------------------------

void lowerCoalesceRows(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (!k.inputs.empty() || k.outputs.size() != 2)
    throw CodegenError("expected 0 inputs and 2 outputs");
  const Target t = targetOf(em.plan(), k);
  const int32_t rowsBuf = k.outputs[0], valuesBuf = k.outputs[1];
  const int64_t C = leading(em.buffer(rowsBuf));
  if (C >= (int64_t(1) << 31))
    throw CodegenError("sparse gradient of '" + t.name + "' has " + std::to_string(C) +
                       " rows; the sort's positions are 32-bit");
  const Layout l =
      groupLayout(t.dim, vectorWidthFor(em, t.dim, {{CudaEmitter::buf(valuesBuf), 32}}));
  const std::string D = lit(l.D);
  // Keys below 2^bits; the padding key 2^bits - 1 is above every row, so
  // padding sorts last and is never a row.
  const int bits = std::max(1, bitWidth(uint64_t(t.rows)));
  const std::string pad = lit((int64_t(1) << bits) - 1);
  appendHelpers(em);

  const int64_t keysIn = em.scratch(8 * C), valsIn = em.scratch(4 * C);
  const int64_t keysOut = em.scratch(8 * C), valsOut = em.scratch(4 * C);
  const int64_t flags = em.scratch(4 * C), pos = em.scratch(4 * C), total = em.scratch(8);
  const int64_t sums = em.scratch(4 * C * t.dim), rowsOut = em.scratch(8 * C);
  const int64_t blocksC = (C + kBlock - 1) / kBlock;

  // 1. (row, position) pairs; rows past the length (and any outside the
  //    table) become padding.
  {
    Args args;
    const std::string rows = args.buffer(rowsBuf, "const emb_i64");
    const std::string len = args.count(em.buffer(rowsBuf), rowsBuf, C);
    const std::string ki = args.scratch(keysIn, "emb_i64"), vi = args.scratch(valsIn, "int");
    const std::string entry = em.entryName("coalesce_keys_" + t.name);
    em.append(subst(R"(
// coalesce_rows of '$TNAME': (row, position) pairs for the stable sort.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= $C) return;
  emb_i64 key = $PAD;
  if (i < $LEN) {
    const emb_i64 r = $ROWS[i];
    if (r >= 0 && r < $R) key = r;
  }
  $KI[i] = key;
  $VI[i] = (int)i;
}
)",
                    {{"TNAME", t.name},
                     {"ENTRY", entry},
                     {"C", lit(C)},
                     {"PAD", pad},
                     {"LEN", len},
                     {"ROWS", rows},
                     {"R", lit(t.rows)},
                     {"KI", ki},
                     {"VI", vi}}));
    out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, blocksC, kBlock));
  }
  // 2. Stable sort by row: equal rows keep their position order, the order
  //    the CPU sums them in.
  out.launches.push_back(libraryLaunch(
      "sort_pairs",
      {CudaEmitter::scratchAt(keysIn), CudaEmitter::scratchAt(valsIn),
       CudaEmitter::scratchAt(keysOut), CudaEmitter::scratchAt(valsOut)},
      {{"count", C}, {"key_bits", bits}}));
  // 3, 4. Run heads; each head's output slot, and the distinct count.
  emitRunNumbering(em, out, "coalesce_" + t.name, C, pad, keysOut, flags, pos, total);
  // 5. One group per head sums its run in sorted order from a copy of the
  //    first row (coalesceRows' memcpy + axpy(1, ...)).
  {
    Args args;
    const std::string ko = args.scratch(keysOut, "const emb_i64");
    const std::string vo = args.scratch(valsOut, "const int");
    const std::string f = args.scratch(flags, "const int");
    const std::string p = args.scratch(pos, "const int");
    const std::string values = args.buffer(valuesBuf, "const float");
    const std::string s = args.scratch(sums, "float");
    const std::string ro = args.scratch(rowsOut, "emb_i64");
    const std::string entry = em.entryName("coalesce_sum_" + t.name);
    em.append(subst(R"(
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 i = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) / $L;
  const int lane = (int)(threadIdx.x % $L);
  if (i >= $C || !$F[i]) return;
  const emb_i64 key = $KO[i];
  const float *values = $VALUES;
  float acc[$K], row[$K];
$LOADFIRST
  for (emb_i64 q = i + 1; q < $C && $KO[q] == key; ++q) {
    const emb_i64 src = $VO[q];
$LOADNEXT
$ADD
  }
  const emb_i64 slot = $P[i];
  if (lane == 0) $RO[slot] = key;
$STORE
}
)",
                    {{"ENTRY", entry},
                     {"L", std::to_string(l.L)},
                     {"C", lit(C)},
                     {"F", f},
                     {"KO", ko},
                     {"VO", vo},
                     {"VALUES", values},
                     {"K", std::to_string(l.K())},
                     {"LOADFIRST", loadF32(l, "values + (emb_i64)" + vo + "[i] * " + D, "acc")},
                     {"LOADNEXT", loadF32(l, "values + src * " + D, "row")},
                     {"ADD", forValues(l, "acc[t] += row[t];")},
                     {"P", p},
                     {"RO", ro},
                     {"STORE", storeF32(l, s + " + slot * " + D, "acc")}}));
    out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, blocksFor(C, l.L), kBlock));
  }
  // 6. The distinct rows back in place, ascending; the length becomes their count.
  {
    Args args;
    const std::string tot = args.scratch(total, "const emb_i64");
    const std::string ro = args.scratch(rowsOut, "const emb_i64");
    const std::string s = args.scratch(sums, "const float");
    const std::string rows = args.buffer(rowsBuf, "emb_i64");
    const std::string values = args.buffer(valuesBuf, "float");
    std::string setLength;
    if (em.buffer(rowsBuf).dynamic)
      setLength += "*" + args.lengthCell(rowsBuf) + " = distinct; ";
    if (em.buffer(valuesBuf).dynamic)
      setLength += "*" + args.lengthCell(valuesBuf) + " = distinct;";
    const std::string entry = em.entryName("coalesce_store_" + t.name);
    em.append(subst(R"(
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 k = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) / $L;
  const int lane = (int)(threadIdx.x % $L);
  const emb_i64 distinct = *$TOT;
  if (k == 0 && lane == 0) { $SETLEN }
  if (k >= distinct) return;
  if (lane == 0) $ROWS[k] = $RO[k];
  float row[$K];
$LOAD
$STORE
}
)",
                    {{"ENTRY", entry},
                     {"L", std::to_string(l.L)},
                     {"TOT", tot},
                     {"SETLEN", setLength},
                     {"ROWS", rows},
                     {"RO", ro},
                     {"K", std::to_string(l.K())},
                     {"LOAD", loadF32(l, s + " + k * " + D, "row")},
                     {"STORE", storeF32(l, values + " + k * " + D, "row")}}));
    out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, blocksFor(C, l.L), kBlock));
  }
}

} // namespace

EMBC_CUDA_LOWERING(LookupGrad, lowerLookupGrad)
EMBC_CUDA_LOWERING(AccumulateRows, lowerAccumulateRows)
EMBC_CUDA_LOWERING(CoalesceRows, lowerCoalesceRows)
