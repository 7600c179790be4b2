// Round trip of emb.lookup (every pooling, with and without weights), emb.gather and emb.hash.
// RUN: emb-opt %s | emb-opt | FileCheck %s

emb.table @t0 [1000 x 16] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @ctx [500 x 32] bf16 init<kind = zeros> optimizer<kind = sgd>

// CHECK-LABEL: func.func @lookup_poolings
// CHECK-SAME:    (%[[IDS:.*]]: tensor<?xi64>, %[[OFFS:.*]]: tensor<5xi64>)
// CHECK-NEXT:    %[[SUM:.*]] = emb.lookup @t0[%[[IDS]], %[[OFFS]]] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = emb.lookup @t0[%[[IDS]], %[[OFFS]]] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[MAX:.*]] = emb.lookup @t0[%[[IDS]], %[[OFFS]]] max : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[SUM]], %[[MEAN]], %[[MAX]]
func.func @lookup_poolings(%ids: tensor<?xi64>, %offsets: tensor<5xi64>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = emb.lookup @t0[%ids, %offsets] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
  %1 = emb.lookup @t0[%ids, %offsets] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
  %2 = emb.lookup @t0[%ids, %offsets] max : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// Per-id weights, with dynamic and static id counts and 32-bit ids/offsets.
// CHECK-LABEL: func.func @lookup_weights
// CHECK-SAME:    (%[[IDS:.*]]: tensor<?xi64>, %[[OFFS:.*]]: tensor<5xi64>, %[[WTS:.*]]: tensor<?xf32>, %[[IDS32:.*]]: tensor<12xi32>, %[[OFFS32:.*]]: tensor<5xi32>, %[[WTS16:.*]]: tensor<12xf16>)
// CHECK-NEXT:    %[[A:.*]] = emb.lookup @t0[%[[IDS]], %[[OFFS]] weights %[[WTS]]] sum : tensor<?xi64>, tensor<5xi64>, tensor<?xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[B:.*]] = emb.lookup @t0[%[[IDS32]], %[[OFFS32]] weights %[[WTS16]]] mean : tensor<12xi32>, tensor<5xi32>, tensor<12xf16> -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @lookup_weights(%ids: tensor<?xi64>, %offsets: tensor<5xi64>, %weights: tensor<?xf32>,
                          %ids32: tensor<12xi32>, %offsets32: tensor<5xi32>, %weights16: tensor<12xf16>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = emb.lookup @t0[%ids, %offsets weights %weights] sum
      : tensor<?xi64>, tensor<5xi64>, tensor<?xf32> -> tensor<4x16xf32>
  %1 = emb.lookup @t0[%ids32, %offsets32 weights %weights16] mean
      : tensor<12xi32>, tensor<5xi32>, tensor<12xf16> -> tensor<4x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func @gather
// CHECK-SAME:    (%[[NEG:.*]]: tensor<4x5xi64>, %[[POS:.*]]: tensor<4xi64>)
// CHECK-NEXT:    %[[N:.*]] = emb.gather @ctx[%[[NEG]]] : tensor<4x5xi64> -> tensor<4x5x32xbf16>
// CHECK-NEXT:    %[[P:.*]] = emb.gather @ctx[%[[POS]]] : tensor<4xi64> -> tensor<4x32xf32>
// CHECK-NEXT:    return %[[N]], %[[P]]
func.func @gather(%neg: tensor<4x5xi64>, %pos: tensor<4xi64>) -> (tensor<4x5x32xbf16>, tensor<4x32xf32>) {
  %0 = emb.gather @ctx[%neg] : tensor<4x5xi64> -> tensor<4x5x32xbf16>
  %1 = emb.gather @ctx[%pos] : tensor<4xi64> -> tensor<4x32xf32>
  return %0, %1 : tensor<4x5x32xbf16>, tensor<4x32xf32>
}

// CHECK-LABEL: func.func @hash
// CHECK-SAME:    (%[[RAW:.*]]: tensor<?xi64>, %[[RAW2:.*]]: tensor<4x5xi64>, %[[OFFS:.*]]: tensor<5xi64>)
// CHECK-NEXT:    %[[H:.*]] = emb.hash %[[RAW]] buckets(1000) seed(0) : tensor<?xi64>
// CHECK-NEXT:    %[[H2:.*]] = emb.hash %[[RAW2]] buckets(500) seed(42) : tensor<4x5xi64>
// CHECK-NEXT:    %[[E:.*]] = emb.lookup @t0[%[[H]], %[[OFFS]]] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[G:.*]] = emb.gather @ctx[%[[H2]]] : tensor<4x5xi64> -> tensor<4x5x32xf32>
// CHECK-NEXT:    return %[[E]], %[[G]]
func.func @hash(%raw: tensor<?xi64>, %raw2: tensor<4x5xi64>, %offsets: tensor<5xi64>)
    -> (tensor<4x16xf32>, tensor<4x5x32xf32>) {
  %h = emb.hash %raw buckets(1000) seed(0) : tensor<?xi64>
  %h2 = emb.hash %raw2 buckets(500) seed(42) : tensor<4x5xi64>
  %0 = emb.lookup @t0[%h, %offsets] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x16xf32>
  %1 = emb.gather @ctx[%h2] : tensor<4x5xi64> -> tensor<4x5x32xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4x5x32xf32>
}

// Tied embeddings: scores against every row, the table read whole, its row ids.
// CHECK-LABEL: func.func @tied
// CHECK:      emb.table_scores @t0, %{{.*}} : tensor<4x6x16xf32> -> tensor<4x6x1000xf32>
// CHECK:      emb.read_table @t0 : tensor<1000x16xf32>
// CHECK:      emb.row_ids @t0 : tensor<1000xi64>
func.func @tied(%h: tensor<4x6x16xf32>) -> (tensor<4x6x1000xf32>, tensor<1000x16xf32>, tensor<1000xi64>) {
  %s = emb.table_scores @t0, %h : tensor<4x6x16xf32> -> tensor<4x6x1000xf32>
  %e = emb.read_table @t0 : tensor<1000x16xf32>
  %i = emb.row_ids @t0 : tensor<1000xi64>
  return %s, %e, %i : tensor<4x6x1000xf32>, tensor<1000x16xf32>, tensor<1000xi64>
}
