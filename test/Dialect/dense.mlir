// Round trip of emb.dense (with and without bias, on B x K and B x L x K), emb.activation (every kind), emb.concat and emb.add (with and without bias).
// RUN: emb-opt %s | emb-opt | FileCheck %s

// CHECK-LABEL: func.func @dense
// CHECK-SAME:    (%[[X:.*]]: tensor<8x13xf32>, %[[W:.*]]: tensor<13x64xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK-NEXT:    %[[Y:.*]] = emb.dense %[[X]], %[[W]], %[[B]] : tensor<8x13xf32>, tensor<13x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:    %[[Z:.*]] = emb.dense %[[X]], %[[W]] : tensor<8x13xf32>, tensor<13x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:    return %[[Y]], %[[Z]]
func.func @dense(%x: tensor<8x13xf32>, %w: tensor<13x64xf32>, %b: tensor<64xf32>)
    -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = emb.dense %x, %w, %b : tensor<8x13xf32>, tensor<13x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %1 = emb.dense %x, %w : tensor<8x13xf32>, tensor<13x64xf32> -> tensor<8x64xf32>
  return %0, %1 : tensor<8x64xf32>, tensor<8x64xf32>
}

// A dense layer and a sum apply to every row: here each of B x L positions.
// CHECK-LABEL: func.func @dense_on_sequence
// CHECK-NEXT:    %[[Y:.*]] = emb.dense %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x16x8xf32>, tensor<8x32xf32>, tensor<32xf32> -> tensor<4x16x32xf32>
// CHECK-NEXT:    %[[S:.*]] = emb.add %[[Y]], %[[Y]] bias %{{.*}} : tensor<4x16x32xf32>, tensor<4x16x32xf32> bias tensor<32xf32> -> tensor<4x16x32xf32>
// CHECK-NEXT:    return %[[S]]
func.func @dense_on_sequence(%x: tensor<4x16x8xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>)
    -> tensor<4x16x32xf32> {
  %0 = emb.dense %x, %w, %b : tensor<4x16x8xf32>, tensor<8x32xf32>, tensor<32xf32> -> tensor<4x16x32xf32>
  %1 = emb.add %0, %0 bias %b : tensor<4x16x32xf32>, tensor<4x16x32xf32> bias tensor<32xf32> -> tensor<4x16x32xf32>
  return %1 : tensor<4x16x32xf32>
}

// CHECK-LABEL: func.func @activations
// CHECK-SAME:    (%[[X:.*]]: tensor<8x64xf32>, %[[H:.*]]: tensor<?x64xbf16>)
// CHECK-NEXT:    %[[R:.*]] = emb.activation relu %[[X]] : tensor<8x64xf32>
// CHECK-NEXT:    %[[S:.*]] = emb.activation sigmoid %[[R]] : tensor<8x64xf32>
// CHECK-NEXT:    %[[T:.*]] = emb.activation tanh %[[S]] : tensor<8x64xf32>
// CHECK-NEXT:    %[[G:.*]] = emb.activation gelu %[[T]] : tensor<8x64xf32>
// CHECK-NEXT:    %[[D:.*]] = emb.activation relu %[[H]] : tensor<?x64xbf16>
// CHECK-NEXT:    return %[[G]], %[[D]]
func.func @activations(%x: tensor<8x64xf32>, %h: tensor<?x64xbf16>) -> (tensor<8x64xf32>, tensor<?x64xbf16>) {
  %0 = emb.activation relu %x : tensor<8x64xf32>
  %1 = emb.activation sigmoid %0 : tensor<8x64xf32>
  %2 = emb.activation tanh %1 : tensor<8x64xf32>
  %3 = emb.activation gelu %2 : tensor<8x64xf32>
  %4 = emb.activation relu %h : tensor<?x64xbf16>
  return %3, %4 : tensor<8x64xf32>, tensor<?x64xbf16>
}

// CHECK-LABEL: func.func @concat
// CHECK-SAME:    (%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<8x8xf32>)
// CHECK-NEXT:    %[[C:.*]] = emb.concat %[[A]], %[[B]], %[[A]] : tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x40xf32>
// CHECK-NEXT:    %[[ONE:.*]] = emb.concat %[[B]] : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:    return %[[C]], %[[ONE]]
func.func @concat(%a: tensor<8x16xf32>, %b: tensor<8x8xf32>) -> (tensor<8x40xf32>, tensor<8x8xf32>) {
  %0 = emb.concat %a, %b, %a : tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x40xf32>
  %1 = emb.concat %b : tensor<8x8xf32> -> tensor<8x8xf32>
  return %0, %1 : tensor<8x40xf32>, tensor<8x8xf32>
}

// CHECK-LABEL: func.func @add
// CHECK-SAME:    (%[[A:.*]]: tensor<8x1xf32>, %[[B:.*]]: tensor<8x1xf32>, %[[G:.*]]: tensor<1xf32>)
// CHECK-NEXT:    %[[S:.*]] = emb.add %[[A]], %[[B]] : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %[[SB:.*]] = emb.add %[[A]], %[[B]], %[[S]] bias %[[G]] : tensor<8x1xf32>, tensor<8x1xf32>, tensor<8x1xf32> bias tensor<1xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %[[ONE:.*]] = emb.add %[[A]] bias %[[G]] : tensor<8x1xf32> bias tensor<1xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    return %[[S]], %[[SB]], %[[ONE]]
func.func @add(%a: tensor<8x1xf32>, %b: tensor<8x1xf32>, %g: tensor<1xf32>)
    -> (tensor<8x1xf32>, tensor<8x1xf32>, tensor<8x1xf32>) {
  %0 = emb.add %a, %b : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
  %1 = emb.add %a, %b, %0 bias %g
      : tensor<8x1xf32>, tensor<8x1xf32>, tensor<8x1xf32> bias tensor<1xf32> -> tensor<8x1xf32>
  %2 = emb.add %a bias %g : tensor<8x1xf32> bias tensor<1xf32> -> tensor<8x1xf32>
  return %0, %1, %2 : tensor<8x1xf32>, tensor<8x1xf32>, tensor<8x1xf32>
}
