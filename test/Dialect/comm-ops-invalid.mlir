// What the collectives' verifiers refuse: a target of the wrong kind and a
// slice outside the gradient.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

module {
  emb.param @w : tensor<3x2xf32> init<kind = zeros>
  func.func @update() {
    // expected-error @+1 {{slice [4, 8) lies outside the 6-element gradient of @w}}
    emb.grad_all_reduce_start @w offset 4 size 4
    return
  }
}

// -----

module {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @update() {
    // expected-error @+1 {{'t' does not name an emb.param_pack or emb.param}}
    emb.grad_all_reduce_wait @t
    return
  }
}

// -----

module {
  emb.param @w : tensor<3x2xf32> init<kind = zeros>
  func.func @update() {
    // expected-error @+1 {{'emb.grad_all_reduce_start' op attribute 'size' failed to satisfy constraint}}
    emb.grad_all_reduce_start @w offset 0 size 0
    return
  }
}

// -----

module {
  emb.param @w : tensor<3x2xf32> init<kind = zeros>
  func.func @update() {
    // expected-error @+1 {{does not name}}
    emb.gather_rows @w
    return
  }
}
