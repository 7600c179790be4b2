// What -emb-remat refuses. The mode and budget come from each module's
// emb.plan here; the option errors are checked with FileCheck below.
// RUN: emb-opt %s -split-input-file -emb-autodiff -emb-remat -verify-diagnostics
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
// The cases below run on the chains of remat.mlir.
// sqrt(n) does not look at a budget, so it is no strategy for auto.
// RUN: emb-opt %S/remat.mlir -split-input-file -emb-autodiff | not emb-opt -split-input-file -emb-remat="mode=auto budget=100000 strategy=sqrt" 2>&1 | FileCheck %s --check-prefix=AUTOSQRT
// AUTOSQRT: error: strategy=sqrt does not look at the budget: it is a schedule for remat = all; auto uses the dynamic program
//
// After -emb-fuse it is too late: the forward ops sit in groups.
// RUN: emb-opt %S/remat.mlir -split-input-file -emb-autodiff -emb-fuse | not emb-opt -split-input-file -emb-remat="mode=all" 2>&1 | FileCheck %s --check-prefix=FUSED
// FUSED: error: -emb-remat runs before -emb-fuse: @train_step already holds emb.fused groups
//
// Running twice: the second run finds the first one's clones.
// RUN: emb-opt %S/remat.mlir -split-input-file -emb-autodiff | emb-opt -split-input-file -emb-remat="mode=all" | not emb-opt -split-input-file -emb-remat="mode=all" 2>&1 | FileCheck %s --check-prefix=TWICE
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
  func.func @forward(%x: tensor<8x3xf32>, %y: tensor<8x1xf32>) -> (tensor<f32>, tensor<8x1xf32>) {
    %w1 = emb.get @w1 : tensor<3x4xf32>
    %b1 = emb.get @b1 : tensor<4xf32>
    %z1 = emb.dense %x, %w1, %b1 : tensor<8x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
    %a1 = emb.activation relu %z1 : tensor<8x4xf32>
    %w2 = emb.get @w2 : tensor<4x4xf32>
    %z2 = emb.dense %a1, %w2 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %a2 = emb.activation relu %z2 : tensor<8x4xf32>
    %w3 = emb.get @w3 : tensor<4x4xf32>
    %z3 = emb.dense %a2, %w3 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %a3 = emb.activation relu %z3 : tensor<8x4xf32>
    %w4 = emb.get @w4 : tensor<4x4xf32>
    %z4 = emb.dense %a3, %w4 : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %a4 = emb.activation relu %z4 : tensor<8x4xf32>
    %w5 = emb.get @w5 : tensor<4x1xf32>
    %p = emb.dense %a4, %w5 : tensor<8x4xf32>, tensor<4x1xf32> -> tensor<8x1xf32>
    %l = emb.loss mse %p, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<8x1xf32>
  }
}

// -----

// auto without a budget (the frontend refuses it too; IR can still say it).
// expected-error @+1 {{remat = auto needs a memory budget: set the plan's memory_budget or pass budget=BYTES}}
module @no_budget attributes {emb.plan = #emb.plan<remat = auto>, emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %a = emb.activation relu %z : tensor<4x1xf32>
    %l = emb.loss mse %a, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %a : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Already rematerialised (the note of an earlier run is on the module).
// expected-error @+1 {{-emb-remat has already run on this module (it has emb.remat_note or ops marked emb.remat)}}
module @twice attributes {emb.plan = #emb.plan<remat = all>, emb.remat_note = "recomputes 0 values", emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %z, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %z : tensor<f32>, tensor<4x1xf32>
  }
}
