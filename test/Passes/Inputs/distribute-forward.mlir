// The models of test/Passes/distribute.mlir before -emb-autodiff; Inputs/distribute.mlir is their -emb-autodiff output.
module @mlp attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.1>>, emb.plan = #emb.plan<data_parallel = 2>} {
  emb.table @ta [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @tb [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @tc [30 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w0 : tensor<16x32xf32> init<kind = xavier_uniform>
  emb.param @b0 : tensor<32xf32> init<kind = zeros>
  emb.param @w1 : tensor<44x1xf32> init<kind = xavier_uniform>
  emb.param @b1 : tensor<1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x16xf32> {emb.feature = "x", emb.role = "dense"},
                     %ia: tensor<6xi64> {emb.feature = "a", emb.role = "ids"},
                     %oa: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %ib: tensor<6xi64> {emb.feature = "b", emb.role = "ids"},
                     %ob: tensor<5xi64> {emb.feature = "b", emb.role = "offsets"},
                     %ic: tensor<6xi64> {emb.feature = "c", emb.role = "ids"},
                     %oc: tensor<5xi64> {emb.feature = "c", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %w0 = emb.get @w0 : tensor<16x32xf32>
    %b0 = emb.get @b0 : tensor<32xf32>
    %h = emb.dense %x, %w0, %b0 : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
    %r = emb.activation relu %h : tensor<4x32xf32>
    %ea = emb.lookup @ta[%ia, %oa] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %eb = emb.lookup @tb[%ib, %ob] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %ec = emb.lookup @tc[%ic, %oc] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.concat %r, %ea, %eb, %ec : tensor<4x32xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x44xf32>
    %w1 = emb.get @w1 : tensor<44x1xf32>
    %b1 = emb.get @b1 : tensor<1xf32>
    %p = emb.dense %c, %w1, %b1 : tensor<4x44xf32>, tensor<44x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @accumulated attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, grad_accumulation = 2>, emb.plan = #emb.plan<data_parallel = 2>} {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w : tensor<4x1xf32> init<kind = zeros>
  emb.param @b : tensor<1xf32> init<kind = zeros>
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %w = emb.get @w : tensor<4x1xf32>
    %b = emb.get @b : tensor<1xf32>
    %p = emb.dense %e, %w, %b : tensor<4x4xf32>, tensor<4x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @negative_one_rank attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w : tensor<4x1xf32> init<kind = zeros>
  func.func @forward(%i: tensor<4xi64> {emb.feature = "a", emb.role = "ids"},
                     %o: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%i, %o] sum : tensor<4xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %w = emb.get @w : tensor<4x1xf32>
    %p = emb.dense %e, %w : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}
