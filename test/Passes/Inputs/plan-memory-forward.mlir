// The models of test/Passes/plan-memory.mlir before -emb-autodiff; Inputs/plan-memory.mlir is their -emb-autodiff output.
module @chain attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w0 : tensor<16x32xf32> init<kind = xavier_uniform>
  emb.param @w1 : tensor<32x32xf32> init<kind = xavier_uniform>
  emb.param @w2 : tensor<32x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<8x16xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<8x1xf32>) {
    %w0 = emb.get @w0 : tensor<16x32xf32>
    %h0 = emb.dense %x, %w0 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
    %a0 = emb.activation relu %h0 : tensor<8x32xf32>
    %w1 = emb.get @w1 : tensor<32x32xf32>
    %h1 = emb.dense %a0, %w1 : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
    %a1 = emb.activation relu %h1 : tensor<8x32xf32>
    %w2 = emb.get @w2 : tensor<32x1xf32>
    %p = emb.dense %a1, %w2 : tensor<8x32xf32>, tensor<32x1xf32> -> tensor<8x1xf32>
    %l = emb.loss mse %p, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

module @packed attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.1>>} {
  emb.table @ta [10 x 4] f32 init<kind = uniform, low = -0.1, high = 0.1> optimizer<kind = adagrad, lr = 0.1>
  emb.table @tb [20 x 4] f32 init<kind = uniform, low = -0.1, high = 0.1> optimizer<kind = adagrad, lr = 0.1>
  emb.param @w : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ia: tensor<4xi64> {emb.feature = "a", emb.role = "ids", emb.vocab = 10 : i64},
                     %oa: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %ib: tensor<4xi64> {emb.feature = "b", emb.role = "ids", emb.vocab = 20 : i64},
                     %ob: tensor<5xi64> {emb.feature = "b", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %a = emb.lookup @ta[%ia, %oa] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %b = emb.lookup @tb[%ib, %ob] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.concat %a, %b : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x8xf32>
    %w = emb.get @w : tensor<8x1xf32>
    %p = emb.dense %c, %w : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}
