// What -emb-quantize refuses: a module -emb-autodiff has not run on, a
// second run, a module already packed, an unknown tables= storage, global
// weight decay on a quantised table, and tables=int4 on a table of odd dim
// (int4 packs two elements per byte). And what -emb-to-plan refuses: a
// quantised table in a module -emb-quantize has not seen.
// RUN: emb-opt %s -split-input-file -emb-quantize -verify-diagnostics
// The first module, differentiated: an unknown storage in tables=, and
// -emb-to-plan without -emb-quantize.
// (Inputs/quantize-invalid.mlir is -emb-autodiff's output for it.)
// RUN: not emb-opt %S/Inputs/quantize-invalid.mlir -emb-quantize="tables=int2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTION
// RUN: not emb-opt %S/Inputs/quantize-invalid.mlir -emb-to-plan="emit-json=true cuda=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPASS

// RUN: sed -n '/^\/\/ int4 needs an even dim/,$p' %s \
// RUN:   | not emb-opt -emb-quantize="tables=int4" 2>&1 | FileCheck %s --check-prefix=ODD

// OPTION: error: -emb-quantize: tables=int2 is not a table storage (f32, f16, bf16, int8, int4)
// ODD: error: 'emb.table' op has an odd dim (5), which tables=int4 cannot store: int4_rowwise packs two elements per byte; use an even dim or int8
// NOPASS: error: 'emb.table' op is stored as bf16, but -emb-quantize has not run (the module has no emb.quantized): run it after -emb-autodiff

// Not differentiated: only @forward.
// expected-error @+1 {{-emb-quantize needs @train_step and @update: run -emb-autodiff first}}
module attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [10 x 1] bf16 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%ids: tensor<2xi64>, %offs: tensor<3xi64>, %y: tensor<2x1xf32>)
      -> (tensor<f32>, tensor<2x1xf32>) {
    %a = emb.lookup @t[%ids, %offs] sum : tensor<2xi64>, tensor<3xi64> -> tensor<2x1xf32>
    %l = emb.loss mse %a, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %l, %a : tensor<f32>, tensor<2x1xf32>
  }
}

// -----

// Quantised already (a second run).
// expected-error @+1 {{the module is already quantised (it has emb.quantized): -emb-quantize runs once}}
module attributes {emb.quantized = {rounding = "stochastic", tables = 0 : i64}, emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  func.func @train_step() {
    return
  }
  func.func @update() {
    return
  }
}

// -----

// Packed: the tables' own updates are gone.
// expected-error @+1 {{-emb-quantize runs before -emb-pack-params and -emb-fuse (the module is already packed or fused)}}
module attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @a [10 x 4] bf16 init<kind = zeros> optimizer<kind = sgd>
  emb.table @b [10 x 4] bf16 init<kind = zeros> optimizer<kind = sgd>
  emb.table_batch @tables_d4 [@a, @b]
  func.func @train_step() {
    return
  }
  func.func @update() {
    emb.update @tables_d4
    return
  }
}

// -----

// Global weight decay would requantise every row of the table every step.
module attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  // expected-error @+1 {{'emb.table' op is stored as int8_rowwise with global weight decay, which would requantise every row every step; use weight_decay_mode 'lazy' (touched rows only)}}
  emb.table @t [10 x 4] int8_rowwise init<kind = zeros> optimizer<kind = sgd, weight_decay = 0.01, weight_decay_mode = global>
  func.func @train_step() {
    return
  }
  func.func @update() {
    emb.update @t
    return
  }
}

// -----

// int4 needs an even dim: this f32 table of dim 5 is fine as it is (the
// first RUN line), but tables=int4 refuses it (ODD above).
module attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @odd [10 x 5] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step() {
    return
  }
  func.func @update() {
    emb.update @odd
    return
  }
}
