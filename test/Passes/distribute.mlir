// -emb-distribute: data parallelism over N ranks. The dense gradient is
// all-reduced bucket by bucket, each bucket started right after the
// accumulate_grad that finishes its last member and waited for at the head
// of @update; each table's (or batch's) sparse gradient is all-gathered in
// @update before its coalesce. The step is already typed for one rank's
// batch (the frontend divides batch_size by data_parallel).
// The RUN lines read Inputs/distribute.mlir: -emb-autodiff's output for the
// models in Inputs/distribute-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/distribute.mlir -split-input-file -emb-pack-params="bucket-kib=1" \
// RUN:   -emb-distribute | FileCheck %s
// The collectives parse back.
// RUN: emb-opt %S/Inputs/distribute.mlir -split-input-file -emb-pack-params="bucket-kib=1" \
// RUN:   -emb-distribute | emb-opt -split-input-file | FileCheck %s
// Unpacked parameters: one all-reduce each, one gather per table.
// RUN: emb-opt %S/Inputs/distribute.mlir -split-input-file -emb-distribute \
// RUN:   | FileCheck %s --check-prefix=NOPACK
// The ranks option overrides emb.plan.
// RUN: emb-opt %S/Inputs/distribute.mlir -split-input-file -emb-pack-params \
// RUN:   -emb-distribute="ranks=4" | FileCheck %s --check-prefix=RANKS
// Fusion keeps each start after the accumulations of its bucket and forms
// no embedding_update for a gathered table.
// RUN: emb-opt %S/Inputs/distribute.mlir -split-input-file -emb-pack-params="bucket-kib=1" \
// RUN:   -emb-distribute -emb-fuse | FileCheck %s --check-prefix=FUSE
// The plan of the first module: the kernels, grad_scale 1/2 and sparse
// gradients with room for both ranks' ids. One array element per line.
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/distribute.mlir \
// RUN:   | emb-opt -emb-pack-params="bucket-kib=1" -emb-distribute \
// RUN:       -emb-to-plan="emit-json=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN

// Members in backward order: @b1 (1) at 0, @w1 (44) at 16, @b0 (32) at 64,
// @w0 (512) at 96; buckets of 1 KiB cut before @w0: [0, 96) and [96, 608).
// CHECK-LABEL: module @mlp
// CHECK-SAME:    emb.data_parallel = 2 : i64
// CHECK:         emb.param_pack @dense_f32 : f32[608] members [@b1, @w1, @b0, @w0] offsets [0, 16, 64, 96] buckets [0, 96, 608]
// CHECK:         func.func @train_step
// CHECK:           emb.accumulate_grad @b1,
// CHECK-NEXT:      emb.accumulate_grad @w1,
// CHECK-NOT:       emb.grad_all_reduce_start
// CHECK:           emb.accumulate_grad @b0,
// CHECK-NEXT:      emb.grad_all_reduce_start @dense_f32 offset 0 size 96
// CHECK-NEXT:      emb.accumulate_grad @w0,
// CHECK-NEXT:      emb.grad_all_reduce_start @dense_f32 offset 96 size 512
// CHECK-NEXT:      return
// Gathers, then one wait, then everything that reads a gradient.
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.gather_rows @tc
// CHECK-NEXT:      emb.gather_rows @tables_d4
// CHECK-NEXT:      emb.grad_all_reduce_wait @dense_f32
// CHECK-NEXT:      emb.coalesce_rows @tc
// CHECK-NEXT:      emb.coalesce_rows @tables_d4
// CHECK-NEXT:      emb.update @dense_f32

// NOPACK-LABEL: module @mlp
// NOPACK:         emb.accumulate_grad @b1,
// NOPACK-NEXT:    emb.grad_all_reduce_start @b1 offset 0 size 1
// NOPACK-NEXT:    emb.accumulate_grad @w1,
// NOPACK-NEXT:    emb.grad_all_reduce_start @w1 offset 0 size 44
// NOPACK:         emb.accumulate_grad @b0,
// NOPACK-NEXT:    emb.grad_all_reduce_start @b0 offset 0 size 32
// NOPACK-NEXT:    emb.accumulate_grad @w0,
// NOPACK-NEXT:    emb.grad_all_reduce_start @w0 offset 0 size 512
// NOPACK:         func.func @update() {
// NOPACK-NEXT:      emb.gather_rows @tc
// NOPACK-NEXT:      emb.gather_rows @tb
// NOPACK-NEXT:      emb.gather_rows @ta
// NOPACK-NEXT:      emb.grad_all_reduce_wait @w0
// NOPACK-NEXT:      emb.grad_all_reduce_wait @b0
// NOPACK-NEXT:      emb.grad_all_reduce_wait @w1
// NOPACK-NEXT:      emb.grad_all_reduce_wait @b1
// NOPACK-NEXT:      emb.coalesce_rows @tc

// RANKS-LABEL: module @mlp
// RANKS-SAME:    emb.data_parallel = 4 : i64
// RANKS:         emb.grad_all_reduce_start @dense_f32 offset 0 size 608
// RANKS-NEXT:    return

// The start of bucket 0 (after @b0's accumulation) moves behind the
// dense_act_grad group that accumulates @b0 and @w0.
// FUSE-LABEL: module @mlp
// FUSE:         emb.fused dense_act_grad {
// FUSE:           emb.accumulate_grad @b0,
// FUSE-NEXT:      emb.accumulate_grad @w0,
// FUSE-NEXT:      emb.yield
// FUSE-NEXT:    }
// FUSE-NEXT:    emb.grad_all_reduce_start @dense_f32 offset 0 size 96
// FUSE-NEXT:    emb.grad_all_reduce_start @dense_f32 offset 96 size 512
// FUSE-NEXT:    return
// FUSE-NOT:     embedding_update
// FUSE:         func.func @update() {
// FUSE-NEXT:      emb.gather_rows @tc
// FUSE-NEXT:      emb.gather_rows @tables_d4
// FUSE-NEXT:      emb.grad_all_reduce_wait @dense_f32
// FUSE-NEXT:      emb.coalesce_rows @tc

// Capacities: 2 ranks x (6 + 6) ids for the batch, 2 x 6 for @tc.
// PLAN:      "name": "grad_rows/tables_d4", {{.*}} "shape": [ 24 ],
// PLAN:      "name": "grad_values/tables_d4", {{.*}} "shape": [ 24, 4 ],
// PLAN:      "name": "grad_rows/tc", {{.*}} "shape": [ 12 ],
// PLAN:      "name": "grad_values/tc", {{.*}} "shape": [ 12, 4 ],
// PLAN:      "config": { "batch_size": 4, "data_parallel": 2,
// PLAN:      "notes": [ "-emb-pack-params: {{.*}}", "-emb-distribute: 2 data-parallel ranks of 4 examples each; 2 gradient all-reduce bucket(s), 2 sparse gradient(s) all-gathered, 0 table(s) sharded",
// PLAN:      { "attrs": { "offset": 0, "pack": 0, "size": 96 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "grad_all_reduce_start", "outputs": [ 1 ], "stage": 0 },
// PLAN-NEXT: { "attrs": { "param": 0 }, {{.*}} "op": "accumulate_grad",
// PLAN-NEXT: { "attrs": { "offset": 96, "pack": 0, "size": 512 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "grad_all_reduce_start", "outputs": [ 1 ], "stage": 0 } ],
// PLAN:      "update": [ { "attrs": { "table": 2 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "gather_rows", "outputs": [ 29, 30 ], "stage": 0 },
// PLAN-NEXT: { "attrs": { "batch": 0 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "gather_rows", "outputs": [ 21, 22 ], "stage": 0 },
// PLAN-NEXT: { "attrs": { "pack": 0 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "grad_all_reduce_wait", "outputs": [ 1 ], "stage": 0 },
// PLAN-NEXT: { "attrs": { "table": 2 }, {{.*}} "op": "coalesce_rows",
// PLAN-NEXT: { "attrs": { "batch": 0 }, {{.*}} "op": "coalesce_rows",
// PLAN-NEXT: { "attrs": { "grad_scale": 0.5, "pack": 0 }, {{.*}} "op": "update_packed",
// PLAN-NEXT: { "attrs": { "grad_scale": 0.5, "table": 2 }, {{.*}} "op": "update_table",
// PLAN-NEXT: { "attrs": { "batch": 0, "grad_scale": 0.5 }, {{.*}} "op": "update_table", {{.*}} "version": 12}

// Input: module @mlp, chunk 1 of Inputs/distribute.mlir.

// -----

// With gradient accumulation the step runs twice per update: the buckets
// are summed once, at the head of @update, before the gathers and the wait.
// CHECK-LABEL: module @accumulated
// CHECK:         func.func @train_step
// CHECK-NOT:       emb.grad_all_reduce_start
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.grad_all_reduce_start @dense_f32 offset 0 size 32
// CHECK-NEXT:      emb.gather_rows @t
// CHECK-NEXT:      emb.grad_all_reduce_wait @dense_f32
// CHECK-NEXT:      emb.coalesce_rows @t
// CHECK-NEXT:      emb.update @dense_f32
// CHECK-NEXT:      emb.update @t
// Input: module @accumulated, chunk 2 of Inputs/distribute.mlir.

// -----

// One rank (no data_parallel): nothing changes.
// CHECK-LABEL: module @negative_one_rank
// CHECK-NOT:     emb.data_parallel
// CHECK-NOT:     emb.grad_all_reduce
// CHECK-NOT:     emb.gather_rows
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @t
// Input: module @negative_one_rank, chunk 3 of Inputs/distribute.mlir.
