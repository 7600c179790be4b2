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

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{has 2 tables but 1 ids and 1 local ids}}
    %i, %o:2 = emb.shard_ids_group [@t, @r] ids(%ids : tensor<?xi64>) offsets(%offsets, %offsets : tensor<3xi64>, tensor<3xi64>)
        weighted [false, false] per_bag_mean [false, false] -> local_ids(tensor<?xi64>) local_offsets(tensor<5xi64>, tensor<5xi64>)
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{'weighted' and 'per_bag_mean' need one entry per table (2), got 1 and 2}}
    %i:2, %o:2 = emb.shard_ids_group [@t, @r] ids(%ids, %ids : tensor<?xi64>, tensor<?xi64>) offsets(%offsets, %offsets : tensor<3xi64>, tensor<3xi64>)
        weighted [false] per_bag_mean [false, false] -> local_ids(tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<5xi64>, tensor<5xi64>)
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{has 0 weights and 1 local weights, but its flags ask for 1 and 1}}
    %i:2, %o:2, %lw = emb.shard_ids_group [@t, @r] ids(%ids, %ids : tensor<?xi64>, tensor<?xi64>) offsets(%offsets, %offsets : tensor<3xi64>, tensor<3xi64>)
        weighted [false, true] per_bag_mean [false, false] -> local_ids(tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<5xi64>, tensor<5xi64>) local_weights(tensor<?xf32>)
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{the local offsets must hold N x 2 bags (+1), got 'tensor<4xi64>'}}
    %i:2, %o:2 = emb.shard_ids_group [@t, @r] ids(%ids, %ids : tensor<?xi64>, tensor<?xi64>) offsets(%offsets, %offsets : tensor<3xi64>, tensor<3xi64>)
        weighted [false, false] per_bag_mean [false, false] -> local_ids(tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<5xi64>, tensor<4xi64>)
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{table @plain is not sharded}}
    %i:2, %o:2 = emb.shard_ids_group [@t, @plain] ids(%ids, %ids : tensor<?xi64>, tensor<?xi64>) offsets(%offsets, %offsets : tensor<3xi64>, tensor<3xi64>)
        weighted [false, false] per_bag_mean [false, false] -> local_ids(tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<5xi64>, tensor<5xi64>)
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{tables @t and @r3 are sharded over different numbers of ranks}}
    %i:2, %o:2 = emb.shard_ids_group [@t, @r3] ids(%ids, %ids : tensor<?xi64>, tensor<?xi64>) offsets(%offsets, %offsets : tensor<3xi64>, tensor<3xi64>)
        weighted [false, false] per_bag_mean [false, false] -> local_ids(tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<5xi64>, tensor<5xi64>)
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{groups no table}}
    "emb.shard_pool_group"() {tables = []} : () -> ()
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{has 2 partials but 1 results}}
    %e = emb.shard_pool_group [@t, @r] %p, %p : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>, %q: tensor<3x4xf32>) {
    // expected-error @+1 {{the rank-concatenated side 'tensor<3x4xf32>' must have a whole multiple of the rows of 'tensor<2x4xf32>'}}
    %e:2 = emb.shard_pool_group [@t, @r] %p, %q : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  emb.table @r3 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
  emb.table @plain [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @wide [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %p: tensor<4x4xf32>, %dy: tensor<2x4xf32>) {
    // expected-error @+1 {{width 4 != dim of table @wide (8)}}
    %g:2 = emb.shard_pool_grad_group [@t, @wide] %dy, %dy : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
    return
  }
}
