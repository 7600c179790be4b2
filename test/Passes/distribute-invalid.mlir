// What -emb-distribute refuses: tables asking to be sharded (each rank keeps
// a replica of every table; sharded lookups are not supported yet) and a
// module that is already distributed.
// RUN: emb-opt %s -split-input-file -emb-autodiff -emb-distribute -verify-diagnostics

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  // expected-error @+1 {{sharding 'row_wise' of table 't' is not supported yet (data_parallel 2 keeps a replica of every table on each rank; remove 'sharding')}}
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.dot %e, %e : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Every sharded table is named, not just the first.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 4>} {
  // expected-error @+1 {{sharding 'table_wise' of table 'a' is not supported yet}}
  emb.table @a [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  emb.table @b [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  // expected-error @+1 {{sharding 'column_wise' of table 'c' is not supported yet}}
  emb.table @c [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding column_wise
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %ea = emb.lookup @a[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %eb = emb.lookup @b[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %ec = emb.lookup @c[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %s = emb.add %ea, %eb, %ec : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %d = emb.dot %s, %s : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Already distributed.
// expected-error @+1 {{the module is already distributed (it has emb.data_parallel or collectives)}}
module attributes {emb.data_parallel = 2 : i64, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.dot %e, %e : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}
