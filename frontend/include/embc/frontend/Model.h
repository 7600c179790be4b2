//===- Model.h - a checked model file, as plain C++ ------------*- C++ -*-===//
//
// The result of reading model.json: every field resolved to its default,
// every reference resolved and every width computed. Closed sets of words
// are the plan's enums (runtime/include/embc/runtime/plan/Enums.h), which
// spell them once for the model file, the IR and the plan. Nothing here
// depends on MLIR, so the parser can be fuzzed and unit-tested on its own; the importer
// turns a Model into emb IR.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_FRONTEND_MODEL_H
#define EMBC_FRONTEND_MODEL_H

#include "embc/runtime/data/Schema.h"
#include "embc/runtime/plan/Enums.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace embc::frontend {

/// The exact value of the top-level "format" field this parser reads.
inline constexpr std::string_view kModelFormat = "embc.model/v1";

struct Initializer {
  runtime::InitKind kind = runtime::InitKind::Zeros;
  double value = 0, low = 0, high = 0, mean = 0, std = 0, gain = 1;
};

struct OptimizerConfig {
  runtime::OptimizerKind kind = runtime::OptimizerKind::Sgd;
  double lr = 0.01, momentum = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0, initialAccumulator = 0;
  runtime::WeightDecayMode weightDecayMode = runtime::WeightDecayMode::Lazy;
};

/// Sequence: a sparse feature's jagged ids kept in order, B x max_len x dim.
enum class FeatureKind { Dense, Sparse, Negatives, Label, Sequence };

struct Feature {
  std::string name;
  std::string pointer; ///< JSON pointer of the feature object
  std::string source;  ///< data column it reads (default: its name)
  FeatureKind kind = FeatureKind::Dense;
  int64_t dim = 0;        ///< dense: width
  std::string table;      ///< sparse, negatives
  int64_t vocab = 0;      ///< sparse: raw id range
  int64_t hotness = 1;    ///< sparse: max ids per example; sequence: max_len
  runtime::Pooling pooling = runtime::Pooling::Sum;
  bool hash = false, weighted = false;
  int64_t count = 0;      ///< negatives per example
  double power = 0.75;    ///< negatives: unigram exponent
  runtime::LabelKind labelKind = runtime::LabelKind::Binary; ///< label
  std::optional<runtime::PositionKind> positions; ///< sequence: added to each token
};

struct Table {
  std::string name;
  std::string pointer;
  int64_t rows = 0, dim = 0;
  runtime::Storage dtype = runtime::Storage::F32; ///< after plan.quantize
  Initializer init;
  OptimizerConfig optimizer; ///< the override, or the model's embedding optimizer
  std::string sharding = "none";
  /// Where the rows and optimizer state live (device, host or disk).
  runtime::Placement placement = runtime::Placement::Device;
};

struct Layer {
  std::string name;
  std::string pointer;
  std::string type; ///< mlp, dense, activation, concat, dot_interaction, cross, dot, add,
                    ///< sequence_pool, self_attention, layer_norm, encoder, dropout, tied
  std::vector<std::string> inputs;
  std::string table; ///< tied: the table whose rows it scores (its output projection)
  std::vector<int64_t> sizes; ///< mlp widths; dense: one entry
  runtime::Activation activation = runtime::Activation::None;
  runtime::Activation finalActivation = runtime::Activation::None;
  bool bias = true;
  Initializer init;              ///< weight initialiser (mlp, dense)
  bool selfInteraction = false, keepFirst = true;
  int64_t numLayers = 1;         ///< cross
  runtime::SequencePooling sequencePooling = runtime::SequencePooling::Mean; ///< sequence_pool
  int64_t heads = 1;             ///< self_attention, encoder
  bool causal = false;           ///< self_attention, encoder
  double eps = 1e-5;             ///< layer_norm, encoder
  /// dropout: its rate; self_attention: its weights' dropout; encoder: the
  /// rate of the dropouts of the attention weights, after the attention's
  /// output projection, the GELU and the FFN's output.
  double dropout = 0.0;
  /// encoder: `layers` Transformer encoder layers of width d_model (the
  /// input's), each self-attention with Q, K, V and output projections,
  /// then a GELU feed-forward block of `ffn`, each sublayer with a
  /// residual and a layer norm before (pre) or after (post) it.
  struct Encoder {
    int64_t layers = 1, ffn = 0;
    bool preNorm = true;
  } encoder;
  // Computed by the checker:
  /// The sequence feature whose lengths a sequence-valued layer (one that
  /// reads a sequence row by row: self_attention, encoder, mlp, dense,
  /// activation, add, layer_norm) carries; empty for a B x width layer.
  std::string sequence;
  int64_t maxLen = 0;            ///< its L, for a sequence-valued layer
  // Computed by the checker:
  int64_t width = 0;             ///< output is B x width
};

struct Loss {
  runtime::LossKind type = runtime::LossKind::BceWithLogits;
  std::string input, label; ///< neg_sampling: positive, negative; next_token: the sequence
  /// `next_token`: a sequence_softmax_ce of `input` (B x L x vocab) against
  /// each position's next token of the sequence feature `label`.
  bool nextToken = false;
  /// `masked_token`: the same loss against the tokens emb.mask_tokens
  /// chose (maskRate of each sequence), which the model reads masked.
  bool maskedToken = false;
  double maskRate = 0.15;
  /// A token loss's `sampled`: train on the target and this many sampled
  /// classes a row (sampled softmax, -emb-sample-softmax); 0: every class.
  int64_t sampled = 0;
};

struct Training {
  int64_t batchSize = 0;
  runtime::ComputeType precision = runtime::ComputeType::F32;
  double gradClipNorm = 0;
  int64_t gradAccumulation = 1, warmupSteps = 0, decaySteps = 0, seed = 0;
  runtime::LrSchedule lrSchedule = runtime::LrSchedule::Constant;
  std::string embeddingUpdates = "batch"; ///< batch, per_example, hogwild
};

struct PlanKnobs {
  int64_t memoryBudget = 0; ///< bytes; 0 = none
  std::string quantize = "none", remat = "none";
  runtime::ScheduleKind schedule = runtime::ScheduleKind::GPipe;
  int64_t microBatches = 1, pipelineStages = 1, dataParallel = 1;
  /// Ranks the pipeline stages are spread over (contiguous stages per rank);
  /// 1: every stage on one device.
  int64_t pipelineRanks = 1;
};

/// The shape of a value a layer input names: B x width, or B x count x width
/// for a negatives feature (count per example) or a sequence (count =
/// max_len).
struct ValueShape {
  int64_t width = 0;
  int64_t count = 0; ///< 0 for a 2-D value
};

/// Finds an element of a vector by name without a linear search: an index
/// extended as the vector grows (the parser appends while it looks names
/// up). A hit is checked against the element and the index rebuilt if they
/// disagree, so it never answers differently from a search from the front.
template <class T> class NameIndex {
public:
  const T *find(const std::vector<T> &items, std::string_view name) const {
    if (seen_ > items.size())
      reset();
    for (; seen_ < items.size(); ++seen_)
      at_.emplace(items[seen_].name, seen_); // the first of equal names wins
    auto it = at_.find(std::string(name));
    if (it == at_.end())
      return nullptr;
    if (it->second < items.size() && items[it->second].name == name)
      return &items[it->second];
    reset(); // an element changed in place: index again
    return find(items, name);
  }

private:
  void reset() const {
    at_.clear();
    seen_ = 0;
  }
  mutable std::unordered_map<std::string, size_t> at_;
  mutable size_t seen_ = 0;
};

struct Model {
  std::string name, description;
  std::vector<Feature> features;
  std::vector<Table> tables;
  std::vector<Layer> layers; ///< in dependency order (inputs first)
  Loss loss;
  OptimizerConfig denseOptimizer, embeddingOptimizer;
  Training training;
  PlanKnobs plan;
  /// The optional `data` object: how a data file's columns become the
  /// features (runtime/include/embc/runtime/data/Schema.h). Every feature
  /// reads one of its columns; the importer carries it into the IR.
  std::optional<runtime::data::DataSchema> data;

  const Feature *findFeature(std::string_view name) const;
  const Table *findTable(std::string_view name) const;
  const Layer *findLayer(std::string_view name) const;
  /// Shape of the value named `name` (a feature or a layer).
  ValueShape shapeOf(std::string_view name) const;

  /// The find* indexes (a model of 20k features made linear searches the
  /// larger part of its compile time).
  NameIndex<Feature> featureIndex;
  NameIndex<Table> tableIndex;
  NameIndex<Layer> layerIndex;
};

/// Where and what went wrong in a model file.
struct ModelError {
  std::string pointer; ///< JSON pointer; empty for a JSON syntax error
  std::string message;
  int line = 0, column = 0; ///< for a JSON syntax error (1-based)
  /// "error at /embeddings/3/dim: ..." or "12:5: error: invalid JSON: ...".
  std::string format(std::string_view file) const;
};

/// Reads and checks a model file. Returns the model, or the first error.
/// Never throws and never aborts, whatever the input. `overrides` ("POINTER=
/// VALUE", embc --set) are put into the model's JSON first, in order; a bad
/// one is an error at its pointer (frontend/lib/ModelOverrides.h).
std::optional<Model> parseModel(std::string_view text, ModelError &error,
                                const std::vector<std::string> &overrides = {});

} // namespace embc::frontend

#endif // EMBC_FRONTEND_MODEL_H
