//===- ExecutorTest.cpp - learning-rate schedule and kernel binding -------===//
//
// The executor's own logic: the learning-rate schedule, refusing a plan it
// cannot run before running anything, and a tiny hand-built plan (one dense
// layer, MSE) trained by SGD against the closed-form step.
//
//===----------------------------------------------------------------------===//

#include "../PlanBuffers.h"

#include "embc/runtime/backends/Registry.h"
#include "embc/runtime/exec/Executor.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace embc::runtime;
using embc::runtime::testing::addBuffer;

/// The CPU backend on one thread, as programs get it: by name.
static std::unique_ptr<Backend> oneThreadCpu() {
  BackendOptions options;
  options.threads = 1;
  return createBackend("cpu", options);
}

TEST(LearningRate, WarmupThenSchedules) {
  TrainingConfig c;
  c.warmupSteps = 4;
  EXPECT_DOUBLE_EQ(learningRateScale(c, 0), 0.25);
  EXPECT_DOUBLE_EQ(learningRateScale(c, 3), 1.0);
  EXPECT_DOUBLE_EQ(learningRateScale(c, 100), 1.0); // constant
  c.lrSchedule = embc::runtime::LrSchedule::Linear;
  c.decaySteps = 10;
  EXPECT_DOUBLE_EQ(learningRateScale(c, 4), 1.0);
  EXPECT_DOUBLE_EQ(learningRateScale(c, 9), 0.5);
  EXPECT_DOUBLE_EQ(learningRateScale(c, 14), 0.0);
  EXPECT_DOUBLE_EQ(learningRateScale(c, 50), 0.0);
  c.lrSchedule = embc::runtime::LrSchedule::Cosine;
  EXPECT_NEAR(learningRateScale(c, 9), 0.5, 1e-12);
  EXPECT_NEAR(learningRateScale(c, 14), 0.0, 1e-12);
}

namespace {

/// y = x W (B=2, K=2, N=1), loss = mse(y, label); SGD on W.
Plan denseMsePlan() {
  Plan p;
  p.model = "tiny";
  p.config.batchSize = 2;
  p.config.loss = embc::runtime::LossKind::Mse;
  int32_t x = addBuffer(p, "x", BufferRole::Input, DType::F32, {2, 2});
  int32_t label = addBuffer(p, "label", BufferRole::Input, DType::F32, {2, 1});
  Param w;
  w.name = "w";
  w.buffer = addBuffer(p, "w", BufferRole::Param, DType::F32, {2, 1});
  w.grad = addBuffer(p, "dw", BufferRole::Grad, DType::F32, {2, 1});
  w.init.kind = embc::runtime::InitKind::Constant;
  w.init.value = 0.5;
  w.optimizer.kind = embc::runtime::OptimizerKind::Sgd;
  w.optimizer.lr = 0.1;
  p.params.push_back(w);
  int32_t y = addBuffer(p, "y", BufferRole::Activation, DType::F32, {2, 1});
  int32_t loss = addBuffer(p, "loss", BufferRole::Activation, DType::F32, {1});
  int32_t dy = addBuffer(p, "dy", BufferRole::Activation, DType::F32, {2, 1});
  int32_t dw = addBuffer(p, "dw_step", BufferRole::Activation, DType::F32, {2, 1});
  p.inputs = {{"x", "x", embc::runtime::InputRole::Dense, x, 2}, {"label", "label", embc::runtime::InputRole::Label, label, 0}};
  p.inputs[1].labelKind = embc::runtime::LabelKind::Real;
  p.step = {{"dense", {x, w.buffer}, {y}},
            {"loss", {y, label}, {loss}, {{"kind", "mse"}}},
            {"loss_grad", {y, label}, {dy}, {{"kind", "mse"}}},
            {"dense_grad_weight", {x, dy}, {dw}},
            {"accumulate_grad", {dw}, {w.grad}, {{"param", 0}}}};
  p.forwardKernels = 2;
  p.update = {{"update_param", {w.grad}, {w.buffer}, {{"param", 0}, {"grad_scale", 1.0}}}};
  p.lossBuffer = loss;
  p.predictionBuffer = y;
  return p;
}

/// Initialises `ex` (denseMsePlan) and loads its batch: x = [[1, 2], [3, 4]],
/// labels [1, 0].
void startTwoExamples(Executor &ex) {
  ex.initialize(7);
  data::Batch batch;
  batch.size = batch.valid = 2;
  batch.features.resize(2);
  batch.features[0].dense = {1, 2, 3, 4};
  batch.features[1].label = {1, 0};
  ex.loadBatch(batch);
  ex.zeroGradients();
}

} // namespace

TEST(Executor, SgdStepMatchesClosedForm) {
  Executor ex(denseMsePlan(), oneThreadCpu());
  startTwoExamples(ex);
  // y = [1.5, 3.5]; loss = ((0.5)^2 + (3.5)^2) / 2 = 6.25
  EXPECT_FLOAT_EQ(ex.forwardBackward(), 6.25f);
  ex.update(1, 1.0);
  // dL/dy = (y - t) = [0.5, 3.5] (2/B * (y-t), B = 2); dW = x^T dy = [11, 15]
  const float *w = ex.data<float>(ex.plan().params[0].buffer);
  EXPECT_FLOAT_EQ(w[0], 0.5f - 0.1f * 11.0f);
  EXPECT_FLOAT_EQ(w[1], 0.5f - 0.1f * 15.0f);
}

TEST(Executor, AnUpdateThatOverflowsStopsNamingTheStepAndTheValue) {
  // lr 1e38: w = 0.5 - 1e38 x 11 is beyond float's range.
  Plan p = denseMsePlan();
  p.params[0].optimizer.lr = 1e38;
  Executor ex(p, oneThreadCpu());
  startTwoExamples(ex);
  ex.beginStep(1, 1.0);
  ex.forwardBackward();
  try {
    ex.update(1, 1.0);
    FAIL() << "an update to -inf passed";
  } catch (const NonFiniteError &e) {
    EXPECT_STREQ(e.what(), "step 1: update_param left parameter 'w' not finite (w[0] = -inf). "
                           "Its gradient was finite: the optimizer step overflowed. Training "
                           "diverged: lower the learning rate or clip gradients "
                           "(training.grad_clip_norm)");
  }
}

TEST(Executor, RefusesUnknownKernelBeforeRunning) {
  Plan p = denseMsePlan();
  p.step[3].op = "frobnicate";
  try {
    Executor ex(p, oneThreadCpu());
    FAIL() << "an unknown kernel was accepted";
  } catch (const PlanError &e) {
    EXPECT_STREQ(e.what(),
                 "kernel 'frobnicate': not in the CPU backend's kernel catalogue");
  }
}

TEST(Executor, RefusesWrongOperandCount) {
  Plan p = denseMsePlan();
  p.step[1].inputs.pop_back();
  EXPECT_THROW(Executor(p, oneThreadCpu()), PlanError);
}

TEST(Executor, RefusesIdsOutsideTheTable) {
  Plan p;
  p.model = "lookup";
  p.config.batchSize = 1;
  int32_t ids = addBuffer(p, "ids", BufferRole::Input, DType::I64, {4}, true);
  int32_t offsets = addBuffer(p, "offsets", BufferRole::Input, DType::I64, {2});
  Table t;
  t.name = "t";
  t.rows = 3;
  t.dim = 2;
  t.buffer = addBuffer(p, "table", BufferRole::Table, DType::F32, {3, 2});
  p.tables.push_back(t);
  int32_t y = addBuffer(p, "y", BufferRole::Activation, DType::F32, {1, 2});
  p.inputs = {{"f", "f", embc::runtime::InputRole::Ids, ids, 0, 3}, {"f", "f", embc::runtime::InputRole::Offsets, offsets}};
  p.step = {{"lookup", {ids, offsets}, {y}, {{"table", 0}, {"pooling", "sum"}}}};
  p.forwardKernels = 1;
  p.lossBuffer = p.predictionBuffer = y;
  Executor ex(p, oneThreadCpu());
  data::Batch batch;
  batch.size = batch.valid = 1;
  batch.features.resize(1);
  batch.features[0].ids = {0, 7};
  batch.features[0].offsets = {0, 2};
  ex.loadBatch(batch);
  try {
    ex.forward();
    FAIL() << "an id outside the table was looked up";
  } catch (const data::DataError &e) {
    EXPECT_STREQ(e.what(), "id 7 is outside table 't' (rows 0..2)");
  }
}
