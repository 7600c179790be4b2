// Verifier errors of emb.sampled_logits and its gradient.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

func.func @weight_layout(%h: tensor<2x3x8xf32>, %w: tensor<20x8xf32>, %t: tensor<2x3xf32>) {
  // expected-error @+1 {{'emb.sampled_logits' op weight must be 8 x V for input 'tensor<2x3x8xf32>' (a dense layer's), got 'tensor<20x8xf32>'}}
  %l, %c, %ids = emb.sampled_logits %h, %w, %t {num_sampled = 4 : i64, stream = 0 : i64, tied = false}
      : tensor<2x3x8xf32>, tensor<20x8xf32>, tensor<2x3xf32> -> tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<4xi64>
  return
}

// -----

func.func @tied_layout(%h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x3xf32>) {
  // expected-error @+1 {{'emb.sampled_logits' op weight must be V x 8 for input 'tensor<2x3x8xf32>' (tied: a table's rows), got 'tensor<8x20xf32>'}}
  %l, %c, %ids = emb.sampled_logits %h, %w, %t {num_sampled = 4 : i64, stream = 0 : i64, tied = true}
      : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32> -> tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<4xi64>
  return
}

// -----

func.func @target_rows(%h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x4xf32>) {
  // expected-error @+1 {{'emb.sampled_logits' op target must have the input's rows ('tensor<2x3x8xf32>' without its last dimension), got 'tensor<2x4xf32>'}}
  %l, %c, %ids = emb.sampled_logits %h, %w, %t {num_sampled = 4 : i64, stream = 0 : i64, tied = false}
      : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x4xf32> -> tensor<2x3x5xf32>, tensor<2x4xf32>, tensor<4xi64>
  return
}

// -----

func.func @logits_width(%h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x3xf32>) {
  // expected-error @+1 {{'emb.sampled_logits' op logits must be the target's rows x (1 + num_sampled) = 5, got 'tensor<2x3x4xf32>'}}
  %l, %c, %ids = emb.sampled_logits %h, %w, %t {num_sampled = 4 : i64, stream = 0 : i64, tied = false}
      : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32> -> tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<4xi64>
  return
}

// -----

func.func @no_samples(%h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x3xf32>) {
  // expected-error @+1 {{'emb.sampled_logits' op num_sampled must be at least 1, got 0}}
  %l, %c, %ids = emb.sampled_logits %h, %w, %t {num_sampled = 0 : i64, stream = 0 : i64, tied = false}
      : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32> -> tensor<2x3x1xf32>, tensor<2x3xf32>, tensor<0xi64>
  return
}

// -----

func.func @candidates(%h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x3xf32>) {
  // expected-error @+1 {{'emb.sampled_logits' op candidates must be tensor<4xi64>, got 'tensor<5xi64>'}}
  %l, %c, %ids = emb.sampled_logits %h, %w, %t {num_sampled = 4 : i64, stream = 0 : i64, tied = false}
      : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32> -> tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<5xi64>
  return
}

// -----

func.func @bias(%h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'emb.sampled_logits' op bias must have one entry per class (20), got 'tensor<8xf32>'}}
  %l, %c, %ids = emb.sampled_logits %h, %w, %t bias %b {num_sampled = 4 : i64, stream = 0 : i64, tied = false}
      : tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32>, tensor<8xf32> -> tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<4xi64>
  return
}

// -----

func.func @one_class(%h: tensor<2x8xf32>, %w: tensor<8x1xf32>, %t: tensor<2xf32>) {
  // expected-error @+1 {{'emb.sampled_logits' op needs 2 to 2^24 classes, got a weight 'tensor<8x1xf32>'}}
  %l, %c, %ids = emb.sampled_logits %h, %w, %t {num_sampled = 1 : i64, stream = 0 : i64, tied = false}
      : tensor<2x8xf32>, tensor<8x1xf32>, tensor<2xf32> -> tensor<2x2xf32>, tensor<2xf32>, tensor<1xi64>
  return
}

// -----

func.func @grad_width(%g: tensor<2x3x4xf32>, %h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x3xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'emb.sampled_logits_grad' op grad must be the target's rows x (1 + 4), got 'tensor<2x3x4xf32>'}}
  %dx, %dw = emb.sampled_logits_grad %g, %h, %w, %t, %ids {tied = false}
      : tensor<2x3x4xf32>, tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32>, tensor<4xi64>
      -> tensor<2x3x8xf32>, tensor<8x20xf32>
  return
}

// -----

func.func @grad_types(%g: tensor<2x3x5xf32>, %h: tensor<2x3x8xf32>, %w: tensor<8x20xf32>, %t: tensor<2x3xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'emb.sampled_logits_grad' op the input and weight gradients must have their operands' types}}
  %dx, %dw = emb.sampled_logits_grad %g, %h, %w, %t, %ids {tied = false}
      : tensor<2x3x5xf32>, tensor<2x3x8xf32>, tensor<8x20xf32>, tensor<2x3xf32>, tensor<4xi64>
      -> tensor<2x3x8xf32>, tensor<20x8xf32>
  return
}
