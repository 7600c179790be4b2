// The models of test/Passes/quantize-dense.mlir before -emb-autodiff; Inputs/quantize-dense.mlir is their -emb-autodiff output.
module @bf16 attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.01>, precision = bf16>} {
  emb.table @t0 [10 x 4] f32 init<kind = normal, std = 0.1> optimizer<kind = adagrad>
  emb.param @bw : tensor<3x4xf32> init<kind = xavier_uniform>
  emb.param @bb : tensor<4xf32> init<kind = zeros>
  emb.param @tw : tensor<5x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %r0: tensor<6xi64> {emb.feature = "c0", emb.role = "ids"},
                     %o0: tensor<5xi64> {emb.feature = "c0", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %bw = emb.get @bw : tensor<3x4xf32>
    %bb = emb.get @bb : tensor<4xf32>
    %z = emb.dense %x, %bw, %bb : tensor<4x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
    %bot = emb.activation relu %z : tensor<4x4xf32>
    %e0 = emb.lookup @t0[%r0, %o0] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %i = emb.interaction %bot, %e0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %c = emb.concat %bot, %i : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x5xf32>
    %tw = emb.get @tw : tensor<5x1xf32>
    %logit = emb.dense %c, %tw : tensor<4x5xf32>, tensor<5x1xf32> -> tensor<4x1xf32>
    %loss = emb.loss bce_with_logits %logit, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %loss, %logit : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @fp16 attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16, grad_clip_norm = 1.0>} {
  emb.table @t0 [10 x 4] f32 init<kind = normal, std = 0.1> optimizer<kind = adagrad>
  emb.param @cw : tensor<4x4xf32> init<kind = xavier_uniform>
  emb.param @cb : tensor<4xf32> init<kind = zeros>
  emb.param @tw : tensor<4x1xf32> init<kind = xavier_uniform>
  emb.param @tb : tensor<1xf32> init<kind = zeros>
  func.func @forward(%r0: tensor<6xi64> {emb.feature = "c0", emb.role = "ids"},
                     %o0: tensor<5xi64> {emb.feature = "c0", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e0 = emb.lookup @t0[%r0, %o0] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %cw = emb.get @cw : tensor<4x4xf32>
    %cb = emb.get @cb : tensor<4xf32>
    %x1 = emb.cross %e0, %e0, %cw, %cb : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>
    %tw = emb.get @tw : tensor<4x1xf32>
    %tb = emb.get @tb : tensor<1xf32>
    %l = emb.dense %x1, %tw, %tb : tensor<4x4xf32>, tensor<4x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %logit = emb.activation sigmoid %l : tensor<4x1xf32>
    %loss = emb.loss mse %logit, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %loss, %logit : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @fp32 attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %loss = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %loss, %p : tensor<f32>, tensor<4x1xf32>
  }
}
