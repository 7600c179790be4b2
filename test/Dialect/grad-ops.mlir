// Round trip of the backward and update ops (EmbGradOps.td): every loss_grad kind (neg_sampling with two results), dense_grad_input/weight, bias_grad, activation_grad, slice, interaction_grad, cross_grad, dot_grad, accumulate_grad/rows, coalesce_rows, clip_grad_norm and update.
// RUN: emb-opt %s | emb-opt | FileCheck %s

emb.table @t0 [1000 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @ctx [500 x 32] f32 init<kind = zeros> optimizer<kind = adagrad>
emb.param @w : tensor<13x64xf32> init<kind = xavier_uniform>
emb.param @b : tensor<64xf32> init<kind = zeros>

// CHECK-LABEL: func.func @loss_grads
// CHECK-SAME:    (%[[X:.*]]: tensor<8x1xf32>, %[[Y:.*]]: tensor<8x1xf32>, %[[C:.*]]: tensor<8x10xf32>, %[[NEG:.*]]: tensor<8x5xf32>, %[[H:.*]]: tensor<8x1xbf16>)
// CHECK-NEXT:    %[[BCE:.*]] = emb.loss_grad bce_with_logits %[[X]], %[[Y]] : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %[[MSE:.*]] = emb.loss_grad mse %[[X]], %[[Y]] : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %[[CE:.*]] = emb.loss_grad softmax_ce %[[C]], %[[Y]] : tensor<8x10xf32>, tensor<8x1xf32> -> tensor<8x10xf32>
// CHECK-NEXT:    %[[NS:.*]]:2 = emb.loss_grad neg_sampling %[[X]], %[[NEG]] : tensor<8x1xf32>, tensor<8x5xf32> -> tensor<8x1xf32>, tensor<8x5xf32>
// CHECK-NEXT:    %[[HALF:.*]] = emb.loss_grad bce_with_logits %[[H]], %[[H]] : tensor<8x1xbf16>, tensor<8x1xbf16> -> tensor<8x1xbf16>
// CHECK-NEXT:    return %[[BCE]], %[[MSE]], %[[CE]], %[[NS]]#0, %[[NS]]#1, %[[HALF]]
func.func @loss_grads(%x: tensor<8x1xf32>, %y: tensor<8x1xf32>, %c: tensor<8x10xf32>,
                      %neg: tensor<8x5xf32>, %h: tensor<8x1xbf16>)
    -> (tensor<8x1xf32>, tensor<8x1xf32>, tensor<8x10xf32>, tensor<8x1xf32>, tensor<8x5xf32>, tensor<8x1xbf16>) {
  %0 = emb.loss_grad bce_with_logits %x, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
  %1 = emb.loss_grad mse %x, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
  %2 = emb.loss_grad softmax_ce %c, %y : tensor<8x10xf32>, tensor<8x1xf32> -> tensor<8x10xf32>
  %3:2 = emb.loss_grad neg_sampling %x, %neg
      : tensor<8x1xf32>, tensor<8x5xf32> -> tensor<8x1xf32>, tensor<8x5xf32>
  %4 = emb.loss_grad bce_with_logits %h, %h : tensor<8x1xbf16>, tensor<8x1xbf16> -> tensor<8x1xbf16>
  return %0, %1, %2, %3#0, %3#1, %4
      : tensor<8x1xf32>, tensor<8x1xf32>, tensor<8x10xf32>, tensor<8x1xf32>, tensor<8x5xf32>, tensor<8x1xbf16>
}

// CHECK-LABEL: func.func @dense_grads
// CHECK-SAME:    (%[[DY:.*]]: tensor<8x64xf32>, %[[X:.*]]: tensor<8x13xf32>, %[[W:.*]]: tensor<13x64xf32>)
// CHECK-NEXT:    %[[DX:.*]] = emb.dense_grad_input %[[DY]], %[[W]] : tensor<8x64xf32>, tensor<13x64xf32> -> tensor<8x13xf32>
// CHECK-NEXT:    %[[DW:.*]] = emb.dense_grad_weight %[[X]], %[[DY]] : tensor<8x13xf32>, tensor<8x64xf32> -> tensor<13x64xf32>
// CHECK-NEXT:    %[[DB:.*]] = emb.bias_grad %[[DY]] : tensor<8x64xf32> -> tensor<64xf32>
// CHECK-NEXT:    return %[[DX]], %[[DW]], %[[DB]]
func.func @dense_grads(%dy: tensor<8x64xf32>, %x: tensor<8x13xf32>, %w: tensor<13x64xf32>)
    -> (tensor<8x13xf32>, tensor<13x64xf32>, tensor<64xf32>) {
  %0 = emb.dense_grad_input %dy, %w : tensor<8x64xf32>, tensor<13x64xf32> -> tensor<8x13xf32>
  %1 = emb.dense_grad_weight %x, %dy : tensor<8x13xf32>, tensor<8x64xf32> -> tensor<13x64xf32>
  %2 = emb.bias_grad %dy : tensor<8x64xf32> -> tensor<64xf32>
  return %0, %1, %2 : tensor<8x13xf32>, tensor<13x64xf32>, tensor<64xf32>
}

// Every activation kind; the gradient has the type of the activation's input.
// CHECK-LABEL: func.func @activation_grads
// CHECK-SAME:    (%[[DY:.*]]: tensor<8x64xf32>, %[[X:.*]]: tensor<8x64xf32>)
// CHECK-NEXT:    %[[R:.*]] = emb.activation_grad relu %[[DY]], %[[X]] : tensor<8x64xf32>
// CHECK-NEXT:    %[[S:.*]] = emb.activation_grad sigmoid %[[R]], %[[X]] : tensor<8x64xf32>
// CHECK-NEXT:    %[[T:.*]] = emb.activation_grad tanh %[[S]], %[[X]] : tensor<8x64xf32>
// CHECK-NEXT:    %[[G:.*]] = emb.activation_grad gelu %[[T]], %[[X]] : tensor<8x64xf32>
// CHECK-NEXT:    return %[[G]]
func.func @activation_grads(%dy: tensor<8x64xf32>, %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = emb.activation_grad relu %dy, %x : tensor<8x64xf32>
  %1 = emb.activation_grad sigmoid %0, %x : tensor<8x64xf32>
  %2 = emb.activation_grad tanh %1, %x : tensor<8x64xf32>
  %3 = emb.activation_grad gelu %2, %x : tensor<8x64xf32>
  return %3 : tensor<8x64xf32>
}

// The gradient of concat: column slices, first, middle and last.
// CHECK-LABEL: func.func @slices
// CHECK-SAME:    (%[[DY:.*]]: tensor<8x24xf32>)
// CHECK-NEXT:    %[[A:.*]] = emb.slice %[[DY]][0] : tensor<8x24xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %[[B:.*]] = emb.slice %[[DY]][16] : tensor<8x24xf32> -> tensor<8x8xf32>
// CHECK-NEXT:    %[[C:.*]] = emb.slice %[[DY]][4] : tensor<8x24xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %[[ALL:.*]] = emb.slice %[[DY]][0] : tensor<8x24xf32> -> tensor<8x24xf32>
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]], %[[ALL]]
func.func @slices(%dy: tensor<8x24xf32>)
    -> (tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x1xf32>, tensor<8x24xf32>) {
  %0 = emb.slice %dy [0] : tensor<8x24xf32> -> tensor<8x16xf32>
  %1 = emb.slice %dy [16] : tensor<8x24xf32> -> tensor<8x8xf32>
  %2 = emb.slice %dy [4] : tensor<8x24xf32> -> tensor<8x1xf32>
  %3 = emb.slice %dy [0] : tensor<8x24xf32> -> tensor<8x24xf32>
  return %0, %1, %2, %3 : tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x1xf32>, tensor<8x24xf32>
}

// Three inputs: 3 pairs without self, 6 with.
// CHECK-LABEL: func.func @interaction_grads
// CHECK-SAME:    (%[[DY:.*]]: tensor<8x3xf32>, %[[DYS:.*]]: tensor<8x6xf32>, %[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[C:.*]]: tensor<8x16xf32>)
// CHECK-NEXT:    %[[G:.*]]:3 = emb.interaction_grad %[[DY]], %[[A]], %[[B]], %[[C]] : tensor<8x3xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NEXT:    %[[S:.*]]:3 = emb.interaction_grad %[[DYS]], %[[A]], %[[B]], %[[C]] self : tensor<8x6xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#2, %[[S]]#1
func.func @interaction_grads(%dy: tensor<8x3xf32>, %dys: tensor<8x6xf32>, %a: tensor<8x16xf32>,
                             %b: tensor<8x16xf32>, %c: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0:3 = emb.interaction_grad %dy, %a, %b, %c
      : tensor<8x3xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
      -> tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  %1:3 = emb.interaction_grad %dys, %a, %b, %c self
      : tensor<8x6xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
      -> tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  return %0#0, %0#2, %1#1 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// CHECK-LABEL: func.func @cross_grad
// CHECK-SAME:    (%[[DY:.*]]: tensor<8x32xf32>, %[[X0:.*]]: tensor<8x32xf32>, %[[XL:.*]]: tensor<8x32xf32>, %[[W:.*]]: tensor<32x32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK-NEXT:    %[[DX0:.*]], %[[DXL:.*]], %[[DW:.*]], %[[DB:.*]] = emb.cross_grad %[[DY]], %[[X0]], %[[XL]], %[[W]], %[[B]] : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
// CHECK-NEXT:    return %[[DX0]], %[[DXL]], %[[DW]], %[[DB]]
func.func @cross_grad(%dy: tensor<8x32xf32>, %x0: tensor<8x32xf32>, %xl: tensor<8x32xf32>,
                      %w: tensor<32x32xf32>, %b: tensor<32xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>) {
  %dx0, %dxl, %dw, %db = emb.cross_grad %dy, %x0, %xl, %w, %b
      : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
  return %dx0, %dxl, %dw, %db : tensor<8x32xf32>, tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
}

// With the forward's product xl W.
// CHECK-LABEL: func.func @cross_grad_linear
// CHECK-NEXT:    emb.cross_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} linear(%{{.*}}) : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
func.func @cross_grad_linear(%dy: tensor<8x32xf32>, %x0: tensor<8x32xf32>, %xl: tensor<8x32xf32>,
                             %w: tensor<32x32xf32>, %b: tensor<32xf32>, %l: tensor<8x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>) {
  %dx0, %dxl, %dw, %db = emb.cross_grad %dy, %x0, %xl, %w, %b linear(%l)
      : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
  return %dx0, %dxl, %dw, %db : tensor<8x32xf32>, tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
}

// B x D against B x D (one score per row) and against B x K x D (K candidates).
// CHECK-LABEL: func.func @dot_grads
// CHECK-SAME:    (%[[DY:.*]]: tensor<8x1xf32>, %[[DYK:.*]]: tensor<8x5xf32>, %[[U:.*]]: tensor<8x32xf32>, %[[V:.*]]: tensor<8x32xf32>, %[[N:.*]]: tensor<8x5x32xf32>)
// CHECK-NEXT:    %[[DU:.*]], %[[DV:.*]] = emb.dot_grad %[[DY]], %[[U]], %[[V]] : tensor<8x1xf32>, tensor<8x32xf32>, tensor<8x32xf32>
// CHECK-NEXT:    %[[DC:.*]], %[[DN:.*]] = emb.dot_grad %[[DYK]], %[[U]], %[[N]] : tensor<8x5xf32>, tensor<8x32xf32>, tensor<8x5x32xf32>
// CHECK-NEXT:    return %[[DU]], %[[DV]], %[[DC]], %[[DN]]
func.func @dot_grads(%dy: tensor<8x1xf32>, %dyk: tensor<8x5xf32>, %u: tensor<8x32xf32>,
                     %v: tensor<8x32xf32>, %n: tensor<8x5x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x5x32xf32>) {
  %du, %dv = emb.dot_grad %dy, %u, %v : tensor<8x1xf32>, tensor<8x32xf32>, tensor<8x32xf32>
  %dc, %dn = emb.dot_grad %dyk, %u, %n : tensor<8x5xf32>, tensor<8x32xf32>, tensor<8x5x32xf32>
  return %du, %dv, %dc, %dn : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x5x32xf32>
}

// emb.lookup_grad is in grad-ops-lookup-grad.mlir: without weights its printed
// form does not parse back yet.

// Parameter gradients (2-D weight, 1-D bias) and sparse table rows: 1-D ids
// with N x dim values (a pooled lookup), 2-D ids with B x K x dim values (a
// gather of negatives).
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME:    (%[[DW:.*]]: tensor<13x64xf32>, %[[DB:.*]]: tensor<64xf32>, %[[IDS:.*]]: tensor<?xi64>, %[[ROWS:.*]]: tensor<?x16xf32>, %[[NEG:.*]]: tensor<8x5xi64>, %[[NROWS:.*]]: tensor<8x5x32xf32>)
// CHECK-NEXT:    emb.accumulate_grad @w, %[[DW]] : tensor<13x64xf32>
// CHECK-NEXT:    emb.accumulate_grad @b, %[[DB]] : tensor<64xf32>
// CHECK-NEXT:    emb.accumulate_rows @t0[%[[IDS]]], %[[ROWS]] : tensor<?xi64>, tensor<?x16xf32>
// CHECK-NEXT:    emb.accumulate_rows @ctx[%[[NEG]]], %[[NROWS]] : tensor<8x5xi64>, tensor<8x5x32xf32>
// CHECK-NEXT:    return
func.func @accumulate(%dw: tensor<13x64xf32>, %db: tensor<64xf32>, %ids: tensor<?xi64>,
                      %rows: tensor<?x16xf32>, %neg: tensor<8x5xi64>, %nrows: tensor<8x5x32xf32>) {
  emb.accumulate_grad @w, %dw : tensor<13x64xf32>
  emb.accumulate_grad @b, %db : tensor<64xf32>
  emb.accumulate_rows @t0[%ids], %rows : tensor<?xi64>, tensor<?x16xf32>
  emb.accumulate_rows @ctx[%neg], %nrows : tensor<8x5xi64>, tensor<8x5x32xf32>
  return
}

// The optimizer step: coalesce, clip, update with and without the clip scale.
// CHECK-LABEL: func.func @update
// CHECK-NEXT:    emb.coalesce_rows @t0
// CHECK-NEXT:    emb.coalesce_rows @ctx
// CHECK-NEXT:    %[[S:.*]] = emb.clip_grad_norm max_norm(5.000000e-01) : tensor<f32>
// CHECK-NEXT:    emb.update @w scale %[[S]] : tensor<f32>
// CHECK-NEXT:    emb.update @t0 scale %[[S]] : tensor<f32>
// CHECK-NEXT:    emb.update @b
// CHECK-NEXT:    emb.update @ctx
// CHECK-NEXT:    return
func.func @update() {
  emb.coalesce_rows @t0
  emb.coalesce_rows @ctx
  %s = emb.clip_grad_norm max_norm(0.5) : tensor<f32>
  emb.update @w scale %s : tensor<f32>
  emb.update @t0 scale %s : tensor<f32>
  emb.update @b
  emb.update @ctx
  return
}
