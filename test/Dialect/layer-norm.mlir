// Round trip of emb.layer_norm (2-D and 3-D inputs) and emb.layer_norm_grad.
// RUN: emb-opt %s | emb-opt | FileCheck %s

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:    (%[[X:.*]]: tensor<8x64xf32>, %[[S:.*]]: tensor<4x16x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK-NEXT:    %[[Y:.*]] = emb.layer_norm %[[X]], %[[G]], %[[B]] {eps = 1.000000e-05 : f64} : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:    %[[Z:.*]] = emb.layer_norm %[[S]], %[[G]], %[[B]] {eps = 9.9999999999999998E-13 : f64} : tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x16x64xf32>
// CHECK-NEXT:    %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = emb.layer_norm_grad %[[Y]], %[[X]], %[[G]] {eps = 1.000000e-05 : f64} : tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>
func.func @layer_norm(%x: tensor<8x64xf32>, %s: tensor<4x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>)
    -> (tensor<4x16x64xf32>, tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %y = emb.layer_norm %x, %g, %b {eps = 1.0e-05 : f64} : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %z = emb.layer_norm %s, %g, %b {eps = 1.0e-12 : f64} : tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x16x64xf32>
  %dx, %dg, %db = emb.layer_norm_grad %y, %x, %g {eps = 1.0e-05 : f64}
      : tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>
  return %z, %dx, %dg, %db : tensor<4x16x64xf32>, tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>
}
