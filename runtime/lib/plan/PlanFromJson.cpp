//===- PlanFromJson.cpp - the JSON body of a plan file back into a Plan ----===//
//
// Structure only: every field the writer writes must be present with its
// JSON type, integers must fit their C++ field, `role` and `dtype` must be
// known words, and no object may carry a field this reader does not know (a
// field it would ignore could change what the plan means; a newer embc that
// adds one bumps kPlanVersion). What the values mean is PlanValidate.cpp's job.
//
//===----------------------------------------------------------------------===//

#include "PlanInternal.h"

#include <limits>
#include <set>

using namespace embc::runtime;
using namespace embc::runtime::detail;
using nlohmann::json;

namespace {

std::string describe(const json &value) {
  if (value.is_number_float())
    return "number " + value.dump();
  return std::string(value.type_name());
}

/// The fields of one JSON object, read by name. Remembers what was read so
/// finish() can name a field nobody asked for.
class ObjectReader {
public:
  ObjectReader(const json &value, std::string path)
      : value(value), path(std::move(path)) {
    if (!value.is_object())
      failAt(this->path.empty() ? "the body" : this->path,
             "expected an object, got " + describe(value));
  }

  const std::string &where() const { return path; }
  std::string where(const char *key) const { return childPath(path, key); }

  const json &field(const char *key) {
    auto it = value.find(key);
    if (it == value.end())
      failAt(where(key), "missing field");
    seen.insert(key);
    return *it;
  }

  std::string string(const char *key) {
    const json &v = field(key);
    if (!v.is_string())
      failAt(where(key), "expected a string, got " + describe(v));
    return v.get<std::string>();
  }

  bool boolean(const char *key) {
    const json &v = field(key);
    if (!v.is_boolean())
      failAt(where(key), "expected true or false, got " + describe(v));
    return v.get<bool>();
  }

  double number(const char *key) {
    const json &v = field(key);
    if (!v.is_number())
      failAt(where(key), "expected a number, got " + describe(v));
    return v.get<double>();
  }

  /// A string field holding a word of the enum E (plan/Enums.h); `what`
  /// names the set in the message.
  template <class E> E word(const char *key, const char *what) {
    std::string value = string(key);
    std::optional<E> parsed = parseEnum<E>(value);
    if (!parsed)
      failAt(where(key), "unknown " + std::string(what) + " '" + value + "' (expected " +
                             enumChoices<E>() + ")");
    return *parsed;
  }
  int64_t integer(const char *key) { return integerValue(field(key), where(key)); }

  uint64_t unsignedInteger(const char *key) {
    const json &v = field(key);
    if (v.is_number_unsigned())
      return v.get<uint64_t>();
    if (v.is_number_integer())
      failAt(where(key), "expected a non-negative integer, got " + v.dump());
    failAt(where(key), "expected an integer, got " + describe(v));
  }

  int32_t index(const char *key) { return indexValue(field(key), where(key)); }

  const json &array(const char *key) {
    const json &v = field(key);
    if (!v.is_array())
      failAt(where(key), "expected an array, got " + describe(v));
    return v;
  }

  std::vector<int32_t> indexList(const char *key) {
    const json &list = array(key);
    std::vector<int32_t> result;
    for (size_t i = 0; i < list.size(); ++i)
      result.push_back(indexValue(list[i], childPath(where(key), i)));
    return result;
  }

  /// Every field has been read: anything left is unknown to this reader.
  void finish() const {
    for (auto it = value.begin(); it != value.end(); ++it)
      if (!seen.count(it.key()))
        failAt(childPath(path, it.key()), "unknown field");
  }

  static int64_t integerValue(const json &v, const std::string &at) {
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        failAt(at, v.dump() + " does not fit a signed 64-bit integer");
      return static_cast<int64_t>(u);
    }
    if (v.is_number_integer())
      return v.get<int64_t>();
    failAt(at, "expected an integer, got " + describe(v));
  }

  /// Buffer references are int32 in the structs; -1 means "none" where that
  /// is allowed (validation decides where).
  static int32_t indexValue(const json &v, const std::string &at) {
    int64_t i = integerValue(v, at);
    if (i < std::numeric_limits<int32_t>::min() || i > std::numeric_limits<int32_t>::max())
      failAt(at, std::to_string(i) + " is not a buffer index (out of 32-bit range)");
    return static_cast<int32_t>(i);
  }

private:
  const json &value;
  std::string path;
  std::set<std::string> seen;
};

std::vector<std::string> roleWords() {
  std::vector<std::string> words;
  for (BufferRole role : allRoles())
    words.push_back(roleName(role));
  return words;
}

Initializer readInitializer(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  Initializer init;
  init.kind = r.word<InitKind>("kind", "initializer");
  init.value = r.number("value");
  init.low = r.number("low");
  init.high = r.number("high");
  init.mean = r.number("mean");
  init.std = r.number("std");
  init.gain = r.number("gain");
  r.finish();
  return init;
}

Optimizer readOptimizer(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  Optimizer opt;
  opt.kind = r.word<OptimizerKind>("kind", "optimizer");
  opt.lr = r.number("lr");
  opt.momentum = r.number("momentum");
  opt.beta1 = r.number("beta1");
  opt.beta2 = r.number("beta2");
  opt.eps = r.number("eps");
  opt.weightDecay = r.number("weight_decay");
  opt.initialAccumulator = r.number("initial_accumulator");
  opt.weightDecayMode = r.word<WeightDecayMode>("weight_decay_mode", "weight decay mode");
  r.finish();
  return opt;
}

TrainingConfig readConfig(const json &value) {
  ObjectReader r(value, "config");
  TrainingConfig config;
  config.batchSize = r.integer("batch_size");
  config.gradAccumulation = r.integer("grad_accumulation");
  config.gradClipNorm = r.number("grad_clip_norm");
  config.lrSchedule = r.word<LrSchedule>("lr_schedule", "learning-rate schedule");
  config.warmupSteps = r.integer("warmup_steps");
  config.decaySteps = r.integer("decay_steps");
  config.seed = r.unsignedInteger("seed");
  config.loss = r.word<LossKind>("loss", "loss");
  config.precision = r.word<ComputeType>("precision", "precision");
  // -emb-quantize's loss scaling; plans written before it have none.
  if (value.contains("loss_scaling")) {
    ObjectReader ls(r.field("loss_scaling"), r.where("loss_scaling"));
    config.lossScaling.enabled = ls.boolean("enabled");
    config.lossScaling.initial = ls.number("initial");
    config.lossScaling.growth = ls.number("growth");
    config.lossScaling.backoff = ls.number("backoff");
    config.lossScaling.interval = ls.integer("interval");
    ls.finish();
  }
  // -emb-pipeline's settings; plans written before it run one micro-batch.
  if (value.contains("micro_batches"))
    config.microBatches = r.integer("micro_batches");
  if (value.contains("pipeline_stages"))
    config.pipelineStages = r.integer("pipeline_stages");
  if (value.contains("schedule"))
    config.schedule = r.string("schedule");
  // -emb-distribute's ranks; absent reads as one rank.
  if (value.contains("data_parallel"))
    config.dataParallel = r.integer("data_parallel");
  if (value.contains("stage_ranks"))
    config.stageRanks = r.indexList("stage_ranks");
  r.finish();
  return config;
}

Buffer readBuffer(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  Buffer buffer;
  buffer.name = r.string("name");
  std::string role = r.string("role");
  if (std::optional<BufferRole> parsed = parseRole(role))
    buffer.role = *parsed;
  else
    failAt(r.where("role"), "unknown role '" + role + "' (expected " +
                                joinAlternatives(roleWords()) + ")");
  std::string dtype = r.string("dtype");
  if (std::optional<DType> parsed = parseDType(dtype))
    buffer.dtype = *parsed;
  else
    failAt(r.where("dtype"), "unknown dtype '" + dtype +
                                 "' (expected f32, f64, i64, f16, bf16 or u8)");
  const json &shape = r.array("shape");
  for (size_t i = 0; i < shape.size(); ++i)
    buffer.shape.push_back(
        ObjectReader::integerValue(shape[i], childPath(r.where("shape"), i)));
  buffer.dynamic = r.boolean("dynamic");
  buffer.offset = r.integer("offset");
  buffer.bytes = r.integer("bytes");
  buffer.parent = r.index("parent");
  // Memory planning's fields (format v3); older bodies lack them: one slot,
  // no origin, live for the whole run.
  if (value.contains("slots"))
    buffer.slots = r.index("slots");
  if (value.contains("origin"))
    buffer.origin = r.string("origin");
  if (value.contains("first_use"))
    buffer.firstUse = r.integer("first_use");
  if (value.contains("last_use"))
    buffer.lastUse = r.integer("last_use");
  buffer.rank = r.integer("rank");
  r.finish();
  return buffer;
}

std::vector<int64_t> readIntegers(ObjectReader &r, const char *key) {
  const json &list = r.array(key);
  std::vector<int64_t> values;
  for (size_t i = 0; i < list.size(); ++i)
    values.push_back(ObjectReader::integerValue(list[i], childPath(r.where(key), i)));
  return values;
}

ParamPack readPack(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  ParamPack pack;
  pack.name = r.string("name");
  pack.buffer = r.index("buffer");
  pack.grad = r.index("grad");
  pack.state = r.indexList("state");
  pack.members = r.indexList("members");
  pack.buckets = readIntegers(r, "buckets");
  pack.optimizer = readOptimizer(r.field("optimizer"), r.where("optimizer"));
  r.finish();
  return pack;
}

TableBatch readTableBatch(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  TableBatch batch;
  batch.name = r.string("name");
  batch.rows = r.integer("rows");
  batch.dim = r.integer("dim");
  batch.buffer = r.index("buffer");
  batch.gradRows = r.index("grad_rows");
  batch.gradValues = r.index("grad_values");
  batch.state = r.indexList("state");
  batch.members = r.indexList("members");
  batch.rowOffsets = readIntegers(r, "row_offsets");
  batch.optimizer = readOptimizer(r.field("optimizer"), r.where("optimizer"));
  if (value.contains("storage"))
    batch.storage = r.word<Storage>("storage", "storage");
  if (value.contains("qparams"))
    batch.qparams = r.index("qparams");
  r.finish();
  return batch;
}

Param readParam(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  Param param;
  param.name = r.string("name");
  param.buffer = r.index("buffer");
  param.grad = r.index("grad");
  param.state = r.indexList("state");
  param.init = readInitializer(r.field("init"), r.where("init"));
  param.optimizer = readOptimizer(r.field("optimizer"), r.where("optimizer"));
  r.finish();
  return param;
}

Table readTable(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  Table table;
  table.name = r.string("name");
  table.rows = r.integer("rows");
  table.dim = r.integer("dim");
  table.buffer = r.index("buffer");
  table.gradRows = r.index("grad_rows");
  table.gradValues = r.index("grad_values");
  table.state = r.indexList("state");
  table.init = readInitializer(r.field("init"), r.where("init"));
  table.optimizer = readOptimizer(r.field("optimizer"), r.where("optimizer"));
  // -emb-quantize's fields; plans written before them hold f32 tables.
  if (value.contains("storage"))
    table.storage = r.word<Storage>("storage", "storage");
  if (value.contains("qparams"))
    table.qparams = r.index("qparams");
  const json &shards = r.array("shard_rows");
  for (size_t i = 0; i < shards.size(); ++i)
    table.shardRows.push_back(
        ObjectReader::integerValue(shards[i], childPath(r.where("shard_rows"), i)));
  r.finish();
  return table;
}

Input readInput(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  Input input;
  input.feature = r.string("feature");
  input.source = r.string("source");
  input.role = r.word<InputRole>("role", "input role");
  input.buffer = r.index("buffer");
  input.width = r.integer("width");
  input.vocab = r.integer("vocab");
  input.hotness = r.integer("hotness");
  if (std::string kind = r.string("label_kind"); !kind.empty())
    input.labelKind = r.word<LabelKind>("label_kind", "label kind");
  input.power = r.number("power");
  r.finish();
  return input;
}

Kernel readKernel(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  Kernel kernel;
  kernel.op = r.string("op");
  kernel.inputs = r.indexList("inputs");
  kernel.outputs = r.indexList("outputs");
  const json &attrs = r.field("attrs");
  if (!attrs.is_object())
    failAt(r.where("attrs"), "expected an object, got " + describe(attrs));
  kernel.attrs = attrs;
  kernel.bytes = r.integer("bytes");
  if (value.contains("stage")) // -emb-pipeline; absent: stage 0
    kernel.stage = r.index("stage");
  r.finish();
  return kernel;
}

ScheduleOp readScheduleOp(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  ScheduleOp op;
  op.kind = r.string("kind");
  op.stage = r.index("stage");
  op.microBatch = r.index("micro_batch");
  op.peer = r.index("peer");
  op.buffers = r.indexList("buffers");
  r.finish();
  return op;
}

CudaArg readCudaArg(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  CudaArg arg;
  if (value.contains("buffer"))
    arg.buffer = r.index("buffer");
  else if (value.contains("length"))
    arg.length = r.index("length");
  else
    arg.scratch = r.integer("scratch");
  r.finish();
  return arg;
}

CudaLaunch readCudaLaunch(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  CudaLaunch l;
  l.kind = r.string("kind");
  l.entry = r.string("entry");
  const json &args = r.array("args");
  for (size_t i = 0; i < args.size(); ++i)
    l.args.push_back(readCudaArg(args[i], childPath(r.where("args"), i)));
  const json &grid = r.array("grid");
  if (grid.size() != 3)
    failAt(r.where("grid"), "expected 3 integers, got " + std::to_string(grid.size()));
  for (size_t i = 0; i < 3; ++i)
    l.grid[i] = ObjectReader::integerValue(grid[i], childPath(r.where("grid"), i));
  l.block = r.integer("block");
  l.shared = r.integer("shared");
  const json &params = r.field("params");
  if (!params.is_object())
    failAt(r.where("params"), "expected an object, got " + describe(params));
  l.params = params;
  r.finish();
  return l;
}

std::vector<CudaKernel> readCudaKernels(const json &list, const std::string &path) {
  if (!list.is_array())
    failAt(path, "expected an array, got " + describe(list));
  std::vector<CudaKernel> kernels;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = childPath(path, i);
    if (!list[i].is_array())
      failAt(at, "expected an array of launches, got " + describe(list[i]));
    CudaKernel k;
    for (size_t j = 0; j < list[i].size(); ++j)
      k.launches.push_back(readCudaLaunch(list[i][j], childPath(at, j)));
    kernels.push_back(std::move(k));
  }
  return kernels;
}

CudaProgram readCuda(const json &value) {
  ObjectReader r(value, "cuda");
  CudaProgram cuda;
  cuda.arch = r.string("arch");
  cuda.source = r.string("source");
  cuda.scratchBytes = r.integer("scratch_bytes");
  const json &errors = r.array("errors");
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i].is_string())
      failAt(childPath(r.where("errors"), i), "expected a string, got " + describe(errors[i]));
    cuda.errors.push_back(errors[i].get<std::string>());
  }
  cuda.step = readCudaKernels(r.field("step"), r.where("step"));
  cuda.update = readCudaKernels(r.field("update"), r.where("update"));
  r.finish();
  return cuda;
}

template <class T, class F>
std::vector<T> readList(ObjectReader &r, const char *key, F readItem) {
  const json &list = r.array(key);
  std::vector<T> items;
  items.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i)
    items.push_back(readItem(list[i], childPath(r.where(key), i)));
  return items;
}

} // namespace

Plan embc::runtime::detail::planFromJson(const json &body, json &memoryReport) {
  ObjectReader r(body, "");
  // Identity first: a body of another format or version should say so
  // rather than report its first unfamiliar field.
  std::string format = r.string("format");
  if (format != kPlanFormatName)
    failAt("format", "'" + format + "' is not an embc plan (expected '" +
                         kPlanFormatName + "')");
  int64_t version = r.integer("version");
  if (version != kPlanVersion)
    failAt("version", "plan format version " + std::to_string(version) +
                          ", this embrun reads version " +
                          std::to_string(kPlanVersion) +
                          ": recompile the model with a matching embc");

  Plan plan;
  plan.version = static_cast<uint32_t>(version);
  plan.model = r.string("model");
  plan.compiler = r.string("compiler");
  plan.config = readConfig(r.field("config"));
  plan.buffers = readList<Buffer>(r, "buffers", readBuffer);
  plan.params = readList<Param>(r, "params", readParam);
  plan.tables = readList<Table>(r, "tables", readTable);
  plan.packs = readList<ParamPack>(r, "packs", readPack);
  plan.tableBatches = readList<TableBatch>(r, "table_batches", readTableBatch);
  plan.inputs = readList<Input>(r, "inputs", readInput);
  plan.step = readList<Kernel>(r, "step", readKernel);
  plan.update = readList<Kernel>(r, "update", readKernel);
  plan.forwardKernels = r.integer("forward_kernels");
  if (body.contains("schedule")) // -emb-pipeline; absent: no schedule
    plan.schedule = readList<ScheduleOp>(r, "schedule", readScheduleOp);
  plan.lossBuffer = r.index("loss_buffer");
  plan.predictionBuffer = r.index("prediction_buffer");
  plan.arenaBytes = r.integer("arena_bytes");
  const json &notes = r.array("notes");
  for (size_t i = 0; i < notes.size(); ++i) {
    if (!notes[i].is_string())
      failAt(childPath("notes", i), "expected a string, got " + describe(notes[i]));
    plan.notes.push_back(notes[i].get<std::string>());
  }
  if (body.contains("cuda")) // absent: no CUDA program (embc --target=cpu)
    plan.cuda = readCuda(r.field("cuda"));
  memoryReport = r.field("memory");
  // The planner's summary: the strategy is read here; the peak and the
  // lower bound are derived data, checked by checkMemoryReport.
  plan.memory.peakBytes = plan.arenaBytes;
  if (memoryReport.is_object() && memoryReport.contains("strategy")) {
    ObjectReader m(memoryReport, "memory");
    plan.memory.strategy = m.string("strategy");
  }
  r.finish();
  return plan;
}
