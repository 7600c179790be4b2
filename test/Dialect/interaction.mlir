// Round trip of emb.interaction (with and without `self`), emb.cross and emb.dot (2-D and 3-D rhs).
// RUN: emb-opt %s | emb-opt | FileCheck %s

// 3 features: 3 pairs without `self`, 6 with it.
// CHECK-LABEL: func.func @interaction
// CHECK-SAME:    (%[[X:.*]]: tensor<8x16xf32>, %[[E0:.*]]: tensor<8x16xf32>, %[[E1:.*]]: tensor<8x16xf32>)
// CHECK-NEXT:    %[[P:.*]] = emb.interaction %[[X]], %[[E0]], %[[E1]] : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    %[[S:.*]] = emb.interaction %[[X]], %[[E0]], %[[E1]] self : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    %[[TWO:.*]] = emb.interaction %[[X]], %[[E0]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    return %[[P]], %[[S]], %[[TWO]]
func.func @interaction(%x: tensor<8x16xf32>, %e0: tensor<8x16xf32>, %e1: tensor<8x16xf32>)
    -> (tensor<8x3xf32>, tensor<8x6xf32>, tensor<8x1xf32>) {
  %0 = emb.interaction %x, %e0, %e1
      : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x3xf32>
  %1 = emb.interaction %x, %e0, %e1 self
      : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x6xf32>
  %2 = emb.interaction %x, %e0 : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x1xf32>
  return %0, %1, %2 : tensor<8x3xf32>, tensor<8x6xf32>, tensor<8x1xf32>
}

// Two stacked cross layers, the second with x_l != x_0.
// CHECK-LABEL: func.func @cross
// CHECK-SAME:    (%[[X0:.*]]: tensor<8x32xf32>, %[[W:.*]]: tensor<32x32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK-NEXT:    %[[X1:.*]] = emb.cross %[[X0]], %[[X0]], %[[W]], %[[B]] : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
// CHECK-NEXT:    %[[X2:.*]] = emb.cross %[[X0]], %[[X1]], %[[W]], %[[B]] : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
// CHECK-NEXT:    return %[[X2]]
func.func @cross(%x0: tensor<8x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %0 = emb.cross %x0, %x0, %w, %b : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
  %1 = emb.cross %x0, %0, %w, %b : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>
  return %1 : tensor<8x32xf32>
}

// A cross layer that keeps its product xl W for the gradient.
// CHECK-LABEL: func.func @cross_keeps_linear
// CHECK-NEXT:    %{{.*}}, %[[L:.*]] = emb.cross %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> linear tensor<8x32xf32>
// CHECK-NEXT:    return %[[L]]
func.func @cross_keeps_linear(%x0: tensor<8x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %y, %l = emb.cross %x0, %x0, %w, %b : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> linear tensor<8x32xf32>
  return %l : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @dot
// CHECK-SAME:    (%[[U:.*]]: tensor<8x64xf32>, %[[V:.*]]: tensor<8x64xf32>, %[[NEG:.*]]: tensor<8x5x64xf32>)
// CHECK-NEXT:    %[[S:.*]] = emb.dot %[[U]], %[[V]] : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %[[N:.*]] = emb.dot %[[U]], %[[NEG]] : tensor<8x64xf32>, tensor<8x5x64xf32> -> tensor<8x5xf32>
// CHECK-NEXT:    return %[[S]], %[[N]]
func.func @dot(%u: tensor<8x64xf32>, %v: tensor<8x64xf32>, %neg: tensor<8x5x64xf32>)
    -> (tensor<8x1xf32>, tensor<8x5xf32>) {
  %0 = emb.dot %u, %v : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x1xf32>
  %1 = emb.dot %u, %neg : tensor<8x64xf32>, tensor<8x5x64xf32> -> tensor<8x5xf32>
  return %0, %1 : tensor<8x1xf32>, tensor<8x5xf32>
}
