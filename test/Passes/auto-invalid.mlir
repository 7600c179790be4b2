// -emb-auto refuses a budget no candidate fits (naming the smallest that
// would, in bytes), a module already planned, and one without @train_step.
// RUN: emb-opt %s -emb-autodiff -emb-auto="budget=50000 disk=false" -verify-diagnostics
// With disk placement the same 48.8 KiB fits (@big on disk); 9.8 KiB
// does not, even with every table on disk.
// RUN: sed '/expected-error/d' %s | emb-opt -emb-autodiff -emb-auto="budget=50000" \
// RUN:   | FileCheck %s --check-prefix=DISKFITS
// RUN: sed '/expected-error/d' %s | not emb-opt -emb-autodiff -emb-auto="budget=10000" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DISK
// RUN: sed '/expected-error/d' %s \
// RUN:   | not emb-opt -emb-autodiff -emb-auto="budget=300000" -emb-auto="budget=300000" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TWICE
// RUN: sed '/expected-error/d' %s | not emb-opt -emb-auto="budget=300000" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOSTEP

// The smallest plan found: every table int4 (two codes per byte, fp16 scale
// and bias per row), 64 micro-batches of 1 example.
// DISKFITS: "  disk: @big"
// DISK: error: memory budget 9.8 KiB (10000 bytes) is too small: the smallest plan found needs {{.*}}, with 64 micro-batches, remat none, 2 table(s) on disk
// TWICE: error: -emb-auto has already chosen this module's plan
// NOSTEP: error: -emb-auto needs @train_step: run -emb-autodiff first

// expected-error @+1 {{memory budget 48.8 KiB (50000 bytes) is too small: the smallest plan found needs 64.1 KiB (65600 bytes), with 64 micro-batches, remat none, 2 largest table(s) int4_rowwise, the others int8_rowwise}}
module @fit attributes {emb.training = #emb.training<batch_size = 64, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<>} {
  emb.table @big [4096 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
  emb.table @small [512 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
  emb.param @w0 : tensor<32x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ia: tensor<64xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 64 : i64, emb.vocab = 4096 : i64},
                     %oa: tensor<65xi64> {emb.feature = "a", emb.role = "offsets"},
                     %ib: tensor<64xi64> {emb.feature = "b", emb.role = "ids", emb.max_ids = 64 : i64, emb.vocab = 512 : i64},
                     %ob: tensor<65xi64> {emb.feature = "b", emb.role = "offsets"},
                     %y: tensor<64x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<64x1xf32>) {
    %a = emb.lookup @big[%ia, %oa] sum : tensor<64xi64>, tensor<65xi64> -> tensor<64x16xf32>
    %b = emb.lookup @small[%ib, %ob] sum : tensor<64xi64>, tensor<65xi64> -> tensor<64x16xf32>
    %cat = emb.concat %a, %b : tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x32xf32>
    %w0 = emb.get @w0 : tensor<32x1xf32>
    %p = emb.dense %cat, %w0 : tensor<64x32xf32>, tensor<32x1xf32> -> tensor<64x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<64x1xf32>, tensor<64x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<64x1xf32>
  }
}
