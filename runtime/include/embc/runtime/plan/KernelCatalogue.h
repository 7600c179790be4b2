//===- KernelCatalogue.h - every plan kernel, declared once -----*- C++ -*-===//
//
// The kernels a plan's `step` and `update` may hold: each one's name, where
// it may run (step or update), how many operands and results it takes and
// its attributes with their types (enumerations from Enums.h, indices into
// the plan's tables, params, packs and batches, nested objects). The plan
// reader validates every kernel against its entry (unknown op, unknown or
// mistyped attribute, an index out of range, a word outside its set), so a
// backend binds only kernels that passed; the CPU backend's binding table
// and the CUDA lowering table are keyed by KernelOp, and a unit test walks
// the catalogue to check that each has every kernel it should.
//
// The declaration is KernelCatalogue.def, one line a kernel, expanded here
// into KernelOp and in KernelCatalogue.cpp into the table; docs/
// plan-format.md's kernel tables are checked against it by
// test/unit/runtime/plan.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_PLAN_KERNELCATALOGUE_H
#define EMBC_RUNTIME_PLAN_KERNELCATALOGUE_H

#include "embc/runtime/plan/Enums.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace embc::runtime {

struct Plan;
struct Kernel;

/// One enumerator per catalogue entry, in catalogue order
/// (KernelCatalogue.def declares each kernel once).
enum class KernelOp : uint8_t {
#define EMBC_KERNEL(op, ...) op,
#include "embc/runtime/plan/KernelCatalogue.def"
#undef EMBC_KERNEL
};

/// Where a kernel may appear.
enum class KernelPhase : uint8_t { Step, Update, Either };

/// The type of an attribute's JSON value.
enum class AttrType : uint8_t {
  Int,        ///< an integer
  Count,      ///< an integer >= 0
  Real,       ///< a finite number
  Bool,       ///< true or false
  Word,       ///< one spelling of an enumeration (AttrSpec::words)
  IntList,    ///< an array of integers
  BoolList,   ///< an array of booleans
  Table,      ///< an index into the plan's `tables`
  Batch,      ///< an index into `table_batches`
  Param,      ///< an index into `params`
  Pack,       ///< an index into `packs`
  TableList,  ///< an array of indices into `tables`
  Object,     ///< an object with the fields AttrSpec::fields
  ObjectList, ///< an array of such objects
};

/// Whether an attribute must be present.
enum class AttrNeed : uint8_t {
  Required,
  Optional, ///< absent reads as false, 0 or the kernel's documented default
  OneOf,    ///< exactly one of the kernel's OneOf attributes is present
};

/// The spellings an AttrType::Word attribute accepts.
struct WordSet {
  std::string_view what;
  const std::string_view *names = nullptr;
  size_t count = 0;
};
template <class E> WordSet wordsOf() {
  return {EnumTraits<E>::what, EnumTraits<E>::names, enumCount<E>()};
}

struct AttrSpec {
  std::string_view name;
  AttrType type;
  AttrNeed need = AttrNeed::Required;
  WordSet words = {};                ///< Word only
  std::vector<AttrSpec> fields = {}; ///< Object and ObjectList only
};

/// How many operands (or results): at least `min`, at most `max`.
struct Arity {
  size_t min, max;
};
inline constexpr size_t kAnyCount = size_t(-1);

struct KernelSpec {
  KernelOp op;
  std::string_view name; ///< the plan's spelling (Kernel::op)
  KernelPhase phase;
  Arity inputs, outputs;
  std::vector<AttrSpec> attrs;
  /// The CUDA codegen lowers it (false: embc --cuda refuses the plan).
  bool cuda = true;
};

/// The catalogue, indexed by KernelOp.
const std::vector<KernelSpec> &kernelCatalogue();
inline const KernelSpec &kernelSpec(KernelOp op) { return kernelCatalogue()[size_t(op)]; }
/// The plan's spelling of `op` (Kernel::op).
inline std::string kernelName(KernelOp op) { return std::string(kernelSpec(op).name); }
/// The entry named `name`, or nullptr.
const KernelSpec *findKernel(std::string_view name);

/// What is wrong with `kernel` against its catalogue entry, or nothing:
/// unknown op, wrong phase (`update` says whether it is an update kernel),
/// operand or result counts outside the entry's, a missing, unknown or
/// mistyped attribute, an index out of range of `plan`, a word outside its
/// set. The message starts with the JSON path below `at` of the offending
/// value ("step[3].attrs.pooling: ...").
std::optional<std::string> checkKernel(const Kernel &kernel, const Plan &plan, bool update,
                                       std::string_view at);

/// What is wrong with the dtypes or shapes of `kernel`'s operands (a `op`
/// kernel whose counts and attributes passed checkKernel), or nothing; for
/// the kernels whose backends index operands by another operand's shape.
/// KernelOperands.cpp; checkKernel calls it.
std::optional<std::string> checkKernelOperands(KernelOp op, const Kernel &kernel, const Plan &plan,
                                               std::string_view at);

/// Bytes `kernel` moves per launch (Kernel::bytes), for the report: each
/// buffer it reads or writes once, except that a table (or its optimizer
/// state) counts only the rows a batch can touch, since kernels never sweep
/// a whole table. A lookup reads one table row per id (the table is an
/// attribute, not an operand); an update touches each distinct row once, at
/// most min(ids, rows) of each source's table. KernelBytes.cpp.
int64_t estimateKernelBytes(const Plan &plan, const Kernel &kernel);

/// A `fused_lookup` member and where its operands start in the kernel's
/// inputs: ids at `ids`, then offsets and, when weighted, weights.
struct FusedLookupMember {
  size_t index; ///< in attrs["members"]
  size_t ids;   ///< in Kernel::inputs
};
/// The members of a `fused_lookup` kernel whose ids are among its inputs,
/// in order (none for another kernel). KernelCatalogue.cpp.
std::vector<FusedLookupMember> fusedLookupMembers(const Kernel &kernel);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_PLAN_KERNELCATALOGUE_H
