// What -emb-distribute refuses: sharding it cannot honour (column_wise, a
// quantised table, max pooling of a row_wise table, an unpooled gather of a
// sharded table, gradient clipping with sharded tables, a sharded table
// inside a table batch) and a module that is already distributed.
// RUN: emb-opt %s -split-input-file -emb-autodiff -emb-distribute -verify-diagnostics

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  // expected-error @+1 {{sharding 'column_wise' of table 'c' is not supported; use table_wise or row_wise}}
  emb.table @c [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding column_wise
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @c[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.dot %e, %e : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  // expected-error @+1 {{table 'q' is stored as bf16: sharded tables are trained in f32}}
  emb.table @q [10 x 4] bf16 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @q[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.dot %e, %e : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    // expected-error @+1 {{max-pools row_wise table @r: a bag split across ranks has no partial max to combine; shard it table_wise}}
    %e = emb.lookup @r[%i, %o] max : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.dot %e, %e : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  emb.table @in [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @g [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  func.func @forward(%c: tensor<4xi64>, %o: tensor<5xi64>, %neg: tensor<4x3xi64>)
      -> (tensor<f32>, tensor<4x1xf32>) {
    %x = emb.lookup @in[%c, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %p = emb.lookup @g[%c, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    // expected-error @+1 {{reads sharded table @g: unpooled lookups of sharded tables are not supported}}
    %n = emb.gather @g[%neg] : tensor<4x3xi64> -> tensor<4x3x4xf32>
    %pos = emb.dot %x, %p : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %ns = emb.dot %x, %n : tensor<4x4xf32>, tensor<4x3x4xf32> -> tensor<4x3xf32>
    %l = emb.loss neg_sampling %pos, %ns : tensor<4x1xf32>, tensor<4x3xf32> -> tensor<f32>
    return %l, %pos : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, grad_clip_norm = 1.0>, emb.plan = #emb.plan<data_parallel = 2>} {
  // expected-error @+1 {{table 'k' is sharded, and gradient clipping needs the norm of every rank's rows}}
  emb.table @k [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @k[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.dot %e, %e : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
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
