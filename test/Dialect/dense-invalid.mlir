// Verifier errors of emb.dense, emb.activation, emb.concat and emb.add.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// emb.dense
//===----------------------------------------------------------------------===//

func.func @input_rank(%x: tensor<8xf32>, %w: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'emb.dense' op 'input' must be a static tensor of rank 2 or more (rows x columns, or B x L x columns), got 'tensor<8xf32>'}}
  %0 = emb.dense %x, %w : tensor<8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @input_dynamic(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'emb.dense' op 'input' must be a static tensor of rank 2 or more (rows x columns, or B x L x columns), got 'tensor<?x8xf32>'}}
  %0 = emb.dense %x, %w : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @weight_rank(%x: tensor<2x8xf32>, %w: tensor<8x4x1xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.dense' op 'weight' must be a static 2-D tensor, got 'tensor<8x4x1xf32>'}}
  %0 = emb.dense %x, %w : tensor<2x8xf32>, tensor<8x4x1xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @result_dynamic(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{'emb.dense' op result type must be 'tensor<2x4xf32>', got 'tensor<2x?xf32>'}}
  %0 = emb.dense %x, %w : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

func.func @inner_dim(%x: tensor<2x8xf32>, %w: tensor<6x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.dense' op input width (8) != weight rows (6)}}
  %0 = emb.dense %x, %w : tensor<2x8xf32>, tensor<6x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @result_shape(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'emb.dense' op result type must be 'tensor<2x4xf32>', got 'tensor<2x8xf32>'}}
  %0 = emb.dense %x, %w : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @result_batch(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'emb.dense' op result type must be 'tensor<2x4xf32>', got 'tensor<3x4xf32>'}}
  %0 = emb.dense %x, %w : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// On a sequence, every position is a row: the result keeps B x L.
func.func @result_positions(%x: tensor<2x3x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{'emb.dense' op result type must be 'tensor<2x3x4xf32>', got 'tensor<2x4x4xf32>'}}
  %0 = emb.dense %x, %w : tensor<2x3x8xf32>, tensor<8x4xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @bias_size(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.dense' op bias must have 4 entries (the output width), got 'tensor<8xf32>'}}
  %0 = emb.dense %x, %w, %b : tensor<2x8xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @bias_rank(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.dense' op bias must have 4 entries (the output width), got 'tensor<1x4xf32>'}}
  %0 = emb.dense %x, %w, %b : tensor<2x8xf32>, tensor<8x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @integer_input(%x: tensor<2x8xi32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.dense' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<2x8xi32>'}}
  %0 = emb.dense %x, %w : tensor<2x8xi32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// The custom form only accepts tensors; the generic form reaches the ODS operand check.
func.func @vector_input(%x: vector<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.dense' op operand #0 must be ranked tensor of floating-point values, but got 'vector<2x8xf32>'}}
  %0 = "emb.dense"(%x, %w) : (vector<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// emb.activation
//===----------------------------------------------------------------------===//

// -----

func.func @activation_kind(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{expected ::embc::emb::Activation to be one of: relu, sigmoid, tanh, gelu}}
  // expected-error @+1 {{failed to parse Emb_ActivationAttr parameter 'value'}}
  %0 = emb.activation softplus %x : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// The custom form only accepts tensors; the generic form reaches the ODS operand check.
func.func @activation_unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'emb.activation' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<*xf32>'}}
  %0 = "emb.activation"(%x) {kind = #emb<activation relu>} : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// The custom form has a single type; only the generic form can disagree.
func.func @activation_result(%x: tensor<2x8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{'emb.activation' op requires the same type for all operands and results}}
  %0 = "emb.activation"(%x) {kind = #emb<activation relu>} : (tensor<2x8xf32>) -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

//===----------------------------------------------------------------------===//
// emb.concat
//===----------------------------------------------------------------------===//

// -----

// The custom form cannot spell an empty type list; the generic form can.
func.func @concat_empty() -> tensor<2x8xf32> {
  // expected-error @+1 {{'emb.concat' op needs at least one input}}
  %0 = "emb.concat"() : () -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @concat_result(%a: tensor<2x8xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'emb.concat' op 'result' must be a static 2-D tensor, got 'tensor<16xf32>'}}
  %0 = emb.concat %a, %a : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @concat_input(%a: tensor<2x8xf32>, %b: tensor<?x8xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'emb.concat' op 'input #1' must be a static 2-D tensor, got 'tensor<?x8xf32>'}}
  %0 = emb.concat %a, %b : tensor<2x8xf32>, tensor<?x8xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @concat_batch(%a: tensor<2x8xf32>, %b: tensor<3x8xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'emb.concat' op input #1 has batch 3, expected 2}}
  %0 = emb.concat %a, %b : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @concat_width(%a: tensor<2x8xf32>, %b: tensor<2x4xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'emb.concat' op result width (16) != sum of input widths (12)}}
  %0 = emb.concat %a, %b : tensor<2x8xf32>, tensor<2x4xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

//===----------------------------------------------------------------------===//
// emb.add
//===----------------------------------------------------------------------===//

// -----

// The custom form cannot spell an empty type list; the generic form can.
func.func @add_empty(%g: tensor<1xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'emb.add' op needs at least one input}}
  %0 = "emb.add"(%g) <{operandSegmentSizes = array<i32: 0, 1>}> : (tensor<1xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @add_result(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'emb.add' op result must be a static tensor of rank 2 or more (rows x columns, or B x L x columns), got 'tensor<2xf32>'}}
  %0 = emb.add %a, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @add_input_type(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'emb.add' op input #1 has type 'tensor<2x2xf32>', expected the result type 'tensor<2x1xf32>'}}
  %0 = emb.add %a, %b : tensor<2x1xf32>, tensor<2x2xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @add_mixed_precision(%a: tensor<2x1xf32>, %b: tensor<2x1xf16>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'emb.add' op operands and result must share one element type, got 'f32' and 'f16'}}
  %0 = emb.add %a, %b : tensor<2x1xf32>, tensor<2x1xf16> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @dense_mixed_precision(%x: tensor<2x3xf32>, %w: tensor<3x4xbf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.dense' op operands and result must share one element type, got 'f32' and 'bf16'}}
  %0 = emb.dense %x, %w : tensor<2x3xf32>, tensor<3x4xbf16> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @add_bias(%a: tensor<2x4xf32>, %g: tensor<1xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.add' op bias must have 4 entries, got 'tensor<1xf32>'}}
  %0 = emb.add %a bias %g : tensor<2x4xf32> bias tensor<1xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @add_bias_rank(%a: tensor<2x4xf32>, %g: tensor<1x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'emb.add' op bias must have 4 entries, got 'tensor<1x4xf32>'}}
  %0 = emb.add %a bias %g : tensor<2x4xf32> bias tensor<1x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
