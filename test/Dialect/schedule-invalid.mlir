// The schedule checker (the verifier of emb.schedule, ScheduleOps.cpp) on
// hand-broken schedules: each is rejected with what is wrong and where.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

// A circular wait: each stage receives before it sends what the other waits for.
// expected-error @+1 {{'emb.schedule' op deadlocks: circular wait: stage 0 waits in recv of micro-batch 0 from stage 1 (instruction #1), while stage 1 waits in recv of micro-batch 0 from stage 0 (instruction #2)}}
emb.schedule gpipe stages 2 micro_batches 1 {
  emb.sched.load stage 0 mb 0
  emb.sched.recv stage 0 mb 0 from 1 : [tensor<2x4xf32>]
  emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x8xf32>]
  emb.sched.forward stage 1 mb 0
  emb.sched.backward stage 1 mb 0
  emb.sched.send stage 1 mb 0 to 0 : [tensor<2x4xf32>]
  emb.sched.forward stage 0 mb 0
  emb.sched.send stage 0 mb 0 to 1 : [tensor<2x8xf32>]
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
  emb.sched.step stage 1
}

// -----

// A recv whose micro-batch no stage ever sends.
emb.schedule gpipe stages 2 micro_batches 1 {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  // expected-error @+1 {{'emb.sched.recv' op has no matching send: stage 0 never sends micro-batch 0 to stage 1}}
  emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x8xf32>]
  emb.sched.forward stage 1 mb 0
  emb.sched.backward stage 1 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
  emb.sched.step stage 1
}

// -----

// The two sides disagree on a boundary's dtype.
emb.schedule gpipe stages 2 micro_batches 1 {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.send stage 0 mb 0 to 1 : [tensor<2x8xf32>]
  // expected-error @+1 {{'emb.sched.recv' op receives [tensor<2x8xf16>] but the matching send (instruction #2) sends [tensor<2x8xf32>]: boundary shapes and dtypes must agree}}
  emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x8xf16>]
  emb.sched.forward stage 1 mb 0
  emb.sched.backward stage 1 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
  emb.sched.step stage 1
}

// -----

// ... and on its shape.
emb.schedule gpipe stages 2 micro_batches 1 {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.send stage 0 mb 0 to 1 : [tensor<2x8xf32>]
  // expected-error @+1 {{'emb.sched.recv' op receives [tensor<4x8xf32>] but the matching send (instruction #2) sends [tensor<2x8xf32>]}}
  emb.sched.recv stage 1 mb 0 from 0 : [tensor<4x8xf32>]
  emb.sched.forward stage 1 mb 0
  emb.sched.backward stage 1 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
  emb.sched.step stage 1
}

// -----

// A backward before its forward.
emb.schedule gpipe stages 1 micro_batches 1 {
  emb.sched.load stage 0 mb 0
  // expected-error @+1 {{'emb.sched.backward' op runs the backward of micro-batch 0 on stage 0 before its forward (instruction #2)}}
  emb.sched.backward stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.step stage 0
}

// -----

// A micro-batch missing.
// expected-error @+1 {{'emb.schedule' op stage 0 never runs the forward of micro-batch 1}}
emb.schedule gpipe stages 1 micro_batches 2 {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.load stage 0 mb 1
  emb.sched.step stage 0
}

// -----

// A micro-batch repeated.
emb.schedule gpipe stages 1 micro_batches 1 {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  // expected-error @+1 {{'emb.sched.forward' op repeats micro-batch 0 on stage 0 (first at instruction #1)}}
  emb.sched.forward stage 0 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
}

// -----

// A step before all backwards.
emb.schedule gpipe stages 1 micro_batches 2 {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.backward stage 0 mb 0
  // expected-error @+1 {{'emb.sched.step' op comes before the backward of micro-batch 1 on stage 0 (instruction #6)}}
  emb.sched.step stage 0
  emb.sched.load stage 0 mb 1
  emb.sched.forward stage 0 mb 1
  emb.sched.backward stage 0 mb 1
}

// -----

// A stage program that works on several devices but is listed so that one
// device would read the boundary before it is written.
emb.schedule gpipe stages 2 micro_batches 1 {
  emb.sched.load stage 0 mb 0
  // expected-error @+1 {{'emb.sched.recv' op is listed before its matching send (send of stage 0, micro-batch 0, to stage 1 (instruction #3)): one device runs the instructions in the listed order}}
  emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x8xf32>]
  emb.sched.forward stage 0 mb 0
  emb.sched.send stage 0 mb 0 to 1 : [tensor<2x8xf32>]
  emb.sched.forward stage 1 mb 0
  emb.sched.backward stage 1 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
  emb.sched.step stage 1
}

// -----

// A send to a stage the schedule does not have.
emb.schedule gpipe stages 2 micro_batches 1 {
  // expected-error @+1 {{'emb.sched.send' op names peer stage 2 but the schedule has 2 stage(s)}}
  emb.sched.send stage 0 mb 0 to 2 : [tensor<2x8xf32>]
}

// -----

// Stages placed on ranks: one rank per stage, no more.
// expected-error @+1 {{'emb.schedule' op places 1 stage(s) on ranks but has 2 stage(s)}}
emb.schedule gpipe stages 2 micro_batches 1 ranks [0] {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.send stage 0 mb 0 to 1 : [tensor<2x8xf32>]
  emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x8xf32>]
  emb.sched.forward stage 1 mb 0
  emb.sched.backward stage 1 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
  emb.sched.step stage 1
}

// -----

// Ranks take contiguous stages in order, from rank 0.
// expected-error @+1 {{'emb.schedule' op places stage 1 on rank 2 after rank 0: ranks must start at 0 and take contiguous stages in order}}
emb.schedule gpipe stages 2 micro_batches 1 ranks [0, 2] {
  emb.sched.load stage 0 mb 0
  emb.sched.forward stage 0 mb 0
  emb.sched.send stage 0 mb 0 to 1 : [tensor<2x8xf32>]
  emb.sched.recv stage 1 mb 0 from 0 : [tensor<2x8xf32>]
  emb.sched.forward stage 1 mb 0
  emb.sched.backward stage 1 mb 0
  emb.sched.backward stage 0 mb 0
  emb.sched.step stage 0
  emb.sched.step stage 1
}
