// -emb-auto: fits the plan into a memory budget. Exact levers first
// (micro-batches, remat; with data parallelism, row_wise sharding of the
// largest tables; disk placement, the most bytes per lookup first), then
// table quantisation along the ladder (largest table first; bf16, then int8
// with the others bf16, then int4). The choice lands in the table storage,
// placement and emb.plan; the reasons in emb.auto.
// RUN: emb-opt %s -emb-autodiff -emb-auto | FileCheck %s --check-prefix=NONE
// RUN: emb-opt %s -emb-autodiff -emb-auto="budget=1000000" | FileCheck %s --check-prefix=AMPLE
// RUN: emb-opt %s -emb-autodiff -emb-auto="budget=400000" | FileCheck %s --check-prefix=MICRO
// RUN: emb-opt %s -emb-autodiff -emb-auto="budget=300000" | FileCheck %s --check-prefix=DISK
// RUN: emb-opt %s -emb-autodiff -emb-auto="budget=100000" | FileCheck %s --check-prefix=DISK2
// Without disk placement (embc: a CUDA target), quantisation.
// RUN: emb-opt %s -emb-autodiff -emb-auto="budget=300000 disk=false" | FileCheck %s --check-prefix=BF16
// RUN: emb-opt %s -emb-autodiff -emb-auto="budget=200000 disk=false" | FileCheck %s --check-prefix=INT8
// With data parallelism, sharding (exact) comes before quantisation.
// RUN: sed 's/emb.plan = #emb.plan<>/emb.plan = #emb.plan<data_parallel = 2>/' %s \
// RUN:   | emb-opt -emb-autodiff -emb-auto="budget=300000" | FileCheck %s --check-prefix=SHARD
// The budget can come from the model (plan.memory_budget), and the chosen
// settings are what the rest of the pipeline then compiles: the plan's
// arena fits the budget.
// RUN: sed 's/emb.plan = #emb.plan<>/emb.plan = #emb.plan<memory_budget = 400000>/' %s \
// RUN:   | emb-opt -emb-autodiff -emb-auto -emb-quantize -emb-pack-params -emb-remat \
// RUN:       -emb-pipeline -emb-fuse -emb-plan-memory -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=PLAN

// Without a budget nothing changes.
// NONE-NOT: emb.auto
// NONE:     emb.table @big[4096 x 16] f32

// 565 KiB fits a 977 KiB budget as it is: the fastest plan, unchanged.
// AMPLE: emb.auto = ["-emb-auto: memory budget 976.6 KiB", "  fits without quantisation (564.6 KiB with 1 micro-batch and no remat); the fastest that fits: 1 micro-batch, remat none", "  chose 1 micro-batch, remat none: peak 564.6 KiB (578112 bytes), estimated step {{[0-9]+}} us"]
// AMPLE-SAME: emb.plan = #emb.plan<>
// AMPLE: emb.table @big[4096 x 16] f32
// AMPLE: emb.table @small[512 x 16] f32

// 391 KiB: 8 micro-batches of 8 fit without touching the tables.
// MICRO: emb.auto = [{{.*}}"  chose 8 micro-batches, remat none: peak 389.6 KiB (398912 bytes)
// MICRO-SAME: emb.plan = #emb.plan<micro_batches = 8>
// MICRO: emb.table @big[4096 x 16] f32
// MICRO: emb.table @small[512 x 16] f32

// 293 KiB: no micro-batch count fits (the tables alone are 288 KiB), so the
// table with the most bytes per lookup (@big: 64 KiB of rows per id read)
// goes to disk, exact, and 2 micro-batches are then enough. The peak
// counts what needs memory, not the disk table's file-backed pages.
// DISK: "  no choice of micro-batches and remat fits (the smallest, 64 micro-batches, remat none, needs 366.7 KiB): moving tables to disk, the most bytes per lookup first"
// DISK-SAME: "  chose 2 micro-batches, remat none, 1 table(s) on disk: peak 212.4 KiB (217536 bytes without the disk tables), estimated step {{[0-9]+}} us", "  disk: @big"]
// DISK-SAME: emb.plan = #emb.plan<micro_batches = 2>
// DISK: emb.table @big[4096 x 16] f32 {{.*}} placement disk
// DISK: emb.table @small[512 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>{{$}}

// 98 KiB: both tables on disk, with 16 micro-batches, before any is
// quantised.
// DISK2: "  chose 16 micro-batches, remat none, 2 table(s) on disk: peak 88.4 KiB (90560 bytes without the disk tables), estimated step {{[0-9]+}} us", "  disk: @big, @small"]
// DISK2: emb.table @big[4096 x 16] f32 {{.*}} placement disk
// DISK2: emb.table @small[512 x 16] f32 {{.*}} placement disk

// Without disk, 293 KiB: the
// largest table goes to bf16, and then 4 micro-batches are enough.
// BF16: "  no choice of micro-batches and remat fits (the smallest, 64 micro-batches, remat none, needs 366.7 KiB): quantising tables, largest first"
// BF16-SAME: "  chose 4 micro-batches, remat none, 1 largest table(s) bf16: peak 287.8 KiB (294720 bytes), estimated step {{[0-9]+}} us", "  bf16: @big"]
// BF16-SAME: emb.plan = #emb.plan<micro_batches = 4>
// BF16: emb.table @big[4096 x 16] bf16
// BF16: emb.table @small[512 x 16] f32

// 195 KiB: bf16 for both is not enough; the largest goes to int8, the other
// stays at the rung below (bf16).
// INT8: "  chose 16 micro-batches, remat none, 1 largest table(s) int8_rowwise, the others bf16: peak 184.4 KiB (188864 bytes), estimated step {{[0-9]+}} us", "  int8_rowwise: @big"]
// INT8-SAME: emb.plan = #emb.plan<micro_batches = 16>
// INT8: emb.table @big[4096 x 16] int8_rowwise
// INT8: emb.table @small[512 x 16] bf16

// The same 293 KiB on 2 ranks: row_wise halves @big on each rank, so it
// stays f32 (where one rank needed bf16).
// SHARD: "  no choice of micro-batches and remat fits (the smallest, 64 micro-batches, remat none, needs 375.7 KiB): sharding tables row_wise over 2 ranks, largest first"
// SHARD-SAME: "  chose 8 micro-batches, remat none, 1 largest table(s) row_wise: peak 270.9 KiB (277376 bytes), estimated step {{[0-9]+}} us", "  row_wise: @big"]
// SHARD-SAME: emb.plan = #emb.plan<micro_batches = 8, data_parallel = 2>
// SHARD: emb.table @big[4096 x 16] f32 {{.*}} sharding row_wise
// SHARD: emb.table @small[512 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>{{$}}

// PLAN: "arena_bytes": 398912
// PLAN: "micro_batches": 8
// PLAN: "notes": [
// PLAN-NEXT: "-emb-pipeline: 8 micro-batch(es) of 8, 1 stage(s)
// PLAN-NEXT: "-emb-auto: memory budget 390.6 KiB",
// PLAN-NEXT: "  fits without quantisation
// PLAN-NEXT: "  chose 8 micro-batches, remat none: peak 389.6 KiB (398912 bytes)

module @fit attributes {emb.training = #emb.training<batch_size = 64, dense_optimizer = <kind = sgd, lr = 0.1>>, emb.plan = #emb.plan<>} {
  emb.table @big [4096 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
  emb.table @small [512 x 16] f32 init<kind = normal, std = 0.01> optimizer<kind = sgd, lr = 0.1>
  emb.param @w0 : tensor<32x256xf32> init<kind = xavier_uniform>
  emb.param @w1 : tensor<256x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ia: tensor<64xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 64 : i64, emb.vocab = 4096 : i64},
                     %oa: tensor<65xi64> {emb.feature = "a", emb.role = "offsets"},
                     %ib: tensor<64xi64> {emb.feature = "b", emb.role = "ids", emb.max_ids = 64 : i64, emb.vocab = 512 : i64},
                     %ob: tensor<65xi64> {emb.feature = "b", emb.role = "offsets"},
                     %y: tensor<64x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<64x1xf32>) {
    %a = emb.lookup @big[%ia, %oa] sum : tensor<64xi64>, tensor<65xi64> -> tensor<64x16xf32>
    %b = emb.lookup @small[%ib, %ob] sum : tensor<64xi64>, tensor<65xi64> -> tensor<64x16xf32>
    %cat = emb.concat %a, %b : tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x32xf32>
    %w0 = emb.get @w0 : tensor<32x256xf32>
    %h = emb.dense %cat, %w0 : tensor<64x32xf32>, tensor<32x256xf32> -> tensor<64x256xf32>
    %r = emb.activation relu %h : tensor<64x256xf32>
    %w1 = emb.get @w1 : tensor<256x1xf32>
    %p = emb.dense %r, %w1 : tensor<64x256xf32>, tensor<256x1xf32> -> tensor<64x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<64x1xf32>, tensor<64x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<64x1xf32>
  }
}
