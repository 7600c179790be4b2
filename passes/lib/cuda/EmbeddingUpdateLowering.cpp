//===- EmbeddingUpdateLowering.cpp - update_table, embedding_update ------===//
//
// The sparse optimizer step of a table or table batch:
//
//  - update_table: a group of lanes per coalesced row (distinct, ascending,
//    from coalesce_rows) takes OptimizerRow.h's tableRowStep (quantised
//    rows: dequantise, f32 step, stochastic requantisation keyed like the
//    CPU), after a global-decay pass over every row when the optimizer has
//    one.
//  - embedding_update: the backward fused with that step, deterministic and
//    bit-identical to lookup_grad + accumulate_rows + coalesce_rows +
//    update_table: every per-id contribution becomes a (row + row_offset,
//    position) pair (positions laid out by source capacity, so position
//    order is (source, position) order), `sort_pairs` sorts them stably by
//    row, and a group of lanes per run head rebuilds the row's gradient
//    from dy (or the values) in sorted order, from a copy of the first
//    contribution, and steps the row in registers. No per-id rows are
//    written, no float atomics; each row has one writer. A group has as many
//    lanes as the row has vectors (groupLayout), up to a warp.
//
// Per-step values (optimizer step, learning-rate factor, the clip scale)
// are read from a.step and the args, so a captured graph replays correctly;
// a.step->skip (a loss-scaling overflow) skips everything.
//
//===----------------------------------------------------------------------===//

#include "EmbeddingLowering.h"

using namespace embc::codegen;
using namespace embc::codegen::emb;

namespace {

/// A quantised update must say "requantize": "stochastic" (QuantizedBindings.cpp).
void expectRequantize(const rt::Kernel &k, const Target &t) {
  if (t.storage.quantised() &&
      (!k.attrs.contains("requantize") || k.attrs["requantize"] != rt::enumString(rt::Requantize::Stochastic)))
    throw CodegenError("updates '" + t.name + "' stored as " + t.storage.name() +
                       " but does not say \"requantize\": \"stochastic\"");
}

double realAttr(const rt::Kernel &k, const char *name) {
  auto it = k.attrs.find(name);
  if (it == k.attrs.end() || !it->is_number())
    throw CodegenError(std::string("missing number attribute '") + name + "'");
  return it->get<double>();
}

/// The pointer declarations of the updated buffers: TBL (values), QP
/// (qparams or 0), S0, S1 (states or 0), from the kernel's outputs.
std::string targetPointers(Args &args, const rt::Kernel &k, const Target &t, const OptSpec &o) {
  if (int(k.outputs.size()) != 1 + o.states)
    throw CodegenError("expected " + std::to_string(1 + o.states) + " outputs (the values of '" +
                       t.name + "' and its optimizer state), got " +
                       std::to_string(k.outputs.size()));
  if (k.outputs[0] != t.buffer)
    throw CodegenError("must update the values of '" + t.name + "'");
  std::string code = "  " + t.storage.elemType() + " *TBL = " +
                     args.buffer(k.outputs[0], t.storage.elemType()) + ";\n";
  if (t.storage.rowwise())
    code += "  emb_u16 *QP = " + args.buffer(t.qparams, "emb_u16") + ";\n";
  if (o.states >= 1)
    code += "  float *S0 = " + args.buffer(k.outputs[1], "float") + ";\n";
  if (o.states >= 2)
    code += "  float *S1 = " + args.buffer(k.outputs[2], "float") + ";\n";
  return code;
}

/// The group layout of an update of `t`: vectors as wide as the table's
/// rows, its optimizer state rows and the gradient rows (`grads`) allow,
/// and as many lanes as a row has vectors (a 16-wide f32 row: 4 lanes, 8
/// rows a warp).
Layout updateLayout(const CudaEmitter &em, const Target &t, const OptSpec &o,
                    const std::vector<int32_t> &grads) {
  std::vector<RowOperand> rows = {{CudaEmitter::buf(t.buffer), storageBits(t.storage)}};
  if (o.kind != rt::OptimizerKind::RowwiseAdagrad) // its state is one value per row
    for (int32_t s : t.state)
      rows.push_back({CudaEmitter::buf(s), 32});
  for (int32_t g : grads)
    rows.push_back({CudaEmitter::buf(g), 32});
  return groupLayout(t.dim, vectorWidthFor(em, t.dim, rows));
}

// --- update_table -------------------------------------------------------------------

void lowerUpdateTable(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const Target t = targetOf(em.plan(), k);
  expectRequantize(k, t);
  const OptSpec o = optSpec(t);
  const bool clipped = k.inputs.size() == 3;
  if (k.inputs.size() != 2 && !clipped)
    throw CodegenError("expected 2 or 3 inputs (grad_rows, grad_values[, scale])");
  const double gradScale = realAttr(k, "grad_scale");
  appendHelpers(em);
  const int32_t rowsBuf = k.inputs[0], valuesBuf = k.inputs[1];
  const Layout l = updateLayout(em, t, o, {valuesBuf});
  const int64_t C = leading(em.buffer(rowsBuf));

  // factor = grad_scale x the clip scale, in double as the CPU.
  auto gradScaleDecl = [&](Args &args) {
    return "const double emb_gs = " + doubleLiteral(gradScale) +
           (clipped ? " * (double)" + args.buffer(k.inputs[2], "const float") + "[0]" : "") + ";";
  };
  if (o.globalDecay)
    out.launches.push_back(globalDecayLaunch(em, t, o, false));

  Args args;
  const std::string rows = args.buffer(rowsBuf, "const emb_i64");
  const std::string len = args.count(em.buffer(rowsBuf), rowsBuf, C);
  const std::string values = args.buffer(valuesBuf, "const float");
  const std::string decl = gradScaleDecl(args);
  const std::string pointers = targetPointers(args, k, t, o);
  const std::string entry = em.entryName("update_table_" + t.name);
  em.append(subst(R"(
// update_table of '$TNAME' ($STORAGE, $OPT, D $DIM): a group of $L lanes per
// coalesced row.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  if (a.step->skip) return;
  const emb_i64 k = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) >> $SHIFT;
$LANES  if (k >= $LEN) return;
  const emb_i64 r = $ROWS[k];
  if (r < 0 || r >= $R) return; // coalesce_rows drops such rows; never write outside
  $GSDECL
$HYPER
$POINTERS
  float g[$K];
$LOADG
$ROWUPDATE
}
)",
                  {{"TNAME", t.name},
                   {"STORAGE", t.storage.name()},
                   {"OPT", rt::enumString(o.kind)},
                   {"DIM", std::to_string(t.dim)},
                   {"ENTRY", entry},
                   {"LEN", len},
                   {"ROWS", rows},
                   {"R", lit(t.rows)},
                   {"GSDECL", decl},
                   {"HYPER", hyperCode(o, "emb_gs")},
                   {"POINTERS", pointers},
                   {"K", std::to_string(l.K())},
                   {"L", std::to_string(l.L)},
                   {"SHIFT", std::to_string(groupShift(l))},
                   {"LANES", groupLanes(l)},
                   {"LOADG", loadF32(l, values + " + k * " + lit(t.dim), "g")},
                   {"ROWUPDATE", rowUpdateCode(em, t, o, l)}}));
  out.launches.push_back(CudaEmitter::kernelLaunch(
      entry, args.list, std::max<int64_t>((C * l.L + kBlock - 1) / kBlock, 1), kBlock));
}

// --- embedding_update ---------------------------------------------------------------

/// Runs (one row's contributions) longer than this get a block of their own.
constexpr int64_t kLongRun = 64;
/// Gradient rows a group loads before adding them (4: the sm_80 build of the
/// quantised-table kernels spills at 8), and a long run's thread its values.
constexpr int kRowsInFlight = 4, kLongRowsInFlight = 8;

struct Source {
  bool bag = true;
  rt::Pooling pooling = rt::Pooling::Sum;
  bool weighted = false;
  int64_t rowOffset = 0, rows = 0;
  std::string table; ///< the table its ids address (for errors)
  int32_t ids = -1, offsets = -1, weights = -1, grad = -1; ///< grad: dy or values
  int64_t capacity = 0, start = 0, B = 0;
};

void lowerEmbeddingUpdate(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  if (k.attrs.contains("batch") == k.attrs.contains("table"))
    throw CodegenError("needs exactly one of the attributes 'table' and 'batch'");
  const Target t = targetOf(em.plan(), k);
  expectRequantize(k, t);
  const OptSpec o = optSpec(t);
  const double gradScale = realAttr(k, "grad_scale");
  if (!k.attrs.contains("sources") || !k.attrs["sources"].is_array() || k.attrs["sources"].empty())
    throw CodegenError("missing or empty list attribute 'sources'");
  appendHelpers(em);
  const int64_t D = t.dim;

  std::vector<Source> sources;
  size_t in = 0;
  int64_t P = 0;
  for (const nlohmann::json &j : k.attrs["sources"]) {
    const std::string where = "source " + std::to_string(sources.size());
    if (!j.is_object())
      throw CodegenError(where + " is not an object");
    Source s;
    s.rowOffset = j.value("row_offset", int64_t(-1));
    s.rows = j.value("rows", int64_t(-1));
    for (const Target::Segment &seg : t.segments)
      if (seg.firstRow == s.rowOffset && seg.rows == s.rows)
        s.table = seg.name;
    if (s.table.empty())
      throw CodegenError(where + " addresses rows [" + std::to_string(s.rowOffset) + ", " +
                         std::to_string(s.rowOffset + s.rows) + "), which is no table of '" +
                         t.name + "'");
    const rt::RowSource kind = wordOf<rt::RowSource>(j.value("kind", ""), where);
    if (kind == rt::RowSource::Bag) {
      s.pooling = wordOf<rt::Pooling>(j.value("pooling", ""), where);
      if (s.pooling == rt::Pooling::Max)
        throw CodegenError(where + " uses max pooling, which embedding_update does not fuse "
                                   "(its gradient reads the table the update changes)");
      s.weighted = j.value("weighted", false);
      const size_t ins = s.weighted ? 4 : 3;
      if (in + ins > k.inputs.size())
        throw CodegenError(where + " needs more inputs than the kernel has");
      s.ids = k.inputs[in];
      s.offsets = k.inputs[in + 1];
      s.weights = s.weighted ? k.inputs[in + 2] : -1;
      s.grad = k.inputs[in + ins - 1];
      s.B = leading(em.buffer(s.grad));
      in += ins;
    } else {
      s.bag = false;
      if (in + 2 > k.inputs.size())
        throw CodegenError(where + " needs more inputs than the kernel has");
      s.ids = k.inputs[in];
      s.grad = k.inputs[in + 1];
      in += 2;
    }
    s.capacity = numel(em.buffer(s.ids));
    s.start = P;
    P += s.capacity;
    sources.push_back(s);
  }
  if (in != k.inputs.size())
    throw CodegenError("the sources take " + std::to_string(in) + " inputs, got " +
                       std::to_string(k.inputs.size()));
  if (P >= (int64_t(1) << 31))
    throw CodegenError("embedding_update of '" + t.name + "' has " + std::to_string(P) +
                       " contributions; the sort's positions are 32-bit");

  const int bits = std::max(1, bitWidth(uint64_t(t.rows)));
  const std::string pad = lit((int64_t(1) << bits) - 1);
  const int64_t keysIn = em.scratch(8 * std::max<int64_t>(P, 1));
  const int64_t valsIn = em.scratch(4 * std::max<int64_t>(P, 1));
  const int64_t keysOut = em.scratch(8 * std::max<int64_t>(P, 1));
  const int64_t valsOut = em.scratch(4 * std::max<int64_t>(P, 1));
  const int64_t bagOf = em.scratch(4 * std::max<int64_t>(P, 1));

  // 1. Keys: thread p is position p of source s (positions by capacity);
  //    filled ids get (id + row_offset, p), the rest padding. A bag
  //    contribution also records its bag (binary search in the offsets).
  if (P > 0) {
    Args args;
    const std::string ki = args.scratch(keysIn, "emb_i64"), vi = args.scratch(valsIn, "int");
    const std::string bo = args.scratch(bagOf, "int");
    std::string body;
    for (const Source &s : sources) {
      const int badId = em.errorCode("ids of table '" + s.table + "' outside [0, " +
                                     std::to_string(s.rows) + ")");
      const std::string ids = args.buffer(s.ids, "const emb_i64");
      const std::string n = args.count(em.buffer(s.ids), s.ids, s.capacity);
      std::string bagCode;
      if (s.bag) {
        const int cover = em.errorCode("the bags of a source of embedding_update of '" + t.name +
                                       "' do not cover its ids (ids)");
        const std::string offsets = args.buffer(s.offsets, "const emb_i64");
        bagCode = subst(R"(
      // The bags must cover the ids exactly (offsets[0] == 0, offsets[B] == n).
      if (i == 0 && ($OFF[0] != 0 || $OFF[$B] != n)) emb_set_error(a.step, $COVER, n);
      if (i < n) {
        emb_i64 lo = 0, hi = $B;
        while (hi - lo > 1) {
          const emb_i64 mid = (lo + hi) >> 1;
          if ($OFF[mid] <= i) lo = mid; else hi = mid;
        }
        bag = (int)lo;
      })",
                        {{"OFF", offsets}, {"B", lit(s.B)}, {"COVER", std::to_string(cover)}});
      }
      body += subst(R"(
    if (p >= $START && p < $END) {
      const emb_i64 i = p - $START, n = $N;$BAGCODE
      if (i < n) {
        const emb_i64 id = $IDS[i];
        if (id < 0 || id >= $ROWS) emb_set_error(a.step, $BADID, id);
        else key = id + $OFF;
      }
    })",
                    {{"START", lit(s.start)},
                     {"END", lit(s.start + s.capacity)},
                     {"N", n},
                     {"BAGCODE", bagCode},
                     {"IDS", ids},
                     {"ROWS", lit(s.rows)},
                     {"BADID", std::to_string(badId)},
                     {"OFF", lit(s.rowOffset)}});
    }
    const std::string entry = em.entryName("embedding_update_keys_" + t.name);
    em.append(subst(R"(
// embedding_update of '$TNAME': (row, position) pairs of every contribution.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 p = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= $P) return;
  emb_i64 key = $PAD;
  int bag = 0;$BODY
  $KI[p] = key;
  $VI[p] = (int)p;
  $BO[p] = bag;
}
)",
                    {{"TNAME", t.name},
                     {"ENTRY", entry},
                     {"P", lit(P)},
                     {"PAD", pad},
                     {"BODY", body},
                     {"KI", ki},
                     {"VI", vi},
                     {"BO", bo}}));
    out.launches.push_back(
        CudaEmitter::kernelLaunch(entry, args.list, (P + kBlock - 1) / kBlock, kBlock));
    // 2. Stable: a row's contributions stay in (source, position) order.
    rt::CudaLaunch sort;
    sort.kind = "library";
    sort.entry = "sort_pairs";
    sort.args = {CudaEmitter::scratchAt(keysIn), CudaEmitter::scratchAt(valsIn),
                 CudaEmitter::scratchAt(keysOut), CudaEmitter::scratchAt(valsOut)};
    sort.params = {{"count", P}, {"key_bits", bits}};
    out.launches.push_back(sort);
  }

  // 3. Global decay of every row (after the key pass: a bad id means nothing
  //    is written, as on the CPU, which checks before it writes).
  const std::string gsDecl = "const double emb_gs = " + doubleLiteral(gradScale) + ";";
  if (o.globalDecay)
    out.launches.push_back(globalDecayLaunch(em, t, o, true));
  if (P == 0)
    return; // no ids can ever come: the decay is the whole update

  // 4. Runs: a run is the sorted contributions of one row. Head flags, an
  //    exclusive scan numbering the runs, and each run's [start, end).
  const int64_t flags = em.scratch(4 * P), runOf = em.scratch(4 * P);
  const int64_t runStart = em.scratch(4 * P), runEnd = em.scratch(4 * P);
  const int64_t runCount = em.scratch(8), longCount = em.scratch(8);
  const int64_t maxLong = P / (kLongRun + 1) + 1;
  const int64_t longList = em.scratch(4 * maxLong);
  emitRunNumbering(em, out, "embedding_update_" + t.name, P, pad, keysOut, flags, runOf,
                   runCount);
  {
    Args args;
    const std::string ko = args.scratch(keysOut, "const emb_i64");
    const std::string fl = args.scratch(flags, "const int"), ro = args.scratch(runOf, "const int");
    const std::string rs = args.scratch(runStart, "int"), re = args.scratch(runEnd, "int");
    const std::string ln = args.scratch(longCount, "int");
    const std::string entry = em.entryName("embedding_update_runs_" + t.name);
    em.append(subst(R"(
// embedding_update of '$TNAME': run r covers sorted positions [RS[r], RE[r]).
extern "C" __global__ void $ENTRY(EmbArgs a) {
  const emb_i64 q = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (q == 0) *$LN = 0; // the long-run list of this step
  if (q >= $P) return;
  const emb_i64 key = $KO[q];
  if (key == $PAD) return;
  const int head = $FL[q], r = $RO[q] + head - 1;
  if (head) $RS[r] = (int)q;
  if (q + 1 == $P || $KO[q + 1] != key) $RE[r] = (int)(q + 1);
}
)",
                    {{"TNAME", t.name}, {"ENTRY", entry}, {"P", lit(P)}, {"KO", ko}, {"FL", fl},
                     {"RO", ro}, {"RS", rs}, {"RE", re}, {"LN", ln}, {"PAD", pad}}));
    out.launches.push_back(
        CudaEmitter::kernelLaunch(entry, args.list, (P + kBlock - 1) / kBlock, kBlock));
  }

  // 5. Each run's gradient, summed in sorted order (value by value the
  //    CPU's order, so the sums are bit-identical), then the row's step.
  //    Loads never wait for the sums: a contribution's row pointer and scale
  //    (META) are computed for many contributions at once, and rows are
  //    fetched several at a time before they are added in order.
  std::vector<int32_t> grads;
  for (const Source &s : sources)
    grads.push_back(s.grad);
  const Layout l = updateLayout(em, t, o, grads);
  Args args;
  const std::string ko = args.scratch(keysOut, "const emb_i64");
  const std::string vo = args.scratch(valsOut, "const int");
  const std::string bo = args.scratch(bagOf, "const int");
  const std::string rs = args.scratch(runStart, "const int");
  const std::string re = args.scratch(runEnd, "const int");
  const std::string rc = args.scratch(runCount, "const emb_i64");
  const std::string ll = args.scratch(longList, "int");
  const std::string ln = args.scratch(longCount, "int");
  // META: from `src` (an unsorted position), the contribution's f32 row
  // `mp` and its factor `msc`: dy[b] * (scale * weight) for a bag (the
  // product rounded before it is added, as lookupGrad stores it), the
  // values row times 1 (exact) for rows.
  std::string meta;
  for (const Source &s : sources) {
    std::string one;
    if (s.bag) {
      const std::string offsets = args.buffer(s.offsets, "const emb_i64");
      const std::string weights = s.weighted ? args.buffer(s.weights, "const float") : "";
      const std::string dy = args.buffer(s.grad, "const float");
      one = subst(R"(
        const int b = $BO[src];
        const emb_i64 size = $OFF[b + 1] - $OFF[b];
        const float scale = $MEAN && size > 0 ? 1.0f / (float)size : 1.0f;
        msc = scale * $W;
        mp = $DY + (emb_i64)b * $D;)",
                  {{"BO", bo},
                   {"OFF", offsets},
                   {"MEAN", s.pooling == rt::Pooling::Mean ? "true" : "false"},
                   {"W", s.weighted ? weights + "[i]" : "1.0f"},
                   {"DY", dy},
                   {"D", lit(D)}});
    } else {
      const std::string values = args.buffer(s.grad, "const float");
      one = "\n        msc = 1.0f;\n        mp = " + values + " + i * " + lit(D) + ";";
    }
    meta += subst(R"(
      if (src >= $START && src < $END) {
        const emb_i64 i = src - $START;
        (void)i;$ONE
      })",
                  {{"START", lit(s.start)}, {"END", lit(s.start + s.capacity)}, {"ONE", one}});
  }
  const std::string pointers = targetPointers(args, k, t, o);
  const std::string rowUpdate = rowUpdateCode(em, t, o, l);
  const std::map<std::string, std::string> common = {
      {"TNAME", t.name}, {"STORAGE", t.storage.name()}, {"OPT", rt::enumString(o.kind)},
      {"DIM", std::to_string(D)}, {"D", lit(D)}, {"KO", ko}, {"VO", vo}, {"RS", rs},
      {"RE", re}, {"RC", rc}, {"LL", ll}, {"LN", ln}, {"GSDECL", gsDecl},
      {"HYPER", hyperCode(o, "emb_gs")}, {"POINTERS", pointers}, {"K", std::to_string(l.K())},
      {"META", meta}, {"ROWUPDATE", rowUpdate}, {"LONG", lit(kLongRun)},
      {"IN_FLIGHT", std::to_string(kRowsInFlight)}, {"LONG_IN_FLIGHT", std::to_string(kLongRowsInFlight)},
      {"L", std::to_string(l.L)}, {"LM", std::to_string(l.L - 1)},
      {"SHIFT", std::to_string(groupShift(l))}, {"LANES", groupLanes(l)}};

  // 5a. Runs of at most kLongRun: one group of L lanes each (a warp for rows
  //     of 32 vectors or more, 8 groups a warp for 16-wide f32 rows). Lane j
  //     computes the META of the j-th contribution of each chunk of L; the
  //     group then loads kRowsInFlight rows (a lane its V-wide vectors)
  //     before adding them. A longer run is listed for 5b.
  const std::string shortEntry = em.entryName("embedding_update_" + t.name);
  std::map<std::string, std::string> v = common;
  v["ENTRY"] = shortEntry;
  v["LOADX"] = loadF32(l, "emb_rp", "x[jj]");
  v["ADDX"] = forValues(l, "const float prod = sj * x[jj][t]; g[t] = firstC ? prod : g[t] + prod;");
  em.append(subst(R"(
// embedding_update of '$TNAME' ($STORAGE, $OPT, D $DIM): a group of $L lanes per
// run of at most $LONG contributions, groups looping over the runs (longer
// runs: the _long kernel).
extern "C" __global__ void $ENTRY(EmbArgs a) {
  // A bad id (or uncovered ids) found by the key pass: nothing is written.
  if (a.step->skip || a.step->error) return;
$LANES  const emb_i64 runs = *$RC, groups = ((emb_i64)gridDim.x * blockDim.x) >> $SHIFT;
  $GSDECL
$HYPER
$POINTERS
  for (emb_i64 run = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) >> $SHIFT; run < runs;
       run += groups) {
  const int start = $RS[run], end = $RE[run];
  if (end - start > $LONG) {
    if (lane == 0) $LL[atomicAdd($LN, 1)] = (int)run;
    continue;
  }
  float g[$K];
#pragma unroll
  for (int t = 0; t < $K; ++t) g[t] = 0.0f;
  for (int base = start; base < end; base += $L) {
    const int cnt = end - base < $L ? end - base : $L;
    const float *mp = 0;
    float msc = 0.0f;
    if (lane < cnt) {
      const emb_i64 src = $VO[base + lane];$META
    }
    for (int j0 = 0; j0 < cnt; j0 += $IN_FLIGHT) {
      float x[$IN_FLIGHT][$K];
#pragma unroll
      for (int jj = 0; jj < $IN_FLIGHT; ++jj) {
        const float *emb_rp = (const float *)__shfl_sync(emb_gm, (unsigned long long)mp, (j0 + jj) & $LM, $L);
        if (j0 + jj < cnt) {
$LOADX
        }
      }
#pragma unroll
      for (int jj = 0; jj < $IN_FLIGHT; ++jj) {
        const float sj = __shfl_sync(emb_gm, msc, (j0 + jj) & $LM, $L);
        const bool firstC = base == start && j0 + jj == 0;
        if (j0 + jj < cnt) {
$ADDX
        }
      }
    }
  }
  const emb_i64 r = $KO[start];
$ROWUPDATE
  }
}
)",
                  v));
  // Its registers: the rows in flight, the row step's state (rowwise
  // Adagrad's doubles): up to ~100 a thread, so two blocks of 256 an SM.
  em.setMinBlocks(shortEntry, 2);
  // Groups loop over the runs: at most 8 blocks of kBlock per SM of an H200.
  out.launches.push_back(CudaEmitter::kernelLaunch(
      shortEntry, args.list, std::min<int64_t>((P * l.L + kBlock - 1) / kBlock, 1056), kBlock));

  // 5b. Long runs (a hot row of a skewed id distribution: tens of thousands
  //     of contributions): one block each, a thread per column, so every
  //     column still sums in order while the block keeps many rows in
  //     flight; the META of a chunk of contributions is computed by the
  //     block into shared memory. The first group then steps the row.
  const int64_t threads = std::min<int64_t>(std::max<int64_t>((D + 31) / 32 * 32, 32), 1024);
  const int64_t columnsPerThread = (D + threads - 1) / threads;
  if (D * 4 + threads * 12 > 48 * 1024)
    throw CodegenError("table '" + t.name + "' is " + std::to_string(D) +
                       " wide; the fused update's long runs keep a row in 48 KiB of shared "
                       "memory (at most about 12000 values)");
  const std::string longEntry = em.entryName("embedding_update_long_" + t.name);
  v = common;
  v["ENTRY"] = longEntry;
  v["BT"] = std::to_string(threads);
  v["NC"] = std::to_string(columnsPerThread);
  v["FROMSHARED"] = forValues(l, "g[t] = emb_gs_row[j];");
  em.append(subst(R"(
// embedding_update of '$TNAME': runs longer than $LONG, a block each.
extern "C" __global__ void $ENTRY(EmbArgs a) {
  if (a.step->skip || a.step->error) return;
  __shared__ const float *emb_mp[$BT];
  __shared__ float emb_ms[$BT];
  __shared__ float emb_gs_row[$D];
  const int tid = (int)threadIdx.x;
$LANES  const int n = *$LN;
  $GSDECL
$HYPER
$POINTERS
  for (int li = blockIdx.x; li < n; li += gridDim.x) {
    const int run = $LL[li], start = $RS[run], end = $RE[run];
    float gc[$NC];
#pragma unroll
    for (int k = 0; k < $NC; ++k) gc[k] = 0.0f;
    for (int base = start; base < end; base += $BT) {
      const int cnt = end - base < $BT ? end - base : $BT;
      __syncthreads(); // the previous chunk's META is consumed
      if (tid < cnt) {
        const float *mp = 0;
        float msc = 0.0f;
        const emb_i64 src = $VO[base + tid];$META
        emb_mp[tid] = mp;
        emb_ms[tid] = msc;
      }
      __syncthreads();
      for (int j0 = 0; j0 < cnt; j0 += $LONG_IN_FLIGHT) {
        float x[$LONG_IN_FLIGHT][$NC];
#pragma unroll
        for (int jj = 0; jj < $LONG_IN_FLIGHT; ++jj)
#pragma unroll
          for (int k = 0; k < $NC; ++k) {
            const int c = tid + k * $BT;
            x[jj][k] = j0 + jj < cnt && c < $D ? emb_mp[j0 + jj][c] : 0.0f;
          }
#pragma unroll
        for (int jj = 0; jj < $LONG_IN_FLIGHT; ++jj) {
          const bool firstC = base == start && j0 + jj == 0;
          if (j0 + jj < cnt) {
            const float sj = emb_ms[j0 + jj];
#pragma unroll
            for (int k = 0; k < $NC; ++k) {
              const float prod = sj * x[jj][k];
              gc[k] = firstC ? prod : gc[k] + prod;
            }
          }
        }
      }
    }
#pragma unroll
    for (int k = 0; k < $NC; ++k)
      if (tid + k * $BT < $D) emb_gs_row[tid + k * $BT] = gc[k];
    __syncthreads();
    if (tid < $L) { // the first group steps the row
      float g[$K];
#pragma unroll
      for (int t = 0; t < $K; ++t) g[t] = 0.0f;
$FROMSHARED
      const emb_i64 r = $KO[start];
$ROWUPDATE
    }
    __syncthreads(); // emb_gs_row is free again
  }
}
)",
                  v));
  const int64_t longBlocks = std::min<int64_t>(maxLong, 1056);
  out.launches.push_back(CudaEmitter::kernelLaunch(longEntry, args.list, longBlocks, threads));
}

} // namespace

EMBC_CUDA_LOWERING(UpdateTable, lowerUpdateTable)
EMBC_CUDA_LOWERING(EmbeddingUpdate, lowerEmbeddingUpdate)
