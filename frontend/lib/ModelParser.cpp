//===- ModelParser.cpp - model.json -> checked Model -----------------------===//
//
// Reads a model file section by section (docs/model-format.md), then resolves
// references, orders the layers, computes every width and checks that the
// graph is consistent. The first problem found is reported with its JSON
// pointer; nothing is silently defaulted that the format does not define.
//
//===----------------------------------------------------------------------===//

#include "embc/frontend/Model.h"

#include "JsonNode.h"
#include "ModelOverrides.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

using namespace embc::frontend;
namespace runtime = embc::runtime;

namespace {

/// Formats a double for messages in the shortest "%g" form ("1e-09", "0.05").
std::string formatNumber(double d) {
  char buffer[32];
  snprintf(buffer, sizeof(buffer), "%g", d);
  return buffer;
}

// Limits that catch typos long before they exhaust memory.
constexpr int64_t kMaxDim = 65536;
constexpr int64_t kMaxRows = int64_t(1) << 40;
constexpr int64_t kMaxBatch = int64_t(1) << 24;
constexpr int64_t kMaxHotness = 4096;
constexpr int64_t kMaxNegatives = 1024;
constexpr int64_t kMaxWidth = int64_t(1) << 20;
constexpr int64_t kMaxLayersPerBlock = 64;
constexpr size_t kMaxNesting = 64;

//===----------------------------------------------------------------------===//
// JSON text -> Json, with duplicate keys and nesting depth checked
//===----------------------------------------------------------------------===//

/// Converts a byte offset into a 1-based line and column.
void lineColumn(std::string_view text, size_t byte, int &line, int &column) {
  line = 1;
  column = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
}

/// Parses JSON text. nlohmann keeps the last of duplicate keys silently; a
/// model file with two "lr" fields is a mistake, so the parse callback
/// tracks the path and rejects duplicates.
Json parseJsonText(std::string_view text) {
  struct Frame {
    bool isArray = false;
    size_t index = 0;
    std::set<std::string> keys;
    std::string key;
  };
  std::vector<Frame> stack;
  // Pointer of the value being parsed: each enclosing object contributes
  // its current key, each array the index of its current element.
  auto pointerOf = [&](size_t frames) {
    std::string p;
    for (size_t i = 0; i < frames; ++i)
      p += "/" + (stack[i].isArray ? std::to_string(stack[i].index)
                                   : escapePointerToken(stack[i].key));
    return p;
  };
  auto elementDone = [&] {
    if (!stack.empty() && stack.back().isArray)
      ++stack.back().index;
  };
  Json::parser_callback_t callback = [&](int, Json::parse_event_t event,
                                         Json &parsed) {
    switch (event) {
    case Json::parse_event_t::object_start:
    case Json::parse_event_t::array_start:
      if (stack.size() >= kMaxNesting)
        throw SchemaError(pointerOf(stack.size()),
                          "JSON nesting deeper than " +
                              std::to_string(kMaxNesting) + " levels");
      stack.push_back(Frame{event == Json::parse_event_t::array_start});
      break;
    case Json::parse_event_t::key: {
      Frame &frame = stack.back();
      std::string key = parsed.get<std::string>();
      if (!frame.keys.insert(key).second)
        throw SchemaError(pointerOf(stack.size() - 1) + "/" +
                              escapePointerToken(key),
                          "duplicate key '" + key + "'");
      frame.key = key;
      break;
    }
    case Json::parse_event_t::object_end:
    case Json::parse_event_t::array_end:
      stack.pop_back();
      elementDone();
      break;
    case Json::parse_event_t::value:
      elementDone();
      break;
    }
    return true;
  };
  return Json::parse(text.begin(), text.end(), callback);
}

//===----------------------------------------------------------------------===//
// Sections
//===----------------------------------------------------------------------===//

Initializer readInitializer(const JsonNode &node) {
  node.expectObject("an initializer",
                    {"kind", "value", "low", "high", "mean", "std", "gain"});
  Initializer init;
  using Init = runtime::InitKind;
  init.kind = node.getWord<Init>("kind");
  auto allowOnly = [&](std::initializer_list<const char *> fields) {
    for (const char *f : {"value", "low", "high", "mean", "std", "gain"}) {
      bool allowed = false;
      for (const char *a : fields)
        allowed |= std::string(a) == f;
      if (!allowed && node.has(f))
        node.failAt(f, std::string("'") + f + "' does not apply to a '" +
                           runtime::enumString(init.kind) + "' initializer");
    }
  };
  // Parameters are float32: an initial value beyond its range is infinite.
  constexpr double kFloatMax = 3.4028234663852886e38;
  auto inFloatRange = [&](const char *key, double v, const char *what) {
    if (!(std::abs(v) <= kFloatMax))
      node.failAt(key, std::string(what) + " " + formatNumber(v) +
                           " is beyond the float32 range (+-3.4e38) parameters are kept in");
  };
  if (init.kind == Init::Zeros) {
    allowOnly({});
  } else if (init.kind == Init::Constant) {
    allowOnly({"value"});
    init.value = node.getDouble("value");
    inFloatRange("value", init.value, "'value'");
  } else if (init.kind == Init::Uniform) {
    allowOnly({"low", "high"});
    init.low = node.getDouble("low");
    init.high = node.getDouble("high");
    if (!(init.low < init.high))
      node.failAt("high", "uniform initializer needs low < high, got low = " +
                              formatNumber(init.low) +
                              ", high = " + formatNumber(init.high));
    inFloatRange("low", init.low, "'low'");
    inFloatRange("high", init.high, "'high'");
    inFloatRange("high", init.high - init.low, "the range high - low =");
  } else if (init.kind == Init::Normal) {
    allowOnly({"mean", "std"});
    init.mean = node.getDouble("mean", 0.0);
    init.std = node.getDouble("std");
    if (!(init.std > 0))
      node.failAt("std", "'std' must be positive, got " +
                             formatNumber(init.std));
    inFloatRange("mean", init.mean, "'mean'");
    // Draws reach several standard deviations from the mean.
    inFloatRange("std", std::abs(init.mean) + 10 * init.std, "mean + 10 std =");
  } else {
    allowOnly({"gain"});
    init.gain = node.getDouble("gain", 1.0);
    if (!(init.gain > 0))
      node.failAt("gain", "'gain' must be positive, got " +
                              formatNumber(init.gain));
  }
  return init;
}

/// Reads an optimizer; `forEmbedding` selects the rules for table rows.
OptimizerConfig readOptimizer(const JsonNode &node, bool forEmbedding) {
  node.expectObject("an optimizer",
                    {"type", "lr", "momentum", "beta1", "beta2", "eps",
                     "weight_decay", "weight_decay_mode",
                     "initial_accumulator"});
  OptimizerConfig opt;
  using Kind = runtime::OptimizerKind;
  const Kind kind = node.getWord<Kind>("type");
  opt.kind = kind;
  const std::string k = runtime::enumString(kind);
  bool isAdagrad = kind == Kind::Adagrad || kind == Kind::RowwiseAdagrad;
  bool isAdam = kind == Kind::Adam || kind == Kind::AdamW || kind == Kind::Lamb;
  auto reject = [&](const char *field, bool applies) {
    if (!applies && node.has(field))
      node.failAt(field, std::string("'") + field +
                             "' does not apply to the '" + k + "' optimizer");
  };
  reject("momentum", kind == Kind::Sgd);
  reject("beta1", isAdam);
  reject("beta2", isAdam);
  reject("eps", isAdam || isAdagrad);
  reject("initial_accumulator", isAdagrad);

  opt.lr = node.getDouble("lr");
  if (!(opt.lr > 0))
    node.failAt("lr", "'lr' must be positive, got " + formatNumber(opt.lr));
  opt.momentum = node.getDouble("momentum", 0.0);
  if (!(opt.momentum >= 0 && opt.momentum < 1))
    node.failAt("momentum", "'momentum' must be in [0, 1)");
  opt.beta1 = node.getDouble("beta1", 0.9);
  if (!(opt.beta1 >= 0 && opt.beta1 < 1))
    node.failAt("beta1", "'beta1' must be in [0, 1)");
  opt.beta2 = node.getDouble("beta2", 0.999);
  if (!(opt.beta2 >= 0 && opt.beta2 < 1))
    node.failAt("beta2", "'beta2' must be in [0, 1)");
  opt.eps = node.getDouble("eps", 1e-8);
  if (!(opt.eps > 0))
    node.failAt("eps", "'eps' must be positive");
  opt.initialAccumulator = node.getDouble("initial_accumulator", 0.0);
  if (!(opt.initialAccumulator >= 0))
    node.failAt("initial_accumulator", "'initial_accumulator' must be >= 0");
  opt.weightDecay = node.getDouble("weight_decay", 0.0);
  if (!(opt.weightDecay >= 0))
    node.failAt("weight_decay", "'weight_decay' must be >= 0");

  if (forEmbedding) {
    if (kind == Kind::Lamb)
      node.failAt("type", "'" + k + "' is not supported for embedding tables: its "
                          "trust ratio needs whole-tensor norms (use it for "
                          "the dense optimizer)");
    if (opt.weightDecay > 0 && !node.has("weight_decay_mode"))
      node.failAt("weight_decay",
                  "embedding weight decay needs 'weight_decay_mode': 'lazy' "
                  "(touched rows only) or 'global' (every row, every step)");
    opt.weightDecayMode =
        node.getWord("weight_decay_mode", std::optional(runtime::WeightDecayMode::Lazy));
  } else {
    if (kind == Kind::RowwiseAdagrad)
      node.failAt("type", "'" + k + "' is for embedding tables; use '" +
                              runtime::enumString(Kind::Adagrad) + "' for dense parameters");
    opt.weightDecayMode =
        node.getWord("weight_decay_mode", std::optional(runtime::WeightDecayMode::Global));
    if (opt.weightDecayMode != runtime::WeightDecayMode::Global)
      node.failAt("weight_decay_mode",
                  "dense parameters always decay globally; 'lazy' applies "
                  "only to embedding rows");
  }
  return opt;
}

Feature readFeature(const JsonNode &node) {
  if (!node.json().is_object())
    node.fail("a feature must be an object, got " + describeType(node.json()));
  Feature f;
  f.pointer = node.pointer();
  std::string type =
      node.getEnum("type", {"dense", "sparse", "negatives", "label", "sequence"});
  if (type == "dense") {
    node.expectObject("a dense feature", {"name", "type", "dim", "source"});
    f.kind = FeatureKind::Dense;
    f.dim = node.getInt("dim", 1, kMaxDim);
  } else if (type == "sparse") {
    node.expectObject("a sparse feature", {"name", "type", "table", "vocab",
                                           "hotness", "pooling", "hash",
                                           "weighted", "source"});
    f.kind = FeatureKind::Sparse;
    f.table = node.getIdentifier("table");
    f.vocab = node.getInt("vocab", 1, kMaxRows);
    f.hotness = node.getInt("hotness", 1, kMaxHotness, 1);
    f.pooling = node.getWord("pooling", std::optional(runtime::Pooling::Sum));
    f.hash = node.getBool("hash", false);
    f.weighted = node.getBool("weighted", false);
    if (f.weighted && f.pooling == runtime::Pooling::Max)
      node.failAt("weighted", "'max' pooling cannot be weighted (use 'sum' or "
                              "'mean' with per-id weights)");
  } else if (type == "sequence") {
    node.expectObject("a sequence feature",
                      {"name", "type", "table", "vocab", "max_len", "positions", "source"});
    f.kind = FeatureKind::Sequence;
    f.table = node.getIdentifier("table");
    f.vocab = node.getInt("vocab", 1, kMaxRows);
    f.hotness = node.getInt("max_len", 1, kMaxHotness);
    // "none", or a kind of the plan's PositionKind.
    std::vector<std::string_view> positions = {"none"};
    for (size_t i = 0; i < runtime::enumCount<runtime::PositionKind>(); ++i)
      positions.push_back(runtime::enumName(runtime::PositionKind(i)));
    const std::string kind = node.getEnum("positions", positions, "none");
    if (kind != "none")
      f.positions = runtime::parseEnum<runtime::PositionKind>(kind);
  } else if (type == "negatives") {
    node.expectObject("a negatives feature",
                      {"name", "type", "table", "count", "power",
                       "source"});
    f.kind = FeatureKind::Negatives;
    f.table = node.getIdentifier("table");
    f.count = node.getInt("count", 1, kMaxNegatives);
    f.power = node.getDouble("power", 0.75);
    if (!(f.power >= 0 && f.power <= 1))
      node.failAt("power", "'power' must be in [0, 1]");
  } else {
    node.expectObject("a label feature", {"name", "type", "kind", "source"});
    f.kind = FeatureKind::Label;
    f.labelKind = node.getWord("kind", std::optional(runtime::LabelKind::Binary));
  }
  f.name = node.getIdentifier("name");
  // The data column the feature reads; by default the one named like it.
  f.source = node.has("source") ? node.getIdentifier("source") : f.name;
  return f;
}

Table readTable(const JsonNode &node, const OptimizerConfig &defaultOptimizer,
                runtime::Storage defaultDtype) {
  node.expectObject("an embedding table", {"name", "rows", "dim", "dtype", "init",
                                           "optimizer", "sharding", "placement"});
  Table t;
  t.pointer = node.pointer();
  t.name = node.getIdentifier("name");
  t.rows = node.getInt("rows", 1, kMaxRows);
  t.dim = node.getInt("dim", 1, kMaxDim);
  if (t.rows > kMaxRows / t.dim)
    node.failAt("rows", "table '" + t.name + "' has " +
                            std::to_string(t.rows) + " x " +
                            std::to_string(t.dim) +
                            " elements, more than the limit 2^40");
  t.dtype = node.getWord("dtype", std::optional(defaultDtype));
  if (t.dtype == runtime::Storage::Int4 && t.dim % 2 != 0)
    node.failAt(node.has("dtype") ? "dtype" : "dim",
                "table '" + t.name + "' is stored as int4" +
                    (node.has("dtype") ? "" : " (plan.quantize)") +
                    ", which packs two values per byte, but its dim " +
                    std::to_string(t.dim) + " is odd; use an even dim or int8");
  if (node.has("init")) {
    t.init = readInitializer(node.child("init"));
    const runtime::InitKind init = t.init.kind;
    if (init == runtime::InitKind::XavierUniform || init == runtime::InitKind::XavierNormal)
      node.child("init").failAt(
          "kind", "Xavier initialisation is for dense weights; use 'uniform' "
                  "or 'normal' for embedding tables");
  } else {
    double bound = 1.0 / std::sqrt(double(t.rows));
    t.init = Initializer{runtime::InitKind::Uniform, 0, -bound, bound, 0, 0, 1};
  }
  t.optimizer = node.has("optimizer")
                    ? readOptimizer(node.child("optimizer"), true)
                    : defaultOptimizer;
  t.sharding = node.getEnum(
      "sharding", {"none", "table_wise", "row_wise", "column_wise"}, "none");
  t.placement = node.getWord("placement", std::optional(runtime::Placement::Device));
  if (t.placement != runtime::Placement::Device && t.sharding != "none")
    node.failAt("placement", "table '" + t.name + "' has placement " +
                                 runtime::enumString(t.placement) + " and sharding " +
                                 t.sharding +
                                 ": a sharded table lives on its ranks' devices (remove "
                                 "'placement' or 'sharding')");
  return t;
}

runtime::Activation readActivation(const JsonNode &node, const std::string &key,
                                   runtime::Activation dflt) {
  return node.getWord(key, std::optional(dflt));
}

/// Reads `input` (one name) or `inputs` (a list), whichever the type takes.
std::vector<std::string> readInputs(const JsonNode &node, bool list,
                                    size_t minSize) {
  if (!list)
    return {node.getIdentifier("input")};
  return node.getIdentifierList("inputs", minSize);
}

double readEps(const JsonNode &node) {
  const double eps = node.getDouble("eps", 1e-5);
  if (!(eps > 0) || !std::isfinite(eps))
    node.failAt("eps", "'eps' must be positive and finite");
  return eps;
}

/// A dropout probability `key` (default 0): in [0, 1).
double readDropout(const JsonNode &node, const char *key) {
  const double rate = node.getDouble(key, 0.0);
  if (!(rate >= 0.0 && rate < 1.0))
    node.failAt(key, std::string("'") + key + "' must be in [0, 1) (the probability of " +
                         "zeroing an element while training)");
  return rate;
}

Layer readLayer(const JsonNode &node) {
  if (!node.json().is_object())
    node.fail("a layer must be an object, got " + describeType(node.json()));
  Layer l;
  l.pointer = node.pointer();
  l.type = node.getEnum("type", {"mlp", "dense", "activation", "concat",
                                 "dot_interaction", "cross", "dot", "add",
                                 "sequence_pool", "self_attention", "layer_norm",
                                 "encoder", "dropout", "tied"});
  const std::string &t = l.type;
  if (t == "mlp") {
    node.expectObject("an 'mlp' layer", {"name", "type", "input", "sizes",
                                         "activation", "final_activation",
                                         "bias", "init"});
    l.inputs = readInputs(node, false, 1);
    l.sizes = node.getIntList("sizes", 1, kMaxWidth);
    if (int64_t(l.sizes.size()) > kMaxLayersPerBlock)
      node.failAt("sizes", "an mlp may have at most " +
                               std::to_string(kMaxLayersPerBlock) + " layers");
    l.activation = readActivation(node, "activation", runtime::Activation::Relu);
    l.finalActivation = readActivation(node, "final_activation", l.activation);
  } else if (t == "dense") {
    node.expectObject("a 'dense' layer", {"name", "type", "input", "size",
                                          "activation", "bias", "init"});
    l.inputs = readInputs(node, false, 1);
    l.sizes = {node.getInt("size", 1, kMaxWidth)};
    l.activation = l.finalActivation =
        readActivation(node, "activation", runtime::Activation::None);
  } else if (t == "tied") {
    node.expectObject("a 'tied' layer", {"name", "type", "input", "table"});
    l.inputs = readInputs(node, false, 1);
    l.table = node.getIdentifier("table");
  } else if (t == "activation") {
    node.expectObject("an 'activation' layer",
                      {"name", "type", "input", "kind"});
    l.inputs = readInputs(node, false, 1);
    using A = runtime::Activation;
    l.activation = node.getWord("kind", {A::Relu, A::Sigmoid, A::Tanh, A::Gelu});
  } else if (t == "concat") {
    node.expectObject("a 'concat' layer", {"name", "type", "inputs"});
    l.inputs = readInputs(node, true, 2);
  } else if (t == "dot_interaction") {
    node.expectObject("a 'dot_interaction' layer",
                      {"name", "type", "inputs", "self_interaction",
                       "keep_first"});
    l.inputs = readInputs(node, true, 2);
    l.selfInteraction = node.getBool("self_interaction", false);
    l.keepFirst = node.getBool("keep_first", true);
  } else if (t == "cross") {
    node.expectObject("a 'cross' layer",
                      {"name", "type", "input", "num_layers"});
    l.inputs = readInputs(node, false, 1);
    l.numLayers = node.getInt("num_layers", 1, kMaxLayersPerBlock, 1);
  } else if (t == "self_attention") {
    node.expectObject("a 'self_attention' layer",
                      {"name", "type", "input", "heads", "causal", "dropout"});
    l.inputs = readInputs(node, false, 1);
    l.heads = node.getInt("heads", 1, 4096, 1);
    l.causal = node.getBool("causal", false);
    l.dropout = readDropout(node, "dropout");
  } else if (t == "dropout") {
    node.expectObject("a 'dropout' layer", {"name", "type", "input", "rate"});
    l.inputs = readInputs(node, false, 1);
    if (!node.has("rate"))
      node.fail("a 'dropout' layer needs 'rate'");
    l.dropout = readDropout(node, "rate");
  } else if (t == "layer_norm") {
    node.expectObject("a 'layer_norm' layer", {"name", "type", "input", "eps"});
    l.inputs = readInputs(node, false, 1);
    l.eps = readEps(node);
  } else if (t == "encoder") {
    node.expectObject("an 'encoder' layer", {"name", "type", "input", "layers", "heads",
                                             "d_model", "ffn", "dropout", "causal", "norm",
                                             "eps"});
    l.inputs = readInputs(node, false, 1);
    l.encoder.layers = node.getInt("layers", 1, kMaxLayersPerBlock, 1);
    l.heads = node.getInt("heads", 1, 4096, 1);
    l.sizes = {node.getInt("d_model", 1, kMaxWidth, 0)}; // 0: the input's width
    l.encoder.ffn = node.getInt("ffn", 1, kMaxWidth, 0);  // 0: 4 d_model
    l.dropout = readDropout(node, "dropout");
    l.causal = node.getBool("causal", false);
    l.encoder.preNorm = node.getEnum("norm", {"pre", "post"}, "pre") == "pre";
    l.eps = readEps(node);
  } else if (t == "sequence_pool") {
    node.expectObject("a 'sequence_pool' layer", {"name", "type", "input", "mode"});
    l.inputs = readInputs(node, false, 1);
    l.sequencePooling =
        node.getWord("mode", std::optional(runtime::SequencePooling::Mean));
  } else if (t == "dot") {
    node.expectObject("a 'dot' layer", {"name", "type", "inputs"});
    l.inputs = readInputs(node, true, 2);
    if (l.inputs.size() != 2)
      node.failAt("inputs", "a 'dot' layer takes exactly 2 inputs, got " +
                                std::to_string(l.inputs.size()));
  } else {
    node.expectObject("an 'add' layer", {"name", "type", "inputs", "bias"});
    l.inputs = readInputs(node, true, 1);
  }
  if (t == "mlp" || t == "dense") {
    l.bias = node.getBool("bias", true);
    l.init = node.has("init") ? readInitializer(node.child("init"))
                              : Initializer{runtime::InitKind::XavierUniform};
  } else if (t == "add") {
    l.bias = node.getBool("bias", false);
  } else {
    l.bias = t == "cross";
  }
  l.name = node.getIdentifier("name");
  return l;
}

Training readTraining(const JsonNode &node) {
  node.expectObject("'training'", {"batch_size", "precision", "grad_clip_norm",
                                   "grad_accumulation", "warmup_steps",
                                   "lr_schedule", "decay_steps", "seed",
                                   "embedding_updates"});
  Training t;
  t.batchSize = node.getInt("batch_size", 1, kMaxBatch);
  t.precision = node.getWord("precision", std::optional(runtime::ComputeType::F32));
  t.gradClipNorm = node.getDouble("grad_clip_norm", 0.0);
  if (!(t.gradClipNorm >= 0))
    node.failAt("grad_clip_norm", "'grad_clip_norm' must be >= 0 (0 disables)");
  t.gradAccumulation = node.getInt("grad_accumulation", 1, 1 << 16, 1);
  t.warmupSteps = node.getInt("warmup_steps", 0, int64_t(1) << 40, 0);
  t.lrSchedule = node.getWord("lr_schedule", std::optional(runtime::LrSchedule::Constant));
  t.decaySteps = node.getInt("decay_steps", 0, int64_t(1) << 40, 0);
  if (t.lrSchedule != runtime::LrSchedule::Constant && t.decaySteps == 0)
    node.failAt("lr_schedule", "'lr_schedule' '" + runtime::enumString(t.lrSchedule) +
                                   "' needs 'decay_steps' > 0");
  t.seed = node.getInt("seed", 0, INT64_MAX, 0);
  t.embeddingUpdates =
      node.getEnum("embedding_updates", {"batch", "per_example", "hogwild"}, "batch");
  return t;
}

/// Parses "512MiB", "2GiB", "1.5GB", "4096" or an integer into bytes.
int64_t readByteSize(const JsonNode &node, const std::string &key) {
  JsonNode c = node.child(key);
  if (c.json().is_number_integer())
    return node.getInt(key, 1, int64_t(1) << 50);
  if (!c.json().is_string())
    c.fail("'" + key + "' must be a byte count or a string such as '2GiB', "
                       "got " + describeType(c.json()));
  std::string s = c.json().get<std::string>();
  // DIGITS[.DIGITS]UNIT, nothing else: no sign, space, exponent or hex.
  size_t pos = 0;
  while (pos < s.size() && std::isdigit((unsigned char)s[pos]))
    ++pos;
  if (pos > 0 && pos < s.size() && s[pos] == '.') {
    size_t fraction = ++pos;
    while (pos < s.size() && std::isdigit((unsigned char)s[pos]))
      ++pos;
    if (pos == fraction)
      pos = 0;
  }
  double number = pos ? std::strtod(s.substr(0, pos).c_str(), nullptr) : 0;
  std::string unit = s.substr(pos);
  static const std::map<std::string, double> units = {
      {"", 1},          {"B", 1},          {"KB", 1e3},
      {"MB", 1e6},      {"GB", 1e9},       {"TB", 1e12},
      {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}};
  auto it = units.find(unit);
  if (pos == 0 || it == units.end() || !(number * it->second >= 1) ||
      number * it->second > double(int64_t(1) << 50))
    c.fail("'" + key + "' must be a size of at least 1 byte such as '512MiB', "
                       "'2GiB' or '1.5GB' (at most 1 PiB), got '" + s + "'");
  return int64_t(number * it->second);
}

PlanKnobs readPlan(const JsonNode &node) {
  node.expectObject("'plan'", {"memory_budget", "quantize", "remat",
                               "micro_batches", "pipeline_stages", "schedule",
                               "data_parallel", "pipeline_ranks"});
  PlanKnobs p;
  if (node.has("memory_budget"))
    p.memoryBudget = readByteSize(node, "memory_budget");
  p.quantize =
      node.getEnum("quantize", {"none", "fp16", "bf16", "int8", "int4", "auto"},
                   "none");
  if (p.quantize == "auto")
    node.failAt("quantize", "'quantize': 'auto' needs the budget-driven auto "
                            "planner, which is not available yet; choose "
                            "'none', 'fp16', 'bf16', 'int8' or 'int4'");
  p.remat = node.getEnum("remat", {"none", "auto", "all"}, "none");
  if (p.remat == "auto" && p.memoryBudget == 0)
    node.failAt("remat", "'remat': 'auto' needs 'memory_budget'");
  p.microBatches = node.getInt("micro_batches", 1, 1 << 16, 1);
  p.pipelineStages = node.getInt("pipeline_stages", 1, 1024, 1);
  p.schedule = node.getWord("schedule", std::optional(runtime::ScheduleKind::GPipe));
  p.dataParallel = node.getInt("data_parallel", 1, 1 << 20, 1);
  p.pipelineRanks = node.getInt("pipeline_ranks", 1, 1024, 1);
  if (p.pipelineRanks > p.pipelineStages)
    node.failAt("pipeline_ranks",
                "'pipeline_ranks' (" + std::to_string(p.pipelineRanks) +
                    ") must not exceed 'pipeline_stages' (" +
                    std::to_string(p.pipelineStages) + "): each rank runs at least one stage");
  if (p.pipelineRanks > 1 && p.dataParallel > 1)
    node.failAt("pipeline_ranks",
                "'pipeline_ranks' with 'data_parallel' > 1 is not supported yet (each "
                "stage would need its own data-parallel group); use one of them");
  return p;
}

//===----------------------------------------------------------------------===//
// The whole model
//===----------------------------------------------------------------------===//

class ModelReader {
public:
  explicit ModelReader(const JsonNode &root) : root_(root) {}

  Model read() {
    root_.expectObject("the model", {"format", "name", "description",
                                     "features", "embeddings", "layers",
                                     "loss", "optimizer", "training", "plan", "data"});
    std::string format = root_.getString("format");
    if (format != kModelFormat)
      root_.failAt("format", "unsupported model format '" + format +
                                 "' (this embc reads '" +
                                 std::string(kModelFormat) + "')");
    model_.name = root_.getIdentifier("name");
    model_.description = root_.getString("description", "");

    JsonNode optimizer = root_.child("optimizer");
    optimizer.expectObject("'optimizer'", {"dense", "embedding"});
    model_.denseOptimizer = readOptimizer(optimizer.child("dense"), false);
    model_.embeddingOptimizer =
        readOptimizer(optimizer.child("embedding"), true);
    model_.training = readTraining(root_.child("training"));
    if (root_.has("plan"))
      model_.plan = readPlan(root_.child("plan"));
    // batch_size is the global batch; each data-parallel rank runs its
    // batch_size / data_parallel examples, cut into micro-batches.
    int64_t ranks = model_.plan.dataParallel;
    if (model_.training.batchSize % ranks != 0)
      root_.child("plan").failAt(
          "data_parallel",
          "'data_parallel' (" + std::to_string(ranks) + ") must divide 'batch_size' (" +
              std::to_string(model_.training.batchSize) +
              "): each rank trains on batch_size / data_parallel examples");
    int64_t local = model_.training.batchSize / ranks;
    if (local % model_.plan.microBatches != 0)
      root_.child("plan").failAt(
          "micro_batches",
          "'micro_batches' (" + std::to_string(model_.plan.microBatches) +
              ") must divide " +
              (ranks == 1 ? "'batch_size' (" + std::to_string(local) + ")"
                          : "each rank's batch (batch_size / data_parallel = " +
                                std::to_string(local) + ")"));

    readFeatures();
    readTables();
    readLayers();
    readLoss();
    checkUsage();
    checkSymbolClashes();
    if (root_.has("data"))
      readData(root_.child("data"));
    return std::move(model_);
  }

private:
  void readFeatures() {
    JsonNode list = root_.child("features");
    std::vector<JsonNode> items = list.elements("'features'");
    if (items.empty())
      list.fail("'features' must not be empty");
    for (const JsonNode &item : items) {
      Feature f = readFeature(item);
      declareName(f.name, item);
      model_.features.push_back(std::move(f));
    }
  }

  /// The data schema (`data`): checked by the runtime's one schema parser,
  /// whose errors keep their pointer, then every feature is bound to the
  /// column it reads, as embrun will bind it.
  void readData(const JsonNode &node) {
    namespace data = runtime::data;
    try {
      model_.data = data::parseDataSchema(nlohmann::json::parse(node.json().dump()),
                                          node.pointer());
    } catch (const data::SchemaError &e) {
      throw SchemaError(e.pointer, e.what());
    }
    const data::DataSchema &schema = *model_.data;
    const Json &features = root_.json().at("features");
    for (size_t i = 0; i < model_.features.size(); ++i) {
      const Feature &f = model_.features[i];
      const bool hasSource = features[i].contains("source");
      const data::SchemaColumn *column = schema.find(f.source);
      // Negatives come from no column (bindingProblem says so): that, not
      // a missing column, is what is wrong.
      data::SchemaColumn none;
      none.name = f.source;
      if (!column && f.kind == FeatureKind::Negatives)
        column = &none;
      if (!column)
        throw SchemaError(hasSource ? f.pointer + "/source" : f.pointer,
                          "feature '" + f.name + "' reads column '" + f.source +
                              "', which the data schema does not have (columns: " +
                              schema.columnList() + ")");
      data::FeatureSpec spec;
      spec.name = f.name;
      spec.source = f.source;
      switch (f.kind) {
      case FeatureKind::Dense:
        spec.kind = data::FeatureKind::Dense;
        spec.width = f.dim;
        break;
      case FeatureKind::Sparse:
      case FeatureKind::Sequence:
        spec.kind = data::FeatureKind::Sparse;
        spec.vocab = f.hash ? 0 : f.vocab; // 0: any id, the table hashes it
        spec.hotness = f.hotness;
        spec.weighted = f.weighted;
        break;
      case FeatureKind::Label:
        spec.kind = data::FeatureKind::Label;
        spec.labelKind = f.labelKind;
        break;
      case FeatureKind::Negatives:
        spec.kind = data::FeatureKind::Negatives;
        spec.count = f.count;
        spec.power = f.power;
        break;
      }
      if (std::optional<std::string> problem = data::bindingProblem(*column, spec))
        throw SchemaError(f.pointer, "feature '" + f.name + "' cannot read column '" +
                                         column->name + "': " + *problem);
    }
  }

  void readTables() {
    // plan.quantize names the model's precisions (fp16, not f16), and none.
    using S = runtime::Storage;
    const std::string &quantize = model_.plan.quantize;
    const S dflt = quantize == "none"   ? S::F32
                   : quantize == "fp16" ? S::F16
                                        : *runtime::parseEnum<S>(quantize);
    JsonNode list = root_.child("embeddings");
    std::set<std::string> names;
    for (const JsonNode &item : list.elements("'embeddings'")) {
      Table t = readTable(item, model_.embeddingOptimizer, dflt);
      if (!names.insert(t.name).second)
        item.failAt("name", "duplicate table name '" + t.name + "'");
      // -emb-distribute refuses these too (for IR from elsewhere); here the
      // message can point at the field.
      if (t.sharding == "column_wise")
        item.failAt("sharding", "sharding 'column_wise' of table '" + t.name +
                                    "' is not supported; use table_wise or row_wise");
      if (t.sharding != "none" && t.dtype != S::F32 && model_.plan.dataParallel > 1)
        item.failAt("sharding", "table '" + t.name + "' is stored as " +
                                    runtime::enumString(t.dtype) +
                                    ": sharded tables are trained in f32 (give it "
                                    "\"dtype\": \"f32\" or remove 'sharding')");
      model_.tables.push_back(std::move(t));
    }
    // Features name tables; check each reference and the id range.
    for (size_t i = 0; i < model_.features.size(); ++i) {
      const Feature &f = model_.features[i];
      if (f.kind != FeatureKind::Sparse && f.kind != FeatureKind::Negatives &&
          f.kind != FeatureKind::Sequence)
        continue;
      std::string pointer = f.pointer + "/table";
      const Table *t = model_.findTable(f.table);
      if (!t)
        throw SchemaError(pointer, "feature '" + f.name +
                                       "' names unknown table '" + f.table +
                                       "'" + suggestTable(f.table));
      if (f.kind == FeatureKind::Sequence && t->sharding != "none")
        throw SchemaError(pointer, "sequence feature '" + f.name + "' reads table '" + t->name +
                                       "', which is sharded: sequence tables are not sharded "
                                       "yet");
      if ((f.kind == FeatureKind::Sparse || f.kind == FeatureKind::Sequence) && !f.hash &&
          f.vocab > t->rows)
        throw SchemaError(f.pointer + "/vocab",
                          "feature '" + f.name + "' has vocab " +
                              std::to_string(f.vocab) + " but table '" +
                              t->name + "' has only " +
                              std::to_string(t->rows) + " rows" +
                              (f.kind == FeatureKind::Sparse
                                   ? " (set \"hash\": true to hash raw ids into the table)"
                                   : ""));
    }
  }

  void readLayers() {
    JsonNode list = root_.child("layers");
    std::vector<JsonNode> items = list.elements("'layers'");
    if (items.empty())
      list.fail("'layers' must not be empty");
    std::vector<Layer> layers;
    for (const JsonNode &item : items) {
      Layer l = readLayer(item);
      declareName(l.name, item);
      layers.push_back(std::move(l));
    }
    orderAndShape(layers);
  }

  /// Orders layers so inputs come first (rejecting unknown references and
  /// cycles), then computes and checks every width.
  void orderAndShape(std::vector<Layer> &layers) {
    std::map<std::string, size_t> byName;
    for (size_t i = 0; i < layers.size(); ++i)
      byName[layers[i].name] = i;
    enum class Mark { None, Active, Done };
    std::vector<Mark> marks(layers.size(), Mark::None);
    std::vector<std::string> path;
    std::function<void(size_t)> visit = [&](size_t i) {
      if (marks[i] == Mark::Done)
        return;
      if (marks[i] == Mark::Active) {
        std::string cycle;
        bool inCycle = false;
        for (const std::string &p : path) {
          inCycle |= p == layers[i].name;
          if (inCycle)
            cycle += p + " -> ";
        }
        throw SchemaError(layers[i].pointer,
                          "layers form a cycle: " + cycle + layers[i].name);
      }
      marks[i] = Mark::Active;
      path.push_back(layers[i].name);
      for (size_t k = 0; k < layers[i].inputs.size(); ++k) {
        const std::string &in = layers[i].inputs[k];
        auto it = byName.find(in);
        if (it != byName.end()) {
          visit(it->second);
          continue;
        }
        if (!model_.findFeature(in))
          throw SchemaError(inputPointer(layers[i], k),
                            "layer '" + layers[i].name +
                                "' names unknown input '" + in +
                                "' (not a feature or a layer)");
      }
      path.pop_back();
      marks[i] = Mark::Done;
      model_.layers.push_back(layers[i]);
      shapeLayer(model_.layers.back());
      if (readsRows(model_.layers.back()))
        keepSequence(model_.layers.back());
      if (model_.layers.back().width > kMaxWidth)
        throw SchemaError(layers[i].pointer,
                          "layer '" + layers[i].name + "' has width " +
                              std::to_string(model_.layers.back().width) +
                              ", more than the limit " +
                              std::to_string(kMaxWidth));
    };
    for (size_t i = 0; i < layers.size(); ++i)
      visit(i);
  }

  static std::string inputPointer(const Layer &l, size_t k) {
    return l.type == "mlp" || l.type == "dense" || l.type == "activation" || l.type == "dropout" ||
                   l.type == "tied" ||
                   l.type == "cross" || l.type == "sequence_pool" ||
                   l.type == "self_attention" || l.type == "layer_norm" || l.type == "encoder"
               ? l.pointer + "/input"
               : l.pointer + "/inputs/" + std::to_string(k);
  }

  /// Whether `l` takes a B x L x D sequence: it reads it row by row (one
  /// position at a time), attends over it or pools it.
  static bool readsRows(const Layer &l) {
    static const std::set<std::string> kinds = {"sequence_pool", "self_attention", "encoder",
                                                "mlp", "dense", "activation", "add",
                                                "layer_norm", "dropout", "tied"};
    return kinds.count(l.type) != 0;
  }

  /// The sequence feature input `k` of `l` is (itself, or a sequence-valued
  /// layer's), or "" for a B x width value.
  std::string sequenceFeatureOf(const Layer &l, size_t k) const {
    const std::string &in = l.inputs[k];
    if (const Layer *seq = model_.findLayer(in))
      return seq->sequence;
    const Feature *f = model_.findFeature(in);
    return f && f->kind == FeatureKind::Sequence ? f->name : std::string();
  }

  /// Layers that read rows keep their input's sequence (its lengths and L).
  void keepSequence(Layer &l) {
    if (l.type == "sequence_pool")
      return;
    const std::string first = sequenceFeatureOf(l, 0);
    for (size_t k = 1; k < l.inputs.size(); ++k)
      if (sequenceFeatureOf(l, k) != first)
        throw SchemaError(inputPointer(l, k),
                          "'" + l.type + "' inputs must all be rows of the same sequence, or "
                          "all B x width: '" + l.inputs[k] + "' and '" + l.inputs[0] +
                          "' are not");
    if (first.empty())
      return;
    l.sequence = first;
    l.maxLen = model_.findFeature(first)->hotness;
  }

  /// Shape of input `k` of `l`, rejecting labels and (where not accepted)
  /// 3-D negatives.
  ValueShape inputShape(const Layer &l, size_t k, bool allowNegatives) {
    const std::string &in = l.inputs[k];
    if (const Feature *f = model_.findFeature(in)) {
      if (f->kind == FeatureKind::Label)
        throw SchemaError(inputPointer(l, k),
                          "label '" + in + "' cannot be a layer input; the "
                                           "loss reads it");
      if (f->kind == FeatureKind::Negatives && !allowNegatives)
        throw SchemaError(inputPointer(l, k),
                          "negatives feature '" + in + "' can only be the "
                          "second input of a 'dot' layer");
      if (f->kind == FeatureKind::Sequence && !readsRows(l))
        throw SchemaError(inputPointer(l, k),
                          "sequence feature '" + in + "' is B x " + std::to_string(f->hotness) +
                              " x " + std::to_string(model_.shapeOf(in).width) +
                              ": pool it with a 'sequence_pool' layer first");
    }
    if (const Layer *seq = model_.findLayer(in);
        seq && !seq->sequence.empty() && !readsRows(l))
      throw SchemaError(inputPointer(l, k),
                        "layer '" + in + "' is a sequence, B x " + std::to_string(seq->maxLen) +
                            " x " + std::to_string(seq->width) +
                            ": pool it with a 'sequence_pool' layer first");
    return model_.shapeOf(in);
  }

  /// The sequence feature behind input 0 of `l` (a sequence feature or a
  /// sequence-valued layer), or a SchemaError naming `what` needs one.
  const Feature &sequenceOf(const Layer &l, const std::string &what) {
    const std::string &in = l.inputs[0];
    std::string feature = in;
    if (const Layer *seq = model_.findLayer(in))
      feature = seq->sequence;
    const Feature *f = model_.findFeature(feature);
    if (!f || f->kind != FeatureKind::Sequence)
      throw SchemaError(inputPointer(l, 0), what + " a sequence feature or a sequence layer; '" +
                                                in + "' is not one");
    return *f;
  }

  /// d_model must be the input's width (the encoder adds no projection in
  /// front of it); ffn defaults to 4 d_model.
  void shapeEncoder(Layer &l) {
    if (l.sizes[0] != 0 && l.sizes[0] != l.width)
      throw SchemaError(l.pointer + "/d_model",
                        "'d_model' " + std::to_string(l.sizes[0]) + " must be the width " +
                            std::to_string(l.width) + " of its input '" + l.inputs[0] + "'");
    l.sizes[0] = l.width;
    if (l.encoder.ffn == 0)
      l.encoder.ffn = 4 * l.width;
  }

  void shapeLayer(Layer &l) {
    const std::string &t = l.type;
    auto widthError = [&](size_t k, const std::string &msg) {
      throw SchemaError(inputPointer(l, k), msg);
    };
    if (t == "sequence_pool") {
      sequenceOf(l, "'sequence_pool' pools");
      l.width = inputShape(l, 0, false).width;
    } else if (t == "self_attention" || t == "encoder") {
      sequenceOf(l, "'" + t + "' reads");
      l.width = inputShape(l, 0, false).width;
      if (t == "encoder")
        shapeEncoder(l);
      if (l.width % l.heads != 0)
        throw SchemaError(l.pointer + "/heads", "'heads' " + std::to_string(l.heads) +
                                                    " does not divide the width " +
                                                    std::to_string(l.width) + " of '" +
                                                    l.inputs[0] + "'");
    } else if (t == "mlp" || t == "dense") {
      inputShape(l, 0, false);
      l.width = l.sizes.back();
    } else if (t == "tied") {
      const int64_t width = inputShape(l, 0, false).width;
      const Table *table = model_.findTable(l.table);
      if (!table)
        throw SchemaError(l.pointer + "/table", "'" + l.table + "' is not a table");
      if (width != table->dim)
        throw SchemaError(l.pointer + "/table",
                          "'tied' scores '" + l.inputs[0] + "' (width " + std::to_string(width) +
                              ") against the rows of table '" + table->name + "' (dim " +
                              std::to_string(table->dim) +
                              "): the input's width must be the table's dim");
      if (table->dtype != runtime::Storage::F32)
        throw SchemaError(l.pointer + "/table",
                          "table '" + table->name + "' is stored " +
                              runtime::enumString(table->dtype) +
                              ": a tied table is read whole and updated densely, in f32");
      if (table->sharding != "none")
        throw SchemaError(l.pointer + "/table", "table '" + table->name + "' is sharded (" +
                                                    table->sharding +
                                                    "): a tied table is read whole on each rank");
      l.width = table->rows;
    } else if (t == "activation" || t == "cross" || t == "layer_norm" || t == "dropout") {
      l.width = inputShape(l, 0, false).width;
    } else if (t == "concat") {
      for (size_t k = 0; k < l.inputs.size(); ++k)
        l.width += inputShape(l, k, false).width;
    } else if (t == "dot_interaction" || t == "add") {
      int64_t w = inputShape(l, 0, false).width;
      for (size_t k = 1; k < l.inputs.size(); ++k) {
        int64_t wk = inputShape(l, k, false).width;
        if (wk != w)
          widthError(k, "'" + t + "' inputs must all have the same width: '" +
                            l.inputs[k] + "' has width " + std::to_string(wk) +
                            ", '" + l.inputs[0] + "' has width " +
                            std::to_string(w));
      }
      if (t == "add") {
        l.width = w;
      } else {
        int64_t f = l.inputs.size();
        l.width = (l.selfInteraction ? f * (f + 1) / 2 : f * (f - 1) / 2) +
                  (l.keepFirst ? w : 0);
      }
    } else if (t == "dot") {
      ValueShape a = inputShape(l, 0, false);
      ValueShape b = inputShape(l, 1, true);
      if (a.width != b.width)
        widthError(1, "'dot' inputs must have the same width: '" +
                          l.inputs[0] + "' has " + std::to_string(a.width) +
                          ", '" + l.inputs[1] + "' has " +
                          std::to_string(b.width));
      l.width = b.count ? b.count : 1;
    }
  }

  void readLoss() {
    JsonNode node = root_.child("loss");
    if (!node.json().is_object())
      node.fail("'loss' must be an object, got " + describeType(node.json()));
    Loss &loss = model_.loss;
    using L = runtime::LossKind;
    const std::string word =
        node.getEnum("type", {"bce_with_logits", "mse", "softmax_ce", "neg_sampling", "next_token",
                              "masked_token"});
    if (word == "next_token" || word == "masked_token")
      return readTokenLoss(node, word);
    loss.type = *runtime::parseEnum<L>(word);
    const std::string type = runtime::enumString(loss.type);
    if (loss.type == L::NegSampling) {
      node.expectObject("a 'neg_sampling' loss",
                        {"type", "positive", "negative"});
      loss.input = node.getIdentifier("positive");
      loss.label = node.getIdentifier("negative");
      ValueShape pos = lossOperand(node, "positive", loss.input);
      lossOperand(node, "negative", loss.label);
      if (pos.width != 1)
        node.failAt("positive", "'neg_sampling' needs B x 1 positive scores; '" +
                                    loss.input + "' has width " +
                                    std::to_string(pos.width));
      for (const Feature &f : model_.features)
        if (f.kind == FeatureKind::Label)
          throw SchemaError(f.pointer, "label feature '" + f.name +
                                           "' is unused: a 'neg_sampling' "
                                           "loss takes no label");
      return;
    }
    node.expectObject("a '" + type + "' loss", {"type", "input", "label"});
    loss.input = node.getIdentifier("input");
    loss.label = node.getIdentifier("label");
    ValueShape in = lossOperand(node, "input", loss.input);
    const Feature *label = model_.findFeature(loss.label);
    if (!label || label->kind != FeatureKind::Label)
      node.failAt("label", "'" + loss.label + "' is not a label feature");
    using K = runtime::LabelKind;
    const K wantKind = loss.type == L::BceWithLogits ? K::Binary
                       : loss.type == L::Mse         ? K::Real
                                                     : K::Class;
    if (label->labelKind != wantKind)
      node.failAt("label", "a '" + type + "' loss needs a '" + runtime::enumString(wantKind) +
                               "' label; '" + loss.label + "' is '" +
                               runtime::enumString(label->labelKind) + "'");
    if (loss.type == L::SoftmaxCe ? in.width < 2 : in.width != 1)
      node.failAt("input", "a '" + type + "' loss needs " +
                               (loss.type == L::SoftmaxCe
                                    ? std::string("B x C logits with C >= 2")
                                    : std::string("a B x 1 input")) +
                               "; '" + loss.input + "' has width " +
                               std::to_string(in.width));
  }

  /// {"type": "next_token" | "masked_token", "input": a sequence layer as
  /// wide as the vocabulary, "sequence": the sequence feature whose tokens
  /// it predicts[, "mask_rate": the share of each sequence masked][,
  /// "sampled": classes sampled a row while training]}.
  void readTokenLoss(const JsonNode &node, const std::string &type) {
    const bool masked = type == "masked_token";
    if (masked)
      node.expectObject("a 'masked_token' loss",
                        {"type", "input", "sequence", "mask_rate", "sampled"});
    else
      node.expectObject("a 'next_token' loss", {"type", "input", "sequence", "sampled"});
    Loss &loss = model_.loss;
    loss.type = runtime::LossKind::SequenceSoftmaxCe;
    loss.nextToken = !masked;
    loss.maskedToken = masked;
    loss.input = node.getIdentifier("input");
    loss.label = node.getIdentifier("sequence");
    if (masked) {
      loss.maskRate = node.getDouble("mask_rate", 0.15);
      if (!(loss.maskRate > 0.0 && loss.maskRate < 1.0))
        node.failAt("mask_rate", "must be in (0, 1), got " + std::to_string(loss.maskRate));
    }
    const Feature *seq = model_.findFeature(loss.label);
    if (!seq || seq->kind != FeatureKind::Sequence)
      node.failAt("sequence", "'" + loss.label + "' is not a sequence feature");
    if (seq->hash)
      node.failAt("sequence", "sequence '" + loss.label +
                                  "' is hashed: its tokens are not classes to predict");
    const Layer *layer = model_.findLayer(loss.input);
    if (!layer)
      node.failAt("input", "loss input '" + loss.input + "' is not a layer");
    if (layer->sequence != loss.label)
      node.failAt("input", "'" + loss.input + "' must be a sequence layer over '" + loss.label +
                               "' (one row of logits per token), got " +
                               (layer->sequence.empty()
                                    ? std::string("a B x ") + std::to_string(layer->width) +
                                          " value"
                                    : "a sequence over '" + layer->sequence + "'"));
    // A tied projection scores every row of the table, the mask token's
    // too (never a target).
    const Table *seqTable = model_.findTable(seq->table);
    const bool tied = layer->type == "tied" && layer->table == seq->table && seqTable &&
                      layer->width == seqTable->rows;
    if (layer->width != seq->vocab && !tied)
      node.failAt("input", "'" + type + "' predicts the ids of '" + loss.label + "' (vocab " +
                               std::to_string(seq->vocab) + "), so '" + loss.input +
                               "' must be " + std::to_string(seq->vocab) + " wide, got " +
                               std::to_string(layer->width));
    if (node.has("sampled")) {
      // The logits' width: every class the softmax would score.
      loss.sampled = node.getInt("sampled", 1, std::max<int64_t>(layer->width - 1, 1));
      if (layer->type != "dense" && layer->type != "tied")
        node.failAt("sampled", "samples the classes of '" + loss.input + "', a '" + layer->type +
                                   "' layer: a sampled softmax needs the logits of an output "
                                   "projection, a 'dense' or 'tied' layer");
      if (layer->type == "dense" && layer->activation != runtime::Activation::None)
        node.failAt("sampled", "samples the classes of '" + loss.input + "', whose '" +
                                   std::string(runtime::enumName(layer->activation)) +
                                   "' activation follows its projection: the logits must be "
                                   "the projection's own");
    }
    if (masked) {
      // The mask token is the row after the vocabulary's.
      const Table *t = model_.findTable(seq->table);
      if (t && t->rows < seq->vocab + 1)
        throw SchemaError(t->pointer, "table '" + t->name + "' needs a row for the mask token: " +
                                          "'masked_token' masks '" + loss.label + "' (vocab " +
                                          std::to_string(seq->vocab) + ") with id " +
                                          std::to_string(seq->vocab) + ", so it needs " +
                                          std::to_string(seq->vocab + 1) + " rows, got " +
                                          std::to_string(t->rows));
    }
    // A position's logits must not have seen the token they predict.
    std::vector<std::string> work = masked ? std::vector<std::string>{} : std::vector<std::string>{loss.input};
    std::set<std::string> seen;
    while (!work.empty()) {
      const Layer *l = model_.findLayer(work.back());
      work.pop_back();
      if (!l || !seen.insert(l->name).second)
        continue;
      if ((l->type == "self_attention" || l->type == "encoder") && !l->causal)
        node.failAt("input", "'next_token' reads '" + l->name + "', which is not causal: " +
                                 "position l would attend to the token it predicts (set \"causal\": "
                                 "true at " + l->pointer + ")");
      for (const std::string &in : l->inputs)
        work.push_back(in);
    }
    for (const Feature &f : model_.features)
      if (f.kind == FeatureKind::Label)
        throw SchemaError(f.pointer, "label feature '" + f.name +
                                         "' is unused: a '" + type +
                                         "' loss predicts the tokens of '" + loss.label + "'");
  }

  ValueShape lossOperand(const JsonNode &node, const std::string &key,
                         const std::string &name) {
    const Layer *layer = model_.findLayer(name);
    if (!layer) {
      const Feature *f = model_.findFeature(name);
      if (!f || f->kind == FeatureKind::Label)
        node.failAt(key, "loss " + key + " '" + name + "' is not a layer");
    }
    ValueShape shape = model_.shapeOf(name);
    const Feature *feature = model_.findFeature(name);
    if ((layer && !layer->sequence.empty()) ||
        (feature && feature->kind == FeatureKind::Sequence))
      node.failAt(key, "loss " + key + " '" + name + "' is a sequence, B x " +
                           std::to_string(layer ? layer->maxLen : feature->hotness) + " x " +
                           std::to_string(shape.width) +
                           "; pool it with a 'sequence_pool' layer first");
    if (shape.count != 0)
      node.failAt(key, "loss " + key + " '" + name +
                           "' is B x " + std::to_string(shape.count) + " x " +
                           std::to_string(shape.width) +
                           "; the loss needs a B x N value (score the "
                           "negatives with a 'dot' layer)");
    return shape;
  }

  /// Every feature, table and layer must contribute to the loss.
  void checkUsage() {
    std::set<std::string> used;
    std::vector<std::string> work = {model_.loss.input, model_.loss.label};
    while (!work.empty()) {
      std::string name = work.back();
      work.pop_back();
      if (!used.insert(name).second)
        continue;
      if (const Layer *l = model_.findLayer(name))
        for (const std::string &in : l->inputs)
          work.push_back(in);
    }
    for (const Layer &l : model_.layers)
      if (!used.count(l.name))
        throw SchemaError(l.pointer, "layer '" + l.name +
                                         "' does not contribute to the loss");
    std::set<std::string> usedTables;
    for (const Layer &l : model_.layers)
      if (l.type == "tied")
        usedTables.insert(l.table);
    for (const Feature &f : model_.features) {
      if (!used.count(f.name))
        throw SchemaError(f.pointer, "feature '" + f.name +
                                         "' is not used by any layer or the "
                                         "loss");
      if (!f.table.empty())
        usedTables.insert(f.table);
    }
    for (const Table &t : model_.tables)
      if (!usedTables.count(t.name))
        throw SchemaError(t.pointer,
                          "table '" + t.name + "' is not used by any feature");
  }

  /// The parameters the importer declares for `l` (ModelImporter.cpp).
  static std::vector<std::string> layerParameters(const Layer &l) {
    std::vector<std::string> symbols;
    auto norm = [&](const std::string &prefix) {
      symbols.push_back(prefix + "_gamma");
      symbols.push_back(prefix + "_beta");
    };
    if (l.type == "mlp" || l.type == "dense" || l.type == "cross") {
      size_t n = l.type == "cross" ? l.numLayers : l.sizes.size();
      for (size_t i = 0; i < n; ++i) {
        symbols.push_back(l.name + "_w" + std::to_string(i));
        if (l.bias)
          symbols.push_back(l.name + "_b" + std::to_string(i));
      }
    } else if (l.type == "add" && l.bias) {
      symbols.push_back(l.name + "_b0");
    } else if (l.type == "layer_norm") {
      norm(l.name);
    } else if (l.type == "encoder") {
      for (int64_t i = 0; i < l.encoder.layers; ++i) {
        const std::string prefix = l.name + "_l" + std::to_string(i);
        for (const std::string p : {"q", "k", "v", "o", "ffn1", "ffn2"}) {
          symbols.push_back(prefix + "_w" + p);
          if (p != "k") // the key projection has no bias
            symbols.push_back(prefix + "_b" + p);
        }
        norm(prefix + "_ln1");
        norm(prefix + "_ln2");
      }
      if (l.encoder.preNorm)
        norm(l.name + "_final");
    }
    return symbols;
  }

  /// Tables and layer parameters (`<layer>_w<i>`, `<layer>_b<i>`, ...) are
  /// symbols of one IR module, so their names must differ.
  void checkSymbolClashes() {
    for (const Table &t : model_.tables)
      if (t.name == "forward")
        throw SchemaError(t.pointer + "/name",
                          "table name 'forward' is reserved for the forward "
                          "function");
    std::map<std::string, const Layer *> owners;
    for (const Layer &l : model_.layers)
      for (const std::string &symbol : layerParameters(l)) {
        if (const Table *t = model_.findTable(symbol))
          throw SchemaError(t->pointer + "/name",
                            "table name '" + symbol +
                                "' clashes with a parameter of layer '" +
                                l.name + "'; rename one of them");
        auto [it, fresh] = owners.emplace(symbol, &l);
        if (!fresh)
          throw SchemaError(l.pointer + "/name",
                            "layers '" + it->second->name + "' and '" + l.name +
                                "' both have a parameter named '" + symbol +
                                "'; rename one of them");
      }
  }

  /// Features and layers share one namespace.
  void declareName(const std::string &name, const JsonNode &node) {
    if (!names_.insert(name).second)
      node.failAt("name", "duplicate name '" + name +
                              "' (features and layers share one namespace)");
  }

  std::string suggestTable(const std::string &name) const {
    if (model_.tables.empty())
      return " ('embeddings' is empty)";
    std::string known;
    for (size_t i = 0; i < model_.tables.size() && i < 5; ++i)
      known += (i ? ", '" : "'") + model_.tables[i].name + "'";
    if (model_.tables.size() > 5)
      known += ", ...";
    return " (known: " + known + ")";
  }

  JsonNode root_;
  Model model_;
  std::set<std::string> names_;
};

} // namespace

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

const Feature *Model::findFeature(std::string_view name) const {
  return featureIndex.find(features, name);
}

const Table *Model::findTable(std::string_view name) const {
  return tableIndex.find(tables, name);
}

const Layer *Model::findLayer(std::string_view name) const {
  return layerIndex.find(layers, name);
}

ValueShape Model::shapeOf(std::string_view name) const {
  if (const Layer *l = findLayer(name))
    return {l->width, l->sequence.empty() ? 0 : l->maxLen};
  if (const Feature *f = findFeature(name)) {
    switch (f->kind) {
    case FeatureKind::Dense:
      return {f->dim, 0};
    case FeatureKind::Sparse:
      return {findTable(f->table)->dim, 0};
    case FeatureKind::Negatives:
      return {findTable(f->table)->dim, f->count};
    case FeatureKind::Sequence:
      return {findTable(f->table)->dim, f->hotness};
    case FeatureKind::Label:
      return {1, 0};
    }
  }
  return {};
}

std::string ModelError::format(std::string_view file) const {
  std::string out(file);
  if (line > 0)
    return out + ":" + std::to_string(line) + ":" + std::to_string(column) +
           ": error: " + message;
  return out + ": error at " + (pointer.empty() ? "/" : pointer) + ": " +
         message;
}

std::optional<Model> embc::frontend::parseModel(std::string_view text, ModelError &error,
                                                const std::vector<std::string> &overrides) {
  // nlohmann stops at a NUL as at the end of the text: a second model after
  // one would be ignored, unread.
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    error = ModelError{"", "invalid JSON: a NUL byte (a model file is UTF-8 text)"};
    lineColumn(text, nul, error.line, error.column);
    return std::nullopt;
  }
  try {
    Json root = parseJsonText(text);
    for (const std::string &o : overrides)
      applyOverride(root, o);
    return ModelReader(JsonNode(root, "")).read();
  } catch (const SchemaError &e) {
    error = ModelError{e.pointer, e.what()};
  } catch (const Json::parse_error &e) {
    error.pointer.clear();
    // nlohmann's message starts "[json.exception...] parse error at line L,
    // column C: "; the position is reported separately, keep the rest.
    std::string what = e.what();
    size_t column = what.find("column ");
    size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
    error.message = "invalid JSON: " + (colon == std::string::npos
                                            ? what
                                            : what.substr(colon + 2));
    lineColumn(text, e.byte > 0 ? e.byte - 1 : 0, error.line, error.column);
  } catch (const Json::out_of_range &e) {
    // A number too large for a double or a 64-bit integer: nlohmann names the
    // literal ("number overflow parsing '1e400'"); find it for line/column.
    std::string what = e.what();
    error.pointer.clear();
    error.message = "invalid JSON: number out of range";
    size_t open = what.find('\'');
    size_t close = what.rfind('\'');
    if (open != std::string::npos && close > open) {
      std::string literal = what.substr(open + 1, close - open - 1);
      error.message += ": " + literal;
      size_t at = text.find(literal);
      lineColumn(text, at == std::string::npos ? 0 : at, error.line,
                 error.column);
    } else {
      error.line = error.column = 1;
    }
  } catch (const std::exception &e) {
    error = ModelError{"", std::string("invalid model: ") + e.what()};
  }
  return std::nullopt;
}
