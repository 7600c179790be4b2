// -emb-fuse: the groups of @train_step that the plan runs as single kernels,
// one per kind (lookup, dense_act, dense_act_grad, interaction_concat,
// interaction_concat_grad, embedding_update, elementwise), the activation
// gradients rewritten to read the activation's output, and where fusion must
// not happen (gradient accumulation, clipping, max pooling).
// The RUN lines read Inputs/fuse.mlir: -emb-autodiff's output for the
// models in Inputs/fuse-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/fuse.mlir -split-input-file -emb-fuse | FileCheck %s
// After -emb-pack-params: one embedding_update per table batch.
// RUN: emb-opt %S/Inputs/fuse.mlir -split-input-file -emb-pack-params -emb-fuse \
// RUN:   | FileCheck %s --check-prefix=PACK
// The fused IR parses back and verifies.
// RUN: emb-opt %S/Inputs/fuse.mlir -split-input-file -emb-pack-params -emb-fuse \
// RUN:   | emb-opt -split-input-file | FileCheck %s --check-prefix=PACK
// The plan's kernels: each group is one kernel of its kind (the ops nested
// in an elementwise kernel's attributes are left out: only "op" followed by
// "outputs" names a kernel).
// RUN: emb-opt %S/Inputs/fuse.mlir -split-input-file -emb-fuse -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | tr -s ' ' | grep -o '"model": "[a-z_]*"\|"op": "[a-z_]*", "outputs"' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: emb-opt %S/Inputs/fuse.mlir -split-input-file -emb-pack-params -emb-fuse -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | tr -s ' ' | grep -o '"model": "[a-z_]*"\|"op": "[a-z_]*", "outputs"' \
// RUN:   | FileCheck %s --check-prefix=PACKPLAN

// DLRM-like: a bottom MLP (dense + relu), two hashed tables, the interaction
// of the bottom output with both lookups concatenated after the bottom
// output, a top MLP (dense + sigmoid, then a last dense layer without bias or
// activation).
// - lookup: both hashes and lookups; the hashed ids are yielded for the
//   backward.
// - dense_act: each dense with its activation; the last layer (no
//   activation) stays a plain emb.dense.
// - interaction_concat: the interaction and the concat it feeds.
// - dense_act_grad: the last layer's backward has no activation gradient
//   (kind none in the plan) and no bias; the top layer's reads the sigmoid's
//   output (from_output) and accumulates bias and weight gradients; the
//   bottom layer reads data, so it has no input gradient and yields nothing.
// - interaction_concat_grad: the slices of the concat's gradient, the
//   interaction gradient and the add of the bottom output's two gradients.
// - embedding_update: each table's lookup_grad, accumulate_rows, and the
//   coalesce_rows and update moved from @update.
// CHECK-LABEL: module @dlrm
// CHECK:         func.func @train_step(%[[X:[^:]*]]: tensor<4x3xf32> {{.*}}, %[[R0:[^:]*]]: tensor<6xi64> {{.*}}, %[[O0:[^:]*]]: tensor<5xi64> {{.*}}, %[[R1:[^:]*]]: tensor<6xi64> {{.*}}, %[[O1:[^:]*]]: tensor<5xi64> {{.*}}, %[[Y:[^:]*]]: tensor<4x1xf32> {{.*}})
// CHECK-NEXT:      %[[BW:.*]] = emb.get @bw
// CHECK-NEXT:      %[[BB:.*]] = emb.get @bb
// CHECK-NEXT:      %[[BOT:.*]] = emb.fused dense_act -> tensor<4x4xf32> {
// CHECK-NEXT:        %[[Z:.*]] = emb.dense %[[X]], %[[BW]], %[[BB]]
// CHECK-NEXT:        %[[A:.*]] = emb.activation relu %[[Z]]
// CHECK-NEXT:        emb.yield %[[A]] : tensor<4x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[L:.*]]:4 = emb.fused lookup -> tensor<6xi64>, tensor<4x4xf32>, tensor<6xi64>, tensor<4x4xf32> {
// CHECK-NEXT:        %[[H0:.*]] = emb.hash %[[R0]] buckets(10) seed(0)
// CHECK-NEXT:        %[[E0:.*]] = emb.lookup @t0[%[[H0]], %[[O0]]] sum
// CHECK-NEXT:        %[[H1:.*]] = emb.hash %[[R1]] buckets(20) seed(0)
// CHECK-NEXT:        %[[E1:.*]] = emb.lookup @t1[%[[H1]], %[[O1]]] mean
// CHECK-NEXT:        emb.yield %[[H0]], %[[E0]], %[[H1]], %[[E1]] : tensor<6xi64>, tensor<4x4xf32>, tensor<6xi64>, tensor<4x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[CAT:.*]] = emb.fused interaction_concat -> tensor<4x7xf32> {
// CHECK-NEXT:        %[[I:.*]] = emb.interaction %[[BOT]], %[[L]]#1, %[[L]]#3
// CHECK-NEXT:        %[[C:.*]] = emb.concat %[[BOT]], %[[I]]
// CHECK-NEXT:        emb.yield %[[C]] : tensor<4x7xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[TW0:.*]] = emb.get @tw0
// CHECK-NEXT:      %[[TB0:.*]] = emb.get @tb0
// CHECK-NEXT:      %[[TOP:.*]] = emb.fused dense_act -> tensor<4x8xf32> {
// CHECK-NEXT:        %[[T:.*]] = emb.dense %[[CAT]], %[[TW0]], %[[TB0]]
// CHECK-NEXT:        %[[S:.*]] = emb.activation sigmoid %[[T]]
// CHECK-NEXT:        emb.yield %[[S]] : tensor<4x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[TW1:.*]] = emb.get @tw1
// CHECK-NEXT:      %[[P:.*]] = emb.dense %[[TOP]], %[[TW1]] :
// CHECK-NEXT:      %[[LOSS:.*]] = emb.loss bce_with_logits %[[P]], %[[Y]]
// CHECK-NEXT:      %[[DP:.*]] = emb.loss_grad bce_with_logits %[[P]], %[[Y]]
// CHECK-NEXT:      %[[DTOP:.*]] = emb.fused dense_act_grad -> tensor<4x8xf32> {
// CHECK-NEXT:        %[[G0:.*]] = emb.dense_grad_input %[[DP]], %[[TW1]]
// CHECK-NEXT:        %[[G1:.*]] = emb.dense_grad_weight %[[TOP]], %[[DP]]
// CHECK-NEXT:        emb.accumulate_grad @tw1, %[[G1]]
// CHECK-NEXT:        emb.yield %[[G0]] : tensor<4x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[DCAT:.*]] = emb.fused dense_act_grad -> tensor<4x7xf32> {
// CHECK-NEXT:        %[[DT:.*]] = emb.activation_grad sigmoid %[[DTOP]], %[[TOP]] from_output
// CHECK-NEXT:        %[[G2:.*]] = emb.dense_grad_input %[[DT]], %[[TW0]]
// CHECK-NEXT:        %[[G3:.*]] = emb.dense_grad_weight %[[CAT]], %[[DT]]
// CHECK-NEXT:        %[[G4:.*]] = emb.bias_grad %[[DT]]
// CHECK-NEXT:        emb.accumulate_grad @tb0, %[[G4]]
// CHECK-NEXT:        emb.accumulate_grad @tw0, %[[G3]]
// CHECK-NEXT:        emb.yield %[[G2]] : tensor<4x7xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[DI:.*]]:3 = emb.fused interaction_concat_grad -> tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> {
// CHECK-NEXT:        %[[SL0:.*]] = emb.slice %[[DCAT]][0] : tensor<4x7xf32> -> tensor<4x4xf32>
// CHECK-NEXT:        %[[SL1:.*]] = emb.slice %[[DCAT]][4] : tensor<4x7xf32> -> tensor<4x3xf32>
// CHECK-NEXT:        %[[IG:.*]]:3 = emb.interaction_grad %[[SL1]], %[[BOT]], %[[L]]#1, %[[L]]#3
// CHECK-NEXT:        %[[DBOT:.*]] = emb.add %[[SL0]], %[[IG]]#0
// CHECK-NEXT:        emb.yield %[[IG]]#1, %[[IG]]#2, %[[DBOT]] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      emb.fused embedding_update {
// CHECK-NEXT:        %[[LG1:.*]] = emb.lookup_grad @t1[%[[L]]#2, %[[O1]]] mean %[[DI]]#1
// CHECK-NEXT:        emb.accumulate_rows @t1[%[[L]]#2], %[[LG1]]
// CHECK-NEXT:        emb.coalesce_rows @t1
// CHECK-NEXT:        emb.update @t1
// CHECK-NEXT:        emb.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      emb.fused embedding_update {
// CHECK-NEXT:        %[[LG0:.*]] = emb.lookup_grad @t0[%[[L]]#0, %[[O0]]] sum %[[DI]]#0
// CHECK-NEXT:        emb.accumulate_rows @t0[%[[L]]#0], %[[LG0]]
// CHECK-NEXT:        emb.coalesce_rows @t0
// CHECK-NEXT:        emb.update @t0
// CHECK-NEXT:        emb.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      emb.fused dense_act_grad {
// CHECK-NEXT:        %[[DZ:.*]] = emb.activation_grad relu %[[DI]]#2, %[[BOT]] from_output
// CHECK-NEXT:        %[[G5:.*]] = emb.dense_grad_weight %[[X]], %[[DZ]]
// CHECK-NEXT:        %[[G6:.*]] = emb.bias_grad %[[DZ]]
// CHECK-NEXT:        emb.accumulate_grad @bb, %[[G6]]
// CHECK-NEXT:        emb.accumulate_grad @bw, %[[G5]]
// CHECK-NEXT:        emb.yield{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      return %[[LOSS]], %[[P]]
// The tables' coalesce and update have moved into the step.
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.update @tw1
// CHECK-NEXT:      emb.update @tb0
// CHECK-NEXT:      emb.update @tw0
// CHECK-NEXT:      emb.update @bb
// CHECK-NEXT:      emb.update @bw
// CHECK-NEXT:      return

// Packed: @t0 and @t1 are one batch, so one embedding_update holds both
// tables' backward and the batch's coalesce and update; @update keeps the
// pack's update only.
// PACK-LABEL: module @dlrm
// PACK:         emb.fused interaction_concat_grad
// PACK:         emb.fused embedding_update {
// PACK-NEXT:      %[[LG1:.*]] = emb.lookup_grad @t1[
// PACK-NEXT:      emb.accumulate_rows @t1[{{.*}}], %[[LG1]]
// PACK-NEXT:      %[[LG0:.*]] = emb.lookup_grad @t0[
// PACK-NEXT:      emb.accumulate_rows @t0[{{.*}}], %[[LG0]]
// PACK-NEXT:      emb.coalesce_rows @tables_d4
// PACK-NEXT:      emb.update @tables_d4
// PACK-NEXT:      emb.yield
// PACK-NEXT:    }
// PACK-NEXT:    emb.fused dense_act_grad {
// PACK:         func.func @update() {
// PACK-NEXT:      emb.update @dense_f32
// PACK-NEXT:      return

// PLAN-LABEL: "model": "dlrm"
// PLAN-NEXT:  "op": "dense_act", "outputs"
// PLAN-NEXT:  "op": "fused_lookup", "outputs"
// PLAN-NEXT:  "op": "interaction_concat", "outputs"
// PLAN-NEXT:  "op": "dense_act", "outputs"
// PLAN-NEXT:  "op": "dense", "outputs"
// PLAN-NEXT:  "op": "loss", "outputs"
// PLAN-NEXT:  "op": "loss_grad", "outputs"
// PLAN-NEXT:  "op": "dense_act_grad", "outputs"
// PLAN-NEXT:  "op": "dense_act_grad", "outputs"
// PLAN-NEXT:  "op": "interaction_concat_grad", "outputs"
// PLAN-NEXT:  "op": "embedding_update", "outputs"
// PLAN-NEXT:  "op": "embedding_update", "outputs"
// PLAN-NEXT:  "op": "dense_act_grad", "outputs"
// PLAN-NEXT:  "op": "update_param", "outputs"
// PLAN-NEXT:  "op": "update_param", "outputs"
// PLAN-NEXT:  "op": "update_param", "outputs"
// PLAN-NEXT:  "op": "update_param", "outputs"
// PLAN-NEXT:  "op": "update_param", "outputs"
// PLAN-NOT:   "op"

// PACKPLAN-LABEL: "model": "dlrm"
// PACKPLAN:       "op": "interaction_concat_grad", "outputs"
// PACKPLAN-NEXT:  "op": "embedding_update", "outputs"
// PACKPLAN-NEXT:  "op": "dense_act_grad", "outputs"
// PACKPLAN-NEXT:  "op": "update_packed", "outputs"
// PACKPLAN-NOT:   "op"
// Input: module @dlrm, chunk 1 of Inputs/fuse.mlir.

// -----

// Wide & deep: a wide table (dim 1) added to a deep tower (gelu MLP), then
// tanh and sigmoid.
// - lookup: two lookups of raw ids (no hash).
// - dense_act with gelu: gelu's gradient needs the pre-activation (no
//   from_output form), so the group yields it too.
// - elementwise: add + tanh forward (the sigmoid stays out: its output is
//   read by the loss and by the backward); the sigmoid and tanh gradients,
//   both from_output, backward.
// - The deep tower's last layer is not a dense_act_grad group: its output
//   gradient also feeds the wide table's lookup_grad.
// CHECK-LABEL: module @wide_deep
// CHECK:         %[[L:.*]]:2 = emb.fused lookup -> tensor<4x1xf32>, tensor<4x4xf32> {
// CHECK-NEXT:      %[[WD:.*]] = emb.lookup @wide[
// CHECK-NEXT:      %[[DE:.*]] = emb.lookup @deep[
// CHECK-NEXT:      emb.yield %[[WD]], %[[DE]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C:.*]] = emb.concat %{{.*}}, %[[L]]#1
// CHECK-NEXT:    %[[W0:.*]] = emb.get @w0
// CHECK-NEXT:    %[[B0:.*]] = emb.get @b0
// CHECK-NEXT:    %[[H:.*]]:2 = emb.fused dense_act -> tensor<4x8xf32>, tensor<4x8xf32> {
// CHECK-NEXT:      %[[Z:.*]] = emb.dense %[[C]], %[[W0]], %[[B0]]
// CHECK-NEXT:      %[[G:.*]] = emb.activation gelu %[[Z]]
// CHECK-NEXT:      emb.yield %[[Z]], %[[G]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[W1:.*]] = emb.get @w1
// CHECK-NEXT:    %[[DP:.*]] = emb.dense %[[H]]#1, %[[W1]]
// CHECK-NEXT:    %[[TANH:.*]] = emb.fused elementwise -> tensor<4x1xf32> {
// CHECK-NEXT:      %[[S:.*]] = emb.add %[[L]]#0, %[[DP]]
// CHECK-NEXT:      %[[T:.*]] = emb.activation tanh %[[S]]
// CHECK-NEXT:      emb.yield %[[T]] : tensor<4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[P:.*]] = emb.activation sigmoid %[[TANH]]
// CHECK-NEXT:    emb.loss mse %[[P]]
// CHECK-NEXT:    %[[DY:.*]] = emb.loss_grad mse %[[P]]
// CHECK-NEXT:    %[[DS:.*]] = emb.fused elementwise -> tensor<4x1xf32> {
// CHECK-NEXT:      %[[D1:.*]] = emb.activation_grad sigmoid %[[DY]], %[[P]] from_output
// CHECK-NEXT:      %[[D2:.*]] = emb.activation_grad tanh %[[D1]], %[[TANH]] from_output
// CHECK-NEXT:      emb.yield %[[D2]] : tensor<4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[DH:.*]] = emb.dense_grad_input %[[DS]], %[[W1]]
// CHECK-NEXT:    %[[DW1:.*]] = emb.dense_grad_weight %[[H]]#1, %[[DS]]
// CHECK-NEXT:    emb.accumulate_grad @w1, %[[DW1]]
// CHECK-NEXT:    %[[DC:.*]] = emb.fused dense_act_grad -> tensor<4x7xf32> {
// CHECK-NEXT:      %[[DZ:.*]] = emb.activation_grad gelu %[[DH]], %[[H]]#0 :
// CHECK-NEXT:      emb.dense_grad_input %[[DZ]], %[[W0]]
// CHECK-NEXT:      emb.dense_grad_weight %[[C]], %[[DZ]]
// CHECK-NEXT:      emb.bias_grad %[[DZ]]
// CHECK-NEXT:      emb.accumulate_grad @b0
// CHECK-NEXT:      emb.accumulate_grad @w0
// CHECK-NEXT:      emb.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[DE:.*]] = emb.slice %[[DC]][3]
// CHECK-NEXT:    emb.fused embedding_update {
// CHECK-NEXT:      emb.lookup_grad @deep[{{.*}}] sum %[[DE]]
// CHECK-NEXT:      emb.accumulate_rows @deep
// CHECK-NEXT:      emb.coalesce_rows @deep
// CHECK-NEXT:      emb.update @deep
// CHECK-NEXT:      emb.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    emb.fused embedding_update {
// CHECK-NEXT:      emb.lookup_grad @wide[{{.*}}] sum %[[DS]]
// CHECK-NEXT:      emb.accumulate_rows @wide
// CHECK-NEXT:      emb.coalesce_rows @wide
// CHECK-NEXT:      emb.update @wide
// CHECK-NEXT:      emb.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.update @w1
// CHECK-NEXT:      emb.update @b0
// CHECK-NEXT:      emb.update @w0
// CHECK-NEXT:      return

// The two tables differ in dim and optimizer: no batch, one group each.
// PACK-LABEL: module @wide_deep
// PACK-NOT:     emb.table_batch
// PACK-COUNT-2: emb.fused embedding_update
// PACK:         func.func @update() {
// PACK-NEXT:      emb.update @dense_f32
// PACK-NEXT:      return

// PLAN-LABEL: "model": "wide_deep"
// PLAN-NEXT:  "op": "fused_lookup", "outputs"
// PLAN-NEXT:  "op": "concat", "outputs"
// PLAN-NEXT:  "op": "dense_act", "outputs"
// PLAN-NEXT:  "op": "dense", "outputs"
// PLAN-NEXT:  "op": "elementwise", "outputs"
// PLAN-NEXT:  "op": "activation", "outputs"
// PLAN-NEXT:  "op": "loss", "outputs"
// PLAN-NEXT:  "op": "loss_grad", "outputs"
// PLAN-NEXT:  "op": "elementwise", "outputs"
// PLAN-NEXT:  "op": "dense_grad_input", "outputs"
// PLAN-NEXT:  "op": "dense_grad_weight", "outputs"
// PLAN-NEXT:  "op": "accumulate_grad", "outputs"
// PLAN-NEXT:  "op": "dense_act_grad", "outputs"
// PLAN-NEXT:  "op": "slice", "outputs"
// PLAN-NEXT:  "op": "embedding_update", "outputs"
// PLAN-NEXT:  "op": "embedding_update", "outputs"
// PLAN-NEXT:  "op": "update_param", "outputs"
// PLAN-NEXT:  "op": "update_param", "outputs"
// PLAN-NEXT:  "op": "update_param", "outputs"
// PLAN-NOT:   "op"

// PACKPLAN-LABEL: "model": "wide_deep"
// PACKPLAN:       "op": "embedding_update", "outputs"
// PACKPLAN-NEXT:  "op": "embedding_update", "outputs"
// PACKPLAN-NEXT:  "op": "update_packed", "outputs"
// PACKPLAN-NOT:   "op"

// Input: module @wide_deep, chunk 2 of Inputs/fuse.mlir.

// -----

// The DLRM-like model with grad_accumulation = 2: the update waits for every
// micro-batch, so no embedding_update group; the other groups form.
// CHECK-LABEL: module @accumulation
// CHECK:         emb.fused dense_act
// CHECK:         emb.fused lookup
// CHECK:         emb.fused interaction_concat
// CHECK:         emb.fused interaction_concat_grad
// CHECK-NOT:     embedding_update
// CHECK:         emb.accumulate_rows @t1
// CHECK:         emb.accumulate_rows @t0
// CHECK-NOT:     emb.coalesce_rows
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @t1
// CHECK-NEXT:      emb.coalesce_rows @t0
// CHECK:           emb.update @t1
// CHECK-NEXT:      emb.update @t0
// CHECK-NEXT:      return

// PACK-LABEL: module @accumulation
// PACK-NOT:     embedding_update
// PACK:         func.func @update() {
// PACK-NEXT:      emb.coalesce_rows @tables_d4
// PACK-NEXT:      emb.update @dense_f32
// PACK-NEXT:      emb.update @tables_d4
// PACK-NEXT:      return

// PLAN-LABEL: "model": "accumulation"
// PLAN-NOT:   "op": "embedding_update"
// PLAN:       "op": "interaction_concat_grad", "outputs"
// PLAN-NEXT:  "op": "lookup_grad", "outputs"
// PLAN-NEXT:  "op": "accumulate_rows", "outputs"
// PLAN-NEXT:  "op": "lookup_grad", "outputs"
// PLAN-NEXT:  "op": "accumulate_rows", "outputs"
// PLAN-NEXT:  "op": "dense_act_grad", "outputs"
// PLAN-NEXT:  "op": "coalesce_rows", "outputs"
// PLAN-NEXT:  "op": "coalesce_rows", "outputs"

// PACKPLAN-LABEL: "model": "accumulation"
// PACKPLAN-NOT:   "op": "embedding_update"
// PACKPLAN:       "op": "coalesce_rows", "outputs"
// PACKPLAN-NEXT:  "op": "update_packed", "outputs"
// PACKPLAN-NEXT:  "op": "update_table", "outputs"

// Input: module @accumulation, chunk 3 of Inputs/fuse.mlir.

// -----

// With grad_clip_norm > 0 the update needs the global norm of all gradients
// first: no embedding_update group.
// CHECK-LABEL: module @clipped
// CHECK:         emb.fused interaction_concat_grad
// CHECK-NOT:     embedding_update
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @t1
// CHECK-NEXT:      emb.coalesce_rows @t0
// CHECK-NEXT:      %[[S:.*]] = emb.clip_grad_norm
// CHECK:           emb.update @t1 scale %[[S]]
// CHECK-NEXT:      emb.update @t0 scale %[[S]]
// CHECK-NEXT:      return

// PACK-LABEL: module @clipped
// PACK-NOT:     embedding_update
// PACK:         func.func @update() {
// PACK-NEXT:      emb.coalesce_rows @tables_d4
// PACK-NEXT:      %[[S:.*]] = emb.clip_grad_norm
// PACK-NEXT:      emb.update @dense_f32 scale %[[S]]
// PACK-NEXT:      emb.update @tables_d4 scale %[[S]]
// PACK-NEXT:      return

// PLAN-LABEL: "model": "clipped"
// PLAN-NOT:   "op": "embedding_update"
// PLAN:       "op": "clip_grad_norm", "outputs"

// PACKPLAN-LABEL: "model": "clipped"
// PACKPLAN-NOT:   "op": "embedding_update"
// PACKPLAN:       "op": "clip_grad_norm", "outputs"

// Input: module @clipped, chunk 4 of Inputs/fuse.mlir.

// -----

// @t1 max-pooled: its backward reads the table the update would change, so
// @t1 keeps its coalesce and update in @update; @t0 (sum) is fused.
// CHECK-LABEL: module @max_pool
// CHECK:         emb.fused interaction_concat_grad
// CHECK:           emb.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[LG1:.*]] = emb.lookup_grad @t1[{{.*}}] max
// CHECK-NEXT:    emb.accumulate_rows @t1[{{.*}}], %[[LG1]]
// CHECK-NEXT:    emb.fused embedding_update {
// CHECK-NEXT:      emb.lookup_grad @t0[{{.*}}] sum
// CHECK-NEXT:      emb.accumulate_rows @t0
// CHECK-NEXT:      emb.coalesce_rows @t0
// CHECK-NEXT:      emb.update @t0
// CHECK-NEXT:      emb.yield
// CHECK-NEXT:    }
// CHECK-NOT:     embedding_update
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @t1
// CHECK:           emb.update @t1
// CHECK-NEXT:      return

// Batched with the max-pooled @t1, @t0 is not fused either: the batch takes
// one update.
// PACK-LABEL: module @max_pool
// PACK-NOT:     embedding_update
// PACK:         func.func @update() {
// PACK-NEXT:      emb.coalesce_rows @tables_d4
// PACK-NEXT:      emb.update @dense_f32
// PACK-NEXT:      emb.update @tables_d4
// PACK-NEXT:      return

// PLAN-LABEL: "model": "max_pool"
// PLAN:       "op": "interaction_concat_grad", "outputs"
// PLAN-NEXT:  "op": "lookup_grad", "outputs"
// PLAN-NEXT:  "op": "accumulate_rows", "outputs"
// PLAN-NEXT:  "op": "embedding_update", "outputs"
// PLAN-NEXT:  "op": "dense_act_grad", "outputs"
// PLAN-NEXT:  "op": "coalesce_rows", "outputs"
// PLAN-NOT:   "op": "embedding_update"

// PACKPLAN-LABEL: "model": "max_pool"
// PACKPLAN-NOT:   "op": "embedding_update"
// PACKPLAN:       "op": "coalesce_rows", "outputs"
// PACKPLAN-NEXT:  "op": "update_packed", "outputs"
// PACKPLAN-NEXT:  "op": "update_table", "outputs"
// PACKPLAN-NOT:   "op"

// Input: module @max_pool, chunk 5 of Inputs/fuse.mlir.
