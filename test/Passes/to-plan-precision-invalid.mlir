// -emb-to-plan refuses a module whose dense ops, loss gradient or update
// disagree with its training precision (PlanPrecision.cpp): a bf16/fp16
// model must go through -emb-quantize, and an fp32 one must not compute in
// half precision.
// RUN: emb-opt %s -split-input-file -verify-diagnostics -emb-autodiff -emb-to-plan -o /dev/null

module @unquantized attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<2x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<2x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<2x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op computes in fp32 but the module's training precision is bf16: run -emb-quantize}}
    %p = emb.dense %x, %w : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
    %loss = emb.loss mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %loss, %p : tensor<f32>, tensor<2x1xf32>
  }
}

// -----

module @half_in_fp32 attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<2x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<2x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<2x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op computes in fp16 but the module's training precision is fp32}}
    %p = emb.dense %x, %w {emb.compute = #emb<precision fp16>} : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
    %loss = emb.loss mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %loss, %p : tensor<f32>, tensor<2x1xf32>
  }
}

// -----

// An fp16 model without products (nothing to mark) still needs loss
// scaling: its gradients are fp16-sized too on the GPU.
// expected-error @+1 {{precision fp16 needs dynamic loss scaling (an emb.loss_grad with emb.loss_scaled and emb.unscale_grads in @update): run -emb-quantize}}
module @unscaled attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  emb.param @b : tensor<1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<2x1xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<2x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<2x1xf32>) {
    %b = emb.get @b : tensor<1xf32>
    %p = emb.add %x bias %b : tensor<2x1xf32> bias tensor<1xf32> -> tensor<2x1xf32>
    %loss = emb.loss mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %loss, %p : tensor<f32>, tensor<2x1xf32>
  }
}

// -----

module @compute_on_add attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<2x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<2x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<2x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w {emb.compute = #emb<precision bf16>} : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
    // expected-error @+1 {{'emb.activation' op carries emb.compute but has no products to compute in another precision}}
    %a = emb.activation sigmoid %p {emb.compute = #emb<precision bf16>} : tensor<2x1xf32>
    %loss = emb.loss mse %a, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %loss, %a : tensor<f32>, tensor<2x1xf32>
  }
}
