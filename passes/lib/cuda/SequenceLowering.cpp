//===- SequenceLowering.cpp - sequence lookups, positions, pools, grads ---===//
//
// The sequence kernels as runtime/include/embc/runtime/cpu/SequenceKernels.h
// computes them, operation for operation (bit-identical results). Threads
// own V consecutive columns of a row (V = 4, float4 loads and stores, when
// D is a multiple of 4 and every operand is 16-byte aligned; else V = 1),
// so a warp reads and writes whole rows coalesced:
//  - sequence_lookup: one thread per (b, l, column vector), zeros past n_b;
//  - sequence_lookup_grad: the same walk, scattering dy into the id rows;
//  - positions and its dx: the same walk; the learned table's gradient one
//    thread per (row, column vector), summing the sequences in order;
//  - sequence_pool and its gradient: one thread per (b, column vector),
//    walking the positions in order as the CPU does.
// Grids are capped (gridFor) and every kernel strides over its items.
//
//===----------------------------------------------------------------------===//

#include "EmbeddingLowering.h"

#include <sstream>

using namespace embc::codegen;
using namespace embc::codegen::emb;

namespace {

/// B, L and D of a B x L x D f32 operand.
struct SequenceShape {
  int64_t B, L, D;
};

SequenceShape sequenceShape(const CudaEmitter &em, int32_t id, const char *what) {
  const rt::Buffer &b = f32Buffer(em, id, what);
  if (b.shape.size() != 3 || numel(b) < 1)
    throw CodegenError(std::string(what) + " '" + b.name + "' must be a non-empty B x L x D tensor");
  return {b.shape[0], b.shape[1], b.shape[2]};
}

/// 4 when D is a multiple of 4 and every f32 operand is 16-byte aligned.
int64_t vectorWidth(const CudaEmitter &em, int64_t D, std::initializer_list<int32_t> f32Buffers) {
  if (D % 4 != 0)
    return 1;
  for (int32_t id : f32Buffers)
    if (!aligned16(em, CudaEmitter::buf(id)))
      return 1;
  return 4;
}

/// "float v[V] = the V floats at P" (P a float pointer expression).
std::string load(int64_t V, const std::string &v, const std::string &p) {
  if (V == 1)
    return "float " + v + "[1] = {" + p + "[0]};";
  return "float " + v + "[4]; { const float4 t_ = *(const float4 *)(" + p + "); " + v +
         "[0] = t_.x; " + v + "[1] = t_.y; " + v + "[2] = t_.z; " + v + "[3] = t_.w; }";
}

/// Stores float v[V] at P.
std::string store(int64_t V, const std::string &p, const std::string &v) {
  if (V == 1)
    return p + "[0] = " + v + "[0];";
  return "*(float4 *)(" + p + ") = make_float4(" + v + "[0], " + v + "[1], " + v + "[2], " + v +
         "[3]);";
}

/// The grid-stride loop over `items` with index `i`.
std::string strideLoop(const std::string &items) {
  return "for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < " + items +
         "; i += (emb_i64)gridDim.x * blockDim.x)";
}

// sequence_lookup: ids, offsets -> y (B x L x D).
void lowerSequenceLookup(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const rt::Table &table = tableOf(em.plan(), intAttr(k, "table"));
  if (table.storage != rt::Storage::F32)
    return lowerQuantizedSequenceLookup(em, k, out);
  const auto [B, L, D] = sequenceShape(em, k.outputs[0], "output");
  if (D != table.dim)
    throw CodegenError("output rows of " + std::to_string(D) + " != dim of table '" + table.name +
                       "' (" + std::to_string(table.dim) + ")");
  const int64_t V = vectorWidth(em, D, {table.buffer, k.outputs[0]});
  appendHelpers(em);
  const auto [idCode, lengthCode] = sequenceLookupCodes(em, table, L);
  Args args;
  const rt::Buffer &idsBuf = em.buffer(k.inputs[0]);
  const std::string ids = args.buffer(k.inputs[0], "const emb_i64");
  const std::string n = args.count(idsBuf, k.inputs[0], numel(idsBuf));
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string tbl = args.buffer(table.buffer, "const float");
  const std::string y = args.buffer(k.outputs[0], "float");
  const int64_t DV = D / V;
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// sequence_lookup of '" << table.name << "': " << B << " x " << L << " x " << D
    << ", " << V << " columns a thread, zeros past each sequence.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  const emb_i64 n = " << n << ";\n"
    << "  " << strideLoop(lit(B * L * DV)) << " {\n"
    << "    const emb_i64 b = i / " << lit(L * DV) << ", l = (i / " << lit(DV) << ") % " << lit(L)
    << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
    << "    const emb_i64 lo = " << offsets << "[b], len = " << offsets << "[b + 1] - lo;\n"
    << "    float v[" << V << "] = {0.0f};\n"
    << "    if (len < 0 || len > " << lit(L) << " || lo < 0 || lo + len > n) {\n"
    << "      if (l == 0 && c == 0) emb_set_error(a.step, " << lengthCode << ", b);\n"
    << "    } else if (l < len) {\n"
    << "      const emb_i64 id = " << ids << "[lo + l];\n"
    << "      if (id < 0 || id >= " << lit(table.rows) << ") {\n"
    << "        if (c == 0) emb_set_error(a.step, " << idCode << ", id);\n"
    << "      } else {\n"
    << "        " << load(V, "r", tbl + " + id * " + lit(D) + " + c") << "\n"
    << "        for (int t = 0; t < " << V << "; ++t) v[t] = r[t];\n"
    << "      }\n"
    << "    }\n"
    << "    " << store(V, y + " + (b * " + lit(L) + " + l) * " + lit(D) + " + c", "v") << "\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, gridFor(B * L * DV, kBlock), kBlock));
}

// sequence_lookup_grad: ids, offsets, dy (B x L x D) -> rows, one per id.
void lowerSequenceLookupGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 3, 1);
  const auto [B, L, D] = sequenceShape(em, k.inputs[2], "dy");
  const rt::Buffer &idsBuf = em.buffer(k.inputs[0]);
  const rt::Buffer &rowsBuf = f32Buffer(em, k.outputs[0], "rows");
  if (rowsBuf.shape.size() != 2 || rowsBuf.shape[1] != D || rowsBuf.shape[0] < numel(idsBuf))
    throw CodegenError("rows '" + rowsBuf.name + "' must hold a row of " + std::to_string(D) +
                       " for each of the " + std::to_string(numel(idsBuf)) + " ids");
  const int64_t V = vectorWidth(em, D, {k.inputs[2], k.outputs[0]});
  appendHelpers(em);
  Args args;
  const std::string n = args.count(idsBuf, k.inputs[0], numel(idsBuf));
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string dy = args.buffer(k.inputs[2], "const float");
  const std::string rows = args.buffer(k.outputs[0], "float");
  const std::string setLength =
      rowsBuf.dynamic ? "if (blockIdx.x == 0 && threadIdx.x == 0) *" +
                            args.lengthCell(k.outputs[0]) + " = n;\n"
                      : "";
  const int64_t DV = D / V;
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// sequence_lookup_grad: " << B << " x " << L << " x " << D
    << " back to one row per id; rows of ids outside every sequence are zeros (as the CPU).\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  const emb_i64 n = " << n << ";\n"
    << "  const emb_i64 *offsets = " << offsets << ";\n"
    << "  " << setLength
    << "  const emb_i64 lo0 = offsets[0] < 0 ? 0 : (offsets[0] > n ? n : offsets[0]);\n"
    << "  const emb_i64 hiB = offsets[" << B << "] < lo0 ? lo0 : (offsets[" << B
    << "] > n ? n : offsets[" << B << "]);\n"
    << "  const float zero[" << V << "] = {0.0f};\n"
    << "  " << strideLoop("n * " + lit(DV)) << " {\n"
    << "    const emb_i64 row = i / " << lit(DV) << ", c = (i % " << lit(DV) << ") * " << V
    << ";\n"
    << "    if (row < lo0 || row >= hiB) { " << store(V, rows + " + row * " + lit(D) + " + c", "zero")
    << " }\n"
    << "  }\n"
    << "  " << strideLoop(lit(B * L * DV)) << " {\n"
    << "    const emb_i64 b = i / " << lit(L * DV) << ", l = (i / " << lit(DV) << ") % " << lit(L)
    << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
    << "    const emb_i64 lo = offsets[b];\n"
    << "    emb_i64 len = offsets[b + 1] - lo;\n"
    << "    len = len < 0 ? 0 : (len > " << lit(L) << " ? " << lit(L) << " : len);\n"
    << "    if (l >= len || lo < 0 || lo + l >= n) continue; // the forward reported it\n"
    << "    " << load(V, "g", dy + " + (b * " + lit(L) + " + l) * " + lit(D) + " + c") << "\n"
    << "    " << store(V, rows + " + (lo + l) * " + lit(D) + " + c", "g") << "\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  const int64_t items = std::max(B * L, rowsBuf.shape[0]) * DV;
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, gridFor(items, kBlock), kBlock));
}

/// The length of sequence b, clamped to [0, L], as `len`.
std::string clampedLength(const std::string &offsets, int64_t L) {
  return "    emb_i64 len = " + offsets + "[b + 1] - " + offsets + "[b];\n    len = len < 0 ? 0 : (len > " +
         lit(L) + " ? " + lit(L) + " : len);\n";
}

// positions: x (B x L x D), offsets, [table] -> y. Sinusoids are computed in
// double as the CPU's table is (cpu::sinusoid), then rounded to float.
void lowerPositions(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const bool learned =
      wordOf<rt::PositionKind>(stringAttr(k, "kind"), "the positions") == rt::PositionKind::Learned;
  expectCounts(k, learned ? 3 : 2, 1);
  const auto [B, L, D] = sequenceShape(em, k.inputs[0], "input");
  if (learned && (f32Buffer(em, k.inputs[2], "table").shape.size() != 2 ||
                  em.buffer(k.inputs[2]).shape[0] < L || em.buffer(k.inputs[2]).shape[1] != D))
    throw CodegenError("the positions' table must hold at least " + std::to_string(L) +
                       " rows of " + std::to_string(D));
  const int64_t V = learned ? vectorWidth(em, D, {k.inputs[0], k.inputs[2], k.outputs[0]})
                            : vectorWidth(em, D, {k.inputs[0], k.outputs[0]});
  Args args;
  const std::string x = args.buffer(k.inputs[0], "const float");
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string table = learned ? args.buffer(k.inputs[2], "const float") : "";
  const std::string y = args.buffer(k.outputs[0], "float");
  const int64_t DV = D / V;
  std::ostringstream t;
  const std::string entry = em.entryName(k.op);
  const rt::PositionKind kind = learned ? rt::PositionKind::Learned : rt::PositionKind::Sinusoidal;
  t << "// positions (" << rt::enumName(kind) << ") of " << B << " x " << L
    << " x " << D << ": zeros past each sequence.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  " << strideLoop(lit(B * L * DV)) << " {\n"
    << "    const emb_i64 b = i / " << lit(L * DV) << ", l = (i / " << lit(DV) << ") % " << lit(L)
    << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
    << clampedLength(offsets, L)
    << "    float o[" << V << "] = {0.0f};\n"
    << "    if (l < len) {\n"
    << "      " << load(V, "v", x + " + (b * " + lit(L) + " + l) * " + lit(D) + " + c") << "\n";
  if (learned)
    t << "      " << load(V, "p", table + " + l * " + lit(D) + " + c") << "\n"
      << "      for (int t = 0; t < " << V << "; ++t) o[t] = v[t] + p[t];\n";
  else
    t << "      for (int t = 0; t < " << V << "; ++t) {\n"
      << "        const emb_i64 j = c + t;\n"
      << "        const double angle = (double)l / pow(10000.0, (double)(2 * (j / 2)) / "
      << D << ".0);\n"
      << "        o[t] = v[t] + (float)(j % 2 == 0 ? sin(angle) : cos(angle));\n"
      << "      }\n";
  t << "    }\n"
    << "    " << store(V, y + " + (b * " + lit(L) + " + l) * " + lit(D) + " + c", "o") << "\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, gridFor(B * L * DV, kBlock), kBlock));
}

// positions_grad: dy, offsets -> dx, [dtable]: dx masks dy; a thread per
// table row's column vector sums the sequences' dy in b order (as the CPU).
void lowerPositionsGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const bool learned = wordOf<rt::PositionKind>(stringAttr(k, "kind"), "the positions_grad") ==
                       rt::PositionKind::Learned;
  expectCounts(k, 2, learned ? 2 : 1);
  const auto [B, L, D] = sequenceShape(em, k.inputs[0], "dy");
  int64_t rows = 0;
  if (learned) {
    const rt::Buffer &dt = f32Buffer(em, k.outputs[1], "dtable");
    if (dt.shape.size() != 2 || dt.shape[0] < L || dt.shape[1] != D)
      throw CodegenError("the positions' table gradient must hold at least " +
                         std::to_string(L) + " rows of " + std::to_string(D));
    rows = dt.shape[0];
  }
  const int64_t V = learned ? vectorWidth(em, D, {k.inputs[0], k.outputs[0], k.outputs[1]})
                            : vectorWidth(em, D, {k.inputs[0], k.outputs[0]});
  const int64_t DV = D / V;
  {
    Args args;
    const std::string dy = args.buffer(k.inputs[0], "const float");
    const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
    const std::string dx = args.buffer(k.outputs[0], "float");
    const std::string entry = em.entryName(k.op);
    std::ostringstream t;
    t << "// positions_grad, dx of " << B << " x " << L << " x " << D
      << ": dy on the valid positions.\n"
      << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
      << "  " << strideLoop(lit(B * L * DV)) << " {\n"
      << "    const emb_i64 b = i / " << lit(L * DV) << ", l = (i / " << lit(DV) << ") % "
      << lit(L) << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
      << clampedLength(offsets, L)
      << "    const emb_i64 at = (b * " << lit(L) << " + l) * " << lit(D) << " + c;\n"
      << "    " << load(V, "g", dy + " + at") << "\n"
      << "    float o[" << V << "];\n"
      << "    for (int t = 0; t < " << V << "; ++t) o[t] = l < len ? g[t] : 0.0f;\n"
      << "    " << store(V, dx + " + at", "o") << "\n"
      << "  }\n"
      << "}\n";
    em.append(t.str());
    out.launches.push_back(
        CudaEmitter::kernelLaunch(entry, args.list, gridFor(B * L * DV, kBlock), kBlock));
  }
  if (!learned)
    return;
  Args args;
  const std::string dy = args.buffer(k.inputs[0], "const float");
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string dtable = args.buffer(k.outputs[1], "float");
  const std::string entry = em.entryName("positions_grad_table");
  std::ostringstream t;
  t << "// positions_grad, the table's " << rows << " x " << D
    << ": each row sums dy over the sequences that reach it, in sequence order.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  " << strideLoop(lit(rows * DV)) << " {\n"
    << "    const emb_i64 l = i / " << lit(DV) << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
    << "    float acc[" << V << "] = {0.0f};\n"
    << "    if (l < " << lit(L) << ")\n"
    << "      for (emb_i64 b = 0; b < " << lit(B) << "; ++b) {\n"
    << "        emb_i64 len = " << offsets << "[b + 1] - " << offsets << "[b];\n"
    << "        if (l >= len) continue; // also a negative length\n"
    << "        " << load(V, "g", dy + " + (b * " + lit(L) + " + l) * " + lit(D) + " + c") << "\n"
    << "        for (int t = 0; t < " << V << "; ++t) acc[t] += g[t];\n"
    << "      }\n"
    << "    " << store(V, dtable + " + l * " + lit(D) + " + c", "acc") << "\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, gridFor(rows * DV, kBlock), kBlock));
}


// sequence_pool: x (B x L x D), offsets -> y (B x D).
void lowerSequencePool(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const auto [B, L, D] = sequenceShape(em, k.inputs[0], "input");
  f32Matrix(em, k.outputs[0], B, D, "output");
  const rt::SequencePooling mode = wordOf<rt::SequencePooling>(stringAttr(k, "mode"), "the sequence_pool");
  const int64_t V = vectorWidth(em, D, {k.inputs[0], k.outputs[0]});
  Args args;
  const std::string x = args.buffer(k.inputs[0], "const float");
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string y = args.buffer(k.outputs[0], "float");
  const int64_t DV = D / V;
  std::string step; // acc[t] with x's value v[t] at position l >= 1 (cpu: std::max / +)
  if (mode == rt::SequencePooling::Max)
    step = "acc[t] = acc[t] < v[t] ? v[t] : acc[t];";
  else
    step = "acc[t] = acc[t] + v[t];";
  const bool first = mode == rt::SequencePooling::First;
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// sequence_pool (" << rt::enumName(mode) << ") of " << B << " x " << L << " x " << D
    << ": one thread per " << V << " columns of a sequence, positions in order.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  " << strideLoop(lit(B * DV)) << " {\n"
    << "    const emb_i64 b = i / " << lit(DV) << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
    << clampedLength(offsets, L)
    << "    const float *xb = " << x << " + b * " << lit(L * D) << " + c;\n"
    << "    float acc[" << V << "] = {0.0f};\n"
    << "    if (len > 0) {\n"
    << "      " << load(V, "x0", "xb") << "\n"
    << "      for (int t = 0; t < " << V << "; ++t) acc[t] = x0[t];\n"
    << (first ? ""
              : "      for (emb_i64 l = 1; l < len; ++l) {\n        " +
                    load(V, "v", "xb + l * " + lit(D)) + "\n        for (int t = 0; t < " +
                    std::to_string(V) + "; ++t) " + step + "\n      }\n")
    << (mode == rt::SequencePooling::Mean
            ? "      for (int t = 0; t < " + std::to_string(V) + "; ++t) acc[t] = acc[t] / (float)len;\n"
            : "")
    << "    }\n"
    << "    " << store(V, y + " + b * " + lit(D) + " + c", "acc") << "\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, gridFor(B * DV, kBlock), kBlock));
}

// sequence_pool_grad: dy (B x D), offsets, [x] -> dx (B x L x D).
void lowerSequencePoolGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  const rt::SequencePooling mode = wordOf<rt::SequencePooling>(stringAttr(k, "mode"), "the sequence_pool_grad");
  const bool max = mode == rt::SequencePooling::Max;
  expectCounts(k, max ? 3 : 2, 1);
  const auto [B, L, D] = sequenceShape(em, k.outputs[0], "dx");
  f32Matrix(em, k.inputs[0], B, D, "dy");
  if (max && sequenceShape(em, k.inputs[2], "input").L != L)
    throw CodegenError("the forward input must have dx's shape");
  const int64_t V = max ? vectorWidth(em, D, {k.inputs[0], k.inputs[2], k.outputs[0]})
                        : vectorWidth(em, D, {k.inputs[0], k.outputs[0]});
  Args args;
  const std::string dy = args.buffer(k.inputs[0], "const float");
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string x = max ? args.buffer(k.inputs[2], "const float") : "";
  const std::string dx = args.buffer(k.outputs[0], "float");
  const int64_t DV = D / V;
  std::string value; // dx[t] at position l < len
  switch (mode) {
  case rt::SequencePooling::Sum:
    value = "g[t]";
    break;
  case rt::SequencePooling::Mean:
    value = "g[t] / (float)len";
    break;
  case rt::SequencePooling::First:
    value = "l == 0 ? g[t] : 0.0f";
    break;
  case rt::SequencePooling::Max:
    value = "l == arg[t] ? g[t] : 0.0f";
    break;
  }
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// sequence_pool_grad (" << rt::enumName(mode) << ") to " << B << " x " << L << " x " << D
    << ": one thread per " << V << " columns of a sequence, zeros past its length.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  " << strideLoop(lit(B * DV)) << " {\n"
    << "    const emb_i64 b = i / " << lit(DV) << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
    << clampedLength(offsets, L)
    << "    " << load(V, "g", dy + " + b * " + lit(D) + " + c") << "\n";
  if (max)
    t << "    const float *xb = " << x << " + b * " << lit(L * D) << " + c;\n"
      << "    emb_i64 arg[" << V << "] = {0};\n"
      << "    for (emb_i64 l = 1; l < len; ++l) {\n"
      << "      " << load(V, "v", "xb + l * " + lit(D)) << "\n"
      << "      for (int t = 0; t < " << V << "; ++t)\n"
      << "        if (v[t] > xb[arg[t] * " << lit(D) << " + t]) arg[t] = l;\n"
      << "    }\n";
  t << "    float *dxb = " << dx << " + b * " << lit(L * D) << " + c;\n"
    << "    for (emb_i64 l = 0; l < " << lit(L) << "; ++l) {\n"
    << "      float o[" << V << "];\n"
    << "      for (int t = 0; t < " << V << "; ++t) o[t] = l < len ? (" << value << ") : 0.0f;\n"
    << "      " << store(V, "dxb + l * " + lit(D), "o") << "\n"
    << "    }\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, gridFor(B * DV, kBlock), kBlock));
}

// next_token_targets: ids, offsets -> B x L (the id at l + 1 as a float, -1
// past n_b - 1), one thread per position.
void lowerNextTokenTargets(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const rt::Buffer &targets = f32Matrix(em, k.outputs[0], -1, -1, "targets");
  const int64_t B = targets.shape[0], L = targets.shape[1];
  expectOffsets(em, k.inputs[1], B);
  appendHelpers(em);
  const int lengthCode = em.errorCode("a sequence of the next-token targets longer than its "
                                      "max_len " + std::to_string(L) +
                                      " or outside its ids (the value is the sequence)");
  Args args;
  const rt::Buffer &idsBuf = em.buffer(k.inputs[0]);
  const std::string ids = args.buffer(k.inputs[0], "const emb_i64");
  const std::string n = args.count(idsBuf, k.inputs[0], numel(idsBuf));
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string y = args.buffer(k.outputs[0], "float");
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// next_token_targets: " << B << " x " << L << ", a thread per position.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  const emb_i64 n = " << n << ";\n"
    << "  " << strideLoop(lit(B * L)) << " {\n"
    << "    const emb_i64 b = i / " << lit(L) << ", l = i % " << lit(L) << ";\n"
    << "    const emb_i64 lo = " << offsets << "[b], len = " << offsets << "[b + 1] - lo;\n"
    << "    float v = -1.0f;\n"
    << "    if (len < 0 || len > " << lit(L) << " || lo < 0 || lo + len > n) {\n"
    << "      if (l == 0) emb_set_error(a.step, " << lengthCode << ", b);\n"
    << "    } else if (l + 1 < len) {\n"
    << "      v = (float)" << ids << "[lo + l + 1];\n"
    << "    }\n"
    << "    " << y << "[i] = v;\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, gridFor(B * L, kBlock), kBlock));
}

// select_targets: x (B x L x D), targets (B x L) -> rows (B x P x D), B x P.
// A thread per (b, p, column vector) finds l_p by walking the row's targets
// (the warp's threads read the same row: broadcast loads).
void lowerSelectTargets(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 2);
  const auto [B, L, D] = sequenceShape(em, k.inputs[0], "input");
  const auto [B2, P, D2] = sequenceShape(em, k.outputs[0], "rows");
  // A batch run at its own length (dynamic padding) keeps max_len's P.
  const rt::Buffer &xb = em.buffer(k.inputs[0]);
  if (B2 != B || D2 != D || P > (xb.paddedLength > 0 ? xb.paddedLength : L))
    throw CodegenError("select_targets rows must be B x P x D with P <= max_len");
  f32Matrix(em, k.inputs[1], B, L, "targets");
  f32Matrix(em, k.outputs[1], B, P, "selected");
  const int64_t V = vectorWidth(em, D, {k.inputs[0], k.outputs[0]});
  appendHelpers(em);
  const int overCode = em.errorCode("a sequence with more than " + std::to_string(P) +
                                    " targets, the most select_targets keeps (the value is the "
                                    "sequence)");
  Args args;
  const std::string x = args.buffer(k.inputs[0], "const float");
  const std::string tg = args.buffer(k.inputs[1], "const float");
  const std::string rows = args.buffer(k.outputs[0], "float");
  const std::string sel = args.buffer(k.outputs[1], "float");
  const int64_t DV = D / V;
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// select_targets: " << B << " x " << L << " x " << D << " -> " << P
    << " rows a sequence, " << V << " columns a thread.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  " << strideLoop(lit(B * P * DV)) << " {\n"
    << "    const emb_i64 b = i / " << lit(P * DV) << ", p = (i / " << lit(DV) << ") % " << lit(P)
    << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
    << "    const float *tb = " << tg << " + b * " << lit(L) << ";\n"
    << "    emb_i64 seen = 0, at = -1;\n"
    << "    for (emb_i64 l = 0; l < " << lit(L) << "; ++l)\n"
    << "      if (tb[l] != -1.0f) {\n"
    << "        if (seen == p) at = l;\n"
    << "        ++seen;\n"
    << "      }\n"
    << "    if (p == 0 && c == 0 && seen > " << lit(P) << ") emb_set_error(a.step, " << overCode
    << ", b);\n"
    << "    float v[" << V << "] = {0.0f};\n"
    << "    if (at >= 0) {\n"
    << "      " << load(V, "r", x + " + (b * " + lit(L) + " + at) * " + lit(D) + " + c") << "\n"
    << "      for (int q = 0; q < " << V << "; ++q) v[q] = r[q];\n"
    << "    }\n"
    << "    " << store(V, rows + " + (b * " + lit(P) + " + p) * " + lit(D) + " + c", "v") << "\n"
    << "    if (c == 0) " << sel << "[b * " << lit(P) << " + p] = at >= 0 ? tb[at] : -1.0f;\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, gridFor(B * P * DV, kBlock), kBlock));
}

// select_targets_grad: dy (B x P x D), targets (B x L) -> dx (B x L x D). A
// thread per (b, l, column vector): its target's rank among the row's.
void lowerSelectTargetsGrad(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 1);
  const auto [B, L, D] = sequenceShape(em, k.outputs[0], "dx");
  const auto [B2, P, D2] = sequenceShape(em, k.inputs[0], "dy");
  const rt::Buffer &dxb = em.buffer(k.outputs[0]);
  if (B2 != B || D2 != D || P > (dxb.paddedLength > 0 ? dxb.paddedLength : L))
    throw CodegenError("select_targets_grad dy must be B x P x D with P <= max_len");
  f32Matrix(em, k.inputs[1], B, L, "targets");
  const int64_t V = vectorWidth(em, D, {k.inputs[0], k.outputs[0]});
  appendHelpers(em);
  Args args;
  const std::string dy = args.buffer(k.inputs[0], "const float");
  const std::string tg = args.buffer(k.inputs[1], "const float");
  const std::string dx = args.buffer(k.outputs[0], "float");
  const int64_t DV = D / V;
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// select_targets_grad: " << P << " rows a sequence back to " << B << " x " << L << " x "
    << D << ", " << V << " columns a thread.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  " << strideLoop(lit(B * L * DV)) << " {\n"
    << "    const emb_i64 b = i / " << lit(L * DV) << ", l = (i / " << lit(DV) << ") % " << lit(L)
    << ", c = (i % " << lit(DV) << ") * " << V << ";\n"
    << "    const float *tb = " << tg << " + b * " << lit(L) << ";\n"
    << "    float v[" << V << "] = {0.0f};\n"
    << "    if (tb[l] != -1.0f) {\n"
    << "      emb_i64 p = 0;\n"
    << "      for (emb_i64 j = 0; j < l; ++j) p += tb[j] != -1.0f ? 1 : 0;\n"
    << "      if (p < " << lit(P) << ") {\n"
    << "        " << load(V, "g", dy + " + (b * " + lit(P) + " + p) * " + lit(D) + " + c") << "\n"
    << "        for (int q = 0; q < " << V << "; ++q) v[q] = g[q];\n"
    << "      }\n"
    << "    }\n"
    << "    " << store(V, dx + " + (b * " + lit(L) + " + l) * " + lit(D) + " + c", "v") << "\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, gridFor(B * L * DV, kBlock), kBlock));
}

// row_ids: 0 .. rows - 1, a thread per id.
void lowerRowIds(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 0, 1);
  const int64_t rows = numel(em.buffer(k.outputs[0]));
  Args args;
  const std::string ids = args.buffer(k.outputs[0], "emb_i64");
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// row_ids: 0 .. " << rows - 1 << ".\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  " << strideLoop(lit(rows)) << " " << ids << "[i] = i;\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(entry, args.list, gridFor(rows, kBlock), kBlock));
}

} // namespace

EMBC_CUDA_LOWERING(RowIds, lowerRowIds)
EMBC_CUDA_LOWERING(SelectTargets, lowerSelectTargets)
EMBC_CUDA_LOWERING(SelectTargetsGrad, lowerSelectTargetsGrad)
EMBC_CUDA_LOWERING(NextTokenTargets, lowerNextTokenTargets)
EMBC_CUDA_LOWERING(SequenceLookup, lowerSequenceLookup)
EMBC_CUDA_LOWERING(SequenceLookupGrad, lowerSequenceLookupGrad)
EMBC_CUDA_LOWERING(Positions, lowerPositions)
EMBC_CUDA_LOWERING(PositionsGrad, lowerPositionsGrad)
EMBC_CUDA_LOWERING(SequencePool, lowerSequencePool)
EMBC_CUDA_LOWERING(SequencePoolGrad, lowerSequencePoolGrad)
