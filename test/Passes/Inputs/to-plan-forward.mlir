// The models of test/Passes/to-plan.mlir before -emb-autodiff; Inputs/to-plan.mlir is their -emb-autodiff output.
module @tiny attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.001>, grad_clip_norm = 1.0, grad_accumulation = 2>} {
  emb.table @sgd_t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @ada_t [20 x 4] f32 init<kind = normal, std = 0.01> optimizer<kind = adagrad, lr = 0.05>
  emb.table @adam_t [30 x 4] f32 init<kind = uniform, low = -0.1, high = 0.1> optimizer<kind = adam>
  emb.table @row_t [40 x 4] f32 init<kind = zeros> optimizer<kind = rowwise_adagrad>
  emb.param @w : tensor<13x1xf32> init<kind = xavier_uniform>
  emb.param @b : tensor<1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense", emb.source = "dense"},
                     %ids: tensor<?xi64> {emb.feature = "a", emb.role = "ids", emb.max_ids = 12 : i64, emb.vocab = 10 : i64, emb.hotness = 3 : i64},
                     %offs: tensor<5xi64> {emb.feature = "a", emb.role = "offsets"},
                     %hids: tensor<?xi64> {emb.feature = "h", emb.role = "ids", emb.max_ids = 4 : i64, emb.source = "C7"},
                     %hoffs: tensor<5xi64> {emb.feature = "h", emb.role = "offsets", emb.source = "C7"},
                     %neg: tensor<4x2xi64> {emb.feature = "n", emb.role = "negatives", emb.vocab = 30 : i64, emb.power = 0.5 : f64},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "binary", emb.source = "label"})
      -> (tensor<f32>, tensor<4x1xf32>) {
    %a = emb.lookup @sgd_t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %h = emb.hash %hids buckets(20) seed(1) : tensor<?xi64>
    %c = emb.lookup @ada_t[%h, %hoffs] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %r = emb.lookup @row_t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %n = emb.gather @adam_t[%neg] : tensor<4x2xi64> -> tensor<4x2x4xf32>
    %d = emb.dot %r, %n : tensor<4x4xf32>, tensor<4x2x4xf32> -> tensor<4x2xf32>
    %cat = emb.concat %a, %x, %c, %d : tensor<4x4xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x13xf32>
    %w = emb.get @w : tensor<13x1xf32>
    %b = emb.get @b : tensor<1xf32>
    %p = emb.dense %cat, %w, %b : tensor<4x13xf32>, tensor<13x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

module @plain attributes {emb.training = #emb.training<batch_size = 2, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [8 x 2] f32 init<kind = zeros> optimizer<kind = sgd, momentum = 0.9>
  emb.param @w : tensor<2x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ids: tensor<3xi64> {emb.feature = "s", emb.role = "ids", emb.vocab = 8 : i64},
                     %offs: tensor<3xi64> {emb.feature = "s", emb.role = "offsets"},
                     %y: tensor<2x1xf32> {emb.feature = "y", emb.role = "label", emb.label_kind = "real"})
      -> (tensor<f32>, tensor<2x1xf32>) {
    %e = emb.lookup @t[%ids, %offs] max : tensor<3xi64>, tensor<3xi64> -> tensor<2x2xf32>
    %r = emb.activation tanh %e : tensor<2x2xf32>
    %w = emb.get @w : tensor<2x1xf32>
    %p = emb.dense %r, %w : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x1xf32>
    %l = emb.loss mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<2x1xf32>
  }
}
