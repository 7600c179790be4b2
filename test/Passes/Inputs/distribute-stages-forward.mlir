// The model of test/Passes/distribute-stages.mlir before -emb-autodiff; Inputs/distribute-stages.mlir is its -emb-autodiff output.
module @two_stages attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.1>>, emb.plan = #emb.plan<micro_batches = 2, pipeline_stages = 2, pipeline_ranks = 2>} {
  emb.table @ta [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @tb [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.param @w0 : tensor<16x32xf32> init<kind = xavier_uniform>
  emb.param @b0 : tensor<32xf32> init<kind = zeros>
  emb.param @w1 : tensor<40x1xf32> init<kind = xavier_uniform>
  emb.param @b1 : tensor<1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x16xf32> {emb.feature = "x", emb.role = "dense"},
                     %ia: tensor<?xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 8 : i64},
                     %oa: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %ib: tensor<?xi64> {emb.feature = "b", emb.role = "ids", emb.max_ids = 8 : i64},
                     %ob: tensor<5xi64> {emb.feature = "b", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %ea = emb.lookup @ta[%ia, %oa] sum {emb.stage = 0 : i64} : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %w0 = emb.get @w0 {emb.stage = 0 : i64} : tensor<16x32xf32>
    %b0 = emb.get @b0 {emb.stage = 0 : i64} : tensor<32xf32>
    %h = emb.dense %x, %w0, %b0 {emb.stage = 0 : i64} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
    %eb = emb.lookup @tb[%ib, %ob] sum {emb.stage = 0 : i64} : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %s = emb.add %ea, %eb {emb.stage = 0 : i64} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %r = emb.activation relu %h {emb.stage = 1 : i64} : tensor<4x32xf32>
    %eb2 = emb.lookup @tb[%ib, %ob] mean {emb.stage = 1 : i64} : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.concat %r, %s, %eb2 {emb.stage = 1 : i64} : tensor<4x32xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x40xf32>
    %w1 = emb.get @w1 {emb.stage = 1 : i64} : tensor<40x1xf32>
    %b1 = emb.get @b1 {emb.stage = 1 : i64} : tensor<1xf32>
    %p = emb.dense %c, %w1, %b1 {emb.stage = 1 : i64} : tensor<4x40xf32>, tensor<40x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %q = emb.add %p, %p {emb.stage = 1 : i64} : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %q, %y {emb.stage = 1 : i64} : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %q : tensor<f32>, tensor<4x1xf32>
  }
}
