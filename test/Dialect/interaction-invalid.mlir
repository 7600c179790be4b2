// Verifier errors of emb.interaction, emb.cross and emb.dot.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// emb.interaction
//===----------------------------------------------------------------------===//

func.func @one_input(%x: tensor<8x16xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'emb.interaction' op needs at least 2 inputs, got 1}}
  %0 = emb.interaction %x self : tensor<8x16xf32> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

func.func @input_rank(%x: tensor<8x4x4xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'emb.interaction' op input #0 must be a static B x D tensor, got 'tensor<8x4x4xf32>'}}
  %0 = emb.interaction %x, %x : tensor<8x4x4xf32>, tensor<8x4x4xf32> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

func.func @input_dynamic(%x: tensor<?x16xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'emb.interaction' op input #0 must be a static B x D tensor, got 'tensor<?x16xf32>'}}
  %0 = emb.interaction %x, %x : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

func.func @input_mismatch(%x: tensor<8x16xf32>, %e: tensor<8x8xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'emb.interaction' op all inputs must have the same B x D type: input #2 is 'tensor<8x8xf32>', input #0 is 'tensor<8x16xf32>'}}
  %0 = emb.interaction %x, %x, %e : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @pairs(%x: tensor<8x16xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{'emb.interaction' op result must be 8x3 for 3 features, got 'tensor<8x6xf32>'}}
  %0 = emb.interaction %x, %x, %x : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

// With `self`, the diagonal counts too: 3 features give 6 pairs.
func.func @pairs_self(%x: tensor<8x16xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'emb.interaction' op result must be 8x6 for 3 features, got 'tensor<8x3xf32>'}}
  %0 = emb.interaction %x, %x, %x self : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @result_batch(%x: tensor<8x16xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'emb.interaction' op result must be 8x1 for 2 features, got 'tensor<4x1xf32>'}}
  %0 = emb.interaction %x, %x : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

//===----------------------------------------------------------------------===//
// emb.cross
//===----------------------------------------------------------------------===//

// -----

func.func @cross_x0(%x: tensor<?x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  // expected-error @+1 {{'emb.cross' op 'x0' must be a static B x D tensor, got 'tensor<?x32xf32>'}}
  %0 = emb.cross %x, %x, %w, %b : tensor<?x32xf32>, tensor<32x32xf32>, tensor<32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

func.func @cross_weight(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'emb.cross' op weight must be 32x32 (D x D), got 'tensor<32x16xf32>'}}
  %0 = emb.cross %x, %x, %w, %b : tensor<8x32xf32>, tensor<32x16xf32>, tensor<32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @cross_linear(%x: tensor<8x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'emb.cross' op 'linear' (xl W) must have the result's type 'tensor<8x32xf32>', got 'tensor<8x16xf32>'}}
  %0, %1 = emb.cross %x, %x, %w, %b : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> linear tensor<8x16xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @cross_grad_linear(%dy: tensor<8x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>, %l: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.cross_grad' op failed to verify that linear has the type of grad}}
  %0:4 = "emb.cross_grad"(%dy, %dy, %dy, %w, %b, %l) : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<8x16xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>)
  return
}

// -----

func.func @cross_bias(%x: tensor<8x32xf32>, %w: tensor<32x32xf32>, %b: tensor<16xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'emb.cross' op bias must have 32 entries, got 'tensor<16xf32>'}}
  %0 = emb.cross %x, %x, %w, %b : tensor<8x32xf32>, tensor<32x32xf32>, tensor<16xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// The custom form has one type for x0, xl and the result; the generic form can disagree.
func.func @cross_xl(%x: tensor<8x32xf32>, %xl: tensor<8x32xf16>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'emb.cross' op failed to verify that all of {x0, xl, result} have same type}}
  %0 = "emb.cross"(%x, %xl, %w, %b) : (tensor<8x32xf32>, tensor<8x32xf16>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

//===----------------------------------------------------------------------===//
// emb.dot
//===----------------------------------------------------------------------===//

// -----

func.func @dot_lhs(%u: tensor<64xf32>, %v: tensor<8x64xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'emb.dot' op 'lhs' must be a static 2-D tensor, got 'tensor<64xf32>'}}
  %0 = emb.dot %u, %v : tensor<64xf32>, tensor<8x64xf32> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

func.func @dot_result(%u: tensor<8x64xf32>, %v: tensor<8x64xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'emb.dot' op 'result' must be a static 2-D tensor, got 'tensor<8xf32>'}}
  %0 = emb.dot %u, %v : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @dot_rhs_rank(%u: tensor<8x64xf32>, %v: tensor<8x1x5x64xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{'emb.dot' op 'rhs' must be a static B x D or B x K x D tensor, got 'tensor<8x1x5x64xf32>'}}
  %0 = emb.dot %u, %v : tensor<8x64xf32>, tensor<8x1x5x64xf32> -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @dot_rhs_dynamic(%u: tensor<8x64xf32>, %v: tensor<8x?x64xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{'emb.dot' op 'rhs' must be a static B x D or B x K x D tensor, got 'tensor<8x?x64xf32>'}}
  %0 = emb.dot %u, %v : tensor<8x64xf32>, tensor<8x?x64xf32> -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @dot_rhs_width(%u: tensor<8x64xf32>, %v: tensor<8x5x32xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{'emb.dot' op 'rhs' 'tensor<8x5x32xf32>' does not match 'lhs' 'tensor<8x64xf32>' (expected batch 8 and width 64)}}
  %0 = emb.dot %u, %v : tensor<8x64xf32>, tensor<8x5x32xf32> -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @dot_rhs_batch(%u: tensor<8x64xf32>, %v: tensor<4x64xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'emb.dot' op 'rhs' 'tensor<4x64xf32>' does not match 'lhs' 'tensor<8x64xf32>' (expected batch 8 and width 64)}}
  %0 = emb.dot %u, %v : tensor<8x64xf32>, tensor<4x64xf32> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

func.func @dot_result_2d(%u: tensor<8x64xf32>, %v: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'emb.dot' op result shape must be 8x1, got 8x64}}
  %0 = emb.dot %u, %v : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @dot_result_3d(%u: tensor<8x64xf32>, %v: tensor<8x5x64xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'emb.dot' op result shape must be 8x5, got 8x1}}
  %0 = emb.dot %u, %v : tensor<8x64xf32>, tensor<8x5x64xf32> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}
