// The collectives of -emb-distribute parse and print back.
// RUN: emb-opt %s | emb-opt | FileCheck %s

// CHECK-LABEL: module @comm
// CHECK:         emb.grad_all_reduce_start @dense_f32 offset 0 size 16
// CHECK-NEXT:    emb.grad_all_reduce_start @w offset 0 size 6
// CHECK-NEXT:    emb.gather_rows @t
// CHECK-NEXT:    emb.gather_rows @batch
// CHECK-NEXT:    emb.grad_all_reduce_wait @dense_f32
// CHECK-NEXT:    emb.grad_all_reduce_wait @w
module @comm {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @u [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @v [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @b : tensor<4xf32> init<kind = zeros>
  emb.param @w : tensor<3x2xf32> init<kind = zeros>
  emb.param_pack @dense_f32 : f32[16] members [@b] offsets [0] buckets [0, 16]
  emb.table_batch @batch [@u, @v]
  func.func @update() {
    emb.grad_all_reduce_start @dense_f32 offset 0 size 16
    emb.grad_all_reduce_start @w offset 0 size 6
    emb.gather_rows @t
    emb.gather_rows @batch
    emb.grad_all_reduce_wait @dense_f32
    emb.grad_all_reduce_wait @w
    return
  }
}

// The exchanges of sharded tables parse and print back.
// CHECK-LABEL: module @shards
// CHECK:         %[[I:.*]], %[[O:.*]] = emb.shard_ids @t[%{{.*}}, %{{.*}}] : tensor<?xi64>, tensor<3xi64> -> tensor<?xi64>, tensor<5xi64>
// CHECK:         emb.shard_ids @r[%{{.*}}, %{{.*}} weights %{{.*}}] per_bag_mean : tensor<?xi64>, tensor<3xi64>, tensor<?xf32> -> tensor<?xi64>, tensor<5xi64>, tensor<?xf32>
// CHECK:         emb.shard_pool @t %{{.*}} : tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK:         emb.shard_pool_grad @t %{{.*}} : tensor<2x4xf32> -> tensor<4x4xf32>
module @shards {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %dy: tensor<2x4xf32>) {
    %i, %o = emb.shard_ids @t[%ids, %offsets] : tensor<?xi64>, tensor<3xi64> -> tensor<?xi64>, tensor<5xi64>
    %ri, %ro, %rw = emb.shard_ids @r[%ids, %offsets weights %w] per_bag_mean : tensor<?xi64>, tensor<3xi64>, tensor<?xf32> -> tensor<?xi64>, tensor<5xi64>, tensor<?xf32>
    %p = emb.lookup @t[%i, %o] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e = emb.shard_pool @t %p : tensor<4x4xf32> -> tensor<2x4xf32>
    %g = emb.shard_pool_grad @t %dy : tensor<2x4xf32> -> tensor<4x4xf32>
    return
  }
}

// Groups of exchanges (-emb-batch-exchanges) parse and print back.
// CHECK-LABEL: module @groups
// CHECK:         %[[LI:.*]]:2, %[[LO:.*]]:2, %[[LW:.*]] = emb.shard_ids_group [@t, @r] ids(%{{.*}}, %{{.*}} : tensor<?xi64>, tensor<?xi64>) offsets(%{{.*}}, %{{.*}} : tensor<3xi64>, tensor<3xi64>) weights(%{{.*}} : tensor<?xf32>) weighted [false, true] per_bag_mean [false, true] -> local_ids(tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<5xi64>, tensor<5xi64>) local_weights(tensor<?xf32>)
// CHECK:         emb.shard_ids_group [@t] ids(%{{.*}} : tensor<?xi64>) offsets(%{{.*}} : tensor<3xi64>) weighted [false] per_bag_mean [false] -> local_ids(tensor<?xi64>) local_offsets(tensor<5xi64>){{$}}
// CHECK:         emb.shard_pool_group [@t, @r] %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
// CHECK:         emb.shard_pool_grad_group [@t, @r] %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
module @groups {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
  emb.table @r [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise {emb.shard_rows = array<i64: 0, 5, 10>}
  func.func @f(%ids: tensor<?xi64>, %offsets: tensor<3xi64>, %w: tensor<?xf32>, %dy: tensor<2x4xf32>) {
    %i:2, %o:2, %lw = emb.shard_ids_group [@t, @r] ids(%ids, %ids : tensor<?xi64>, tensor<?xi64>)
        offsets(%offsets, %offsets : tensor<3xi64>, tensor<3xi64>) weights(%w : tensor<?xf32>)
        weighted [false, true] per_bag_mean [false, true]
        -> local_ids(tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<5xi64>, tensor<5xi64>)
           local_weights(tensor<?xf32>)
    %j, %q = emb.shard_ids_group [@t] ids(%ids : tensor<?xi64>) offsets(%offsets : tensor<3xi64>)
        weighted [false] per_bag_mean [false] -> local_ids(tensor<?xi64>) local_offsets(tensor<5xi64>)
    %p = emb.lookup @t[%i#0, %o#0] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %pr = emb.lookup @r[%i#1, %o#1 weights %lw] sum : tensor<?xi64>, tensor<5xi64>, tensor<?xf32> -> tensor<4x4xf32>
    %e:2 = emb.shard_pool_group [@t, @r] %p, %pr : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
    %g:2 = emb.shard_pool_grad_group [@t, @r] %dy, %dy : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
    return
  }
}
