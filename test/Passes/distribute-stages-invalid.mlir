// What -emb-distribute refuses with pipeline_ranks: data parallelism at the
// same time, and a table with a sharding (a data-parallel layout); and what
// #emb.plan refuses: more pipeline ranks than stages.
// RUN: emb-opt %s -split-input-file -emb-autodiff -emb-pipeline -emb-distribute \
// RUN:   -verify-diagnostics

// expected-error @+1 {{-emb-distribute: data_parallel 2 with pipeline_ranks 2 is not supported yet}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<pipeline_stages = 2, pipeline_ranks = 2, data_parallel = 2>} {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%i: tensor<?xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 4 : i64},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%i, %o] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.dot %e, %e : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<pipeline_stages = 2, pipeline_ranks = 2>} {
  // expected-error @+1 {{table 't' has sharding 'row_wise', which splits a table across data-parallel ranks; with pipeline_ranks each table lives on the rank whose stages read it (remove 'sharding')}}
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
  func.func @forward(%i: tensor<?xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 4 : i64},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%i, %o] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.dot %e, %e : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// expected-error @+1 {{'pipeline_ranks' (3) must not exceed 'pipeline_stages' (2): each rank runs at least one stage}}
module attributes {emb.plan = #emb.plan<pipeline_stages = 2, pipeline_ranks = 3>} {
}
