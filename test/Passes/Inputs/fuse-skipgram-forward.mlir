// The model of test/Passes/fuse-skipgram.mlir before -emb-autodiff; Inputs/fuse-skipgram.mlir is its -emb-autodiff output.
module @skipgram attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.025>, embedding_updates = hogwild>} {
  emb.table @in_vectors[50 x 8] f32 init<kind = uniform, low = -0.005, high = 0.005> optimizer<kind = sgd, lr = 0.025>
  emb.table @out_vectors[50 x 8] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.025>
  func.func @forward(%arg0: tensor<?xi64> {emb.feature = "center", emb.max_ids = 4 : i64, emb.role = "ids", emb.vocab = 50 : i64}, %arg1: tensor<5xi64> {emb.feature = "center", emb.role = "offsets"}, %arg2: tensor<?xi64> {emb.feature = "context", emb.max_ids = 4 : i64, emb.role = "ids", emb.vocab = 50 : i64}, %arg3: tensor<5xi64> {emb.feature = "context", emb.role = "offsets"}, %arg4: tensor<4x2xi64> {emb.feature = "negatives", emb.power = 7.500000e-01 : f64, emb.role = "negatives", emb.vocab = 50 : i64}) -> (tensor<f32>, tensor<4x1xf32>) {
    %0 = emb.lookup @in_vectors[%arg0, %arg1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %1 = emb.lookup @out_vectors[%arg2, %arg3] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %2 = emb.dot %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %3 = emb.gather @out_vectors[%arg4] : tensor<4x2xi64> -> tensor<4x2x8xf32>
    %4 = emb.dot %0, %3 : tensor<4x8xf32>, tensor<4x2x8xf32> -> tensor<4x2xf32>
    %5 = emb.loss neg_sampling %2, %4 : tensor<4x1xf32>, tensor<4x2xf32> -> tensor<f32>
    return %5, %2 : tensor<f32>, tensor<4x1xf32>
  }
}
