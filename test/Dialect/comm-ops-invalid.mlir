// What the collectives' verifiers refuse: a target of the wrong kind and a
// slice outside the gradient.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

module {
  emb.param @w : tensor<3x2xf32> init<kind = zeros>
  func.func @update() {
    // expected-error @+1 {{slice [4, 8) lies outside the 6-element gradient of @w}}
    emb.grad_all_reduce_start @w offset 4 size 4
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @update() {
    // expected-error @+1 {{'t' does not name an emb.param_pack or emb.param}}
    emb.grad_all_reduce_wait @t
    return
  }
}

// -----

module {
  emb.param @w : tensor<3x2xf32> init<kind = zeros>
  func.func @update() {
    // expected-error @+1 {{'emb.grad_all_reduce_start' op attribute 'size' failed to satisfy constraint}}
    emb.grad_all_reduce_start @w offset 0 size 0
    return
  }
}

// -----

module {
  emb.param @w : tensor<3x2xf32> init<kind = zeros>
  func.func @update() {
    // expected-error @+1 {{does not name}}
    emb.gather_rows @w
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>) {
    // expected-error @+1 {{table @t is not sharded (it has no emb.shard_rows; -emb-distribute sets it)}}
    %i, %o = emb.shard_ids @t[%ids, %offsets] : tensor<?xi64>, tensor<3xi64> -> tensor<?xi64>, tensor<5xi64>
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>) {
    // expected-error @+1 {{the local offsets must hold N x 2 bags (+1), got 'tensor<4xi64>'}}
    %i, %o = emb.shard_ids @t[%ids, %offsets] : tensor<?xi64>, tensor<3xi64> -> tensor<?xi64>, tensor<4xi64>
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>) {
    // expected-error @+1 {{needs a local weights result (it has weights or per_bag_mean)}}
    %i, %o = emb.shard_ids @t[%ids, %offsets] per_bag_mean : tensor<?xi64>, tensor<3xi64> -> tensor<?xi64>, tensor<5xi64>
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%p: tensor<5x4xf32>, %dy: tensor<2x8xf32>) {
    // expected-error @+1 {{the rank-concatenated side 'tensor<5x4xf32>' must have a whole multiple of the rows of 'tensor<2x4xf32>'}}
    %e = emb.shard_pool @t %p : tensor<5x4xf32> -> tensor<2x4xf32>
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%dy: tensor<2x8xf32>) {
    // expected-error @+1 {{width 8 != dim of table @t (4)}}
    %g = emb.shard_pool_grad @t %dy : tensor<2x8xf32> -> tensor<4x8xf32>
    return
  }
}

// -----

module {
  // expected-error @+1 {{emb.shard_rows must rise from 0 to the table's 10 rows, got array<i64: 0, 6, 5, 10>}}
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 6, 5, 10>}
}

// -----

module {
  // expected-error @+1 {{has emb.shard_rows but sharding none}}
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> {emb.shard_rows = array<i64: 0, 5, 10>}
}
