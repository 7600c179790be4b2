// Verifier errors of emb.layer_norm and emb.layer_norm_grad.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

func.func @rank_one(%x: tensor<64xf32>, %g: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'emb.layer_norm' op input must be a static tensor of rank 2 or more, got 'tensor<64xf32>'}}
  %y = emb.layer_norm %x, %g, %g {eps = 1.0e-05 : f64} : tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @dynamic(%x: tensor<?x64xf32>, %g: tensor<64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'emb.layer_norm' op input must be a static tensor of rank 2 or more, got 'tensor<?x64xf32>'}}
  %y = emb.layer_norm %x, %g, %g {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @gamma_width(%x: tensor<8x64xf32>, %g: tensor<32xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'emb.layer_norm' op gamma and beta must have 64 entries (the input's last dimension), got 'tensor<32xf32>'}}
  %y = emb.layer_norm %x, %g, %b {eps = 1.0e-05 : f64} : tensor<8x64xf32>, tensor<32xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @result_shape(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'emb.layer_norm' op result type 'tensor<4x64xf32>' must be the input's, 'tensor<8x64xf32>'}}
  %y = emb.layer_norm %x, %g, %g {eps = 1.0e-05 : f64} : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @eps_zero(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'emb.layer_norm' op eps must be positive and finite, got 0}}
  %y = emb.layer_norm %x, %g, %g {eps = 0.0 : f64} : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @grad_gamma_type(%dy: tensor<8x64xf32>, %x: tensor<8x64xf32>, %g: tensor<64xf32>)
    -> tensor<32xf32> {
  // expected-error @+1 {{'emb.layer_norm_grad' op gamma_grad and beta_grad must have gamma's type 'tensor<64xf32>'}}
  %dx, %dg, %db = emb.layer_norm_grad %dy, %x, %g {eps = 1.0e-05 : f64}
      : tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>, tensor<32xf32>, tensor<64xf32>
  return %dg : tensor<32xf32>
}

// -----

func.func @grad_dy_shape(%dy: tensor<4x64xf32>, %x: tensor<8x64xf32>, %g: tensor<64xf32>)
    -> tensor<8x64xf32> {
  // expected-error @+1 {{'emb.layer_norm_grad' op grad and input_grad must have the input's type 'tensor<8x64xf32>'}}
  %dx, %dg, %db = emb.layer_norm_grad %dy, %x, %g {eps = 1.0e-05 : f64}
      : tensor<4x64xf32>, tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>
  return %dx : tensor<8x64xf32>
}
