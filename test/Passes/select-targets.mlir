// -emb-select-targets: a masked-token loss's row-wise head (layer norm,
// dense) moves behind an emb.select_targets of the target positions and
// computes P = max(1, round(0.25 x 8)) = 2 rows a sequence instead of 8;
// the forward's prediction becomes those rows' logits, and -emb-autodiff
// scatters their gradient back with emb.select_targets_grad. A value the
// head reads that is also used elsewhere stays whole (the chain stops
// there); next-token targets (every position) and a plain softmax are left
// alone.
// RUN: emb-opt %s -split-input-file -emb-select-targets | FileCheck %s
// RUN: emb-opt %s -split-input-file -emb-select-targets -emb-autodiff | FileCheck %s --check-prefix=GRAD

emb.table @words [21 x 8] f32 init<kind = normal, std = 0.1> optimizer<kind = sgd, lr = 0.1>
emb.param @g : tensor<8xf32> init<kind = constant, value = 1.0>
emb.param @b : tensor<8xf32> init<kind = zeros>
emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    -> (tensor<f32>, tensor<4x2x20xf32>)
// CHECK:         %[[M:.*]], %[[T:.*]] = emb.mask_tokens
// CHECK:         %[[X:.*]] = emb.sequence_lookup @words[%[[M]], %arg1]
// CHECK:         %[[R:.*]], %[[S:.*]] = emb.select_targets %[[X]], %[[T]] : tensor<4x8x8xf32>, tensor<4x8xf32> -> tensor<4x2x8xf32>, tensor<4x2xf32>
// CHECK-NEXT:    %[[N:.*]] = emb.layer_norm %[[R]], {{.*}} -> tensor<4x2x8xf32>
// CHECK-NEXT:    %[[L:.*]] = emb.dense %[[N]], {{.*}} -> tensor<4x2x20xf32>
// CHECK-NEXT:    %[[LOSS:.*]] = emb.loss sequence_softmax_ce %[[L]], %[[S]] : tensor<4x2x20xf32>, tensor<4x2xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[LOSS]], %[[L]]
// GRAD-LABEL: func.func @train_step
// GRAD:         emb.loss_grad sequence_softmax_ce {{.*}} -> tensor<4x2x20xf32>
// GRAD:         emb.select_targets_grad {{.*}} : tensor<4x2x8xf32>, tensor<4x8xf32> -> tensor<4x8x8xf32>
// GRAD:         emb.sequence_lookup_grad
func.func @forward(%ids: tensor<?xi64> {emb.feature = "tokens", emb.max_ids = 32 : i64, emb.role = "ids"},
                   %offsets: tensor<5xi64> {emb.feature = "tokens", emb.role = "offsets"})
    -> (tensor<f32>, tensor<4x8x20xf32>) {
  %m, %t = emb.mask_tokens %ids, %offsets {mask_id = 20 : i64, rate = 0.25 : f64, stream = 0 : i64, vocab = 20 : i64}
      : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<4x8xf32>
  %x = emb.sequence_lookup @words[%m, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x8x8xf32>
  %g = emb.get @g : tensor<8xf32>
  %b = emb.get @b : tensor<8xf32>
  %n = emb.layer_norm %x, %g, %b {eps = 1.0e-05 : f64} : tensor<4x8x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8x8xf32>
  %w = emb.get @w : tensor<8x20xf32>
  %l = emb.dense %n, %w : tensor<4x8x8xf32>, tensor<8x20xf32> -> tensor<4x8x20xf32>
  %loss = emb.loss sequence_softmax_ce %l, %t : tensor<4x8x20xf32>, tensor<4x8xf32> -> tensor<f32>
  return %loss, %l : tensor<f32>, tensor<4x8x20xf32>
}

// -----

// The layer norm's result is also pooled: only the dense moves.
emb.table @words [21 x 8] f32 init<kind = normal, std = 0.1> optimizer<kind = sgd, lr = 0.1>
emb.param @g : tensor<8xf32> init<kind = constant, value = 1.0>
emb.param @b : tensor<8xf32> init<kind = zeros>
emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>

// CHECK-LABEL: func.func @forward
// CHECK:         %[[N:.*]] = emb.layer_norm {{.*}} -> tensor<4x8x8xf32>
// CHECK:         emb.sequence_pool %[[N]]
// CHECK:         emb.select_targets %[[N]], {{.*}} -> tensor<4x2x8xf32>, tensor<4x2xf32>
// CHECK-NEXT:    emb.dense {{.*}} -> tensor<4x2x20xf32>
func.func @forward(%ids: tensor<?xi64> {emb.feature = "tokens", emb.max_ids = 32 : i64, emb.role = "ids"},
                   %offsets: tensor<5xi64> {emb.feature = "tokens", emb.role = "offsets"})
    -> (tensor<f32>, tensor<4x8x20xf32>) {
  %m, %t = emb.mask_tokens %ids, %offsets {mask_id = 20 : i64, rate = 0.25 : f64, stream = 0 : i64, vocab = 20 : i64}
      : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<4x8xf32>
  %x = emb.sequence_lookup @words[%m, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x8x8xf32>
  %g = emb.get @g : tensor<8xf32>
  %b = emb.get @b : tensor<8xf32>
  %n = emb.layer_norm %x, %g, %b {eps = 1.0e-05 : f64} : tensor<4x8x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8x8xf32>
  %p = emb.sequence_pool %n, %offsets mean : tensor<4x8x8xf32>, tensor<5xi64> -> tensor<4x8xf32>
  %w = emb.get @w : tensor<8x20xf32>
  %l = emb.dense %n, %w : tensor<4x8x8xf32>, tensor<8x20xf32> -> tensor<4x8x20xf32>
  %loss = emb.loss sequence_softmax_ce %l, %t : tensor<4x8x20xf32>, tensor<4x8xf32> -> tensor<f32>
  return %loss, %l : tensor<f32>, tensor<4x8x20xf32>
}

// -----

// Next-token targets: every position but the last has one. Unchanged.
emb.table @words [20 x 8] f32 init<kind = normal, std = 0.1> optimizer<kind = sgd, lr = 0.1>
emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>

// CHECK-LABEL: func.func @forward
// CHECK-NOT:     emb.select_targets
// CHECK:         emb.loss sequence_softmax_ce {{.*}} : tensor<4x8x20xf32>, tensor<4x8xf32>
func.func @forward(%ids: tensor<?xi64> {emb.feature = "tokens", emb.max_ids = 32 : i64, emb.role = "ids"},
                   %offsets: tensor<5xi64> {emb.feature = "tokens", emb.role = "offsets"})
    -> (tensor<f32>, tensor<4x8x20xf32>) {
  %x = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x8x8xf32>
  %w = emb.get @w : tensor<8x20xf32>
  %l = emb.dense %x, %w : tensor<4x8x8xf32>, tensor<8x20xf32> -> tensor<4x8x20xf32>
  %t = emb.next_token_targets %ids, %offsets : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
  %loss = emb.loss sequence_softmax_ce %l, %t : tensor<4x8x20xf32>, tensor<4x8xf32> -> tensor<f32>
  return %loss, %l : tensor<f32>, tensor<4x8x20xf32>
}
