// Round trip of emb.table (every storage, sharding, optimizer and initializer form), emb.param and emb.get.
// RUN: emb-opt %s | emb-opt | FileCheck %s

// Storage types, with the initializer and optimizer kinds spread over them.
// CHECK:      emb.table @t_f32[100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>{{$}}
// CHECK-NEXT: emb.table @t_f16[100 x 8] f16 init<kind = constant, value = 0.5> optimizer<kind = sgd, lr = 0.1, momentum = 0.9>{{$}}
// CHECK-NEXT: emb.table @t_bf16[100 x 8] bf16 init<kind = uniform, low = -0.05, high = 0.05> optimizer<kind = adagrad, lr = 0.05, initial_accumulator = 0.1>{{$}}
// CHECK-NEXT: emb.table @t_int8[100 x 8] int8_rowwise init<kind = normal, mean = 0.5, std = 0.01> optimizer<kind = rowwise_adagrad, lr = 0.05, eps = 1.0e-10>{{$}}
// CHECK-NEXT: emb.table @t_int4[100 x 8] int4_rowwise init<kind = zeros> optimizer<kind = sgd>{{$}}
emb.table @t_f32 [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @t_f16 [100 x 8] f16 init<kind = constant, value = 0.5> optimizer<kind = sgd, lr = 0.1, momentum = 0.9>
emb.table @t_bf16 [100 x 8] bf16 init<kind = uniform, low = -0.05, high = 0.05> optimizer<kind = adagrad, lr = 0.05, initial_accumulator = 0.1>
emb.table @t_int8 [100 x 8] int8_rowwise init<kind = normal, mean = 0.5, std = 0.01> optimizer<kind = rowwise_adagrad, lr = 0.05, eps = 1.0e-10>
emb.table @t_int4 [100 x 8] int4_rowwise init<kind = zeros> optimizer<kind = sgd>

// The Adam family; parameters equal to their defaults (lr = 0.01, eps = 1e-8,
// weight_decay_mode = lazy, ...) are elided when printed.
// CHECK-NEXT: emb.table @t_adam[100 x 8] f32 init<kind = zeros> optimizer<kind = adam, lr = 0.001, beta1 = 0.8, beta2 = 0.99>{{$}}
// CHECK-NEXT: emb.table @t_adamw[100 x 8] f32 init<kind = zeros> optimizer<kind = adamw, lr = 0.001, weight_decay = 0.01, weight_decay_mode = global>{{$}}
// CHECK-NEXT: emb.table @t_lamb[100 x 8] f32 init<kind = zeros> optimizer<kind = lamb, weight_decay = 0.01>{{$}}
// CHECK-NEXT: emb.table @t_defaults[100 x 8] f32 init<kind = uniform, low = -1.0, high = 1.0> optimizer<kind = adam>{{$}}
emb.table @t_adam [100 x 8] f32 init<kind = zeros> optimizer<kind = adam, lr = 0.001, beta1 = 0.8, beta2 = 0.99>
emb.table @t_adamw [100 x 8] f32 init<kind = zeros> optimizer<kind = adamw, lr = 0.001, weight_decay = 0.01, weight_decay_mode = global>
emb.table @t_lamb [100 x 8] f32 init<kind = zeros> optimizer<kind = lamb, lr = 0.01, weight_decay = 0.01, weight_decay_mode = lazy>
emb.table @t_defaults [100 x 8] f32 init<kind = uniform, low = -1.0, high = 1.0, mean = 0.0, gain = 1.0> optimizer<kind = adam, lr = 0.01, momentum = 0.0, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.0, initial_accumulator = 0.0>

// Sharding: the default (`none`) is elided, the others are printed.
// CHECK-NEXT: emb.table @s_none[100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>{{$}}
// CHECK-NEXT: emb.table @s_table[100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise{{$}}
// CHECK-NEXT: emb.table @s_row[100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise{{$}}
// CHECK-NEXT: emb.table @s_col[100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding column_wise{{$}}
emb.table @s_none [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding none
emb.table @s_table [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding table_wise
emb.table @s_row [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding row_wise
emb.table @s_col [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding column_wise

// Placement: the default (`device`) is elided, the others are printed,
// after a sharding.
// CHECK-NEXT: emb.table @p_device[100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>{{$}}
// CHECK-NEXT: emb.table @p_host[100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> placement host{{$}}
// CHECK-NEXT: emb.table @p_disk[100 x 8] int8_rowwise init<kind = zeros> optimizer<kind = adagrad> placement disk{{$}}
// CHECK-NEXT: emb.table @p_none[100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> placement disk{{$}}
emb.table @p_device [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> placement device
emb.table @p_host [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> placement host
emb.table @p_disk [100 x 8] int8_rowwise init<kind = zeros> optimizer<kind = adagrad> placement disk
emb.table @p_none [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd> sharding none placement disk

// Limits: dim 65536 and 2^40 elements are still accepted.
// CHECK-NEXT: emb.table @t_wide[16777216 x 65536] f32 init<kind = zeros> optimizer<kind = sgd>{{$}}
emb.table @t_wide [16777216 x 65536] f32 init<kind = zeros> optimizer<kind = sgd>

// Dense parameters: 1-D and 2-D, every element width, Xavier on 2-D weights.
// CHECK-NEXT: emb.param @w : tensor<13x64xf32> init<kind = xavier_uniform>{{$}}
// CHECK-NEXT: emb.param @w_bf16 : tensor<13x64xbf16> init<kind = xavier_normal, gain = 2.0>{{$}}
// CHECK-NEXT: emb.param @b : tensor<64xf32> init<kind = zeros>{{$}}
// CHECK-NEXT: emb.param @b_f16 : tensor<64xf16> init<kind = constant, value = -0.25>{{$}}
emb.param @w : tensor<13x64xf32> init<kind = xavier_uniform>
emb.param @w_bf16 : tensor<13x64xbf16> init<kind = xavier_normal, gain = 2.0>
emb.param @b : tensor<64xf32> init<kind = zeros>
emb.param @b_f16 : tensor<64xf16> init<kind = constant, value = -0.25>

// CHECK-LABEL: func.func @get
// CHECK-NEXT:    %[[W:.*]] = emb.get @w : tensor<13x64xf32>
// CHECK-NEXT:    %[[W16:.*]] = emb.get @w_bf16 : tensor<13x64xbf16>
// CHECK-NEXT:    %[[B:.*]] = emb.get @b : tensor<64xf32>
// CHECK-NEXT:    return %[[W]], %[[W16]], %[[B]] : tensor<13x64xf32>, tensor<13x64xbf16>, tensor<64xf32>
func.func @get() -> (tensor<13x64xf32>, tensor<13x64xbf16>, tensor<64xf32>) {
  %w = emb.get @w : tensor<13x64xf32>
  %w16 = emb.get @w_bf16 : tensor<13x64xbf16>
  %b = emb.get @b : tensor<64xf32>
  return %w, %w16, %b : tensor<13x64xf32>, tensor<13x64xbf16>, tensor<64xf32>
}
