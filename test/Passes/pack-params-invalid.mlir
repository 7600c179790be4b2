// What -emb-pack-params refuses: a module that -emb-autodiff has not run on
// (no @train_step and @update), a module already packed, and members of one
// pack or batch whose updates are scaled differently.
// RUN: emb-opt %s -split-input-file -emb-pack-params -verify-diagnostics

// Not differentiated: only @forward.
// expected-error @+1 {{-emb-pack-params needs @train_step and @update: run -emb-autodiff first}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// @train_step without @update.
// expected-error @+1 {{-emb-pack-params needs @train_step and @update: run -emb-autodiff first}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%x: tensor<4x3xf32>) {
    return
  }
}

// -----

// An @update that is not a function does not count.
// expected-error @+1 {{-emb-pack-params needs @train_step and @update: run -emb-autodiff first}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @update : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%x: tensor<4x3xf32>) {
    return
  }
}

// -----

// Already packed (the output of -emb-autodiff -emb-pack-params).
// expected-error @+1 {{the module is already packed (it has an emb.param_pack or emb.table_batch)}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  emb.param @b : tensor<1xf32> init<kind = zeros>
  emb.param_pack @dense_f32 : f32[32] members [@b, @w] offsets [0, 16] buckets [0, 32]
  func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %b = emb.get @b : tensor<1xf32>
    %p = emb.dense %x, %w, %b : tensor<4x3xf32>, tensor<3x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %dp = emb.loss_grad mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %dw = emb.dense_grad_weight %x, %dp : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
    %db = emb.bias_grad %dp : tensor<4x1xf32> -> tensor<1xf32>
    emb.accumulate_grad @b, %db : tensor<1xf32>
    emb.accumulate_grad @w, %dw : tensor<3x1xf32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.update @dense_f32
    return
  }
}

// -----

// A table batch alone counts as packed too.
// expected-error @+1 {{the module is already packed (it has an emb.param_pack or emb.table_batch)}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @t1 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table_batch @tables_d4 [@t0, @t1]
  func.func @train_step(%x: tensor<4x3xf32>) {
    return
  }
  func.func @update() {
    emb.coalesce_rows @tables_d4
    emb.update @tables_d4
    return
  }
}

// -----

// Members of one pack take one optimizer step: a hand-written @update that
// clips one parameter and not the other cannot be packed.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  emb.param @b : tensor<1xf32> init<kind = zeros>
  func.func @train_step(%x: tensor<4x3xf32>) {
    return
  }
  func.func @update() {
    %s = emb.clip_grad_norm max_norm(1.0) : tensor<f32>
    emb.update @w scale %s : tensor<f32>
    // expected-error @+1 {{'emb.update' op is scaled differently from the update of @w: the members of a pack or batch take one optimizer step together}}
    emb.update @b
    return
  }
}

// -----

// The same for the members of a table batch.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @t1 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step(%x: tensor<4x3xf32>) {
    return
  }
  func.func @update() {
    %s = emb.clip_grad_norm max_norm(1.0) : tensor<f32>
    emb.update @t0
    // expected-error @+1 {{'emb.update' op is scaled differently from the update of @t0: the members of a pack or batch take one optimizer step together}}
    emb.update @t1 scale %s : tensor<f32>
    return
  }
}
