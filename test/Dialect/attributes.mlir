// Round trip of the emb attributes (#emb.training, #emb.plan, #emb.optimizer, #emb.init): non-default parameters printed, defaults elided, floats printed exactly.
// RUN: emb-opt %s | emb-opt | FileCheck %s

// Module attributes with every parameter away from its default.
// CHECK:      module attributes {
// CHECK-SAME:   emb.plan = #emb.plan<memory_budget = 1073741824, remat = auto, micro_batches = 4, pipeline_stages = 2, schedule = one_f_one_b, data_parallel = 8>,
// CHECK-SAME:   emb.training = #emb.training<batch_size = 256, dense_optimizer = <kind = adamw, lr = 0.001, weight_decay = 0.01, weight_decay_mode = global>, precision = bf16, grad_clip_norm = 1.0, grad_accumulation = 2, warmup_steps = 100, lr_schedule = cosine, decay_steps = 10000, seed = 7>
// CHECK-SAME:   } {
module attributes {
  emb.plan = #emb.plan<memory_budget = 1073741824, remat = auto, micro_batches = 4,
                       pipeline_stages = 2, schedule = one_f_one_b, data_parallel = 8>,
  emb.training = #emb.training<batch_size = 256,
      dense_optimizer = #emb.optimizer<kind = adamw, lr = 0.001, weight_decay = 0.01,
                                       weight_decay_mode = global>,
      precision = bf16, grad_clip_norm = 1.0, grad_accumulation = 2, warmup_steps = 100,
      lr_schedule = cosine, decay_steps = 10000, seed = 7>
} {

// Every parameter spelled out at its default: only the required ones are printed.
// CHECK-LABEL: func.func @defaults()
// CHECK-SAME:    attributes {
// CHECK-SAME:    init = #emb.init<kind = normal, std = 1.0>,
// CHECK-SAME:    opt = #emb.optimizer<kind = lamb>,
// CHECK-SAME:    plan = #emb.plan<>,
// CHECK-SAME:    training = #emb.training<batch_size = 1, dense_optimizer = <kind = sgd>>} {
func.func @defaults() attributes {
  plan = #emb.plan<memory_budget = 0, remat = none, micro_batches = 1, pipeline_stages = 1,
                   schedule = gpipe, data_parallel = 1>,
  training = #emb.training<batch_size = 1, dense_optimizer = #emb.optimizer<kind = sgd, lr = 0.01>,
                           precision = fp32, grad_clip_norm = 0.0, grad_accumulation = 1,
                           warmup_steps = 0, lr_schedule = constant, decay_steps = 0, seed = 0>,
  opt = #emb.optimizer<kind = lamb, lr = 0.01, momentum = 0.0, beta1 = 0.9, beta2 = 0.999,
                       eps = 1.0e-08, weight_decay = 0.0, weight_decay_mode = lazy,
                       initial_accumulator = 0.0>,
  init = #emb.init<kind = normal, value = 0.0, low = 0.0, high = 0.0, mean = 0.0, std = 1.0, gain = 1.0>
} {
  return
}

// The remaining enum values, written in any parameter order (printed in declaration order).
// CHECK-LABEL: func.func @enums()
// CHECK-SAME:    attributes {
// CHECK-SAME:    linear = #emb.training<batch_size = 1, dense_optimizer = <kind = adagrad, initial_accumulator = 0.1>, precision = fp16, lr_schedule = linear, decay_steps = 5>,
// CHECK-SAME:    remat_all = #emb.plan<remat = all>,
// CHECK-SAME:    xavier = #emb.init<kind = xavier_normal, gain = 0.5>} {
func.func @enums() attributes {
  linear = #emb.training<decay_steps = 5, lr_schedule = linear, precision = fp16, batch_size = 1,
                         dense_optimizer = <kind = adagrad, initial_accumulator = 0.1>>,
  remat_all = #emb.plan<remat = all>,
  xavier = #emb.init<gain = 0.5, kind = xavier_normal>
} {
  return
}

// Floats print in the shortest form that parses back to the same double.
// CHECK-LABEL: func.func @reals()
// CHECK-SAME:    attributes {
// CHECK-SAME:    big = #emb.init<kind = uniform, low = -1.0e+300, high = 123456789.0>,
// CHECK-SAME:    negzero = #emb.init<kind = constant, value = -0.0>,
// CHECK-SAME:    third = #emb.init<kind = constant, value = 0.3333333333333333>,
// CHECK-SAME:    tiny = #emb.optimizer<kind = sgd, lr = 1.0e-300, eps = 5.0e-324>} {
func.func @reals() attributes {
  third = #emb.init<kind = constant, value = 0.33333333333333331>,
  tiny = #emb.optimizer<kind = sgd, lr = 1.0e-300, eps = 5.0e-324>,
  big = #emb.init<kind = uniform, low = -1.0e+300, high = 123456789.0>,
  negzero = #emb.init<kind = constant, value = -0.0>
} {
  return
}

}
