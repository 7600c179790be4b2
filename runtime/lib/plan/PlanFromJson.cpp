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
#include <type_traits>

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

  /// Whether the object has `key` (for fields older plans lack).
  bool has(const char *key) const { return value.contains(key); }

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

  /// A JSON object kept as it is (a kernel's attrs, a launch's params).
  const json &object(const char *key) {
    const json &v = field(key);
    if (!v.is_object())
      failAt(where(key), "expected an object, got " + describe(v));
    return v;
  }

  /// An array whose elements `readItem(element, path)` reads.
  template <class T, class F> std::vector<T> list(const char *key, F readItem) {
    const json &items = array(key);
    std::vector<T> result;
    result.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i)
      result.push_back(readItem(items[i], childPath(where(key), i)));
    return result;
  }

  std::vector<int32_t> indexList(const char *key) { return list<int32_t>(key, indexValue); }
  std::vector<int64_t> integerList(const char *key) { return list<int64_t>(key, integerValue); }

  std::vector<std::string> stringList(const char *key) {
    return list<std::string>(key, [](const json &v, const std::string &at) {
      if (!v.is_string())
        failAt(at, "expected a string, got " + describe(v));
      return v.get<std::string>();
    });
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

Initializer readInitializer(const json &value, const std::string &path);
Optimizer readOptimizer(const json &value, const std::string &path);

/// Reads field `key` of `r` into `out` by the member's type: the one place
/// that maps a plan struct's C++ types to their JSON checks. Integers of 32
/// bits are buffer references (ObjectReader::index); `what` names an enum's
/// set of words in messages.
template <class M>
void readMember(ObjectReader &r, const char *key, M &out, const char *what) {
  if constexpr (std::is_same_v<M, std::string>)
    out = r.string(key);
  else if constexpr (std::is_same_v<M, bool>)
    out = r.boolean(key);
  else if constexpr (std::is_same_v<M, double>)
    out = r.number(key);
  else if constexpr (std::is_same_v<M, int64_t>)
    out = r.integer(key);
  else if constexpr (std::is_same_v<M, uint64_t>)
    out = r.unsignedInteger(key);
  else if constexpr (std::is_same_v<M, int32_t>)
    out = r.index(key);
  else if constexpr (std::is_same_v<M, std::vector<int32_t>>)
    out = r.indexList(key);
  else if constexpr (std::is_same_v<M, std::vector<int64_t>>)
    out = r.integerList(key);
  else if constexpr (std::is_same_v<M, json>)
    out = r.object(key);
  else if constexpr (std::is_same_v<M, Initializer>)
    out = readInitializer(r.field(key), r.where(key));
  else if constexpr (std::is_same_v<M, Optimizer>)
    out = readOptimizer(r.field(key), r.where(key));
  else if constexpr (std::is_enum_v<M>)
    out = r.word<M>(key, what);
  else
    static_assert(!std::is_same_v<M, M>, "no JSON reader for this member type");
}

/// One field of the plan struct S: its JSON key and the member it fills.
/// `optional`: plans written before the field lack it, and the member keeps
/// its default. `what`: an enum's set of words, for messages.
template <class S, class M> struct Field {
  const char *key;
  M S::*member;
  bool optional = false;
  const char *what = nullptr;
};

template <class S, class M> Field<S, M> field(const char *key, M S::*member) {
  return {key, member};
}
template <class S, class M> Field<S, M> optionalField(const char *key, M S::*member) {
  return {key, member, true};
}
template <class S, class E>
Field<S, E> word(const char *key, E S::*member, const char *what, bool optional = false) {
  return {key, member, optional, what};
}

template <class S, class M> void readField(ObjectReader &r, S &into, const Field<S, M> &f) {
  if (!f.optional || r.has(f.key))
    readMember(r, f.key, into.*f.member, f.what);
}
/// A field read by hand: `read(r, into)`.
template <class S, class F> void readField(ObjectReader &r, S &into, const F &read) {
  read(r, into);
}

/// The object at `path` read into an S field by field, in the writer's
/// order (so the first bad field is the one reported); a field not listed
/// is an error.
template <class S, class... Fields>
void readFields(ObjectReader &r, S &into, const Fields &...fields) {
  (readField(r, into, fields), ...);
}

template <class S, class... Fields>
S readObject(const json &value, const std::string &path, const Fields &...fields) {
  ObjectReader r(value, path);
  S into;
  readFields(r, into, fields...);
  r.finish();
  return into;
}

Initializer readInitializer(const json &value, const std::string &path) {
  using I = Initializer;
  return readObject<I>(value, path, word("kind", &I::kind, "initializer"),
                       field("value", &I::value), field("low", &I::low),
                       field("high", &I::high), field("mean", &I::mean), field("std", &I::std),
                       field("gain", &I::gain));
}

Optimizer readOptimizer(const json &value, const std::string &path) {
  using O = Optimizer;
  return readObject<O>(
      value, path, word("kind", &O::kind, "optimizer"), field("lr", &O::lr),
      field("momentum", &O::momentum), field("beta1", &O::beta1), field("beta2", &O::beta2),
      field("eps", &O::eps), field("weight_decay", &O::weightDecay),
      field("initial_accumulator", &O::initialAccumulator),
      word("weight_decay_mode", &O::weightDecayMode, "weight decay mode"));
}

LossScaling readLossScaling(const json &value, const std::string &path) {
  using L = LossScaling;
  return readObject<L>(value, path, field("enabled", &L::enabled),
                       field("initial", &L::initial), field("growth", &L::growth),
                       field("backoff", &L::backoff), field("interval", &L::interval));
}

TrainingConfig readConfig(const json &value) {
  using C = TrainingConfig;
  return readObject<C>(
      value, "config", field("batch_size", &C::batchSize),
      field("grad_accumulation", &C::gradAccumulation),
      field("grad_clip_norm", &C::gradClipNorm),
      word("lr_schedule", &C::lrSchedule, "learning-rate schedule"),
      field("warmup_steps", &C::warmupSteps), field("decay_steps", &C::decaySteps),
      field("seed", &C::seed), word("loss", &C::loss, "loss"),
      word("precision", &C::precision, "precision"),
      // -emb-quantize's loss scaling; plans written before it have none.
      [](ObjectReader &r, C &config) {
        if (r.has("loss_scaling"))
          config.lossScaling = readLossScaling(r.field("loss_scaling"), r.where("loss_scaling"));
      },
      // -emb-pipeline's settings; plans written before it run one micro-batch.
      optionalField("micro_batches", &C::microBatches),
      optionalField("pipeline_stages", &C::pipelineStages),
      word("schedule", &C::schedule, "schedule", /*optional=*/true),
      // -emb-distribute's ranks; absent reads as one rank.
      optionalField("data_parallel", &C::dataParallel),
      optionalField("stage_ranks", &C::stageRanks));
}

Buffer readBuffer(const json &value, const std::string &path) {
  using B = Buffer;
  return readObject<B>(
      value, path, field("name", &B::name),
      word("role", &B::role, "role"), word("dtype", &B::dtype, "dtype"),
      field("shape", &B::shape), field("dynamic", &B::dynamic), field("offset", &B::offset),
      field("bytes", &B::bytes), field("parent", &B::parent),
      // Memory planning's fields (format v3); older bodies lack them: one
      // slot, no origin, live for the whole run.
      optionalField("slots", &B::slots), optionalField("origin", &B::origin),
      optionalField("first_use", &B::firstUse), optionalField("last_use", &B::lastUse),
      // int32 read as a plain integer, as the writer has always had it.
      [](ObjectReader &r, B &buffer) { buffer.rank = r.integer("rank"); });
}

ParamPack readPack(const json &value, const std::string &path) {
  using P = ParamPack;
  return readObject<P>(value, path, field("name", &P::name), field("buffer", &P::buffer),
                       field("grad", &P::grad), field("state", &P::state),
                       field("members", &P::members), field("buckets", &P::buckets),
                       field("optimizer", &P::optimizer));
}

/// The fields a table and a table batch begin with, in the writer's order.
template <class T> void readTableHead(ObjectReader &r, T &into) {
  readFields(r, into, field("name", &T::name), field("rows", &T::rows), field("dim", &T::dim),
             field("buffer", &T::buffer), field("grad_rows", &T::gradRows),
             field("grad_values", &T::gradValues), field("state", &T::state));
}

TableBatch readTableBatch(const json &value, const std::string &path) {
  using T = TableBatch;
  return readObject<T>(value, path, readTableHead<T>, field("members", &T::members),
                       field("row_offsets", &T::rowOffsets), field("optimizer", &T::optimizer),
                       word("storage", &T::storage, "storage", true),
                       optionalField("qparams", &T::qparams),
                       // Written only when not device (format v12).
                       word("placement", &T::placement, "placement", true));
}

Param readParam(const json &value, const std::string &path) {
  using P = Param;
  return readObject<P>(value, path, field("name", &P::name), field("buffer", &P::buffer),
                       field("grad", &P::grad), field("state", &P::state),
                       field("init", &P::init), field("optimizer", &P::optimizer));
}

Table readTable(const json &value, const std::string &path) {
  using T = Table;
  return readObject<T>(
      value, path, readTableHead<T>, field("init", &T::init), field("optimizer", &T::optimizer),
      // -emb-quantize's fields; plans written before them hold f32 tables.
      word("storage", &T::storage, "storage", true), optionalField("qparams", &T::qparams),
      field("shard_rows", &T::shardRows),
      // Written only when not device (format v12).
      word("placement", &T::placement, "placement", true));
}

Input readInput(const json &value, const std::string &path) {
  using I = Input;
  return readObject<I>(
      value, path, field("feature", &I::feature), field("source", &I::source),
      word("role", &I::role, "input role"), field("buffer", &I::buffer),
      field("width", &I::width), field("vocab", &I::vocab), field("hotness", &I::hotness),
      [](ObjectReader &r, I &input) { // "" for inputs other than labels
        if (std::string kind = r.string("label_kind"); !kind.empty())
          input.labelKind = r.word<LabelKind>("label_kind", "label kind");
      },
      field("power", &I::power));
}

Kernel readKernel(const json &value, const std::string &path) {
  using K = Kernel;
  return readObject<K>(value, path, field("op", &K::op), field("inputs", &K::inputs),
                       field("outputs", &K::outputs), field("attrs", &K::attrs),
                       field("bytes", &K::bytes),
                       optionalField("stage", &K::stage)); // -emb-pipeline; absent: stage 0
}

ScheduleOp readScheduleOp(const json &value, const std::string &path) {
  using O = ScheduleOp;
  return readObject<O>(value, path, field("kind", &O::kind), field("stage", &O::stage),
                       field("micro_batch", &O::microBatch), field("peer", &O::peer),
                       field("buffers", &O::buffers));
}

CudaArg readCudaArg(const json &value, const std::string &path) {
  ObjectReader r(value, path);
  CudaArg arg;
  if (r.has("buffer"))
    arg.buffer = r.index("buffer");
  else if (r.has("length"))
    arg.length = r.index("length");
  else
    arg.scratch = r.integer("scratch");
  r.finish();
  return arg;
}

CudaLaunch readCudaLaunch(const json &value, const std::string &path) {
  using L = CudaLaunch;
  return readObject<L>(
      value, path, field("kind", &L::kind), field("entry", &L::entry),
      [](ObjectReader &r, L &l) {
        l.args = r.list<CudaArg>("args", readCudaArg);
        const json &grid = r.array("grid");
        if (grid.size() != 3)
          failAt(r.where("grid"), "expected 3 integers, got " + std::to_string(grid.size()));
        for (size_t i = 0; i < 3; ++i)
          l.grid[i] = ObjectReader::integerValue(grid[i], childPath(r.where("grid"), i));
      },
      field("block", &L::block), field("shared", &L::shared), field("params", &L::params));
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
  using P = CudaProgram;
  return readObject<P>(
      value, "cuda", field("arch", &P::arch), field("source", &P::source),
      field("scratch_bytes", &P::scratchBytes),
      [](ObjectReader &r, P &cuda) {
        cuda.errors = r.stringList("errors");
        if (r.has("non_finite_errors")) {
          cuda.nonFiniteErrors = r.integerList("non_finite_errors");
          for (size_t i = 0; i < cuda.nonFiniteErrors.size(); ++i)
            if (cuda.nonFiniteErrors[i] < 1 ||
                cuda.nonFiniteErrors[i] > int64_t(cuda.errors.size()))
              failAt(childPath(r.where("non_finite_errors"), i),
                     "error code " + std::to_string(cuda.nonFiniteErrors[i]) +
                         " is not one of the " + std::to_string(cuda.errors.size()) +
                         " errors");
        }
        cuda.step = readCudaKernels(r.field("step"), r.where("step"));
        cuda.update = readCudaKernels(r.field("update"), r.where("update"));
        if (r.has("lengths") || r.has("length_kernels")) {
          cuda.lengthKernels = r.integerList("length_kernels");
          const json &list = r.field("lengths");
          if (!list.is_array())
            failAt(r.where("lengths"), "expected an array, got " + describe(list));
          for (size_t i = 0; i < list.size(); ++i) {
            using V = CudaLengthVariant;
            const std::string at = childPath(r.where("lengths"), i);
            cuda.lengths.push_back(readObject<V>(
                list[i], at, field("length", &V::length), [&](ObjectReader &v, V &variant) {
                  variant.step = readCudaKernels(v.field("step"), v.where("step"));
                }));
          }
        }
      });
}

/// The model's data schema, checked by the one schema parser
/// (data/Schema.h) that the compiler used; its JSON pointer becomes the
/// plan's path ("/data/columns/2/encoding" -> "data.columns[2].encoding").
data::DataSchema readDataSchema(const json &value) {
  try {
    return data::parseDataSchema(value, "/data");
  } catch (const data::SchemaError &e) {
    // The schema's arrays are `columns` and a column's `clip`: a number
    // after either is an index, any other token a key.
    std::string path, previous;
    for (size_t at = 0; at < e.pointer.size();) {
      size_t next = e.pointer.find('/', at + 1);
      if (next == std::string::npos)
        next = e.pointer.size();
      std::string token = e.pointer.substr(at + 1, next - at - 1);
      const bool index = (previous == "columns" || previous == "clip") && !token.empty() &&
                         token.size() <= 9 &&
                         token.find_first_not_of("0123456789") == std::string::npos;
      path = path.empty() ? token
             : index      ? childPath(path, size_t(std::stoul(token)))
                          : childPath(path, token);
      previous = token;
      at = next;
    }
    failAt(path.empty() ? "data" : path, e.what());
  }
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
  if (r.has("overrides")) // absent: none
    plan.overrides = r.stringList("overrides");
  if (r.has("data")) // absent: no data schema
    plan.dataSchema = readDataSchema(r.field("data"));
  plan.config = readConfig(r.field("config"));
  plan.buffers = r.list<Buffer>("buffers", readBuffer);
  plan.params = r.list<Param>("params", readParam);
  plan.tables = r.list<Table>("tables", readTable);
  plan.packs = r.list<ParamPack>("packs", readPack);
  plan.tableBatches = r.list<TableBatch>("table_batches", readTableBatch);
  plan.inputs = r.list<Input>("inputs", readInput);
  plan.step = r.list<Kernel>("step", readKernel);
  plan.update = r.list<Kernel>("update", readKernel);
  plan.forwardKernels = r.integer("forward_kernels");
  if (body.contains("schedule")) // -emb-pipeline; absent: no schedule
    plan.schedule = r.list<ScheduleOp>("schedule", readScheduleOp);
  plan.lossBuffer = r.index("loss_buffer");
  plan.predictionBuffer = r.index("prediction_buffer");
  plan.arenaBytes = r.integer("arena_bytes");
  plan.notes = r.stringList("notes");
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

std::optional<data::DataSchema> embc::runtime::parseDataSchemaText(const std::string &text,
                                                                  std::string &error) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    error = "not JSON";
    return std::nullopt;
  }
  try {
    return data::parseDataSchema(value, "/data");
  } catch (const data::SchemaError &e) {
    error = "at " + e.pointer + ": " + e.what();
  } catch (const std::exception &e) {
    error = e.what();
  }
  return std::nullopt;
}
