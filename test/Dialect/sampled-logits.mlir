// emb.sampled_logits and its gradient print and parse back: a dense
// layer's D x V weight with a bias, and a table's V x D rows (tied).
// RUN: emb-opt %s | emb-opt | FileCheck %s

// CHECK-LABEL: func.func @dense
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = emb.sampled_logits %arg0, %arg1, %arg2 bias %arg3 {num_sampled = 4 : i64, stream = 0 : i64, tied = false} : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32>, tensor<20xf32> -> tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<4xi64>
// CHECK: emb.sampled_logits_grad %{{.*}}, %arg0, %arg1, %arg2, %{{.*}} {tied = false} : tensor<2x3x5xf32>, tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32>, tensor<4xi64> -> tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<20xf32>
func.func @dense(%h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x3xf32>, %b: tensor<20xf32>)
    -> (tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<20xf32>) {
  %l, %c, %ids = emb.sampled_logits %h, %w, %t bias %b {num_sampled = 4 : i64, stream = 0 : i64, tied = false}
      : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32>, tensor<20xf32>
      -> tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<4xi64>
  %dx, %dw, %db = emb.sampled_logits_grad %l, %h, %w, %t, %ids {tied = false}
      : tensor<2x3x5xf32>, tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32>, tensor<4xi64>
      -> tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<20xf32>
  return %dx, %dw, %db : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<20xf32>
}

// CHECK-LABEL: func.func @tied
// CHECK: emb.sampled_logits %arg0, %arg1, %arg2 {num_sampled = 2 : i64, stream = 1 : i64, tied = true} : tensor<6x8xf32>, tensor<21x8xf32>, tensor<6xf32> -> tensor<6x3xf32>, tensor<6xf32>, tensor<2xi64>
// CHECK: emb.sampled_logits_grad {{.*}} {tied = true} : {{.*}} -> tensor<6x8xf32>, tensor<21x8xf32>{{$}}
func.func @tied(%h: tensor<6x8xf32>, %e: tensor<21x8xf32>, %t: tensor<6xf32>) -> (tensor<6x8xf32>, tensor<21x8xf32>) {
  %l, %c, %ids = emb.sampled_logits %h, %e, %t {num_sampled = 2 : i64, stream = 1 : i64, tied = true}
      : tensor<6x8xf32>, tensor<21x8xf32>, tensor<6xf32> -> tensor<6x3xf32>, tensor<6xf32>, tensor<2xi64>
  %dx, %de = emb.sampled_logits_grad %l, %h, %e, %t, %ids {tied = true}
      : tensor<6x3xf32>, tensor<6x8xf32>, tensor<21x8xf32>, tensor<6xf32>, tensor<2xi64>
      -> tensor<6x8xf32>, tensor<21x8xf32>
  return %dx, %de : tensor<6x8xf32>, tensor<21x8xf32>
}
