// -emb-auto's disk ladder orders tables by bytes per id a batch reads: a
// table whose rows are each read least often loses the least in the page
// cache. @wide is the larger table, but every example reads 16 of its rows
// (4 KiB of table per id read); @narrow is half its size and read once per
// example (32 KiB per id), so @narrow goes to disk first (by size alone,
// @wide would: it also fits the budget by itself).
// RUN: emb-opt %s -emb-autodiff -emb-auto="budget=300000" | FileCheck %s
// CHECK: "  chose {{.*}}, 1 table(s) on disk: peak {{.*}}", "  disk: @narrow"]
// CHECK: emb.table @wide[4096 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>{{$}}
// CHECK: emb.table @narrow[2048 x 16] f32 {{.*}} placement disk

module @order attributes {emb.training = #emb.training<batch_size = 64, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<>} {
  emb.table @wide [4096 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
  emb.table @narrow [2048 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
  emb.param @w0 : tensor<32x1xf32> init<kind = xavier_uniform>
  func.func @forward(%iw: tensor<?xi64> {emb.feature = "w", emb.role = "ids", emb.max_ids = 1024 : i64, emb.vocab = 4096 : i64},
                     %ow: tensor<65xi64> {emb.feature = "w", emb.role = "offsets"},
                     %in: tensor<64xi64> {emb.feature = "n", emb.role = "ids", emb.max_ids = 64 : i64, emb.vocab = 2048 : i64},
                     %on: tensor<65xi64> {emb.feature = "n", emb.role = "offsets"},
                     %y: tensor<64x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<64x1xf32>) {
    %a = emb.lookup @wide[%iw, %ow] sum : tensor<?xi64>, tensor<65xi64> -> tensor<64x16xf32>
    %b = emb.lookup @narrow[%in, %on] sum : tensor<64xi64>, tensor<65xi64> -> tensor<64x16xf32>
    %cat = emb.concat %a, %b : tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x32xf32>
    %w0 = emb.get @w0 : tensor<32x1xf32>
    %p = emb.dense %cat, %w0 : tensor<64x32xf32>, tensor<32x1xf32> -> tensor<64x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<64x1xf32>, tensor<64x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<64x1xf32>
  }
}
