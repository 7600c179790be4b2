// The models of test/Passes/fuse.mlir before -emb-autodiff; Inputs/fuse.mlir is their -emb-autodiff output.
module @dlrm attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @t1 [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.param @bw : tensor<3x4xf32> init<kind = xavier_uniform>
  emb.param @bb : tensor<4xf32> init<kind = zeros>
  emb.param @tw0 : tensor<7x8xf32> init<kind = xavier_uniform>
  emb.param @tb0 : tensor<8xf32> init<kind = zeros>
  emb.param @tw1 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %r0: tensor<6xi64> {emb.feature = "c0", emb.role = "ids"},
                     %o0: tensor<5xi64> {emb.feature = "c0", emb.role = "offsets"},
                     %r1: tensor<6xi64> {emb.feature = "c1", emb.role = "ids"},
                     %o1: tensor<5xi64> {emb.feature = "c1", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %bw = emb.get @bw : tensor<3x4xf32>
    %bb = emb.get @bb : tensor<4xf32>
    %z = emb.dense %x, %bw, %bb : tensor<4x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
    %bot = emb.activation relu %z : tensor<4x4xf32>
    %h0 = emb.hash %r0 buckets(10) seed(0) : tensor<6xi64>
    %e0 = emb.lookup @t0[%h0, %o0] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %h1 = emb.hash %r1 buckets(20) seed(0) : tensor<6xi64>
    %e1 = emb.lookup @t1[%h1, %o1] mean : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %i = emb.interaction %bot, %e0, %e1 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x3xf32>
    %c = emb.concat %bot, %i : tensor<4x4xf32>, tensor<4x3xf32> -> tensor<4x7xf32>
    %tw0 = emb.get @tw0 : tensor<7x8xf32>
    %tb0 = emb.get @tb0 : tensor<8xf32>
    %t0 = emb.dense %c, %tw0, %tb0 : tensor<4x7xf32>, tensor<7x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %a0 = emb.activation sigmoid %t0 : tensor<4x8xf32>
    %tw1 = emb.get @tw1 : tensor<8x1xf32>
    %p = emb.dense %a0, %tw1 : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @wide_deep attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @wide [100 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @deep [100 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.param @w0 : tensor<7x8xf32> init<kind = xavier_uniform>
  emb.param @b0 : tensor<8xf32> init<kind = zeros>
  emb.param @w1 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %ids: tensor<6xi64> {emb.feature = "c", emb.role = "ids"},
                     %offs: tensor<5xi64> {emb.feature = "c", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %wd = emb.lookup @wide[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %e = emb.lookup @deep[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.concat %x, %e : tensor<4x3xf32>, tensor<4x4xf32> -> tensor<4x7xf32>
    %w0 = emb.get @w0 : tensor<7x8xf32>
    %b0 = emb.get @b0 : tensor<8xf32>
    %h = emb.dense %c, %w0, %b0 : tensor<4x7xf32>, tensor<7x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %r = emb.activation gelu %h : tensor<4x8xf32>
    %w1 = emb.get @w1 : tensor<8x1xf32>
    %dp = emb.dense %r, %w1 : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %s = emb.add %wd, %dp : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %t = emb.activation tanh %s : tensor<4x1xf32>
    %p = emb.activation sigmoid %t : tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @accumulation attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, grad_accumulation = 2>} {
  emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @t1 [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.param @bw : tensor<3x4xf32> init<kind = xavier_uniform>
  emb.param @bb : tensor<4xf32> init<kind = zeros>
  emb.param @tw0 : tensor<7x8xf32> init<kind = xavier_uniform>
  emb.param @tb0 : tensor<8xf32> init<kind = zeros>
  emb.param @tw1 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %r0: tensor<6xi64> {emb.feature = "c0", emb.role = "ids"},
                     %o0: tensor<5xi64> {emb.feature = "c0", emb.role = "offsets"},
                     %r1: tensor<6xi64> {emb.feature = "c1", emb.role = "ids"},
                     %o1: tensor<5xi64> {emb.feature = "c1", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %bw = emb.get @bw : tensor<3x4xf32>
    %bb = emb.get @bb : tensor<4xf32>
    %z = emb.dense %x, %bw, %bb : tensor<4x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
    %bot = emb.activation relu %z : tensor<4x4xf32>
    %h0 = emb.hash %r0 buckets(10) seed(0) : tensor<6xi64>
    %e0 = emb.lookup @t0[%h0, %o0] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %h1 = emb.hash %r1 buckets(20) seed(0) : tensor<6xi64>
    %e1 = emb.lookup @t1[%h1, %o1] mean : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %i = emb.interaction %bot, %e0, %e1 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x3xf32>
    %c = emb.concat %bot, %i : tensor<4x4xf32>, tensor<4x3xf32> -> tensor<4x7xf32>
    %tw0 = emb.get @tw0 : tensor<7x8xf32>
    %tb0 = emb.get @tb0 : tensor<8xf32>
    %t0 = emb.dense %c, %tw0, %tb0 : tensor<4x7xf32>, tensor<7x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %a0 = emb.activation sigmoid %t0 : tensor<4x8xf32>
    %tw1 = emb.get @tw1 : tensor<8x1xf32>
    %p = emb.dense %a0, %tw1 : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @clipped attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, grad_clip_norm = 1.0>} {
  emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @t1 [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.param @bw : tensor<3x4xf32> init<kind = xavier_uniform>
  emb.param @bb : tensor<4xf32> init<kind = zeros>
  emb.param @tw0 : tensor<7x8xf32> init<kind = xavier_uniform>
  emb.param @tb0 : tensor<8xf32> init<kind = zeros>
  emb.param @tw1 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %r0: tensor<6xi64> {emb.feature = "c0", emb.role = "ids"},
                     %o0: tensor<5xi64> {emb.feature = "c0", emb.role = "offsets"},
                     %r1: tensor<6xi64> {emb.feature = "c1", emb.role = "ids"},
                     %o1: tensor<5xi64> {emb.feature = "c1", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %bw = emb.get @bw : tensor<3x4xf32>
    %bb = emb.get @bb : tensor<4xf32>
    %z = emb.dense %x, %bw, %bb : tensor<4x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
    %bot = emb.activation relu %z : tensor<4x4xf32>
    %h0 = emb.hash %r0 buckets(10) seed(0) : tensor<6xi64>
    %e0 = emb.lookup @t0[%h0, %o0] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %h1 = emb.hash %r1 buckets(20) seed(0) : tensor<6xi64>
    %e1 = emb.lookup @t1[%h1, %o1] mean : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %i = emb.interaction %bot, %e0, %e1 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x3xf32>
    %c = emb.concat %bot, %i : tensor<4x4xf32>, tensor<4x3xf32> -> tensor<4x7xf32>
    %tw0 = emb.get @tw0 : tensor<7x8xf32>
    %tb0 = emb.get @tb0 : tensor<8xf32>
    %t0 = emb.dense %c, %tw0, %tb0 : tensor<4x7xf32>, tensor<7x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %a0 = emb.activation sigmoid %t0 : tensor<4x8xf32>
    %tw1 = emb.get @tw1 : tensor<8x1xf32>
    %p = emb.dense %a0, %tw1 : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @max_pool attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @t1 [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.param @bw : tensor<3x4xf32> init<kind = xavier_uniform>
  emb.param @bb : tensor<4xf32> init<kind = zeros>
  emb.param @tw0 : tensor<7x8xf32> init<kind = xavier_uniform>
  emb.param @tb0 : tensor<8xf32> init<kind = zeros>
  emb.param @tw1 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %r0: tensor<6xi64> {emb.feature = "c0", emb.role = "ids"},
                     %o0: tensor<5xi64> {emb.feature = "c0", emb.role = "offsets"},
                     %r1: tensor<6xi64> {emb.feature = "c1", emb.role = "ids"},
                     %o1: tensor<5xi64> {emb.feature = "c1", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %bw = emb.get @bw : tensor<3x4xf32>
    %bb = emb.get @bb : tensor<4xf32>
    %z = emb.dense %x, %bw, %bb : tensor<4x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
    %bot = emb.activation relu %z : tensor<4x4xf32>
    %h0 = emb.hash %r0 buckets(10) seed(0) : tensor<6xi64>
    %e0 = emb.lookup @t0[%h0, %o0] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %h1 = emb.hash %r1 buckets(20) seed(0) : tensor<6xi64>
    %e1 = emb.lookup @t1[%h1, %o1] max : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %i = emb.interaction %bot, %e0, %e1 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x3xf32>
    %c = emb.concat %bot, %i : tensor<4x4xf32>, tensor<4x3xf32> -> tensor<4x7xf32>
    %tw0 = emb.get @tw0 : tensor<7x8xf32>
    %tb0 = emb.get @tb0 : tensor<8xf32>
    %t0 = emb.dense %c, %tw0, %tb0 : tensor<4x7xf32>, tensor<7x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %a0 = emb.activation sigmoid %t0 : tensor<4x8xf32>
    %tw1 = emb.get @tw1 : tensor<8x1xf32>
    %p = emb.dense %a0, %tw1 : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}
