//===- CpuBinder.h - checked binding of plan kernels to CPU code -*- C++ -*-===//
//
// Shared by the CPU backend's binding files (CpuBackend.cpp for the plain
// catalogue, PackedBindings.cpp, FusedDenseBindings.cpp and
// FusedEmbeddingBindings.cpp for what -emb-pack-params and -emb-fuse
// produce). A bind function returns nullptr for an op it does not know.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_CPUBINDER_H
#define EMBC_RUNTIME_EXEC_CPUBINDER_H

#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/data/Data.h"
#include "embc/runtime/exec/Executor.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace embc::runtime {
namespace cpu = embc::runtime::cpu;

class CommBinder;

/// Checked view of one kernel's operands while binding it.
class Binder {
public:
  Binder(const Kernel &k, const Plan &p) : k(k), p(p) {}

  [[noreturn]] void fail(const std::string &why) const {
    throw PlanError("kernel '" + k.op + "': " + why);
  }
  void expectCounts(size_t ins, size_t outs) const {
    if (k.inputs.size() != ins || k.outputs.size() != outs)
      fail("expected " + std::to_string(ins) + " inputs and " +
           std::to_string(outs) + " outputs, got " +
           std::to_string(k.inputs.size()) + " and " +
           std::to_string(k.outputs.size()));
  }
  void expectMinInputs(size_t ins, size_t outs) const {
    if (k.inputs.size() < ins || k.outputs.size() != outs)
      fail("expected at least " + std::to_string(ins) + " inputs and " +
           std::to_string(outs) + " outputs");
  }
  const Buffer &in(size_t i) const { return p.buffers.at(k.inputs.at(i)); }
  const Buffer &out(size_t i) const { return p.buffers.at(k.outputs.at(i)); }
  int64_t dim(const Buffer &b, size_t d) const {
    if (d >= b.shape.size())
      fail("buffer '" + b.name + "' has rank " + std::to_string(b.shape.size()));
    return b.shape[d];
  }
  /// `b` read as rows x columns (rank 2 or more): its rows are every
  /// dimension but the last, the batch or a sequence batch's B x L positions.
  int64_t rows(const Buffer &b) const {
    if (b.shape.size() < 2)
      fail("buffer '" + b.name + "' has rank " + std::to_string(b.shape.size()) +
           ", expected rows x columns");
    return numel(b) / std::max<int64_t>(b.shape.back(), 1);
  }
  int64_t cols(const Buffer &b) const { return dim(b, b.shape.size() - 1); }
  /// Elements per example of `b` (its leading dimension the batch) as the
  /// compiled plan lays them out: a dynamically padded sequence buffer runs
  /// at the batch's own length but numbers random draws by max_len
  /// (Buffer::paddedLength).
  static int64_t paddedPerExample(const Buffer &b) {
    const int64_t rows = b.shape.empty() ? 1 : std::max<int64_t>(b.shape[0], 1);
    const int64_t perExample = numel(b) / rows;
    if (b.paddedLength <= 0 || b.shape.size() < 2 || b.shape[1] <= 0)
      return perExample;
    return perExample / b.shape[1] * b.paddedLength;
  }
  /// `b`'s dim 1 as compiled (see paddedPerExample).
  static int64_t paddedLength(const Buffer &b) {
    return b.paddedLength > 0 ? b.paddedLength : (b.shape.size() > 1 ? b.shape[1] : 0);
  }
  static int64_t numel(const Buffer &b) {
    int64_t n = 1;
    for (int64_t d : b.shape)
      n *= d;
    return n;
  }
  std::string str(const char *key) const {
    if (!k.attrs.contains(key) || !k.attrs[key].is_string())
      fail(std::string("missing string attribute '") + key + "'");
    return k.attrs[key].get<std::string>();
  }
  int64_t integer(const char *key) const {
    if (!k.attrs.contains(key) || !k.attrs[key].is_number_integer())
      fail(std::string("missing integer attribute '") + key + "'");
    return k.attrs[key].get<int64_t>();
  }
  double real(const char *key) const {
    if (!k.attrs.contains(key) || !k.attrs[key].is_number())
      fail(std::string("missing number attribute '") + key + "'");
    return k.attrs[key].get<double>();
  }
  bool flag(const char *key) const {
    return k.attrs.contains(key) && k.attrs[key].is_boolean() &&
           k.attrs[key].get<bool>();
  }
  const Table &table() const {
    int64_t t = integer("table");
    if (t < 0 || t >= int64_t(p.tables.size()))
      fail("table index " + std::to_string(t) + " out of range");
    return p.tables[t];
  }
  /// What a sparse update works on: the table named by "table", or the
  /// table batch named by "batch" (-emb-pack-params), which is one table of
  /// all its members' rows with one sparse gradient.
  struct SparseTarget {
    const std::string &name;
    int64_t rows, dim;
    const std::vector<int32_t> &state;
    const Optimizer &optimizer;
  };
  SparseTarget sparseTarget() const {
    if (!k.attrs.contains("batch")) {
      const Table &t = table();
      return {t.name, t.rows, t.dim, t.state, t.optimizer};
    }
    int64_t i = integer("batch");
    if (i < 0 || i >= int64_t(p.tableBatches.size()))
      fail("table batch index " + std::to_string(i) + " out of range");
    const TableBatch &t = p.tableBatches[i];
    return {t.name, t.rows, t.dim, t.state, t.optimizer};
  }
  const Param &param() const {
    int64_t i = integer("param");
    if (i < 0 || i >= int64_t(p.params.size()))
      fail("param index " + std::to_string(i) + " out of range");
    return p.params[i];
  }

  const Kernel &k;
  const Plan &p;
  /// The backend's collective state (CommBindings.h), for the comm kernels.
  CommBinder *comm = nullptr;
};

/// The word `key` of `object` (the kernel's attrs, or an object nested in
/// them) as the enum E (plan/Enums.h); `where` prefixes the message.
template <class E>
E wordIn(const Binder &b, const nlohmann::json &object, const char *key,
         const std::string &where = "") {
  std::optional<E> value;
  if (object.contains(key) && object[key].is_string())
    value = parseEnum<E>(object[key].get<std::string>());
  if (!value)
    b.fail(where + "'" + key + "' is not a " + std::string(EnumTraits<E>::what) + " (" +
           enumChoices<E>() + ")");
  return *value;
}
/// The word attribute `key` of the kernel as the enum E.
template <class E> E wordOf(const Binder &b, const char *key) {
  return wordIn<E>(b, b.k.attrs, key);
}

/// "kind" of a plain activation kernel: "none" is only for fused kernels.
inline cpu::Activation activationOf(const Binder &b) {
  cpu::Activation kind = wordOf<cpu::Activation>(b, "kind");
  if (kind == cpu::Activation::None)
    b.fail("unknown activation 'none'");
  return kind;
}

inline cpu::Pooling poolingOf(const Binder &b) { return wordOf<cpu::Pooling>(b, "pooling"); }

inline cpu::LossKind lossOf(const Binder &b) { return wordOf<cpu::LossKind>(b, "kind"); }

inline cpu::OptimizerParams optimizerOf(const Binder &, const Optimizer &o) {
  cpu::OptimizerParams params;
  params.kind = o.kind;
  params.lr = o.lr;
  params.momentum = o.momentum;
  params.beta1 = o.beta1;
  params.beta2 = o.beta2;
  params.eps = o.eps;
  params.weightDecay = o.weightDecay;
  params.globalDecay = o.weightDecayMode == WeightDecayMode::Global;
  return params;
}

/// Number of ids a (possibly dynamic) id buffer holds in this step.
inline int64_t idCount(const ExecState &s, int32_t buffer) {
  return s.buffer(buffer).dynamic ? s.length[buffer] : Binder::numel(s.buffer(buffer));
}

/// Throws when an id is outside [0, rows): never read or write outside a table.
inline void checkIds(const int64_t *ids, int64_t n, int64_t rows, const Table &t) {
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= rows)
      throw embc::runtime::data::DataError(
          "id " + std::to_string(ids[i]) + " is outside table '" + t.name +
          "' (rows 0.." + std::to_string(rows - 1) + ")");
}

/// Throws when a sequence is longer than L or its offsets leave the ids:
/// the data, not the plan, is wrong. `owner` names the ids ("table 'words'").
inline void checkSequences(const int64_t *offsets, int64_t B, int64_t L, int64_t idCount,
                           const std::string &owner) {
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = offsets[b + 1] - offsets[b];
    if (offsets[b] < 0 || n < 0 || offsets[b + 1] > idCount)
      throw data::DataError("sequence " + std::to_string(b) + " of " + owner + " has offsets [" +
                            std::to_string(offsets[b]) + ", " + std::to_string(offsets[b + 1]) +
                            ") outside its " + std::to_string(idCount) + " ids");
    if (n > L)
      throw data::DataError("sequence " + std::to_string(b) + " of " + owner + " has " +
                            std::to_string(n) + " ids, more than its max_len " +
                            std::to_string(L));
  }
}

/// A dense kernel's compute precision (-emb-quantize): attribute "compute",
/// f32 when absent (what every plan without bf16/fp16 has).
inline cpu::ComputeType computeOf(const Binder &b) {
  if (!b.k.attrs.contains("compute"))
    return cpu::ComputeType::F32;
  return wordOf<cpu::ComputeType>(b, "compute");
}

inline std::vector<int64_t> widthsOf(const Binder &b, size_t first, size_t count) {
  std::vector<int64_t> widths;
  for (size_t i = first; i < first + count; ++i)
    widths.push_back(b.dim(b.in(i), 1));
  return widths;
}


/// A CPU binding of one kernel op: returns the bound kernel, nullptr when
/// the kernel is not its case (another binding of the op takes it: a
/// quantised table's lookup, a from_output activation gradient), or throws
/// PlanError for a kernel it cannot run.
using BindFn = BoundKernel (*)(const Binder &);
struct CpuBinding {
  KernelOp op;
  BindFn bind;
};

// The bindings of each file; CpuBackend.cpp tries them in this order.
/// Kernels on tables in quantised storage (-emb-quantize): lookup, gather,
/// max-pooled lookup_grad, update_table, fused_lookup, embedding_update;
/// each declines kernels on f32 tables.
std::vector<CpuBinding> quantizedBindings();    // QuantizedBindings.cpp
/// The plain catalogue: one kernel per emb op.
std::vector<CpuBinding> coreBindings();         // CpuBackend.cpp
/// Packed parameters (-emb-pack-params): update_packed.
std::vector<CpuBinding> packedBindings();       // PackedBindings.cpp
/// Fused dense kernels (-emb-fuse): dense_act, dense_act_grad, elementwise
/// chains, interaction_concat and its gradient, from_output activation_grad.
std::vector<CpuBinding> fusedDenseBindings();   // FusedDenseBindings.cpp
/// Fused embedding kernels (-emb-fuse): fused_lookup, embedding_update,
/// skipgram_step (SkipgramBindings.cpp).
std::vector<CpuBinding> fusedEmbeddingBindings(); // FusedEmbeddingBindings.cpp
/// fp16 dynamic loss scaling (-emb-quantize): unscale_grads.
std::vector<CpuBinding> lossScalingBindings();  // LossScaleBindings.cpp
/// The collectives of -emb-distribute and -emb-batch-exchanges.
std::vector<CpuBinding> commBindings();         // CommBindings.cpp, ShardBindings.cpp
/// Sampled softmax (-emb-sample-softmax): sampled_logits and its gradient.
std::vector<CpuBinding> sampledSoftmaxBindings(); // SampledSoftmaxBindings.cpp
/// skipgram_step.
BoundKernel bindSkipgram(const Binder &b);      // SkipgramBindings.cpp

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_CPUBINDER_H
