//===- PlanTestUtil.cpp - a complete sample plan and container helpers -----===//
//
// The sample is a tiny DLRM: one 10 x 8 table looked up by a 2-hot feature,
// pooled, concatenated with one dense value, and a 9 x 1 dense layer with a
// binary cross-entropy loss. Buffers are laid out one after another at
// 64-byte boundaries, as the compiler's memory planner would without reuse.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "../PlanBuffers.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <tuple>

using namespace embc::runtime;
using nlohmann::json;

namespace embc::runtime::testing {

namespace {

Kernel kernel(const std::string &op, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
              json attrs = json::object()) {
  return makeKernel(op, std::move(inputs), std::move(outputs), std::move(attrs));
}

Input input(const std::string &feature, const std::string &source, InputRole role,
            int32_t buffer) {
  Input in;
  in.feature = feature;
  in.source = source;
  in.role = role;
  in.buffer = buffer;
  return in;
}

} // namespace

Plan samplePlan() {
  Plan plan;
  plan.model = "tiny_dlrm";
  plan.compiler = "embc 0.1.0";
  plan.config.batchSize = 4;
  plan.config.gradAccumulation = 2;
  plan.config.gradClipNorm = 1.5;
  plan.config.lrSchedule = embc::runtime::LrSchedule::Cosine;
  plan.config.warmupSteps = 10;
  plan.config.decaySteps = 100;
  plan.config.seed = (uint64_t(1) << 63) + 5; // above int64: must stay unsigned
  plan.config.loss = embc::runtime::LossKind::BceWithLogits;
  plan.config.precision = embc::runtime::ComputeType::BF16;

  const int64_t batch = 4, hotness = 2, capacity = batch * hotness;
  addBuffer(plan, "emb_table", BufferRole::Table, DType::F32, {10, 8});
  addBuffer(plan, "emb_grad_rows", BufferRole::Grad, DType::I64, {capacity}, true);
  addBuffer(plan, "emb_grad_values", BufferRole::Grad, DType::F32, {capacity, 8}, true);
  addBuffer(plan, "emb_accumulator", BufferRole::OptimizerState, DType::F32, {10});
  addBuffer(plan, "fc_w", BufferRole::Param, DType::F32, {9, 1});
  addBuffer(plan, "fc_w_grad", BufferRole::Grad, DType::F32, {9, 1});
  addBuffer(plan, "fc_w_m", BufferRole::OptimizerState, DType::F32, {9, 1});
  addBuffer(plan, "fc_w_v", BufferRole::OptimizerState, DType::F32, {9, 1});
  addBuffer(plan, "in_dense", BufferRole::Input, DType::F32, {batch, 1});
  addBuffer(plan, "in_ids", BufferRole::Input, DType::I64, {capacity}, true);
  addBuffer(plan, "in_offsets", BufferRole::Input, DType::I64, {batch + 1});
  addBuffer(plan, "in_label", BufferRole::Input, DType::F32, {batch, 1});
  addBuffer(plan, "pooled", BufferRole::Activation, DType::F32, {batch, 8});
  addBuffer(plan, "concat", BufferRole::Activation, DType::F32, {batch, 9});
  addBuffer(plan, "logits", BufferRole::Activation, DType::F32, {batch, 1});
  addBuffer(plan, "loss", BufferRole::Activation, DType::F64, {}); // a scalar
  addBuffer(plan, "logits_grad", BufferRole::Activation, DType::F32, {batch, 1});
  addBuffer(plan, "scratch", BufferRole::Workspace, DType::F32, {capacity, 8}); // per-id rows
  addBuffer(plan, "pooled_grad", BufferRole::Activation, DType::F32, {batch, 8});
  // Room at the end, so that moving a buffer by one alignment step still fits.
  plan.arenaBytes += 256;

  Param weight;
  weight.name = "fc_w";
  weight.buffer = kWeight;
  weight.grad = kWeightGrad;
  weight.state = {kWeightMoment1, kWeightMoment2};
  weight.init.kind = embc::runtime::InitKind::XavierUniform;
  weight.init.value = 0.5;
  weight.init.low = -0.25;
  weight.init.high = 0.75;
  weight.init.mean = 0.125;
  weight.init.std = 0.3;
  weight.init.gain = 1.25;
  weight.optimizer.kind = embc::runtime::OptimizerKind::Adam;
  weight.optimizer.lr = 0.001;
  weight.optimizer.momentum = 0.5;
  weight.optimizer.beta1 = 0.85;
  weight.optimizer.beta2 = 0.995;
  weight.optimizer.eps = 1e-7;
  weight.optimizer.weightDecay = 0.01;
  weight.optimizer.initialAccumulator = 0.2;
  weight.optimizer.weightDecayMode = embc::runtime::WeightDecayMode::Global;
  plan.params.push_back(weight);

  Table table;
  table.name = "emb";
  table.rows = 10;
  table.dim = 8;
  table.buffer = kTable;
  table.gradRows = kTableGradRows;
  table.gradValues = kTableGradValues;
  table.state = {kTableAccumulator};
  table.init.kind = embc::runtime::InitKind::Uniform;
  table.init.value = 3;
  table.init.low = -0.1;
  table.init.high = 0.1;
  table.init.mean = -1e-3;
  table.init.std = 0.02;
  table.init.gain = 2;
  table.optimizer.kind = embc::runtime::OptimizerKind::RowwiseAdagrad;
  table.optimizer.lr = 0.05;
  table.optimizer.momentum = 0.9;
  table.optimizer.beta1 = 0.8;
  table.optimizer.beta2 = 0.99;
  table.optimizer.eps = 1e-10;
  table.optimizer.weightDecay = 1e-5;
  table.optimizer.initialAccumulator = 0.1;
  table.optimizer.weightDecayMode = embc::runtime::WeightDecayMode::Lazy;
  plan.tables.push_back(table);

  Input dense = input("d0", "I1", InputRole::Dense, kDenseInput);
  dense.width = 1;
  dense.power = 0.5;
  Input ids = input("c0", "C1", InputRole::Ids, kIdsInput);
  ids.vocab = 1000;
  ids.hotness = hotness;
  Input offsets = input("c0", "C1", InputRole::Offsets, kOffsetsInput);
  offsets.hotness = hotness;
  Input label = input("click", "label", InputRole::Label, kLabelInput);
  label.labelKind = LabelKind::Binary;
  plan.inputs = {dense, ids, offsets, label};

  // Catalogue kernels (KernelCatalogue.h) with every kind of attribute:
  // words, indices, numbers, booleans and a list of objects.
  plan.step = {
      kernel("fused_lookup", {kIdsInput, kOffsetsInput}, {kPooled},
             {{"members",
               {{{"table", 0}, {"pooling", "sum"}, {"weighted", false}, {"hash", true},
                 {"buckets", 10}, {"seed", 7}, {"hashed_output", false}}}}}),
      kernel("concat", {kDenseInput, kPooled}, {kConcat}),
      kernel("dense", {kConcat, kWeight}, {kLogits}, {{"bias", false}, {"compute", "bf16"}}),
      kernel("loss", {kLogits, kLabelInput}, {kLoss}, {{"kind", "bce_with_logits"}}),
      kernel("loss_grad", {kLogits, kLabelInput}, {kLogitsGrad}, {{"kind", "bce_with_logits"}}),
      kernel("dense_grad_weight", {kConcat, kLogitsGrad}, {kWeightGrad}),
      kernel("lookup_grad", {kIdsInput, kOffsetsInput, kPooledGrad}, {kScratch},
             {{"table", 0}, {"pooling", "sum"}}),
      kernel("accumulate_rows", {kIdsInput, kScratch}, {kTableGradRows, kTableGradValues},
             {{"table", 0}}),
  };
  plan.forwardKernels = 3;
  plan.update = {
      kernel("update_param", {kWeightGrad}, {kWeight, kWeightMoment1, kWeightMoment2},
             {{"param", 0}, {"grad_scale", 0.5}}),
      kernel("update_table", {kTableGradRows, kTableGradValues}, {kTable, kTableAccumulator},
             {{"table", 0}, {"grad_scale", 1.0}}),
  };
  plan.lossBuffer = kLoss;
  plan.predictionBuffer = kLogits;
  plan.notes = {"emb-pack-params: 1 table", "unicode survives: \xc3\xa9\xe2\x9c\x93"};
  return plan;
}

std::string containerWith(const std::string &body, uint32_t version) {
  std::string out = "EMBCPLAN";
  auto put = [&out](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i)
      out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  };
  put(version, 4);
  put(0, 4);
  put(body.size(), 8);
  put(XXH64(body.data(), body.size(), 0), 8);
  return out + body;
}

json bodyOf(const std::string &bytes) { return json::parse(bytes.substr(32)); }

std::string errorFor(const std::string &bytes) {
  std::string error;
  std::optional<Plan> plan = deserializePlan(bytes, error);
  if (plan)
    return "<accepted>";
  EXPECT_FALSE(error.empty()) << "rejected without a message";
  return error;
}

std::string errorFor(const Plan &plan) { return errorFor(serializePlan(plan)); }

namespace {

// The members of each part of a plan that a round trip keeps, as one tuple
// of references: EXPECT_EQ on two of them compares (and prints) them all.

auto fieldsOf(const Initializer &i) {
  return std::tie(i.kind, i.value, i.low, i.high, i.mean, i.std, i.gain);
}

auto fieldsOf(const Optimizer &o) {
  return std::tie(o.kind, o.lr, o.momentum, o.beta1, o.beta2, o.eps, o.weightDecay,
                  o.initialAccumulator, o.weightDecayMode);
}

auto fieldsOf(const TrainingConfig &c) {
  return std::tie(c.batchSize, c.gradAccumulation, c.gradClipNorm, c.lrSchedule, c.warmupSteps,
                  c.decaySteps, c.seed, c.loss, c.precision);
}

auto fieldsOf(const Buffer &b) {
  return std::tie(b.name, b.role, b.dtype, b.shape, b.dynamic, b.offset, b.bytes);
}

auto fieldsOf(const Param &p) {
  return std::tuple_cat(std::tie(p.name, p.buffer, p.grad, p.state), fieldsOf(p.init),
                        fieldsOf(p.optimizer));
}

auto fieldsOf(const Table &t) {
  return std::tuple_cat(std::tie(t.name, t.rows, t.dim, t.buffer, t.gradRows, t.gradValues,
                                 t.state, t.placement),
                        fieldsOf(t.init), fieldsOf(t.optimizer));
}

auto fieldsOf(const Input &i) {
  return std::tie(i.feature, i.source, i.role, i.buffer, i.width, i.vocab, i.hotness,
                  i.labelKind, i.power);
}

auto fieldsOf(const Kernel &k) { return std::tie(k.op, k.inputs, k.outputs, k.attrs); }

auto fieldsOf(const Plan &p) {
  return std::tie(p.version, p.model, p.compiler, p.forwardKernels, p.lossBuffer,
                  p.predictionBuffer, p.arenaBytes, p.notes);
}

/// The same length, and the same fields element by element.
template <class T>
void expectSameEach(const std::vector<T> &e, const std::vector<T> &a, const std::string &at) {
  ASSERT_EQ(e.size(), a.size()) << at;
  for (size_t i = 0; i < e.size(); ++i)
    EXPECT_EQ(fieldsOf(e[i]), fieldsOf(a[i])) << at << "[" << i << "]";
}

} // namespace

void expectSamePlan(const Plan &e, const Plan &a) {
  EXPECT_EQ(fieldsOf(e), fieldsOf(a));
  EXPECT_EQ(fieldsOf(e.config), fieldsOf(a.config)) << "config";
  expectSameEach(e.buffers, a.buffers, "buffers");
  expectSameEach(e.params, a.params, "params");
  expectSameEach(e.tables, a.tables, "tables");
  expectSameEach(e.inputs, a.inputs, "inputs");
  expectSameEach(e.step, a.step, "step");
  expectSameEach(e.update, a.update, "update");
}

} // namespace embc::runtime::testing
