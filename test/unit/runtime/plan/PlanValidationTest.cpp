//===- PlanValidationTest.cpp - structural and semantic plan checks -------===//
//
// One change to the valid sample plan per case, and the exact message it
// must produce: the JSON path of the bad value, then what is wrong. Cases
// that need a body no Plan can produce (unknown words, wrong JSON types,
// unknown fields) edit the JSON and re-pack it with a valid checksum.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"
#include "../PlanBuffers.h"

#include "embc/runtime/plan/KernelCatalogue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace embc::runtime;
using namespace embc::runtime::testing;
using nlohmann::json;

namespace {

template <class F> std::string errorAfter(F change) {
  Plan plan = samplePlan();
  change(plan);
  return errorFor(plan);
}

template <class F> std::string errorAfterBodyEdit(F edit) {
  return errorFor(sampleWithBodyEdit(edit));
}

} // namespace

TEST(PlanValidation, TheSampleIsValid) { EXPECT_EQ(errorFor(samplePlan()), "<accepted>"); }

// --- Buffers and the arena --------------------------------------------------

TEST(PlanValidation, BufferOutOfArena) {
  Plan plan = samplePlan();
  plan.buffers[kScratch].offset = plan.arenaBytes - 192; // 256 bytes at 64-byte alignment
  EXPECT_EQ(errorFor(plan), "buffers[17].offset: buffer 'scratch' at offset " +
                                std::to_string(plan.arenaBytes - 192) +
                                " with 256 bytes ends past the arena (" +
                                std::to_string(plan.arenaBytes) + " bytes)");
  plan = samplePlan();
  plan.buffers[kTable].offset = (int64_t(1) << 62) - 64; // offset + bytes must not overflow
  plan.buffers[kTable].offset -= plan.buffers[kTable].offset % 64;
  EXPECT_NE(errorFor(plan).find("buffers[0].offset: buffer 'emb_table' at offset "),
            std::string::npos);
  plan = samplePlan();
  plan.buffers[kTable].offset = -64;
  EXPECT_EQ(errorFor(plan), "buffers[0].offset: must be >= 0, got -64");
}

TEST(PlanValidation, MisalignedOffset) {
  Plan plan = samplePlan();
  int64_t offset = plan.buffers[kTableAccumulator].offset + 4;
  plan.buffers[kTableAccumulator].offset = offset;
  EXPECT_EQ(errorFor(plan),
            "buffers[3].offset: " + std::to_string(offset) + " is not a multiple of 64");
}

TEST(PlanValidation, BytesDisagreeWithShape) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.buffers[kTable].bytes = 100; }),
            "buffers[0].bytes: 100 but shape [10, 8] of f32 needs 320");
  EXPECT_EQ(errorAfter([](Plan &p) { p.buffers[kIdsInput].dtype = DType::F32; }),
            "buffers[9].bytes: 64 but shape [8] of f32 needs 32");
  EXPECT_EQ(errorAfter([](Plan &p) { p.buffers[kLoss].bytes = 0; }),
            "buffers[15].bytes: 0 but shape [] of f64 needs 8");
}

TEST(PlanValidation, NonPositiveOrHugeDimensions) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.buffers[kPooled].shape = {4, 0}; }),
            "buffers[12].shape[1]: dimensions must be positive, got 0");
  EXPECT_EQ(errorAfter([](Plan &p) {
              p.buffers[kPooled].shape = {int64_t(1) << 40, int64_t(1) << 40};
            }),
            "buffers[12].shape: [1099511627776, 1099511627776] has too many elements");
}

TEST(PlanValidation, DynamicScalar) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.buffers[kLoss].dynamic = true; }),
            "buffers[15].dynamic: a scalar buffer has no leading dimension to fill");
}

TEST(PlanValidation, EmptyBufferName) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.buffers[kConcat].name.clear(); }),
            "buffers[13].name: must not be empty");
}

TEST(PlanValidation, ArenaMustBePositive) {
  Plan plan;
  plan.config.batchSize = 1;
  plan.config.loss = embc::runtime::LossKind::Mse;
  EXPECT_EQ(errorFor(plan), "arena_bytes: must be positive, got 0");
}

// --- Buffer references ------------------------------------------------------

TEST(PlanValidation, BadIndexInAKernel) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[2].inputs[1] = 99; }),
            "step[2].inputs[1]: buffer 99 is out of range (the plan has 19 buffers)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.update[1].outputs[0] = -1; }),
            "update[1].outputs[0]: buffer -1 is out of range (the plan has 19 buffers)");
}

TEST(PlanValidation, LossAndPredictionBuffers) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.lossBuffer = -1; }),
            "loss_buffer: buffer -1 is out of range (the plan has 19 buffers)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.predictionBuffer = 19; }),
            "prediction_buffer: buffer 19 is out of range (the plan has 19 buffers)");
}

TEST(PlanValidation, ParamBufferRoles) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].buffer = kWeightGrad; }),
            "params[0].buffer: buffer 5 'fc_w_grad' has role grad, expected param");
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].grad = kWeight; }),
            "params[0].grad: buffer 4 'fc_w' has role param, expected grad");
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].state[1] = kScratch; }),
            "params[0].state[1]: buffer 17 'scratch' has role workspace, expected "
            "optimizer_state");
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].grad = 40; }),
            "params[0].grad: buffer 40 is out of range (the plan has 19 buffers)");
}

TEST(PlanValidation, ParamGradientMatchesTheParameter) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].grad = kTableGradValues; }),
            "params[0].grad: gradient buffer 'emb_grad_values' is f32[8, 8] but the parameter "
            "is f32[9, 1]");
}

TEST(PlanValidation, OptimizerStateCount) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].state.pop_back(); }),
            "params[0].state: optimizer adam needs 2 state buffers, got 1");
  EXPECT_EQ(errorAfter([](Plan &p) {
              p.params[0].optimizer.kind = embc::runtime::OptimizerKind::Sgd;
              p.params[0].optimizer.momentum = 0;
            }),
            "params[0].state: optimizer sgd needs 0 state buffers, got 2");
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].state.clear(); }),
            "tables[0].state: optimizer rowwise_adagrad needs 1 state buffers, got 0");
}

TEST(PlanValidation, TableShapeMismatch) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].rows = 11; }),
            "tables[0].buffer: table buffer 'emb_table' has shape [10, 8], expected [rows, dim] "
            "= [11, 8]");
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].dim = 0; }),
            "tables[0].dim: must be positive, got 0");
}

/// The sample's table stored as int4 (-emb-quantize): u8 codes [10, 8 / 2]
/// and an f16 [10, 2] scale/bias buffer appended to the arena.
void makeInt4(Plan &p) {
  Buffer &codes = p.buffers[kTable];
  codes.dtype = DType::U8;
  codes.shape = {10, 4};
  codes.bytes = 40;
  Buffer q;
  q.name = "emb_qparams";
  q.role = BufferRole::Table;
  q.dtype = DType::F16;
  q.shape = {10, 2};
  q.bytes = 40;
  q.offset = p.arenaBytes;
  p.arenaBytes += 128; // room for an f32 version in the cases below
  p.buffers.push_back(q);
  p.tables[0].storage = Storage::Int4;
  p.tables[0].qparams = int32_t(p.buffers.size() - 1);
}

TEST(PlanValidation, QuantisedTableStorage) {
  EXPECT_EQ(errorAfter([](Plan &p) { makeInt4(p); }), "<accepted>");
  // int8: the same scale/bias buffer, codes [rows, dim].
  EXPECT_EQ(errorAfter([](Plan &p) {
              makeInt4(p);
              p.tables[0].storage = Storage::Int8;
              p.buffers[kTable].shape = {10, 8};
              p.buffers[kTable].bytes = 80;
            }),
            "<accepted>");
  EXPECT_EQ(errorAfter([](Plan &p) {
              makeInt4(p);
              p.buffers[kTable].shape = {10, 8};
              p.buffers[kTable].bytes = 80;
            }),
            "tables[0].buffer: table buffer 'emb_table' has shape [10, 8], expected [rows, dim "
            "/ 2] = [10, 4]");
  EXPECT_EQ(errorAfter([](Plan &p) {
              makeInt4(p);
              p.tables[0].dim = 7;
            }),
            "tables[0].dim: is 7, but int4 storage packs two values per byte and needs an even "
            "dim");
  EXPECT_EQ(errorAfter([](Plan &p) {
              makeInt4(p);
              p.buffers.back().dtype = DType::F32;
              p.buffers.back().bytes = 80;
            }),
            "tables[0].qparams: scale/bias buffer 'emb_qparams' must be f16[10, 2] (scale, bias "
            "per row), got f32[10, 2]");
  EXPECT_EQ(errorAfter([](Plan &p) {
              makeInt4(p);
              p.tables[0].qparams = -1;
            }),
            "tables[0].qparams: buffer -1 is out of range (the plan has 20 buffers)");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["tables"][0]["storage"] = "int2"; }),
            "tables[0].storage: unknown storage 'int2' (expected f32, f16, bf16, int8 or int4)");
  EXPECT_EQ(errorAfter([](Plan &p) {
              makeInt4(p);
              p.tables[0].storage = Storage::F32;
              p.buffers[kTable].dtype = DType::F32;
              p.buffers[kTable].shape = {10, 8};
              p.buffers[kTable].bytes = 320;
            }),
            "tables[0].qparams: must be -1: only int8 and int4 storage have a per-row scale and "
            "bias");
}

TEST(PlanValidation, TableBufferRolesAndSparseGradient) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].buffer = kWeight; }),
            "tables[0].buffer: buffer 4 'fc_w' has role param, expected table");
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].gradRows = kTableGradValues; }),
            "tables[0].grad_rows: gradient rows buffer 'emb_grad_values' must be a dynamic 1-d "
            "i64 buffer, got dynamic f32[8, 8]");
  EXPECT_EQ(errorAfter([](Plan &p) { p.buffers[kTableGradRows].dynamic = false; }),
            "tables[0].grad_rows: gradient rows buffer 'emb_grad_rows' must be a dynamic 1-d "
            "i64 buffer, got static i64[8]");
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].gradValues = kWeightGrad; }),
            "tables[0].grad_values: gradient values buffer 'fc_w_grad' must be f32[8, 8] (rows "
            "capacity x dim), got f32[9, 1]");
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].state[0] = kTableGradRows; }),
            "tables[0].state[0]: buffer 1 'emb_grad_rows' has role grad, expected "
            "optimizer_state");
}

TEST(PlanValidation, ParamAndTableNamesAreUnique) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].name = "fc_w"; }),
            "tables[0].name: 'fc_w' names another parameter or table");
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].name.clear(); }),
            "params[0].name: '' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)");
}

// A name becomes a checkpoint tensor name, a log key and a CUDA symbol: an
// edited plan with a path or a control character in one is refused.
TEST(PlanValidation, NamesAreIdentifiers) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].name = "../../etc/x"; }),
            "tables[0].name: '../../etc/x' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].name = "9w"; }),
            "params[0].name: '9w' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.inputs[1].feature = "a b"; }),
            "inputs[1].feature: 'a b' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].name = std::string(257, 'w'); }),
            "params[0].name: '" + std::string(64, 'w') + "...' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.buffers[kConcat].name = "con\ncat"; }),
            "buffers[13].name: contains a control character");
}

// The model file's ranges hold for a plan too: a plan edited past them is
// refused instead of training with, say, a negative learning rate.
TEST(PlanValidation, OptimizerHyperParameters) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].optimizer.lr = -0.5; }),
            "tables[0].optimizer.lr: must be a positive finite number, got -0.5");
  // A plan file cannot hold inf or NaN (JSON has neither): the writer refuses.
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].optimizer.beta2 = 1; }),
            "params[0].optimizer.beta2: must be in [0, 1), got 1");
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].optimizer.eps = 0; }),
            "params[0].optimizer.eps: must be a positive finite number, got 0");
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].optimizer.weightDecay = -1; }),
            "tables[0].optimizer.weight_decay: must be a finite number >= 0, got -1");
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].optimizer.initialAccumulator = -1e-9; }),
            "tables[0].optimizer.initial_accumulator: must be a finite number >= 0, got -1e-09");
}

TEST(PlanValidation, InitializerRanges) {
  EXPECT_EQ(errorAfter([](Plan &p) {
              p.tables[0].init.kind = InitKind::Normal;
              p.tables[0].init.std = -0.02;
            }),
            "tables[0].init.std: must be positive, with mean + 10 std within float32, got -0.02");
  EXPECT_EQ(errorAfter([](Plan &p) { p.tables[0].init.low = -1e308; }),
            "tables[0].init.low: must be a finite number within float32, got -1e+308");
  EXPECT_EQ(errorAfter([](Plan &p) { std::swap(p.tables[0].init.low, p.tables[0].init.high); }),
            "tables[0].init.high: needs low < high and high - low within float32, got low "
            "0.1, high -0.1");
  EXPECT_EQ(errorAfter([](Plan &p) {
              p.params[0].init.kind = InitKind::Constant;
              p.params[0].init.value = 1e39;
            }),
            "params[0].init.value: must be a finite number within float32, got 1e+39");
  EXPECT_EQ(errorAfter([](Plan &p) { p.params[0].init.gain = 0; }),
            "params[0].init.gain: must be a positive finite number, got 0");
}

// A plan that reads nothing or updates nothing would run and learn nothing.
TEST(PlanValidation, SomethingToReadAndToUpdate) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.update.clear(); }),
            "update: the plan has 1 parameters and 1 tables but no kernel that updates them: "
            "nothing would learn");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["inputs"] = json::array(); }),
            "inputs: a plan reads at least one input (its label)");
}

TEST(PlanValidation, NulByteInTheBody) {
  std::string body = planToJson(samplePlan()).dump();
  EXPECT_EQ(errorFor(containerWith(body + std::string(1, '\0') + "{}")),
            "invalid JSON body: a NUL byte at offset " + std::to_string(body.size()));
}

TEST(PlanValidation, Inputs) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.inputs[0].buffer = kPooled; }),
            "inputs[0].buffer: buffer 12 'pooled' has role activation, expected input");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["inputs"][1]["role"] = "sparse"; }),
            "inputs[1].role: unknown input role 'sparse' (expected dense, ids, offsets, "
            "weights, label or negatives)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.inputs[1].hotness = 0; }),
            "inputs[1].hotness: must be at least 1, got 0");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["inputs"][3]["label_kind"] = "ordinal"; }),
            "inputs[3].label_kind: unknown label kind 'ordinal' (expected binary, real or class)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.inputs[0].labelKind = LabelKind::Binary; }),
            "inputs[0].label_kind: only a label input has a label kind, this is a 'dense' input");
  EXPECT_EQ(errorAfter([](Plan &p) { p.inputs[2].feature.clear(); }),
            "inputs[2].feature: '' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 256 "
            "characters)");
}

// --- Kernels and schedules --------------------------------------------------

TEST(PlanValidation, KernelOpAndAttrs) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.update[0].op.clear(); }),
            "update[0].op: '' is not a kernel of the catalogue");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["step"][1]["attrs"] = json::array({1}); }),
            "step[1].attrs: expected an object, got array");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[0].op = "no_such_kernel_yet"; }),
            "step[0].op: 'no_such_kernel_yet' is not a kernel of the catalogue");
}

// Every kernel is checked against its KernelCatalogue.h entry.
TEST(PlanValidation, KernelsAgainstTheCatalogue) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[1].op = "update_table"; }),
            "step[1].op: 'update_table' runs in the update, not the step");
  EXPECT_EQ(errorAfter([](Plan &p) { p.update[0].op = "dense"; }),
            "update[0].op: 'dense' runs in the step, not the update");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[2].inputs.push_back(kWeight); p.step[2].inputs.push_back(kWeight); }),
            "step[2].inputs: 'dense' takes 2 to 3 operand(s), got 4");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[3].outputs.push_back(kScratch); }),
            "step[3].outputs: 'loss' has 1 result(s), got 2");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[1].inputs.clear(); }),
            "step[1].inputs: 'concat' takes at least 1 operand(s), got 0");
  // Attributes: missing, unknown, mistyped, a word outside its set, an index
  // out of range, nested objects, exactly one of table / batch.
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[3].attrs.erase("kind"); }),
            "step[3].attrs.kind: missing");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[2].attrs["scale"] = 0.1; }),
            "step[2].attrs.scale: not an attribute of this kernel");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[2].attrs["bias"] = 1; }),
            "step[2].attrs.bias: expected true or false, got 1");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[2].attrs["compute"] = "fp8"; }),
            "step[2].attrs.compute: \"fp8\" is not a precision (fp32, bf16, fp16)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[6].attrs["pooling"] = "median"; }),
            "step[6].attrs.pooling: \"median\" is not a pooling (sum, mean, max)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[6].attrs["table"] = 1; }),
            "step[6].attrs.table: 1 is not an index into tables (1 of them)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.update[0].attrs["param"] = -1; }),
            "update[0].attrs.param: -1 is not an index into params (1 of them)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.update[0].attrs["grad_scale"] = "half"; }),
            "update[0].attrs.grad_scale: expected a finite number, got \"half\"");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[0].attrs["members"][0]["buckets"] = -5; }),
            "step[0].attrs.members[0].buckets: expected an integer >= 0, got -5");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[0].attrs["members"][0]["extra"] = true; }),
            "step[0].attrs.members[0].extra: not an attribute of this kernel");
  EXPECT_EQ(errorAfter([](Plan &p) { p.step[0].attrs["members"] = json::object(); }),
            "step[0].attrs.members: expected an array, got {}");
  EXPECT_EQ(errorAfter([](Plan &p) { p.update[1].attrs.erase("table"); }),
            "update[1].attrs: needs exactly one of 'table' or 'batch', has 0");
  EXPECT_EQ(errorAfter([](Plan &p) { p.update[1].attrs["batch"] = 0; }),
            "update[1].attrs.batch: 0 is not an index into table_batches (0 of them)");
}

/// The first problem's text for a plan changed by `change`, or "<accepted>".
template <class F> bool refusedAt(F change, const std::string &path, const std::string &why) {
  const std::string error = errorAfter(change);
  EXPECT_EQ(error.rfind(path, 0), 0u) << error;
  EXPECT_NE(error.find(why), std::string::npos) << error;
  return error.rfind(path, 0) == 0 && error.find(why) != std::string::npos;
}

// Operands whose shapes would make a kernel index past a buffer: refused
// when the plan is read, even under a valid checksum (KernelOperands.cpp).
TEST(PlanValidation, KernelOperandShapesAndDtypes) {
  // dense: the weight's rows must be the input's width, the result B x N.
  refusedAt([](Plan &p) { p.step[2].inputs[1] = kLogits; }, "step[2].inputs[1]: ",
            "of the 'dense' kernel must be");
  refusedAt([](Plan &p) { p.step[2].outputs[0] = kConcat; }, "step[2].outputs[0]: ",
            "of the 'dense' kernel must be");
  // dtype: ids are not floats.
  refusedAt([](Plan &p) { p.step[2].inputs[0] = kIdsInput; }, "step[2].inputs[0]: ",
            "of the 'dense' kernel must be f32, got i64");
  // concat: the output is as wide as its inputs together.
  refusedAt([](Plan &p) { p.step[1].inputs.pop_back(); }, "step[1].outputs[0]: ",
            "columns wide (the inputs' sum)");
  // dense_grad_weight: K x N.
  refusedAt([](Plan &p) { p.step[5].outputs[0] = kLogits; }, "step[5].outputs[0]: ",
            "of the 'dense_grad_weight' kernel must be");
  // loss_grad: d input has the input's shape.
  refusedAt([](Plan &p) { p.step[4].outputs[0] = kConcat; }, "step[4].outputs[0]: ",
            "of the 'loss_grad' kernel must be");
}

// The updates write the very buffers of what they update, and read rows and
// values of matching sizes; a lookup's result is B x the table's dim.
TEST(PlanValidation, UpdateAndLookupOperands) {
  refusedAt([](Plan &p) { p.update[0].outputs[1] = kWeightMoment2; }, "update[0].outputs[1]: ",
            "of the 'update_param' kernel must be state 0 of parameter");
  refusedAt([](Plan &p) { p.update[0].inputs[0] = kWeightMoment1; }, "update[0].inputs[0]: ",
            "must be the gradient of parameter");
  refusedAt([](Plan &p) { p.update[0].outputs.pop_back(); }, "update[0].outputs: ",
            "writes 3 buffers (its values and optimizer state), got 2");
  refusedAt([](Plan &p) { p.update[1].outputs[0] = kWeight; }, "update[1].outputs[0]: ",
            "must be the values of table 'emb'");
  refusedAt([](Plan &p) { p.update[1].inputs[0] = kDenseInput; }, "update[1].inputs[0]: ",
            "must be i64, got f32");
  refusedAt([](Plan &p) { p.update[1].inputs[1] = kConcat; }, "update[1].inputs[1]: ",
            "of the 'update_table' kernel must hold");
  auto lookup = [](Plan &p) {
    p.step[0] = makeKernel("lookup", {kIdsInput, kOffsetsInput}, {kPooled},
                           {{"table", 0}, {"pooling", "sum"}});
  };
  EXPECT_EQ(errorAfter(lookup), "<accepted>");
  refusedAt(
      [&](Plan &p) {
        lookup(p);
        p.step[0].outputs[0] = kConcat;
      },
      "step[0].outputs[0]: ", "of the 'lookup' kernel must be any x 8");
  refusedAt(
      [&](Plan &p) {
        lookup(p);
        p.step[0].inputs[1] = kLabelInput;
      },
      "step[0].inputs[1]: ", "must be i64, got f32");
}

// The other kernels whose backends size their loops from one operand: each
// accepted with consistent operands, refused with the operand's path when
// one is of another shape or dtype.
TEST(PlanValidation, SparseAndInteractionOperands) {
  auto with = [](const char *op, std::vector<int32_t> in, std::vector<int32_t> out,
                 nlohmann::json attrs = nlohmann::json::object()) {
    return [=](Plan &p) { p.step[1] = makeKernel(op, in, out, attrs); };
  };
  // add: every input B x N, the output's.
  EXPECT_EQ(errorAfter(with("add", {kPooled, kPooled}, {kPooled})), "<accepted>");
  refusedAt(with("add", {kPooled, kConcat}, {kPooled}), "step[1].inputs[1]: ",
            "of the 'add' kernel must hold 32 values, got 4 x 9");
  // interaction: F inputs of B x D, B x F(F-1)/2 out.
  EXPECT_EQ(errorAfter(with("interaction", {kPooled, kPooled}, {kLogits})), "<accepted>");
  refusedAt(with("interaction", {kPooled, kConcat}, {kLogits}), "step[1].inputs[1]: ",
            "of the 'interaction' kernel must be 4 x 8, got 4 x 9");
  refusedAt(with("interaction", {kPooled, kPooled}, {kConcat}), "step[1].outputs[0]: ",
            "must hold 4 values, got 4 x 9");
  refusedAt(with("interaction", {kPooled, kPooled}, {kLogits}, {{"self", true}}),
            "step[1].outputs[0]: ", "must hold 12 values, got 4 x 1");
  refusedAt(with("interaction_grad", {kLogits, kPooled, kPooled}, {kPooled, kConcat}),
            "step[1].outputs[1]: ", "must be 4 x 8 (as 'pooled'), got 4 x 9");
  // hash: i64 in and out, room for every id.
  EXPECT_EQ(errorAfter(with("hash", {kIdsInput}, {kTableGradRows}, {{"buckets", 10}, {"seed", 1}})),
            "<accepted>");
  refusedAt(with("hash", {kIdsInput}, {kOffsetsInput}, {{"buckets", 10}, {"seed", 1}}),
            "step[1].outputs[0]: ", "must hold at least 8 values, got 5");
  refusedAt(with("hash", {kDenseInput}, {kTableGradRows}, {{"buckets", 10}, {"seed", 1}}),
            "step[1].inputs[0]: ", "must be i64, got f32");
  // lookup_grad: dy is B x D of the table, a row out for every id.
  const nlohmann::json table = {{"table", 0}, {"pooling", "sum"}};
  refusedAt(with("lookup_grad", {kIdsInput, kOffsetsInput, kLogitsGrad}, {kScratch}, table),
            "step[1].inputs[2]: ", "of the 'lookup_grad' kernel must be any x 8, got 4 x 1");
  refusedAt(with("lookup_grad", {kIdsInput, kOffsetsInput, kPooledGrad}, {kPooled}, table),
            "step[1].outputs[0]: ", "must hold a row for each of the 8 ids, got 4 x 8");
  refusedAt(with("lookup_grad", {kIdsInput, kDenseInput, kPooledGrad}, {kScratch}, table),
            "step[1].inputs[1]: ", "must be i64, got f32");
  // accumulate_rows and coalesce_rows: exactly the table's sparse gradient.
  refusedAt(with("accumulate_rows", {kIdsInput, kScratch}, {kIdsInput, kTableGradValues},
                 {{"table", 0}}),
            "step[1].outputs[0]: ", "must be the gradient rows of table 'emb'");
  refusedAt(with("accumulate_rows", {kIdsInput, kPooled}, {kTableGradRows, kTableGradValues},
                 {{"table", 0}}),
            "step[1].inputs[1]: ", "must hold a row of 8 for each of the 8 ids, got 4 x 8");
  auto coalesce = [](std::vector<int32_t> out) {
    return [=](Plan &p) {
      p.update.insert(p.update.begin(), makeKernel("coalesce_rows", {}, out, {{"table", 0}}));
    };
  };
  EXPECT_EQ(errorAfter(coalesce({kTableGradRows, kTableGradValues})), "<accepted>");
  refusedAt(coalesce({kTableGradRows, kScratch}), "update[0].outputs[1]: ",
            "must be the gradient values of table 'emb'");
  // clip_grad_norm: one value out.
  const nlohmann::json clip = {{"max_norm", 1.0}, {"grad_scale", 1.0}};
  refusedAt([&](Plan &p) {
    p.update.insert(p.update.begin(), makeKernel("clip_grad_norm", {kWeightGrad}, {kScratch}, clip));
  }, "update[0].outputs[0]: ", "must hold 1 values, got 8 x 8");
}

// The fused dense kernels: the layer's shapes and the results their flags
// ask for.
TEST(PlanValidation, FusedDenseOperands) {
  auto step2 = [](const char *op, std::vector<int32_t> in, std::vector<int32_t> out,
                  nlohmann::json attrs) {
    return [=](Plan &p) { p.step[2] = makeKernel(op, in, out, attrs); };
  };
  const nlohmann::json relu = {{"kind", "relu"}, {"bias", false}};
  EXPECT_EQ(errorAfter(step2("dense_act", {kConcat, kWeight}, {kLogits}, relu)), "<accepted>");
  refusedAt(step2("dense_act", {kConcat, kWeight}, {kLogits, kPooled}, relu),
            "step[2].outputs[1]: ", "of the 'dense_act' kernel must be 4 rows of 1, got 4 x 8");
  // dense_act_grad: dy (4 x 1), a (4 x 1), x (4 x 9), w (9 x 1) -> dz, dW.
  const nlohmann::json grad = {{"kind", "relu"}, {"bias", false}, {"input_grad", false},
                               {"from_output", true}};
  auto actGrad = [](std::vector<int32_t> out, nlohmann::json attrs) {
    return [=](Plan &p) {
      p.step[5] = makeKernel("dense_act_grad", {kLogitsGrad, kLogits, kConcat, kWeight}, out,
                             attrs);
    };
  };
  EXPECT_EQ(errorAfter(actGrad({kLogitsGrad, kWeightGrad}, grad)), "<accepted>");
  refusedAt(actGrad({kWeightGrad, kLogitsGrad}, grad), "step[5].outputs[0]: ",
            "must hold 4 values, got 9 x 1");
  nlohmann::json withInputGrad = grad;
  withInputGrad["input_grad"] = true;
  refusedAt(actGrad({kLogitsGrad, kWeightGrad}, withInputGrad), "step[5].outputs[0]: ",
            "is one of 2 results, where its kind, bias and input_grad give 3");
  // interaction_concat: copies, then the interaction's inputs; its width.
  const nlohmann::json bare = {{"self", false}, {"copies", 0}, {"position", 0}};
  auto interactionConcat = [](std::vector<int32_t> in, std::vector<int32_t> out,
                              nlohmann::json attrs) {
    return [=](Plan &p) { p.step[1] = makeKernel("interaction_concat", in, out, attrs); };
  };
  EXPECT_EQ(errorAfter(interactionConcat({kPooled, kPooled}, {kLogits}, bare)), "<accepted>");
  refusedAt(interactionConcat({kPooled, kPooled}, {kConcat}, bare), "step[1].outputs[0]: ",
            "must be 4 x 1, got 4 x 9");
  // A copy of the dense input before the pair: 1 + 1 columns.
  const nlohmann::json copied = {{"self", false}, {"copies", 1}, {"position", 1}};
  refusedAt(interactionConcat({kDenseInput, kPooled, kPooled}, {kConcat}, copied),
            "step[1].outputs[0]: ", "must be 4 x 2, got 4 x 9");
  nlohmann::json farCopy = copied;
  farCopy["position"] = 2;
  refusedAt(interactionConcat({kDenseInput, kPooled, kPooled}, {kLogits}, farCopy),
            "step[1].inputs[0]: ", "starts 1 copies at position 2 of 3 inputs");
}

// The fused embedding kernels and the all-reduce: each member's or
// source's operands in turn, row ranges within what they update.
TEST(PlanValidation, FusedEmbeddingAndCollectiveOperands) {
  refusedAt([](Plan &p) { p.step[0].outputs[0] = kConcat; }, "step[0].outputs[0]: ",
            "of the 'fused_lookup' kernel must be any x 8, got 4 x 9");
  refusedAt([](Plan &p) { p.step[0].attrs["members"][0]["weighted"] = true; },
            "step[0].attrs.members[0]: ", "has too few operands for member 0");
  refusedAt([](Plan &p) { p.step[0].inputs.push_back(kDenseInput); }, "step[0].inputs: ",
            "has 3 inputs and 1 outputs; its members take 2 and 1");
  auto fusedUpdate = [](int32_t dy, int64_t rows) {
    return [=](Plan &p) {
      p.step[6] = makeKernel(
          "embedding_update", {kIdsInput, kOffsetsInput, dy}, {kTable, kTableAccumulator},
          {{"table", 0},
           {"grad_scale", 1.0},
           {"sources",
            {{{"kind", "bag"}, {"pooling", "sum"}, {"weighted", false}, {"row_offset", 0},
              {"rows", rows}}}}});
    };
  };
  EXPECT_EQ(errorAfter(fusedUpdate(kPooledGrad, 10)), "<accepted>");
  refusedAt(fusedUpdate(kPooledGrad, 11), "step[6].attrs.sources[0]: ",
            "covers [0, 11) of table 'emb', which has 10");
  refusedAt(fusedUpdate(kLogitsGrad, 10), "step[6].inputs[2]: ",
            "of the 'embedding_update' kernel must be any x 8, got 4 x 1");
  auto allReduce = [](int32_t grad, int64_t size) {
    return [=](Plan &p) {
      p.update.insert(p.update.begin(),
                      makeKernel("grad_all_reduce_start", {}, {grad},
                                 {{"param", 0}, {"offset", 0}, {"size", size}}));
    };
  };
  EXPECT_EQ(errorAfter(allReduce(kWeightGrad, 9)), "<accepted>");
  refusedAt(allReduce(kWeightGrad, 10), "update[0].attrs.offset: ",
            "covers [0, 10) of the gradient of parameter 'fc_w', which has 9");
  refusedAt(allReduce(kWeight, 9), "update[0].outputs[0]: ",
            "must be the gradient of parameter 'fc_w'");
}

// The sharding exchanges: a sharded table's N x B bags and rows.
TEST(PlanValidation, ShardExchangeOperands) {
  auto shardPool = [](int32_t partial, int32_t pooled, bool sharded) {
    return [=](Plan &p) {
      if (sharded) {
        p.config.dataParallel = 2;
        p.tables[0].shardRows = {0, 10, 10}; // rank 1 holds none: the buffers stay 10 rows
      }
      p.step[1] = makeKernel("shard_pool", {partial}, {pooled}, {{"table", 0}});
    };
  };
  refusedAt(shardPool(kScratch, kPooled, false), "step[1].attrs: ",
            "looks up table 'emb', which is not sharded (no shard_rows)");
  EXPECT_EQ(errorAfter(shardPool(kScratch, kPooled, true)), "<accepted>"); // 8 rows -> 4
  refusedAt(shardPool(kPooled, kPooled, true), "step[1].inputs[0]: ",
            "of the 'shard_pool' kernel must be 8 x 8, got 4 x 8");
  auto shardIds = [](int32_t localIds, int32_t localOffsets) {
    return [=](Plan &p) {
      p.config.dataParallel = 2;
      p.tables[0].shardRows = {0, 10, 10}; // rank 1 holds none: the buffers stay 10 rows
      p.step[1] = makeKernel("shard_ids", {kIdsInput, kOffsetsInput}, {localIds, localOffsets},
                             {{"table", 0}});
    };
  };
  refusedAt(shardIds(kTableGradRows, kOffsetsInput), "step[1].outputs[0]: ",
            "of the 'shard_ids' kernel must hold 16 values, got 8");
}

TEST(KernelCatalogue, EntriesInEnumOrderWithDistinctNames) {
  const std::vector<KernelSpec> &catalogue = kernelCatalogue();
  std::set<std::string_view> names;
  for (size_t i = 0; i < catalogue.size(); ++i) {
    EXPECT_EQ(size_t(catalogue[i].op), i);
    EXPECT_TRUE(names.insert(catalogue[i].name).second) << catalogue[i].name;
    EXPECT_EQ(findKernel(catalogue[i].name), &catalogue[i]);
    EXPECT_LE(catalogue[i].inputs.min, catalogue[i].inputs.max) << catalogue[i].name;
    EXPECT_LE(catalogue[i].outputs.min, catalogue[i].outputs.max) << catalogue[i].name;
  }
  EXPECT_EQ(findKernel("embedding_bag"), nullptr);
}

TEST(PlanValidation, ForwardKernelsWithinTheStep) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.forwardKernels = 9; }),
            "forward_kernels: 9 is not between 0 and the 8 kernels of the step");
  EXPECT_EQ(errorAfter([](Plan &p) { p.forwardKernels = -1; }),
            "forward_kernels: -1 is not between 0 and the 8 kernels of the step");
  EXPECT_EQ(errorAfter([](Plan &p) { p.forwardKernels = 8; }), "<accepted>");
}

// --- Training configuration and words ---------------------------------------

TEST(PlanValidation, Config) {
  EXPECT_EQ(errorAfter([](Plan &p) { p.config.batchSize = 0; }),
            "config.batch_size: must be positive, got 0");
  EXPECT_EQ(errorAfter([](Plan &p) { p.config.gradAccumulation = 0; }),
            "config.grad_accumulation: must be at least 1, got 0");
  EXPECT_EQ(errorAfter([](Plan &p) { p.config.dataParallel = 0; }),
            "config.data_parallel: must be at least 1 (ranks), got 0");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["config"]["lr_schedule"] = "step"; }),
            "config.lr_schedule: unknown learning-rate schedule 'step' (expected constant, "
            "linear or cosine)");
  EXPECT_EQ(errorAfter([](Plan &p) { p.config.decaySteps = 0; }),
            "config.decay_steps: must be positive for the 'cosine' schedule");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["config"]["loss"] = ""; }),
            "config.loss: unknown loss '' (expected bce_with_logits, mse, softmax_ce, "
            "neg_sampling or sequence_softmax_ce)");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["config"]["precision"] = "fp8"; }),
            "config.precision: unknown precision 'fp8' (expected fp32, bf16 or fp16)");
}

TEST(PlanValidation, OptimizerAndInitializerWords) {
  // Typed fields: a bad word can only come from the file, and the reader
  // refuses it.
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["tables"][0]["optimizer"]["kind"] = "adadelta"; }),
            "tables[0].optimizer.kind: unknown optimizer 'adadelta' (expected sgd, adagrad, "
            "rowwise_adagrad, adam, adamw or lamb)");
  EXPECT_EQ(errorAfterBodyEdit(
                [](json &b) { b["params"][0]["optimizer"]["weight_decay_mode"] = "eager"; }),
            "params[0].optimizer.weight_decay_mode: unknown weight decay mode 'eager' (expected "
            "lazy or global)");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["params"][0]["init"]["kind"] = "he"; }),
            "params[0].init.kind: unknown initializer 'he' (expected zeros, constant, uniform, "
            "normal, xavier_uniform or xavier_normal)");
}

// --- JSON structure ----------------------------------------------------------

TEST(PlanValidation, UnknownRoleOrDType) {
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["buffers"][12]["role"] = "scratchpad"; }),
            "buffers[12].role: unknown role 'scratchpad' (expected table, param, grad, "
            "optimizer_state, input, activation or workspace)");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["buffers"][2]["dtype"] = "f8"; }),
            "buffers[2].dtype: unknown dtype 'f8' (expected f32, f64, i64, f16, bf16 or u8)");
}

TEST(PlanValidation, MissingFields) {
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["buffers"][3].erase("offset"); }),
            "buffers[3].offset: missing field");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["tables"][0]["optimizer"].erase("eps"); }),
            "tables[0].optimizer.eps: missing field");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b.erase("arena_bytes"); }),
            "arena_bytes: missing field");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b.erase("memory"); }), "memory: missing field");
}

TEST(PlanValidation, MistypedFields) {
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["buffers"][3]["offset"] = "256"; }),
            "buffers[3].offset: expected an integer, got string");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["buffers"][3]["offset"] = 256.5; }),
            "buffers[3].offset: expected an integer, got number 256.5");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["buffers"][1]["dynamic"] = 1; }),
            "buffers[1].dynamic: expected true or false, got number");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["buffers"][1]["shape"][0] = nullptr; }),
            "buffers[1].shape[0]: expected an integer, got null");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["params"][0]["state"] = 6; }),
            "params[0].state: expected an array, got number");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["params"][0]["optimizer"]["lr"] = "fast"; }),
            "params[0].optimizer.lr: expected a number, got string");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["config"]["seed"] = -1; }),
            "config.seed: expected a non-negative integer, got -1");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["step"][0]["inputs"][0] = int64_t(1) << 40; }),
            "step[0].inputs[0]: 1099511627776 is not a buffer index (out of 32-bit range)");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) {
              b["arena_bytes"] = std::numeric_limits<uint64_t>::max();
            }),
            "arena_bytes: 18446744073709551615 does not fit a signed 64-bit integer");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["notes"][1] = false; }),
            "notes[1]: expected a string, got boolean");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["config"] = json::array(); }),
            "config: expected an object, got array");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["inputs"][0] = "d0"; }),
            "inputs[0]: expected an object, got string");
}

TEST(PlanValidation, UnknownFields) {
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["buffers"][0]["stride"] = 8; }),
            "buffers[0].stride: unknown field");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["extra"] = true; }), "extra: unknown field");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["params"][0]["init"]["scale"] = 1; }),
            "params[0].init.scale: unknown field");
}

TEST(PlanValidation, FormatNameAndBodyVersion) {
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["format"] = "embc.model/v1"; }),
            "format: 'embc.model/v1' is not an embc plan (expected 'embc.plan')");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b.erase("version"); }), "version: missing field");
}

TEST(PlanValidation, MemoryReportMustMatchTheBuffers) {
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["memory"]["by_role"]["param"] = 1000; }),
            "memory.by_role.param: 1000 but the param buffers total 36 bytes");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["memory"]["arena_bytes"] = 64; }),
            "memory.arena_bytes: 64 but arena_bytes is " +
                std::to_string(samplePlan().arenaBytes));
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["memory"]["by_role"].erase("grad"); }),
            "memory.by_role.grad: missing field");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["memory"]["by_role"]["cache"] = 0; }),
            "memory.by_role.cache: unknown role");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["memory"]["peak"] = 0; }),
            "memory.peak: unknown field");
  EXPECT_EQ(errorAfterBodyEdit([](json &b) { b["memory"] = 5; }),
            "memory: expected an object, got number");
}
