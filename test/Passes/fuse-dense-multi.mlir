// -emb-fuse's dense_multi: dense layers without activation that read one
// input (a Transformer layer's Q, K and V projections; here of different
// widths, two with a bias) run as one kernel, each block of the input's
// rows through every layer's GEMM; dense_multi_grad is their backward when
// the input gradients are summed by autodiff's chain of adds: every
// layer's weight and bias gradients and dx = (dx_v + dx_k) + dx_q, a block
// of rows at a time. A dense with an activation stays dense_act. The plan
// lists the layers' biases; the CUDA program computes what the CPU does
// (emulated); fused and unfused plans train alike to the bit.
// RUN: emb-opt %s -emb-autodiff -emb-fuse | FileCheck %s
// RUN: emb-opt %s -emb-autodiff -emb-fuse -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// RUN: emb-opt %s -emb-autodiff -emb-fuse -emb-plan-memory \
// RUN:   -emb-to-plan="cuda=true output=%t.plan" -o /dev/null
// RUN: emb-parity --device emulated --steps 2 %t.plan | FileCheck %s --check-prefix=PARITY
// RUN: emb-opt %s -emb-autodiff -emb-fuse -emb-to-plan="output=%t.fused.plan" -o /dev/null
// RUN: emb-opt %s -emb-autodiff -emb-to-plan="output=%t.plain.plan" -o /dev/null
// RUN: embrun %t.fused.plan --steps 20 --report-every 1 --log %t.fused.jsonl > /dev/null
// RUN: embrun %t.plain.plan --steps 20 --report-every 1 --log %t.plain.jsonl > /dev/null
// RUN: grep -o '"loss":[0-9.e-]*' %t.fused.jsonl > %t.fused.txt
// RUN: grep -o '"loss":[0-9.e-]*' %t.plain.jsonl > %t.plain.txt
// RUN: diff %t.fused.txt %t.plain.txt

// CHECK-LABEL: func.func @train_step
// CHECK:         emb.fused dense_act
// CHECK:         %[[M:.*]]:3 = emb.fused dense_multi -> tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x16xf32> {
// CHECK-NEXT:      emb.dense %[[H:.*]], %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>
// CHECK-NEXT:      emb.dense %[[H]], %{{.*}} : tensor<8x16xf32>, tensor<16x8xf32>
// CHECK-NEXT:      emb.dense %[[H]], %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>
// CHECK-NEXT:      emb.yield
// CHECK:         emb.fused dense_multi_grad -> tensor<8x16xf32> {
// CHECK-NEXT:      emb.dense_grad_input
// CHECK:           emb.accumulate_grad @bv
// CHECK-NEXT:      emb.accumulate_grad @wv
// CHECK-NEXT:      emb.dense_grad_input
// CHECK:           emb.add
// CHECK-NEXT:      emb.accumulate_grad @wk
// CHECK-NEXT:      emb.dense_grad_input
// CHECK:           emb.add
// CHECK-NEXT:      emb.accumulate_grad @bq
// CHECK-NEXT:      emb.accumulate_grad @wq
// CHECK-NEXT:      emb.yield
// CHECK:         func.func @update
// PLAN: "attrs": { "biases": [ true, false, true ] }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "dense_multi", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ]
// PLAN: "attrs": { "biases": [ true, false, true ] }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "dense_multi_grad", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ]
// PARITY: 1 step {{.*}} dense_multi
// PARITY: 1 step {{.*}} dense_multi_grad
// PARITY: emb-parity: {{[0-9]+}} outputs compared over 2 steps, {{.*}}: OK
module @multi attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.param @w0 : tensor<16x16xf32> init<kind = xavier_uniform>
  emb.param @wq : tensor<16x16xf32> init<kind = xavier_uniform>
  emb.param @bq : tensor<16xf32> init<kind = constant, value = 0.1>
  emb.param @wk : tensor<16x8xf32> init<kind = xavier_uniform>
  emb.param @wv : tensor<16x16xf32> init<kind = xavier_uniform>
  emb.param @bv : tensor<16xf32> init<kind = constant, value = -0.1>
  emb.param @w2 : tensor<16x1xf32> init<kind = xavier_uniform>
  emb.param @w3 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<8x16xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<8x1xf32>) {
    %w0 = emb.get @w0 : tensor<16x16xf32>
    %z0 = emb.dense %x, %w0 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
    %h = emb.activation tanh %z0 : tensor<8x16xf32>
    %wq = emb.get @wq : tensor<16x16xf32>
    %bq = emb.get @bq : tensor<16xf32>
    %q = emb.dense %h, %wq, %bq : tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
    %wk = emb.get @wk : tensor<16x8xf32>
    %k = emb.dense %h, %wk : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
    %wv = emb.get @wv : tensor<16x16xf32>
    %bv = emb.get @bv : tensor<16xf32>
    %v = emb.dense %h, %wv, %bv : tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
    %s = emb.add %q, %v : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    %a = emb.activation relu %s : tensor<8x16xf32>
    %w2 = emb.get @w2 : tensor<16x1xf32>
    %o1 = emb.dense %a, %w2 : tensor<8x16xf32>, tensor<16x1xf32> -> tensor<8x1xf32>
    %w3 = emb.get @w3 : tensor<8x1xf32>
    %o2 = emb.dense %k, %w3 : tensor<8x8xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
    %z = emb.add %o1, %o2 : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
    %l = emb.loss bce_with_logits %z, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %z : tensor<f32>, tensor<8x1xf32>
  }
}
