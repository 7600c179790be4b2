// What -emb-to-plan refuses: a module -emb-autodiff has not run on, what the
// CPU runtime cannot train (quantised tables, non-f32 parameters and values,
// reduced precision), ids without a size bound, and inputs or ops the plan
// cannot bind or lower.
// The models are -emb-autodiff's output (the IR the pass sees), inline so
// that each expected error sits on its op (docs/testing.md).
// RUN: emb-opt %s -split-input-file -emb-to-plan -o /dev/null -verify-diagnostics

// Without -emb-autodiff there is no @train_step or @update: one-line modules
// from stdin.
// RUN: echo 'module { func.func @forward() { return } }' \
// RUN:   | not emb-opt -emb-to-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-AUTODIFF
// RUN: echo 'module { func.func @train_step() { return } }' \
// RUN:   | not emb-opt -emb-to-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-AUTODIFF
// NO-AUTODIFF: error: -emb-to-plan needs @train_step and @update: run -emb-autodiff first

// A plan output that cannot be opened.
// RUN: sed '1,/^\/\/ -----/d' %S/Inputs/to-plan.mlir \
// RUN:   | not emb-opt -emb-to-plan=output=%t.missing-dir/x.plan -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: error: cannot open output file '{{.*}}x.plan'

// expected-error @+1 {{the module has no emb.training attribute}}
module {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%arg0: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
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

// bf16 compute needs -emb-quantize to mark the products (PlanPrecision.cpp).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%arg0: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op computes in fp32 but the module's training precision is bf16: run -emb-quantize}}
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

// fp16 compute needs -emb-quantize to mark the products (PlanPrecision.cpp).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%arg0: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op computes in fp32 but the module's training precision is fp16: run -emb-quantize}}
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

// Quantised storage needs -emb-quantize (which marks the lookups and updates).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{'emb.table' op is stored as int8_rowwise, but -emb-quantize has not run (the module has no emb.quantized): run it after -emb-autodiff}}
  emb.table @t[10 x 1] int8_rowwise init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step(%arg0: tensor<?xi64> {emb.feature = "s", emb.max_ids = 4 : i64, emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @t[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %1 = emb.loss bce_with_logits %0, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %2 = emb.loss_grad bce_with_logits %0, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %3 = emb.lookup_grad @t[%arg0, %arg1] sum %2 : tensor<?xi64>, tensor<5xi64>, tensor<4x1xf32> -> tensor<?x1xf32>
    emb.accumulate_rows @t[%arg0], %3 : tensor<?xi64>, tensor<?x1xf32>
    return %1, %0 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @t
    return
  }
}

// -----

// Quantised, but a lookup of the bf16 table is not marked (hand-written IR).
module attributes {emb.quantized = {rounding = "stochastic", tables = 1 : i64}, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t[10 x 1] bf16 init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step(%arg0: tensor<?xi64> {emb.feature = "s", emb.max_ids = 4 : i64, emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    // expected-error @+1 {{'emb.lookup' op reads table @t stored as bf16 but is not marked emb.dequantize = #emb<storage bf16>: run -emb-quantize}}
    %0 = emb.lookup @t[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %1 = emb.loss bce_with_logits %0, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %2 = emb.loss_grad bce_with_logits %0, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %3 = emb.lookup_grad @t[%arg0, %arg1] sum %2 : tensor<?xi64>, tensor<5xi64>, tensor<4x1xf32> -> tensor<?x1xf32>
    emb.accumulate_rows @t[%arg0], %3 : tensor<?xi64>, tensor<?x1xf32>
    return %1, %0 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @t
    return
  }
}

// -----

// Dynamic ids need an emb.max_ids bound: the sparse gradient of the table
// has one row per id.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t[10 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step(%arg0: tensor<?xi64> {emb.feature = "s", emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @t[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %1 = emb.loss bce_with_logits %0, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %2 = emb.loss_grad bce_with_logits %0, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %3 = emb.lookup_grad @t[%arg0, %arg1] sum %2 : tensor<?xi64>, tensor<5xi64>, tensor<4x1xf32> -> tensor<?x1xf32>
    // expected-error @+1 {{'emb.accumulate_rows' op cannot bound the number of ids in 'tensor<?xi64>': dynamic ids need an emb.max_ids bound on their argument}}
    emb.accumulate_rows @t[%arg0], %3 : tensor<?xi64>, tensor<?x1xf32>
    return %1, %0 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @t
    return
  }
}

// -----

// The same through emb.hash: the bound is that of the raw ids.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t[10 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step(%arg0: tensor<?xi64> {emb.feature = "s", emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"}, %arg2: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.hash %arg0 buckets(10) seed(0) : tensor<?xi64>
    %1 = emb.lookup @t[%0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %2 = emb.loss bce_with_logits %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %3 = emb.loss_grad bce_with_logits %1, %arg2 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %4 = emb.lookup_grad @t[%0, %arg1] sum %3 : tensor<?xi64>, tensor<5xi64>, tensor<4x1xf32> -> tensor<?x1xf32>
    // expected-error @+1 {{'emb.accumulate_rows' op cannot bound the number of ids in 'tensor<?xi64>': dynamic ids need an emb.max_ids bound on their argument}}
    emb.accumulate_rows @t[%0], %4 : tensor<?xi64>, tensor<?x1xf32>
    return %2, %1 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @t
    return
  }
}

// -----

// Every argument is bound to data by its emb.feature and emb.role.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  // expected-error @+1 {{'func.func' op argument 1 has no emb.feature / emb.role: the plan cannot bind it to data}}
  func.func @train_step(%arg0: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xf32> {emb.feature = "y"}) -> (tensor<f32>, tensor<4x1xf32>) {
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

// ... and the role is one the plan knows.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  // expected-error @+1 {{'func.func' op argument 1 has emb.role 'target', not one of dense, ids, offsets, weights, label or negatives}}
  func.func @train_step(%arg0: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xf32> {emb.feature = "y", emb.role = "target"}) -> (tensor<f32>, tensor<4x1xf32>) {
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

// The CPU runtime trains f32 parameters and computes in f32 (or f64).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{'emb.param' op has element type 'bf16'; the CPU runtime trains f32 parameters}}
  emb.param @w : tensor<3x1xbf16> init<kind = xavier_uniform>
  func.func @train_step(%arg0: tensor<4x3xbf16> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xbf16> {emb.feature = "y", emb.role = "label"}) -> (tensor<bf16>, tensor<4x1xbf16>) {
    %0 = emb.get @w : tensor<3x1xbf16>
    %1 = emb.dense %arg0, %0 : tensor<4x3xbf16>, tensor<3x1xbf16> -> tensor<4x1xbf16>
    %2 = emb.loss mse %1, %arg1 : tensor<4x1xbf16>, tensor<4x1xbf16> -> tensor<bf16>
    %3 = emb.loss_grad mse %1, %arg1 : tensor<4x1xbf16>, tensor<4x1xbf16> -> tensor<4x1xbf16>
    %4 = emb.dense_grad_weight %arg0, %3 : tensor<4x3xbf16>, tensor<4x1xbf16> -> tensor<3x1xbf16>
    emb.accumulate_grad @w, %4 : tensor<3x1xbf16>
    return %2, %1 : tensor<bf16>, tensor<4x1xbf16>
  }
  func.func @update() {
    emb.update @w
    return
  }
}

// -----

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t[10 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  // expected-error @+1 {{'func.func' op element type 'f16' has no CPU kernels (f32, f64 and i64 do)}}
  func.func @train_step(%arg0: tensor<?xi64> {emb.feature = "s", emb.max_ids = 4 : i64, emb.role = "ids"}, %arg1: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"}, %arg2: tensor<4x1xf16> {emb.feature = "y", emb.role = "label"}) -> (tensor<f16>, tensor<4x1xf16>) {
    %0 = emb.lookup @t[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf16>
    %1 = emb.loss bce_with_logits %0, %arg2 : tensor<4x1xf16>, tensor<4x1xf16> -> tensor<f16>
    %2 = emb.loss_grad bce_with_logits %0, %arg2 : tensor<4x1xf16>, tensor<4x1xf16> -> tensor<4x1xf16>
    %3 = emb.lookup_grad @t[%arg0, %arg1] sum %2 : tensor<?xi64>, tensor<5xi64>, tensor<4x1xf16> -> tensor<?x1xf16>
    emb.accumulate_rows @t[%arg0], %3 : tensor<?xi64>, tensor<?x1xf16>
    return %1, %0 : tensor<f16>, tensor<4x1xf16>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @t
    return
  }
}

// -----

// An op outside the plan's kernel catalogue (here off the gradient path, so
// -emb-autodiff accepts it).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func private @postprocess(tensor<4x1xf32>) -> tensor<4x1xf32>
  func.func @train_step(%arg0: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    %1 = emb.dense %arg0, %0 : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %2 = emb.loss mse %1, %arg1 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    // expected-error @+1 {{'func.call' op has no kernel in the plan's catalogue}}
    %3 = call @postprocess(%1) : (tensor<4x1xf32>) -> tensor<4x1xf32>
    %4 = emb.loss_grad mse %1, %arg1 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %5 = emb.dense_grad_weight %arg0, %4 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
    emb.accumulate_grad @w, %5 : tensor<3x1xf32>
    return %2, %3 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.update @w
    return
  }
}

// -----

// A plan for 2 ranks whose module has no collectives (-emb-distribute did not
// run) would train each rank on its own.
// expected-error @+1 {{the plan asks for data_parallel 2 but the module has no collectives: run -emb-distribute}}
module @undistributed attributes {emb.plan = #emb.plan<data_parallel = 2>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @train_step(%arg0: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
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
