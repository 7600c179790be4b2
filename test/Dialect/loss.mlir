// Round trip of emb.loss for every loss kind.
// RUN: emb-opt %s | emb-opt | FileCheck %s

// CHECK-LABEL: func.func @bce_with_logits
// CHECK-SAME:    (%[[LOGIT:.*]]: tensor<8x1xf32>, %[[LABEL:.*]]: tensor<8x1xf32>)
// CHECK-NEXT:    %[[L:.*]] = emb.loss bce_with_logits %[[LOGIT]], %[[LABEL]] : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[L]]
func.func @bce_with_logits(%logit: tensor<8x1xf32>, %label: tensor<8x1xf32>) -> tensor<f32> {
  %0 = emb.loss bce_with_logits %logit, %label : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @mse
// CHECK-SAME:    (%[[PRED:.*]]: tensor<8x1xf32>, %[[RATING:.*]]: tensor<8x1xf32>)
// CHECK-NEXT:    %[[L:.*]] = emb.loss mse %[[PRED]], %[[RATING]] : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[L]]
func.func @mse(%pred: tensor<8x1xf32>, %rating: tensor<8x1xf32>) -> tensor<f32> {
  %0 = emb.loss mse %pred, %rating : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @softmax_ce
// CHECK-SAME:    (%[[LOGITS:.*]]: tensor<8x10xf32>, %[[CLASS:.*]]: tensor<8x1xf32>)
// CHECK-NEXT:    %[[L:.*]] = emb.loss softmax_ce %[[LOGITS]], %[[CLASS]] : tensor<8x10xf32>, tensor<8x1xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[L]]
func.func @softmax_ce(%logits: tensor<8x10xf32>, %class: tensor<8x1xf32>) -> tensor<f32> {
  %0 = emb.loss softmax_ce %logits, %class : tensor<8x10xf32>, tensor<8x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @neg_sampling
// CHECK-SAME:    (%[[POS:.*]]: tensor<8x1xf32>, %[[NEG:.*]]: tensor<8x5xf32>)
// CHECK-NEXT:    %[[L:.*]] = emb.loss neg_sampling %[[POS]], %[[NEG]] : tensor<8x1xf32>, tensor<8x5xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[L]]
func.func @neg_sampling(%pos: tensor<8x1xf32>, %neg: tensor<8x5xf32>) -> tensor<f32> {
  %0 = emb.loss neg_sampling %pos, %neg : tensor<8x1xf32>, tensor<8x5xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// A half-precision loss value.
// CHECK-LABEL: func.func @f16_result
// CHECK-SAME:    (%[[LOGIT:.*]]: tensor<8x1xf16>, %[[LABEL:.*]]: tensor<8x1xf16>)
// CHECK-NEXT:    %[[L:.*]] = emb.loss bce_with_logits %[[LOGIT]], %[[LABEL]] : tensor<8x1xf16>, tensor<8x1xf16> -> tensor<f16>
// CHECK-NEXT:    return %[[L]]
func.func @f16_result(%logit: tensor<8x1xf16>, %label: tensor<8x1xf16>) -> tensor<f16> {
  %0 = emb.loss bce_with_logits %logit, %label : tensor<8x1xf16>, tensor<8x1xf16> -> tensor<f16>
  return %0 : tensor<f16>
}
