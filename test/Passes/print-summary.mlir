// -emb-print-summary: the table lines, parameter and embedding totals, and the forward cost from CostOpInterface.
// RUN: emb-opt %s -split-input-file -emb-print-summary -o /dev/null | FileCheck %s
// RUN: emb-opt %s -split-input-file -emb-print-summary=output=%t.txt | FileCheck %s --check-prefix=IR
// Each split reopens output=, so the file ends up with the last summary only.
// RUN: FileCheck %s --input-file=%t.txt --check-prefix=FILE

// A tiny model (dense input, two sparse features) using every costed op but
// emb.gather. The forward cost per op (B = 2; getForwardFlops/getForwardBytes):
//   op                                FLOPs                  bytes
//   dense  2x3 . 3x8 + bias           2*2*3*8 + 2*8 = 112    4*(6+24+16+8)   = 216
//   activation relu 2x8               16                     2*4*16          = 128
//   cross  B=2, D=8                   2*2*64 + 3*2*8 = 304   4*(3*16+64+8)   = 480
//   lookup @user sum 2x8              16                     2*16*4          = 128
//   lookup @item mean + weights 2x8   2*16 = 32              2*16*4          = 128
//   interaction 3 x (2x8) -> 2x3      2*6*8 = 96             4*(3*16+6)      = 216
//   concat 2x8, 2x3 -> 2x11           0                      2*4*22          = 176
//   dense  2x11 . 11x1                2*2*11*1 = 44          4*(22+11+2)     = 140
//   dot    2x8, 2x8 -> 2x1            2*16 = 32              4*(16+16+2)     = 136
//   add    2 inputs + bias 2x1        2*2 = 4                4*2*3           = 24
//   loss   bce 2x1, 2x1               10*(2+2) = 40          4*(2+2)         = 16
//   total (11 ops)                    696                    1788 B = 1.7 KiB
// emb.get and emb.hash have no cost and are not counted.
//
// Tables (unused ones count too): 100*8*4 = 3200 B (3.1 KiB); int8 rows carry
// an fp16 scale and bias, 50*8*1 + 50*2*2 = 600 B; 10*8*2 = 160 B; int4 packs
// two elements per byte, 20*6/2 + 20*2*2 = 140 B. Total 180 rows, 4100 B
// (4.0 KiB). Dense parameters (unused ones too): 24 + 8 + 64 + 8 +
// 11 + 1 + 10 (f16) = 126 elements, 4*116 + 2*10 = 484 B.

// CHECK-LABEL: model 'tiny': 4 tables, 7 dense parameters
// CHECK-NEXT:  batch 2, precision bf16, dense optimizer adam lr=0.001
// CHECK-NEXT:  table @user [100 x 8] f32 3.1 KiB adagrad lr=0.05
// CHECK-NEXT:  table @item [50 x 8] int8_rowwise 600 B sgd lr=0.01
// CHECK-NEXT:  table @ctx [10 x 8] bf16 160 B rowwise_adagrad lr=0.05
// CHECK-NEXT:  table @tag [20 x 6] int4_rowwise 140 B sgd lr=0.01
// CHECK-NEXT:  embeddings: 180 rows, 4.0 KiB
// CHECK-NEXT:  dense parameters: 126 (484 B)
// CHECK-NEXT:  forward per batch: 696 FLOP, 1.7 KiB moved, 11 ops

// The pass leaves the IR alone and, with output=, writes nothing to stdout.
// IR-NOT: model '
// IR-LABEL: module @tiny
// IR: emb.table @user[100 x 8] f32
// IR: func.func @forward
// IR: emb.lookup @user

module @tiny attributes {emb.training = #emb.training<batch_size = 2,
    dense_optimizer = <kind = adam, lr = 0.001>, precision = bf16>} {
  emb.table @user [100 x 8] f32 init<kind = uniform, low = -0.1, high = 0.1> optimizer<kind = adagrad, lr = 0.05>
  emb.table @item [50 x 8] int8_rowwise init<kind = zeros> optimizer<kind = sgd>
  emb.table @ctx [10 x 8] bf16 init<kind = zeros> optimizer<kind = rowwise_adagrad, lr = 0.05>
  emb.table @tag [20 x 6] int4_rowwise init<kind = zeros> optimizer<kind = sgd>
  emb.param @w0 : tensor<3x8xf32> init<kind = xavier_uniform>
  emb.param @b0 : tensor<8xf32> init<kind = zeros>
  emb.param @wc : tensor<8x8xf32> init<kind = xavier_normal>
  emb.param @bc : tensor<8xf32> init<kind = zeros>
  emb.param @w1 : tensor<11x1xf32> init<kind = xavier_uniform>
  emb.param @g : tensor<1xf32> init<kind = zeros>
  emb.param @unused : tensor<10xf16> init<kind = constant, value = 1.0>

  func.func @forward(%dense: tensor<2x3xf32>, %uid: tensor<?xi64>, %uoff: tensor<3xi64>,
                     %iid: tensor<?xi64>, %ioff: tensor<3xi64>, %iw: tensor<?xf32>,
                     %label: tensor<2x1xf32>) -> (tensor<f32>, tensor<2x1xf32>) {
    %w0 = emb.get @w0 : tensor<3x8xf32>
    %b0 = emb.get @b0 : tensor<8xf32>
    %h = emb.dense %dense, %w0, %b0 : tensor<2x3xf32>, tensor<3x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
    %r = emb.activation relu %h : tensor<2x8xf32>
    %wc = emb.get @wc : tensor<8x8xf32>
    %bc = emb.get @bc : tensor<8xf32>
    %x = emb.cross %r, %r, %wc, %bc : tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    %uh = emb.hash %uid buckets(100) seed(0) : tensor<?xi64>
    %u = emb.lookup @user[%uh, %uoff] sum : tensor<?xi64>, tensor<3xi64> -> tensor<2x8xf32>
    %i = emb.lookup @item[%iid, %ioff weights %iw] mean
        : tensor<?xi64>, tensor<3xi64>, tensor<?xf32> -> tensor<2x8xf32>
    %z = emb.interaction %x, %u, %i
        : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x3xf32>
    %c = emb.concat %r, %z : tensor<2x8xf32>, tensor<2x3xf32> -> tensor<2x11xf32>
    %w1 = emb.get @w1 : tensor<11x1xf32>
    %y = emb.dense %c, %w1 : tensor<2x11xf32>, tensor<11x1xf32> -> tensor<2x1xf32>
    %d = emb.dot %u, %i : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x1xf32>
    %g = emb.get @g : tensor<1xf32>
    %s = emb.add %y, %d bias %g : tensor<2x1xf32>, tensor<2x1xf32> bias tensor<1xf32> -> tensor<2x1xf32>
    %l = emb.loss bce_with_logits %s, %label : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %l, %s : tensor<f32>, tensor<2x1xf32>
  }
}

// -----

// An unnamed module without emb.training, large enough for the unit prefixes.
// Forward: dense 500x1000 . 1000x1000 = 2*500*1000*1000 = 1.0e9 FLOP; bytes
// 4*(500000 + 1000000 + 500000) = 8e6 B = 7.6 MiB. Gather has no FLOPs and
// moves 2*500*4*64*4 = 1024000 B; total 9024000 B = 8.6 MiB, 2 ops.
// Table: 1000000*64*4 = 256000000 B = 244.1 MiB. Parameter: 1e6 f32 = 3.8 MiB.

// CHECK-LABEL: model 'model': 1 table, 1 dense parameter
// CHECK-NEXT:  table @big [1000000 x 64] f32 244.1 MiB sgd lr=0.01
// CHECK-NEXT:  embeddings: 1.0 Mrows, 244.1 MiB
// CHECK-NEXT:  dense parameters: 1.0 M (3.8 MiB)
// CHECK-NEXT:  forward per batch: 1.0 GFLOP, 8.6 MiB moved, 2 ops

// IR-LABEL: module {
// IR: emb.table @big[1000000 x 64] f32
// IR: func.func @forward
// IR-NOT: model '

// FILE-NOT: model 'tiny'
// FILE:     model 'model': 1 table, 1 dense parameter
// FILE:     forward per batch: 1.0 GFLOP, 8.6 MiB moved, 2 ops

module {
  emb.table @big [1000000 x 64] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w : tensor<1000x1000xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<500x1000xf32>, %ids: tensor<500x4xi64>)
      -> (tensor<500x1000xf32>, tensor<500x4x64xf32>) {
    %w = emb.get @w : tensor<1000x1000xf32>
    %y = emb.dense %x, %w : tensor<500x1000xf32>, tensor<1000x1000xf32> -> tensor<500x1000xf32>
    %g = emb.gather @big[%ids] : tensor<500x4xi64> -> tensor<500x4x64xf32>
    return %y, %g : tensor<500x1000xf32>, tensor<500x4x64xf32>
  }
}
