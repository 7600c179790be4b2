// What -emb-to-plan refuses: a module -emb-autodiff has not run on, what the
// CPU runtime cannot train (quantised tables, non-f32 parameters and values,
// reduced precision), ids without a size bound, and inputs or ops the plan
// cannot bind or lower.
// RUN: emb-opt %s -split-input-file -emb-autodiff -emb-to-plan -o /dev/null -verify-diagnostics

// Without -emb-autodiff there is no @train_step or @update. These cases need
// a run without -emb-autodiff, so they read one-line modules from stdin.
// RUN: echo 'module { func.func @forward() { return } }' \
// RUN:   | not emb-opt -emb-to-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-AUTODIFF
// RUN: echo 'module { func.func @train_step() { return } }' \
// RUN:   | not emb-opt -emb-to-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-AUTODIFF
// NO-AUTODIFF: error: -emb-to-plan needs @train_step and @update: run -emb-autodiff first

// A plan output that cannot be opened.
// RUN: echo 'module attributes {emb.training = #emb.training<batch_size = 1, dense_optimizer = <kind = sgd>>} { func.func @forward(%%x: tensor<1x1xf32> {emb.feature = "x", emb.role = "dense"}, %%y: tensor<1x1xf32> {emb.feature = "y", emb.role = "label"}) -> tensor<f32> { %%l = emb.loss mse %%x, %%y : tensor<1x1xf32>, tensor<1x1xf32> -> tensor<f32> return %%l : tensor<f32> } }' \
// RUN:   | not emb-opt -emb-autodiff -emb-to-plan=output=%t.missing-dir/x.plan -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: error: cannot open output file '{{.*}}x.plan'

// expected-error @+1 {{the module has no emb.training attribute}}
module {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// bf16 compute needs -emb-quantize to mark the products (PlanPrecision.cpp).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, precision = bf16>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op computes in fp32 but the module's training precision is bf16: run -emb-quantize}}
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// fp16 compute needs -emb-quantize to mark the products (PlanPrecision.cpp).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, precision = fp16>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    // expected-error @+1 {{'emb.dense' op computes in fp32 but the module's training precision is fp16: run -emb-quantize}}
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Quantised storage needs -emb-quantize (which marks the lookups and updates).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{'emb.table' op is stored as int8_rowwise, but -emb-quantize has not run (the module has no emb.quantized): run it after -emb-autodiff}}
  emb.table @t [10 x 1] int8_rowwise init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "s", emb.role = "ids", emb.max_ids = 4 : i64},
                     %offs: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %e, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %e : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Quantised, but a lookup of the bf16 table is not marked (hand-written IR).
module attributes {emb.quantized = {rounding = "stochastic", tables = 1 : i64}, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [10 x 1] bf16 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "s", emb.role = "ids", emb.max_ids = 4 : i64},
                     %offs: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    // expected-error @+1 {{'emb.lookup' op reads table @t stored as bf16 but is not marked emb.dequantize = #emb<storage bf16>: run -emb-quantize}}
    %e = emb.lookup @t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %e, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %e : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Dynamic ids need an emb.max_ids bound: the sparse gradient of the table
// has one row per id.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [10 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "s", emb.role = "ids"},
                     %offs: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    // expected-error @+1 {{'emb.accumulate_rows' op cannot bound the number of ids in 'tensor<?xi64>': dynamic ids need an emb.max_ids bound on their argument}}
    %e = emb.lookup @t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %e, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %e : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// The same through emb.hash: the bound is that of the raw ids.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [10 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "s", emb.role = "ids"},
                     %offs: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %h = emb.hash %ids buckets(10) seed(0) : tensor<?xi64>
    // expected-error @+1 {{'emb.accumulate_rows' op cannot bound the number of ids in 'tensor<?xi64>': dynamic ids need an emb.max_ids bound on their argument}}
    %e = emb.lookup @t[%h, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %e, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %e : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Every argument is bound to data by its emb.feature and emb.role.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  // expected-error @+1 {{'func.func' op argument 1 has no emb.feature / emb.role: the plan cannot bind it to data}}
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// ... and the role is one the plan knows.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  // expected-error @+1 {{'func.func' op argument 1 has emb.role 'target', not one of dense, ids, offsets, weights, label or negatives}}
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "target"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// The CPU runtime trains f32 parameters and computes in f32 (or f64).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{'emb.param' op has element type 'bf16'; the CPU runtime trains f32 parameters}}
  emb.param @w : tensor<3x1xbf16> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xbf16> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xbf16> {emb.feature = "y", emb.role = "label"}) -> (tensor<bf16>, tensor<4x1xbf16>) {
    %w = emb.get @w : tensor<3x1xbf16>
    %p = emb.dense %x, %w : tensor<4x3xbf16>, tensor<3x1xbf16> -> tensor<4x1xbf16>
    %l = emb.loss mse %p, %y : tensor<4x1xbf16>, tensor<4x1xbf16> -> tensor<bf16>
    return %l, %p : tensor<bf16>, tensor<4x1xbf16>
  }
}

// -----

module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [10 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  // expected-error @+1 {{'func.func' op element type 'f16' has no CPU kernels (f32, f64 and i64 do)}}
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "s", emb.role = "ids", emb.max_ids = 4 : i64},
                     %offs: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"},
                     %y: tensor<4x1xf16> {emb.feature = "y", emb.role = "label"}) -> (tensor<f16>, tensor<4x1xf16>) {
    %e = emb.lookup @t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf16>
    %l = emb.loss bce_with_logits %e, %y : tensor<4x1xf16>, tensor<4x1xf16> -> tensor<f16>
    return %l, %e : tensor<f16>, tensor<4x1xf16>
  }
}

// -----

// An op outside the plan's kernel catalogue (here off the gradient path, so
// -emb-autodiff accepts it).
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func private @postprocess(tensor<4x1xf32>) -> tensor<4x1xf32>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    // expected-error @+1 {{'func.call' op has no kernel in the plan's catalogue}}
    %q = func.call @postprocess(%p) : (tensor<4x1xf32>) -> tensor<4x1xf32>
    return %l, %q : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// A plan for 2 ranks whose module has no collectives (-emb-distribute did not
// run) would train each rank on its own.
// expected-error @+1 {{the plan asks for data_parallel 2 but the module has no collectives: run -emb-distribute}}
module @undistributed attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  emb.param @w : tensor<3x1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %p = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}
