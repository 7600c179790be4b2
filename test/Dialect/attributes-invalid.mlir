// Verifier errors of the emb attributes: #emb.init, #emb.optimizer, #emb.training and #emb.plan (reported where the attribute is written).
// RUN: emb-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #emb.init
//===----------------------------------------------------------------------===//

// 0x7FF0000000000000 is the bit pattern of +infinity.
// expected-error @+1 {{initializer parameters must be finite}}
emb.table @t [10 x 8] f32 init<kind = constant, value = 0x7FF0000000000000> optimizer<kind = sgd>

// -----

// A decimal literal too large for a double also becomes infinity.
// expected-error @+1 {{initializer parameters must be finite}}
emb.param @w : tensor<4x4xf32> init<kind = xavier_uniform, gain = 1.0e400>

// -----

// expected-error @+1 {{uniform initializer needs low < high, got low = 5.000000e-01, high = -5.000000e-01}}
emb.table @t [10 x 8] f32 init<kind = uniform, low = 0.5, high = -0.5> optimizer<kind = sgd>

// -----

// low == high (both default to 0) is an empty range too.
// expected-error @+1 {{uniform initializer needs low < high}}
emb.param @b : tensor<4xf32> init<kind = uniform>

// -----

// std defaults to 0.
// expected-error @+1 {{normal initializer needs std > 0, got 0}}
emb.table @t [10 x 8] f32 init<kind = normal, mean = 1.0> optimizer<kind = sgd>

// -----

// expected-error @+1 {{xavier initializer needs gain > 0, got -1}}
emb.param @w : tensor<4x4xf32> init<kind = xavier_normal, gain = -1.0>

// -----

// The attribute is checked wherever it appears, not only on emb ops.
// expected-error @+1 {{xavier initializer needs gain > 0, got 0}}
func.func @f() attributes {init = #emb.init<kind = xavier_uniform, gain = 0.0>} {
  return
}

//===----------------------------------------------------------------------===//
// #emb.optimizer
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{optimizer 'lr' must be positive and finite, got 0}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.0>

// -----

// expected-error @+1 {{optimizer 'lr' must be positive and finite}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = adagrad, lr = 0x7FF0000000000000>

// -----

// expected-error @+1 {{optimizer 'momentum' must be in [0, 1), got 1}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd, momentum = 1.0>

// -----

// expected-error @+1 {{optimizer betas must be in [0, 1), got beta1 = 1.000000e+00, beta2 = 9.990000e-01}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = adam, beta1 = 1.0>

// -----

// expected-error @+1 {{optimizer betas must be in [0, 1), got beta1 = 9.000000e-01, beta2 = -1.000000e-01}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = lamb, beta2 = -0.1>

// -----

// expected-error @+1 {{optimizer 'eps' must be positive, got 0}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = adam, eps = 0.0>

// -----

// expected-error @+1 {{optimizer 'weight_decay' must be >= 0, got -1.000000e-02}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = adamw, weight_decay = -0.01>

// -----

// expected-error @+1 {{optimizer 'initial_accumulator' must be >= 0, got -1}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = rowwise_adagrad, initial_accumulator = -1.0>

// -----

// expected-error @+1 {{'momentum' applies only to sgd, not to adam}}
emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = adam, momentum = 0.9>

// -----

// The dense optimizer nested in #emb.training is checked too.
// expected-error @+2 {{'momentum' applies only to sgd, not to rowwise_adagrad}}
// expected-error @+1 {{failed to parse Emb_TrainingAttr parameter 'dense_optimizer'}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = rowwise_adagrad, momentum = 0.5>>} {}

//===----------------------------------------------------------------------===//
// #emb.training
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'batch_size' must be positive, got 0}}
module attributes {emb.training = #emb.training<batch_size = 0, dense_optimizer = <kind = sgd>>} {}

// -----

// 'dense_optimizer' has no default, so the parser asks for it before the
// verifier's "'dense_optimizer' is required" check (only reachable from C++).
// expected-error @+1 {{struct is missing required parameter: dense_optimizer}}
module attributes {emb.training = #emb.training<batch_size = 8>} {}

// -----

// expected-error @+2 {{invalid kind of attribute specified}}
// expected-error @+1 {{failed to parse Emb_TrainingAttr parameter 'dense_optimizer'}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = #emb.plan<>>} {}

// -----

// expected-error @+1 {{'grad_clip_norm' must be >= 0, got -1}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd>, grad_clip_norm = -1.0>} {}

// -----

// expected-error @+1 {{'grad_accumulation' must be positive, got 0}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd>, grad_accumulation = 0>} {}

// -----

// expected-error @+1 {{'warmup_steps' and 'decay_steps' must be >= 0}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd>, warmup_steps = -1>} {}

// -----

// expected-error @+1 {{'warmup_steps' and 'decay_steps' must be >= 0}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd>, decay_steps = -5>} {}

// -----

// expected-error @+1 {{lr_schedule 'cosine' needs 'decay_steps' > 0}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd>, lr_schedule = cosine>} {}

// -----

// expected-error @+1 {{lr_schedule 'linear' needs 'decay_steps' > 0}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd>, warmup_steps = 10, lr_schedule = linear>} {}

// -----

// expected-error @+1 {{'seed' must be >= 0, got -7}}
module attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd>, seed = -7>} {}

//===----------------------------------------------------------------------===//
// #emb.plan
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'memory_budget' must be >= 0, got -1}}
module attributes {emb.plan = #emb.plan<memory_budget = -1>} {}

// -----

// expected-error @+1 {{'micro_batches', 'pipeline_stages', 'data_parallel' and 'pipeline_ranks' must be positive}}
module attributes {emb.plan = #emb.plan<micro_batches = 0>} {}

// -----

// expected-error @+1 {{'micro_batches', 'pipeline_stages', 'data_parallel' and 'pipeline_ranks' must be positive}}
module attributes {emb.plan = #emb.plan<pipeline_stages = -2>} {}

// -----

// expected-error @+1 {{'micro_batches', 'pipeline_stages', 'data_parallel' and 'pipeline_ranks' must be positive}}
module attributes {emb.plan = #emb.plan<data_parallel = 0>} {}

// -----

// expected-error @+1 {{'micro_batches', 'pipeline_stages', 'data_parallel' and 'pipeline_ranks' must be positive}}
module attributes {emb.plan = #emb.plan<pipeline_ranks = 0>} {}

// -----

// An unknown enum value is a parse error.
// expected-error @+2 {{expected one of [none, auto, all] for activation rematerialisation, got: automatic}}
// expected-error @+1 {{failed to parse Emb_PlanAttr parameter 'remat'}}
module attributes {emb.plan = #emb.plan<remat = automatic>} {}
