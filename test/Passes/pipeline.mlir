// -emb-pipeline: the micro-batch rewrite (batch 8 into 4 micro-batches of 2:
// arguments, emb.max_ids, every value computed from the batch; parameter
// shaped values keep their shape even where a dimension equals the batch),
// the stage assignment for 2 stages, and the emitted GPipe and 1F1B
// schedules. m = 1 and p = 1 (the module's emb.plan default) change nothing.
// RUN: emb-opt %s -emb-pipeline="micro-batches=4 stages=2 schedule=gpipe" | FileCheck %s --check-prefixes=CHECK,GPIPE
// RUN: emb-opt %s -emb-pipeline="micro-batches=4 stages=2 schedule=1f1b" | FileCheck %s --check-prefixes=CHECK,ONEF
// RUN: emb-opt %s -emb-pipeline="micro-batches=2" | FileCheck %s --check-prefix=MB2
// RUN: emb-opt %s -emb-pipeline | FileCheck %s --check-prefix=NONE
// The schedule checker accepts what the pass emits, and the result re-parses.
// RUN: emb-opt %s -emb-pipeline="micro-batches=4 stages=2 schedule=1f1b" | emb-opt | FileCheck %s --check-prefix=ONEF

// CHECK:      module attributes {emb.plan = #emb.plan<micro_batches = 4, pipeline_stages = 2{{.*}}>
// CHECK:      func.func @train_step(%arg0: tensor<2x3xf32> {{.*}}, %arg1: tensor<?xi64> {{{.*}}emb.max_ids = 4 : i64{{.*}}}, %arg2: tensor<3xi64> {{.*}}, %arg3: tensor<2x1xf32> {{.*}}) -> (tensor<f32>, tensor<2x1xf32>) attributes {emb.micro_batches = 4 : i64, emb.pipeline_stages = 2 : i64}
// CHECK-NEXT:   emb.lookup @t[%arg1, %arg2] sum {emb.stage = 0 : i64} : tensor<?xi64>, tensor<3xi64> -> tensor<2x8xf32>
// CHECK-NEXT:   emb.get @v {emb.stage = 0 : i64} : tensor<8x1xf32>
// CHECK-NEXT:   emb.dense %0, %1 {emb.stage = 0 : i64} : tensor<2x8xf32>, tensor<8x1xf32> -> tensor<2x1xf32>
// CHECK-NEXT:   emb.get @w {emb.stage = 1 : i64} : tensor<3x1xf32>
// CHECK-NEXT:   emb.dense %arg0, %3 {emb.stage = 1 : i64} : tensor<2x3xf32>, tensor<3x1xf32> -> tensor<2x1xf32>
// CHECK-NEXT:   emb.add %4, %2 {emb.stage = 1 : i64}
// CHECK-NEXT:   emb.activation relu %5 {emb.stage = 1 : i64} : tensor<2x1xf32>
// CHECK-NEXT:   emb.loss mse %6, %arg3 {emb.stage = 1 : i64} : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
// CHECK-NEXT:   emb.loss_grad mse %6, %arg3 {emb.stage = 1 : i64}
// CHECK-NEXT:   emb.activation_grad relu %8, %5 {emb.stage = 1 : i64}
// CHECK-NEXT:   emb.dense_grad_weight %arg0, %9 {emb.stage = 1 : i64} : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<3x1xf32>
// CHECK-NEXT:   emb.accumulate_grad @w, %10 {emb.stage = 1 : i64}
// The input gradient of the lookup's dense runs where the lookup's values are.
// CHECK-NEXT:   emb.dense_grad_input %9, %1 {emb.stage = 0 : i64} : tensor<2x1xf32>, tensor<8x1xf32> -> tensor<2x8xf32>
// A parameter gradient 8 x 1 stays 8 x 1 though the batch was 8.
// CHECK-NEXT:   emb.dense_grad_weight %0, %9 {emb.stage = 0 : i64} : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<8x1xf32>
// CHECK-NEXT:   emb.accumulate_grad @v, %12 {emb.stage = 0 : i64} : tensor<8x1xf32>
// CHECK-NEXT:   emb.lookup_grad @t[%arg1, %arg2] sum %11 {emb.stage = 0 : i64} : tensor<?xi64>, tensor<3xi64>, tensor<2x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:   emb.accumulate_rows @t[%arg1], %13 {emb.stage = 0 : i64}
// CHECK-NEXT:   return %7, %6 : tensor<f32>, tensor<2x1xf32>

// GPIPE-LABEL: emb.schedule gpipe stages 2 micro_batches 4 {
// GPIPE-NEXT:    emb.sched.load stage 0 mb 0
// GPIPE-NEXT:    emb.sched.load stage 1 mb 0
// GPIPE-NEXT:    emb.sched.forward stage 0 mb 0
// GPIPE-NEXT:    emb.sched.send stage 0 mb 0 to 1 : [tensor<2x1xf32>]
// GPIPE-NEXT:    emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x1xf32>]
// GPIPE-NEXT:    emb.sched.load stage 0 mb 1
// GPIPE-NEXT:    emb.sched.forward stage 1 mb 0
// GPIPE-NEXT:    emb.sched.forward stage 0 mb 1
// All forwards of stage 0 come before its first backward.
// GPIPE:         emb.sched.forward stage 0 mb 3
// GPIPE:         emb.sched.forward stage 1 mb 3
// GPIPE-NEXT:    emb.sched.backward stage 1 mb 0
// GPIPE-NEXT:    emb.sched.send stage 1 mb 0 to 0 : [tensor<2x1xf32>]
// GPIPE-NEXT:    emb.sched.recv stage 0 mb 0 from 1 : [tensor<2x1xf32>]
// GPIPE-NEXT:    emb.sched.backward stage 1 mb 1
// GPIPE-NEXT:    emb.sched.backward stage 0 mb 0
// GPIPE:         emb.sched.backward stage 1 mb 3
// GPIPE:         emb.sched.reduce stage 1
// GPIPE-NEXT:    emb.sched.backward stage 0 mb 3
// GPIPE-NEXT:    emb.sched.step stage 1
// GPIPE-NEXT:    emb.sched.reduce stage 0
// GPIPE-NEXT:    emb.sched.step stage 0
// GPIPE-NEXT:  }

// 1F1B: stage 0 warms up with one forward, then alternates; stage 1 alternates.
// ONEF-LABEL: emb.schedule one_f_one_b stages 2 micro_batches 4 {
// ONEF-NEXT:    emb.sched.load stage 0 mb 0
// ONEF-NEXT:    emb.sched.load stage 1 mb 0
// ONEF-NEXT:    emb.sched.forward stage 0 mb 0
// ONEF-NEXT:    emb.sched.send stage 0 mb 0 to 1 : [tensor<2x1xf32>]
// ONEF-NEXT:    emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x1xf32>]
// ONEF-NEXT:    emb.sched.load stage 0 mb 1
// ONEF-NEXT:    emb.sched.forward stage 1 mb 0
// ONEF-NEXT:    emb.sched.forward stage 0 mb 1
// ONEF-NEXT:    emb.sched.backward stage 1 mb 0
// ONEF-NEXT:    emb.sched.send stage 0 mb 1 to 1 : [tensor<2x1xf32>]
// ONEF-NEXT:    emb.sched.send stage 1 mb 0 to 0 : [tensor<2x1xf32>]
// ONEF-NEXT:    emb.sched.recv stage 0 mb 0 from 1 : [tensor<2x1xf32>]
// ONEF-NEXT:    emb.sched.load stage 1 mb 1
// ONEF-NEXT:    emb.sched.backward stage 0 mb 0
// ONEF-NEXT:    emb.sched.recv stage 1 mb 1 from 0 : [tensor<2x1xf32>]
// ONEF-NEXT:    emb.sched.load stage 0 mb 2
// ONEF-NEXT:    emb.sched.forward stage 1 mb 1
// ONEF-NEXT:    emb.sched.forward stage 0 mb 2
// ONEF-NEXT:    emb.sched.backward stage 1 mb 1
// ONEF:         emb.sched.forward stage 1 mb 3
// ONEF-NEXT:    emb.sched.backward stage 1 mb 3
// ONEF-NEXT:    emb.sched.send stage 1 mb 3 to 0 : [tensor<2x1xf32>]
// ONEF-NEXT:    emb.sched.recv stage 0 mb 3 from 1 : [tensor<2x1xf32>]
// ONEF-NEXT:    emb.sched.reduce stage 1
// ONEF-NEXT:    emb.sched.backward stage 0 mb 3
// ONEF-NEXT:    emb.sched.step stage 1
// ONEF-NEXT:    emb.sched.reduce stage 0
// ONEF-NEXT:    emb.sched.step stage 0

// One stage: each micro-batch's forward and backward back to back, no stage attributes.
// MB2:      func.func @train_step(%arg0: tensor<4x3xf32> {{.*}} attributes {emb.micro_batches = 2 : i64, emb.pipeline_stages = 1 : i64}
// MB2-NOT:  emb.stage
// MB2:      emb.schedule gpipe stages 1 micro_batches 2 {
// MB2-NEXT:   emb.sched.load stage 0 mb 0
// MB2-NEXT:   emb.sched.forward stage 0 mb 0
// MB2-NEXT:   emb.sched.backward stage 0 mb 0
// MB2-NEXT:   emb.sched.load stage 0 mb 1
// MB2-NEXT:   emb.sched.forward stage 0 mb 1
// MB2-NEXT:   emb.sched.backward stage 0 mb 1
// MB2-NEXT:   emb.sched.reduce stage 0
// MB2-NEXT:   emb.sched.step stage 0

// NONE:     func.func @train_step(%arg0: tensor<8x3xf32>
// NONE-NOT: emb.micro_batches
// NONE-NOT: emb.schedule

module attributes {emb.plan = #emb.plan<>, emb.training = #emb.training<batch_size = 8, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t[10 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.1>
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  emb.param @v : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%arg0: tensor<8x3xf32> {emb.feature = "x", emb.role = "dense"}, %arg1: tensor<?xi64> {emb.feature = "c", emb.max_ids = 16 : i64, emb.role = "ids"}, %arg2: tensor<9xi64> {emb.feature = "c", emb.role = "offsets"}, %arg3: tensor<8x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<8x1xf32>) {
    %0 = emb.lookup @t[%arg1, %arg2] sum : tensor<?xi64>, tensor<9xi64> -> tensor<8x8xf32>
    %1 = emb.get @v : tensor<8x1xf32>
    %2 = emb.dense %0, %1 : tensor<8x8xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
    %3 = emb.get @w : tensor<3x1xf32>
    %4 = emb.dense %arg0, %3 : tensor<8x3xf32>, tensor<3x1xf32> -> tensor<8x1xf32>
    %5 = emb.add %4, %2 : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
    %6 = emb.activation relu %5 : tensor<8x1xf32>
    %7 = emb.loss mse %6, %arg3 : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
    %8 = emb.loss_grad mse %6, %arg3 : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
    %9 = emb.activation_grad relu %8, %5 : tensor<8x1xf32>
    %10 = emb.dense_grad_weight %arg0, %9 : tensor<8x3xf32>, tensor<8x1xf32> -> tensor<3x1xf32>
    emb.accumulate_grad @w, %10 : tensor<3x1xf32>
    %11 = emb.dense_grad_input %9, %1 : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x8xf32>
    %12 = emb.dense_grad_weight %0, %9 : tensor<8x8xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
    emb.accumulate_grad @v, %12 : tensor<8x1xf32>
    %13 = emb.lookup_grad @t[%arg1, %arg2] sum %11 : tensor<?xi64>, tensor<9xi64>, tensor<8x8xf32> -> tensor<?x8xf32>
    emb.accumulate_rows @t[%arg1], %13 : tensor<?xi64>, tensor<?x8xf32>
    return %7, %6 : tensor<f32>, tensor<8x1xf32>
  }
  func.func @update() {
    emb.coalesce_rows @t
    emb.update @w
    emb.update @v
    emb.update @t
    return
  }
}

