// emb.attention the whole way: -emb-autodiff sums the three gradients of
// its operands (one value here) and builds one chain back to the lookup,
// -emb-to-plan lowers both kernels
// with their heads and causal flag, the CUDA program computes what the CPU
// computes (emb-parity on the emulated device), and the model learns.
// RUN: emb-opt %s -emb-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: emb-opt %s -emb-autodiff -emb-pack-params -emb-fuse -emb-plan-memory \
// RUN:   -emb-to-plan="emit-json=true cuda=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// RUN: emb-opt %s -emb-autodiff -emb-pack-params -emb-fuse -emb-plan-memory \
// RUN:   -emb-to-plan="cuda=true output=%t.plan" -o /dev/null
// RUN: emb-parity --device emulated --steps 3 %t.plan | FileCheck %s --check-prefix=PARITY
// RUN: embrun %t.plan --steps 300 | FileCheck %s --check-prefix=LEARNS

// GRAD:      %[[X:.*]] = emb.positions
// GRAD:      emb.attention %[[X]], %[[X]], %[[X]], %{{.*}} heads(2) causal
// GRAD:      %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = emb.attention_grad %{{.*}}, %[[X]], %[[X]], %[[X]], %{{.*}} heads(2) causal
// GRAD-NEXT: %[[S:.*]] = emb.add %[[DQ]], %[[DK]] : tensor<16x6x8xf32>
// GRAD-NEXT: %[[D:.*]] = emb.add %[[S]], %[[DV]] : tensor<16x6x8xf32>
// GRAD-NEXT: emb.positions_grad %[[D]]
// GRAD-NOT:  emb.positions_grad

// PLAN: "attrs": { "causal": true, "heads": 2 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "attention"
// PLAN: "attrs": { "causal": true, "heads": 2 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "attention_grad", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ]

// PARITY: attention
// PARITY: attention_grad
// PARITY: emb-parity: {{[0-9]+}} outputs compared over 3 steps, {{.*}}: OK

// Synthetic data: an AUC far above chance after 300 steps of batch 16.
// LEARNS: eval_auc       0.{{[89][0-9]+}}

module @attn attributes {emb.training = #emb.training<batch_size = 16, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.table @words [500 x 8] f32 init<kind = normal, std = 0.1> optimizer<kind = adagrad, lr = 0.1>
  emb.param @pos : tensor<6x8xf32> init<kind = normal, std = 0.02>
  emb.param @w0 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "tokens", emb.role = "ids", emb.max_ids = 96 : i64, emb.vocab = 500 : i64, emb.hotness = 6 : i64},
                     %offsets: tensor<17xi64> {emb.feature = "tokens", emb.role = "offsets"},
                     %y: tensor<16x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<16x1xf32>) {
    %e = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<17xi64> -> tensor<16x6x8xf32>
    %pos = emb.get @pos : tensor<6x8xf32>
    %x = emb.positions %e, %offsets table %pos learned
        : tensor<16x6x8xf32>, tensor<17xi64>, tensor<6x8xf32> -> tensor<16x6x8xf32>
    %a = emb.attention %x, %x, %x, %offsets heads(2) causal : tensor<16x6x8xf32>, tensor<17xi64>
    %m = emb.sequence_pool %a, %offsets mean : tensor<16x6x8xf32>, tensor<17xi64> -> tensor<16x8xf32>
    %w0 = emb.get @w0 : tensor<8x1xf32>
    %p = emb.dense %m, %w0 : tensor<16x8xf32>, tensor<8x1xf32> -> tensor<16x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<16x1xf32>, tensor<16x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<16x1xf32>
  }
}
