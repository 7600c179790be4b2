// Round trip of the ops the optimisation passes create (EmbTransformOps.td):
// emb.param_pack (one and several buckets, f32 and bf16), emb.table_batch,
// emb.fused of every kind (with one, several and no results) with its
// emb.yield, and emb.activation_grad with `from_output`.
// RUN: emb-opt %s | emb-opt | FileCheck %s
// The generic form parses back too.
// RUN: emb-opt %s -mlir-print-op-generic | emb-opt | FileCheck %s

// CHECK:      emb.param @w : tensor<3x4xf32>
// CHECK-NEXT: emb.param @b : tensor<4xf32>
// CHECK-NEXT: emb.param @v : tensor<4x1xf32>
// CHECK-NEXT: emb.param @h : tensor<40xbf16>
// CHECK-NEXT: emb.param_pack @dense_f32 : f32[48] members [@v, @b, @w] offsets [0, 16, 32] buckets [0, 32, 48]
// CHECK-NEXT: emb.param_pack @one_bucket : bf16[64] members [@h] offsets [0] buckets [0, 64]
// CHECK-NEXT: emb.table @t0[10 x 4] f32
// CHECK-NEXT: emb.table @t1[20 x 4] f32
// CHECK-NEXT: emb.table @t2[30 x 4] f32
// CHECK-NEXT: emb.table_batch @tables_d4 [@t0, @t1]
// CHECK-NEXT: emb.table_batch @single [@t2]
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @b : tensor<4xf32> init<kind = zeros>
emb.param @v : tensor<4x1xf32> init<kind = xavier_uniform>
emb.param @h : tensor<40xbf16> init<kind = zeros>
emb.param_pack @dense_f32 : f32[48] members [@v, @b, @w] offsets [0, 16, 32] buckets [0, 32, 48]
// bf16: 32 elements are 64 bytes, so offset 0 only here.
emb.param_pack @one_bucket : bf16[64] members [@h] offsets [0] buckets [0, 64]
emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
emb.table @t1 [20 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
emb.table @t2 [30 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table_batch @tables_d4 [@t0, @t1]
emb.table_batch @single [@t2]

// lookup: hashes and lookups of two tables, two results.
// CHECK-LABEL: func.func @lookup
// CHECK-SAME:    (%[[R0:.*]]: tensor<?xi64>, %[[O0:.*]]: tensor<5xi64>, %[[R1:.*]]: tensor<?xi64>, %[[O1:.*]]: tensor<5xi64>)
// CHECK-NEXT:    %[[L:.*]]:2 = emb.fused lookup -> tensor<4x4xf32>, tensor<4x4xf32> {
// CHECK-NEXT:      %[[H0:.*]] = emb.hash %[[R0]] buckets(10) seed(0) : tensor<?xi64>
// CHECK-NEXT:      %[[E0:.*]] = emb.lookup @t0[%[[H0]], %[[O0]]] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
// CHECK-NEXT:      %[[H1:.*]] = emb.hash %[[R1]] buckets(20) seed(0) : tensor<?xi64>
// CHECK-NEXT:      %[[E1:.*]] = emb.lookup @t1[%[[H1]], %[[O1]]] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
// CHECK-NEXT:      emb.yield %[[E0]], %[[E1]] : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[L]]#0, %[[L]]#1
func.func @lookup(%r0: tensor<?xi64>, %o0: tensor<5xi64>, %r1: tensor<?xi64>, %o1: tensor<5xi64>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e:2 = emb.fused lookup -> tensor<4x4xf32>, tensor<4x4xf32> {
    %h0 = emb.hash %r0 buckets(10) seed(0) : tensor<?xi64>
    %e0 = emb.lookup @t0[%h0, %o0] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %h1 = emb.hash %r1 buckets(20) seed(0) : tensor<?xi64>
    %e1 = emb.lookup @t1[%h1, %o1] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    emb.yield %e0, %e1 : tensor<4x4xf32>, tensor<4x4xf32>
  }
  return %e#0, %e#1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// dense_act and its backward: the activation gradient reads the output
// (from_output); the backward group has no result of its own but the input
// gradient, and the parameter gradients are accumulated inside.
// CHECK-LABEL: func.func @dense
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>, %[[DY:.*]]: tensor<8x4xf32>)
// CHECK-NEXT:    %[[W:.*]] = emb.get @w
// CHECK-NEXT:    %[[B:.*]] = emb.get @b
// CHECK-NEXT:    %[[Y:.*]] = emb.fused dense_act -> tensor<8x4xf32> {
// CHECK-NEXT:      %[[Z:.*]] = emb.dense %[[X]], %[[W]], %[[B]] : tensor<8x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:      %[[A:.*]] = emb.activation relu %[[Z]] : tensor<8x4xf32>
// CHECK-NEXT:      emb.yield %[[A]] : tensor<8x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[DX:.*]] = emb.fused dense_act_grad -> tensor<8x3xf32> {
// CHECK-NEXT:      %[[DZ:.*]] = emb.activation_grad relu %[[DY]], %[[Y]] from_output : tensor<8x4xf32>
// CHECK-NEXT:      %[[GX:.*]] = emb.dense_grad_input %[[DZ]], %[[W]] : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
// CHECK-NEXT:      %[[GW:.*]] = emb.dense_grad_weight %[[X]], %[[DZ]] : tensor<8x3xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:      %[[GB:.*]] = emb.bias_grad %[[DZ]] : tensor<8x4xf32> -> tensor<4xf32>
// CHECK-NEXT:      emb.accumulate_grad @b, %[[GB]] : tensor<4xf32>
// CHECK-NEXT:      emb.accumulate_grad @w, %[[GW]] : tensor<3x4xf32>
// CHECK-NEXT:      emb.yield %[[GX]] : tensor<8x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]], %[[DX]]
func.func @dense(%x: tensor<8x3xf32>, %dy: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x3xf32>) {
  %w = emb.get @w : tensor<3x4xf32>
  %b = emb.get @b : tensor<4xf32>
  %y = emb.fused dense_act -> tensor<8x4xf32> {
    %z = emb.dense %x, %w, %b : tensor<8x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
    %a = emb.activation relu %z : tensor<8x4xf32>
    emb.yield %a : tensor<8x4xf32>
  }
  %dx = emb.fused dense_act_grad -> tensor<8x3xf32> {
    %dz = emb.activation_grad relu %dy, %y from_output : tensor<8x4xf32>
    %gx = emb.dense_grad_input %dz, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
    %gw = emb.dense_grad_weight %x, %dz : tensor<8x3xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
    %gb = emb.bias_grad %dz : tensor<8x4xf32> -> tensor<4xf32>
    emb.accumulate_grad @b, %gb : tensor<4xf32>
    emb.accumulate_grad @w, %gw : tensor<3x4xf32>
    emb.yield %gx : tensor<8x3xf32>
  }
  return %y, %dx : tensor<8x4xf32>, tensor<8x3xf32>
}

// A group without results: its yield has no operands (and prints none).
// CHECK-LABEL: func.func @no_results
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>, %[[DZ:.*]]: tensor<8x4xf32>)
// CHECK-NEXT:    emb.fused dense_act_grad {
// CHECK-NEXT:      %[[GW:.*]] = emb.dense_grad_weight %[[X]], %[[DZ]]
// CHECK-NEXT:      emb.accumulate_grad @w, %[[GW]] : tensor<3x4xf32>
// CHECK-NEXT:      emb.yield{{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:    return{{$}}
func.func @no_results(%x: tensor<8x3xf32>, %dz: tensor<8x4xf32>) {
  emb.fused dense_act_grad {
    %gw = emb.dense_grad_weight %x, %dz : tensor<8x3xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
    emb.accumulate_grad @w, %gw : tensor<3x4xf32>
    emb.yield
  }
  return
}

// Every activation that has a from_output derivative, alone and in an
// elementwise chain; gelu keeps reading the input.
// CHECK-LABEL: func.func @from_output
// CHECK-SAME:    (%[[DY:.*]]: tensor<8x4xf32>, %[[Y:.*]]: tensor<8x4xf32>, %[[A:.*]]: tensor<8x4xf32>)
// CHECK-NEXT:    %[[R:.*]] = emb.activation_grad relu %[[DY]], %[[Y]] from_output : tensor<8x4xf32>
// CHECK-NEXT:    %[[S:.*]] = emb.activation_grad sigmoid %[[R]], %[[Y]] from_output : tensor<8x4xf32>
// CHECK-NEXT:    %[[T:.*]] = emb.activation_grad tanh %[[S]], %[[Y]] from_output : tensor<8x4xf32>
// CHECK-NEXT:    %[[G:.*]] = emb.activation_grad gelu %[[T]], %[[Y]] : tensor<8x4xf32>
// CHECK-NEXT:    %[[E:.*]] = emb.fused elementwise -> tensor<8x4xf32> {
// CHECK-NEXT:      %[[SUM:.*]] = emb.add %[[G]], %[[A]] : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:      %[[ACT:.*]] = emb.activation sigmoid %[[SUM]] : tensor<8x4xf32>
// CHECK-NEXT:      %[[BACK:.*]] = emb.activation_grad sigmoid %[[DY]], %[[ACT]] from_output : tensor<8x4xf32>
// CHECK-NEXT:      emb.yield %[[BACK]] : tensor<8x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[E]]
func.func @from_output(%dy: tensor<8x4xf32>, %y: tensor<8x4xf32>, %a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = emb.activation_grad relu %dy, %y from_output : tensor<8x4xf32>
  %1 = emb.activation_grad sigmoid %0, %y from_output : tensor<8x4xf32>
  %2 = emb.activation_grad tanh %1, %y from_output : tensor<8x4xf32>
  %3 = emb.activation_grad gelu %2, %y : tensor<8x4xf32>
  %4 = emb.fused elementwise -> tensor<8x4xf32> {
    %s = emb.add %3, %a : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
    %t = emb.activation sigmoid %s : tensor<8x4xf32>
    %u = emb.activation_grad sigmoid %dy, %t from_output : tensor<8x4xf32>
    emb.yield %u : tensor<8x4xf32>
  }
  return %4 : tensor<8x4xf32>
}

// The interaction written into its concatenation, and the backward of both:
// slices of the concat's gradient, the interaction gradient and the add of
// the copied input's two gradients.
// CHECK-LABEL: func.func @interaction
// CHECK-SAME:    (%[[X:.*]]: tensor<8x4xf32>, %[[E:.*]]: tensor<8x4xf32>, %[[DC:.*]]: tensor<8x5xf32>)
// CHECK-NEXT:    %[[C:.*]] = emb.fused interaction_concat -> tensor<8x5xf32> {
// CHECK-NEXT:      %[[I:.*]] = emb.interaction %[[X]], %[[E]] : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      %[[CAT:.*]] = emb.concat %[[X]], %[[I]] : tensor<8x4xf32>, tensor<8x1xf32> -> tensor<8x5xf32>
// CHECK-NEXT:      emb.yield %[[CAT]] : tensor<8x5xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[G:.*]]:2 = emb.fused interaction_concat_grad -> tensor<8x4xf32>, tensor<8x4xf32> {
// CHECK-NEXT:      %[[S0:.*]] = emb.slice %[[DC]][0] : tensor<8x5xf32> -> tensor<8x4xf32>
// CHECK-NEXT:      %[[S1:.*]] = emb.slice %[[DC]][4] : tensor<8x5xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      %[[IG:.*]]:2 = emb.interaction_grad %[[S1]], %[[X]], %[[E]] : tensor<8x1xf32>, tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>, tensor<8x4xf32>
// CHECK-NEXT:      %[[DX:.*]] = emb.add %[[S0]], %[[IG]]#0 : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:      emb.yield %[[DX]], %[[IG]]#1 : tensor<8x4xf32>, tensor<8x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[C]], %[[G]]#0, %[[G]]#1
func.func @interaction(%x: tensor<8x4xf32>, %e: tensor<8x4xf32>, %dc: tensor<8x5xf32>)
    -> (tensor<8x5xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %c = emb.fused interaction_concat -> tensor<8x5xf32> {
    %i = emb.interaction %x, %e : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x1xf32>
    %cat = emb.concat %x, %i : tensor<8x4xf32>, tensor<8x1xf32> -> tensor<8x5xf32>
    emb.yield %cat : tensor<8x5xf32>
  }
  %g:2 = emb.fused interaction_concat_grad -> tensor<8x4xf32>, tensor<8x4xf32> {
    %s0 = emb.slice %dc[0] : tensor<8x5xf32> -> tensor<8x4xf32>
    %s1 = emb.slice %dc[4] : tensor<8x5xf32> -> tensor<8x1xf32>
    %ig:2 = emb.interaction_grad %s1, %x, %e
        : tensor<8x1xf32>, tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>, tensor<8x4xf32>
    %dx = emb.add %s0, %ig#0 : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
    emb.yield %dx, %ig#1 : tensor<8x4xf32>, tensor<8x4xf32>
  }
  return %c, %g#0, %g#1 : tensor<8x5xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// A table's sparse backward with its coalesce and optimizer update, on a
// single table and on a table batch (the batch is named by coalesce and
// update, each member by its rows).
// CHECK-LABEL: func.func @embedding_update
// CHECK-SAME:    (%[[IDS:.*]]: tensor<?xi64>, %[[OFFS:.*]]: tensor<5xi64>, %[[DY:.*]]: tensor<4x4xf32>)
// CHECK-NEXT:    emb.fused embedding_update {
// CHECK-NEXT:      %[[G:.*]] = emb.lookup_grad @t2[%[[IDS]], %[[OFFS]]] sum %[[DY]] : tensor<?xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:      emb.accumulate_rows @t2[%[[IDS]]], %[[G]] : tensor<?xi64>, tensor<?x4xf32>
// CHECK-NEXT:      emb.coalesce_rows @t2
// CHECK-NEXT:      emb.update @t2
// CHECK-NEXT:      emb.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    emb.fused embedding_update {
// CHECK-NEXT:      %[[G1:.*]] = emb.lookup_grad @t1[%[[IDS]], %[[OFFS]]] mean %[[DY]]
// CHECK-NEXT:      emb.accumulate_rows @t1[%[[IDS]]], %[[G1]]
// CHECK-NEXT:      %[[G0:.*]] = emb.lookup_grad @t0[%[[IDS]], %[[OFFS]]] sum %[[DY]]
// CHECK-NEXT:      emb.accumulate_rows @t0[%[[IDS]]], %[[G0]]
// CHECK-NEXT:      emb.coalesce_rows @tables_d4
// CHECK-NEXT:      emb.update @tables_d4
// CHECK-NEXT:      emb.yield
// CHECK-NEXT:    }
func.func @embedding_update(%ids: tensor<?xi64>, %offs: tensor<5xi64>, %dy: tensor<4x4xf32>) {
  emb.fused embedding_update {
    %g = emb.lookup_grad @t2[%ids, %offs] sum %dy : tensor<?xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<?x4xf32>
    emb.accumulate_rows @t2[%ids], %g : tensor<?xi64>, tensor<?x4xf32>
    emb.coalesce_rows @t2
    emb.update @t2
    emb.yield
  }
  emb.fused embedding_update {
    %g1 = emb.lookup_grad @t1[%ids, %offs] mean %dy : tensor<?xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<?x4xf32>
    emb.accumulate_rows @t1[%ids], %g1 : tensor<?xi64>, tensor<?x4xf32>
    %g0 = emb.lookup_grad @t0[%ids, %offs] sum %dy : tensor<?xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<?x4xf32>
    emb.accumulate_rows @t0[%ids], %g0 : tensor<?xi64>, tensor<?x4xf32>
    emb.coalesce_rows @tables_d4
    emb.update @tables_d4
    emb.yield
  }
  return
}

// Packs and batches are updated as a whole (with the clip scale).
// CHECK-LABEL: func.func @update
// CHECK-NEXT:    %[[S:.*]] = emb.clip_grad_norm max_norm(1.000000e+00) : tensor<f32>
// CHECK-NEXT:    emb.update @dense_f32 scale %[[S]] : tensor<f32>
// CHECK-NEXT:    emb.update @one_bucket
// CHECK-NEXT:    return
func.func @update() {
  %s = emb.clip_grad_norm max_norm(1.0) : tensor<f32>
  emb.update @dense_f32 scale %s : tensor<f32>
  emb.update @one_bucket
  return
}
