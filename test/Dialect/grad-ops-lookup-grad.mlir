// Round trip of emb.lookup_grad: every pooling, with and without per-id weights, static and dynamic ids.
// RUN: emb-opt %s | emb-opt | FileCheck %s
//
// Known bug: in EmbGradOps.td the types of emb.lookup_grad are
// `type($ids) , type($offsets) (, type($weights)^)? , type($grad)`; the
// optional group starts with ',' so, without weights, the parser takes the
// grad type for the weights type and then fails on the missing ','. Every
// printed @train_step with a lookup fails to parse back. This file is written
// for the fix that lists the weights type last:
//   type($ids) `,` type($offsets) `,` type($grad) (`,` type($weights)^)? `->` type($result)

emb.table @t0 [1000 x 16] f32 init<kind = zeros> optimizer<kind = sgd>

// CHECK-LABEL: func.func @lookup_grads
// CHECK-SAME:    (%[[IDS:.*]]: tensor<?xi64>, %[[OFFS:.*]]: tensor<9xi64>, %[[WTS:.*]]: tensor<?xf32>, %[[DY:.*]]: tensor<8x16xf32>, %[[IDS12:.*]]: tensor<12xi64>)
// CHECK-NEXT:    %[[S:.*]] = emb.lookup_grad @t0[%[[IDS]], %[[OFFS]]] sum %[[DY]] : tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT:    %[[M:.*]] = emb.lookup_grad @t0[%[[IDS]], %[[OFFS]]] max %[[DY]] : tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT:    %[[W:.*]] = emb.lookup_grad @t0[%[[IDS]], %[[OFFS]] weights %[[WTS]]] mean %[[DY]] : tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32>, tensor<?xf32> -> tensor<?x16xf32>
// CHECK-NEXT:    %[[ST:.*]] = emb.lookup_grad @t0[%[[IDS12]], %[[OFFS]]] sum %[[DY]] : tensor<12xi64>, tensor<9xi64>, tensor<8x16xf32> -> tensor<12x16xf32>
// CHECK-NEXT:    return %[[S]], %[[M]], %[[W]], %[[ST]]
func.func @lookup_grads(%ids: tensor<?xi64>, %offsets: tensor<9xi64>, %weights: tensor<?xf32>,
                        %dy: tensor<8x16xf32>, %ids12: tensor<12xi64>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<12x16xf32>) {
  %0 = emb.lookup_grad @t0[%ids, %offsets] sum %dy
      : tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32> -> tensor<?x16xf32>
  %1 = emb.lookup_grad @t0[%ids, %offsets] max %dy
      : tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32> -> tensor<?x16xf32>
  %2 = emb.lookup_grad @t0[%ids, %offsets weights %weights] mean %dy
      : tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32>, tensor<?xf32> -> tensor<?x16xf32>
  %3 = emb.lookup_grad @t0[%ids12, %offsets] sum %dy
      : tensor<12xi64>, tensor<9xi64>, tensor<8x16xf32> -> tensor<12x16xf32>
  return %0, %1, %2, %3 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<12x16xf32>
}
