// -emb-sample-softmax: a token loss marked emb.sampled = S has its output
// projection and loss replaced by emb.sampled_logits (1 + S logits a row)
// and a loss against its classes; the forward's prediction becomes the
// sampled logits. A dense head keeps its weight and bias (their gradients
// come from emb.sampled_logits_grad); a tied head reads its table whole
// and its gradient goes to every row of the table, as emb.table_scores's
// does. Behind -emb-select-targets the sampled head runs on the selected
// rows. An unmarked loss is left alone. The plan lowers both kernels with
// their attributes.
// RUN: emb-opt %s -split-input-file -emb-sample-softmax | FileCheck %s
// RUN: emb-opt %s -split-input-file -emb-select-targets -emb-sample-softmax -emb-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: emb-opt %s -split-input-file -emb-sample-softmax -emb-autodiff -emb-to-plan="emit-json=true" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    -> (tensor<f32>, tensor<4x8x7xf32>)
// CHECK:         %[[H:.*]] = emb.sequence_lookup
// CHECK:         %[[W:.*]] = emb.get @w
// CHECK:         %[[B:.*]] = emb.get @b
// CHECK:         %[[T:.*]] = emb.next_token_targets
// CHECK-NEXT:    %[[L:.*]], %[[C:.*]], %{{.*}} = emb.sampled_logits %[[H]], %[[W]], %[[T]] bias %[[B]] {num_sampled = 6 : i64, stream = 0 : i64, tied = false} : tensor<4x8x8xf32>, tensor<8x20xf32>, tensor<4x8xf32>, tensor<20xf32> -> tensor<4x8x7xf32>, tensor<4x8xf32>, tensor<6xi64>
// CHECK-NEXT:    %[[LOSS:.*]] = emb.loss sequence_softmax_ce %[[L]], %[[C]] : tensor<4x8x7xf32>, tensor<4x8xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[LOSS]], %[[L]]
// GRAD-LABEL:  func.func @train_step
// GRAD:          %{{.*}}, %[[DW:.*]], %[[DB:.*]] = emb.sampled_logits_grad {{.*}} {tied = false} : tensor<4x8x7xf32>, tensor<4x8x8xf32>, tensor<8x20xf32>, tensor<4x8xf32>, tensor<6xi64> -> tensor<4x8x8xf32>, tensor<8x20xf32>, tensor<20xf32>
// GRAD-DAG:      emb.accumulate_grad @b, %[[DB]]
// GRAD-DAG:      emb.accumulate_grad @w, %[[DW]]
// PLAN: "attrs": { "num_sampled": 6, "stream": 0, "tied": false }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "sampled_logits", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ]
// PLAN: "attrs": { "tied": false }, "bytes": {{[0-9]+}}, "inputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ], "op": "sampled_logits_grad", "outputs": [ {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}} ]
module @next attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.table @words [20 x 8] f32 init<kind = normal, std = 0.1> optimizer<kind = sgd, lr = 0.1>
  emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>
  emb.param @b : tensor<20xf32> init<kind = zeros>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "tokens", emb.max_ids = 32 : i64, emb.role = "ids", emb.vocab = 20 : i64, emb.hotness = 8 : i64},
                     %offsets: tensor<5xi64> {emb.feature = "tokens", emb.role = "offsets"})
      -> (tensor<f32>, tensor<4x8x20xf32>) {
    %x = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x8x8xf32>
    %w = emb.get @w : tensor<8x20xf32>
    %b = emb.get @b : tensor<20xf32>
    %l = emb.dense %x, %w, %b : tensor<4x8x8xf32>, tensor<8x20xf32>, tensor<20xf32> -> tensor<4x8x20xf32>
    %t = emb.next_token_targets %ids, %offsets : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %loss = emb.loss sequence_softmax_ce %l, %t {emb.sampled = 6 : i64} : tensor<4x8x20xf32>, tensor<4x8xf32> -> tensor<f32>
    return %loss, %l : tensor<f32>, tensor<4x8x20xf32>
  }
}

// -----

// Tied, masked: the selection comes first, then the sampled head reads the
// table whole (21 rows: the mask token's too).
// CHECK-LABEL: func.func @forward
// CHECK:         %[[E:.*]] = emb.read_table @words : tensor<21x8xf32>
// CHECK:         emb.sampled_logits %{{.*}}, %[[E]], %{{.*}} {num_sampled = 5 : i64, stream = 0 : i64, tied = true} : tensor<4x8x8xf32>, tensor<21x8xf32>, tensor<4x8xf32> -> tensor<4x8x6xf32>
// GRAD-LABEL:  func.func @train_step
// GRAD:          emb.select_targets {{.*}} -> tensor<4x2x8xf32>, tensor<4x2xf32>
// GRAD:          emb.sampled_logits {{.*}} {num_sampled = 5 : i64, stream = 0 : i64, tied = true} : tensor<4x2x8xf32>, tensor<21x8xf32>, tensor<4x2xf32> -> tensor<4x2x6xf32>
// GRAD:          %{{.*}}, %[[DE:.*]] = emb.sampled_logits_grad {{.*}} {tied = true} : {{.*}} -> tensor<4x2x8xf32>, tensor<21x8xf32>{{$}}
// GRAD:          %[[IDS:.*]] = emb.row_ids @words : tensor<21xi64>
// GRAD:          emb.accumulate_rows @words[%[[IDS]]], %[[DE]]
// PLAN: "op": "sampled_logits"
module @masked attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.table @words [21 x 8] f32 init<kind = normal, std = 0.1> optimizer<kind = sgd, lr = 0.1>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "tokens", emb.max_ids = 32 : i64, emb.role = "ids", emb.vocab = 20 : i64, emb.hotness = 8 : i64},
                     %offsets: tensor<5xi64> {emb.feature = "tokens", emb.role = "offsets"})
      -> (tensor<f32>, tensor<4x8x21xf32>) {
    %m, %t = emb.mask_tokens %ids, %offsets {mask_id = 20 : i64, rate = 0.25 : f64, stream = 0 : i64, vocab = 20 : i64}
        : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<4x8xf32>
    %x = emb.sequence_lookup @words[%m, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x8x8xf32>
    %l = emb.table_scores @words, %x : tensor<4x8x8xf32> -> tensor<4x8x21xf32>
    %loss = emb.loss sequence_softmax_ce %l, %t {emb.sampled = 5 : i64} : tensor<4x8x21xf32>, tensor<4x8xf32> -> tensor<f32>
    return %loss, %l : tensor<f32>, tensor<4x8x21xf32>
  }
}

// -----

// Unmarked: unchanged.
// CHECK-LABEL: func.func @forward
// CHECK-NOT:     emb.sampled_logits
// CHECK:         emb.loss sequence_softmax_ce {{.*}} : tensor<4x8x20xf32>, tensor<4x8xf32>
// GRAD-LABEL:  func.func @train_step
// GRAD-NOT:      emb.sampled_logits
// GRAD:          func.func @update
// PLAN: "op": "loss"
module @plain attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.01>>} {
  emb.table @words [20 x 8] f32 init<kind = normal, std = 0.1> optimizer<kind = sgd, lr = 0.1>
  emb.param @w : tensor<8x20xf32> init<kind = xavier_uniform>
  func.func @forward(%ids: tensor<?xi64> {emb.feature = "tokens", emb.max_ids = 32 : i64, emb.role = "ids", emb.vocab = 20 : i64, emb.hotness = 8 : i64},
                     %offsets: tensor<5xi64> {emb.feature = "tokens", emb.role = "offsets"})
      -> (tensor<f32>, tensor<4x8x20xf32>) {
    %x = emb.sequence_lookup @words[%ids, %offsets] : tensor<?xi64>, tensor<5xi64> -> tensor<4x8x8xf32>
    %w = emb.get @w : tensor<8x20xf32>
    %l = emb.dense %x, %w : tensor<4x8x8xf32>, tensor<8x20xf32> -> tensor<4x8x20xf32>
    %t = emb.next_token_targets %ids, %offsets : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %loss = emb.loss sequence_softmax_ce %l, %t : tensor<4x8x20xf32>, tensor<4x8xf32> -> tensor<f32>
    return %loss, %l : tensor<f32>, tensor<4x8x20xf32>
  }
}
