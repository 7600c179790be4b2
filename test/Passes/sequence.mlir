// The sequence ops the whole way: -emb-autodiff builds sequence_pool_grad
// (reading the forward input for max only) and sequence_lookup_grad, whose
// per-id rows go to the table's sparse gradient like a lookup's;
// -emb-to-plan lowers all four kernels, the CUDA program computes what the
// CPU computes (emb-parity on the emulated device), and the model learns.
// PLAN reads Inputs/sequence.mlir, -emb-autodiff's output for this file
// (docs/testing.md).
// RUN: emb-opt %s -emb-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: emb-opt %S/Inputs/sequence.mlir -emb-to-plan="emit-json=true cuda=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// RUN: emb-opt %s -emb-autodiff -emb-pack-params -emb-fuse -emb-plan-memory \
// RUN:   -emb-to-plan="cuda=true output=%t.plan" -o /dev/null
// RUN: emb-parity --device emulated --steps 3 %t.plan | FileCheck %s --check-prefix=PARITY
// RUN: embrun %t.plan --steps 300 | FileCheck %s --check-prefix=LEARNS

// GRAD:      %[[X:.*]] = emb.sequence_lookup @words[%[[IDS:[a-z0-9]+]], %[[OFF:[a-z0-9]+]]]
// GRAD:      emb.sequence_pool %[[X]], %[[OFF]] max
// GRAD:      emb.sequence_pool %[[X]], %[[OFF]] mean
// GRAD-DAG:  %[[DM:.*]] = emb.sequence_pool_grad %{{.*}}, %[[OFF]] mean
// GRAD-DAG:  %[[DX:.*]] = emb.sequence_pool_grad %{{.*}}, %[[OFF]] input %[[X]] max
// GRAD:      %[[ROWS:.*]] = emb.sequence_lookup_grad %[[IDS]], %[[OFF]], %{{.*}}
// GRAD:      emb.accumulate_rows @words[%[[IDS]]], %[[ROWS]]

// PLAN: "op": "sequence_lookup", "outputs"
// PLAN: "attrs": { "mode": "max" }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}} ], "op": "sequence_pool"
// PLAN: "attrs": { "mode": "mean" }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}} ], "op": "sequence_pool"
// PLAN: "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "sequence_pool_grad"
// PLAN: "op": "sequence_lookup_grad"
// PLAN: "op": "accumulate_rows"

// PARITY: sequence_lookup
// PARITY: sequence_pool
// PARITY: sequence_lookup_grad
// PARITY: emb-parity: {{[0-9]+}} outputs compared over 3 steps, {{.*}}: OK

// Synthetic data: an AUC far above chance after 300 steps of batch 16.
// LEARNS: eval_auc       0.{{[89][0-9]+}}

module @seq attributes {emb.training = #emb.training<batch_size = 16, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.table @words [500 x 8] f32 init<kind = normal, std = 0.1> optimizer<kind = adagrad, lr = 0.1>
  emb.param @w0 : tensor<16x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "tokens", emb.role = "ids", emb.max_ids = 96 : i64, emb.vocab = 500 : i64, emb.hotness = 6 : i64},
                     %offsets: tensor<17xi64> {emb.feature = "tokens", emb.role = "offsets"},
                     %y: tensor<16x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<16x1xf32>) {
    %x = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<17xi64> -> tensor<16x6x8xf32>
    %mx = emb.sequence_pool %x, %offsets max : tensor<16x6x8xf32>, tensor<17xi64> -> tensor<16x8xf32>
    %mn = emb.sequence_pool %x, %offsets mean : tensor<16x6x8xf32>, tensor<17xi64> -> tensor<16x8xf32>
    %h = emb.concat %mx, %mn : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x16xf32>
    %w0 = emb.get @w0 : tensor<16x1xf32>
    %p = emb.dense %h, %w0 : tensor<16x16xf32>, tensor<16x1xf32> -> tensor<16x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<16x1xf32>, tensor<16x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<16x1xf32>
  }
}
