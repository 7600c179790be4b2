// What -emb-distribute refuses with pipeline_ranks: data parallelism at the
// same time, and a table with a sharding (a data-parallel layout); and what
// #emb.plan refuses: more pipeline ranks than stages.
// The models are -emb-autodiff's output (the IR the pass sees), inline so
// that each expected error sits on its op (docs/testing.md).
// RUN: emb-opt %s -split-input-file -emb-pipeline -emb-distribute \
// RUN:   -verify-diagnostics

// expected-error @+1 {{-emb-distribute: data_parallel 2 with pipeline_ranks 2 is not supported yet}}
module attributes {emb.plan = #emb.plan<pipeline_stages = 2, data_parallel = 2, pipeline_ranks = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step(%arg0: tensor<?xi64> {emb.feature = "a", emb.max_ids = 4 : i64, emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @t[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %1 = emb.dot %0, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %dlhs, %drhs = emb.dot_grad %3, %0, %0 : tensor<4x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    %4 = emb.add %dlhs, %drhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %5 = emb.lookup_grad @t[%arg0, %arg1] sum %4 : tensor<?xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<?x4xf32>
    emb.accumulate_rows @t[%arg0], %5 : tensor<?xi64>, tensor<?x4xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @t
    return
  }
}

// -----

module attributes {emb.plan = #emb.plan<pipeline_stages = 2, pipeline_ranks = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{table 't' has sharding 'row_wise', which splits a table across data-parallel ranks; with pipeline_ranks each table lives on the rank whose stages read it (remove 'sharding')}}
  emb.table @t[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  func.func @train_step(%arg0: tensor<?xi64> {emb.feature = "a", emb.max_ids = 4 : i64, emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @t[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %1 = emb.dot %0, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %dlhs, %drhs = emb.dot_grad %3, %0, %0 : tensor<4x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    %4 = emb.add %dlhs, %drhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %5 = emb.lookup_grad @t[%arg0, %arg1] sum %4 : tensor<?xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<?x4xf32>
    emb.accumulate_rows @t[%arg0], %5 : tensor<?xi64>, tensor<?x4xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @t
    return
  }
}

// -----

// expected-error @+1 {{'pipeline_ranks' (3) must not exceed 'pipeline_stages' (2): each rank runs at least one stage}}
module attributes {emb.plan = #emb.plan<pipeline_stages = 2, pipeline_ranks = 3>} {
}
