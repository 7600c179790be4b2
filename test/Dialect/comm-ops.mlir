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
