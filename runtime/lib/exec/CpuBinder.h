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

#include <map>
#include <string>
#include <vector>

namespace embc::runtime {
namespace cpu = embc::runtime::cpu;

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
    int64_t rows, dim;
    const std::vector<int32_t> &state;
    const Optimizer &optimizer;
  };
  SparseTarget sparseTarget() const {
    if (!k.attrs.contains("batch")) {
      const Table &t = table();
      return {t.rows, t.dim, t.state, t.optimizer};
    }
    int64_t i = integer("batch");
    if (i < 0 || i >= int64_t(p.tableBatches.size()))
      fail("table batch index " + std::to_string(i) + " out of range");
    const TableBatch &t = p.tableBatches[i];
    return {t.rows, t.dim, t.state, t.optimizer};
  }
  const Param &param() const {
    int64_t i = integer("param");
    if (i < 0 || i >= int64_t(p.params.size()))
      fail("param index " + std::to_string(i) + " out of range");
    return p.params[i];
  }

  const Kernel &k;
  const Plan &p;
};

inline cpu::Activation activationOf(const Binder &b) {
  static const std::map<std::string, cpu::Activation> kinds = {
      {"relu", cpu::Activation::Relu}, {"sigmoid", cpu::Activation::Sigmoid},
      {"tanh", cpu::Activation::Tanh}, {"gelu", cpu::Activation::Gelu}};
  auto it = kinds.find(b.str("kind"));
  if (it == kinds.end())
    b.fail("unknown activation '" + b.str("kind") + "'");
  return it->second;
}

inline cpu::Pooling poolingOf(const Binder &b) {
  std::string pooling = b.str("pooling");
  if (pooling == "sum")
    return cpu::Pooling::Sum;
  if (pooling == "mean")
    return cpu::Pooling::Mean;
  if (pooling == "max")
    return cpu::Pooling::Max;
  b.fail("unknown pooling '" + pooling + "'");
}

inline cpu::LossKind lossOf(const Binder &b) {
  static const std::map<std::string, cpu::LossKind> kinds = {
      {"bce_with_logits", cpu::LossKind::BceWithLogits},
      {"mse", cpu::LossKind::Mse},
      {"softmax_ce", cpu::LossKind::SoftmaxCe},
      {"neg_sampling", cpu::LossKind::NegSampling}};
  auto it = kinds.find(b.str("kind"));
  if (it == kinds.end())
    b.fail("unknown loss '" + b.str("kind") + "'");
  return it->second;
}

inline cpu::OptimizerParams optimizerOf(const Binder &b, const Optimizer &o) {
  static const std::map<std::string, cpu::OptimizerKind> kinds = {
      {"sgd", cpu::OptimizerKind::Sgd},
      {"adagrad", cpu::OptimizerKind::Adagrad},
      {"rowwise_adagrad", cpu::OptimizerKind::RowwiseAdagrad},
      {"adam", cpu::OptimizerKind::Adam},
      {"adamw", cpu::OptimizerKind::AdamW},
      {"lamb", cpu::OptimizerKind::Lamb}};
  auto it = kinds.find(o.kind);
  if (it == kinds.end())
    b.fail("unknown optimizer '" + o.kind + "'");
  cpu::OptimizerParams params;
  params.kind = it->second;
  params.lr = o.lr;
  params.momentum = o.momentum;
  params.beta1 = o.beta1;
  params.beta2 = o.beta2;
  params.eps = o.eps;
  params.weightDecay = o.weightDecay;
  params.globalDecay = o.weightDecayMode == "global";
  return params;
}

/// The state buffers a table with optimizer `o` keeps.
inline size_t tableStateCount(const cpu::OptimizerParams &o) {
  switch (o.kind) {
  case cpu::OptimizerKind::Sgd:
    return o.momentum != 0 ? 1 : 0;
  case cpu::OptimizerKind::Adagrad:
  case cpu::OptimizerKind::RowwiseAdagrad:
    return 1;
  case cpu::OptimizerKind::Adam:
  case cpu::OptimizerKind::AdamW:
  case cpu::OptimizerKind::Lamb:
    return 2;
  }
  return 0;
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

/// A dense kernel's compute precision (-emb-quantize): attribute "compute",
/// f32 when absent (what every plan without bf16/fp16 has).
inline cpu::ComputeType computeOf(const Binder &b) {
  if (!b.k.attrs.contains("compute"))
    return cpu::ComputeType::F32;
  std::string compute = b.str("compute");
  if (compute == "bf16")
    return cpu::ComputeType::BF16;
  if (compute == "fp16")
    return cpu::ComputeType::F16;
  if (compute == "fp32")
    return cpu::ComputeType::F32;
  b.fail("unknown compute type '" + compute + "' (expected fp32, bf16 or fp16)");
}

inline std::vector<int64_t> widthsOf(const Binder &b, size_t first, size_t count) {
  std::vector<int64_t> widths;
  for (size_t i = first; i < first + count; ++i)
    widths.push_back(b.dim(b.in(i), 1));
  return widths;
}


/// Kernels on tables in quantised storage (-emb-quantize): lookup, gather,
/// max-pooled lookup_grad, update_table, fused_lookup, embedding_update;
/// nullptr for kernels on f32 tables. Bound before the others.
BoundKernel bindQuantized(const Binder &b);
/// Packed parameters and batched tables (-emb-pack-params): update_packed.
BoundKernel bindPacked(const Binder &b);
/// Fused dense kernels (-emb-fuse): dense_act, dense_act_grad,
/// elementwise chains, interaction_concat and its gradient.
BoundKernel bindFusedDense(const Binder &b);
/// Fused embedding kernels (-emb-fuse): fused_lookup, embedding_update.
BoundKernel bindFusedEmbedding(const Binder &b);
/// skipgram_step (SkipgramBindings.cpp).
BoundKernel bindSkipgram(const Binder &b);
/// fp16 dynamic loss scaling (-emb-quantize): unscale_grads.
BoundKernel bindLossScaling(const Binder &b);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_CPUBINDER_H
