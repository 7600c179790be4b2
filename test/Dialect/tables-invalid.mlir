// Verifier errors of emb.table (limits, initialiser), emb.param (type, rank, initialiser) and emb.get (symbol and type checks).
// RUN: emb-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// emb.table
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'emb.table' op attribute 'rows' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
emb.table @t [0 x 8] f32 init<kind = zeros> optimizer<kind = sgd>

// -----

// expected-error @+1 {{'emb.table' op attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
emb.table @t [10 x -8] f32 init<kind = zeros> optimizer<kind = sgd>

// -----

// expected-error @+1 {{'emb.table' op 'dim' (65537) exceeds the limit 65536}}
emb.table @t [10 x 65537] f32 init<kind = zeros> optimizer<kind = sgd>

// -----

// 2^24 + 1 rows of 2^16 columns is just over 2^40 elements.
// expected-error @+1 {{'emb.table' op table of 16777217 x 65536 exceeds the limit of 2^40 elements}}
emb.table @t [16777217 x 65536] f32 init<kind = zeros> optimizer<kind = sgd>

// -----

// expected-error @+1 {{'emb.table' op table of 1099511627777 x 1 exceeds the limit of 2^40 elements}}
emb.table @t [1099511627777 x 1] int8_rowwise init<kind = zeros> optimizer<kind = sgd>

// -----

// expected-error @+1 {{'emb.table' op Xavier initialisation is for dense weights; use uniform or normal for embedding tables}}
emb.table @t [10 x 8] f32 init<kind = xavier_uniform> optimizer<kind = sgd>

// -----

// expected-error @+1 {{'emb.table' op Xavier initialisation is for dense weights}}
emb.table @t [10 x 8] f16 init<kind = xavier_normal, gain = 2.0> optimizer<kind = adagrad>

// -----

// int4 packs two elements per byte: the dim must be even.
// expected-error @+1 {{'emb.table' op is stored as int4_rowwise, which packs two elements per byte, but its dim 5 is odd; use an even dim or int8}}
emb.table @t [10 x 5] int4_rowwise init<kind = zeros> optimizer<kind = sgd>

// -----

// expected-error @+2 {{expected ::embc::emb::StorageType to be one of: f32, f16, bf16, int8_rowwise, int4_rowwise}}
// expected-error @+1 {{failed to parse Emb_StorageTypeAttr parameter 'value'}}
emb.table @t [10 x 8] f64 init<kind = zeros> optimizer<kind = sgd>

// -----

func.func @nested() {
  // expected-error @+1 {{'emb.table' op expects parent op 'builtin.module'}}
  emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  return
}

//===----------------------------------------------------------------------===//
// emb.param
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'emb.param' op parameter type must have a float element type, got 'tensor<4x4xi32>'}}
emb.param @w : tensor<4x4xi32> init<kind = zeros>

// -----

// expected-error @+1 {{'emb.param' op parameter must be 1-D or 2-D, got rank 0}}
emb.param @s : tensor<f32> init<kind = zeros>

// -----

// expected-error @+1 {{'emb.param' op parameter must be 1-D or 2-D, got rank 3}}
emb.param @w : tensor<2x3x4xf32> init<kind = normal, std = 0.1>

// -----

// expected-error @+1 {{'emb.param' op Xavier initialisation needs a 2-D weight, got 'tensor<64xf32>'}}
emb.param @b : tensor<64xf32> init<kind = xavier_uniform>

// -----

// expected-error @+1 {{'emb.param' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of any type values}}
emb.param @w : tensor<?x4xf32> init<kind = zeros>

// -----

// expected-error @+1 {{'emb.param' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of any type values}}
emb.param @w : memref<4x4xf32> init<kind = zeros>

//===----------------------------------------------------------------------===//
// emb.get
//===----------------------------------------------------------------------===//

// -----

func.func @missing() -> tensor<4xf32> {
  // expected-error @+1 {{'emb.get' op 'nope' does not name an emb.param in this module}}
  %0 = emb.get @nope : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A table is a symbol too, but not a parameter.
emb.table @t [4 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @not_a_param() -> tensor<4x4xf32> {
  // expected-error @+1 {{'emb.get' op 't' does not name an emb.param in this module}}
  %0 = emb.get @t : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

emb.param @w : tensor<13x64xf32> init<kind = xavier_uniform>
func.func @wrong_shape() -> tensor<64x13xf32> {
  // expected-error @+1 {{'emb.get' op result type 'tensor<64x13xf32>' does not match the type 'tensor<13x64xf32>' of @w}}
  %0 = emb.get @w : tensor<64x13xf32>
  return %0 : tensor<64x13xf32>
}

// -----

emb.param @w : tensor<13x64xbf16> init<kind = xavier_uniform>
func.func @wrong_element_type() -> tensor<13x64xf32> {
  // expected-error @+1 {{'emb.get' op result type 'tensor<13x64xf32>' does not match the type 'tensor<13x64xbf16>' of @w}}
  %0 = emb.get @w : tensor<13x64xf32>
  return %0 : tensor<13x64xf32>
}

// -----

emb.param @w : tensor<4xf32> init<kind = zeros>
func.func @integer_result() -> tensor<4xi32> {
  // expected-error @+1 {{'emb.get' op result #0 must be ranked tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = emb.get @w : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// A host or disk table is whole on every rank: a sharded table lives on its
// ranks' devices.
// expected-error @+1 {{'emb.table' op has placement disk and sharding row_wise: a sharded table lives on its ranks' devices}}
emb.table @t [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise placement disk

// -----

// expected-error @+1 {{'emb.table' op has placement host and sharding table_wise: a sharded table lives on its ranks' devices}}
emb.table @t [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise placement host
