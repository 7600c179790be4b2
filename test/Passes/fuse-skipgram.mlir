// -emb-fuse with embedding_updates = hogwild (or per_example): the whole
// skip-gram step becomes one `skipgram` group, the tables' coalesce and
// update move in from @update, and nothing else is grouped; -emb-to-plan
// lowers it to one skipgram_step kernel over the packed table batch.
// The RUN lines read Inputs/fuse-skipgram.mlir: -emb-autodiff's output for the
// model in Inputs/fuse-skipgram-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/fuse-skipgram.mlir -emb-pack-params -emb-fuse | FileCheck %s
// RUN: emb-opt %S/Inputs/fuse-skipgram.mlir -emb-pack-params -emb-fuse | emb-opt | FileCheck %s
// RUN: emb-opt %S/Inputs/fuse-skipgram.mlir -emb-pack-params -emb-fuse \
// RUN:   -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @train_step
// CHECK-NEXT: %[[G:.*]]:2 = emb.fused skipgram -> tensor<4x1xf32>, tensor<f32> {
// CHECK: emb.lookup @in_vectors
// CHECK: emb.lookup @out_vectors
// CHECK: emb.gather @out_vectors
// CHECK: emb.loss neg_sampling
// CHECK: emb.loss_grad neg_sampling
// CHECK: emb.accumulate_rows @in_vectors
// CHECK-NEXT: emb.coalesce_rows @tables_d8
// CHECK-NEXT: emb.update @tables_d8
// CHECK-NEXT: emb.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]#1, %[[G]]#0
// CHECK-NOT: emb.fused
// CHECK-LABEL: func.func @update() {
// CHECK-NEXT: return

// The kernel: centre ids and offsets, context ids and offsets, negatives;
// the loss, the positive scores, the batch's values (no sgd state); each
// role's rows in the batch.
// PLAN: "forward_kernels": 1,
// PLAN: "step": [ { "attrs": { "batch": 0, "center": { "row_offset": 0, "rows": 50 }, "context": { "row_offset": 50, "rows": 50 }, "mode": "hogwild", "negatives": { "row_offset": 50, "rows": 50 } }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "skipgram_step", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, 0 ], "stage": 0 }
// PLAN-SAME: ],
// Input: module @skipgram, Inputs/fuse-skipgram.mlir.
