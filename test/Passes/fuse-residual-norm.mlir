// -emb-fuse's add_layer_norm: a layer_norm of a two-input add (a residual
// connection), with the dropout that feeds the add, runs as one kernel
// that writes the sum h (the residual stream, which the layer norm's
// gradient and the next residual read) and the normalised rows; its
// backward, add_layer_norm_grad, is the norm's input gradient plus the
// residual stream's (dh) and the dropout's gradient of dh in the same row
// pass. The plan has one kernel of each with the dropout's rate and stream
// and the norm's eps; the CUDA program computes what the CPU does (emulated, in
// training and in evaluation); fused and unfused plans train alike to the
// bit (the kernel repeats dropout, add and layer_norm operation for
// operation). fuse-residual-norm-skip.mlir: what is left alone.
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
// CHECK:         %[[G:.*]]:2 = emb.fused add_layer_norm -> tensor<8x16xf32>, tensor<8x16xf32> {
// CHECK-NEXT:      %[[D:.*]] = emb.dropout %{{.*}} {rate = 2.000000e-01 : f64, stream = 3 : i64} : tensor<8x16xf32>
// CHECK-NEXT:      %[[H:.*]] = emb.add %{{.*}}, %[[D]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:      %[[N:.*]] = emb.layer_norm %[[H]]
// CHECK-NEXT:      emb.yield
// CHECK:         emb.fused add_layer_norm_grad
// CHECK-NEXT:      %[[DX:.*]], %{{.*}}, %{{.*}} = emb.layer_norm_grad %{{.*}}, %[[G]]#{{[01]}}
// CHECK-NEXT:      %[[DH:.*]] = emb.add %{{.*}}, %[[DX]]
// CHECK-NEXT:      emb.dropout_grad %[[DH]] {rate = 2.000000e-01 : f64, stream = 3 : i64}
// CHECK-NEXT:      emb.yield
// PLAN: "attrs": { "eps": 1e-05, "rate": 0.2, "stream": 3 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "add_layer_norm", "outputs": [ {{[0-9]+}}, {{[0-9]+}} ]
// PLAN: "attrs": { "eps": 1e-05, "other": true, "rate": 0.2, "stream": 3 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "add_layer_norm_grad", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ]
// PARITY: 1 step {{.*}} add_layer_norm
// PARITY: 1 step {{.*}} add_layer_norm_grad
// PARITY: eval {{.*}} add_layer_norm
// PARITY: emb-parity: {{[0-9]+}} outputs compared over 2 steps, {{.*}}: OK
module @res attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.param @w0 : tensor<16x16xf32> init<kind = xavier_uniform>
  emb.param @w1 : tensor<16x16xf32> init<kind = xavier_uniform>
  emb.param @g : tensor<16xf32> init<kind = constant, value = 1.0>
  emb.param @b : tensor<16xf32> init<kind = zeros>
  emb.param @w2 : tensor<16x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<8x16xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<8x1xf32>) {
    %w0 = emb.get @w0 : tensor<16x16xf32>
    %h0 = emb.dense %x, %w0 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
    %w1 = emb.get @w1 : tensor<16x16xf32>
    %p = emb.dense %h0, %w1 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
    %d = emb.dropout %p {rate = 0.2 : f64, stream = 3 : i64} : tensor<8x16xf32>
    %h = emb.add %h0, %d : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    %g = emb.get @g : tensor<16xf32>
    %b = emb.get @b : tensor<16xf32>
    %n = emb.layer_norm %h, %g, %b {eps = 1.0e-05 : f64} : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16xf32>
    %r = emb.add %h, %n : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    %w2 = emb.get @w2 : tensor<16x1xf32>
    %z = emb.dense %r, %w2 : tensor<8x16xf32>, tensor<16x1xf32> -> tensor<8x1xf32>
    %l = emb.loss bce_with_logits %z, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %z : tensor<f32>, tensor<8x1xf32>
  }
}
