//===- Enums.h - the plan's enumerations, each declared once ----*- C++ -*-===//
//
// Every closed set of words a plan holds (a pooling, an activation, an
// optimizer, a table's storage, ...) is an enum here, declared once with its
// spellings beside it. The plan reader and validator, the kernel catalogue
// (KernelCatalogue.h), the CPU kernels (cpu::Pooling is this Pooling) and the
// compiler read and write the words through enumName() / parseEnum(), so a
// spelling exists in one place only. The spellings are the plan format's
// (docs/plan-format.md): changing one changes the format.
//
// Plain C++: the runtime-only build (no LLVM) includes this.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_PLAN_ENUMS_H
#define EMBC_RUNTIME_PLAN_ENUMS_H

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace embc::runtime {

/// What an enum is called in messages and its spellings, in enumerator
/// order; specialised by EMBC_PLAN_ENUM only.
template <class E> struct EnumTraits;

/// Declares EnumTraits<E>: WHAT names the set in messages, the rest are the
/// spellings of E's enumerators 0, 1, ... in order, up to and including
/// LAST (a static_assert keeps the two lists the same length).
#define EMBC_PLAN_ENUM(E, LAST, WHAT, ...)                                                       \
  template <> struct EnumTraits<E> {                                                             \
    static constexpr std::string_view what = WHAT;                                               \
    static constexpr std::string_view names[] = {__VA_ARGS__};                                   \
  };                                                                                             \
  static_assert(std::size(EnumTraits<E>::names) == size_t(E::LAST) + 1,                          \
                #E ": one spelling per enumerator")

enum class Pooling : uint8_t { Sum, Mean, Max };
EMBC_PLAN_ENUM(Pooling, Max, "pooling", "sum", "mean", "max");

/// How sequence_pool reduces a sequence's valid positions (first: position 0).
enum class SequencePooling : uint8_t { Sum, Mean, Max, First };
EMBC_PLAN_ENUM(SequencePooling, First, "sequence pooling", "sum", "mean", "max", "first");

/// What `positions` adds to position l of a sequence: row l of a learned
/// table, or the sinusoid of l (Vaswani et al.: sin, cos of l / 10000^(2i/D)).
enum class PositionKind : uint8_t { Learned, Sinusoidal };
EMBC_PLAN_ENUM(PositionKind, Sinusoidal, "position kind", "learned", "sinusoidal");

/// None is the identity (fused kernels' layers without an activation).
enum class Activation : uint8_t { None, Relu, Sigmoid, Tanh, Gelu };
EMBC_PLAN_ENUM(Activation, Gelu, "activation", "none", "relu", "sigmoid", "tanh", "gelu");

/// SequenceSoftmaxCe: softmax_ce at each position of B x L x C logits
/// against B x L class indices (-1: no target there), each sequence's mean
/// over its targets, averaged over the batch (LossKernels.cpp).
enum class LossKind : uint8_t { BceWithLogits, Mse, SoftmaxCe, NegSampling, SequenceSoftmaxCe };
EMBC_PLAN_ENUM(LossKind, SequenceSoftmaxCe, "loss", "bce_with_logits", "mse", "softmax_ce",
               "neg_sampling", "sequence_softmax_ce");

enum class OptimizerKind : uint8_t { Sgd, Adagrad, RowwiseAdagrad, Adam, AdamW, Lamb };
EMBC_PLAN_ENUM(OptimizerKind, Lamb, "optimizer", "sgd", "adagrad", "rowwise_adagrad", "adam",
               "adamw", "lamb");

enum class WeightDecayMode : uint8_t { Lazy, Global };
EMBC_PLAN_ENUM(WeightDecayMode, Global, "weight decay mode", "lazy", "global");

/// Dense compute precision (config.precision, a kernel's "compute").
enum class ComputeType : uint8_t { F32, BF16, F16 };
EMBC_PLAN_ENUM(ComputeType, F16, "precision", "fp32", "bf16", "fp16");

/// A table's row storage (Table::storage, a kernel's "dequantize").
enum class Storage : uint8_t { F32, F16, BF16, Int8, Int4 };
EMBC_PLAN_ENUM(Storage, Int4, "storage", "f32", "f16", "bf16", "int8", "int4");
/// Row-wise storages (int8, int4) keep a per-row scale and bias.
inline bool isRowwise(Storage s) { return s == Storage::Int8 || s == Storage::Int4; }

/// Where a table's rows and optimizer state live (Table::placement):
/// the arena (device memory on a GPU), host memory, or a memory-mapped
/// scratch file read through the page cache (embrun --table-dir).
enum class Placement : uint8_t { Device, Host, Disk };
EMBC_PLAN_ENUM(Placement, Disk, "placement", "device", "host", "disk");

/// How an update of a quantised table rounds back to its storage.
enum class Requantize : uint8_t { Stochastic };
EMBC_PLAN_ENUM(Requantize, Stochastic, "requantize mode", "stochastic");

enum class SkipgramMode : uint8_t { PerExample, Hogwild };
EMBC_PLAN_ENUM(SkipgramMode, Hogwild, "skipgram mode", "per_example", "hogwild");

/// What a `gemm` launch of the CUDA program applies to each element of
/// alpha op(A) op(B) + beta C (cuda::GemmSpec): nothing, + bias[col],
/// relu, relu(. + bias[col]), or the bias gradient (column sums of B) beside.
enum class GemmEpilogue : uint8_t { None, Bias, Relu, ReluBias, BGradB };
EMBC_PLAN_ENUM(GemmEpilogue, BGradB, "gemm epilogue", "none", "bias", "relu", "relu_bias",
               "bgradb");
/// Whether the epilogue reads (bias, relu_bias) or writes (bgradb) a bias.
inline bool hasBias(GemmEpilogue e) {
  return e == GemmEpilogue::Bias || e == GemmEpilogue::ReluBias || e == GemmEpilogue::BGradB;
}
/// Whether the epilogue applies a relu.
inline bool hasRelu(GemmEpilogue e) {
  return e == GemmEpilogue::Relu || e == GemmEpilogue::ReluBias;
}

/// A step of an `elementwise` kernel's chain.
enum class ElementwiseOp : uint8_t { Add, Activation, ActivationGrad };
EMBC_PLAN_ENUM(ElementwiseOp, ActivationGrad, "elementwise step", "add", "activation",
               "activation_grad");

/// Where an `embedding_update` source's per-id rows come from.
enum class RowSource : uint8_t { Bag, Rows };
EMBC_PLAN_ENUM(RowSource, Rows, "source kind", "bag", "rows");

enum class InitKind : uint8_t { Zeros, Constant, Uniform, Normal, XavierUniform, XavierNormal };
EMBC_PLAN_ENUM(InitKind, XavierNormal, "initializer", "zeros", "constant", "uniform", "normal",
               "xavier_uniform", "xavier_normal");

enum class LrSchedule : uint8_t { Constant, Linear, Cosine };
EMBC_PLAN_ENUM(LrSchedule, Cosine, "lr schedule", "constant", "linear", "cosine");

enum class InputRole : uint8_t { Dense, Ids, Offsets, Weights, Label, Negatives };
EMBC_PLAN_ENUM(InputRole, Negatives, "input role", "dense", "ids", "offsets", "weights", "label",
               "negatives");

enum class LabelKind : uint8_t { Binary, Real, Class };
EMBC_PLAN_ENUM(LabelKind, Class, "label kind", "binary", "real", "class");

/// A data schema's file format (data/Schema.h): delimited text, NumPy column
/// files, fixed int32 records (the MLPerf DLRM reference's binary Criteo).
enum class DataFormat : uint8_t { Csv, Tsv, Npy, Binary };
EMBC_PLAN_ENUM(DataFormat, Binary, "data format", "csv", "tsv", "npy", "binary");

/// What a data schema's column gives a feature.
enum class ColumnType : uint8_t { Label, Dense, Categorical };
EMBC_PLAN_ENUM(ColumnType, Categorical, "column type", "label", "dense", "categorical");

/// How a categorical column's text becomes ids (data/Schema.h says how each does).
enum class IdEncoding : uint8_t { Int, Hex, Hash, Vocab };
EMBC_PLAN_ENUM(IdEncoding, Vocab, "id encoding", "int", "hex", "hash", "vocab");

/// The micro-batch schedule of -emb-pipeline (config.schedule): all
/// forwards then all backwards, or one forward one backward.
enum class ScheduleKind : uint8_t { GPipe, OneFOneB };
EMBC_PLAN_ENUM(ScheduleKind, OneFOneB, "schedule", "gpipe", "1f1b");

/// How -emb-plan-memory places the arena's buffers (Plan::memory.strategy).
enum class MemoryStrategy : uint8_t { GreedyBySize, Sequential };
EMBC_PLAN_ENUM(MemoryStrategy, Sequential, "memory strategy", "greedy_by_size", "sequential");

/// How many enumerators E has.
template <class E> constexpr size_t enumCount() { return std::size(EnumTraits<E>::names); }

/// The plan's spelling of `e`.
template <class E> constexpr std::string_view enumName(E e) {
  return EnumTraits<E>::names[size_t(e)];
}

/// The plan's spelling of `e` as a string, for messages.
template <class E> std::string enumString(E e) { return std::string(enumName(e)); }

/// The enumerator spelled `word`, or nothing.
template <class E> std::optional<E> parseEnum(std::string_view word) {
  for (size_t i = 0; i < enumCount<E>(); ++i)
    if (EnumTraits<E>::names[i] == word)
      return E(i);
  return std::nullopt;
}

/// "sum, mean or max": the spellings, for messages.
template <class E> std::string enumChoices() {
  std::string out;
  for (size_t i = 0; i < enumCount<E>(); ++i) {
    if (i)
      out += i + 1 == enumCount<E>() ? " or " : ", ";
    out += EnumTraits<E>::names[i];
  }
  return out;
}

} // namespace embc::runtime

#endif // EMBC_RUNTIME_PLAN_ENUMS_H
