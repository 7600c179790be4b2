// -emb-print-summary counts bytes at the tensors' element width: a bf16
// dense layer moves half the bytes of an f32 one.
// RUN: emb-opt %s -emb-print-summary -o /dev/null | FileCheck %s

// Forward: 2*4*8*2 = 128 FLOP; bytes 2 * (4*8 + 8*2 + 4*2) = 112 B.
// CHECK: dense parameters: 16 (32 B)
// CHECK: forward per batch: 128 FLOP, 112 B moved, 1 ops

module @half {
  emb.param @w : tensor<8x2xbf16> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x8xbf16>) -> tensor<4x2xbf16> {
    %w = emb.get @w : tensor<8x2xbf16>
    %y = emb.dense %x, %w : tensor<4x8xbf16>, tensor<8x2xbf16> -> tensor<4x2xbf16>
    return %y : tensor<4x2xbf16>
  }
}
