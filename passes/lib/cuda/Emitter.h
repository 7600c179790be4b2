//===- Emitter.h - what CUDA lowerings write into ---------------*- C++ -*-===//
//
// A lowering turns one plan kernel (op, operands, attrs) into launches and
// appends the kernels it needs to the program's source. Conventions for the
// generated code (docs/cuda.md):
//  - every kernel is `extern "C" __global__ void NAME(EmbArgs a)` with
//    NAME = CudaEmitter::entryName(...), operands in a.p[i] in the order of
//    the launch's args;
//  - constants (dims, counts, modes) are baked into the source as literals;
//    values that change per step come from *a.step (EmbStep);
//  - grids are sized for the capacity of dynamic buffers; a kernel reads the
//    filled length through a `length` arg and returns early past it, so the
//    launch is the same every step (CUDA graphs);
//  - a data error (an id outside its table) sets a.step->error to a code
//    from errorCode() with atomicCAS (first error wins) and a.step->errorValue,
//    and skips the bad element; the runtime raises it after the step;
//  - arithmetic is float32 in the order the CPU kernels use wherever the
//    result must be bit-identical (embedding backward + update, lookups),
//    and deterministic everywhere (no float atomics).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_CUDA_EMITTER_H
#define EMBC_PASSES_CUDA_EMITTER_H

#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::codegen {

/// The plan types every lowering reads and writes.
namespace rt = embc::runtime;

/// A kernel the codegen cannot lower; the driver adds where it is.
class CodegenError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class CudaEmitter {
public:
  explicit CudaEmitter(const runtime::Plan &plan) : plan_(&plan) {}

  const runtime::Plan &plan() const { return *plan_; }
  const runtime::Buffer &buffer(int32_t id) const { return plan_->buffers.at(size_t(id)); }
  /// Lowers the next kernels against `plan` (the driver's length variants:
  /// the same plan with shorter sequence buffers), into the same program.
  void setPlan(const runtime::Plan &plan) { plan_ = &plan; }

  /// A fresh, unique kernel name: "emb_<n>_<hint>".
  std::string entryName(const std::string &hint);
  /// Appends source text (a kernel) to the program.
  void append(const std::string &code) { source_ << code << "\n"; }
  /// Appends `code` the first time `key` is seen (device helpers shared by
  /// several kernels).
  void appendOnce(const std::string &key, const std::string &code);
  /// The resident blocks per SM that kernel `entry`'s launch bounds ask for
  /// (the driver's default: 1024 / block, i.e. 64 registers a thread). A
  /// kernel that needs more registers than that to hold its working set
  /// without spilling asks for fewer.
  void setMinBlocks(const std::string &entry, int64_t blocks) { minBlocks_[entry] = blocks; }
  int64_t minBlocks(const std::string &entry, int64_t block) const {
    auto it = minBlocks_.find(entry);
    return it != minBlocks_.end() ? it->second : std::max<int64_t>(1, 1024 / block);
  }

  /// Reserves `bytes` of scratch for the plan kernel being lowered (aligned
  /// to 256) and returns its offset. Each plan kernel starts again at 0: the
  /// launches of one kernel never overlap another's.
  int64_t scratch(int64_t bytes);
  /// The code of a device error message (1-based; the same message gets the
  /// same code).
  int errorCode(const std::string &message);
  /// The code of the finite check of an update (CudaProgram::nonFiniteErrors):
  /// `message` has "{}" where the value set with it (a row, an element) goes.
  int nonFiniteCode(const std::string &message);

  /// Arg helpers.
  static runtime::CudaArg buf(int32_t buffer) {
    runtime::CudaArg a;
    a.buffer = buffer;
    return a;
  }
  static runtime::CudaArg scratchAt(int64_t offset) {
    runtime::CudaArg a;
    a.scratch = offset;
    return a;
  }
  static runtime::CudaArg lengthOf(int32_t buffer) {
    runtime::CudaArg a;
    a.length = buffer;
    return a;
  }
  /// A launch run by the backend rather than generated code (`library`,
  /// `collective`): `entry` names it, `params` say how.
  static runtime::CudaLaunch namedLaunch(const char *kind, const std::string &entry,
                                         std::vector<runtime::CudaArg> args,
                                         nlohmann::json params) {
    runtime::CudaLaunch l;
    l.kind = kind;
    l.entry = entry;
    l.args = std::move(args);
    l.params = std::move(params);
    return l;
  }
  /// A `kernel` launch of `entry`: grid.x = gridX (>= 1), block threads.
  static runtime::CudaLaunch kernelLaunch(const std::string &entry,
                                          std::vector<runtime::CudaArg> args, int64_t gridX,
                                          int64_t block, int64_t shared = 0);

  // Used by the driver.
  void beginKernel() { scratchUsed_ = 0; }
  int64_t scratchBytes() const { return scratchMax_; }
  std::string source() const { return source_.str(); }
  const std::vector<std::string> &errors() const { return errors_; }
  const std::vector<int64_t> &nonFiniteErrors() const { return nonFinite_; }

private:
  const runtime::Plan *plan_;
  std::ostringstream source_;
  std::set<std::string> once_;
  std::map<std::string, int64_t> minBlocks_;
  std::vector<std::string> errors_;
  std::vector<int64_t> nonFinite_;
  int next_ = 0;
  int64_t scratchUsed_ = 0, scratchMax_ = 0;
};

/// Lowers one plan kernel into `out` (appending launches); throws
/// CodegenError when it cannot.
using Lowering = void (*)(CudaEmitter &em, const runtime::Kernel &kernel,
                          runtime::CudaKernel &out);
/// The lowering of each kernel of the catalogue (runtime/include/embc/
/// runtime/plan/KernelCatalogue.h), by KernelOp.
class LoweringTable {
public:
  /// Registers `lowering` for `op`; a second lowering of one op is a bug.
  void add(runtime::KernelOp op, Lowering lowering);
  /// The lowering of `op`, or nullptr.
  Lowering find(runtime::KernelOp op) const { return byOp_[size_t(op)]; }

private:
  std::vector<Lowering> byOp_ = std::vector<Lowering>(runtime::kernelCatalogue().size());
};

/// Every lowering, registered once: one per kernel of KernelCatalogue.def.
const LoweringTable &cudaLowerings();

/// The lowering of kernel `Op`. cudaLowerings() asks for the one of every
/// kernel the catalogue declares, and each is defined beside its lowering
/// by EMBC_CUDA_LOWERING, in any file of this folder: a kernel without one
/// fails the link (undefined loweringOf<Op>), not a user's compile. Kernels
/// the catalogue marks cuda = false have a null one (CudaCodegen.cpp).
template <runtime::KernelOp Op> Lowering loweringOf();
// Each kernel's specialization, declared before any use (as the language
// requires of explicit specializations); defined by EMBC_CUDA_LOWERING.
#define EMBC_KERNEL(op, ...) template <> Lowering loweringOf<runtime::KernelOp::op>();
#include "embc/runtime/plan/KernelCatalogue.def"
#undef EMBC_KERNEL

/// Defines loweringOf<KernelOp::OP>() as `FN` (a function of this file).
#define EMBC_CUDA_LOWERING(OP, FN)                                                           \
  namespace embc::codegen {                                                                  \
  template <> Lowering loweringOf<runtime::KernelOp::OP>() { return FN; }                    \
  }


/// Device helpers every program starts with (Prelude.cpp): the kernel ABI
/// (EmbArgs, EmbStep), `emb_i64`, bf16/fp16 <-> f32 with round-to-nearest-
/// even as runtime/include/embc/runtime/cpu/HalfFloat.h, warp and block
/// sums, and emb_set_error().
const char *cudaPrelude();

/// Integer attribute helpers that throw CodegenError naming the attribute.
int64_t intAttr(const runtime::Kernel &kernel, const char *name);
bool boolAttr(const runtime::Kernel &kernel, const char *name, bool absent = false);
std::string stringAttr(const runtime::Kernel &kernel, const char *name);
/// The enumerator of E spelled `word` (plan/Enums.h); a CodegenError naming
/// `where` and the choices otherwise.
template <class E> E wordOf(const std::string &word, const std::string &where) {
  if (std::optional<E> e = runtime::parseEnum<E>(word))
    return *e;
  throw CodegenError(where + " has unknown " + std::string(runtime::EnumTraits<E>::what) + " '" +
                     word + "' (expected " + runtime::enumChoices<E>() + ")");
}
/// A float literal that round-trips exactly ("1.00000001e-08f").
std::string floatLiteral(double value);
/// A double literal that round-trips exactly ("0.10000000000000001").
std::string doubleLiteral(double value);

// Operand checks shared by the lowerings (LoweringSupport.cpp); each throws
// CodegenError saying what is wrong with which operand.

/// Elements of a buffer (its capacity for a dynamic one, as the CPU uses).
int64_t numel(const runtime::Buffer &buffer);
/// The buffer `id`, which must be f32; `what` names it in the error.
const runtime::Buffer &f32Buffer(const CudaEmitter &em, int32_t id, const std::string &what);
/// The f32 matrix `id`, which must be rows x cols (either -1: any) and non-empty.
/// An f32 buffer read as rows x columns: rank 2 or more, its rows every
/// dimension but the last (the batch, or B x L positions of a sequence),
/// each `rows` and `cols` when >= 0. Dense layers and sums run on rows.
struct RowMatrix {
  int64_t rows = 0, cols = 0;
};
RowMatrix f32Rows(const CudaEmitter &em, int32_t id, int64_t rows, int64_t cols,
                  const std::string &what);
const runtime::Buffer &f32Matrix(const CudaEmitter &em, int32_t id, int64_t rows, int64_t cols,
                                 const std::string &what);
/// The buffer `id`, which must be f32 with n elements.
const runtime::Buffer &expectNumel(const CudaEmitter &em, int32_t id, int64_t n,
                                   const std::string &what);
/// Buffer `id` is the B + 1 i64 offsets of B bags or sequences.
const runtime::Buffer &expectOffsets(const CudaEmitter &em, int32_t id, int64_t B);
/// Fails unless `kernel` has exactly `ins` inputs and `outs` outputs.
void expectCounts(const runtime::Kernel &kernel, size_t ins, size_t outs);
/// Every input, then every output of `kernel`, as buffer args: the operand
/// order most generated kernels take.
std::vector<runtime::CudaArg> operandArgs(const runtime::Kernel &kernel);
/// The largest power of two up to 16 that divides an arg's address in every
/// micro-batch slot (scratch is 256-aligned).
int64_t alignmentOf(const CudaEmitter &em, const runtime::CudaArg &arg);
/// Whether an arg's address is 16-byte aligned in every micro-batch slot,
/// so float4 accesses are legal.
bool aligned16(const CudaEmitter &em, const runtime::CudaArg &arg);
/// The GEMM operands' dtype a kernel's optional `compute` attribute asks
/// for: F32 (absent or fp32), BF16 or F16.
runtime::DType computeTypeOf(const runtime::Kernel &kernel);
/// Blocks for `count` items of `block` threads with a grid-stride loop
/// (capped to fill an H200 twice over).
int64_t gridFor(int64_t count, int64_t block);

} // namespace embc::codegen

#endif // EMBC_PASSES_CUDA_EMITTER_H
