// -emb-distribute with sharded tables on 3 ranks. table_wise tables get one
// owner each, largest first to the rank with the fewest table bytes (@big
// to rank 0, @small to rank 1); a row_wise table gets ceil(10 / 3) = 4 rows
// per rank; an unsharded table stays replicated and gathered. Each sharded
// lookup becomes shard_ids, a lookup of the 3 x 4 bags on the local shard
// and shard_pool; its backward gathers the pooled gradient (shard_pool_grad)
// and accumulates local rows, which @update coalesces and steps with no
// gather. A row_wise mean becomes a weighted sum (per_bag_mean).
// The RUN lines read Inputs/distribute-shards.mlir: -emb-autodiff's output for the
// model in Inputs/distribute-shards-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/distribute-shards.mlir -emb-pack-params -emb-distribute | FileCheck %s
// The exchanges parse back.
// RUN: emb-opt %S/Inputs/distribute-shards.mlir -emb-pack-params -emb-distribute | emb-opt | FileCheck %s
// In the plan: shard boundaries per table, buffers sized by the largest
// shard, a table_wise table's buffers marked with their rank, so that
// -emb-plan-memory lets tables of different ranks share bytes (@small at
// @big's offset 0).
// RUN: emb-opt %S/Inputs/distribute-shards.mlir -emb-pack-params -emb-distribute -emb-plan-memory \
// RUN:     -emb-to-plan="emit-json=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// Fusion leaves the exchanges and the local lookups alone.
// RUN: emb-opt %S/Inputs/distribute-shards.mlir -emb-pack-params -emb-distribute -emb-fuse \
// RUN:   | FileCheck %s --check-prefix=FUSE

// CHECK-LABEL: module @sharded
// CHECK:         emb.table @big[30 x 4] {{.*}} sharding table_wise {emb.shard_rows = array<i64: 0, 30, 30, 30>}
// CHECK:         emb.table @small[10 x 4] {{.*}} sharding table_wise {emb.shard_rows = array<i64: 0, 0, 10, 10>}
// CHECK:         emb.table @rows[10 x 4] {{.*}} sharding row_wise {emb.shard_rows = array<i64: 0, 4, 8, 10>}
// CHECK:         emb.table @whole[10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>{{$}}
// CHECK:         func.func @train_step(%[[I:.*]]: tensor<?xi64> {{.*}}, %[[O:.*]]: tensor<5xi64>
// CHECK:           %[[BI:.*]], %[[BO:.*]] = emb.shard_ids @big[%[[I]], %[[O]]] : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<13xi64>
// CHECK-NEXT:      %[[BP:.*]] = emb.lookup @big[%[[BI]], %[[BO]]] max : tensor<?xi64>, tensor<13xi64> -> tensor<12x4xf32>
// CHECK-NEXT:      %[[B:.*]] = emb.shard_pool @big %[[BP]] : tensor<12x4xf32> -> tensor<4x4xf32>
// CHECK:           %[[RI:.*]], %[[RO:.*]], %[[RW:.*]] = emb.shard_ids @rows[%[[I]], %[[O]]] per_bag_mean : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<13xi64>, tensor<?xf32>
// CHECK-NEXT:      %[[RP:.*]] = emb.lookup @rows[%[[RI]], %[[RO]] weights %[[RW]]] sum
// CHECK-NEXT:      emb.shard_pool @rows %[[RP]] : tensor<12x4xf32> -> tensor<4x4xf32>
// CHECK:           emb.lookup @whole[%[[I]], %[[O]]] sum
// CHECK:           emb.accumulate_rows @whole[%[[I]]]
// CHECK:           %[[RG:.*]] = emb.shard_pool_grad @rows %[[DY:.*]] : tensor<4x4xf32> -> tensor<12x4xf32>
// CHECK-NEXT:      %[[RR:.*]] = emb.lookup_grad @rows[%[[RI]], %[[RO]] weights %[[RW]]] sum %[[RG]]
// CHECK-NEXT:      emb.accumulate_rows @rows[%[[RI]]], %[[RR]]
// CHECK:           %[[BG:.*]] = emb.shard_pool_grad @big %[[DY]]
// CHECK-NEXT:      %[[BR:.*]] = emb.lookup_grad @big[%[[BI]], %[[BO]]] max %[[BG]]
// CHECK-NEXT:      emb.accumulate_rows @big[%[[BI]]], %[[BR]]
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.gather_rows @whole
// CHECK-NOT:       emb.gather_rows
// CHECK:           emb.update @big
// CHECK-NEXT:      return

// PLAN: "name": "table/big", "offset": 0, {{.*}} "rank": 0, "role": "table", "shape": [ 30, 4 ]
// PLAN: "name": "table/small", "offset": 0, {{.*}} "rank": 1, "role": "table", "shape": [ 10, 4 ]
// PLAN: "name": "table/rows", {{.*}} "rank": -1, "role": "table", "shape": [ 4, 4 ]
// PLAN: "attrs": { "per_bag_mean": true, "table": 2 }, {{.*}} "op": "shard_ids"
// PLAN: "op": "shard_pool_grad"
// PLAN: "name": "big", {{.*}} "rows": 30, "shard_rows": [ 0, 30, 30, 30 ]
// PLAN: "name": "rows", {{.*}} "rows": 10, "shard_rows": [ 0, 4, 8, 10 ]
// PLAN: "name": "whole", {{.*}} "rows": 10, "shard_rows": [],

// FUSE:     emb.shard_ids @big
// FUSE-NEXT: emb.lookup @big
// FUSE-NEXT: emb.shard_pool @big
// FUSE:     emb.update @big
// FUSE-NOT: embedding_update
// Input: module @sharded, Inputs/distribute-shards.mlir.
