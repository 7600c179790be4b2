// What -emb-remat refuses. The mode and budget come from each module's
// emb.plan here; the option errors are checked with FileCheck below.
// The models are -emb-autodiff's output (the IR the pass sees), inline so
// that each expected error sits on its op (docs/testing.md).
// RUN: emb-opt %s -split-input-file -emb-remat -verify-diagnostics
//
// Not differentiated: no @train_step.
// RUN: echo 'module {}' | not emb-opt -emb-remat="mode=all" 2>&1 | FileCheck %s --check-prefix=NOSTEP
// NOSTEP: error: -emb-remat needs @train_step and @update: run -emb-autodiff first
//
// Unknown option values.
// RUN: echo 'module {}' | not emb-opt -emb-remat="mode=sometimes" 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: error: -emb-remat: unknown mode 'sometimes' (expected none, auto or all)
// RUN: echo 'module {}' | not emb-opt -emb-remat="mode=all strategy=revolve" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: -emb-remat: unknown strategy 'revolve' (expected sqrt or dp)
//
// The cases below run on the chains of remat.mlir (Inputs/remat.mlir).
// sqrt(n) does not look at a budget, so it is no strategy for auto.
// RUN: not emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat="mode=auto budget=100000 strategy=sqrt" 2>&1 | FileCheck %s --check-prefix=AUTOSQRT
// AUTOSQRT: error: strategy=sqrt does not look at the budget: it is a schedule for remat = all; auto uses the dynamic program
//
// After -emb-fuse it is too late: the forward ops sit in groups.
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-fuse | not emb-opt -split-input-file -emb-remat="mode=all" 2>&1 | FileCheck %s --check-prefix=FUSED
// FUSED: error: -emb-remat runs before -emb-fuse: @train_step already holds emb.fused groups
//
// Running twice: the second run finds the first one's clones.
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat="mode=all" | not emb-opt -split-input-file -emb-remat="mode=all" 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: -emb-remat has already run on this module (it has emb.remat_note or ops marked emb.remat)

// The lowest peak of this chain is 708 persistent bytes + 384 bytes of
// activations (test/Passes/remat.mlir): a budget of 1000 cannot be met.
// expected-error @+1 {{memory budget 1000 bytes is below the smallest this model reaches with rematerialisation (1092 bytes)}}
module @small_budget attributes {emb.plan = #emb.plan<memory_budget = 1000, remat = auto>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w1 : tensor<3x4xf32> init<kind = xavier_uniform>
  emb.param @b1 : tensor<4xf32> init<kind = zeros>
  emb.param @w2 : tensor<4x4xf32> init<kind = xavier_uniform>
  emb.param @w3 : tensor<4x4xf32> init<kind = xavier_uniform>
  emb.param @w4 : tensor<4x4xf32> init<kind = xavier_uniform>
  emb.param @w5 : tensor<4x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%arg0: tensor<8x3xf32>, %arg1: tensor<8x1xf32>) -> (tensor<f32>, tensor<8x1xf32>) {
    %0 = emb.get @w1 : tensor<3x4xf32>
    %1 = emb.get @b1 : tensor<4xf32>
    %2 = emb.dense %arg0, %0, %1 : tensor<8x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
    %3 = emb.activation relu %2 : tensor<8x4xf32>
    %4 = emb.get @w2 : tensor<4x4xf32>
    %5 = emb.dense %3, %4 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %6 = emb.activation relu %5 : tensor<8x4xf32>
    %7 = emb.get @w3 : tensor<4x4xf32>
    %8 = emb.dense %6, %7 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %9 = emb.activation relu %8 : tensor<8x4xf32>
    %10 = emb.get @w4 : tensor<4x4xf32>
    %11 = emb.dense %9, %10 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %12 = emb.activation relu %11 : tensor<8x4xf32>
    %13 = emb.get @w5 : tensor<4x1xf32>
    %14 = emb.dense %12, %13 : tensor<8x4xf32>, tensor<4x1xf32> -> tensor<8x1xf32>
    %15 = emb.loss mse %14, %arg1 : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    %16 = emb.loss_grad mse %14, %arg1 : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
    %17 = emb.dense_grad_input %16, %13 : tensor<8x1xf32>, tensor<4x1xf32> -> tensor<8x4xf32>
    %18 = emb.dense_grad_weight %12, %16 : tensor<8x4xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    emb.accumulate_grad @w5, %18 : tensor<4x1xf32>
    %19 = emb.activation_grad relu %17, %11 : tensor<8x4xf32>
    %20 = emb.dense_grad_input %19, %10 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %21 = emb.dense_grad_weight %9, %19 : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
    emb.accumulate_grad @w4, %21 : tensor<4x4xf32>
    %22 = emb.activation_grad relu %20, %8 : tensor<8x4xf32>
    %23 = emb.dense_grad_input %22, %7 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %24 = emb.dense_grad_weight %6, %22 : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
    emb.accumulate_grad @w3, %24 : tensor<4x4xf32>
    %25 = emb.activation_grad relu %23, %5 : tensor<8x4xf32>
    %26 = emb.dense_grad_input %25, %4 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %27 = emb.dense_grad_weight %3, %25 : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
    emb.accumulate_grad @w2, %27 : tensor<4x4xf32>
    %28 = emb.activation_grad relu %26, %2 : tensor<8x4xf32>
    %29 = emb.dense_grad_weight %arg0, %28 : tensor<8x3xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
    %30 = emb.bias_grad %28 : tensor<8x4xf32> -> tensor<4xf32>
    emb.accumulate_grad @b1, %30 : tensor<4xf32>
    emb.accumulate_grad @w1, %29 : tensor<3x4xf32>
    return %15, %14 : tensor<f32>, tensor<8x1xf32>
  }
  func.func @update() {
    emb.update @w5
    emb.update @w4
    emb.update @w3
    emb.update @w2
    emb.update @b1
    emb.update @w1
    return
  }
}

// -----

// auto without a budget (the frontend refuses it too; IR can still say it).
// expected-error @+1 {{remat = auto needs a memory budget: set the plan's memory_budget or pass budget=BYTES}}
module @no_budget attributes {emb.plan = #emb.plan<remat = auto>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%arg0: tensor<4x3xf32>, %arg1: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    %1 = emb.dense %arg0, %0 : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %2 = emb.activation relu %1 : tensor<4x1xf32>
    %3 = emb.loss mse %2, %arg1 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %4 = emb.loss_grad mse %2, %arg1 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %5 = emb.activation_grad relu %4, %1 : tensor<4x1xf32>
    %6 = emb.dense_grad_weight %arg0, %5 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
    emb.accumulate_grad @w, %6 : tensor<3x1xf32>
    return %3, %2 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.update @w
    return
  }
}

// -----

// Already rematerialised (the note of an earlier run is on the module).
// expected-error @+1 {{-emb-remat has already run on this module (it has emb.remat_note or ops marked emb.remat)}}
module @twice attributes {emb.plan = #emb.plan<remat = all>, emb.remat_note = "recomputes 0 values", emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
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
