// The models of test/Passes/pack-params.mlir before -emb-autodiff; Inputs/pack-params.mlir is their -emb-autodiff output.
module @mlp attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.1>>} {
  emb.table @ta [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @tb [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @tc [30 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @td [40 x 8] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.param @w0 : tensor<3x8xf32> init<kind = xavier_uniform>
  emb.param @b0 : tensor<8xf32> init<kind = zeros>
  emb.param @w1 : tensor<20x1xf32> init<kind = xavier_uniform>
  emb.param @b1 : tensor<1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %ia: tensor<6xi64> {emb.feature = "a", emb.role = "ids"},
                     %oa: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %ib: tensor<6xi64> {emb.feature = "b", emb.role = "ids"},
                     %ob: tensor<5xi64> {emb.feature = "b", emb.role = "offsets"},
                     %ic: tensor<6xi64> {emb.feature = "c", emb.role = "ids"},
                     %oc: tensor<5xi64> {emb.feature = "c", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %w0 = emb.get @w0 : tensor<3x8xf32>
    %b0 = emb.get @b0 : tensor<8xf32>
    %h = emb.dense %x, %w0, %b0 : tensor<4x3xf32>, tensor<3x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %r = emb.activation relu %h : tensor<4x8xf32>
    %ea = emb.lookup @ta[%ia, %oa] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %eb = emb.lookup @tb[%ib, %ob] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %ec = emb.lookup @tc[%ic, %oc] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %ed = emb.lookup @td[%ic, %oc] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %c = emb.concat %r, %ea, %eb, %ec : tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x20xf32>
    %w1 = emb.get @w1 : tensor<20x1xf32>
    %b1 = emb.get @b1 : tensor<1xf32>
    %p = emb.dense %c, %w1, %b1 : tensor<4x20xf32>, tensor<20x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %d = emb.dot %ed, %ed : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %s = emb.add %p, %d : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %s, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %s : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @buckets attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, grad_clip_norm = 1.0>} {
  emb.table @ta [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w0 : tensor<16x20xf32> init<kind = xavier_uniform>
  emb.param @b0 : tensor<20xf32> init<kind = zeros>
  emb.param @w1 : tensor<20x8xf32> init<kind = xavier_uniform>
  emb.param @b1 : tensor<8xf32> init<kind = zeros>
  emb.param @w2 : tensor<12x1xf32> init<kind = xavier_uniform>
  emb.param @b2 : tensor<1xf32> init<kind = zeros>
  emb.param @unused : tensor<5xf32> init<kind = zeros>
  emb.param @other : tensor<7xf64> init<kind = zeros>
  func.func @forward(%x: tensor<4x16xf32>, %ia: tensor<6xi64>, %oa: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w0 = emb.get @w0 : tensor<16x20xf32>
    %b0 = emb.get @b0 : tensor<20xf32>
    %h0 = emb.dense %x, %w0, %b0 : tensor<4x16xf32>, tensor<16x20xf32>, tensor<20xf32> -> tensor<4x20xf32>
    %w1 = emb.get @w1 : tensor<20x8xf32>
    %b1 = emb.get @b1 : tensor<8xf32>
    %h1 = emb.dense %h0, %w1, %b1 : tensor<4x20xf32>, tensor<20x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %ea = emb.lookup @ta[%ia, %oa] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.concat %h1, %ea : tensor<4x8xf32>, tensor<4x4xf32> -> tensor<4x12xf32>
    %w2 = emb.get @w2 : tensor<12x1xf32>
    %b2 = emb.get @b2 : tensor<1xf32>
    %p = emb.dense %c, %w2, %b2 : tensor<4x12xf32>, tensor<12x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @groups attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @a1 [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @a2 [20 x 4] bf16 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @a3 [30 x 4] f32 init<kind = zeros> optimizer<kind = adagrad, lr = 0.5>
  emb.table @a4 [40 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @a5 [50 x 4] f32 init<kind = zeros> optimizer<kind = rowwise_adagrad>
  emb.table @a6 [60 x 4] f32 init<kind = zeros> optimizer<kind = rowwise_adagrad>
  emb.table @a7 [70 x 4] f32 init<kind = normal, std = 0.1> optimizer<kind = adagrad>
  func.func @forward(%ids: tensor<6xi64>, %offs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %e1 = emb.lookup @a1[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e2 = emb.lookup @a2[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e3 = emb.lookup @a3[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e4 = emb.lookup @a4[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e5 = emb.lookup @a5[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e6 = emb.lookup @a6[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e7 = emb.lookup @a7[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.concat %e1, %e2, %e3, %e4, %e5, %e6, %e7
        : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x28xf32>
    %p = emb.dot %c, %c : tensor<4x28xf32>, tensor<4x28xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @clash attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>, grad_clip_norm = 0.5>} {
  emb.table @tables_d4 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @u [20 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @dense_f32 : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ia: tensor<6xi64>, %oa: tensor<5xi64>, %ib: tensor<6xi64>, %ob: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %ea = emb.lookup @tables_d4[%ia, %oa] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %eb = emb.lookup @u[%ib, %ob] mean : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.concat %ea, %eb : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x8xf32>
    %w = emb.get @dense_f32 : tensor<8x1xf32>
    %p = emb.dense %c, %w : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @placements attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @p1 [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad> placement disk
  emb.table @p2 [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @p3 [30 x 4] f32 init<kind = zeros> optimizer<kind = adagrad> placement disk
  emb.table @p4 [40 x 4] f32 init<kind = zeros> optimizer<kind = adagrad> placement host
  emb.table @p5 [50 x 4] f32 init<kind = zeros> optimizer<kind = adagrad> placement host
  func.func @forward(%ids: tensor<6xi64> {emb.feature = "s", emb.role = "ids"},
                     %offs: tensor<5xi64> {emb.feature = "s", emb.role = "offsets"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %e1 = emb.lookup @p1[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e2 = emb.lookup @p2[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e3 = emb.lookup @p3[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e4 = emb.lookup @p4[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e5 = emb.lookup @p5[%ids, %offs] sum : tensor<6xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.concat %e1, %e2, %e3, %e4, %e5
        : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x20xf32>
    %p = emb.dot %c, %c : tensor<4x20xf32>, tensor<4x20xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}
