// Round trip of the sequence ops: jagged ids to B x L x D and back.
// RUN: emb-opt %s | emb-opt | FileCheck %s

// CHECK-LABEL: func.func @lookup_and_pool
// CHECK:      %[[X:.*]] = emb.sequence_lookup @words[%{{.*}}, %{{.*}}] : tensor<?xi64>, tensor<5xi64> -> tensor<4x6x8xf32>
// CHECK:      emb.sequence_pool %[[X]], %{{.*}} mean : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x8xf32>
// CHECK:      emb.sequence_pool %[[X]], %{{.*}} first : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x8xf32>
emb.table @words [100 x 8] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
func.func @lookup_and_pool(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %x = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x6x8xf32>
  %m = emb.sequence_pool %x, %offsets mean : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x8xf32>
  %f = emb.sequence_pool %x, %offsets first : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x8xf32>
  return %m, %f : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @positions
// CHECK:      emb.positions %{{.*}}, %{{.*}} table %{{.*}} learned : tensor<4x6x8xf32>, tensor<5xi64>, tensor<6x8xf32> -> tensor<4x6x8xf32>
// CHECK:      emb.positions %{{.*}}, %{{.*}} sinusoidal : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
// CHECK:      emb.positions_grad %{{.*}}, %{{.*}} learned : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>, tensor<6x8xf32>
// CHECK:      emb.positions_grad %{{.*}}, %{{.*}} sinusoidal : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
func.func @positions(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>, %pos: tensor<6x8xf32>)
    -> (tensor<4x6x8xf32>, tensor<6x8xf32>, tensor<4x6x8xf32>) {
  %l = emb.positions %x, %offsets table %pos learned
      : tensor<4x6x8xf32>, tensor<5xi64>, tensor<6x8xf32> -> tensor<4x6x8xf32>
  %s = emb.positions %l, %offsets sinusoidal : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
  %dx, %dpos = emb.positions_grad %s, %offsets learned
      : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>, tensor<6x8xf32>
  %dy = emb.positions_grad %dx, %offsets sinusoidal : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
  return %dy, %dpos, %s : tensor<4x6x8xf32>, tensor<6x8xf32>, tensor<4x6x8xf32>
}

// CHECK-LABEL: func.func @attention
// CHECK:      %[[O:.*]] = emb.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} heads(2) : tensor<4x6x8xf32>, tensor<5xi64>
// CHECK:      emb.attention %[[O]], %[[O]], %[[O]], %{{.*}} heads(4) causal : tensor<4x6x8xf32>, tensor<5xi64>
// CHECK:      emb.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} heads(2) causal : tensor<4x6x8xf32>, tensor<5xi64>
// CHECK:      %[[W:.*]] = emb.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} heads(2) {dropout = 1.000000e-01 : f64, stream = 3 : i64} : tensor<4x6x8xf32>, tensor<5xi64>
// CHECK:      emb.attention_grad %[[W]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} heads(2) {dropout = 1.000000e-01 : f64, stream = 3 : i64} : tensor<4x6x8xf32>, tensor<5xi64>
func.func @attention(%q: tensor<4x6x8xf32>, %k: tensor<4x6x8xf32>, %v: tensor<4x6x8xf32>,
                     %offsets: tensor<5xi64>) -> (tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>) {
  %o = emb.attention %q, %k, %v, %offsets heads(2) : tensor<4x6x8xf32>, tensor<5xi64>
  %c = emb.attention %o, %o, %o, %offsets heads(4) causal : tensor<4x6x8xf32>, tensor<5xi64>
  %dq, %dk, %dv = emb.attention_grad %c, %q, %k, %v, %offsets heads(2) causal
      : tensor<4x6x8xf32>, tensor<5xi64>
  %w = emb.attention %q, %k, %v, %offsets heads(2) {dropout = 0.1 : f64, stream = 3 : i64}
      : tensor<4x6x8xf32>, tensor<5xi64>
  %wq, %wk, %wv = emb.attention_grad %w, %q, %k, %v, %offsets heads(2) {dropout = 0.1 : f64, stream = 3 : i64}
      : tensor<4x6x8xf32>, tensor<5xi64>
  return %dq, %dv, %wq : tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>
}

// CHECK-LABEL: func.func @grads
// CHECK:      emb.sequence_pool_grad %{{.*}}, %{{.*}} sum : tensor<4x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
// CHECK:      emb.sequence_pool_grad %{{.*}}, %{{.*}} input %{{.*}} max : tensor<4x8xf32>, tensor<5xi64>, tensor<4x6x8xf32> -> tensor<4x6x8xf32>
// CHECK:      emb.sequence_lookup_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<?xi64>, tensor<5xi64>, tensor<4x6x8xf32> -> tensor<?x8xf32>
func.func @grads(%ids: tensor<?xi64>, %offsets: tensor<5xi64>, %dy: tensor<4x8xf32>,
                 %x: tensor<4x6x8xf32>) -> (tensor<4x6x8xf32>, tensor<?x8xf32>) {
  %ds = emb.sequence_pool_grad %dy, %offsets sum : tensor<4x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
  %dm = emb.sequence_pool_grad %dy, %offsets input %x max
      : tensor<4x8xf32>, tensor<5xi64>, tensor<4x6x8xf32> -> tensor<4x6x8xf32>
  %rows = emb.sequence_lookup_grad %ids, %offsets, %dm
      : tensor<?xi64>, tensor<5xi64>, tensor<4x6x8xf32> -> tensor<?x8xf32>
  return %ds, %rows : tensor<4x6x8xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @next_token
// CHECK:      %[[T:.*]] = emb.next_token_targets %{{.*}}, %{{.*}} : tensor<?xi64>, tensor<5xi64> -> tensor<4x6xf32>
// CHECK:      emb.loss sequence_softmax_ce %{{.*}}, %[[T]] : tensor<4x6x100xf32>, tensor<4x6xf32> -> tensor<f32>
// CHECK:      emb.loss_grad sequence_softmax_ce %{{.*}}, %[[T]] : tensor<4x6x100xf32>, tensor<4x6xf32> -> tensor<4x6x100xf32>
func.func @next_token(%ids: tensor<?xi64>, %offsets: tensor<5xi64>, %logits: tensor<4x6x100xf32>)
    -> (tensor<f32>, tensor<4x6x100xf32>) {
  %t = emb.next_token_targets %ids, %offsets : tensor<?xi64>, tensor<5xi64> -> tensor<4x6xf32>
  %l = emb.loss sequence_softmax_ce %logits, %t : tensor<4x6x100xf32>, tensor<4x6xf32> -> tensor<f32>
  %d = emb.loss_grad sequence_softmax_ce %logits, %t
      : tensor<4x6x100xf32>, tensor<4x6xf32> -> tensor<4x6x100xf32>
  return %l, %d : tensor<f32>, tensor<4x6x100xf32>
}

// CHECK-LABEL: func.func @masked_token
// CHECK:      %[[M:.*]], %[[T:.*]] = emb.mask_tokens %{{.*}}, %{{.*}} {mask_id = 100 : i64, rate = 1.500000e-01 : f64, stream = 0 : i64, vocab = 100 : i64} : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<4x6xf32>
// CHECK:      emb.sequence_lookup @words[%[[M]], %{{.*}}]
func.func @masked_token(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> (tensor<4x6x8xf32>, tensor<4x6xf32>) {
  %m, %t = emb.mask_tokens %ids, %offsets {mask_id = 100 : i64, rate = 0.15 : f64, stream = 0 : i64, vocab = 100 : i64}
      : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<4x6xf32>
  %x = emb.sequence_lookup @words[%m, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x6x8xf32>
  return %x, %t : tensor<4x6x8xf32>, tensor<4x6xf32>
}

// CHECK-LABEL: func.func @select_targets
// CHECK:      %[[R:.*]], %[[S:.*]] = emb.select_targets %{{.*}}, %{{.*}} : tensor<4x6x8xf32>, tensor<4x6xf32> -> tensor<4x2x8xf32>, tensor<4x2xf32>
// CHECK:      emb.select_targets_grad %[[R]], %{{.*}} : tensor<4x2x8xf32>, tensor<4x6xf32> -> tensor<4x6x8xf32>
func.func @select_targets(%x: tensor<4x6x8xf32>, %t: tensor<4x6xf32>) -> (tensor<4x6x8xf32>, tensor<4x2xf32>) {
  %r, %s = emb.select_targets %x, %t : tensor<4x6x8xf32>, tensor<4x6xf32> -> tensor<4x2x8xf32>, tensor<4x2xf32>
  %dx = emb.select_targets_grad %r, %t : tensor<4x2x8xf32>, tensor<4x6xf32> -> tensor<4x6x8xf32>
  return %dx, %s : tensor<4x6x8xf32>, tensor<4x2xf32>
}
