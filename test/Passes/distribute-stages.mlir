// -emb-distribute with pipeline_ranks: the stages of -emb-pipeline's schedule
// are placed on ranks (contiguous stages per rank, `ranks` on the schedule);
// a table read by one rank's stages only gets that rank as its single owner
// (sharding table_wise, emb.shard_rows, no exchange: its lookups run there);
// a table read on several ranks stays replicated and its sparse gradient is
// gathered; the dense gradient is all-reduced in @update.
// The RUN lines read Inputs/distribute-stages.mlir: -emb-autodiff's output for the
// model in Inputs/distribute-stages-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/distribute-stages.mlir -split-input-file -emb-pack-params -emb-pipeline \
// RUN:   -emb-distribute | FileCheck %s
// It parses back.
// RUN: emb-opt %S/Inputs/distribute-stages.mlir -split-input-file -emb-pack-params -emb-pipeline \
// RUN:   -emb-distribute | emb-opt -split-input-file | FileCheck %s
// 4 stages on the 2 ranks (option): two stages each.
// RUN: emb-opt %S/Inputs/distribute-stages.mlir -split-input-file -emb-pipeline="stages=4" \
// RUN:   -emb-distribute="pipeline-ranks=2" | FileCheck %s --check-prefix=FOUR
// The plan: stage_ranks, grad_scale 1/2 for the micro-batches only (every
// rank saw the whole batch: no 1/N), the
// owner's table buffers and the stages' own buffers on one rank, a gathered
// gradient with room for both ranks' rows. One array element per line.
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/distribute-stages.mlir \
// RUN:   | emb-opt -emb-pack-params -emb-pipeline -emb-distribute \
// RUN:       -emb-to-plan="emit-json=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN

// @ta is looked up on stage 0 only, @tb on both stages (its second lookup
// feeds the head), so @tb stays replicated.
// CHECK-LABEL: module @two_stages
// CHECK-NOT:     emb.data_parallel
// CHECK:         emb.table @ta[10 x 4] f32 {{.*}} sharding table_wise {emb.shard_rows = array<i64: 0, 10, 10>}
// CHECK:         emb.table @tb[20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>{{$}}
// CHECK-NOT:     emb.table_batch
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.grad_all_reduce_start @dense_f32 offset 0 size
// CHECK-NEXT:      emb.gather_rows @tb
// CHECK-NEXT:      emb.grad_all_reduce_wait @dense_f32
// CHECK-NOT:       emb.gather_rows
// CHECK:         emb.schedule gpipe stages 2 micro_batches 2 ranks [0, 1] {
// CHECK:           emb.sched.send stage 0 mb 0 to 1

// FOUR-LABEL: module @two_stages
// FOUR:         emb.schedule gpipe stages 4 micro_batches 2 ranks [0, 0, 1, 1] {

// PLAN:      "name": "table/ta", {{.*}} "rank": 0,
// Capacity: 2 ranks x 2 lookups x 2 micro-batches x 4 ids.
// PLAN:      "name": "grad_rows/tb", {{.*}} "shape": [ 32 ],
// PLAN:      "config": { "batch_size": 4, "data_parallel": 1, {{.*}} "pipeline_stages": 2, {{.*}} "stage_ranks": [ 0, 1 ], "warmup_steps": 0 },
// PLAN:      "notes": [ {{.*}}"-emb-distribute: 2 pipeline stages on 2 ranks [0, 1]; 1 table(s) on one rank, 1 replicated with gathered gradients, 1 dense all-reduce bucket(s); {{[0-9]+}} buffer(s) on one rank only",
// PLAN:      "update": [ { "attrs": { "offset": 0, "pack": 0, "size": {{[0-9]+}} }, {{.*}} "op": "grad_all_reduce_start",
// PLAN:      { "attrs": { "grad_scale": 0.5, "pack": 0 }, {{.*}} "op": "update_packed",

// Input: module @two_stages, Inputs/distribute-stages.mlir.
