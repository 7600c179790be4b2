// What -emb-fuse refuses when the model asks for per-example updates
// (embedding_updates = hogwild or per_example): any step other than exactly
// a skip-gram step, tables outside one update, quantised tables, and
// accumulation. (Nothing is fused then: the error fails the pass.)
// RUN: emb-opt %s -split-input-file -emb-autodiff -emb-pack-params -emb-fuse -verify-diagnostics
// Without -emb-pack-params each table has its own update (the last case).
// RUN: not emb-opt %s -split-input-file -emb-autodiff -emb-fuse 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPACK
// NOPACK: error: embedding_updates = per_example needs a skip-gram step {{.*}}: its tables must take one unscaled update: pack them into one table batch (-emb-pack-params does when they share dim, storage and optimizer)

// A dense model: no neg_sampling loss.
// expected-error @+1 {{embedding_updates = hogwild needs a skip-gram step (a neg_sampling loss of dot(centre, context) and dot(centre, negatives) and nothing else to train): the step's loss is not one neg_sampling loss}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, embedding_updates = hogwild>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %z, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %z : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Skip-gram with a dense layer on the centre vector.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, embedding_updates = hogwild>} {
  emb.param @w : tensor<8x8xf32> init<kind = xavier_uniform>
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @forward(%arg0: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg1: tensor<5xi64>, %arg2: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg3: tensor<5xi64>, %arg4: tensor<4x2xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %w = emb.get @w : tensor<8x8xf32>
    %0 = emb.dense %e, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    // expected-error @+1 {{the centre and context are not lookups, or the negatives not a gather}}
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// A quantised table.
// expected-error @+1 {{table 'out_vectors' must be f32 and unsharded (not quantised)}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, embedding_updates = hogwild>} {
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] int8_rowwise init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @forward(%arg0: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg1: tensor<5xi64>, %arg2: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg3: tensor<5xi64>, %arg4: tensor<4x2xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Gradient accumulation: the examples of several batches share one step.
// expected-error @+1 {{per-example updates take no gradient accumulation, clipping or 16-bit compute}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, grad_accumulation = 2, embedding_updates = per_example>} {
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @forward(%arg0: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg1: tensor<5xi64>, %arg2: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg3: tensor<5xi64>, %arg4: tensor<4x2xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// A skip-gram step that -emb-fuse accepts once its tables are packed.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, embedding_updates = per_example>} {
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @forward(%arg0: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg1: tensor<5xi64>, %arg2: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg3: tensor<5xi64>, %arg4: tensor<4x2xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
}
