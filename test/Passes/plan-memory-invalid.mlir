// What -emb-plan-memory refuses: a module -emb-autodiff has not run on, a
// module it has already planned, and an unknown strategy; and what
// -emb-to-plan refuses after it: a module changed since it was planned
// (the plan would not be the one planned) and a malformed emb.memory_plan.
// RUN: emb-opt %s -split-input-file -emb-plan-memory -verify-diagnostics

// An unknown strategy (on any module).
// RUN: echo 'module {}' | not emb-opt -emb-plan-memory=strategy=best_fit 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: -emb-plan-memory: unknown strategy 'best_fit' (expected greedy_by_size or sequential)

// A pass that changes the buffers after planning: packing adds the pack's
// buffers (the first case, differentiated, planned, then packed); the peak
// happens to stay the same, the buffer count does not.
// RUN: sed -n '/^\/\/ -----/q;p' %s \
// RUN:   | not emb-opt -emb-autodiff -emb-plan-memory -emb-pack-params -emb-to-plan -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHANGED
// CHANGED: error: the IR changed after -emb-plan-memory: it planned 11 buffers in 576 bytes, the plan now has 13 in 576; run it last

// An attribute -emb-plan-memory did not write.
// RUN: sed -n '/^\/\/ -----/q;p' %s | sed -e 's/^module attributes {/module attributes {emb.memory_plan = {strategy = "first_fit", peak = 64 : i64}, /' \
// RUN:   | not emb-opt -emb-autodiff -emb-to-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: error: malformed emb.memory_plan {peak = 64 : i64, strategy = "first_fit"}: expected {strategy = greedy_by_size or sequential, peak = N : i64, buffers = N : i64, ...} as -emb-plan-memory writes it

// Not differentiated: only @forward.
// expected-error @+1 {{-emb-plan-memory needs @train_step and @update: run -emb-autodiff first}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  emb.param @b : tensor<1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %b = emb.get @b : tensor<1xf32>
    %p = emb.dense %x, %w, %b : tensor<4x3xf32>, tensor<3x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Already planned: -emb-plan-memory runs once.
// expected-error @+1 {{-emb-plan-memory has already run on this module (it has emb.memory_plan = {buffers = 3 : i64, lower_bound = 128 : i64, peak = 192 : i64, sequential = 192 : i64, strategy = "greedy_by_size"}); it runs once, last before -emb-to-plan}}
module attributes {emb.memory_plan = {buffers = 3 : i64, lower_bound = 128 : i64, peak = 192 : i64, sequential = 192 : i64, strategy = "greedy_by_size"},
                   emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  func.func @train_step() {
    return
  }
  func.func @update() {
    return
  }
}
