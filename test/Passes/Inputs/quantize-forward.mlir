// The models of test/Passes/quantize.mlir before -emb-autodiff; Inputs/quantize.mlir is their -emb-autodiff output.
module @quant attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @bt [10 x 4] bf16 init<kind = normal, std = 0.01> optimizer<kind = adagrad, lr = 0.1>
  emb.table @it [20 x 4] int8_rowwise init<kind = uniform, low = -0.1, high = 0.1> optimizer<kind = adagrad, lr = 0.1>
  emb.table @ht [30 x 4] f16 init<kind = normal, std = 0.01> optimizer<kind = adagrad, lr = 0.1>
  emb.table @ft [10 x 4] f32 init<kind = normal, std = 0.01> optimizer<kind = adagrad, lr = 0.1>
  emb.param @w : tensor<16x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 8 : i64, emb.vocab = 10 : i64},
                     %offs: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %neg: tensor<4x1xi64> {emb.feature = "n", emb.role = "negatives", emb.vocab = 10 : i64},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %a = emb.lookup @bt[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %b = emb.lookup @it[%ids, %offs] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.lookup @ht[%ids, %offs] max : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %n = emb.gather @bt[%neg] : tensor<4x1xi64> -> tensor<4x1x4xf32>
    %d = emb.lookup @ft[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e = emb.dot %d, %n : tensor<4x4xf32>, tensor<4x1x4xf32> -> tensor<4x1xf32>
    %cat = emb.concat %a, %b, %c, %d : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x16xf32>
    %w = emb.get @w : tensor<16x1xf32>
    %p0 = emb.dense %cat, %w : tensor<4x16xf32>, tensor<16x1xf32> -> tensor<4x1xf32>
    %p = emb.add %p0, %e : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @plain attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [10 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%ids: tensor<2xi64>, %offs: tensor<3xi64>, %y: tensor<2x1xf32>)
      -> (tensor<f32>, tensor<2x1xf32>) {
    %a = emb.lookup @t[%ids, %offs] sum : tensor<2xi64>, tensor<3xi64> -> tensor<2x1xf32>
    %l = emb.loss mse %a, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %l, %a : tensor<f32>, tensor<2x1xf32>
  }
}
