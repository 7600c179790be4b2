// The models of test/Passes/remat.mlir before -emb-autodiff; Inputs/remat.mlir is their -emb-autodiff output.
module @chain attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w1 : tensor<3x4xf32> init<kind = xavier_uniform>
  emb.param @b1 : tensor<4xf32> init<kind = zeros>
  emb.param @w2 : tensor<4x4xf32> init<kind = xavier_uniform>
  emb.param @w3 : tensor<4x4xf32> init<kind = xavier_uniform>
  emb.param @w4 : tensor<4x4xf32> init<kind = xavier_uniform>
  emb.param @w5 : tensor<4x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<8x3xf32>, %y: tensor<8x1xf32>) -> (tensor<f32>, tensor<8x1xf32>) {
    %w1 = emb.get @w1 : tensor<3x4xf32>
    %b1 = emb.get @b1 : tensor<4xf32>
    %z1 = emb.dense %x, %w1, %b1 : tensor<8x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
    %a1 = emb.activation relu %z1 : tensor<8x4xf32>
    %w2 = emb.get @w2 : tensor<4x4xf32>
    %z2 = emb.dense %a1, %w2 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %a2 = emb.activation relu %z2 : tensor<8x4xf32>
    %w3 = emb.get @w3 : tensor<4x4xf32>
    %z3 = emb.dense %a2, %w3 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %a3 = emb.activation relu %z3 : tensor<8x4xf32>
    %w4 = emb.get @w4 : tensor<4x4xf32>
    %z4 = emb.dense %a3, %w4 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %a4 = emb.activation relu %z4 : tensor<8x4xf32>
    %w5 = emb.get @w5 : tensor<4x1xf32>
    %p = emb.dense %a4, %w5 : tensor<8x4xf32>, tensor<4x1xf32> -> tensor<8x1xf32>
    %l = emb.loss mse %p, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

module @gelu attributes {emb.plan = #emb.plan<remat = all>, emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w1 : tensor<3x8xf32> init<kind = xavier_uniform>
  emb.param @w2 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> (tensor<f32>, tensor<2x1xf32>) {
    %w1 = emb.get @w1 : tensor<3x8xf32>
    %z = emb.dense %x, %w1 : tensor<2x3xf32>, tensor<3x8xf32> -> tensor<2x8xf32>
    %a = emb.activation gelu %z : tensor<2x8xf32>
    %w2 = emb.get @w2 : tensor<8x1xf32>
    %p = emb.dense %a, %w2 : tensor<2x8xf32>, tensor<8x1xf32> -> tensor<2x1xf32>
    %l = emb.loss mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<2x1xf32>
  }
}
