// Round trip of the micro-batch schedule (EmbScheduleOps.td): emb.schedule
// of both kinds with every instruction, including transfers that carry
// several boundary types, and a schedule of one micro-batch and one stage.
// RUN: emb-opt %s | emb-opt | FileCheck %s
// RUN: emb-opt %s -mlir-print-op-generic | emb-opt | FileCheck %s

// CHECK-LABEL: emb.schedule one_f_one_b stages 2 micro_batches 2 {
// CHECK-NEXT:    emb.sched.load stage 0 mb 0
// CHECK-NEXT:    emb.sched.forward stage 0 mb 0
// CHECK-NEXT:    emb.sched.send stage 0 mb 0 to 1 : [tensor<2x16xf32>, tensor<2x4xf32>]
// CHECK-NEXT:    emb.sched.load stage 0 mb 1
// CHECK-NEXT:    emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x16xf32>, tensor<2x4xf32>]
// CHECK:         emb.sched.reduce stage 1
// CHECK:         emb.sched.step stage 1
emb.schedule one_f_one_b stages 2 micro_batches 2 {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.send stage 0 mb 0 to 1 : [tensor<2x16xf32>, tensor<2x4xf32>]
  emb.sched.load stage 0 mb 1
  emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x16xf32>, tensor<2x4xf32>]
  emb.sched.forward stage 0 mb 1
  emb.sched.forward stage 1 mb 0
  emb.sched.send stage 0 mb 1 to 1 : [tensor<2x16xf32>, tensor<2x4xf32>]
  emb.sched.backward stage 1 mb 0
  emb.sched.send stage 1 mb 0 to 0 : [tensor<2x16xf32>]
  emb.sched.recv stage 0 mb 0 from 1 : [tensor<2x16xf32>]
  emb.sched.recv stage 1 mb 1 from 0 : [tensor<2x16xf32>, tensor<2x4xf32>]
  emb.sched.backward stage 0 mb 0
  emb.sched.forward stage 1 mb 1
  emb.sched.backward stage 1 mb 1
  emb.sched.send stage 1 mb 1 to 0 : [tensor<2x16xf32>]
  emb.sched.recv stage 0 mb 1 from 1 : [tensor<2x16xf32>]
  emb.sched.reduce stage 1
  emb.sched.backward stage 0 mb 1
  emb.sched.step stage 1
  emb.sched.reduce stage 0
  emb.sched.step stage 0
}

// CHECK-LABEL: emb.schedule gpipe stages 1 micro_batches 1 {
// CHECK-NEXT:    emb.sched.load stage 0 mb 0
// CHECK-NEXT:    emb.sched.forward stage 0 mb 0
// CHECK-NEXT:    emb.sched.backward stage 0 mb 0
// CHECK-NEXT:    emb.sched.step stage 0
// CHECK-NEXT:  }
emb.schedule gpipe stages 1 micro_batches 1 {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
}
