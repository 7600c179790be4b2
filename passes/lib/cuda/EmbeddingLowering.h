//===- EmbeddingLowering.h - shared parts of the embedding lowerings -*- C++ -*-===//
//
// Private to the EmbeddingLowering*.cpp files (hash/lookup/gather/
// fused_lookup, lookup_grad/accumulate_rows/coalesce_rows, update_table/
// embedding_update). Holds what several of them generate:
//
//  - the row layout: how the D values of a row are spread over the lanes of
//    a group (V consecutive values per lane access, so a row moves as 16-,
//    8- or 4-byte vectors; L lanes per row; CH chunks when D > L V);
//  - reads of a table row in its storage (f32, f16, bf16, int8, int4 with
//    fp16 scale/bias), dequantised exactly as runtime/lib/cpu/
//    QuantizedKernels.cpp does;
//  - the optimizer row step (OptimizerRow.h's tableRowStep) and the
//    stochastic requantisation of QuantizedKernels.cpp, for a row held in
//    registers by one warp;
//  - small text helpers (literals, the argument list of a launch).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_CUDA_EMBEDDINGLOWERING_H
#define EMBC_PASSES_CUDA_EMBEDDINGLOWERING_H

#include "Emitter.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace embc::codegen::emb {

/// "$NAME" placeholders of `text` replaced by their values (longest names
/// first, so $D does not eat $DS).
std::string subst(std::string text, const std::map<std::string, std::string> &values);
std::string lit(int64_t v);   ///< "123LL"
std::string ulit(uint64_t v); ///< "0x...ULL"

/// How one row of D values is spread over a group of L lanes: lane l of the
/// group handles vectors vi = c L + l (c < CH, vi < NV) of V consecutive
/// values, i.e. values j = vi V .. vi V + V - 1. Lanes own whole vectors,
/// so loads and stores are aligned 4 V-byte (f32) accesses: rows of D % 4
/// == 0 values move as 16-byte vectors, and the L lanes of a group touch
/// consecutive addresses (coalesced).
struct Layout {
  int64_t D = 0, V = 1, L = 32, NV = 0, CH = 1;
  /// Values per lane (register array length).
  int64_t K() const { return CH * V; }
};
/// Sub-warp groups: L = the power of two >= D / V, at most 32, so a 16-wide
/// row uses 4 lanes and a warp serves 8 rows at once. V is the widest of 4,
/// 2, 1 that divides D and is at most maxV. Kernels that shuffle within a
/// group declare its lanes with groupLanes().
Layout groupLayout(int64_t D, int64_t maxV = 4);
/// `lane` (this thread's lane in its group of l.L) and `emb_gm` (the mask of
/// the group's lanes, for the group's shuffles with width l.L), declared at
/// the start of a kernel whose thread x belongs to group x / l.L.
std::string groupLanes(const Layout &l, const std::string &thread = "threadIdx.x");
/// log2 of l.L (a group's index is the thread's >> this).
int groupShift(const Layout &l);

/// A row-addressed operand of a kernel (row r at its base + r D values)
/// and the bits of one value (32 f32, 16 f16/bf16, 8 int8, 4 int4).
struct RowOperand {
  rt::CudaArg arg;
  int bits = 32;
};
/// The widest vector (4, 2 or 1 values per access) the operands allow: V
/// values must divide D (so every row keeps the base's alignment) and V
/// values' bytes must divide each operand's base alignment. A GPU faults on
/// a misaligned vector access (the emulation reports one, emb_vload).
int64_t vectorWidthFor(const CudaEmitter &em, int64_t D, const std::vector<RowOperand> &operands);


/// `#pragma unroll` loop header over a lane's K values: declares t (0..K-1),
/// j (the value index in the row) and runs BODY when the vector exists.
/// `lane` is the lane's index in its group.
std::string forValues(const Layout &l, const std::string &body);

/// The storage of a table or batch and its element type in code.
struct Storage {
  rt::Storage kind = rt::Storage::F32;
  /// The plan's word for `kind`, for messages and generated comments.
  std::string name() const { return rt::enumString(kind); }
  bool rowwise() const { return rt::isRowwise(kind); }
  bool quantised() const { return kind != rt::Storage::F32; }
  /// C type of the values buffer's elements (float, emb_u16, emb_u8).
  std::string elemType() const;
};
Storage storageOf(rt::Storage kind);
/// The bits of one value of a storage (32, 16, 8 or 4).
int storageBits(const Storage &s);

/// Code that loads the lane's values of row `row` of a table (pointer
/// expression `table` of elemType, `qp` the emb_u16 qparams or "0") into
/// `float OUT[K]`, dequantised as the CPU does. Values of missing vectors
/// are left unset.
std::string loadRow(const Storage &s, const Layout &l, const std::string &table,
                    const std::string &qp, const std::string &row, const std::string &out);
/// Code storing `float IN[K]` into an f32 row pointer `dst` (V-wide stores).
std::string storeF32(const Layout &l, const std::string &dst, const std::string &in);
/// Code loading an f32 row pointer `src` into `float OUT[K]`.
std::string loadF32(const Layout &l, const std::string &src, const std::string &out);

/// Numbers the runs of equal keys among `count` sorted i64 keys (scratch
/// offset `keys`, the padding key `pad` sorting last): a kernel sets
/// flags[i] = 1 where a run starts (int scratch `flags`), then
/// `exclusive_scan` gives runOf[i], the runs started before i (int scratch
/// `runOf`), and *total, the number of runs (i64 scratch `total`). Used by
/// coalesce_rows and embedding_update.
void emitRunNumbering(CudaEmitter &em, rt::CudaKernel &out, const std::string &hint,
                      int64_t count, const std::string &pad, int64_t keys, int64_t flags,
                      int64_t runOf, int64_t total);

/// The error codes of a sequence lookup of `table` with sequences of at
/// most L tokens: an id outside the table, a sequence too long or outside
/// its ids. Shared by the f32 and the quantised lowerings.
struct SequenceLookupCodes {
  int id = 0, length = 0;
};
SequenceLookupCodes sequenceLookupCodes(CudaEmitter &em, const runtime::Table &table, int64_t L);

/// sequence_lookup of a table in quantised storage (EmbeddingLookupLowering.cpp:
/// gather's dequantising row loads); SequenceLowering.cpp hands it over.
void lowerQuantizedSequenceLookup(CudaEmitter &em, const runtime::Kernel &k,
                                  runtime::CudaKernel &out);

/// The device helpers the embedding kernels share (xxh64 of an id, the
/// counter-based random words, stochastic rounding, row-wise parameters,
/// vector structs); appended once per program.
void appendHelpers(CudaEmitter &em);

/// A launch's operand list: add() returns the index the kernel reads as
/// a.p[index].
class Args {
public:
  /// The same operand twice (a table read by two members, one length
  /// cell) is passed once.
  int add(const rt::CudaArg &arg) {
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i].buffer == arg.buffer && list[i].scratch == arg.scratch &&
          list[i].length == arg.length)
        return int(i);
    list.push_back(arg);
    return int(list.size()) - 1;
  }
  /// "((T *)a.p[i])" for a new buffer arg.
  std::string buffer(int32_t buf, const std::string &type) {
    return "((" + type + " *)a.p[" + std::to_string(add(CudaEmitter::buf(buf))) + "])";
  }
  std::string scratch(int64_t offset, const std::string &type) {
    return "((" + type + " *)a.p[" + std::to_string(add(CudaEmitter::scratchAt(offset))) + "])";
  }
  /// The filled length of `buf`: its device length cell when it is dynamic,
  /// else the static element count of its leading dimension (`numel` / row).
  std::string count(const rt::Buffer &b, int32_t buf, int64_t staticCount) {
    if (!b.dynamic)
      return lit(staticCount);
    return "(*(emb_i64 *)a.p[" + std::to_string(add(CudaEmitter::lengthOf(buf))) + "])";
  }
  /// "(emb_i64 *)a.p[i]": the length cell itself, for writing.
  std::string lengthCell(int32_t buf) {
    return "((emb_i64 *)a.p[" + std::to_string(add(CudaEmitter::lengthOf(buf))) + "])";
  }
  std::vector<rt::CudaArg> list;
};

/// Elements of a buffer; its leading dimension.
int64_t leading(const rt::Buffer &b);

/// Number of bits needed to write x (0 for 0).
int bitWidth(uint64_t x);

/// A table by the kernel's "table" attribute, checked.
const rt::Table &tableOf(const rt::Plan &plan, int64_t index);

/// What update_table / embedding_update / coalesce_rows work on: a lone
/// table or a table batch (one row space, members at their row offsets).
struct Target {
  std::string name;
  int64_t rows = 0, dim = 0;
  int32_t buffer = -1, qparams = -1, gradRows = -1, gradValues = -1;
  std::vector<int32_t> state;
  rt::Optimizer optimizer;
  Storage storage;
  /// Per member (a lone table: one at row 0): first row, rows, name and the
  /// key of its stochastic-rounding draws (data::hashName(name)).
  struct Segment {
    int64_t firstRow = 0, rows = 0;
    std::string name;
    uint64_t tableKey = 0;
  };
  std::vector<Segment> segments;
};
/// The "table" or "batch" of a kernel.
Target targetOf(const rt::Plan &plan, const rt::Kernel &k);

/// FNV-1a + mix64 of a name, as runtime/include/embc/runtime/data/CounterRandom.h.
uint64_t hashName(const std::string &name);

/// The optimizer of a table update, resolved at compile time as
/// OptimizerRow.h's makeHyper/applyGlobalDecay do. Throws CodegenError for
/// what the CPU refuses (unknown kind, global decay but for sgd without
/// momentum and adamw, global decay on a quantised table). The plan's
/// optimizer (kind and hyper-parameters) as it is, with what follows from it.
struct OptSpec : runtime::Optimizer {
  bool coupled = false, decoupled = false;
  bool globalDecay = false; ///< a decay pass over every row runs first
  int states = 0;
  bool adamFamily() const {
    return kind == runtime::OptimizerKind::Adam || kind == runtime::OptimizerKind::AdamW ||
           kind == runtime::OptimizerKind::Lamb;
  }
};
OptSpec optSpec(const Target &t);

/// Code declaring the step's f32 hyper-parameters (LR, GS, DS, IB1, IB2)
/// from a.step and `gradScale` (a double expression), as makeHyper.
std::string hyperCode(const OptSpec &o, const std::string &gradScale);

/// The body of a group-per-row update: the row `r` (emb_i64, in range),
/// its summed gradient in `float g[K]` (the l.L lanes of a group, with
/// `lane` and `emb_gm` declared by groupLanes),
/// table/state pointers named TBL, QP, S0, S1. Loads the row and its state,
/// takes tableRowStep's step and stores them; quantised rows are requantised
/// with stochastic rounding keyed (seed, member, row in member, step, j).
/// Every lane of the group must run it (it shuffles).
std::string rowUpdateCode(CudaEmitter &em, const Target &t, const OptSpec &o,
                          const Layout &l);

/// A kernel scaling every row of an f32 table by DS = 1 - lr wd (global
/// weight decay), vectorised, grid-stride; with `bailOnError` it does
/// nothing once a device error is set (embedding_update). Returns its launch.
rt::CudaLaunch globalDecayLaunch(CudaEmitter &em, const Target &t, const OptSpec &o,
                                 bool bailOnError);

// Registration of each file's ops.

/// Threads per block of the embedding kernels: 8 warps, enough to hide
/// the latency of the gathers with a few blocks per SM.
inline constexpr int64_t kBlock = 256;

} // namespace embc::codegen::emb

#endif // EMBC_PASSES_CUDA_EMBEDDINGLOWERING_H
