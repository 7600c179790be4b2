// What the dense half of -emb-quantize refuses, and what emb.unscale_grads'
// verifier refuses.
// The models are -emb-autodiff's output (the IR the pass sees), inline so
// that each expected error sits on its op (docs/testing.md).
// RUN: emb-opt %s -split-input-file -verify-diagnostics -emb-quantize

// bf16 compute keeps f32 master weights: an f64 parameter has none.
module @f64_param attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  // expected-error @+1 {{'emb.param' op has element type 'f64'; bf16 compute keeps f32 master weights, so parameters must be f32}}
  emb.param @w : tensor<3x1xf64> init<kind = zeros>
  func.func @train_step(%arg0: tensor<2x3xf64> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<2x1xf64> {emb.feature = "y", emb.label_kind = "real", emb.role = "label"}) -> (tensor<f64>, tensor<2x1xf64>) {
    %0 = emb.get @w : tensor<3x1xf64>
    %1 = emb.dense %arg0, %0 : tensor<2x3xf64>, tensor<3x1xf64> -> tensor<2x1xf64>
    %2 = emb.loss mse %1, %arg1 : tensor<2x1xf64>, tensor<2x1xf64> -> tensor<f64>
    %3 = emb.loss_grad mse %1, %arg1 : tensor<2x1xf64>, tensor<2x1xf64> -> tensor<2x1xf64>
    %4 = emb.dense_grad_weight %arg0, %3 : tensor<2x3xf64>, tensor<2x1xf64> -> tensor<3x1xf64>
    emb.accumulate_grad @w, %4 : tensor<3x1xf64>
    return %2, %1 : tensor<f64>, tensor<2x1xf64>
  }
  func.func @update() {
    emb.update @w
    return
  }
}

// -----

// A dense op already marked (the precision is applied once).
module @marked attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @train_step(%arg0: tensor<2x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<2x1xf32> {emb.feature = "y", emb.label_kind = "real", emb.role = "label"}) -> (tensor<f32>, tensor<2x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op already carries emb.compute: the dense precision is applied once}}
    %1 = emb.dense %arg0, %0 {emb.compute = #emb<precision bf16>} : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
    %2 = emb.loss mse %1, %arg1 : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg1 : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<2x1xf32>
    %4 = emb.dense_grad_weight %arg0, %3 : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<3x1xf32>
    emb.accumulate_grad @w, %4 : tensor<3x1xf32>
    return %2, %1 : tensor<f32>, tensor<2x1xf32>
  }
  func.func @update() {
    emb.update @w
    return
  }
}

// -----

// emb.unscale_grads is for fp16 modules only.
module @bf16_scaling attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  func.func @update() {
    // expected-error @+1 {{'emb.unscale_grads' op loss scaling is for fp16 compute, but the module's training precision is bf16}}
    emb.unscale_grads initial(1024.0) growth(2.0) backoff(0.5) interval(10)
    return
  }
}

// -----

// It must come before every update (they would consume scaled gradients).
module @after_update attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @update() {
    emb.update @w
    // expected-error @+1 {{'emb.unscale_grads' op must come before every emb.update and emb.clip_grad_norm (they need the unscaled gradients), but follows emb.update}}
    emb.unscale_grads initial(1024.0) growth(2.0) backoff(0.5) interval(10)
    return
  }
}

// -----

module @twice attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  func.func @update() {
    emb.unscale_grads initial(1024.0) growth(2.0) backoff(0.5) interval(10)
    // expected-error @+1 {{'emb.unscale_grads' op appears twice in one function: the gradients would be unscaled twice}}
    emb.unscale_grads initial(1024.0) growth(2.0) backoff(0.5) interval(10)
    return
  }
}

// -----

module @bad_backoff attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  func.func @update() {
    // expected-error @+1 {{'emb.unscale_grads' op backoff must lie in (0, 1) so an overflow lowers the scale, got 1.5}}
    emb.unscale_grads initial(1024.0) growth(2.0) backoff(1.5) interval(10)
    return
  }
}

// -----

module @bad_initial attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  func.func @update() {
    // expected-error @+1 {{'emb.unscale_grads' op initial scale must be positive and finite, got 0}}
    emb.unscale_grads initial(0.0) growth(2.0) backoff(0.5) interval(10)
    return
  }
}

// -----

module @bad_interval attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  func.func @update() {
    // expected-error @+1 {{'emb.unscale_grads' op interval must be at least 1 good step, got 0}}
    emb.unscale_grads initial(1024.0) growth(2.0) backoff(0.5) interval(0)
    return
  }
}
