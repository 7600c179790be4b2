// Verifier errors of the sequence ops.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

emb.table @words [100 x 8] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
func.func @rank_two(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'emb.sequence_lookup' op result must be a static B x L x D tensor, got 'tensor<4x8xf32>'}}
  %x = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}

// -----

emb.table @words [100 x 8] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
func.func @offsets_count(%ids: tensor<?xi64>, %offsets: tensor<4xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.sequence_lookup' op offsets must be 5 64-bit ids (B + 1 for the result's 'tensor<4x6x8xf32>'), got 'tensor<4xi64>'}}
  %x = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<4xi64> -> tensor<4x6x8xf32>
  return %x : tensor<4x6x8xf32>
}

// -----

emb.table @words [100 x 8] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
func.func @table_dim(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x6x16xf32> {
  // expected-error @+1 {{'emb.sequence_lookup' op result width (16) != dim of table @words (8)}}
  %x = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x6x16xf32>
  return %x : tensor<4x6x16xf32>
}

// -----

func.func @unknown_table(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.sequence_lookup' op 'nowhere' does not name an emb.table in this module}}
  %x = emb.sequence_lookup @nowhere[%ids, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x6x8xf32>
  return %x : tensor<4x6x8xf32>
}

// -----

func.func @ids_rank(%ids: tensor<4x6xi64>, %offsets: tensor<5xi64>, %dy: tensor<4x6x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'emb.sequence_lookup_grad' op ids must be a vector of 64-bit ids, got 'tensor<4x6xi64>'}}
  %r = emb.sequence_lookup_grad %ids, %offsets, %dy : tensor<4x6xi64>, tensor<5xi64>, tensor<4x6x8xf32> -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

func.func @rows_width(%ids: tensor<?xi64>, %offsets: tensor<5xi64>, %dy: tensor<4x6x8xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'emb.sequence_lookup_grad' op result must be one row of 8 per id ('tensor<?xi64>'), got 'tensor<?x4xf32>'}}
  %r = emb.sequence_lookup_grad %ids, %offsets, %dy : tensor<?xi64>, tensor<5xi64>, tensor<4x6x8xf32> -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

func.func @pooled_shape(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'emb.sequence_pool' op result must be 4 x 8 of 'f32' (B x D of 'tensor<4x6x8xf32>'), got 'tensor<4x6xf32>'}}
  %y = emb.sequence_pool %x, %offsets sum : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

func.func @dynamic_input(%x: tensor<4x?x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'emb.sequence_pool' op input must be a static B x L x D tensor, got 'tensor<4x?x8xf32>'}}
  %y = emb.sequence_pool %x, %offsets sum : tensor<4x?x8xf32>, tensor<5xi64> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @max_needs_input(%dy: tensor<4x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.sequence_pool_grad' op max pooling needs the forward 'input'}}
  %dx = emb.sequence_pool_grad %dy, %offsets max : tensor<4x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
  return %dx : tensor<4x6x8xf32>
}

// -----

func.func @mean_reads_no_input(%dy: tensor<4x8xf32>, %offsets: tensor<5xi64>, %x: tensor<4x6x8xf32>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.sequence_pool_grad' op only max pooling reads the forward 'input'}}
  %dx = emb.sequence_pool_grad %dy, %offsets input %x mean : tensor<4x8xf32>, tensor<5xi64>, tensor<4x6x8xf32> -> tensor<4x6x8xf32>
  return %dx : tensor<4x6x8xf32>
}

// -----

func.func @bad_mode(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x8xf32> {
  // expected-error @+2 {{expected ::embc::emb::SequencePooling to be one of: sum, mean, max, first}}
  // expected-error @+1 {{failed to parse Emb_SequencePoolingAttr parameter 'value'}}
  %y = emb.sequence_pool %x, %offsets last : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @learned_without_table(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.positions' op learned positions need their 'table'}}
  %y = emb.positions %x, %offsets learned : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
  return %y : tensor<4x6x8xf32>
}

// -----

func.func @sinusoidal_with_table(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>, %p: tensor<6x8xf32>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.positions' op sinusoidal positions take no 'table'}}
  %y = emb.positions %x, %offsets table %p sinusoidal : tensor<4x6x8xf32>, tensor<5xi64>, tensor<6x8xf32> -> tensor<4x6x8xf32>
  return %y : tensor<4x6x8xf32>
}

// -----

func.func @short_table(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>, %p: tensor<5x8xf32>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.positions' op table must be at least 6 x 8 of 'f32' (a row per position of 'tensor<4x6x8xf32>'), got 'tensor<5x8xf32>'}}
  %y = emb.positions %x, %offsets table %p learned : tensor<4x6x8xf32>, tensor<5xi64>, tensor<5x8xf32> -> tensor<4x6x8xf32>
  return %y : tensor<4x6x8xf32>
}

// -----

func.func @grad_without_table_grad(%dy: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.positions_grad' op learned positions need their 'table_grad'}}
  %dx = emb.positions_grad %dy, %offsets learned : tensor<4x6x8xf32>, tensor<5xi64> -> tensor<4x6x8xf32>
  return %dx : tensor<4x6x8xf32>
}

// -----

func.func @heads_divide(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.attention' op 3 heads do not divide the 8 columns of 'tensor<4x6x8xf32>'}}
  %o = emb.attention %x, %x, %x, %offsets heads(3) : tensor<4x6x8xf32>, tensor<5xi64>
  return %o : tensor<4x6x8xf32>
}

// -----

func.func @dropout_without_stream(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.attention' op dropout and stream go together: give both or neither}}
  %o = emb.attention %x, %x, %x, %offsets heads(2) {dropout = 0.1 : f64} : tensor<4x6x8xf32>, tensor<5xi64>
  return %o : tensor<4x6x8xf32>
}

// -----

func.func @dropout_of_one(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.attention' op dropout must be in [0, 1), got 1.000000e+00}}
  %o = emb.attention %x, %x, %x, %offsets heads(2) {dropout = 1.0 : f64, stream = 0 : i64} : tensor<4x6x8xf32>, tensor<5xi64>
  return %o : tensor<4x6x8xf32>
}

// -----

func.func @grad_negative_stream(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.attention_grad' op stream must be non-negative, got -1}}
  %dq, %dk, %dv = emb.attention_grad %x, %x, %x, %x, %offsets heads(2) {dropout = 0.5 : f64, stream = -1 : i64} : tensor<4x6x8xf32>, tensor<5xi64>
  return %dq : tensor<4x6x8xf32>
}

// -----

func.func @zero_heads(%x: tensor<4x6x8xf32>, %offsets: tensor<5xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.attention' op attribute 'heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %o = emb.attention %x, %x, %x, %offsets heads(0) : tensor<4x6x8xf32>, tensor<5xi64>
  return %o : tensor<4x6x8xf32>
}

// -----

func.func @attention_offsets(%x: tensor<4x6x8xf32>, %offsets: tensor<4xi64>) -> tensor<4x6x8xf32> {
  // expected-error @+1 {{'emb.attention' op offsets must be 5 64-bit ids (B + 1 for the query's 'tensor<4x6x8xf32>'), got 'tensor<4xi64>'}}
  %o = emb.attention %x, %x, %x, %offsets heads(2) : tensor<4x6x8xf32>, tensor<4xi64>
  return %o : tensor<4x6x8xf32>
}

// -----

func.func @targets_rank(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x6x1xf32> {
  // expected-error @+1 {{'emb.next_token_targets' op result must be a static B x L tensor, got 'tensor<4x6x1xf32>'}}
  %t = emb.next_token_targets %ids, %offsets : tensor<?xi64>, tensor<5xi64> -> tensor<4x6x1xf32>
  return %t : tensor<4x6x1xf32>
}

// -----

func.func @targets_offsets(%ids: tensor<?xi64>, %offsets: tensor<4xi64>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'emb.next_token_targets' op offsets must be 5 64-bit ids (B + 1 for the result's 'tensor<4x6xf32>'), got 'tensor<4xi64>'}}
  %t = emb.next_token_targets %ids, %offsets : tensor<?xi64>, tensor<4xi64> -> tensor<4x6xf32>
  return %t : tensor<4x6xf32>
}

// -----

func.func @targets_ids(%ids: tensor<?xi32>, %offsets: tensor<5xi64>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'emb.next_token_targets' op ids must be a vector of 64-bit ids, got 'tensor<?xi32>'}}
  %t = emb.next_token_targets %ids, %offsets : tensor<?xi32>, tensor<5xi64> -> tensor<4x6xf32>
  return %t : tensor<4x6xf32>
}

// -----

func.func @mask_rate(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'emb.mask_tokens' op rate must be in (0, 1), got 1.000000e+00}}
  %m, %t = emb.mask_tokens %ids, %offsets {mask_id = 10 : i64, rate = 1.0 : f64, stream = 0 : i64, vocab = 10 : i64}
      : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<4x6xf32>
  return %t : tensor<4x6xf32>
}

// -----

func.func @mask_types(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'emb.mask_tokens' op masked ids must have the type of the ids ('tensor<?xi64>'), got 'tensor<7xi64>'}}
  %m, %t = emb.mask_tokens %ids, %offsets {mask_id = 10 : i64, rate = 0.5 : f64, stream = 0 : i64, vocab = 10 : i64}
      : tensor<?xi64>, tensor<5xi64> -> tensor<7xi64>, tensor<4x6xf32>
  return %t : tensor<4x6xf32>
}

// -----

func.func @mask_targets(%ids: tensor<?xi64>, %offsets: tensor<5xi64>) -> tensor<3x6xf32> {
  // expected-error @+1 {{'emb.mask_tokens' op offsets must be 4 64-bit ids (B + 1 for the targets' 'tensor<3x6xf32>'), got 'tensor<5xi64>'}}
  %m, %t = emb.mask_tokens %ids, %offsets {mask_id = 10 : i64, rate = 0.5 : f64, stream = 0 : i64, vocab = 10 : i64}
      : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<3x6xf32>
  return %t : tensor<3x6xf32>
}

// -----

func.func @select_rows(%x: tensor<4x6x8xf32>, %t: tensor<4x6xf32>) -> tensor<4x7x8xf32> {
  // expected-error @+1 {{'emb.select_targets' op the selected rows must be B x P x D with 1 <= P <= L (4xPx8, P <= 6), got 'tensor<4x7x8xf32>'}}
  %r, %s = emb.select_targets %x, %t : tensor<4x6x8xf32>, tensor<4x6xf32> -> tensor<4x7x8xf32>, tensor<4x7xf32>
  return %r : tensor<4x7x8xf32>
}

// -----

func.func @select_targets_shape(%x: tensor<4x6x8xf32>, %t: tensor<4x5xf32>) -> tensor<4x2x8xf32> {
  // expected-error @+1 {{'emb.select_targets' op targets must be B x L (4x6), got 'tensor<4x5xf32>'}}
  %r, %s = emb.select_targets %x, %t : tensor<4x6x8xf32>, tensor<4x5xf32> -> tensor<4x2x8xf32>, tensor<4x2xf32>
  return %r : tensor<4x2x8xf32>
}

// -----

func.func @select_grad(%dy: tensor<4x2x8xf32>, %t: tensor<4x6xf32>) -> tensor<4x6x4xf32> {
  // expected-error @+1 {{'emb.select_targets_grad' op the selected rows must be B x P x D with 1 <= P <= L (4xPx4, P <= 6), got 'tensor<4x2x8xf32>'}}
  %dx = emb.select_targets_grad %dy, %t : tensor<4x2x8xf32>, tensor<4x6xf32> -> tensor<4x6x4xf32>
  return %dx : tensor<4x6x4xf32>
}
