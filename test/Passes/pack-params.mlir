// -emb-pack-params: dense parameters of one element type in one
// emb.param_pack (members in backward order at 64-byte aligned offsets, cut
// into all-reduce buckets), tables of one dim, storage and optimizer in one
// emb.table_batch, and @update reduced to one coalesce/update per pack or
// batch. @train_step is not changed.
// The RUN lines read Inputs/pack-params.mlir: -emb-autodiff's output for the
// models in Inputs/pack-params-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/pack-params.mlir -split-input-file -emb-pack-params | FileCheck %s
// Buckets of at most 1 KiB (256 f32 elements), cut at member boundaries.
// RUN: emb-opt %S/Inputs/pack-params.mlir -split-input-file -emb-pack-params="bucket-kib=1" \
// RUN:   | FileCheck %s --check-prefix=BUCKET
// Packing only: the tables keep their own buffers and updates.
// RUN: emb-opt %S/Inputs/pack-params.mlir -split-input-file -emb-pack-params="batch-tables=false" \
// RUN:   | FileCheck %s --check-prefix=NOBATCH
// The packed IR parses back.
// RUN: emb-opt %S/Inputs/pack-params.mlir -split-input-file -emb-pack-params | emb-opt -split-input-file \
// RUN:   | FileCheck %s
// The plan of the first module (the only one the CPU runtime can run: f32
// packs and batches only): one buffer per pack and batch, the members'
// buffers views into them ("parent"), the packs and batches listed, one
// update kernel each. One array element per line, as in to-plan.mlir.
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/pack-params.mlir \
// RUN:   | emb-opt -emb-pack-params -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN

// Backward order: @train_step finishes the gradients of @b1, @w1 (the last
// layer) before @b0, @w0, so they come first. Each member starts at a
// multiple of 16 elements: @b1 (1 element) at 0, @w1 (20) at 16, @b0 (8) at
// 48, @w0 (24) at 64; 96 in all, one bucket.
// @ta and @tb (dim 4, f32, adagrad) are batched in module order; @tc (sgd)
// and @td (dim 8) are alone and stay tables.
// CHECK-LABEL: module @mlp
// CHECK:         emb.param @b1 : tensor<1xf32>
// CHECK-NEXT:    emb.param_pack @dense_f32 : f32[96] members [@b1, @w1, @b0, @w0] offsets [0, 16, 48, 64] buckets [0, 96]
// CHECK-NEXT:    emb.table_batch @tables_d4 [@ta, @tb]
// CHECK-NEXT:    func.func @train_step
// The step still names the members.
// CHECK:         emb.accumulate_grad @b1,
// CHECK:         emb.accumulate_rows @tb[
// CHECK:         emb.accumulate_rows @ta[
// CHECK:         emb.accumulate_grad @w0,
// CHECK-NEXT:    return
// One coalesce for the batch, at the place of the first member's; one update
// for the pack, one for the batch.
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @td
// CHECK-NEXT:      emb.coalesce_rows @tc
// CHECK-NEXT:      emb.coalesce_rows @tables_d4
// CHECK-NEXT:      emb.update @dense_f32
// CHECK-NEXT:      emb.update @td
// CHECK-NEXT:      emb.update @tc
// CHECK-NEXT:      emb.update @tables_d4
// CHECK-NEXT:      return
// CHECK-NEXT:    }

// 96 elements (384 bytes) fit one 1 KiB bucket.
// BUCKET-LABEL: module @mlp
// BUCKET:         emb.param_pack @dense_f32 : f32[96] members [@b1, @w1, @b0, @w0] offsets [0, 16, 48, 64] buckets [0, 96]

// NOBATCH-LABEL: module @mlp
// NOBATCH:         emb.param_pack @dense_f32 : f32[96] members [@b1, @w1, @b0, @w0] offsets [0, 16, 48, 64] buckets [0, 96]
// NOBATCH-NOT:     emb.table_batch
// NOBATCH:         func.func @update() {
// NOBATCH-NEXT:      emb.coalesce_rows @td
// NOBATCH-NEXT:      emb.coalesce_rows @tc
// NOBATCH-NEXT:      emb.coalesce_rows @tb
// NOBATCH-NEXT:      emb.coalesce_rows @ta
// NOBATCH-NEXT:      emb.update @dense_f32
// NOBATCH-NEXT:      emb.update @td
// NOBATCH-NEXT:      emb.update @tc
// NOBATCH-NEXT:      emb.update @tb
// NOBATCH-NEXT:      emb.update @ta
// NOBATCH-NEXT:      return

// The plan: the pack's value, gradient and two adam moments are whole
// buffers; each member's are views at its offset (x 4 bytes) into them.
// PLAN:      { "arena_bytes": {{[0-9]+}}, "buffers": [ { "bytes": 384, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "pack/dense_f32", "offset": 0, "origin": "emb-pack-params", "parent": -1, "rank": -1, "role": "param", "shape": [ 96 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 384, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "grad/dense_f32", "offset": 384, "origin": "emb-pack-params", "parent": -1, "rank": -1, "role": "grad", "shape": [ 96 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 384, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/dense_f32/0", "offset": 768, "origin": "emb-pack-params", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 96 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 384, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/dense_f32/1", "offset": 1152, "origin": "emb-pack-params", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 96 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 96, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "param/w0", "offset": 256, "origin": "frontend", "parent": 0, "rank": -1, "role": "param", "shape": [ 3, 8 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 96, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "grad/w0", "offset": 640, "origin": "emb-autodiff", "parent": 1, "rank": -1, "role": "grad", "shape": [ 3, 8 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 96, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/w0/0", "offset": 1024, "origin": "emb-autodiff", "parent": 2, "rank": -1, "role": "optimizer_state", "shape": [ 3, 8 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 96, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/w0/1", "offset": 1408, "origin": "emb-autodiff", "parent": 3, "rank": -1, "role": "optimizer_state", "shape": [ 3, 8 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 32, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "param/b0", "offset": 192, "origin": "frontend", "parent": 0, "rank": -1, "role": "param", "shape": [ 8 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 32, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "grad/b0", "offset": 576, "origin": "emb-autodiff", "parent": 1, "rank": -1, "role": "grad", "shape": [ 8 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 32, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/b0/0", "offset": 960, "origin": "emb-autodiff", "parent": 2, "rank": -1, "role": "optimizer_state", "shape": [ 8 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 32, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/b0/1", "offset": 1344, "origin": "emb-autodiff", "parent": 3, "rank": -1, "role": "optimizer_state", "shape": [ 8 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 80, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "param/w1", "offset": 64, "origin": "frontend", "parent": 0, "rank": -1, "role": "param", "shape": [ 20, 1 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 80, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "grad/w1", "offset": 448, "origin": "emb-autodiff", "parent": 1, "rank": -1, "role": "grad", "shape": [ 20, 1 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 80, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/w1/0", "offset": 832, "origin": "emb-autodiff", "parent": 2, "rank": -1, "role": "optimizer_state", "shape": [ 20, 1 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 80, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/w1/1", "offset": 1216, "origin": "emb-autodiff", "parent": 3, "rank": -1, "role": "optimizer_state", "shape": [ 20, 1 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "param/b1", "offset": 0, "origin": "frontend", "parent": 0, "rank": -1, "role": "param", "shape": [ 1 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "grad/b1", "offset": 384, "origin": "emb-autodiff", "parent": 1, "rank": -1, "role": "grad", "shape": [ 1 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/b1/0", "offset": 768, "origin": "emb-autodiff", "parent": 2, "rank": -1, "role": "optimizer_state", "shape": [ 1 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/b1/1", "offset": 1152, "origin": "emb-autodiff", "parent": 3, "rank": -1, "role": "optimizer_state", "shape": [ 1 ], "slots": 1 },
// The batch: 10 + 20 rows, one sparse gradient with room for both members'
// ids (6 + 6), one adagrad state; @tb starts at row 10 (160 bytes in).
// PLAN-NEXT: { "bytes": 480, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "tables/tables_d4", "offset": 1536, "origin": "emb-pack-params", "parent": -1, "rank": -1, "role": "table", "shape": [ 30, 4 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 96, "dtype": "i64", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_rows/tables_d4", "offset": {{[0-9]+}}, "origin": "emb-pack-params", "parent": -1, "rank": -1, "role": "grad", "shape": [ 12 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 192, "dtype": "f32", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_values/tables_d4", "offset": {{[0-9]+}}, "origin": "emb-pack-params", "parent": -1, "rank": -1, "role": "grad", "shape": [ 12, 4 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 480, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/tables_d4/0", "offset": 2368, "origin": "emb-pack-params", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 30, 4 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 160, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "table/ta", "offset": 1536, "origin": "frontend", "parent": 20, "rank": -1, "role": "table", "shape": [ 10, 4 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 160, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/ta/0", "offset": 2368, "origin": "emb-autodiff", "parent": 23, "rank": -1, "role": "optimizer_state", "shape": [ 10, 4 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 320, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "table/tb", "offset": 1696, "origin": "frontend", "parent": 20, "rank": -1, "role": "table", "shape": [ 20, 4 ], "slots": 1 },
// PLAN-NEXT: { "bytes": 320, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/tb/0", "offset": 2528, "origin": "emb-autodiff", "parent": 23, "rank": -1, "role": "optimizer_state", "shape": [ 20, 4 ], "slots": 1 },
// The tables outside the batch have their own buffers.
// PLAN-NEXT: { "bytes": 480, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "table/tc", "offset": {{[0-9]+}}, "origin": "frontend", "parent": -1, "rank": -1, "role": "table", "shape": [ 30, 4 ], "slots": 1 },
// PLAN:      "name": "table/td", "offset": {{[0-9]+}}, "origin": "frontend", "parent": -1,
// PLAN:      "notes": [ "-emb-pack-params: 1 parameter pack(s), 1 table batch(es)",
// PLAN-SAME: "packs": [ { "buckets": [ 0, 96 ], "buffer": 0, "grad": 1, "members": [ 3, 2, 1, 0 ], "name": "dense_f32", "optimizer": { {{.*}} "kind": "adam", {{.*}} }, "state": [ 2, 3 ] } ],
// PLAN-SAME: "params": [ { "buffer": 4, "grad": 5,
// The members' sparse gradients go to the batch's, ids offset by the first row.
// PLAN:      { "attrs": { "row_offset": 10, "table": 1 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}} ], "op": "accumulate_rows", "outputs": [ 21, 22 ], "stage": 0 },
// PLAN:      { "attrs": { "row_offset": 0, "table": 0 }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}} ], "op": "accumulate_rows", "outputs": [ 21, 22 ], "stage": 0 },
// PLAN:      "table_batches": [ { "buffer": 20, "dim": 4, "grad_rows": 21, "grad_values": 22, "members": [ 0, 1 ], "name": "tables_d4", "optimizer": { {{.*}} "kind": "adagrad", {{.*}} }, "qparams": -1, "row_offsets": [ 0, 10 ], "rows": 30, "state": [ 23 ], "storage": "f32" } ],
// PLAN-SAME: "tables": [ { "buffer": 24, "dim": 4, "grad_rows": 21, "grad_values": 22, {{.*}} "name": "ta",
// PLAN:      "name": "tb", {{.*}} "state": [ 27 ], "storage": "f32" },
// PLAN:      "update": [ { "attrs": { "table": 3 }, {{.*}} "op": "coalesce_rows",
// PLAN-NEXT: { "attrs": { "table": 2 }, {{.*}} "op": "coalesce_rows",
// PLAN-NEXT: { "attrs": { "batch": 0 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "coalesce_rows", "outputs": [ 21, 22 ], "stage": 0 },
// PLAN-NEXT: { "attrs": { "grad_scale": 1.0, "pack": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 1 ], "op": "update_packed", "outputs": [ 0, 2, 3 ], "stage": 0 },
// PLAN-NEXT: { "attrs": { "grad_scale": 1.0, "table": 3 }, {{.*}} "op": "update_table",
// PLAN-NEXT: { "attrs": { "grad_scale": 1.0, "table": 2 }, {{.*}} "op": "update_table",
// PLAN-NEXT: { "attrs": { "batch": 0, "grad_scale": 1.0 }, "bytes": {{[0-9]+}}, "inputs": [ 21, 22 ], "op": "update_table", "outputs": [ 20, 23 ], "stage": 0 } ], "version": 12}

// Input: module @mlp, chunk 1 of Inputs/pack-params.mlir.

// -----

// Larger parameters: b2 (1 element) at 0, w2 (12) at 16, b1 (8) at 32, w1
// (160) at 48, b0 (20) at 208, w0 (320) at 240: 560 elements. @unused and
// the f64 @other get no gradient, hence no update: they are not trained and
// stay out of any pack (a pack's update would still decay them). With
// clipping, the pack's update
// takes the clip scale the members' updates took.
// CHECK-LABEL: module @buckets
// CHECK:         emb.param @other : tensor<7xf64>
// CHECK-NEXT:    emb.param_pack @dense_f32 : f32[560] members [@b2, @w2, @b1, @w1, @b0, @w0] offsets [0, 16, 32, 48, 208, 240] buckets [0, 560]
// CHECK-NOT:     emb.param_pack @dense_f64
// A single table is not batched.
// CHECK-NOT:     emb.table_batch
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @ta
// CHECK-NEXT:      %[[S:.*]] = emb.clip_grad_norm max_norm(1.000000e+00) : tensor<f32>
// CHECK-NEXT:      emb.update @dense_f32 scale %[[S]] : tensor<f32>
// CHECK-NEXT:      emb.update @ta scale %[[S]] : tensor<f32>
// CHECK-NEXT:      return

// 1 KiB buckets (256 elements): b2 .. b0 end at 228 (< 256); w0 would take
// the first bucket to 560, so a bucket starts at 240. w0 alone (320
// elements) is larger than a bucket: it gets one to itself.
// BUCKET-LABEL: module @buckets
// BUCKET:         emb.param_pack @dense_f32 : f32[560] members [@b2, @w2, @b1, @w1, @b0, @w0] offsets [0, 16, 32, 48, 208, 240] buckets [0, 240, 560]

// NOBATCH-LABEL: module @buckets
// NOBATCH:         emb.param_pack @dense_f32 : f32[560] {{.*}} buckets [0, 560]
// NOBATCH:         emb.update @dense_f32 scale

// Input: module @buckets, chunk 2 of Inputs/pack-params.mlir.

// -----

// Batches by dim, storage and optimizer (kind and hyper-parameters): @a1,
// @a4, @a7 (f32, adagrad; the initializer may differ) and @a5, @a6
// (rowwise_adagrad) are batched, the second under a fresh name; @a2 (bf16)
// and @a3 (another learning rate) stay alone. No dense parameter: no pack.
// CHECK-LABEL: module @groups
// CHECK-NOT:     emb.param_pack
// CHECK:         emb.table @a7
// CHECK-NEXT:    emb.table_batch @tables_d4 [@a1, @a4, @a7]
// CHECK-NEXT:    emb.table_batch @tables_d4_1 [@a5, @a6]
// CHECK-NEXT:    func.func @train_step
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @tables_d4
// CHECK-NEXT:      emb.coalesce_rows @tables_d4_1
// CHECK-NEXT:      emb.coalesce_rows @a3
// CHECK-NEXT:      emb.coalesce_rows @a2
// CHECK-NEXT:      emb.update @tables_d4
// CHECK-NEXT:      emb.update @tables_d4_1
// CHECK-NEXT:      emb.update @a3
// CHECK-NEXT:      emb.update @a2
// CHECK-NEXT:      return

// NOBATCH-LABEL: module @groups
// NOBATCH-NOT:     emb.param_pack
// NOBATCH-NOT:     emb.table_batch
// NOBATCH:         func.func @update() {
// NOBATCH-NEXT:      emb.coalesce_rows @a7
// NOBATCH-NEXT:      emb.coalesce_rows @a6
// NOBATCH-NEXT:      emb.coalesce_rows @a5
// NOBATCH-NEXT:      emb.coalesce_rows @a4
// NOBATCH-NEXT:      emb.coalesce_rows @a3
// NOBATCH-NEXT:      emb.coalesce_rows @a2
// NOBATCH-NEXT:      emb.coalesce_rows @a1
// NOBATCH-NEXT:      emb.update @a7
// NOBATCH-NEXT:      emb.update @a6
// NOBATCH-NEXT:      emb.update @a5
// NOBATCH-NEXT:      emb.update @a4
// NOBATCH-NEXT:      emb.update @a3
// NOBATCH-NEXT:      emb.update @a2
// NOBATCH-NEXT:      emb.update @a1
// NOBATCH-NEXT:      return

// Input: module @groups, chunk 3 of Inputs/pack-params.mlir.

// -----

// Names are fresh: a parameter called @dense_f32 and a table called
// @tables_d4 push the pack and the batch to @dense_f32_1 and @tables_d4_1.
// The batch's update keeps the clip scale.
// CHECK-LABEL: module @clash
// CHECK:         emb.param_pack @dense_f32_1 : f32[16] members [@dense_f32] offsets [0] buckets [0, 16]
// CHECK-NEXT:    emb.table_batch @tables_d4_1 [@tables_d4, @u]
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @tables_d4_1
// CHECK-NEXT:      %[[S:.*]] = emb.clip_grad_norm max_norm(5.000000e-01) : tensor<f32>
// CHECK-NEXT:      emb.update @dense_f32_1 scale %[[S]] : tensor<f32>
// CHECK-NEXT:      emb.update @tables_d4_1 scale %[[S]] : tensor<f32>
// CHECK-NEXT:      return

// NOBATCH-LABEL: module @clash
// NOBATCH:         emb.param_pack @dense_f32_1
// NOBATCH-NOT:     emb.table_batch
// NOBATCH:         emb.update @dense_f32_1 scale
// NOBATCH-NEXT:    emb.update @u scale
// NOBATCH-NEXT:    emb.update @tables_d4 scale

// Input: module @clash, chunk 4 of Inputs/pack-params.mlir.

// -----

// Batches by placement too: one buffer lives in one tier. @p1 and @p3
// (disk) form one batch, @p4 and @p5 (host) another; @p2 (device, the same
// dim and optimizer) stays alone. The plan's batches carry their members'
// placement (device, @p2's, is not written).
// CHECK-LABEL: module @placements
// CHECK:         emb.table @p5[50 x 4] f32 {{.*}} placement host
// CHECK-NEXT:    emb.table_batch @tables_d4 [@p1, @p3]
// CHECK-NEXT:    emb.table_batch @tables_d4_1 [@p4, @p5]
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @tables_d4_1
// CHECK-NEXT:      emb.coalesce_rows @tables_d4
// CHECK-NEXT:      emb.coalesce_rows @p2
// CHECK-NEXT:      emb.update @tables_d4_1
// CHECK-NEXT:      emb.update @tables_d4
// CHECK-NEXT:      emb.update @p2
// CHECK-NEXT:      return
// RUN: awk '/^\/\/ -----/ { n++; next } n == 4' %S/Inputs/pack-params.mlir \
// RUN:   | emb-opt -emb-pack-params -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLACED
// PLACED:      "table_batches": [ { "buffer": {{[0-9]+}}, "dim": 4, {{.*}} "members": [ 0, 2 ], "name": "tables_d4", {{.*}} "placement": "disk", "qparams": -1, "row_offsets": [ 0, 10 ], "rows": 40,
// PLACED-NEXT: { "buffer": {{[0-9]+}}, "dim": 4, {{.*}} "members": [ 3, 4 ], "name": "tables_d4_1", {{.*}} "placement": "host", "qparams": -1, "row_offsets": [ 0, 40 ], "rows": 90,
// PLACED:      "name": "p1", "optimizer": { {{[^}]*}} }, "placement": "disk", "qparams": -1,
// PLACED:      "name": "p2", "optimizer": { {{[^}]*}} }, "qparams": -1,
// PLACED:      "name": "p3", "optimizer": { {{[^}]*}} }, "placement": "disk", "qparams": -1,
// PLACED:      "name": "p4", "optimizer": { {{[^}]*}} }, "placement": "host", "qparams": -1,
// PLACED:      "name": "p5", "optimizer": { {{[^}]*}} }, "placement": "host", "qparams": -1,

// NOBATCH-LABEL: module @placements
// NOBATCH-NOT:     emb.table_batch

// Input: module @placements, chunk 5 of Inputs/pack-params.mlir.
