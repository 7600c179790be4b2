// emb.dropout the whole way: -emb-autodiff builds an emb.dropout_grad of the
// forward's rate and stream on the dropout's result gradient, -emb-to-plan
// lowers both by the default lowering (rate and stream copied), the CUDA
// program draws the CPU's masks (emb-parity on the emulated device compares
// training steps, where the masks apply), remat recomputes the dropout with
// its mask (the recomputed run's loss is the stored run's), and a model with
// dropout learns.
// RUN: emb-opt %s -emb-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: emb-opt %s -emb-autodiff -emb-to-plan="emit-json=true cuda=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// RUN: emb-opt %s -emb-autodiff -emb-pack-params -emb-fuse -emb-plan-memory \
// RUN:   -emb-to-plan="cuda=true output=%t.plan" -o /dev/null
// RUN: emb-parity --device emulated --steps 3 %t.plan | FileCheck %s --check-prefix=PARITY
// RUN: embrun %t.plan --steps 400 | FileCheck %s --check-prefix=LEARNS
// RUN: emb-opt %s -emb-autodiff -emb-remat="mode=all" | FileCheck %s --check-prefix=REMAT
// RUN: emb-opt %s -emb-autodiff -emb-remat="mode=all" -emb-to-plan="output=%t.remat.plan" -o /dev/null
// RUN: emb-opt %s -emb-autodiff -emb-to-plan="output=%t.stored.plan" -o /dev/null
// RUN: embrun %t.stored.plan --steps 30 --report-every 1 --log %t.stored.jsonl > /dev/null
// RUN: embrun %t.remat.plan --steps 30 --report-every 1 --log %t.remat.jsonl > /dev/null
// RUN: grep -o '"loss":[0-9.e-]*' %t.stored.jsonl > %t.stored.txt
// RUN: grep -o '"loss":[0-9.e-]*' %t.remat.jsonl > %t.remat.txt
// RUN: diff %t.stored.txt %t.remat.txt

// GRAD:      emb.dropout %{{.*}} {rate = 2.000000e-01 : f64, stream = 6 : i64} : tensor<8x32xf32>
// GRAD:      emb.dropout_grad %{{.*}} {rate = 2.000000e-01 : f64, stream = 6 : i64} : tensor<8x32xf32>
// GRAD:      emb.dropout_grad %{{.*}} {rate = 2.000000e-01 : f64, stream = 5 : i64} : tensor<8x32xf32>
// GRAD:      emb.dropout_grad %{{.*}} {rate = 2.000000e-01 : f64, stream = 4 : i64} : tensor<8x32xf32>

// PLAN: "entry": "emb_d_dropout_{{[0-9a-f]+}}"
// PLAN: "entry": "emb_d_dropout_grad_{{[0-9a-f]+}}"
// PLAN: "attrs": { "rate": 0.2, "stream": 6 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}} ], "op": "dropout", "outputs": [ {{[0-9]+}} ]
// PLAN: "attrs": { "rate": 0.2, "stream": 6 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}} ], "op": "dropout_grad", "outputs": [ {{[0-9]+}} ]

// REMAT: emb.dropout %{{[0-9]+}} {emb.remat, rate = 2.000000e-01 : f64, stream = 5 : i64}

// PARITY: dropout
// PARITY: dropout_grad
// PARITY: emb-parity: {{[0-9]+}} outputs compared over 3 steps, {{.*}}: OK

// Synthetic data: an AUC far above chance after 400 steps of batch 8.
// LEARNS: eval_auc       0.9{{[0-9]+}}

module @drop attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.param @w0 : tensor<16x32xf32> init<kind = xavier_uniform>
  emb.param @w1 : tensor<32x32xf32> init<kind = xavier_uniform>
  emb.param @w2 : tensor<32x32xf32> init<kind = xavier_uniform>
  emb.param @w3 : tensor<32x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<8x16xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<8x1xf32>) {
    %w0 = emb.get @w0 : tensor<16x32xf32>
    %h0 = emb.dense %x, %w0 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
    %a0 = emb.activation relu %h0 : tensor<8x32xf32>
    %d0 = emb.dropout %a0 {rate = 0.2 : f64, stream = 4 : i64} : tensor<8x32xf32>
    %w1 = emb.get @w1 : tensor<32x32xf32>
    %h1 = emb.dense %d0, %w1 : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
    %a1 = emb.activation relu %h1 : tensor<8x32xf32>
    %d1 = emb.dropout %a1 {rate = 0.2 : f64, stream = 5 : i64} : tensor<8x32xf32>
    %w2 = emb.get @w2 : tensor<32x32xf32>
    %h2 = emb.dense %d1, %w2 : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
    %a2 = emb.activation relu %h2 : tensor<8x32xf32>
    %d2 = emb.dropout %a2 {rate = 0.2 : f64, stream = 6 : i64} : tensor<8x32xf32>
    %w3 = emb.get @w3 : tensor<32x1xf32>
    %p = emb.dense %d2, %w3 : tensor<8x32xf32>, tensor<32x1xf32> -> tensor<8x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<8x1xf32>
  }
}
