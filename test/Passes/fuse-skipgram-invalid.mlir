// What -emb-fuse refuses when the model asks for per-example updates
// (embedding_updates = hogwild or per_example): any step other than exactly
// a skip-gram step, tables outside one update, quantised tables, and
// accumulation. (Nothing is fused then: the error fails the pass.)
// The models are -emb-autodiff's output (the IR the pass sees), inline so
// that each expected error sits on its op (docs/testing.md).
// RUN: emb-opt %s -split-input-file -emb-pack-params -emb-fuse -verify-diagnostics
// Without -emb-pack-params each table has its own update (the last case).
// RUN: not emb-opt %s -split-input-file -emb-fuse 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPACK
// NOPACK: error: embedding_updates = per_example needs a skip-gram step {{.*}}: its tables must take one unscaled update: pack them into one table batch (-emb-pack-params does when they share dim, storage and optimizer)

// A dense model: no neg_sampling loss.
// expected-error @+1 {{embedding_updates = hogwild needs a skip-gram step (a neg_sampling loss of dot(centre, context) and dot(centre, negatives) and nothing else to train): the step's loss is not one neg_sampling loss}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, embedding_updates = hogwild>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%arg0: tensor<4x3xf32>, %arg1: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    %1 = emb.dense %arg0, %0 : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg1 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad mse %1, %arg1 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %4 = emb.dense_grad_weight %arg0, %3 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
    emb.accumulate_grad @w, %4 : tensor<3x1xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.update @w
    return
  }
}

// -----

// Skip-gram with a dense layer on the centre vector.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, embedding_updates = hogwild>} {
  emb.param @w : tensor<8x8xf32> init<kind = xavier_uniform>
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @train_step(%arg0: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg1: tensor<5xi64>, %arg2: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg3: tensor<5xi64>, %arg4: tensor<4x2xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.get @w : tensor<8x8xf32>
    %2 = emb.dense %0, %1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %3 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    // expected-error @+1 {{the centre and context are not lookups, or the negatives not a gather}}
    %4 = emb.dot %2, %3 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %5 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %6 = emb.dot %2, %5 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %7 = emb.loss neg_sampling %4, %6 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    %8:2 = emb.loss_grad neg_sampling %4, %6 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x2xf32>
    %dlhs, %drhs = emb.dot_grad %8#1, %2, %5 : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x2x8xf32>
    emb.accumulate_rows @out_vectors[%arg4], %drhs : tensor<4x2xi64>, tensor<4x2x8xf32>
    %dlhs_0, %drhs_1 = emb.dot_grad %8#0, %2, %3 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
    %9 = emb.add %dlhs, %dlhs_0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %10 = emb.lookup_grad @out_vectors[%arg2, %arg3] sum %drhs_1 : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @out_vectors[%arg2], %10 : tensor<?xi64>, tensor<?x8xf32>
    %11 = emb.dense_grad_input %9, %1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %12 = emb.dense_grad_weight %0, %9 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
    emb.accumulate_grad @w, %12 : tensor<8x8xf32>
    %13 = emb.lookup_grad @in_vectors[%arg0, %arg1] sum %11 : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @in_vectors[%arg0], %13 : tensor<?xi64>, tensor<?x8xf32>
    return %7, %4 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @out_vectors
    emb.coalesce_rows @in_vectors
    emb.update @w
    emb.update @out_vectors
    emb.update @in_vectors
    return
  }
}

// -----

// A quantised table.
// expected-error @+1 {{table 'out_vectors' must be f32 and unsharded (not quantised)}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, embedding_updates = hogwild>} {
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] int8_rowwise init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @train_step(%arg0: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg1: tensor<5xi64>, %arg2: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg3: tensor<5xi64>, %arg4: tensor<4x2xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    %6:2 = emb.loss_grad neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x2xf32>
    %dlhs, %drhs = emb.dot_grad %6#1, %0, %3 : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x2x8xf32>
    emb.accumulate_rows @out_vectors[%arg4], %drhs : tensor<4x2xi64>, tensor<4x2x8xf32>
    %dlhs_0, %drhs_1 = emb.dot_grad %6#0, %0, %1 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
    %7 = emb.add %dlhs, %dlhs_0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %8 = emb.lookup_grad @out_vectors[%arg2, %arg3] sum %drhs_1 : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @out_vectors[%arg2], %8 : tensor<?xi64>, tensor<?x8xf32>
    %9 = emb.lookup_grad @in_vectors[%arg0, %arg1] sum %7 : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @in_vectors[%arg0], %9 : tensor<?xi64>, tensor<?x8xf32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @out_vectors
    emb.coalesce_rows @in_vectors
    emb.update @out_vectors
    emb.update @in_vectors
    return
  }
}

// -----

// Gradient accumulation: the examples of several batches share one step.
// expected-error @+1 {{per-example updates take no gradient accumulation, clipping or 16-bit compute}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, grad_accumulation = 2, embedding_updates = per_example>} {
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @train_step(%arg0: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg1: tensor<5xi64>, %arg2: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg3: tensor<5xi64>, %arg4: tensor<4x2xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    %6:2 = emb.loss_grad neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x2xf32>
    %dlhs, %drhs = emb.dot_grad %6#1, %0, %3 : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x2x8xf32>
    emb.accumulate_rows @out_vectors[%arg4], %drhs : tensor<4x2xi64>, tensor<4x2x8xf32>
    %dlhs_0, %drhs_1 = emb.dot_grad %6#0, %0, %1 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
    %7 = emb.add %dlhs, %dlhs_0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %8 = emb.lookup_grad @out_vectors[%arg2, %arg3] sum %drhs_1 : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @out_vectors[%arg2], %8 : tensor<?xi64>, tensor<?x8xf32>
    %9 = emb.lookup_grad @in_vectors[%arg0, %arg1] sum %7 : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @in_vectors[%arg0], %9 : tensor<?xi64>, tensor<?x8xf32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @out_vectors
    emb.coalesce_rows @in_vectors
    emb.update @out_vectors
    emb.update @in_vectors
    return
  }
}

// -----

// A skip-gram step that -emb-fuse accepts once its tables are packed.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, embedding_updates = per_example>} {
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @train_step(%arg0: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg1: tensor<5xi64>, %arg2: tensor<?xi64> {emb.max_ids = 4 : i64}, %arg3: tensor<5xi64>, %arg4: tensor<4x2xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    %6:2 = emb.loss_grad neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x2xf32>
    %dlhs, %drhs = emb.dot_grad %6#1, %0, %3 : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x2x8xf32>
    emb.accumulate_rows @out_vectors[%arg4], %drhs : tensor<4x2xi64>, tensor<4x2x8xf32>
    %dlhs_0, %drhs_1 = emb.dot_grad %6#0, %0, %1 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
    %7 = emb.add %dlhs, %dlhs_0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %8 = emb.lookup_grad @out_vectors[%arg2, %arg3] sum %drhs_1 : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @out_vectors[%arg2], %8 : tensor<?xi64>, tensor<?x8xf32>
    %9 = emb.lookup_grad @in_vectors[%arg0, %arg1] sum %7 : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @in_vectors[%arg0], %9 : tensor<?xi64>, tensor<?x8xf32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @out_vectors
    emb.coalesce_rows @in_vectors
    emb.update @out_vectors
    emb.update @in_vectors
    return
  }
}
