//===- ModelParserTest.cpp - model.json -> checked Model -------------------===//
//
// The examples are read and checked fact by fact (order, widths, defaults);
// small variants of one minimal model exercise each default and each error
// path, with the exact JSON pointer and message the user sees.
//
//===----------------------------------------------------------------------===//

#include "embc/frontend/Model.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace embc::frontend;
namespace runtime = embc::runtime;
using Json = nlohmann::ordered_json;

namespace {

std::string readExample(const std::string &name) {
  std::ifstream in(std::string(EMBC_EXAMPLES_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Parses `text`; on failure records the formatted error as a test failure.
std::optional<Model> parseOk(std::string_view text,
                             std::string_view file = "model.json") {
  ModelError error;
  std::optional<Model> model = parseModel(text, error);
  if (!model)
    ADD_FAILURE() << "unexpected parse error: " << error.format(file);
  return model;
}

/// Parses `text`, expecting an error.
ModelError parseError(std::string_view text) {
  ModelError error;
  if (parseModel(text, error))
    ADD_FAILURE() << "expected an error, but the model parsed:\n" << text;
  return error;
}

std::optional<Model> parseExample(const std::string &name) {
  return parseOk(readExample(name), name);
}

std::vector<std::string> layerNames(const Model &m) {
  std::vector<std::string> out;
  for (const Layer &l : m.layers)
    out.push_back(l.name);
  return out;
}

/// Facts every checked model has: layer inputs are features or earlier
/// layers, names are unique, widths are positive, pointers point home.
void expectWellFormed(const Model &m) {
  std::set<std::string> seen;
  for (size_t i = 0; i < m.features.size(); ++i) {
    const Feature &f = m.features[i];
    EXPECT_TRUE(seen.insert(f.name).second) << f.name;
    EXPECT_EQ(f.pointer.rfind("/features/", 0), 0u) << f.pointer;
    if (f.kind == FeatureKind::Sparse || f.kind == FeatureKind::Negatives) {
      EXPECT_NE(m.findTable(f.table), nullptr) << f.name;
    }
  }
  for (const Table &t : m.tables)
    EXPECT_EQ(t.pointer.rfind("/embeddings/", 0), 0u) << t.pointer;
  for (const Layer &l : m.layers) {
    for (const std::string &in : l.inputs)
      EXPECT_TRUE(seen.count(in))
          << "layer '" << l.name << "' reads '" << in
          << "' before it is defined";
    EXPECT_TRUE(seen.insert(l.name).second) << l.name;
    EXPECT_GT(l.width, 0) << l.name;
    EXPECT_EQ(m.shapeOf(l.name).width, l.width) << l.name;
    EXPECT_EQ(l.pointer.rfind("/layers/", 0), 0u) << l.pointer;
  }
}

/// A small valid model; tests change one thing and check the outcome.
Json minimalModel() {
  return Json::parse(R"({
    "format": "embc.model/v1",
    "name": "mini",
    "features": [
      {"name": "x", "type": "dense", "dim": 4},
      {"name": "ids", "type": "sparse", "table": "t", "vocab": 100},
      {"name": "y", "type": "label"}
    ],
    "embeddings": [{"name": "t", "rows": 100, "dim": 4}],
    "layers": [
      {"name": "cat", "type": "concat", "inputs": ["x", "ids"]},
      {"name": "out", "type": "mlp", "input": "cat", "sizes": [8, 1],
       "final_activation": "none"}
    ],
    "loss": {"type": "bce_with_logits", "input": "out", "label": "y"},
    "optimizer": {"dense": {"type": "sgd", "lr": 0.1},
                  "embedding": {"type": "sgd", "lr": 0.2}},
    "training": {"batch_size": 32}
  })");
}

/// Expects the parser to reject `j` at `pointer` with `message`.
void expectParseError(const Json &j, const std::string &pointer, const std::string &message) {
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, pointer);
  EXPECT_EQ(e.message, message);
}

/// Edits minimalModel() with `edit` and expects the parser to reject it at
/// `pointer` with `message`.
void expectModelError(const std::function<void(Json &)> &edit, const std::string &pointer,
                      const std::string &message) {
  Json j = minimalModel();
  edit(j);
  expectParseError(j, pointer, message);
}

/// Replaces the one occurrence of `from` in `text` (the test fails if there
/// is none).
std::string replaceOnce(std::string text, const std::string &from,
                        const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in " << text;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

//===----------------------------------------------------------------------===//
// The examples
//===----------------------------------------------------------------------===//

TEST(ModelParserExamples, EveryExampleFileParses) {
  std::vector<std::string> names;
  for (const auto &entry :
       std::filesystem::directory_iterator(EMBC_EXAMPLES_DIR))
    if (entry.path().extension() == ".json")
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "avazu_ctr.json", "bert_mini_mlm.json", "dcn.json", "deep_mlp.json", "dlrm_criteo_sample.json",
                       "dlrm_mlperf.json", "dlrm_small.json", "gpt_mini.json", "mf_movielens.json", "skipgram.json", "text_classifier.json",
                       "transformer_layer.json", "two_tower.json", "wide_deep.json"}));
  for (const std::string &name : names) {
    SCOPED_TRACE(name);
    std::optional<Model> m = parseExample(name);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->name + ".json",
              name == "dcn.json" ? "dcn_v2.json" : name);
    expectWellFormed(*m);
  }
}

// A next-token loss: the sequence feature is its 'label', the loss a
// sequence_softmax_ce over a causal model's vocabulary-wide logits.
TEST(ModelParserExamples, GptMini) {
  std::optional<Model> m = parseExample("gpt_mini.json");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->loss.nextToken);
  EXPECT_EQ(m->loss.type, runtime::LossKind::SequenceSoftmaxCe);
  EXPECT_EQ(m->loss.input, "logits");
  EXPECT_EQ(m->loss.label, "tokens");
  ASSERT_EQ(m->layers.size(), 2u);
  EXPECT_TRUE(m->layers[0].causal);
  EXPECT_EQ(m->layers[1].sequence, "tokens");
  EXPECT_EQ(m->layers[1].width, 8000);
}

TEST(ModelParserExamples, DlrmSmall) {
  std::optional<Model> m = parseExample("dlrm_small.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "dlrm_small");
  EXPECT_EQ(m->description.rfind("A small DLRM", 0), 0u);
  ASSERT_EQ(m->features.size(), 28u);
  ASSERT_EQ(m->tables.size(), 26u);
  EXPECT_EQ(layerNames(*m),
            (std::vector<std::string>{"bottom", "interaction", "top"}));

  const Layer &bottom = m->layers[0];
  EXPECT_EQ(bottom.type, "mlp");
  EXPECT_EQ(bottom.pointer, "/layers/0");
  EXPECT_EQ(bottom.inputs, std::vector<std::string>{"dense"});
  EXPECT_EQ(bottom.sizes, (std::vector<int64_t>{64, 16}));
  EXPECT_EQ(bottom.activation, runtime::Activation::Relu);
  EXPECT_EQ(bottom.finalActivation, runtime::Activation::Relu);
  EXPECT_TRUE(bottom.bias);
  EXPECT_EQ(bottom.init.kind, runtime::InitKind::XavierUniform);
  EXPECT_EQ(bottom.init.gain, 1.0);
  EXPECT_EQ(bottom.width, 16);

  // keep_first: D + F(F-1)/2 with D = 16 and F = 27 (bottom + 26 tables).
  const Layer &inter = m->layers[1];
  EXPECT_EQ(inter.type, "dot_interaction");
  EXPECT_EQ(inter.inputs.size(), 27u);
  EXPECT_TRUE(inter.keepFirst);
  EXPECT_FALSE(inter.selfInteraction);
  EXPECT_FALSE(inter.bias);
  EXPECT_EQ(inter.width, 16 + 27 * 26 / 2);
  EXPECT_EQ(inter.width, 367);

  const Layer &top = m->layers[2];
  EXPECT_EQ(top.sizes, (std::vector<int64_t>{64, 32, 1}));
  EXPECT_EQ(top.activation, runtime::Activation::Relu);
  EXPECT_EQ(top.finalActivation, runtime::Activation::None);
  EXPECT_EQ(top.width, 1);

  const Feature *c1 = m->findFeature("C1");
  ASSERT_NE(c1, nullptr);
  EXPECT_EQ(c1->pointer, "/features/1");
  EXPECT_EQ(c1->kind, FeatureKind::Sparse);
  EXPECT_EQ(c1->table, "t_C1");
  EXPECT_EQ(c1->vocab, 1000000);
  EXPECT_TRUE(c1->hash);
  EXPECT_FALSE(c1->weighted);
  EXPECT_EQ(c1->hotness, 1);
  EXPECT_EQ(c1->pooling, runtime::Pooling::Sum);
  const Feature *label = m->findFeature("label");
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(label->kind, FeatureKind::Label);
  EXPECT_EQ(label->labelKind, runtime::LabelKind::Binary);

  // Default table init: uniform in +-1/sqrt(rows), as DLRM does.
  const Table *t = m->findTable("t_C7");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->pointer, "/embeddings/6");
  EXPECT_EQ(t->rows, 10000);
  EXPECT_EQ(t->dim, 16);
  EXPECT_EQ(t->dtype, runtime::Storage::F32);
  EXPECT_EQ(t->sharding, "none");
  EXPECT_EQ(t->placement, runtime::Placement::Device);
  EXPECT_EQ(t->init.kind, runtime::InitKind::Uniform);
  EXPECT_DOUBLE_EQ(t->init.low, -0.01);
  EXPECT_DOUBLE_EQ(t->init.high, 0.01);
  EXPECT_EQ(t->init.high, 1.0 / std::sqrt(10000.0));
  // A table without its own optimizer takes the model's embedding optimizer.
  EXPECT_EQ(t->optimizer.kind, runtime::OptimizerKind::RowwiseAdagrad);
  EXPECT_EQ(t->optimizer.lr, 0.1);
  EXPECT_EQ(t->optimizer.eps, 1e-8);
  EXPECT_EQ(t->optimizer.initialAccumulator, 0.0);
  EXPECT_EQ(t->optimizer.weightDecay, 0.0);
  EXPECT_EQ(t->optimizer.weightDecayMode, runtime::WeightDecayMode::Lazy);

  EXPECT_EQ(m->denseOptimizer.kind, runtime::OptimizerKind::Adam);
  EXPECT_EQ(m->denseOptimizer.lr, 0.001);
  EXPECT_EQ(m->denseOptimizer.momentum, 0.0);
  EXPECT_EQ(m->denseOptimizer.weightDecay, 0.0);
  EXPECT_EQ(m->denseOptimizer.weightDecayMode, runtime::WeightDecayMode::Global);
  EXPECT_EQ(m->embeddingOptimizer.kind, runtime::OptimizerKind::RowwiseAdagrad);
  EXPECT_EQ(m->embeddingOptimizer.weightDecayMode, runtime::WeightDecayMode::Lazy);

  EXPECT_EQ(m->loss.type, runtime::LossKind::BceWithLogits);
  EXPECT_EQ(m->loss.input, "top");
  EXPECT_EQ(m->loss.label, "label");

  EXPECT_EQ(m->training.batchSize, 2048);
  EXPECT_EQ(m->training.seed, 42);
  EXPECT_EQ(m->training.precision, runtime::ComputeType::F32);
  EXPECT_EQ(m->training.gradClipNorm, 0.0);
  EXPECT_EQ(m->training.gradAccumulation, 1);
  EXPECT_EQ(m->training.warmupSteps, 0);
  EXPECT_EQ(m->training.decaySteps, 0);
  EXPECT_EQ(m->training.lrSchedule, runtime::LrSchedule::Constant);

  // No "plan": every knob at its default.
  EXPECT_EQ(m->plan.memoryBudget, 0);
  EXPECT_EQ(m->plan.quantize, "none");
  EXPECT_EQ(m->plan.remat, "none");
  EXPECT_EQ(m->plan.schedule, embc::runtime::ScheduleKind::GPipe);
  EXPECT_EQ(m->plan.microBatches, 1);
  EXPECT_EQ(m->plan.pipelineStages, 1);
  EXPECT_EQ(m->plan.dataParallel, 1);

  EXPECT_EQ(m->shapeOf("C7").width, 16);
  EXPECT_EQ(m->shapeOf("C7").count, 0);
  EXPECT_EQ(m->shapeOf("dense").width, 13);
  EXPECT_EQ(m->shapeOf("label").width, 1);
  EXPECT_EQ(m->shapeOf("interaction").width, 367);
  EXPECT_EQ(m->shapeOf("no_such_value").width, 0);
  EXPECT_EQ(m->findLayer("C1"), nullptr);
  EXPECT_EQ(m->findTable("C1"), nullptr);
}

TEST(ModelParserExamples, DlrmMlperf) {
  std::optional<Model> m = parseExample("dlrm_mlperf.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(layerNames(*m),
            (std::vector<std::string>{"bottom", "interaction", "top"}));
  EXPECT_EQ(m->layers[0].width, 128);
  // 128 + 27 * 26 / 2 = 128 + 351.
  EXPECT_EQ(m->layers[1].width, 479);
  EXPECT_EQ(m->layers[2].sizes,
            (std::vector<int64_t>{1024, 1024, 512, 256, 1}));
  EXPECT_EQ(m->layers[2].width, 1);
  EXPECT_EQ(m->training.batchSize, 65536);
  EXPECT_EQ(m->training.seed, 0);

  const Table *c1 = m->findTable("t_C1");
  ASSERT_NE(c1, nullptr);
  EXPECT_EQ(c1->rows, 39884406);
  EXPECT_EQ(c1->dim, 128);
  EXPECT_EQ(c1->init.kind, runtime::InitKind::Uniform);
  EXPECT_DOUBLE_EQ(c1->init.high, 1.0 / std::sqrt(39884406.0));
  EXPECT_DOUBLE_EQ(c1->init.low, -1.0 / std::sqrt(39884406.0));
  const Table *c6 = m->findTable("t_C6");
  ASSERT_NE(c6, nullptr);
  EXPECT_EQ(c6->rows, 3);
  EXPECT_DOUBLE_EQ(c6->init.high, 0.57735026918962573);
  EXPECT_EQ(c6->optimizer.kind, runtime::OptimizerKind::RowwiseAdagrad);
  EXPECT_EQ(c6->optimizer.lr, 0.05);
  EXPECT_EQ(c6->optimizer.weightDecayMode, runtime::WeightDecayMode::Lazy);

  const Feature *f = m->findFeature("C10");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->hash);
  EXPECT_EQ(f->vocab, 38532951);
  EXPECT_EQ(m->findTable(f->table)->rows, 38532951);
}

TEST(ModelParserExamples, Dcn) {
  std::optional<Model> m = parseExample("dcn.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "dcn_v2");
  EXPECT_EQ(layerNames(*m), (std::vector<std::string>{"x0", "cross", "deep",
                                                      "stack", "logit"}));
  const Layer *x0 = m->findLayer("x0");
  EXPECT_EQ(x0->width, 13 + 26 * 16);
  EXPECT_EQ(x0->width, 429);
  const Layer *cross = m->findLayer("cross");
  EXPECT_EQ(cross->numLayers, 3);
  EXPECT_TRUE(cross->bias);
  EXPECT_EQ(cross->width, 429);
  EXPECT_EQ(m->findLayer("deep")->width, 128);
  EXPECT_EQ(m->findLayer("stack")->width, 557);
  const Layer *logit = m->findLayer("logit");
  EXPECT_EQ(logit->type, "dense");
  EXPECT_EQ(logit->sizes, std::vector<int64_t>{1});
  EXPECT_EQ(logit->activation, runtime::Activation::None);
  EXPECT_EQ(logit->finalActivation, runtime::Activation::None);
  EXPECT_TRUE(logit->bias);
  EXPECT_EQ(logit->width, 1);

  EXPECT_EQ(m->denseOptimizer.kind, runtime::OptimizerKind::Adam);
  EXPECT_EQ(m->denseOptimizer.lr, 0.001);
  EXPECT_EQ(m->denseOptimizer.beta1, 0.9);
  EXPECT_EQ(m->denseOptimizer.beta2, 0.999);
  EXPECT_EQ(m->denseOptimizer.eps, 1e-8);
  EXPECT_EQ(m->denseOptimizer.weightDecay, 0.0);
  EXPECT_EQ(m->denseOptimizer.weightDecayMode, runtime::WeightDecayMode::Global);
}

TEST(ModelParserExamples, WideDeep) {
  std::optional<Model> m = parseExample("wide_deep.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(layerNames(*m), (std::vector<std::string>{"wide", "deep_in",
                                                      "deep", "logit"}));
  const Layer *wide = m->findLayer("wide");
  EXPECT_EQ(wide->type, "add");
  EXPECT_FALSE(wide->bias);
  EXPECT_EQ(wide->width, 1);
  EXPECT_EQ(m->findLayer("deep_in")->width, 141);
  EXPECT_EQ(m->findLayer("deep")->width, 1);
  const Layer *logit = m->findLayer("logit");
  EXPECT_TRUE(logit->bias);
  EXPECT_EQ(logit->pointer, "/layers/3");
  EXPECT_EQ(logit->width, 1);

  // Per-table optimizer override versus the inherited embedding optimizer.
  const Table *w1 = m->findTable("t_W1");
  EXPECT_EQ(w1->dim, 1);
  EXPECT_EQ(w1->init.kind, runtime::InitKind::Zeros);
  EXPECT_EQ(w1->optimizer.kind, runtime::OptimizerKind::Sgd);
  EXPECT_EQ(w1->optimizer.lr, 0.05);
  EXPECT_EQ(w1->optimizer.momentum, 0.0);
  EXPECT_EQ(w1->optimizer.weightDecayMode, runtime::WeightDecayMode::Lazy);
  const Table *c1 = m->findTable("t_C1");
  EXPECT_EQ(c1->optimizer.kind, runtime::OptimizerKind::Adagrad);
  EXPECT_EQ(c1->optimizer.lr, 0.05);
}

TEST(ModelParserExamples, TextClassifier) {
  std::optional<Model> m = parseExample("text_classifier.json");
  ASSERT_TRUE(m);
  const Feature *tokens = m->findFeature("tokens");
  EXPECT_EQ(tokens->kind, FeatureKind::Sequence);
  EXPECT_EQ(tokens->hotness, 64);
  EXPECT_EQ(m->findFeature("label")->labelKind, runtime::LabelKind::Class);
  EXPECT_EQ(layerNames(*m), (std::vector<std::string>{"mean", "max", "pooled", "logits"}));
  EXPECT_EQ(m->findLayer("max")->sequencePooling, runtime::SequencePooling::Max);
  EXPECT_EQ(m->findLayer("logits")->width, 7);
}

TEST(ModelParserExamples, TwoTower) {
  std::optional<Model> m = parseExample("two_tower.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(layerNames(*m),
            (std::vector<std::string>{"user_in", "user_tower", "item_in",
                                      "item_tower", "score"}));
  EXPECT_EQ(m->findLayer("user_in")->width, 64);
  EXPECT_EQ(m->findLayer("user_tower")->width, 32);
  EXPECT_EQ(m->findLayer("item_in")->width, 64);
  EXPECT_EQ(m->findLayer("score")->width, 1);
  const Feature *hist = m->findFeature("user_hist");
  EXPECT_EQ(hist->hotness, 20);
  EXPECT_EQ(hist->pooling, runtime::Pooling::Mean);
  EXPECT_EQ(hist->table, "items");
  EXPECT_EQ(m->findFeature("item_id")->table, "items");
  EXPECT_EQ(m->embeddingOptimizer.kind, runtime::OptimizerKind::RowwiseAdagrad);
}

TEST(ModelParserExamples, MfMovielens) {
  std::optional<Model> m = parseExample("mf_movielens.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(layerNames(*m),
            (std::vector<std::string>{"affinity", "prediction"}));
  EXPECT_EQ(m->findLayer("affinity")->width, 1);
  EXPECT_EQ(m->findLayer("prediction")->width, 1);
  EXPECT_TRUE(m->findLayer("prediction")->bias);
  EXPECT_EQ(m->embeddingOptimizer.kind, runtime::OptimizerKind::Sgd);
  EXPECT_EQ(m->embeddingOptimizer.lr, 1.0);
  EXPECT_EQ(m->embeddingOptimizer.weightDecay, 0.0005);
  EXPECT_EQ(m->embeddingOptimizer.weightDecayMode, runtime::WeightDecayMode::Lazy);
  EXPECT_EQ(m->findTable("users")->optimizer.weightDecay, 0.0005);
  const Table *users = m->findTable("users");
  EXPECT_EQ(users->init.kind, runtime::InitKind::Normal);
  EXPECT_EQ(users->init.mean, 0.0);
  EXPECT_EQ(users->init.std, 0.01);
  EXPECT_EQ(m->findTable("user_bias")->init.kind, runtime::InitKind::Zeros);
  EXPECT_EQ(m->loss.type, runtime::LossKind::Mse);
  EXPECT_EQ(m->findFeature("rating")->labelKind, runtime::LabelKind::Real);
}

TEST(ModelParserExamples, Skipgram) {
  std::optional<Model> m = parseExample("skipgram.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(layerNames(*m), (std::vector<std::string>{"pos", "neg"}));
  EXPECT_EQ(m->findLayer("pos")->width, 1);
  // dot with a negatives feature: B x count.
  EXPECT_EQ(m->findLayer("neg")->width, 5);
  const Feature *neg = m->findFeature("negatives");
  EXPECT_EQ(neg->kind, FeatureKind::Negatives);
  EXPECT_EQ(neg->count, 5);
  EXPECT_EQ(neg->power, 0.75);
  EXPECT_EQ(neg->table, "out_vectors");
  EXPECT_EQ(m->shapeOf("negatives").width, 100);
  EXPECT_EQ(m->shapeOf("negatives").count, 5);
  EXPECT_EQ(m->loss.type, runtime::LossKind::NegSampling);
  EXPECT_EQ(m->loss.input, "pos");
  EXPECT_EQ(m->loss.label, "neg");
  const Table *in = m->findTable("in_vectors");
  EXPECT_EQ(in->init.kind, runtime::InitKind::Uniform);
  EXPECT_EQ(in->init.low, -0.005);
  EXPECT_EQ(in->init.high, 0.005);
}

//===----------------------------------------------------------------------===//
// Order, widths and defaults on small models
//===----------------------------------------------------------------------===//

TEST(ModelParser, MinimalModelParses) {
  std::optional<Model> m = parseOk(minimalModel().dump());
  ASSERT_TRUE(m);
  expectWellFormed(*m);
  EXPECT_EQ(layerNames(*m), (std::vector<std::string>{"cat", "out"}));
  EXPECT_EQ(m->findLayer("cat")->width, 8);
  EXPECT_EQ(m->findLayer("out")->width, 1);
  EXPECT_EQ(m->description, "");
  EXPECT_EQ(m->findTable("t")->optimizer.lr, 0.2);
}

TEST(ModelParser, LayersAreOrderedInputsFirst) {
  Json j = minimalModel();
  // Written consumers first: a -> b -> c -> out must come out reversed.
  j["layers"] = Json::parse(R"([
    {"name": "out", "type": "dense", "input": "c", "size": 1},
    {"name": "c", "type": "activation", "input": "b", "kind": "tanh"},
    {"name": "b", "type": "cross", "input": "a"},
    {"name": "a", "type": "concat", "inputs": ["ids", "x"]}
  ])");
  j["loss"]["input"] = "out";
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  expectWellFormed(*m);
  EXPECT_EQ(layerNames(*m),
            (std::vector<std::string>{"a", "b", "c", "out"}));
  // Pointers still name the position in the file.
  EXPECT_EQ(m->findLayer("a")->pointer, "/layers/3");
  EXPECT_EQ(m->findLayer("out")->pointer, "/layers/0");
  EXPECT_EQ(m->findLayer("b")->width, 8);
  EXPECT_EQ(m->findLayer("b")->numLayers, 1);
  EXPECT_EQ(m->findLayer("c")->activation, runtime::Activation::Tanh);
  EXPECT_EQ(m->findLayer("c")->width, 8);
  EXPECT_EQ(m->findLayer("out")->activation, runtime::Activation::None);
  EXPECT_EQ(m->findLayer("out")->init.kind, runtime::InitKind::XavierUniform);
}

TEST(ModelParser, DotInteractionWidthVariants) {
  Json j = minimalModel();
  j["features"] = Json::parse(R"([
    {"name": "x", "type": "dense", "dim": 4},
    {"name": "a", "type": "sparse", "table": "t", "vocab": 100},
    {"name": "b", "type": "sparse", "table": "t", "vocab": 100},
    {"name": "y", "type": "label"}
  ])");
  j["layers"] = Json::parse(R"([
    {"name": "i", "type": "dot_interaction", "inputs": ["x", "a", "b"]},
    {"name": "out", "type": "mlp", "input": "i", "sizes": [1]}
  ])");
  auto widthOf = [&](Json layer) -> int64_t {
    Json v = j;
    v["layers"][0] = layer;
    std::optional<Model> m = parseOk(v.dump());
    return m ? m->findLayer("i")->width : -1;
  };
  Json i = j["layers"][0];
  EXPECT_EQ(widthOf(i), 4 + 3); // D + F(F-1)/2
  i["keep_first"] = false;
  EXPECT_EQ(widthOf(i), 3);
  i["self_interaction"] = true;
  EXPECT_EQ(widthOf(i), 6); // F(F+1)/2
  i["keep_first"] = true;
  EXPECT_EQ(widthOf(i), 10);
}

TEST(ModelParser, SparseFeatureDefaultsAndOverrides) {
  Json j = minimalModel();
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  const Feature *ids = m->findFeature("ids");
  EXPECT_EQ(ids->hotness, 1);
  EXPECT_EQ(ids->pooling, runtime::Pooling::Sum);
  EXPECT_FALSE(ids->hash);
  EXPECT_FALSE(ids->weighted);
  EXPECT_EQ(m->findFeature("y")->labelKind, runtime::LabelKind::Binary);

  j["features"][1]["hotness"] = 4096;
  j["features"][1]["pooling"] = "mean";
  j["features"][1]["weighted"] = true;
  j["features"][1]["hash"] = true;
  j["features"][1]["vocab"] = 1099511627776; // 2^40 > rows: needs hash
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  ids = m->findFeature("ids");
  EXPECT_EQ(ids->hotness, 4096);
  EXPECT_EQ(ids->pooling, runtime::Pooling::Mean);
  EXPECT_TRUE(ids->weighted);
  EXPECT_TRUE(ids->hash);
  EXPECT_EQ(ids->vocab, int64_t(1) << 40);
}

/// minimalModel() with the sparse feature replaced by a sequence of at most
/// 12 tokens, pooled by a sequence_pool layer.
Json sequenceModel() {
  Json j = minimalModel();
  j["features"][1] = Json::parse(
      R"({"name": "ids", "type": "sequence", "table": "t", "vocab": 100, "max_len": 12})");
  j["layers"][0] = Json::parse(R"({"name": "pooled", "type": "sequence_pool", "input": "ids"})");
  j["layers"].push_back(Json::parse(R"({"name": "cat", "type": "concat", "inputs": ["x", "pooled"]})"));
  return j;
}

TEST(ModelParser, SequenceFeatureAndPooling) {
  Json j = sequenceModel();
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  expectWellFormed(*m);
  const Feature *ids = m->findFeature("ids");
  EXPECT_EQ(ids->kind, FeatureKind::Sequence);
  EXPECT_EQ(ids->hotness, 12);
  EXPECT_EQ(m->shapeOf("ids").count, 12);
  EXPECT_EQ(m->shapeOf("ids").width, 4);
  const Layer *pooled = m->findLayer("pooled");
  EXPECT_EQ(pooled->width, 4);
  EXPECT_EQ(pooled->sequencePooling, runtime::SequencePooling::Mean);
  EXPECT_FALSE(ids->positions.has_value());
  j["layers"][0]["mode"] = "first";
  j["features"][1]["positions"] = "sinusoidal";
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->findLayer("pooled")->sequencePooling, runtime::SequencePooling::First);
  EXPECT_EQ(m->findFeature("ids")->positions, runtime::PositionKind::Sinusoidal);
  j["features"][1]["positions"] = "none";
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->findFeature("ids")->positions.has_value());
}

TEST(ModelParser, SequenceErrorsNameTheField) {
  Json j = sequenceModel();
  j["layers"][2]["inputs"][1] = "ids";
  expectParseError(j, "/layers/2/inputs/1",
                   "sequence feature 'ids' is B x 12 x 4: pool it with a 'sequence_pool' layer "
                   "first");
  j = sequenceModel();
  j["layers"][0]["input"] = "x";
  expectParseError(j, "/layers/0/input",
                   "'sequence_pool' pools a sequence feature or a sequence layer; 'x' is not one");
  j = sequenceModel();
  j["features"][1]["max_len"] = 0;
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/features/1/max_len");
  j = sequenceModel();
  j["features"][1]["vocab"] = 101;
  expectParseError(j, "/features/1/vocab",
                   "feature 'ids' has vocab 101 but table 't' has only 100 rows");
  j = sequenceModel();
  j["layers"][0]["mode"] = "last";
  e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/layers/0/mode");
}

/// sequenceModel() with an encoder between the sequence and its pooling:
/// layers enc, pooled, out, cat.
Json encoderModel() {
  Json j = sequenceModel();
  j["layers"].insert(j["layers"].begin(),
                     Json::parse(R"({"name": "enc", "type": "encoder", "input": "ids", "layers": 2,
                                     "heads": 2})"));
  j["layers"][1]["input"] = "enc";
  return j;
}

TEST(ModelParser, EncoderIsASequenceLayer) {
  Json j = encoderModel();
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  expectWellFormed(*m);
  const Layer *enc = m->findLayer("enc");
  EXPECT_EQ(enc->sequence, "ids");
  EXPECT_EQ(enc->maxLen, 12);
  EXPECT_EQ(enc->width, 4);
  EXPECT_EQ(enc->encoder.layers, 2);
  EXPECT_EQ(enc->encoder.ffn, 16); // 4 d_model
  EXPECT_TRUE(enc->encoder.preNorm);
  EXPECT_EQ(enc->heads, 2);
  EXPECT_EQ(m->findLayer("pooled")->width, 4);

  // Row-wise layers keep the sequence: a dense projection, a layer norm and
  // a residual sum of two sequence layers.
  j["layers"][0]["norm"] = "post";
  j["layers"][0]["ffn"] = 6;
  j["layers"][0]["d_model"] = 4;
  j["layers"].push_back(Json::parse(R"({"name": "proj", "type": "dense", "input": "enc", "size": 4})"));
  j["layers"].push_back(Json::parse(R"({"name": "sum", "type": "add", "inputs": ["proj", "ids"]})"));
  j["layers"].push_back(Json::parse(R"({"name": "norm", "type": "layer_norm", "input": "sum"})"));
  j["layers"][1]["input"] = "norm";
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->findLayer("enc")->encoder.preNorm);
  EXPECT_EQ(m->findLayer("enc")->encoder.ffn, 6);
  for (const char *name : {"proj", "sum", "norm"}) {
    EXPECT_EQ(m->findLayer(name)->sequence, "ids") << name;
    EXPECT_EQ(m->findLayer(name)->maxLen, 12) << name;
  }
}

TEST(ModelParser, DropoutIsARowLayerAndTheEncodersRate) {
  Json j = encoderModel();
  j["layers"][0]["dropout"] = 0.1;
  j["layers"].push_back(Json::parse(R"({"name": "drop", "type": "dropout", "input": "enc",
                                        "rate": 0.25})"));
  j["layers"][1]["input"] = "drop";
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->findLayer("enc")->dropout, 0.1);
  const Layer *drop = m->findLayer("drop");
  EXPECT_EQ(drop->dropout, 0.25);
  EXPECT_EQ(drop->sequence, "ids"); // applied per position, the sequence kept
  EXPECT_EQ(drop->width, 4);

  j["layers"][4]["rate"] = -0.5;
  expectParseError(j, "/layers/4/rate",
                   "'rate' must be in [0, 1) (the probability of zeroing an element while "
                   "training)");
  j["layers"][4].erase("rate");
  expectParseError(j, "/layers/4", "a 'dropout' layer needs 'rate'");
  j["layers"][4]["rate"] = 0.5;
  j["layers"][4]["seed"] = 3;
  EXPECT_EQ(parseError(j.dump()).pointer, "/layers/4/seed");

  // A self_attention layer drops its weights.
  j = encoderModel();
  j["layers"][0] = Json::parse(R"({"name": "enc", "type": "self_attention", "input": "ids",
                                   "heads": 2, "dropout": 0.2})");
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->findLayer("enc")->dropout, 0.2);
  j["layers"][0]["dropout"] = 1.5;
  expectParseError(j, "/layers/0/dropout",
                   "'dropout' must be in [0, 1) (the probability of zeroing an element while "
                   "training)");
}

TEST(ModelParser, EncoderErrorsNameTheField) {
  Json j = encoderModel();
  j["layers"][0]["heads"] = 3;
  expectParseError(j, "/layers/0/heads", "'heads' 3 does not divide the width 4 of 'ids'");
  j = encoderModel();
  j["layers"][0]["d_model"] = 8;
  expectParseError(j, "/layers/0/d_model", "'d_model' 8 must be the width 4 of its input 'ids'");
  j = encoderModel();
  j["layers"][0]["dropout"] = 1.0;
  expectParseError(j, "/layers/0/dropout",
                   "'dropout' must be in [0, 1) (the probability of zeroing an element while "
                   "training)");
  j = encoderModel();
  j["layers"][0]["norm"] = "sandwich";
  EXPECT_EQ(parseError(j.dump()).pointer, "/layers/0/norm");
  j = encoderModel();
  j["layers"][0]["eps"] = 0;
  expectParseError(j, "/layers/0/eps", "'eps' must be positive and finite");
  j = encoderModel();
  j["layers"][0]["input"] = "x";
  expectParseError(j, "/layers/0/input",
                   "'encoder' reads a sequence feature or a sequence layer; 'x' is not one");
  // A sequence layer must be pooled before a layer that mixes features.
  j = encoderModel();
  j["layers"][3]["inputs"][1] = "enc";
  expectParseError(j, "/layers/3/inputs/1",
                   "layer 'enc' is a sequence, B x 12 x 4: pool it with a 'sequence_pool' layer "
                   "first");
  // ... and before the loss.
  j = encoderModel();
  j["loss"]["input"] = "enc";
  expectParseError(j, "/loss/input",
                   "loss input 'enc' is a sequence, B x 12 x 4; pool it with a 'sequence_pool' "
                   "layer first");
  // A residual sum of a sequence and a B x width value.
  j = encoderModel();
  j["layers"].push_back(Json::parse(R"({"name": "bad", "type": "add", "inputs": ["enc", "x"]})"));
  expectParseError(j, "/layers/4/inputs/1",
                   "'add' inputs must all be rows of the same sequence, or all B x width: 'x' "
                   "and 'enc' are not");
  // The encoder's parameters are symbols: a table may not take their names.
  j = encoderModel();
  j["embeddings"][0]["name"] = "enc_l1_wffn2";
  j["features"][1]["table"] = "enc_l1_wffn2";
  expectParseError(j, "/embeddings/0/name",
                   "table name 'enc_l1_wffn2' clashes with a parameter of layer 'enc'; rename "
                   "one of them");
  // Nor may another layer's parameters.
  j = encoderModel();
  j["layers"].push_back(Json::parse(R"({"name": "enc_final", "type": "layer_norm", "input": "enc"})"));
  j["layers"][1]["input"] = "enc_final";
  expectParseError(j, "/layers/4/name",
                   "layers 'enc' and 'enc_final' both have a parameter named 'enc_final_gamma'; "
                   "rename one of them");
}

TEST(ModelParser, OptimizerDefaults) {
  Json j = minimalModel();
  j["optimizer"]["dense"] = Json::parse(R"({"type": "lamb", "lr": 0.001})");
  j["optimizer"]["embedding"] =
      Json::parse(R"({"type": "rowwise_adagrad", "lr": 0.01})");
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  const OptimizerConfig &d = m->denseOptimizer;
  EXPECT_EQ(d.kind, runtime::OptimizerKind::Lamb);
  EXPECT_EQ(d.lr, 0.001);
  EXPECT_EQ(d.beta1, 0.9);
  EXPECT_EQ(d.beta2, 0.999);
  EXPECT_EQ(d.eps, 1e-8);
  EXPECT_EQ(d.weightDecay, 0.0);
  EXPECT_EQ(d.weightDecayMode, runtime::WeightDecayMode::Global);
  const OptimizerConfig &e = m->embeddingOptimizer;
  EXPECT_EQ(e.kind, runtime::OptimizerKind::RowwiseAdagrad);
  EXPECT_EQ(e.lr, 0.01);
  EXPECT_EQ(e.eps, 1e-8);
  EXPECT_EQ(e.initialAccumulator, 0.0);
  EXPECT_EQ(e.weightDecay, 0.0);
  EXPECT_EQ(e.weightDecayMode, runtime::WeightDecayMode::Lazy);
  EXPECT_EQ(m->findTable("t")->optimizer.kind, runtime::OptimizerKind::RowwiseAdagrad);

  j["optimizer"]["dense"] = Json::parse(
      R"({"type": "adamw", "lr": 0.001, "beta1": 0.5, "beta2": 0.75,
          "eps": 1e-6, "weight_decay": 0.01, "weight_decay_mode": "global"})");
  j["optimizer"]["embedding"] = Json::parse(
      R"({"type": "sgd", "lr": 0.5, "momentum": 0.9, "weight_decay": 0.25,
          "weight_decay_mode": "global"})");
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->denseOptimizer.beta1, 0.5);
  EXPECT_EQ(m->denseOptimizer.beta2, 0.75);
  EXPECT_EQ(m->denseOptimizer.eps, 1e-6);
  EXPECT_EQ(m->denseOptimizer.weightDecay, 0.01);
  EXPECT_EQ(m->denseOptimizer.weightDecayMode, runtime::WeightDecayMode::Global);
  EXPECT_EQ(m->embeddingOptimizer.momentum, 0.9);
  EXPECT_EQ(m->embeddingOptimizer.weightDecay, 0.25);
  EXPECT_EQ(m->embeddingOptimizer.weightDecayMode, runtime::WeightDecayMode::Global);
  EXPECT_EQ(m->findTable("t")->optimizer.weightDecayMode, runtime::WeightDecayMode::Global);
}

TEST(ModelParser, WeightDecayModeRules) {
  Json j = minimalModel();
  j["optimizer"]["embedding"]["weight_decay"] = 0.1;
  expectParseError(j, "/optimizer/embedding/weight_decay",
                  "embedding weight decay needs 'weight_decay_mode': 'lazy' "
                  "(touched rows only) or 'global' (every row, every step)");

  j["optimizer"]["embedding"]["weight_decay_mode"] = "lazy";
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->embeddingOptimizer.weightDecay, 0.1);
  EXPECT_EQ(m->embeddingOptimizer.weightDecayMode, runtime::WeightDecayMode::Lazy);

  expectModelError(
      [&](Json &j) { j["optimizer"]["dense"]["weight_decay_mode"] = "lazy"; },
      "/optimizer/dense/weight_decay_mode",
      "dense parameters always decay globally; 'lazy' "
      "applies only to embedding rows");

  expectModelError(
      [&](Json &j) { j["optimizer"]["embedding"]["weight_decay_mode"] = "sometimes"; },
      "/optimizer/embedding/weight_decay_mode",
      "'weight_decay_mode' must be one of 'lazy', 'global', "
      "got 'sometimes'");
}

TEST(ModelParser, OptimizerTypeRules) {
  Json j = minimalModel();
  j["optimizer"]["dense"]["type"] = "rowwise_adagrad";
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/optimizer/dense/type");
  EXPECT_EQ(e.message, "'rowwise_adagrad' is for embedding tables; use "
                       "'adagrad' for dense parameters");

  j = minimalModel();
  j["optimizer"]["embedding"]["type"] = "lamb";
  e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/optimizer/embedding/type");
  EXPECT_EQ(e.message.rfind("'lamb' is not supported for embedding tables", 0),
            0u)
      << e.message;

  expectModelError(
      [&](Json &j) { j["optimizer"]["dense"]["beta1"] = 0.5; },
      "/optimizer/dense/beta1",
      "'beta1' does not apply to the 'sgd' optimizer");

  j = minimalModel();
  j["embeddings"][0]["optimizer"] =
      Json::parse(R"({"type": "adagrad", "lr": 0.1, "momentum": 0.9})");
  expectParseError(j, "/embeddings/0/optimizer/momentum",
                  "'momentum' does not apply to the 'adagrad' optimizer");

  expectModelError(
      [&](Json &j) { j["optimizer"]["dense"]["lr"] = 0; },
      "/optimizer/dense/lr",
      "'lr' must be positive, got 0");
}

TEST(ModelParser, TableInitDefaultBoundIsOneOverSqrtRows) {
  Json j = minimalModel();
  j["embeddings"][0]["rows"] = 250000;
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  const Table *t = m->findTable("t");
  EXPECT_EQ(t->init.kind, runtime::InitKind::Uniform);
  EXPECT_DOUBLE_EQ(t->init.high, 0.002);
  EXPECT_DOUBLE_EQ(t->init.low, -0.002);

  j["embeddings"][0]["init"] = Json::parse(R"({"kind": "normal", "std": 0.5})");
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  t = m->findTable("t");
  EXPECT_EQ(t->init.kind, runtime::InitKind::Normal);
  EXPECT_EQ(t->init.mean, 0.0);
  EXPECT_EQ(t->init.std, 0.5);

  j["embeddings"][0]["init"] = Json::parse(R"({"kind": "xavier_normal"})");
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/embeddings/0/init/kind");
  EXPECT_EQ(e.message, "Xavier initialisation is for dense weights; use "
                       "'uniform' or 'normal' for embedding tables");

  j["embeddings"][0]["init"] =
      Json::parse(R"({"kind": "uniform", "low": 1, "high": 1})");
  expectParseError(j, "/embeddings/0/init/high",
                  "uniform initializer needs low < high, got low = 1, high = 1");
}

TEST(ModelParser, TableDtypeFollowsPlanQuantize) {
  Json j = minimalModel();
  j["plan"] = Json::parse(R"({"quantize": "fp16"})");
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->plan.quantize, "fp16");
  EXPECT_EQ(m->findTable("t")->dtype, runtime::Storage::F16);

  j["plan"]["quantize"] = "int8";
  j["embeddings"][0]["dtype"] = "bf16"; // the table's own dtype wins
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->findTable("t")->dtype, runtime::Storage::BF16);

  j["embeddings"][0].erase("dtype");
  m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->findTable("t")->dtype, runtime::Storage::Int8);

  j["plan"]["quantize"] = "auto";
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/plan/quantize");
}

// A table's placement: device (default), host or disk; a sharded table
// stays on its ranks' devices.
TEST(ModelParser, TablePlacement) {
  Json j = minimalModel();
  for (auto [word, placement] : {std::pair{"device", runtime::Placement::Device},
                                 std::pair{"host", runtime::Placement::Host},
                                 std::pair{"disk", runtime::Placement::Disk}}) {
    j["embeddings"][0]["placement"] = word;
    std::optional<Model> m = parseOk(j.dump());
    ASSERT_TRUE(m) << word;
    EXPECT_EQ(m->findTable("t")->placement, placement) << word;
  }
  j["embeddings"][0]["placement"] = "ssd";
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/embeddings/0/placement");
  EXPECT_EQ(e.message, "'placement' must be one of 'device', 'host', 'disk', got 'ssd'");
  j["embeddings"][0]["placement"] = "disk";
  j["embeddings"][0]["sharding"] = "table_wise";
  e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/embeddings/0/placement");
  EXPECT_NE(e.message.find("a sharded table lives on its ranks' devices"), std::string::npos)
      << e.message;
}

TEST(ModelParser, TrainingAndPlanKnobs) {
  Json j = minimalModel();
  j["training"] = Json::parse(R"({"batch_size": 4096, "precision": "bf16",
      "grad_clip_norm": 1.5, "grad_accumulation": 4, "warmup_steps": 100,
      "lr_schedule": "cosine", "decay_steps": 1000, "seed": 7})");
  j["plan"] = Json::parse(R"({"remat": "all", "micro_batches": 8,
      "pipeline_stages": 2, "schedule": "1f1b", "data_parallel": 4})");
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->training.batchSize, 4096);
  EXPECT_EQ(m->training.precision, runtime::ComputeType::BF16);
  EXPECT_EQ(m->training.gradClipNorm, 1.5);
  EXPECT_EQ(m->training.gradAccumulation, 4);
  EXPECT_EQ(m->training.warmupSteps, 100);
  EXPECT_EQ(m->training.lrSchedule, runtime::LrSchedule::Cosine);
  EXPECT_EQ(m->training.decaySteps, 1000);
  EXPECT_EQ(m->training.seed, 7);
  EXPECT_EQ(m->plan.remat, "all");
  EXPECT_EQ(m->plan.microBatches, 8);
  EXPECT_EQ(m->plan.pipelineStages, 2);
  EXPECT_EQ(m->plan.schedule, embc::runtime::ScheduleKind::OneFOneB);
  EXPECT_EQ(m->plan.dataParallel, 4);

  j["plan"]["micro_batches"] = 3;
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/plan/micro_batches");
  // batch_size is the global batch: micro-batches cut each rank's 4096 / 4.
  EXPECT_EQ(e.message,
            "'micro_batches' (3) must divide each rank's batch (batch_size / data_parallel = 1024)");
  j["plan"]["micro_batches"] = 8;
  j["plan"]["data_parallel"] = 3;
  expectParseError(j, "/plan/data_parallel",
                  "'data_parallel' (3) must divide 'batch_size' (4096): each rank trains on "
                  "batch_size / data_parallel examples");

  expectModelError(
      [&](Json &j) { j["training"]["lr_schedule"] = "linear"; },
      "/training/lr_schedule",
      "'lr_schedule' 'linear' needs 'decay_steps' > 0");

  expectModelError(
      [&](Json &j) { j["plan"] = Json::parse(R"({"remat": "auto"})"); },
      "/plan/remat",
      "'remat': 'auto' needs 'memory_budget'");
}

//===----------------------------------------------------------------------===//
// plan.memory_budget
//===----------------------------------------------------------------------===//

int64_t budgetOf(const Json &value) {
  Json j = minimalModel();
  j["plan"] = Json::object();
  j["plan"]["memory_budget"] = value;
  std::optional<Model> m = parseOk(j.dump());
  return m ? m->plan.memoryBudget : -1;
}

std::string budgetError(const Json &value) {
  Json j = minimalModel();
  j["plan"] = Json::object();
  j["plan"]["memory_budget"] = value;
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/plan/memory_budget");
  return e.message;
}

TEST(ModelParserMemoryBudget, StringsAndIntegers) {
  EXPECT_EQ(budgetOf("512MiB"), 536870912);
  EXPECT_EQ(budgetOf("1.5GB"), 1500000000);
  EXPECT_EQ(budgetOf("2GiB"), 2147483648);
  EXPECT_EQ(budgetOf("1TiB"), 1099511627776);
  EXPECT_EQ(budgetOf("64KB"), 64000);
  EXPECT_EQ(budgetOf("3KiB"), 3072);
  EXPECT_EQ(budgetOf("10MB"), 10000000);
  EXPECT_EQ(budgetOf("4096"), 4096);
  EXPECT_EQ(budgetOf("4096B"), 4096);
  EXPECT_EQ(budgetOf(4096), 4096);
  EXPECT_EQ(budgetOf(int64_t(1) << 50), int64_t(1) << 50);
  EXPECT_EQ(budgetOf("1024TiB"), int64_t(1) << 50);
  EXPECT_EQ(budgetOf("0.5KiB"), 512);
  EXPECT_EQ(budgetOf("1B"), 1);
}

TEST(ModelParserMemoryBudget, RematAutoAcceptsABudget) {
  Json j = minimalModel();
  j["plan"] = Json::parse(R"({"memory_budget": "8GiB", "remat": "auto"})");
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->plan.memoryBudget, 8589934592);
  EXPECT_EQ(m->plan.remat, "auto");
}

TEST(ModelParserMemoryBudget, Rejections) {
  const std::string expected =
      "'memory_budget' must be a size of at least 1 byte such as '512MiB', "
      "'2GiB' or '1.5GB' (at most 1 PiB), got ";
  EXPECT_EQ(budgetError("12XB"), expected + "'12XB'");
  EXPECT_EQ(budgetError("MiB"), expected + "'MiB'");
  EXPECT_EQ(budgetError(""), expected + "''");
  EXPECT_EQ(budgetError("0MiB"), expected + "'0MiB'");
  EXPECT_EQ(budgetError("-1GiB"), expected + "'-1GiB'");
  EXPECT_EQ(budgetError("512 MiB"), expected + "'512 MiB'");
  EXPECT_EQ(budgetError("512mib"), expected + "'512mib'");
  EXPECT_EQ(budgetError("1025TiB"), expected + "'1025TiB'");
  EXPECT_EQ(budgetError("nan"), expected + "'nan'");
  EXPECT_EQ(budgetError("infGB"), expected + "'infGB'");
  // Only DIGITS[.DIGITS]UNIT: no space, sign, exponent or hex.
  EXPECT_EQ(budgetError(" 5MiB"), expected + "' 5MiB'");
  EXPECT_EQ(budgetError("+5MiB"), expected + "'+5MiB'");
  EXPECT_EQ(budgetError("1e3MiB"), expected + "'1e3MiB'");
  EXPECT_EQ(budgetError("5.MiB"), expected + "'5.MiB'");
  EXPECT_EQ(budgetError(".5MiB"), expected + "'.5MiB'");
  EXPECT_EQ(budgetError("0x10MiB"), expected + "'0x10MiB'");
  // A budget that rounds to 0 bytes would mean "no budget".
  EXPECT_EQ(budgetError("0.5B"), expected + "'0.5B'");
  EXPECT_EQ(budgetError("0.0001KB"), expected + "'0.0001KB'");
  EXPECT_EQ(budgetError(1.5),
            "'memory_budget' must be a byte count or a string such as "
            "'2GiB', got a number");
  EXPECT_EQ(budgetError(true),
            "'memory_budget' must be a byte count or a string such as "
            "'2GiB', got a boolean");
}

// nlohmann stores a non-negative integer as number_unsigned: the minimum must
// be checked for those too ("dim": 0 on a table once divided by zero).
TEST(ModelParserIntegers, ZeroIsBelowTheMinimum) {
  EXPECT_EQ(budgetError(0),
            "'memory_budget' must be an integer in [1, 1125899906842624], "
            "got 0");

  Json j = minimalModel();
  j["features"][0]["dim"] = 0;
  expectParseError(j, "/features/0/dim", "'dim' must be an integer in [1, 65536], got 0");

  expectModelError(
      [&](Json &j) { j["embeddings"][0]["dim"] = 0; },
      "/embeddings/0/dim",
      "'dim' must be an integer in [1, 65536], got 0");

  expectModelError(
      [&](Json &j) { j["training"]["batch_size"] = 0; },
      "/training/batch_size",
      "'batch_size' must be an integer in [1, 16777216], got 0");

  expectModelError(
      [&](Json &j) { j["layers"][1]["sizes"] = Json::parse("[8, 0]"); },
      "/layers/1/sizes/1",
      "entries of 'sizes' must be integers in [1, 1048576], got 0");
}

TEST(ModelParserIntegers, RangesAreChecked) {
  Json j = minimalModel();
  j["features"][0]["dim"] = 65537;
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/features/0/dim");
  EXPECT_EQ(e.message, "'dim' must be an integer in [1, 65536], got 65537");

  j["features"][0]["dim"] = 4.0;
  expectParseError(j, "/features/0/dim",
                  "'dim' must be an integer in [1, 65536], got a number 4.0");

  j = minimalModel();
  j["training"]["seed"] = 18446744073709551615u; // above INT64_MAX
  expectParseError(j, "/training/seed",
                  "'seed' must be an integer in [0, 9223372036854775807]"
                  ", got 18446744073709551615");

  expectModelError(
      [&](Json &j) { j["layers"][1]["sizes"] = Json::parse("[8, -1]"); },
      "/layers/1/sizes/1",
      "entries of 'sizes' must be integers in [1, 1048576], got -1");

  j = minimalModel();
  j["embeddings"][0]["rows"] = 1099511627776; // 2^40 rows x 4 > 2^40
  j["features"][1]["hash"] = true;
  expectParseError(j, "/embeddings/0/rows",
                  "table 't' has 1099511627776 x 4 elements, more than "
                  "the limit 2^40");
}

TEST(ModelParser, LayerWidthLimit) {
  Json j = minimalModel();
  j["features"][0]["dim"] = 65536;
  j["layers"][0]["inputs"] = Json::array();
  for (int i = 0; i < 16; ++i)
    j["layers"][0]["inputs"].push_back("x");
  j["layers"][0]["inputs"].push_back("ids");
  // 16 x 65536 + 4 = 1048580 > 2^20.
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/layers/0");
  EXPECT_EQ(e.message,
            "layer 'cat' has width 1048580, more than the limit 1048576");

  // dot_interaction: D + F(F-1)/2 with F = 1450 and D = 4.
  j = minimalModel();
  Json inputs = Json::array();
  for (int i = 0; i < 1450; ++i)
    inputs.push_back("ids");
  j["layers"][0] = {{"name", "cat"}, {"type", "dot_interaction"},
                    {"inputs", inputs}};
  j["features"].erase(0);
  expectParseError(j, "/layers/0", "layer 'cat' has width 1050529, more than the limit 1048576");
}

TEST(ModelParser, LossOperandsAreTwoDimensional) {
  Json j = Json::parse(readExample("skipgram.json"));
  j["loss"]["negative"] = "negatives";
  expectParseError(j, "/loss/negative",
                  "loss negative 'negatives' is B x 5 x 100; the loss needs a B x N "
                  "value (score the negatives with a 'dot' layer)");

  expectModelError(
      [&](Json &j) { j["loss"]["input"] = "cat"; },
      "/loss/input",
      "a 'bce_with_logits' loss needs a B x 1 input; 'cat' "
      "has width 8");
}

TEST(ModelParser, SymbolClashesFollowParameters) {
  Json j = minimalModel();
  j["embeddings"][0]["name"] = "forward";
  j["features"][1]["table"] = "forward";
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/embeddings/0/name");
  EXPECT_EQ(e.message,
            "table name 'forward' is reserved for the forward function");

  // Without a bias, "out" has out_w0 and out_w1 but no out_b<i>.
  j = minimalModel();
  j["layers"][1]["bias"] = false;
  j["embeddings"][0]["name"] = "out_b0";
  j["features"][1]["table"] = "out_b0";
  std::optional<Model> m = parseOk(j.dump());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->findLayer("out")->bias);
  j["embeddings"][0]["name"] = "out_w1";
  j["features"][1]["table"] = "out_w1";
  expectParseError(j, "/embeddings/0/name",
                  "table name 'out_w1' clashes with a parameter of layer "
                  "'out'; rename one of them");
}

//===----------------------------------------------------------------------===//
// JSON pointers, duplicate keys and JSON syntax errors
//===----------------------------------------------------------------------===//

TEST(ModelParserPointers, UnknownKeyIsEscaped) {
  Json j = minimalModel();
  j["a/b~c"] = 1;
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/a~1b~0c");
  EXPECT_EQ(e.message,
            "unknown field 'a/b~c' in the model (allowed: 'format', 'name', "
            "'description', 'features', 'embeddings', 'layers', 'loss', "
            "'optimizer', 'training', 'plan', 'data')");
  EXPECT_EQ(e.line, 0);
  EXPECT_EQ(e.format("m.json"), "m.json: error at /a~1b~0c: " + e.message);

  expectModelError(
      [&](Json &j) { j["features"][2]["~/"] = true; },
      "/features/2/~0~1",
      "unknown field '~/' in a label feature (allowed: "
      "'name', 'type', 'kind', 'source')");
}

TEST(ModelParserPointers, DuplicateKeys) {
  const std::string base = minimalModel().dump();

  // Inside an array element, after a sibling whose own array has elements:
  // the index must count elements of "layers", not of "inputs".
  ModelError e = parseError(
      replaceOnce(base, R"("sizes":[8,1])", R"("sizes":[8,1],"sizes":[2])"));
  EXPECT_EQ(e.pointer, "/layers/1/sizes");
  EXPECT_EQ(e.message, "duplicate key 'sizes'");
  EXPECT_EQ(e.line, 0);
  EXPECT_EQ(e.format("model.json"),
            "model.json: error at /layers/1/sizes: duplicate key 'sizes'");

  e = parseError(replaceOnce(base, R"("name":"mini")",
                             R"("name":"mini","name":"other")"));
  EXPECT_EQ(e.pointer, "/name");
  EXPECT_EQ(e.message, "duplicate key 'name'");

  e = parseError(replaceOnce(base, R"("lr":0.2)", R"("lr":0.2,"lr":0.3)"));
  EXPECT_EQ(e.pointer, "/optimizer/embedding/lr");

  e = parseError(
      replaceOnce(base, R"("type":"label")",
                  R"("type":"label","a/b~":1,"a/b~":2)"));
  EXPECT_EQ(e.pointer, "/features/2/a~1b~0");
  EXPECT_EQ(e.message, "duplicate key 'a/b~'");

  // The same key in different objects is fine up to the schema check.
  e = parseError(replaceOnce(base, R"("name":"mini")",
                             R"("name":"mini","x":{"k":1},"y":{"k":2})"));
  EXPECT_EQ(e.pointer, "/x");
}

TEST(ModelParserPointers, SchemaErrorsNameTheValue) {
  Json j = minimalModel();
  j["embeddings"] = Json::parse(R"([
    {"name": "t", "rows": 100, "dim": 4},
    {"name": "t1", "rows": 100, "dim": 4},
    {"name": "t2", "rows": 100, "dim": 4},
    {"name": "t3", "rows": 100, "dim": -4}
  ])");
  ModelError e = parseError(j.dump());
  EXPECT_EQ(e.format("bad.json"),
            "bad.json: error at /embeddings/3/dim: 'dim' must be an integer "
            "in [1, 65536], got -4");

  expectModelError(
      [&](Json &j) { j["layers"][0]["inputs"][1] = "nope"; },
      "/layers/0/inputs/1",
      "layer 'cat' names unknown input 'nope' (not a feature or a layer)");

  expectModelError(
      [&](Json &j) { j["layers"][1]["input"] = "y"; },
      "/layers/1/input",
      "label 'y' cannot be a layer input; the loss reads it");

  expectModelError(
      [&](Json &j) { j["features"][1]["table"] = "tt"; },
      "/features/1/table",
      "feature 'ids' names unknown table 'tt' (known: 't')");

  j = minimalModel();
  j["features"][1]["vocab"] = 101;
  e = parseError(j.dump());
  EXPECT_EQ(e.pointer, "/features/1/vocab");
  EXPECT_EQ(e.message.rfind("feature 'ids' has vocab 101 but table 't' has "
                            "only 100 rows",
                            0),
            0u)
      << e.message;

  expectModelError(
      [&](Json &j) { j["layers"][0]["name"] = "x"; },
      "/layers/0/name",
      "duplicate name 'x' (features and layers share one "
      "namespace)");

  expectModelError(
      [&](Json &j) { j["layers"][0]["inputs"] = Json::parse(R"(["x", "out"])"); },
      "/layers/0",
      "layers form a cycle: cat -> out -> cat");

  j = minimalModel();
  j["layers"].push_back(
      Json::parse(R"({"name": "extra", "type": "activation", "input": "x",
                      "kind": "relu"})"));
  expectParseError(j, "/layers/2", "layer 'extra' does not contribute to the loss");

  expectModelError(
      [&](Json &j) {
        j["layers"][0]["type"] = "add";
        j["features"][0]["dim"] = 5;
      },
      "/layers/0/inputs/1",
      "'add' inputs must all have the same width: 'ids' has "
      "width 4, 'x' has width 5");

  expectModelError(
      [&](Json &j) { j["format"] = "embc.model/v2"; },
      "/format",
      "unsupported model format 'embc.model/v2' (this embc "
      "reads 'embc.model/v1')");

  expectModelError(
      [&](Json &j) {
        j["embeddings"][0]["name"] = "out_w0";
        j["features"][1]["table"] = "out_w0";
      },
      "/embeddings/0/name",
      "table name 'out_w0' clashes with a parameter of layer "
      "'out'; rename one of them");

  e = parseError("[]");
  EXPECT_EQ(e.pointer, "");
  EXPECT_EQ(e.message, "the model must be an object, got an array");
  EXPECT_EQ(e.format("m.json"),
            "m.json: error at /: the model must be an object, got an array");
}

TEST(ModelParserJsonSyntax, LineAndColumn) {
  ModelError e = parseError("{\n  \"format\": ,\n}");
  EXPECT_EQ(e.pointer, "");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 13);
  EXPECT_EQ(e.message, "invalid JSON: syntax error while parsing value - "
                       "unexpected ','; expected '[', '{', or a literal");
  EXPECT_EQ(e.format("m.json"),
            "m.json:2:13: error: invalid JSON: syntax error while parsing "
            "value - unexpected ','; expected '[', '{', or a literal");

  e = parseError("");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 1);
  EXPECT_EQ(e.message, "invalid JSON: syntax error while parsing value - "
                       "unexpected end of input; expected '[', '{', or a "
                       "literal");

  // Unterminated object on the third line.
  e = parseError("{\n\"a\": 1,\n\"b\": [1, 2");
  EXPECT_EQ(e.pointer, "");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.column, 11); // just past the last character
  EXPECT_EQ(e.message.rfind("invalid JSON: syntax error while parsing array",
                            0),
            0u)
      << e.message;

  // Trailing text after a complete value.
  e = parseError("{}\n\n   x");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.column, 4);

  // Invalid UTF-8 inside a string.
  e = parseError("{\"name\": \"\xff\"}");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 11);
  EXPECT_EQ(e.message.rfind("invalid JSON: ", 0), 0u) << e.message;
}

TEST(ModelParserJsonSyntax, NumberOutOfRange) {
  ModelError e = parseError("{\n  \"x\": 1e400\n}");
  EXPECT_EQ(e.pointer, "");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 8);
  EXPECT_EQ(e.message, "invalid JSON: number out of range: 1e400");
  EXPECT_EQ(e.format("m.json"),
            "m.json:2:8: error: invalid JSON: number out of range: 1e400");

  // Integers beyond 64 bits become doubles, which 'dim' rejects.
  Json j = minimalModel();
  std::string text = replaceOnce(j.dump(), R"("dim":4})",
                                 R"("dim":99999999999999999999})");
  e = parseError(text);
  EXPECT_EQ(e.pointer, "/features/0/dim");
  EXPECT_EQ(e.message, "'dim' must be an integer in [1, 65536], got a number "
                       "1e+20");
}

TEST(ModelParserJsonSyntax, NestingIsLimited) {
  std::string deep = std::string(64, '[') + std::string(64, ']');
  ModelError e = parseError(deep);
  EXPECT_EQ(e.message, "the model must be an object, got an array");

  deep = std::string(65, '[') + std::string(65, ']');
  e = parseError(deep);
  EXPECT_EQ(e.message, "JSON nesting deeper than 64 levels");
  EXPECT_EQ(e.line, 0);
  std::string expected;
  for (int i = 0; i < 64; ++i)
    expected += "/0";
  EXPECT_EQ(e.pointer, expected);

  // Far deeper than any stack would allow for a recursive parser.
  deep = std::string(100000, '[');
  e = parseError(deep);
  EXPECT_EQ(e.message, "JSON nesting deeper than 64 levels");
}

// The 65th container is element 0 (or member "a") of the 64th, so its
// pointer has 64 tokens.
TEST(ModelParserJsonSyntax, NestingErrorPointsAtTheContainer) {
  std::string expected;
  for (int i = 0; i < 64; ++i)
    expected += "/0";
  ModelError e = parseError(std::string(65, '[') + std::string(65, ']'));
  EXPECT_EQ(e.pointer, expected);

  std::string objects, close;
  for (int i = 0; i < 65; ++i) {
    objects += "{\"a\":";
    close += "}";
  }
  expected.clear();
  for (int i = 0; i < 64; ++i)
    expected += "/a";
  e = parseError(objects + "1" + close);
  EXPECT_EQ(e.pointer, expected);
}

//===----------------------------------------------------------------------===//
// ModelError::format
//===----------------------------------------------------------------------===//

TEST(ModelErrorFormat, SchemaAndSyntaxForms) {
  ModelError schema{"/embeddings/3/dim", "'dim' must be an integer"};
  EXPECT_EQ(schema.format("bad.json"),
            "bad.json: error at /embeddings/3/dim: 'dim' must be an integer");
  ModelError root{"", "the model must be an object"};
  EXPECT_EQ(root.format("a.json"),
            "a.json: error at /: the model must be an object");
  ModelError syntax{"", "invalid JSON: oops", 12, 5};
  EXPECT_EQ(syntax.format("x.json"), "x.json:12:5: error: invalid JSON: oops");
  EXPECT_EQ(syntax.format(""), ":12:5: error: invalid JSON: oops");
}

} // namespace

// embc --set: overrides go into the JSON before it is read, in order, each
// of the type the model has there (frontend/lib/ModelOverrides.h).
TEST(ModelOverrides, ValuesReachTheModelInOrder) {
  ModelError error;
  std::optional<Model> m =
      parseModel(minimalModel().dump(), error,
                 {"/optimizer/dense/lr=0.5", "/embeddings/0/dim=8", "/optimizer/dense/lr=2",
                  "/optimizer/embedding/type=adagrad", "/layers/1/sizes=[16, 1]"});
  ASSERT_TRUE(m) << error.format("model.json");
  EXPECT_EQ(m->denseOptimizer.lr, 2.0); // the later of two wins; an integer for a number
  EXPECT_EQ(m->findTable("t")->dim, 8);
  EXPECT_EQ(m->findLayer("out")->sizes, (std::vector<int64_t>{16, 1}));
  EXPECT_EQ(m->findTable("t")->optimizer.kind, runtime::OptimizerKind::Adagrad);
}

TEST(ModelOverrides, RefusalsNameThePointer) {
  auto refusal = [](const std::string &set) {
    ModelError error;
    EXPECT_FALSE(parseModel(minimalModel().dump(), error, {set})) << set;
    return error.pointer + ": " + error.message;
  };
  EXPECT_EQ(refusal("/training/batch_size=\"64\""),
            "/training/batch_size: --set '/training/batch_size=\"64\"': the model has an "
            "integer here, the value is a string");
  EXPECT_EQ(refusal("/features/1/vocab=1e3"),
            "/features/1/vocab: --set '/features/1/vocab=1e3': the model has an integer here, "
            "the value is a number");
  EXPECT_EQ(refusal("/layers/7/sizes=[1]"),
            "/layers/7: --set '/layers/7/sizes=[1]': the array here has 2 values, no index '7'");
  EXPECT_EQ(refusal("/layers/01/sizes=[1]"),
            "/layers/01: --set '/layers/01/sizes=[1]': the array here has 2 values, no index '01'");
  EXPECT_EQ(refusal("/plan/quantize=int8"),
            "/plan: --set '/plan/quantize=int8': the model has nothing here");
  EXPECT_EQ(refusal("=1"), ": --set '=1': expected /json/pointer=VALUE (e.g. "
                           "/optimizer/dense/lr=0.05)");
  // A new key is the reader's to judge.
  EXPECT_EQ(refusal("/training/epochs=3").substr(0, 19), "/training/epochs: u");
}

//===----------------------------------------------------------------------===//
// The data schema (`data`, docs/model-format.md "Data schema")
//===----------------------------------------------------------------------===//

namespace {

/// minimalModel() with a csv schema every feature can read (and a column
/// none reads).
Json modelWithSchema() {
  Json j = minimalModel();
  j["data"] = Json::parse(R"({
    "format": "csv",
    "columns": [
      {"name": "y", "type": "label", "field": 0},
      {"name": "x", "type": "dense", "field": 1, "width": 4, "clip": [0, null], "log1p": true},
      {"name": "ids", "type": "categorical", "field": 5, "encoding": "hex"},
      {"name": "extra", "type": "categorical", "field": 6, "separator": "|"}
    ]})");
  return j;
}

} // namespace

TEST(ModelDataSchema, TheSchemaIsReadByTheRuntimeParser) {
  std::optional<Model> m = parseOk(modelWithSchema().dump());
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->data);
  EXPECT_EQ(m->data->format, runtime::DataFormat::Csv);
  ASSERT_EQ(m->data->columns.size(), 4u);
  EXPECT_EQ(m->data->columns[1].width, 4);
  EXPECT_TRUE(m->data->columns[1].log1p);
  EXPECT_EQ(m->data->columns[2].encoding, runtime::IdEncoding::Hex);
  EXPECT_EQ(m->data->columns[3].separator, "|");
  // Without `data`, none.
  std::optional<Model> plain = parseOk(minimalModel().dump());
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->data);
}

TEST(ModelDataSchema, SchemaErrorsKeepTheParsersPointer) {
  auto expectError = [](const std::function<void(Json &)> &edit, const std::string &pointer,
                        const std::string &message) {
    Json j = modelWithSchema();
    edit(j);
    expectParseError(j, pointer, message);
  };
  expectError([](Json &j) { j["data"]["columns"][2]["encoding"] = "base64"; },
              "/data/columns/2/encoding",
              "'encoding' must be int, hex, hash or vocab, got 'base64'");
  expectError([](Json &j) { j["data"]["format"] = "xml"; }, "/data/format",
              "'format' must be csv, tsv, npy or binary, got 'xml'");
  expectError([](Json &j) { j["data"] = Json::array(); }, "/data",
              "expected an object, got an array");
  // A feature reading a column the schema lacks: at its source, or at the
  // feature when it reads the column of its own name.
  expectError([](Json &j) { j["features"][1]["source"] = "shop"; }, "/features/1/source",
              "feature 'ids' reads column 'shop', which the data schema does not have "
              "(columns: y, x, ids, extra)");
  expectError([](Json &j) { j["data"]["columns"][0]["name"] = "click"; }, "/features/2",
              "feature 'y' reads column 'y', which the data schema does not have (columns: "
              "click, x, ids, extra)");
  // What bindingProblem says, at the feature.
  expectError([](Json &j) { j["data"]["columns"][1]["width"] = 13; }, "/features/0",
              "feature 'x' cannot read column 'x': the feature has width 4, column 'x' 13");
  expectError([](Json &j) { j["data"]["columns"][0]["kind"] = "real"; }, "/features/2",
              "feature 'y' cannot read column 'y': the feature is a binary label, but column "
              "'y' holds real labels");
  expectError([](Json &j) { j["data"]["columns"][2]["encoding"] = "hash"; }, "/features/1",
              "feature 'ids' cannot read column 'ids': column 'ids' hashes strings into "
              "63-bit ids: the feature needs \"hash\": true");
  // A hashing feature reads a hash column.
  Json hashed = modelWithSchema();
  hashed["data"]["columns"][2]["encoding"] = "hash";
  hashed["features"][1]["hash"] = true;
  EXPECT_TRUE(parseOk(hashed.dump()));
}

TEST(ModelDataSchema, OverridesReachTheSchema) {
  ModelError error;
  std::optional<Model> m =
      parseModel(modelWithSchema().dump(), error,
                 {"/data/header=true", "/data/delimiter=;", "/data/columns/1/missing=-1",
                  "/data/columns/0/field=7"});
  ASSERT_TRUE(m) << error.format("model.json");
  EXPECT_TRUE(m->data->header);
  EXPECT_EQ(m->data->delimiter, ";");
  EXPECT_EQ(m->data->columns[1].missing, -1);
  EXPECT_EQ(m->data->columns[0].field, 7);
  // An existing value keeps its type: a name does not replace an index.
  EXPECT_FALSE(parseModel(modelWithSchema().dump(), error, {"/data/columns/1/field=price"}));
  EXPECT_EQ(error.pointer, "/data/columns/1/field");
  EXPECT_EQ(error.message, "--set '/data/columns/1/field=price': the model has an integer "
                           "here, the value is a string");
}
