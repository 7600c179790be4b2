// What -emb-autodiff refuses: a module without @forward or already
// differentiated, a @forward whose first result is not a loss, a loss that
// feeds other ops, an op without a gradient rule on the way to the loss, and
// global weight decay that a sparse table update cannot honour.
// RUN: emb-opt %s -split-input-file -emb-autodiff -verify-diagnostics

// expected-error @+1 {{-emb-autodiff needs a func.func @forward}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @predict(%x: tensor<4x3xf32>) -> tensor<4x1xf32> {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    return %p : tensor<4x1xf32>
  }
}

// -----

// A symbol named forward that is not a function does not count.
// expected-error @+1 {{-emb-autodiff needs a func.func @forward}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @forward : tensor<3x1xf32> init<kind = xavier_uniform>
}

// -----

// The pass runs once: a module that already has @train_step is refused.
// expected-error @+1 {{the module already has @train_step or @update: -emb-autodiff runs once}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
  func.func @train_step() {
    return
  }
}

// -----

// So is one with a symbol @update (here a parameter).
// expected-error @+1 {{the module already has @train_step or @update: -emb-autodiff runs once}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @update : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @update : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{'func.func' op @forward must return the loss first}}
  func.func @forward(%x: tensor<4x3xf32>) {
    return
  }
}

// -----

// The first result must be the loss, not the prediction.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  // expected-error @+1 {{'func.func' op the first result of @forward must be produced by emb.loss}}
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<f32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %p, %l : tensor<4x1xf32>, tensor<f32>
  }
}

// -----

// A function argument is not produced by emb.loss either.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{'func.func' op the first result of @forward must be produced by emb.loss}}
  func.func @forward(%l: tensor<f32>) -> tensor<f32> {
    return %l : tensor<f32>
  }
}

// -----

// A loss is the root of the backward pass: its value cannot feed another
// differentiable op, even one that only post-processes it.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<f32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    // expected-error @+1 {{'emb.loss' op a loss can only be the root of the backward pass; its value cannot feed other differentiable ops}}
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    // expected-note @+1 {{used by this 'emb.activation'}}
    %s = emb.activation sigmoid %l : tensor<f32>
    return %l, %s : tensor<f32>, tensor<f32>
  }
}

// -----

// The same for a second loss that is not the one returned first.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<f32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    // expected-error @+1 {{'emb.loss' op a loss can only be the root of the backward pass; its value cannot feed other differentiable ops}}
    %aux = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    // expected-note @+1 {{used by this 'emb.activation'}}
    %t = emb.activation tanh %aux : tensor<f32>
    return %l, %t : tensor<f32>, tensor<f32>
  }
}

// -----

// An op without a gradient rule between a trainable value and the loss.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func private @identity(tensor<4x1xf32>) -> tensor<4x1xf32>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    // expected-error @+1 {{'func.call' op has no gradient rule (GradientOpInterface) but lies between a trainable value and the loss}}
    %q = func.call @identity(%p) : (tensor<4x1xf32>) -> tensor<4x1xf32>
    %l = emb.loss mse %q, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %q : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Backward ops have no gradient rule of their own.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x2xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x2xf32>
    %h = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
    // expected-error @+1 {{'emb.slice' op has no gradient rule (GradientOpInterface) but lies between a trainable value and the loss}}
    %p = emb.slice %h [1] : tensor<4x2xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Global weight decay on a table whose optimizer keeps state would update
// every row's state each step (a dense update); every such table is reported.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{'emb.table' op global weight decay with optimizer 'adagrad' would update every row's optimizer state each step (a dense update of the table); use weight_decay_mode 'lazy', or sgd without momentum or adamw}}
  emb.table @a [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad, weight_decay = 0.01, weight_decay_mode = global>
  // expected-error @+1 {{'emb.table' op global weight decay with optimizer 'sgd' with momentum would update every row's optimizer state each step (a dense update of the table); use weight_decay_mode 'lazy', or sgd without momentum or adamw}}
  emb.table @b [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd, momentum = 0.9, weight_decay = 0.01, weight_decay_mode = global>
  // expected-error @+1 {{'emb.table' op global weight decay with optimizer 'rowwise_adagrad' would update every row's optimizer state each step}}
  emb.table @c [10 x 4] f32 init<kind = zeros> optimizer<kind = rowwise_adagrad, weight_decay = 0.01, weight_decay_mode = global>
  // expected-error @+1 {{'emb.table' op global weight decay with optimizer 'adam' would update every row's optimizer state each step}}
  emb.table @d [10 x 4] f32 init<kind = zeros> optimizer<kind = adam, weight_decay = 0.01, weight_decay_mode = global>
  // Accepted: lazy decay, and global decay with sgd without momentum.
  emb.table @e [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad, weight_decay = 0.01>
  emb.table @f [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd, weight_decay = 0.01, weight_decay_mode = global>
  func.func @forward(%ids: tensor<?xi64>, %offs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
    %a = emb.lookup @a[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %l = emb.loss softmax_ce %a, %y : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %a : tensor<f32>, tensor<4x4xf32>
  }
}
