// What -emb-fuse refuses: a module that -emb-autodiff has not run on (no
// @train_step and @update) and a @train_step already fused.
// RUN: emb-opt %s -split-input-file -emb-fuse -verify-diagnostics

// Not differentiated: only @forward.
// expected-error @+1 {{-emb-fuse needs @train_step and @update: run -emb-autodiff first}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %z = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
    %a = emb.activation relu %z : tensor<4x1xf32>
    %l = emb.loss mse %a, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %a : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// @update without @train_step.
// expected-error @+1 {{-emb-fuse needs @train_step and @update: run -emb-autodiff first}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @update() {
    emb.update @w
    return
  }
}

// -----

// A @train_step that is not a function does not count.
// expected-error @+1 {{-emb-fuse needs @train_step and @update: run -emb-autodiff first}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @train_step : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @update() {
    emb.update @train_step
    return
  }
}

// -----

// Already fused (the output of -emb-autodiff -emb-fuse on a dense + relu
// layer): the pass runs once.
// expected-error @+1 {{@train_step is already fused (it holds emb.fused groups)}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x1xf32> init<kind = xavier_uniform>
  func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x1xf32>
    %a = emb.fused dense_act -> tensor<4x1xf32> {
      %z = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
      %r = emb.activation relu %z : tensor<4x1xf32>
      emb.yield %r : tensor<4x1xf32>
    }
    %l = emb.loss mse %a, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %da = emb.loss_grad mse %a, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    emb.fused dense_act_grad {
      %dz = emb.activation_grad relu %da, %a from_output : tensor<4x1xf32>
      %dw = emb.dense_grad_weight %x, %dz : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
      emb.accumulate_grad @w, %dw : tensor<3x1xf32>
      emb.yield
    }
    return %l, %a : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    emb.update @w
    return
  }
}

// -----

// One group is enough, at any depth: here the only group is an
// embedding_update.
// expected-error @+1 {{@train_step is already fused (it holds emb.fused groups)}}
module attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [10 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @train_step(%ids: tensor<6xi64>, %offs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %l = emb.loss mse %e, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    %de = emb.loss_grad mse %e, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    emb.fused embedding_update {
      %g = emb.lookup_grad @t[%ids, %offs] sum %de : tensor<6xi64>, tensor<5xi64>, tensor<4x1xf32> -> tensor<6x1xf32>
      emb.accumulate_rows @t[%ids], %g : tensor<6xi64>, tensor<6x1xf32>
      emb.coalesce_rows @t
      emb.update @t
      emb.yield
    }
    return %l, %e : tensor<f32>, tensor<4x1xf32>
  }
  func.func @update() {
    return
  }
}
