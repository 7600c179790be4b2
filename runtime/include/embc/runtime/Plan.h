//===- Plan.h - the executable plan, as plain C++ ---------------*- C++ -*-===//
//
// What `embc` produces and `embrun` executes: buffers laid out in one arena,
// the parameters and tables with their initialisers and optimizers, the data
// inputs, and two kernel schedules (the training step, whose first
// forwardKernels kernels are the forward pass used for evaluation, and the
// optimizer update). The compiler fills a Plan and serialises it with
// serializePlan(); the runtime reads it back with readPlanFile(), which
// validates everything before anything runs. Format: docs/plan-format.md.
//
// No MLIR here: the runtime links this, and GPU machines have no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_PLAN_H
#define EMBC_RUNTIME_PLAN_H

#include <cstdint>
#include <map>
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embc/runtime/data/Schema.h"
#include "embc/runtime/plan/Enums.h"

namespace embc::runtime {

/// The plan format version this code reads and writes. A plan of another
/// version is refused with a message naming both.
inline constexpr uint32_t kPlanVersion = 12;

/// Element types. F16/BF16/U8 store quantised embedding tables
/// (-emb-quantize); U8 rows of an int8 or int4 table come with a per-row
/// F16 scale and bias (Table::qparams).
/// The page a `disk` table's buffers are laid out in (Placement::Disk):
/// each of its buffers of its own (rows, qparams, optimizer state; for a
/// batched table the batch's) starts at a multiple of this many bytes of
/// the arena and reserves its bytes (times its slots) rounded up to a
/// multiple of it, so embrun can map a file over exactly those pages and
/// no other buffer shares one.
inline constexpr int64_t kDiskPageBytes = 4096;

enum class DType { F32, F64, I64, F16, BF16, U8 };
EMBC_PLAN_ENUM(DType, U8, "dtype", "f32", "f64", "i64", "f16", "bf16", "u8");
const char *dtypeName(DType type);
int64_t dtypeBytes(DType type);

/// The dtype of a table's values buffer in `storage` (int8 and int4 rows
/// are u8 codes; int4 packs two per byte).
inline DType storageDType(Storage storage) {
  switch (storage) {
  case Storage::F16:
    return DType::F16;
  case Storage::BF16:
    return DType::BF16;
  case Storage::Int8:
  case Storage::Int4:
    return DType::U8;
  case Storage::F32:
    break;
  }
  return DType::F32;
}

/// Why a buffer exists; the memory report groups by role.
enum class BufferRole {
  Table,          ///< embedding table rows
  Param,          ///< dense parameter
  Grad,           ///< dense gradient accumulator, or a table's sparse-gradient rows/values
  OptimizerState, ///< momentum, accumulators, Adam moments
  Input,          ///< a data input (dense values, ids, offsets, labels, negatives)
  Activation,     ///< an intermediate value of the step
  Workspace,      ///< scratch for a kernel
};
const char *roleName(BufferRole role);

/// A region of the arena. `shape` is the capacity: a dynamic dimension (ids
/// of jagged bags, sparse-gradient rows) is stored at its maximum, and the
/// executor tracks how much of it a step fills.
struct Buffer {
  std::string name;
  BufferRole role = BufferRole::Activation;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  bool dynamic = false;  ///< leading dimension filled up to a runtime length
  /// Bytes from the start of the arena: 64-aligned; a disk table's buffer
  /// of its own on a page (kDiskPageBytes).
  int64_t offset = 0;
  int64_t bytes = 0;     ///< product(shape) * dtypeBytes(dtype)
  /// -1, or the buffer this one is a view into (-emb-pack-params): its bytes
  /// lie inside the parent's, aligned to its dtype, and count only once.
  int32_t parent = -1;
  /// Copies of the buffer, one per micro-batch in flight (-emb-pipeline):
  /// micro-batch mb uses copy mb % slots, `bytes` apart. `bytes` is one copy.
  int32_t slots = 1;
  /// The pass that created the buffer (frontend, emb-autodiff,
  /// emb-pack-params, emb-quantize, emb-remat, emb-pipeline, emb-fuse,
  /// emb-to-plan); shown in the memory report.
  std::string origin;
  /// Lifetime on the step timeline (step kernels 0..S-1, then update
  /// kernels S..S+U-1): the first and last position that touches the buffer.
  /// -1/-1: live for the whole run (parameters, tables, optimizer state,
  /// gradients). Filled by -emb-plan-memory.
  int64_t firstUse = -1, lastUse = -1;
  /// -1, or the one rank of a distributed plan that uses the buffer (the
  /// rows and optimizer state of a table_wise table live on its owner; with
  /// stages on ranks, the values only one rank's stages touch): buffers of
  /// different ranks may share bytes.
  int32_t rank = -1;
  /// Not in the file. In a plan the executor specialised to one batch's
  /// sequence length (dynamic padding, plan/SequenceLayout.h), a sequence
  /// buffer's compiled dim 1 (its max_len), by which random draws number
  /// its elements; 0 everywhere else.
  int64_t paddedLength = 0;
};

struct Initializer {
  InitKind kind = InitKind::Zeros;
  double value = 0, low = 0, high = 0, mean = 0, std = 0, gain = 1;
};

/// An optimizer and its hyper-parameters (formulas: runtime/include/embc/runtime/cpu/Kernels.h).
struct Optimizer {
  OptimizerKind kind = OptimizerKind::Sgd;
  double lr = 0.01, momentum = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0, initialAccumulator = 0;
  /// Lazy: touched rows only; global: every row, every step.
  WeightDecayMode weightDecayMode = WeightDecayMode::Global;

  /// How many state buffers it keeps (cpu/Kernels.h has the formulas):
  /// momentum for SGD when it is on, one accumulator for the Adagrads, two
  /// moments for the Adams and LAMB.
  size_t stateBuffers() const {
    switch (kind) {
    case OptimizerKind::Sgd:
      return momentum != 0 ? 1 : 0;
    case OptimizerKind::Adagrad:
    case OptimizerKind::RowwiseAdagrad:
      return 1;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
    case OptimizerKind::Lamb:
      return 2;
    }
    return 0;
  }
};

/// A trainable dense parameter: its values, gradient accumulator and
/// optimizer state (0, 1 or 2 buffers, by optimizer).
struct Param {
  std::string name;
  int32_t buffer = -1, grad = -1;
  std::vector<int32_t> state;
  Initializer init;
  Optimizer optimizer;
};

/// An embedding table. Its gradient is sparse: `gradRows` (i64, capacity C)
/// and `gradValues` (C x dim) receive one entry per looked-up id during the
/// step(s); the update coalesces them and touches only those rows.
struct Table {
  std::string name;
  int64_t rows = 0, dim = 0;
  int32_t buffer = -1, gradRows = -1, gradValues = -1;
  /// Row storage: f32, f16, bf16, int8 or int4 (both row-wise;
  /// -emb-quantize). The table buffer's dtype is F32, F16, BF16, U8 or U8
  /// accordingly, shape rows x dim, except int4: rows x dim/2, two 4-bit
  /// codes per byte, element 2k in the low nibble (dim must be even).
  Storage storage = Storage::F32;
  /// int8/int4 only: rows x 2 F16 (scale, bias) per row; value = scale * q +
  /// bias, computed in f32 from the fp16 values.
  int32_t qparams = -1;
  std::vector<int32_t> state;
  Initializer init;
  Optimizer optimizer;
  /// Empty: every rank stores the whole table. A sharded table (-emb-distribute):
  /// N + 1 ascending row boundaries from 0 to rows; rank r stores rows
  /// [shardRows[r], shardRows[r+1]) as rows 0.. of its buffers, which have
  /// storedRows() rows (lookups on it see rows of its shard, ids relative to
  /// its first row).
  std::vector<int64_t> shardRows;
  /// Where the rows, qparams and optimizer state live: device (the arena),
  /// host, or disk (arena pages mapped from a scratch file, each buffer
  /// aligned to kDiskPageBytes). Only an unsharded table is off the device.
  Placement placement = Placement::Device;

  /// Rows rank `rank` stores (all of them when the table is not sharded).
  int64_t rowsOn(int rank) const {
    return shardRows.empty() ? rows : shardRows[size_t(rank) + 1] - shardRows[size_t(rank)];
  }
  /// The table row that is row 0 of rank `rank`'s buffers.
  int64_t firstRowOn(int rank) const { return shardRows.empty() ? 0 : shardRows[size_t(rank)]; }

  /// Rows of the table's buffers: the largest shard, or all rows.
  int64_t storedRows() const {
    int64_t most = shardRows.empty() ? rows : 0;
    for (size_t r = 0; r + 1 < shardRows.size(); ++r)
      most = std::max(most, shardRows[r + 1] - shardRows[r]);
    return most;
  }
};

/// Dense parameters packed by -emb-pack-params: values, gradients and each
/// optimizer state are one buffer each, and every member's buffers are views
/// into them at the same relative offset, so one update kernel serves all.
struct ParamPack {
  std::string name;
  int32_t buffer = -1, grad = -1;
  std::vector<int32_t> state;
  std::vector<int32_t> members; ///< indices into Plan::params, in pack order
  Optimizer optimizer;
  /// Element boundaries of the gradient's all-reduce buckets: 0 = b_0 <
  /// b_1 < ... = size of the pack (in backward order: bucket 0 is ready first).
  std::vector<int64_t> buckets;
};

/// Tables batched by -emb-pack-params: one rows x dim buffer (and one per
/// optimizer state) holding the members one after another. A member's
/// buffers are views at its row offset; all members share the batch's
/// sparse gradient, whose row ids are batch rows (member row + offset).
struct TableBatch {
  std::string name;
  int64_t rows = 0, dim = 0;
  int32_t buffer = -1, gradRows = -1, gradValues = -1;
  std::vector<int32_t> state;
  std::vector<int32_t> members;    ///< indices into Plan::tables
  std::vector<int64_t> rowOffsets; ///< first batch row of each member
  Optimizer optimizer;
  /// The members' storage (-emb-pack-params batches one storage only) and,
  /// for int8/int4, the rows x 2 F16 scale/bias buffer the members' qparams
  /// view (at byte 4 * row offset). An int4 batch's buffer is rows x dim/2.
  Storage storage = Storage::F32;
  int32_t qparams = -1;
  /// The members' placement (-emb-pack-params batches one placement only):
  /// for disk, the batch's buffers are the ones mapped from a file.
  Placement placement = Placement::Device;
};

/// One data input of the step, bound to a column of the data source.
struct Input {
  std::string feature;  ///< the model's feature name
  std::string source;   ///< column of the data source (defaults to feature)
  InputRole role = InputRole::Dense;
  int32_t buffer = -1;
  int64_t width = 0;    ///< dense: columns; negatives: count
  int64_t vocab = 0;    ///< ids / negatives: raw id range (0 = unbounded, hashed)
  int64_t hotness = 1;  ///< ids: max ids per example
  std::optional<LabelKind> labelKind; ///< label inputs only ("" in the file otherwise)
  double power = 0.75;  ///< negatives: unigram exponent
};

/// One kernel launch: an op name from the kernel catalogue
/// (docs/plan-format.md), its operand and result buffers, and attributes.
struct Kernel {
  std::string op;
  std::vector<int32_t> inputs, outputs;
  nlohmann::json attrs = nlohmann::json::object();
  int64_t bytes = 0; ///< the compiler's estimate of bytes moved per launch
  int32_t stage = 0; ///< pipeline stage (-emb-pipeline) that runs the kernel
};

/// One instruction of the micro-batch schedule (-emb-pipeline), run in
/// order: `load` (copy micro-batch mb's inputs), `forward`/`backward` (the
/// stage's step kernels for mb), `send`/`recv` (boundary buffers between
/// `stage` and `peer`: a message when their stages are on different ranks,
/// TrainingConfig::stageRanks), `reduce` (gradient all-reduce point), `step`
/// (the optimizer update). With stages on ranks each rank runs the
/// instructions of its own stages, in order.
struct ScheduleOp {
  std::string kind;
  int32_t stage = 0;
  int32_t microBatch = -1;       ///< -1 for reduce and step
  int32_t peer = -1;             ///< send/recv: the other stage
  std::vector<int32_t> buffers;  ///< send/recv: the boundary buffers
};

/// Dynamic loss scaling for fp16 (-emb-quantize): the loss gradient is
/// multiplied by the scale; an update whose gradients are not all finite is
/// skipped and the scale multiplied by `backoff`; after `interval` good
/// steps it is multiplied by `growth`.
struct LossScaling {
  bool enabled = false;
  double initial = 65536.0, growth = 2.0, backoff = 0.5;
  int64_t interval = 2000;
};

/// What -emb-plan-memory computed (the report shows it with each buffer).
struct MemoryPlan {
  std::string strategy = "sequential"; ///< sequential (no reuse) or greedy_by_size
  int64_t peakBytes = 0;       ///< = arenaBytes
  int64_t lowerBoundBytes = 0; ///< max over the timeline of the bytes live at once
};

struct TrainingConfig {
  int64_t batchSize = 0;
  int64_t gradAccumulation = 1; ///< micro-steps per optimizer update
  double gradClipNorm = 0;      ///< 0: no clipping
  LrSchedule lrSchedule = LrSchedule::Constant;
  int64_t warmupSteps = 0, decaySteps = 0;
  uint64_t seed = 0;
  LossKind loss = LossKind::BceWithLogits;
  ComputeType precision = ComputeType::F32; ///< dense compute precision
  LossScaling lossScaling;
  int64_t microBatches = 1;   ///< per batch, each batchSize / microBatches examples
  int64_t pipelineStages = 1;
  ScheduleKind schedule = ScheduleKind::GPipe;
  /// Data-parallel ranks (-emb-distribute): each runs the plan on its
  /// batchSize examples of a global batch of batchSize * dataParallel, and
  /// the collective kernels need a communicator of exactly this size.
  int64_t dataParallel = 1;
  /// Pipeline stages on ranks (-emb-distribute, pipeline_ranks): stage s
  /// runs on rank stageRanks[s] (contiguous stages per rank, from 0), every
  /// rank on the whole batch. Empty: every stage on one device.
  std::vector<int32_t> stageRanks;

  /// The rank that runs pipeline stage `stage`.
  int rankOfStage(int32_t stage) const {
    return stageRanks.empty() ? 0 : stageRanks[size_t(stage)];
  }
  /// Ranks the pipeline is spread over (1: one device).
  int64_t pipelineRanks() const {
    return stageRanks.empty() ? 1 : std::max<int64_t>(1, stageRanks.back() + 1);
  }
  /// The processes of a job that runs the plan.
  int64_t jobRanks() const { return dataParallel * pipelineRanks(); }
};

/// One argument of a CUDA launch: exactly one of a plan buffer (its address
/// for the running micro-batch's slot), a byte offset into the CUDA scratch
/// region, or the device cell (one i64) holding a dynamic buffer's filled
/// length for the running micro-batch.
struct CudaArg {
  int32_t buffer = -1;
  int64_t scratch = -1;
  int32_t length = -1;
};

/// One device operation of the CUDA backend, in stream order:
///  - `kernel`: the generated `__global__` function `entry` of the program's
///    source, launched on `grid` x `block` threads with `shared` bytes of
///    dynamic shared memory; it receives the args as EmbArgs
///    (runtime/include/embc/runtime/cuda/KernelAbi.h).
///  - `gemm`: a cuBLASLt matmul; `params` is the GemmSpec
///    (runtime/include/embc/runtime/cuda/Device.h), args A, B, C[, bias].
///  - `library`: a hand-written kernel of runtime/lib/cuda (`entry` names it:
///    sort_pairs, exclusive_scan); `params` as Device.h lists.
///  - `memset`: zeroes `params.bytes` bytes at args[0].
struct CudaLaunch {
  std::string kind;
  std::string entry;
  std::vector<CudaArg> args;
  int64_t grid[3] = {1, 1, 1};
  int64_t block = 1;
  int64_t shared = 0;
  nlohmann::json params = nlohmann::json::object();
};

/// What one plan kernel becomes on the CUDA backend.
struct CudaKernel {
  std::vector<CudaLaunch> launches;
};

/// Dynamic padding on the CUDA backend (docs/cuda.md, "Sequence lengths"):
/// the step kernels that touch a sequence buffer (findSequenceLayout's
/// `kernels`) lowered again for a batch whose longest sequence rounds up to
/// `length` (< max_len): their buffers' dimension 1 is `length`, laid out
/// from the start of the max_len buffer, and random draws numbered by
/// max_len, as on the CPU.
struct CudaLengthVariant {
  int64_t length = 0;
  std::vector<CudaKernel> step; ///< parallel to CudaProgram::lengthKernels
};

/// The CUDA program of a plan (-emb-to-plan's CUDA codegen): one translation
/// unit of generated kernels, and for every kernel of `step` and `update`
/// its launches. Empty `source`: the plan has no CUDA program (embc
/// --target=cpu) and runs only on the CPU backend.
struct CudaProgram {
  std::string arch = "sm_90"; ///< the architecture the compiler checked the source for
  std::string source;
  /// Bytes of scratch memory the launches address (after the arena, in the
  /// same allocation); launches of different plan kernels reuse it.
  int64_t scratchBytes = 0;
  std::vector<CudaKernel> step, update; ///< parallel to Plan::step / Plan::update
  /// The step kernels the length variants replace, ascending (empty: the
  /// program runs every batch at max_len).
  std::vector<int64_t> lengthKernels;
  std::vector<CudaLengthVariant> lengths; ///< ascending lengths, all below max_len
  /// Device error codes 1..n (EmbStep::error): what went wrong; the offending
  /// value (EmbStep::errorValue) is appended to the message.
  std::vector<std::string> errors;
  /// The codes among them that are the finite check of an update (a value
  /// it wrote is NaN or infinite: NonFiniteError, not a data error); their
  /// message has "{}" where the value (a row or an element) goes.
  std::vector<int64_t> nonFiniteErrors;
};

struct Plan {
  uint32_t version = kPlanVersion;
  std::string model;
  std::string compiler; ///< the embc version that wrote it
  /// embc --set overrides the model was compiled with ("POINTER=VALUE", in
  /// order; empty: the model file as written).
  std::vector<std::string> overrides;
  /// The model's data schema (its `data` object, docs/model-format.md):
  /// how embrun --data reads a file into the inputs. Absent: the model has
  /// none, and embrun reads through a built-in reader.
  std::optional<data::DataSchema> dataSchema;
  TrainingConfig config;
  std::vector<Buffer> buffers;
  std::vector<Param> params;
  std::vector<Table> tables;
  std::vector<ParamPack> packs;
  std::vector<TableBatch> tableBatches;
  std::vector<Input> inputs;
  /// Forward then backward: run once per micro-batch. Gradient kernels
  /// accumulate into the grad buffers (zeroed before each optimizer step).
  std::vector<Kernel> step;
  /// The optimizer update, once per `gradAccumulation` micro-steps.
  std::vector<Kernel> update;
  /// How many leading kernels of `step` are the forward pass (evaluation).
  int64_t forwardKernels = 0;
  /// The micro-batch schedule of one optimizer step; empty: one
  /// micro-batch, one stage (load, forward, backward, step).
  std::vector<ScheduleOp> schedule;
  MemoryPlan memory;
  CudaProgram cuda;
  int32_t lossBuffer = -1, predictionBuffer = -1;
  int64_t arenaBytes = 0;
  /// Free-form notes from the compiler (passes run, choices made).
  std::vector<std::string> notes;

  /// Bytes of the buffers with `role`, views not counted twice.
  int64_t bytesWithRole(BufferRole role) const;
  /// The placement of each buffer: a table's or table batch's values,
  /// qparams and optimizer state (and views into them) take its placement;
  /// every other buffer (gradients included) is Device.
  std::vector<Placement> bufferPlacements() const;
  /// Bytes live at each position of the timeline (step kernels, then update
  /// kernels), from the buffers' lifetimes: each buffer that is not a view
  /// counts bytes x slots over [firstUse, lastUse], or everywhere when it
  /// lives for the whole run. Its maximum is MemoryPlan::lowerBoundBytes.
  std::vector<int64_t> liveBytes() const;
};

/// Serialises a plan: magic "EMBCPLAN", version, flags, body length, checksum
/// (xxh64 of the JSON body), JSON body. Deterministic for a given plan; does
/// not validate (writePlanFile and deserializePlan do).
std::string serializePlan(const Plan &plan);

/// Parses and validates a serialised plan. On failure returns nothing and
/// sets `error` to what is wrong (wrong magic or version, truncated,
/// checksum mismatch, bad field, a buffer reference out of range, a layout
/// that does not fit the arena, ...).
std::optional<Plan> deserializePlan(const std::string &bytes, std::string &error);

/// The plan as JSON, as stored in the file body (and `embc --emit=plan-json`).
nlohmann::json planToJson(const Plan &plan);

/// File helpers; errors name the path.
bool writePlanFile(const std::string &path, const Plan &plan, std::string &error);
/// The largest plan file readPlanFile reads: plans are JSON of buffers and
/// kernels plus the CUDA program's text (a few MB for the MLPerf DLRM), so
/// anything larger is not a plan.
inline constexpr uint64_t kMaxPlanFileBytes = uint64_t(256) << 20;
std::optional<Plan> readPlanFile(const std::string &path, std::string &error);

/// Reads a data schema from JSON text (a plan's `data`, the emb.data module
/// attribute) with data::parseDataSchema, without throwing: the compiler's
/// passes are built without exceptions. Nothing, with `error` ("at
/// /data/columns/2/encoding: ..."), for text that is not JSON or a schema
/// the parser refuses.
std::optional<data::DataSchema> parseDataSchemaText(const std::string &text, std::string &error);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_PLAN_H
