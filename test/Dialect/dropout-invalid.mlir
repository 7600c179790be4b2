// Verifier errors of emb.dropout and emb.dropout_grad.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

func.func @rate_one(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'emb.dropout' op rate must be in [0, 1), got 1.000000e+00}}
  %y = emb.dropout %x {rate = 1.0 : f64, stream = 0 : i64} : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @rate_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'emb.dropout_grad' op rate must be in [0, 1), got -1.000000e-01}}
  %y = emb.dropout_grad %x {rate = -0.1 : f64, stream = 0 : i64} : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @stream_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'emb.dropout' op stream must be non-negative, got -2}}
  %y = emb.dropout %x {rate = 0.5 : f64, stream = -2 : i64} : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @dynamic(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'emb.dropout' op input must be a static tensor of rank 1 or more, got 'tensor<?x64xf32>'}}
  %y = emb.dropout %x {rate = 0.5 : f64, stream = 0 : i64} : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @missing_stream(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'emb.dropout' op requires attribute 'stream'}}
  %y = emb.dropout %x {rate = 0.5 : f64} : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
