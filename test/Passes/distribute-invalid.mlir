// What -emb-distribute refuses: sharding it cannot honour (column_wise, a
// quantised table, max pooling of a row_wise table, an unpooled gather of a
// sharded table, gradient clipping with sharded tables, a sharded table
// inside a table batch) and a module that is already distributed.
// The models are -emb-autodiff's output (the IR the pass sees), inline so
// that each expected error sits on its op (docs/testing.md).
// RUN: emb-opt %s -split-input-file -emb-distribute -verify-diagnostics

module attributes {emb.plan = #emb.plan<data_parallel = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{sharding 'column_wise' of table 'c' is not supported; use table_wise or row_wise}}
  emb.table @c[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding column_wise
  func.func @train_step(%arg0: tensor<4xi64> {emb.feature = "a", emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @c[%arg0, %arg1] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %1 = emb.dot %0, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %dlhs, %drhs = emb.dot_grad %3, %0, %0 : tensor<4x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    %4 = emb.add %dlhs, %drhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %5 = emb.lookup_grad @c[%arg0, %arg1] sum %4 : tensor<4xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<4x4xf32>
    emb.accumulate_rows @c[%arg0], %5 : tensor<4xi64>, tensor<4x4xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @c
    emb.update @c
    return
  }
}

// -----

module attributes {emb.plan = #emb.plan<data_parallel = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{table 'q' is stored as bf16: sharded tables are trained in f32}}
  emb.table @q[10 x 4] bf16 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  func.func @train_step(%arg0: tensor<4xi64> {emb.feature = "a", emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @q[%arg0, %arg1] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %1 = emb.dot %0, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %dlhs, %drhs = emb.dot_grad %3, %0, %0 : tensor<4x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    %4 = emb.add %dlhs, %drhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %5 = emb.lookup_grad @q[%arg0, %arg1] sum %4 : tensor<4xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<4x4xf32>
    emb.accumulate_rows @q[%arg0], %5 : tensor<4xi64>, tensor<4x4xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @q
    emb.update @q
    return
  }
}

// -----

module attributes {emb.plan = #emb.plan<data_parallel = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @r[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  func.func @train_step(%arg0: tensor<4xi64> {emb.feature = "a", emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    // expected-error @+1 {{max-pools row_wise table @r: a bag split across ranks has no partial max to combine; shard it table_wise}}
    %0 = emb.lookup @r[%arg0, %arg1] max : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %1 = emb.dot %0, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %dlhs, %drhs = emb.dot_grad %3, %0, %0 : tensor<4x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    %4 = emb.add %dlhs, %drhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %5 = emb.lookup_grad @r[%arg0, %arg1] max %4 : tensor<4xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<4x4xf32>
    emb.accumulate_rows @r[%arg0], %5 : tensor<4xi64>, tensor<4x4xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @r
    emb.update @r
    return
  }
}

// -----

module attributes {emb.plan = #emb.plan<data_parallel = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @in[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @g[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
  func.func @train_step(%arg0: tensor<4xi64>, %arg1: tensor<5xi64>, %arg2: tensor<4x3xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in[%arg0, %arg1] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %1 = emb.lookup @g[%arg0, %arg1] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    // expected-error @+1 {{reads sharded table @g: unpooled lookups of sharded tables are not supported}}
    %2 = emb.gather @g[%arg2] : tensor<4x3xi64> -> tensor<4x3x4xf32>
    %3 = emb.dot %0, %1 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %4 = emb.dot %0, %2 : tensor<4x4xf32>, tensor<4x3x4xf32> -> tensor<4x3xf32>
    %5 = emb.loss neg_sampling %3, %4 : tensor<4x1xf32>, tensor<4x3xf32> -> tensor<f32>
    %6:2 = emb.loss_grad neg_sampling %3, %4 : tensor<4x1xf32>, tensor<4x3xf32> -> tensor<4x1xf32>, tensor<4x3xf32>
    %dlhs, %drhs = emb.dot_grad %6#1, %0, %2 : tensor<4x3xf32>, tensor<4x4xf32>, tensor<4x3x4xf32>
    %dlhs_0, %drhs_1 = emb.dot_grad %6#0, %0, %1 : tensor<4x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    %7 = emb.add %dlhs, %dlhs_0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    emb.accumulate_rows @g[%arg2], %drhs : tensor<4x3xi64>, tensor<4x3x4xf32>
    %8 = emb.lookup_grad @g[%arg0, %arg1] sum %drhs_1 : tensor<4xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<4x4xf32>
    emb.accumulate_rows @g[%arg0], %8 : tensor<4xi64>, tensor<4x4xf32>
    %9 = emb.lookup_grad @in[%arg0, %arg1] sum %7 : tensor<4xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<4x4xf32>
    emb.accumulate_rows @in[%arg0], %9 : tensor<4xi64>, tensor<4x4xf32>
    return %5, %3 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @g
    emb.coalesce_rows @in
    emb.update @g
    emb.update @in
    return
  }
}

// -----

module attributes {emb.plan = #emb.plan<data_parallel = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, grad_clip_norm = 1.0>} {
  // expected-error @+1 {{table 'k' is sharded, and gradient clipping needs the norm of every rank's rows}}
  emb.table @k[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  func.func @train_step(%arg0: tensor<4xi64> {emb.feature = "a", emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @k[%arg0, %arg1] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %1 = emb.dot %0, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %dlhs, %drhs = emb.dot_grad %3, %0, %0 : tensor<4x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    %4 = emb.add %dlhs, %drhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %5 = emb.lookup_grad @k[%arg0, %arg1] sum %4 : tensor<4xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<4x4xf32>
    emb.accumulate_rows @k[%arg0], %5 : tensor<4xi64>, tensor<4x4xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @k
    %0 = emb.clip_grad_norm max_norm(1.000000e+00) : tensor<f32>
    emb.update @k scale %0 : tensor<f32>
    return
  }
}

// -----

// Already distributed.
// expected-error @+1 {{the module is already distributed (it has emb.data_parallel or collectives)}}
module attributes {emb.data_parallel = 2 : i64, emb.plan = #emb.plan<data_parallel = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step(%arg0: tensor<4xi64> {emb.feature = "a", emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @t[%arg0, %arg1] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %1 = emb.dot %0, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %dlhs, %drhs = emb.dot_grad %3, %0, %0 : tensor<4x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    %4 = emb.add %dlhs, %drhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %5 = emb.lookup_grad @t[%arg0, %arg1] sum %4 : tensor<4xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<4x4xf32>
    emb.accumulate_rows @t[%arg0], %5 : tensor<4xi64>, tensor<4x4xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @t
    return
  }
}
