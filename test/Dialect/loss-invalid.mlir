// Verifier errors of emb.loss, per loss kind.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

func.func @input_rank(%x: tensor<8xf32>, %y: tensor<8x1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'input' must be a static B x N tensor, got 'tensor<8xf32>'}}
  %0 = emb.loss mse %x, %y : tensor<8xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @input_dynamic(%x: tensor<?x1xf32>, %y: tensor<8x1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'input' must be a static B x N tensor, got 'tensor<?x1xf32>'}}
  %0 = emb.loss mse %x, %y : tensor<?x1xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @target_rank(%x: tensor<8x1xf32>, %y: tensor<8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'target' must be a static B x N tensor, got 'tensor<8xf32>'}}
  %0 = emb.loss bce_with_logits %x, %y : tensor<8x1xf32>, tensor<8xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @batch(%x: tensor<8x1xf32>, %y: tensor<4x1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'target' batch (4) != 'input' batch (8)}}
  %0 = emb.loss bce_with_logits %x, %y : tensor<8x1xf32>, tensor<4x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @bce_width(%x: tensor<8x2xf32>, %y: tensor<8x1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'bce_with_logits' expects B x 1 input and target, got 'tensor<8x2xf32>' and 'tensor<8x1xf32>'}}
  %0 = emb.loss bce_with_logits %x, %y : tensor<8x2xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @mse_width(%x: tensor<8x1xf32>, %y: tensor<8x3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'mse' expects B x 1 input and target, got 'tensor<8x1xf32>' and 'tensor<8x3xf32>'}}
  %0 = emb.loss mse %x, %y : tensor<8x1xf32>, tensor<8x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @softmax_classes(%x: tensor<8x1xf32>, %y: tensor<8x1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'softmax_ce' needs 2 to 2^24 classes, got 'tensor<8x1xf32>'}}
  %0 = emb.loss softmax_ce %x, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A one-hot target is not accepted: the target holds the class index.
func.func @softmax_target(%x: tensor<8x10xf32>, %y: tensor<8x10xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'softmax_ce' expects a B x 1 class-index target, got 'tensor<8x10xf32>'}}
  %0 = emb.loss softmax_ce %x, %y : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @neg_sampling_input(%x: tensor<8x5xf32>, %y: tensor<8x5xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'neg_sampling' expects B x 1 positive scores, got 'tensor<8x5xf32>'}}
  %0 = emb.loss neg_sampling %x, %y : tensor<8x5xf32>, tensor<8x5xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @result_rank(%x: tensor<8x1xf32>, %y: tensor<8x1xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'emb.loss' op result #0 must be 0D tensor of floating-point values, but got 'tensor<1xf32>'}}
  %0 = emb.loss mse %x, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @unknown_kind(%x: tensor<8x1xf32>, %y: tensor<8x1xf32>) -> tensor<f32> {
  // expected-error @+2 {{expected ::embc::emb::LossKind to be one of: bce_with_logits, mse, softmax_ce, neg_sampling}}
  // expected-error @+1 {{failed to parse Emb_LossKindAttr parameter 'value'}}
  %0 = emb.loss hinge %x, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @sequence_rank(%x: tensor<8x5xf32>, %y: tensor<8x1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'sequence_softmax_ce' expects static B x L x C logits, got 'tensor<8x5xf32>'}}
  %0 = emb.loss sequence_softmax_ce %x, %y : tensor<8x5xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @sequence_classes(%x: tensor<8x4x1xf32>, %y: tensor<8x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'sequence_softmax_ce' needs 2 to 2^24 classes, got 'tensor<8x4x1xf32>'}}
  %0 = emb.loss sequence_softmax_ce %x, %y : tensor<8x4x1xf32>, tensor<8x4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @sequence_target(%x: tensor<8x4x6xf32>, %y: tensor<8x3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'emb.loss' op 'sequence_softmax_ce' expects a B x L target (8x4) for logits 'tensor<8x4x6xf32>', got 'tensor<8x3xf32>'}}
  %0 = emb.loss sequence_softmax_ce %x, %y : tensor<8x4x6xf32>, tensor<8x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
