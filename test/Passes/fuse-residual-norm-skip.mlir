// -emb-fuse leaves a layer norm of an add with a bias alone (not a
// residual connection): no add_layer_norm group.
// RUN: emb-opt %s -emb-autodiff -emb-fuse | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK-NOT:     add_layer_norm
// CHECK:         emb.layer_norm
// CHECK:         func.func @update
module @biased attributes {emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.param @w0 : tensor<16x16xf32> init<kind = xavier_uniform>
  emb.param @c : tensor<16xf32> init<kind = zeros>
  emb.param @g : tensor<16xf32> init<kind = constant, value = 1.0>
  emb.param @b : tensor<16xf32> init<kind = zeros>
  emb.param @w2 : tensor<16x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<8x16xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<8x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<8x1xf32>) {
    %w0 = emb.get @w0 : tensor<16x16xf32>
    %h0 = emb.dense %x, %w0 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
    %c = emb.get @c : tensor<16xf32>
    %h = emb.add %h0, %x bias %c : tensor<8x16xf32>, tensor<8x16xf32> bias tensor<16xf32> -> tensor<8x16xf32>
    %g = emb.get @g : tensor<16xf32>
    %b = emb.get @b : tensor<16xf32>
    %n = emb.layer_norm %h, %g, %b {eps = 1.0e-05 : f64} : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16xf32>
    %w2 = emb.get @w2 : tensor<16x1xf32>
    %z = emb.dense %n, %w2 : tensor<8x16xf32>, tensor<16x1xf32> -> tensor<8x1xf32>
    %l = emb.loss bce_with_logits %z, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    return %l, %z : tensor<f32>, tensor<8x1xf32>
  }
}
