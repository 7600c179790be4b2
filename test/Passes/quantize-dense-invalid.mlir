// What the dense half of -emb-quantize refuses, and what emb.unscale_grads'
// verifier refuses.
// RUN: emb-opt %s -split-input-file -verify-diagnostics -emb-autodiff -emb-quantize

// bf16 compute keeps f32 master weights: an f64 parameter has none.
module @f64_param attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  // expected-error @+1 {{'emb.param' op has element type 'f64'; bf16 compute keeps f32 master weights, so parameters must be f32}}
  emb.param @w : tensor<3x1xf64> init<kind = zeros>
  func.func @forward(%x: tensor<2x3xf64> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<2x1xf64> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f64>, tensor<2x1xf64>) {
    %w = emb.get @w : tensor<3x1xf64>
    %p = emb.dense %x, %w : tensor<2x3xf64>, tensor<3x1xf64> -> tensor<2x1xf64>
    %loss = emb.loss mse %p, %y : tensor<2x1xf64>, tensor<2x1xf64> -> tensor<f64>
    return %loss, %p : tensor<f64>, tensor<2x1xf64>
  }
}

// -----

// A dense op already marked (the precision is applied once).
module @marked attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<2x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<2x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<2x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op already carries emb.compute: the dense precision is applied once}}
    %p = emb.dense %x, %w {emb.compute = #emb<precision bf16>} : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
    %loss = emb.loss mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %loss, %p : tensor<f32>, tensor<2x1xf32>
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
