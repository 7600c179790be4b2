// -emb-batch-exchanges on 2 ranks: @a (table_wise, weighted), @b (row_wise,
// mean of hashed ids: per_bag_mean) and @c (table_wise). The three
// shard_ids become one group: the hash of @b's raw ids, which is pure, moves
// up so that the group can take it. @a and @b's pooled rows are used by the
// first dot before @c is looked up, so shard_pool groups @a and @b and
// leaves @c's alone; the backward's three shard_pool_grad form one group.
// The RUN lines read Inputs/batch-exchanges.mlir: -emb-autodiff's output for the
// model in Inputs/batch-exchanges-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/batch-exchanges.mlir -emb-pack-params -emb-distribute -emb-batch-exchanges \
// RUN:   | FileCheck %s
// The groups parse back.
// RUN: emb-opt %S/Inputs/batch-exchanges.mlir -emb-pack-params -emb-distribute -emb-batch-exchanges \
// RUN:   | emb-opt | FileCheck %s
// In the plan: one kernel per group, its members' tables by index, the
// flags per member; the CUDA program runs each group as one collective
// launch (the pool group's members are one of each kind: no staging).
// RUN: emb-opt %S/Inputs/batch-exchanges.mlir -emb-pack-params -emb-distribute -emb-batch-exchanges \
// RUN:     -emb-plan-memory -emb-to-plan="emit-json=true cuda=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// Fusion leaves the groups and the local lookups between them alone.
// RUN: emb-opt %S/Inputs/batch-exchanges.mlir -emb-pack-params -emb-distribute -emb-batch-exchanges \
// RUN:     -emb-fuse | FileCheck %s --check-prefix=FUSE
// Without sharded tables the pass changes nothing.
// RUN: sed -e 's/ sharding [a-z_]*$//' %S/Inputs/batch-exchanges.mlir | emb-opt -emb-distribute > %t.before
// RUN: emb-opt %t.before -emb-batch-exchanges > %t.after
// RUN: diff %t.before %t.after

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:      %[[I:[^:]*]]: tensor<?xi64> {{.*}}, %[[O:[^:]*]]: tensor<5xi64> {{.*}}, %[[W:[^:]*]]: tensor<?xf32> {{.*}}, %[[R:[^:]*]]: tensor<?xi64> {{.*}}, %[[RO:[^:]*]]: tensor<5xi64>
// CHECK-NEXT:      %[[H:.*]] = emb.hash %[[R]] buckets(10) seed(7)
// CHECK-NEXT:      %[[LI:.*]]:3, %[[LO:.*]]:3, %[[LW:.*]]:2 = emb.shard_ids_group [@a, @b, @c] ids(%[[I]], %[[H]], %[[I]] : {{.*}}) offsets(%[[O]], %[[RO]], %[[O]] : {{.*}}) weights(%[[W]] : tensor<?xf32>) weighted [true, false, false] per_bag_mean [false, true, false] -> local_ids(tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<9xi64>, tensor<9xi64>, tensor<9xi64>) local_weights(tensor<?xf32>, tensor<?xf32>)
// CHECK-NEXT:      %[[PA:.*]] = emb.lookup @a[%[[LI]]#0, %[[LO]]#0 weights %[[LW]]#0] sum
// CHECK-NEXT:      %[[PB:.*]] = emb.lookup @b[%[[LI]]#1, %[[LO]]#1 weights %[[LW]]#1] sum
// CHECK-NEXT:      %[[E:.*]]:2 = emb.shard_pool_group [@a, @b] %[[PA]], %[[PB]] : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT:      emb.add %[[E]]#0, %[[E]]#1
// CHECK:           %[[PC:.*]] = emb.lookup @c[%[[LI]]#2, %[[LO]]#2] sum
// CHECK-NEXT:      emb.shard_pool @c %[[PC]] : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK:           %[[G:.*]]:3 = emb.shard_pool_grad_group [@c, @b, @a] {{.*}} -> tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
// CHECK-NEXT:      emb.lookup_grad @c[%[[LI]]#2, %[[LO]]#2] sum %[[G]]#0
// CHECK:           emb.lookup_grad @b[%[[LI]]#1, %[[LO]]#1 weights %[[LW]]#1] sum %[[G]]#1
// CHECK:           emb.lookup_grad @a[%[[LI]]#0, %[[LO]]#0 weights %[[LW]]#0] sum %[[G]]#2
// CHECK-NOT:       emb.shard_ids
// CHECK-NOT:       emb.shard_pool_grad

// PLAN: "entry": "shard_ids_group", {{.*}} "members": [ { "bags": 4, "bounds": [ 0, 30, 30 ], {{.*}} "table": "a", "weighted": true, "weights_out": true },
// PLAN-NEXT: { "bags": 4, "bounds": [ 0, 5, 10 ], {{.*}} "per_bag_mean": true, {{.*}} "table": "b", "weighted": false, "weights_out": true },
// PLAN-NEXT: { "bags": 4, "bounds": [ 0, 0, 10 ], {{.*}} "table": "c", "weighted": false, "weights_out": false } ] }
// PLAN: "entry": "shard_pool_group", {{.*}} "members": [ { "block": 16, "owner": 0 },
// PLAN-NEXT: { "block": 16, "owner": -1 } ], "staging": 0 }
// PLAN: "entry": "shard_pool", {{.*}} "params": { "block": 16, "owner": 1 }
// The gradients' table_wise members (@c and @a) are packed: 2 ranks x 32 floats.
// PLAN: "entry": "shard_pool_grad_group", {{.*}} "members": [ { "block": 16, "owner": 1 },
// PLAN-NEXT: { "block": 16, "owner": -1 },
// PLAN-NEXT: { "block": 16, "owner": 0 } ], "staging": 64 }
// PLAN: "attrs": { "per_bag_mean": [ false, true, false ], "tables": [ 0, 1, 2 ], "weighted": [ true, false, false ] }, {{.*}} "op": "shard_ids_group", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ]
// PLAN: "attrs": { "tables": [ 0, 1 ] }, {{.*}} "op": "shard_pool_group"
// PLAN: "attrs": { "table": 2 }, {{.*}} "op": "shard_pool"
// PLAN: "attrs": { "tables": [ 2, 1, 0 ] }, {{.*}} "op": "shard_pool_grad_group"

// FUSE:      emb.shard_ids_group
// FUSE-NEXT: emb.lookup @a
// FUSE-NEXT: emb.lookup @b
// FUSE-NEXT: emb.shard_pool_group

// Input: module @towers, Inputs/batch-exchanges.mlir.
