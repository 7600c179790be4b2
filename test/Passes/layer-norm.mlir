// emb.layer_norm the whole way: -emb-autodiff builds one layer_norm_grad
// (dx, dgamma, dbeta; the parameters' gradients accumulated), -emb-to-plan
// lowers both by the default lowering (eps copied, as the catalogue
// declares it), the CUDA program computes what the CPU computes
// (emb-parity on the emulated device), and the model learns.
// GRAD checks -emb-autodiff itself and the last lines run the real
// pipeline, so they start from the model; PLAN reads Inputs/layer-norm.mlir,
// -emb-autodiff's output for it (docs/testing.md).
// RUN: emb-opt %s -emb-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: emb-opt %S/Inputs/layer-norm.mlir -emb-to-plan="emit-json=true cuda=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// RUN: emb-opt %s -emb-autodiff -emb-pack-params -emb-fuse -emb-plan-memory \
// RUN:   -emb-to-plan="cuda=true output=%t.plan" -o /dev/null
// RUN: emb-parity --device emulated --steps 3 %t.plan | FileCheck %s --check-prefix=PARITY
// RUN: embrun %t.plan --steps 400 | FileCheck %s --check-prefix=LEARNS

// GRAD:      %[[X:.*]] = emb.dense
// GRAD:      emb.layer_norm %[[X]], %[[G:.*]], %[[B:.*]] {eps = 1.000000e-05 : f64}
// GRAD:      %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = emb.layer_norm_grad %{{.*}}, %[[X]], %[[G]] {eps = 1.000000e-05 : f64}
// GRAD-DAG:  emb.accumulate_grad @g0, %[[DG]]
// GRAD-DAG:  emb.accumulate_grad @b0, %[[DB]]
// GRAD:      emb.dense_grad_weight %{{.*}}, %[[DX]]

// PLAN: "entry": "emb_d_layer_norm_{{[0-9a-f]+}}"
// PLAN: "entry": "emb_d_layer_norm_grad_rows_{{[0-9a-f]+}}"
// PLAN: "entry": "emb_d_layer_norm_grad_columns_{{[0-9a-f]+}}"
// PLAN: "attrs": { "eps": 1e-05 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "layer_norm", "outputs": [ {{[0-9]+}} ]
// PLAN: "attrs": { "eps": 1e-05 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "layer_norm_grad", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ]

// PARITY: layer_norm
// PARITY: layer_norm_grad
// PARITY: emb-parity: {{[0-9]+}} outputs compared over 3 steps, {{.*}}: OK

// Synthetic data: an AUC far above chance after 400 steps of batch 8.
// LEARNS: eval_auc       0.9{{[0-9]+}}

module @ln attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.param @w0 : tensor<16x32xf32> init<kind = xavier_uniform>
  emb.param @g0 : tensor<32xf32> init<kind = constant, value = 1.0>
  emb.param @b0 : tensor<32xf32> init<kind = zeros>
  emb.param @w1 : tensor<32x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<8x16xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<8x1xf32>) {
    %w0 = emb.get @w0 : tensor<16x32xf32>
    %h0 = emb.dense %x, %w0 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
    %g0 = emb.get @g0 : tensor<32xf32>
    %b0 = emb.get @b0 : tensor<32xf32>
    %n0 = emb.layer_norm %h0, %g0, %b0 {eps = 1.0e-05 : f64}
        : tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<8x32xf32>
    %a0 = emb.activation relu %n0 : tensor<8x32xf32>
    %w1 = emb.get @w1 : tensor<32x1xf32>
    %p = emb.dense %a0, %w1 : tensor<8x32xf32>, tensor<32x1xf32> -> tensor<8x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<8x1xf32>
  }
}
