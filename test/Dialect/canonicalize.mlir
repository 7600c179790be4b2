// The emb ops' folders under -canonicalize: a concat or a bias-free add of
// one tensor, and a slice of every column from 0, are their input; the
// same ops with more to do stay.
// RUN: emb-opt %s -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @copies
// CHECK-SAME:    (%[[X:.*]]: tensor<8x4xf32>)
// CHECK-NEXT:    return %[[X]], %[[X]], %[[X]]
func.func @copies(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %c = emb.concat %x : tensor<8x4xf32> -> tensor<8x4xf32>
  %a = emb.add %x : tensor<8x4xf32> -> tensor<8x4xf32>
  %s = emb.slice %x[0] : tensor<8x4xf32> -> tensor<8x4xf32>
  return %c, %a, %s : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK:         emb.concat
// CHECK:         emb.add %{{.*}} bias
// CHECK:         emb.add %{{.*}}, %{{.*}} :
// CHECK:         emb.slice %{{.*}}[2]
func.func @kept(%x: tensor<8x4xf32>, %b: tensor<4xf32>)
    -> (tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x2xf32>) {
  %c = emb.concat %x, %x : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
  %a = emb.add %x bias %b : tensor<8x4xf32> bias tensor<4xf32> -> tensor<8x4xf32>
  %t = emb.add %x, %x : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %s = emb.slice %x[2] : tensor<8x4xf32> -> tensor<8x2xf32>
  return %c, %a, %t, %s : tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x2xf32>
}
