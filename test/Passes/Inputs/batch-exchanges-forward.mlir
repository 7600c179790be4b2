// The model of test/Passes/batch-exchanges.mlir before -emb-autodiff; Inputs/batch-exchanges.mlir is its -emb-autodiff output.
module @towers attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  emb.table @a [30 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  emb.table @b [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  emb.table @c [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  func.func @forward(%i: tensor<?xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 8 : i64},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %w: tensor<?xf32> {emb.feature = "a", emb.role = "weights", emb.max_ids = 8 : i64},
                     %r: tensor<?xi64> {emb.feature = "r", emb.role = "ids", emb.max_ids = 8 : i64},
                     %ro: tensor<5xi64> {emb.feature = "r", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %a = emb.lookup @a[%i, %o weights %w] sum : tensor<?xi64>, tensor<5xi64>, tensor<?xf32> -> tensor<4x4xf32>
    %h = emb.hash %r buckets(10) seed(7) : tensor<?xi64>
    %b = emb.lookup @b[%h, %ro] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %t = emb.add %a, %b : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %q = emb.dot %t, %t : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %c = emb.lookup @c[%i, %o] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %p = emb.dot %c, %c : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %s = emb.add %p, %q : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %s, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %s : tensor<f32>, tensor<4x1xf32>
  }
}
