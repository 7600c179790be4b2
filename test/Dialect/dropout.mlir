// Round trip of emb.dropout (2-D and 3-D inputs) and emb.dropout_grad.
// RUN: emb-opt %s | emb-opt | FileCheck %s

// CHECK-LABEL: func.func @dropout
// CHECK-SAME:    (%[[X:.*]]: tensor<8x64xf32>, %[[S:.*]]: tensor<4x16x64xf32>)
// CHECK-NEXT:    %[[Y:.*]] = emb.dropout %[[X]] {rate = 1.000000e-01 : f64, stream = 0 : i64} : tensor<8x64xf32>
// CHECK-NEXT:    %[[Z:.*]] = emb.dropout %[[S]] {rate = 0.000000e+00 : f64, stream = 3 : i64} : tensor<4x16x64xf32>
// CHECK-NEXT:    %[[DX:.*]] = emb.dropout_grad %[[Y]] {rate = 1.000000e-01 : f64, stream = 0 : i64} : tensor<8x64xf32>
func.func @dropout(%x: tensor<8x64xf32>, %s: tensor<4x16x64xf32>) -> (tensor<4x16x64xf32>, tensor<8x64xf32>) {
  %y = emb.dropout %x {rate = 0.1 : f64, stream = 0 : i64} : tensor<8x64xf32>
  %z = emb.dropout %s {rate = 0.0 : f64, stream = 3 : i64} : tensor<4x16x64xf32>
  %dx = emb.dropout_grad %y {rate = 0.1 : f64, stream = 0 : i64} : tensor<8x64xf32>
  return %z, %dx : tensor<4x16x64xf32>, tensor<8x64xf32>
}
