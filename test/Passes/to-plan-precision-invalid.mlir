// -emb-to-plan refuses a module whose dense ops, loss gradient or update
// disagree with its training precision (PlanPrecision.cpp): a bf16/fp16
// model must go through -emb-quantize, and an fp32 one must not compute in
// half precision.
// The models are -emb-autodiff's output (the IR the pass sees), inline so
// that each expected error sits on its op (docs/testing.md).
// RUN: emb-opt %s -split-input-file -verify-diagnostics -emb-to-plan -o /dev/null

module @unquantized attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @train_step(%arg0: tensor<2x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<2x1xf32> {emb.feature = "y", emb.label_kind = "real", emb.role = "label"}) -> (tensor<f32>, tensor<2x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op computes in fp32 but the module's training precision is bf16: run -emb-quantize}}
    %1 = emb.dense %arg0, %0 : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
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

module @half_in_fp32 attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @train_step(%arg0: tensor<2x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<2x1xf32> {emb.feature = "y", emb.label_kind = "real", emb.role = "label"}) -> (tensor<f32>, tensor<2x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op computes in fp16 but the module's training precision is fp32}}
    %1 = emb.dense %arg0, %0 {emb.compute = #emb<precision fp16>} : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
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

// An fp16 model without products (nothing to mark) still needs loss
// scaling: its gradients are fp16-sized too on the GPU.
// expected-error @+1 {{precision fp16 needs dynamic loss scaling (an emb.loss_grad with emb.loss_scaled and emb.unscale_grads in @update): run -emb-quantize}}
module @unscaled attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  emb.param @b : tensor<1xf32> init<kind = zeros>
  func.func @train_step(%arg0: tensor<2x1xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<2x1xf32> {emb.feature = "y", emb.label_kind = "real", emb.role = "label"}) -> (tensor<f32>, tensor<2x1xf32>) {
    %0 = emb.get @b : tensor<1xf32>
    %1 = emb.add %arg0 bias %0 : tensor<2x1xf32> bias tensor<1xf32> -> tensor<2x1xf32>
    %2 = emb.loss mse %1, %arg1 : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg1 : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<2x1xf32>
    %4 = emb.bias_grad %3 : tensor<2x1xf32> -> tensor<1xf32>
    emb.accumulate_grad @b, %4 : tensor<1xf32>
    return %2, %1 : tensor<f32>, tensor<2x1xf32>
  }
  func.func @update() {
    emb.update @b
    return
  }
}

// -----

module @compute_on_add attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @train_step(%arg0: tensor<2x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<2x1xf32> {emb.feature = "y", emb.label_kind = "real", emb.role = "label"}) -> (tensor<f32>, tensor<2x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    %1 = emb.dense %arg0, %0 {emb.compute = #emb<precision bf16>} : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
    // expected-error @+1 {{'emb.activation' op carries emb.compute but has no products to compute in another precision}}
    %2 = emb.activation sigmoid %1 {emb.compute = #emb<precision bf16>} : tensor<2x1xf32>
    %3 = emb.loss mse %2, %arg1 : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    %4 = emb.loss_grad mse %2, %arg1 : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<2x1xf32>
    %5 = emb.activation_grad sigmoid %4, %1 : tensor<2x1xf32>
    %6 = emb.dense_grad_weight %arg0, %5 : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<3x1xf32>
    emb.accumulate_grad @w, %6 : tensor<3x1xf32>
    return %3, %2 : tensor<f32>, tensor<2x1xf32>
  }
  func.func @update() {
    emb.update @w
    return
  }
}
