// Verifier errors of the backward and update ops (GradOps.cpp), including their param and table symbol checks.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// emb.loss_grad
//===----------------------------------------------------------------------===//

func.func @neg_sampling_one_result(%x: tensor<8x1xf32>, %neg: tensor<8x5xf32>) {
  // expected-error @+1 {{'emb.loss_grad' op 'neg_sampling' has 2 gradient result(s), got 1}}
  %0 = emb.loss_grad neg_sampling %x, %neg : tensor<8x1xf32>, tensor<8x5xf32> -> tensor<8x1xf32>
  return
}

// -----

func.func @mse_two_results(%x: tensor<8x1xf32>, %y: tensor<8x1xf32>) {
  // expected-error @+1 {{'emb.loss_grad' op 'mse' has 1 gradient result(s), got 2}}
  %0:2 = emb.loss_grad mse %x, %y : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>, tensor<8x1xf32>
  return
}

// -----

func.func @no_result(%x: tensor<8x1xf32>, %y: tensor<8x1xf32>) {
  // expected-error @+1 {{'emb.loss_grad' op 'bce_with_logits' has 1 gradient result(s), got 0}}
  "emb.loss_grad"(%x, %y) <{kind = #emb<loss_kind bce_with_logits>}> : (tensor<8x1xf32>, tensor<8x1xf32>) -> ()
  return
}

// -----

func.func @input_type(%c: tensor<8x10xf32>, %y: tensor<8x1xf32>) {
  // expected-error @+1 {{'emb.loss_grad' op gradient type 'tensor<8x1xf32>' must match the input type 'tensor<8x10xf32>'}}
  %0 = emb.loss_grad softmax_ce %c, %y : tensor<8x10xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
  return
}

// -----

func.func @target_type(%x: tensor<8x1xf32>, %neg: tensor<8x5xf32>) {
  // expected-error @+1 {{'emb.loss_grad' op gradient type 'tensor<8x1xf32>' must match the target type 'tensor<8x5xf32>'}}
  %0:2 = emb.loss_grad neg_sampling %x, %neg : tensor<8x1xf32>, tensor<8x5xf32> -> tensor<8x1xf32>, tensor<8x1xf32>
  return
}

// -----

func.func @element_type(%x: tensor<8x1xf32>, %y: tensor<8x1xbf16>) {
  // expected-error @+1 {{'emb.loss_grad' op operands and result must share one element type, got 'f32' and 'bf16'}}
  %0 = emb.loss_grad bce_with_logits %x, %y : tensor<8x1xf32>, tensor<8x1xbf16> -> tensor<8x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// emb.dense_grad_input
//===----------------------------------------------------------------------===//

// -----

func.func @dense_grad_input_grad_rank(%dy: tensor<64xf32>, %w: tensor<13x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_input' op 'grad' must be a static tensor of rank 2 or more (rows x columns, or B x L x columns), got 'tensor<64xf32>'}}
  %0 = emb.dense_grad_input %dy, %w : tensor<64xf32>, tensor<13x64xf32> -> tensor<8x13xf32>
  return
}

// -----

func.func @dense_grad_input_weight_dynamic(%dy: tensor<8x64xf32>, %w: tensor<?x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_input' op 'weight' must be a static 2-D tensor, got 'tensor<?x64xf32>'}}
  %0 = emb.dense_grad_input %dy, %w : tensor<8x64xf32>, tensor<?x64xf32> -> tensor<8x13xf32>
  return
}

// -----

func.func @dense_grad_input_result_rank(%dy: tensor<8x64xf32>, %w: tensor<13x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_input' op expected grad [rows] x N, weight K x N and result [rows] x K, got 'tensor<8x64xf32>', 'tensor<13x64xf32>', 'tensor<8x13x1xf32>'}}
  %0 = emb.dense_grad_input %dy, %w : tensor<8x64xf32>, tensor<13x64xf32> -> tensor<8x13x1xf32>
  return
}

// -----

func.func @dense_grad_input_width(%dy: tensor<8x32xf32>, %w: tensor<13x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_input' op expected grad [rows] x N, weight K x N and result [rows] x K, got 'tensor<8x32xf32>', 'tensor<13x64xf32>', 'tensor<8x13xf32>'}}
  %0 = emb.dense_grad_input %dy, %w : tensor<8x32xf32>, tensor<13x64xf32> -> tensor<8x13xf32>
  return
}

// -----

func.func @dense_grad_input_result(%dy: tensor<8x64xf32>, %w: tensor<13x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_input' op expected grad [rows] x N, weight K x N and result [rows] x K, got 'tensor<8x64xf32>', 'tensor<13x64xf32>', 'tensor<4x13xf32>'}}
  %0 = emb.dense_grad_input %dy, %w : tensor<8x64xf32>, tensor<13x64xf32> -> tensor<4x13xf32>
  return
}

// -----

func.func @dense_grad_input_element(%dy: tensor<8x64xbf16>, %w: tensor<13x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_input' op operands and result must share one element type, got 'bf16' and 'f32'}}
  %0 = emb.dense_grad_input %dy, %w : tensor<8x64xbf16>, tensor<13x64xf32> -> tensor<8x13xf32>
  return
}

//===----------------------------------------------------------------------===//
// emb.dense_grad_weight
//===----------------------------------------------------------------------===//

// -----

func.func @dense_grad_weight_input_rank(%x: tensor<8x13x1xf32>, %dy: tensor<8x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_weight' op expected input [rows] x K, grad [rows] x N and result K x N, got 'tensor<8x13x1xf32>', 'tensor<8x64xf32>', 'tensor<13x64xf32>'}}
  %0 = emb.dense_grad_weight %x, %dy : tensor<8x13x1xf32>, tensor<8x64xf32> -> tensor<13x64xf32>
  return
}

// -----

func.func @dense_grad_weight_grad_dynamic(%x: tensor<8x13xf32>, %dy: tensor<?x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_weight' op 'grad' must be a static tensor of rank 2 or more (rows x columns, or B x L x columns), got 'tensor<?x64xf32>'}}
  %0 = emb.dense_grad_weight %x, %dy : tensor<8x13xf32>, tensor<?x64xf32> -> tensor<13x64xf32>
  return
}

// -----

func.func @dense_grad_weight_result_rank(%x: tensor<8x13xf32>, %dy: tensor<8x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_weight' op result must be a static 2-D tensor, got 'tensor<832xf32>'}}
  %0 = emb.dense_grad_weight %x, %dy : tensor<8x13xf32>, tensor<8x64xf32> -> tensor<832xf32>
  return
}

// -----

func.func @dense_grad_weight_batch(%x: tensor<8x13xf32>, %dy: tensor<4x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_weight' op expected input [rows] x K, grad [rows] x N and result K x N, got 'tensor<8x13xf32>', 'tensor<4x64xf32>', 'tensor<13x64xf32>'}}
  %0 = emb.dense_grad_weight %x, %dy : tensor<8x13xf32>, tensor<4x64xf32> -> tensor<13x64xf32>
  return
}

// -----

func.func @dense_grad_weight_transposed(%x: tensor<8x13xf32>, %dy: tensor<8x64xf32>) {
  // expected-error @+1 {{'emb.dense_grad_weight' op expected input [rows] x K, grad [rows] x N and result K x N, got 'tensor<8x13xf32>', 'tensor<8x64xf32>', 'tensor<64x13xf32>'}}
  %0 = emb.dense_grad_weight %x, %dy : tensor<8x13xf32>, tensor<8x64xf32> -> tensor<64x13xf32>
  return
}

// -----

func.func @dense_grad_weight_element(%x: tensor<8x13xf16>, %dy: tensor<8x64xf16>) {
  // expected-error @+1 {{'emb.dense_grad_weight' op operands and result must share one element type, got 'f16' and 'f32'}}
  %0 = emb.dense_grad_weight %x, %dy : tensor<8x13xf16>, tensor<8x64xf16> -> tensor<13x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// emb.bias_grad
//===----------------------------------------------------------------------===//

// -----

func.func @bias_grad_rank(%dy: tensor<64xf32>) {
  // expected-error @+1 {{'emb.bias_grad' op 'grad' must be a static tensor of rank 2 or more (rows x columns, or B x L x columns), got 'tensor<64xf32>'}}
  %0 = emb.bias_grad %dy : tensor<64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @bias_grad_width(%dy: tensor<8x64xf32>) {
  // expected-error @+1 {{'emb.bias_grad' op result must have one entry per column of 'grad' (64), got 'tensor<32xf32>'}}
  %0 = emb.bias_grad %dy : tensor<8x64xf32> -> tensor<32xf32>
  return
}

// -----

func.func @bias_grad_result_rank(%dy: tensor<8x64xf32>) {
  // expected-error @+1 {{'emb.bias_grad' op result must have one entry per column of 'grad' (64), got 'tensor<1x64xf32>'}}
  %0 = emb.bias_grad %dy : tensor<8x64xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @bias_grad_element(%dy: tensor<8x64xf32>) {
  // expected-error @+1 {{'emb.bias_grad' op operands and result must share one element type, got 'f32' and 'f64'}}
  %0 = emb.bias_grad %dy : tensor<8x64xf32> -> tensor<64xf64>
  return
}

//===----------------------------------------------------------------------===//
// emb.activation_grad
//===----------------------------------------------------------------------===//

// -----

func.func @activation_grad_types(%dy: tensor<8x64xf32>, %x: tensor<8x32xf32>) {
  // expected-error @+1 {{'emb.activation_grad' op requires the same type for all operands and results}}
  %0 = "emb.activation_grad"(%dy, %x) <{kind = #emb<activation relu>}> : (tensor<8x64xf32>, tensor<8x32xf32>) -> tensor<8x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// emb.slice
//===----------------------------------------------------------------------===//

// -----

func.func @slice_past_end(%dy: tensor<8x24xf32>) {
  // expected-error @+1 {{'emb.slice' op columns [16, 32) of 'tensor<8x24xf32>' do not fit}}
  %0 = emb.slice %dy [16] : tensor<8x24xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @slice_batch(%dy: tensor<8x24xf32>) {
  // expected-error @+1 {{'emb.slice' op columns [0, 8) of 'tensor<8x24xf32>' do not fit}}
  %0 = emb.slice %dy [0] : tensor<8x24xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_input_rank(%dy: tensor<8x4x6xf32>) {
  // expected-error @+1 {{'emb.slice' op 'input' must be a static 2-D tensor, got 'tensor<8x4x6xf32>'}}
  %0 = emb.slice %dy [0] : tensor<8x4x6xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @slice_result_dynamic(%dy: tensor<8x24xf32>) {
  // expected-error @+1 {{'emb.slice' op result must be a static 2-D tensor, got 'tensor<?x8xf32>'}}
  %0 = emb.slice %dy [0] : tensor<8x24xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @slice_negative_offset(%dy: tensor<8x24xf32>) {
  // expected-error @+1 {{'emb.slice' op attribute 'offset' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = emb.slice %dy [-1] : tensor<8x24xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @slice_element(%dy: tensor<8x24xf32>) {
  // expected-error @+1 {{'emb.slice' op operands and result must share one element type, got 'f32' and 'bf16'}}
  %0 = emb.slice %dy [0] : tensor<8x24xf32> -> tensor<8x8xbf16>
  return
}

//===----------------------------------------------------------------------===//
// emb.interaction_grad
//===----------------------------------------------------------------------===//

// -----

func.func @interaction_grad_count(%dy: tensor<8x1xf32>, %a: tensor<8x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.interaction_grad' op expected one gradient per input (2), got 1}}
  %0 = emb.interaction_grad %dy, %a, %b : tensor<8x1xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @interaction_grad_type(%dy: tensor<8x1xf32>, %a: tensor<8x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.interaction_grad' op gradient type 'tensor<8x8xf32>' must match its input type 'tensor<8x16xf32>'}}
  %0:2 = emb.interaction_grad %dy, %a, %b : tensor<8x1xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>, tensor<8x8xf32>
  return
}

// -----

func.func @interaction_grad_grad_rank(%dy: tensor<8xf32>, %a: tensor<8x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.interaction_grad' op 'grad' must be a static 2-D tensor, got 'tensor<8xf32>'}}
  %0:2 = emb.interaction_grad %dy, %a, %b : tensor<8xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>, tensor<8x16xf32>
  return
}

// -----

// Three inputs interact in 3 pairs, 6 with self.
func.func @interaction_grad_pairs(%dy: tensor<8x6xf32>, %a: tensor<8x16xf32>, %b: tensor<8x16xf32>, %c: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.interaction_grad' op 'grad' must have 3 columns for 3 inputs, got 'tensor<8x6xf32>'}}
  %0:3 = emb.interaction_grad %dy, %a, %b, %c : tensor<8x6xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @interaction_grad_pairs_self(%dy: tensor<8x3xf32>, %a: tensor<8x16xf32>, %b: tensor<8x16xf32>, %c: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.interaction_grad' op 'grad' must have 6 columns for 3 inputs, got 'tensor<8x3xf32>'}}
  %0:3 = emb.interaction_grad %dy, %a, %b, %c self : tensor<8x3xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @interaction_grad_element(%dy: tensor<8x1xbf16>, %a: tensor<8x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.interaction_grad' op operands and result must share one element type, got 'bf16' and 'f32'}}
  %0:2 = emb.interaction_grad %dy, %a, %b : tensor<8x1xbf16>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>, tensor<8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// emb.cross_grad and emb.dot_grad
//===----------------------------------------------------------------------===//

// -----

func.func @cross_grad_types(%dy: tensor<8x32xf32>, %x0: tensor<8x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{'emb.cross_grad' op failed to verify that all of {grad, x0, xl, dx0, dxl} have same type}}
  %0:4 = "emb.cross_grad"(%dy, %x0, %x0, %w, %b) : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> (tensor<8x32xf32>, tensor<4x32xf32>, tensor<32x32xf32>, tensor<32xf32>)
  return
}

// -----

func.func @dot_grad_element(%dy: tensor<8x1xbf16>, %u: tensor<8x32xf32>, %v: tensor<8x32xf32>) {
  // expected-error @+1 {{'emb.dot_grad' op operands and result must share one element type, got 'bf16' and 'f32'}}
  %0:2 = emb.dot_grad %dy, %u, %v : tensor<8x1xbf16>, tensor<8x32xf32>, tensor<8x32xf32>
  return
}

// -----

func.func @dot_grad_types(%dy: tensor<8x1xf32>, %u: tensor<8x32xf32>, %v: tensor<8x32xf32>) {
  // expected-error @+1 {{'emb.dot_grad' op failed to verify that all of {rhs, drhs} have same type}}
  %0:2 = "emb.dot_grad"(%dy, %u, %v) : (tensor<8x1xf32>, tensor<8x32xf32>, tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x5x32xf32>)
  return
}

//===----------------------------------------------------------------------===//
// emb.lookup_grad (generic form: see grad-ops-lookup-grad.mlir)
//===----------------------------------------------------------------------===//

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @lookup_grad_ids_rank(%ids: tensor<8x2xi64>, %offsets: tensor<9xi64>, %dy: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op 'ids' must be 1-D, got 'tensor<8x2xi64>'}}
  %0 = "emb.lookup_grad"(%ids, %offsets, %dy) <{pooling = #emb<pooling sum>, table = @t}>
      : (tensor<8x2xi64>, tensor<9xi64>, tensor<8x16xf32>) -> tensor<16x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @lookup_grad_rows(%ids: tensor<12xi64>, %offsets: tensor<9xi64>, %dy: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op result must have one row per id ('tensor<12xi64>'), got 'tensor<8x16xf32>'}}
  %0 = "emb.lookup_grad"(%ids, %offsets, %dy) <{pooling = #emb<pooling sum>, table = @t}>
      : (tensor<12xi64>, tensor<9xi64>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @lookup_grad_result_rank(%ids: tensor<?xi64>, %offsets: tensor<9xi64>, %dy: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op result must have one row per id ('tensor<?xi64>'), got 'tensor<?xf32>'}}
  %0 = "emb.lookup_grad"(%ids, %offsets, %dy) <{pooling = #emb<pooling sum>, table = @t}>
      : (tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32>) -> tensor<?xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @lookup_grad_grad_dynamic(%ids: tensor<?xi64>, %offsets: tensor<9xi64>, %dy: tensor<?x16xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op 'grad' must be a static 2-D tensor, got 'tensor<?x16xf32>'}}
  %0 = "emb.lookup_grad"(%ids, %offsets, %dy) <{pooling = #emb<pooling sum>, table = @t}>
      : (tensor<?xi64>, tensor<9xi64>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @lookup_grad_offsets(%ids: tensor<?xi64>, %offsets: tensor<8xi64>, %dy: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op 'offsets' must have batch + 1 entries}}
  %0 = "emb.lookup_grad"(%ids, %offsets, %dy) <{pooling = #emb<pooling sum>, table = @t}>
      : (tensor<?xi64>, tensor<8xi64>, tensor<8x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @lookup_grad_width(%ids: tensor<?xi64>, %offsets: tensor<9xi64>, %dy: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op result width must match 'grad' width}}
  %0 = "emb.lookup_grad"(%ids, %offsets, %dy) <{pooling = #emb<pooling sum>, table = @t}>
      : (tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32>) -> tensor<?x8xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @lookup_grad_unknown_table(%ids: tensor<?xi64>, %offsets: tensor<9xi64>, %dy: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op 'nope' does not name an emb.table in this module}}
  %0 = "emb.lookup_grad"(%ids, %offsets, %dy) <{pooling = #emb<pooling sum>, table = @nope}>
      : (tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

emb.param @t : tensor<16xf32> init<kind = zeros>
func.func @lookup_grad_param(%ids: tensor<?xi64>, %offsets: tensor<9xi64>, %dy: tensor<8x16xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op 't' does not name an emb.table in this module}}
  %0 = "emb.lookup_grad"(%ids, %offsets, %dy) <{pooling = #emb<pooling sum>, table = @t}>
      : (tensor<?xi64>, tensor<9xi64>, tensor<8x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @lookup_grad_table_dim(%ids: tensor<?xi64>, %offsets: tensor<9xi64>, %wts: tensor<?xf32>, %dy: tensor<8x8xf32>) {
  // expected-error @+1 {{'emb.lookup_grad' op result width != dim of table @t}}
  %0 = emb.lookup_grad @t[%ids, %offsets weights %wts] mean %dy
      : tensor<?xi64>, tensor<9xi64>, tensor<8x8xf32>, tensor<?xf32> -> tensor<?x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// emb.accumulate_grad
//===----------------------------------------------------------------------===//

// -----

emb.param @w : tensor<13x64xf32> init<kind = xavier_uniform>
func.func @accumulate_grad_unknown(%dw: tensor<13x64xf32>) {
  // expected-error @+1 {{'emb.accumulate_grad' op 'nope' does not name an emb.param in this module}}
  emb.accumulate_grad @nope, %dw : tensor<13x64xf32>
  return
}

// -----

emb.table @w [13 x 64] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @accumulate_grad_table(%dw: tensor<13x64xf32>) {
  // expected-error @+1 {{'emb.accumulate_grad' op 'w' does not name an emb.param in this module}}
  emb.accumulate_grad @w, %dw : tensor<13x64xf32>
  return
}

// -----

emb.param @w : tensor<13x64xf32> init<kind = xavier_uniform>
func.func @accumulate_grad_type(%dw: tensor<13x32xf32>) {
  // expected-error @+1 {{'emb.accumulate_grad' op gradient type 'tensor<13x32xf32>' != type of @w ('tensor<13x64xf32>')}}
  emb.accumulate_grad @w, %dw : tensor<13x32xf32>
  return
}

// -----

emb.param @b : tensor<64xf32> init<kind = zeros>
func.func @accumulate_grad_element(%db: tensor<64xf16>) {
  // expected-error @+1 {{'emb.accumulate_grad' op gradient type 'tensor<64xf16>' != type of @b ('tensor<64xf32>')}}
  emb.accumulate_grad @b, %db : tensor<64xf16>
  return
}

//===----------------------------------------------------------------------===//
// emb.accumulate_rows and emb.coalesce_rows
//===----------------------------------------------------------------------===//

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @accumulate_rows_rank(%ids: tensor<?xi64>, %rows: tensor<?x4x16xf32>) {
  // expected-error @+1 {{'emb.accumulate_rows' op 'values' must have the shape of 'ids' followed by the table dim, got 'tensor<?xi64>' and 'tensor<?x4x16xf32>'}}
  emb.accumulate_rows @t[%ids], %rows : tensor<?xi64>, tensor<?x4x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @accumulate_rows_count(%ids: tensor<12xi64>, %rows: tensor<10x16xf32>) {
  // expected-error @+1 {{'emb.accumulate_rows' op 'values' must have the shape of 'ids' followed by the table dim, got 'tensor<12xi64>' and 'tensor<10x16xf32>'}}
  emb.accumulate_rows @t[%ids], %rows : tensor<12xi64>, tensor<10x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @accumulate_rows_2d(%ids: tensor<8x5xi64>, %rows: tensor<8x4x16xf32>) {
  // expected-error @+1 {{'emb.accumulate_rows' op 'values' must have the shape of 'ids' followed by the table dim, got 'tensor<8x5xi64>' and 'tensor<8x4x16xf32>'}}
  emb.accumulate_rows @t[%ids], %rows : tensor<8x5xi64>, tensor<8x4x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @accumulate_rows_unknown(%ids: tensor<?xi64>, %rows: tensor<?x16xf32>) {
  // expected-error @+1 {{'emb.accumulate_rows' op 'nope' does not name an emb.table in this module}}
  emb.accumulate_rows @nope[%ids], %rows : tensor<?xi64>, tensor<?x16xf32>
  return
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @accumulate_rows_dim(%ids: tensor<8x5xi64>, %rows: tensor<8x5x8xf32>) {
  // expected-error @+1 {{'emb.accumulate_rows' op row width != dim of table @t}}
  emb.accumulate_rows @t[%ids], %rows : tensor<8x5xi64>, tensor<8x5x8xf32>
  return
}

// -----

emb.param @t : tensor<100x16xf32> init<kind = zeros>
func.func @coalesce_rows_param() {
  // expected-error @+1 {{'emb.coalesce_rows' op 't' does not name an emb.table in this module}}
  emb.coalesce_rows @t
  return
}

//===----------------------------------------------------------------------===//
// emb.clip_grad_norm and emb.update
//===----------------------------------------------------------------------===//

// -----

func.func @clip_zero() {
  // expected-error @+1 {{'emb.clip_grad_norm' op max_norm must be positive, got 0}}
  %0 = emb.clip_grad_norm max_norm(0.0) : tensor<f32>
  return
}

// -----

func.func @clip_negative() {
  // expected-error @+1 {{'emb.clip_grad_norm' op max_norm must be positive, got -1.5}}
  %0 = emb.clip_grad_norm max_norm(-1.5) : tensor<f32>
  return
}

// -----

func.func @clip_type() {
  // expected-error @+1 {{'emb.clip_grad_norm' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = emb.clip_grad_norm max_norm(1.0) : tensor<1xf32>
  return
}

// -----

func.func @update_unknown() {
  // expected-error @+1 {{'emb.update' op 'nope' does not name an emb.param, emb.table, emb.param_pack or emb.table_batch}}
  emb.update @nope
  return
}

// -----

// A symbol that is neither a parameter nor a table.
func.func @forward() {
  return
}
func.func @update_function() {
  // expected-error @+1 {{'emb.update' op 'forward' does not name an emb.param, emb.table, emb.param_pack or emb.table_batch}}
  emb.update @forward
  return
}

// -----

emb.param @w : tensor<13x64xf32> init<kind = xavier_uniform>
func.func @update_scale_type(%s: tensor<f64>) {
  // expected-error @+1 {{'emb.update' op operand #0 must be 0D tensor of 32-bit float values, but got 'tensor<f64>'}}
  emb.update @w scale %s : tensor<f64>
  return
}
