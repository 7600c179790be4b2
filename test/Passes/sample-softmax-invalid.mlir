// What -emb-sample-softmax refuses, at the marked loss.
// RUN: emb-opt %s -split-input-file -emb-sample-softmax -verify-diagnostics

// The logits are not an output projection's.
emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>
func.func @forward(%x: tensor<4x8x8xf32>, %t: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8x20xf32>) {
  %w = emb.get @w : tensor<8x20xf32>
  %l = emb.dense %x, %w : tensor<4x8x8xf32>, tensor<8x20xf32> -> tensor<4x8x20xf32>
  %a = emb.activation tanh %l : tensor<4x8x20xf32>
  // expected-error @+1 {{'emb.loss' op is marked emb.sampled but its logits come from 'emb.activation', not an output projection (emb.dense or emb.table_scores)}}
  %loss = emb.loss sequence_softmax_ce %a, %t {emb.sampled = 4 : i64} : tensor<4x8x20xf32>, tensor<4x8xf32> -> tensor<f32>
  return %loss, %a : tensor<f32>, tensor<4x8x20xf32>
}

// -----

// As many samples as classes.
emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>
func.func @forward(%x: tensor<4x8x8xf32>, %t: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8x20xf32>) {
  %w = emb.get @w : tensor<8x20xf32>
  %l = emb.dense %x, %w : tensor<4x8x8xf32>, tensor<8x20xf32> -> tensor<4x8x20xf32>
  // expected-error @+1 {{'emb.loss' op samples 20 of 20 classes: emb.sampled must be in [1, 20)}}
  %loss = emb.loss sequence_softmax_ce %l, %t {emb.sampled = 20 : i64} : tensor<4x8x20xf32>, tensor<4x8xf32> -> tensor<f32>
  return %loss, %l : tensor<f32>, tensor<4x8x20xf32>
}

// -----

// Not a token loss.
emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>
func.func @forward(%x: tensor<4x8xf32>, %t: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x20xf32>) {
  %w = emb.get @w : tensor<8x20xf32>
  %l = emb.dense %x, %w : tensor<4x8xf32>, tensor<8x20xf32> -> tensor<4x20xf32>
  // expected-error @+1 {{'emb.loss' op is marked emb.sampled but is 'softmax_ce': only a token loss (sequence_softmax_ce) samples its classes}}
  %loss = emb.loss softmax_ce %l, %t {emb.sampled = 4 : i64} : tensor<4x20xf32>, tensor<4x1xf32> -> tensor<f32>
  return %loss, %l : tensor<f32>, tensor<4x20xf32>
}

// -----

// The logits feed another op.
emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>
func.func @forward(%x: tensor<4x8x8xf32>, %t: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8x20xf32>) {
  %w = emb.get @w : tensor<8x20xf32>
  %l = emb.dense %x, %w : tensor<4x8x8xf32>, tensor<8x20xf32> -> tensor<4x8x20xf32>
  %a = emb.activation tanh %l : tensor<4x8x20xf32>
  // expected-error @+1 {{'emb.loss' op samples the logits of a projection that 'emb.activation' reads too: only the loss may}}
  %loss = emb.loss sequence_softmax_ce %l, %t {emb.sampled = 4 : i64} : tensor<4x8x20xf32>, tensor<4x8xf32> -> tensor<f32>
  return %loss, %a : tensor<f32>, tensor<4x8x20xf32>
}
