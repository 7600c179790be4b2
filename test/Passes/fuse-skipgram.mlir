// -emb-fuse with embedding_updates = hogwild (or per_example): the whole
// skip-gram step becomes one `skipgram` group, the tables' coalesce and
// update move in from @update, and nothing else is grouped; -emb-to-plan
// lowers it to one skipgram_step kernel over the packed table batch.
// RUN: emb-opt %s -emb-autodiff -emb-pack-params -emb-fuse | FileCheck %s
// RUN: emb-opt %s -emb-autodiff -emb-pack-params -emb-fuse | emb-opt | FileCheck %s
// RUN: emb-opt %s -emb-autodiff -emb-pack-params -emb-fuse \
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
module @skipgram attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, embedding_updates = hogwild>} {
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @forward(%arg0: tensor<?xi64> {emb.feature = "center", emb.max_ids = 4 : i64, emb.role = "ids", emb.vocab = 50 : i64}, %arg1: tensor<5xi64> {emb.feature = "center", emb.role = "offsets"}, %arg2: tensor<?xi64> {emb.feature = "context", emb.max_ids = 4 : i64, emb.role = "ids", emb.vocab = 50 : i64}, %arg3: tensor<5xi64> {emb.feature = "context", emb.role = "offsets"}, %arg4: tensor<4x2xi64> {emb.feature = "negatives", emb.power = 7.500000e-01 : f64, emb.role = "negatives", emb.vocab = 50 : i64}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
}
