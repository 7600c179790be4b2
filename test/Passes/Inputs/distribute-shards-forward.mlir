// The model of test/Passes/distribute-shards.mlir before -emb-autodiff; Inputs/distribute-shards.mlir is its -emb-autodiff output.
module @sharded attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 3>} {
  emb.table @big [30 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  emb.table @small [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  emb.table @rows [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  emb.table @whole [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%i: tensor<?xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 8 : i64},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %a = emb.lookup @big[%i, %o] max : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %b = emb.lookup @small[%i, %o] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.lookup @rows[%i, %o] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.lookup @whole[%i, %o] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %s = emb.add %a, %b, %c, %d : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %p = emb.dot %s, %s : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}
