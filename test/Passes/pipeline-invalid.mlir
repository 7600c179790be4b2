// What -emb-pipeline refuses: micro-batch counts that do not divide the
// batch, more stages than forward ops, stage assignments that send values
// backwards or leave a backward op no consistent stage, forward ops with
// and without stages, ids that do not split, an op whose shapes do not
// survive the micro-batch rewrite, and a module already pipelined.
// RUN: emb-opt %s -split-input-file -emb-pipeline -verify-diagnostics

// expected-error @+1 {{-emb-pipeline: 3 micro-batches do not divide the batch of 8}}
module attributes {emb.plan = #emb.plan<micro_batches = 3>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%x: tensor<8x3xf32> {emb.feature = "x", emb.role = "dense"}, %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<8x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w : tensor<8x3xf32>, tensor<3x1xf32> -> tensor<8x1xf32>
    %l = emb.loss mse %z, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %z : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

module attributes {emb.plan = #emb.plan<pipeline_stages = 3>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  // expected-error @+1 {{'func.func' op cannot split 2 forward op(s) into 3 pipeline stages: each stage needs at least one}}
  func.func @train_step(%x: tensor<8x3xf32> {emb.feature = "x", emb.role = "dense"}, %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<8x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w : tensor<8x3xf32>, tensor<3x1xf32> -> tensor<8x1xf32>
    %l = emb.loss mse %z, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %z : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

// Given stages that send a forward value from stage 1 back to stage 0.
module attributes {emb.plan = #emb.plan<pipeline_stages = 2>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%x: tensor<8x3xf32> {emb.feature = "x", emb.role = "dense"}, %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<8x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w {emb.stage = 1 : i64} : tensor<8x3xf32>, tensor<3x1xf32> -> tensor<8x1xf32>
    // expected-error @+1 {{'emb.activation' op on stage 0 reads a value of stage 1: forward values only flow to the same or later stages}}
    %a = emb.activation relu %z {emb.stage = 0 : i64} : tensor<8x1xf32>
    %l = emb.loss mse %a, %y {emb.stage = 1 : i64} : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %a : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

module attributes {emb.plan = #emb.plan<pipeline_stages = 2>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  // expected-error @+1 {{'func.func' op has forward ops with and without emb.stage: give every forward op a stage, or none}}
  func.func @train_step(%x: tensor<8x3xf32> {emb.feature = "x", emb.role = "dense"}, %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<8x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w {emb.stage = 0 : i64} : tensor<8x3xf32>, tensor<3x1xf32> -> tensor<8x1xf32>
    %a = emb.activation relu %z : tensor<8x1xf32>
    %l = emb.loss mse %a, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %a : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

// A backward op reads a forward value of stage 1 and a gradient made on
// stage 0: no stage can run it (gradients only flow to earlier stages).
module attributes {emb.plan = #emb.plan<pipeline_stages = 2>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%x: tensor<8x3xf32> {emb.feature = "x", emb.role = "dense"}, %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<8x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w {emb.stage = 0 : i64} : tensor<8x3xf32>, tensor<3x1xf32> -> tensor<8x1xf32>
    // expected-note @+1 {{the forward value of stage 1}}
    %a = emb.activation relu %z {emb.stage = 1 : i64} : tensor<8x1xf32>
    %l = emb.loss mse %a, %y {emb.stage = 1 : i64} : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    %da = emb.loss_grad mse %a, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
    %dz = emb.activation_grad relu %da, %z : tensor<8x1xf32>
    // expected-note @+1 {{the gradient of stage 0}}
    %dx = emb.dense_grad_input %dz, %w : tensor<8x1xf32>, tensor<3x1xf32> -> tensor<8x3xf32>
    // expected-error @+1 {{'emb.concat' op has inconsistent stages: it reads forward values of stage 1 but gradients of stage 0, and a backward op runs on a stage between them}}
    %bad = emb.concat %dx, %a : tensor<8x3xf32>, tensor<8x1xf32> -> tensor<8x4xf32>
    return %l, %a : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

// Ids whose capacity does not split into the micro-batches.
module attributes {emb.plan = #emb.plan<micro_batches = 2>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t[10 x 1] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.1>
  // expected-error @+1 {{'func.func' op argument 0 (ids) holds up to 9 ids, which do not split into 2 micro-batches}}
  func.func @train_step(%ids: tensor<?xi64> {emb.feature = "c", emb.role = "ids", emb.max_ids = 9 : i64}, %off: tensor<9xi64> {emb.feature = "c", emb.role = "offsets"}, %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<8x1xf32>) {
    %e = emb.lookup @t[%ids, %off] sum : tensor<?xi64>, tensor<9xi64> -> tensor<8x1xf32>
    %l = emb.loss mse %e, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %e : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

// A parameter with as many rows as the batch, concatenated with batch rows:
// the concat no longer verifies once the batch rows are halved.
module attributes {emb.plan = #emb.plan<micro_batches = 2>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @p : tensor<8x2xf32> init<kind = zeros>
  emb.param @w : tensor<5x1xf32> init<kind = zeros>
  // expected-error @+1 {{'func.func' op does not verify at micro-batch size 4 (see the op errors above)}}
  func.func @train_step(%x: tensor<8x3xf32> {emb.feature = "x", emb.role = "dense"}, %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<8x1xf32>) {
    %p = emb.get @p : tensor<8x2xf32>
    // expected-error @+1 {{'emb.concat' op}}
    %c = emb.concat %x, %p : tensor<8x3xf32>, tensor<8x2xf32> -> tensor<8x5xf32>
    %w = emb.get @w : tensor<5x1xf32>
    %d = emb.dense %c, %w : tensor<8x5xf32>, tensor<5x1xf32> -> tensor<8x1xf32>
    %l = emb.loss mse %d, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

module attributes {emb.plan = #emb.plan<micro_batches = 2>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  // expected-error @+1 {{'func.func' op is already pipelined}}
  func.func @train_step(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) attributes {emb.micro_batches = 2 : i64, emb.pipeline_stages = 1 : i64} {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %z, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %z : tensor<f32>, tensor<4x1xf32>
  }
}
