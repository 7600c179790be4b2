// What -emb-plan-memory refuses: a module it has already planned and an
// unknown strategy; and what -emb-to-plan refuses: a malformed
// emb.memory_plan. (Passes may run after -emb-plan-memory: -emb-to-plan
// plans the arena of the plan it lowers, test/Passes/plan-memory.mlir.)
// RUN: emb-opt %s -split-input-file -emb-plan-memory -verify-diagnostics

// An unknown strategy (on any module).
// RUN: echo 'module {}' | not emb-opt -emb-plan-memory=strategy=best_fit 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: -emb-plan-memory: unknown strategy 'best_fit' (expected greedy_by_size or sequential)

// An attribute -emb-plan-memory did not write.
// RUN: sed -n '/^\/\/ -----/q;p' %s | sed -e 's/^module attributes {/module attributes {emb.memory_plan = {strategy = "first_fit", peak = 64 : i64}, /' \
// RUN:   | not emb-opt -emb-to-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: error: malformed emb.memory_plan {peak = 64 : i64, strategy = "first_fit"}: expected {strategy = greedy_by_size or sequential} as -emb-plan-memory writes it

// A model, differentiated (-emb-autodiff's output: MALFORMED above runs
// -emb-to-plan on it); the pass itself accepts any module, since the
// planning happens in -emb-to-plan.
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  emb.param @b : tensor<1xf32> init<kind = zeros>
  func.func @train_step(%arg0: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<4x1xf32> {emb.feature = "y", emb.label_kind = "real", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.get @w : tensor<3x1xf32>
    %1 = emb.get @b : tensor<1xf32>
    %2 = emb.dense %arg0, %0, %1 : tensor<4x3xf32>, tensor<3x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %3 = emb.loss mse %2, %arg1 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %4 = emb.loss_grad mse %2, %arg1 : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %5 = emb.dense_grad_weight %arg0, %4 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
    %6 = emb.bias_grad %4 : tensor<4x1xf32> -> tensor<1xf32>
    emb.accumulate_grad @b, %6 : tensor<1xf32>
    emb.accumulate_grad @w, %5 : tensor<3x1xf32>
    return %3, %2 : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.update @b
    emb.update @w
    return
  }
}

// -----

// Already planned: -emb-plan-memory runs once.
// expected-error @+1 {{-emb-plan-memory has already run on this module (it has emb.memory_plan = {strategy = "greedy_by_size"}); it runs once}}
module attributes {emb.memory_plan = {strategy = "greedy_by_size"},
                   emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  func.func @train_step() {
    return
  }
  func.func @update() {
    return
  }
}
