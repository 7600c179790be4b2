// Verifier errors of emb.lookup, emb.gather and emb.hash, including their table symbol checks.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// emb.lookup
//===----------------------------------------------------------------------===//

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @ids_rank(%ids: tensor<4x3xi64>, %offsets: tensor<5xi64>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.lookup' op 'ids' must be 1-D, got 'tensor<4x3xi64>'}}
  %0 = emb.lookup @t[%ids, %offsets] sum : tensor<4x3xi64>, tensor<5xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @offsets_dynamic(%ids: tensor<?xi64>, %offsets: tensor<?xi64>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.lookup' op 'offsets' must be 1-D with a static size, got 'tensor<?xi64>'}}
  %0 = emb.lookup @t[%ids, %offsets] sum : tensor<?xi64>, tensor<?xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @offsets_rank(%ids: tensor<?xi64>, %offsets: tensor<5x1xi64>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.lookup' op 'offsets' must be 1-D with a static size, got 'tensor<5x1xi64>'}}
  %0 = emb.lookup @t[%ids, %offsets] sum : tensor<?xi64>, tensor<5x1xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @result_dynamic(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'emb.lookup' op result must be a static B x dim tensor, got 'tensor<?x16xf32>'}}
  %0 = emb.lookup @t[%ids, %offsets] sum : tensor<?xi64>, tensor<5xi64> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @result_rank(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x2x8xf32> {
  // expected-error @+1 {{'emb.lookup' op result must be a static B x dim tensor, got 'tensor<4x2x8xf32>'}}
  %0 = emb.lookup @t[%ids, %offsets] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x2x8xf32>
  return %0 : tensor<4x2x8xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @offsets_size(%ids: tensor<?xi64>, %offsets: tensor<4xi64>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.lookup' op 'offsets' must have batch + 1 = 5 entries, got 4}}
  %0 = emb.lookup @t[%ids, %offsets] mean : tensor<?xi64>, tensor<4xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @weights_shape(%ids: tensor<12xi64>, %offsets: tensor<5xi64>, %w: tensor<?xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.lookup' op 'weights' shape 'tensor<?xf32>' must match 'ids' shape 'tensor<12xi64>'}}
  %0 = emb.lookup @t[%ids, %offsets weights %w] sum
      : tensor<12xi64>, tensor<5xi64>, tensor<?xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @missing_table(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.lookup' op 'nope' does not name an emb.table in this module}}
  %0 = emb.lookup @nope[%ids, %offsets] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A parameter is a symbol too, but not a table.
emb.param @p : tensor<100x16xf32> init<kind = zeros>
func.func @not_a_table(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.lookup' op 'p' does not name an emb.table in this module}}
  %0 = emb.lookup @p[%ids, %offsets] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @width(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x32xf32> {
  // expected-error @+1 {{'emb.lookup' op result width (32) != dim of table @t (16)}}
  %0 = emb.lookup @t[%ids, %offsets] max : tensor<?xi64>, tensor<5xi64> -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @hash_buckets_exceed_rows(%raw: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x16xf32> {
  %ids = emb.hash %raw buckets(101) seed(0) : tensor<?xi64>
  // expected-error @+1 {{'emb.lookup' op ids are hashed into 101 buckets but table @t has only 100 rows}}
  %0 = emb.lookup @t[%ids, %offsets] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @float_ids(%ids: tensor<?xf32>, %offsets: tensor<5xi64>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.lookup' op operand #0 must be ranked tensor of signless integer values, but got 'tensor<?xf32>'}}
  %0 = emb.lookup @t[%ids, %offsets] sum : tensor<?xf32>, tensor<5xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @bad_pooling(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x16xf32> {
  // expected-error @+2 {{expected ::embc::emb::Pooling to be one of: sum, mean, max}}
  // expected-error @+1 {{failed to parse Emb_PoolingAttr parameter 'value'}}
  %0 = emb.lookup @t[%ids, %offsets] min : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

//===----------------------------------------------------------------------===//
// emb.gather
//===----------------------------------------------------------------------===//

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @gather_dynamic(%ids: tensor<?x5xi64>) -> tensor<4x5x16xf32> {
  // expected-error @+1 {{'emb.gather' op 'ids' must have a static shape, got 'tensor<?x5xi64>'}}
  %0 = emb.gather @t[%ids] : tensor<?x5xi64> -> tensor<4x5x16xf32>
  return %0 : tensor<4x5x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @gather_rank(%ids: tensor<4x5xi64>) -> tensor<4x80xf32> {
  // expected-error @+1 {{'emb.gather' op result shape must be the ids shape followed by the table dim, got ids 'tensor<4x5xi64>' and result 'tensor<4x80xf32>'}}
  %0 = emb.gather @t[%ids] : tensor<4x5xi64> -> tensor<4x80xf32>
  return %0 : tensor<4x80xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @gather_prefix(%ids: tensor<4x5xi64>) -> tensor<5x4x16xf32> {
  // expected-error @+1 {{'emb.gather' op result shape must be the ids shape followed by the table dim}}
  %0 = emb.gather @t[%ids] : tensor<4x5xi64> -> tensor<5x4x16xf32>
  return %0 : tensor<5x4x16xf32>
}

// -----

func.func @gather_missing(%ids: tensor<4xi64>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'emb.gather' op 'ctx' does not name an emb.table in this module}}
  %0 = emb.gather @ctx[%ids] : tensor<4xi64> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @gather_width(%ids: tensor<4x5xi64>) -> tensor<4x5x8xf32> {
  // expected-error @+1 {{'emb.gather' op result width (8) != dim of table @t (16)}}
  %0 = emb.gather @t[%ids] : tensor<4x5xi64> -> tensor<4x5x8xf32>
  return %0 : tensor<4x5x8xf32>
}

//===----------------------------------------------------------------------===//
// emb.hash
//===----------------------------------------------------------------------===//

// -----

func.func @hash_i32(%ids: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'emb.hash' op ids must be 64-bit integers, got 'tensor<?xi32>'}}
  %0 = emb.hash %ids buckets(100) seed(0) : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @hash_buckets(%ids: tensor<?xi64>) -> tensor<?xi64> {
  // expected-error @+1 {{'emb.hash' op attribute 'buckets' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = emb.hash %ids buckets(0) seed(0) : tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @hash_seed(%ids: tensor<?xi64>) -> tensor<?xi64> {
  // expected-error @+1 {{'emb.hash' op attribute 'seed' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = emb.hash %ids buckets(100) seed(-1) : tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// SameOperandsAndResultType infers the result type; only the generic form can disagree.
func.func @hash_result(%ids: tensor<?xi64>) -> tensor<4xi64> {
  // expected-error @+2 {{'emb.hash' op inferred type(s) 'tensor<?xi64>' are incompatible with return type(s) of operation 'tensor<4xi64>'}}
  // expected-error @+1 {{'emb.hash' op failed to infer returned types}}
  %0 = "emb.hash"(%ids) {buckets = 100 : i64, seed = 0 : i64} : (tensor<?xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

emb.table @t[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.1>
func.func @gather_hash_buckets(%ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %h = emb.hash %ids buckets(100) seed(0) : tensor<2x3xi64>
  // expected-error @+1 {{'emb.gather' op ids are hashed into 100 buckets but table @t has only 10 rows}}
  %e = emb.gather @t[%h] : tensor<2x3xi64> -> tensor<2x3x4xf32>
  return %e : tensor<2x3x4xf32>
}

// -----

emb.table @t[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.1>
func.func @gather_dynamic_result(%ids: tensor<2xi64>) -> tensor<2x?xf32> {
  // expected-error @+1 {{'emb.gather' op result must have a static shape, got 'tensor<2x?xf32>'}}
  %e = emb.gather @t[%ids] : tensor<2xi64> -> tensor<2x?xf32>
  return %e : tensor<2x?xf32>
}

// -----

//===----------------------------------------------------------------------===//
// emb.table_scores, emb.read_table, emb.row_ids (tied embeddings)
//===----------------------------------------------------------------------===//

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @scores_dim(%h: tensor<4x8xf32>) -> tensor<4x100xf32> {
  // expected-error @+1 {{'emb.table_scores' op input width (8) != dim of table @t (16)}}
  %s = emb.table_scores @t, %h : tensor<4x8xf32> -> tensor<4x100xf32>
  return %s : tensor<4x100xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @scores_rows(%h: tensor<4x16xf32>) -> tensor<4x99xf32> {
  // expected-error @+1 {{'emb.table_scores' op result width (99) != rows of table @t (100)}}
  %s = emb.table_scores @t, %h : tensor<4x16xf32> -> tensor<4x99xf32>
  return %s : tensor<4x99xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @scores_shape(%h: tensor<4x16xf32>) -> tensor<5x100xf32> {
  // expected-error @+1 {{'emb.table_scores' op result must have the input's rows and element type, got 'tensor<5x100xf32>' for 'tensor<4x16xf32>'}}
  %s = emb.table_scores @t, %h : tensor<4x16xf32> -> tensor<5x100xf32>
  return %s : tensor<5x100xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @read_shape() -> tensor<16x100xf32> {
  // expected-error @+1 {{'emb.read_table' op result must be 100 x 16 (table @t), got 'tensor<16x100xf32>'}}
  %e = emb.read_table @t : tensor<16x100xf32>
  return %e : tensor<16x100xf32>
}

// -----

emb.table @t [100 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @row_ids() -> tensor<99xi64> {
  // expected-error @+1 {{'emb.row_ids' op result must be 100 64-bit ids (the rows of table @t), got 'tensor<99xi64>'}}
  %i = emb.row_ids @t : tensor<99xi64>
  return %i : tensor<99xi64>
}
