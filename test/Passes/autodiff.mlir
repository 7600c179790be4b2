// -emb-autodiff: the backward each op's gradient rule builds, the summing of
// gradients of values used more than once, and the optimizer step @update.
// RUN: emb-opt %s -split-input-file -emb-autodiff | FileCheck %s
// Re-parsing the result is checked in autodiff-reparse.test.

// A dense + relu MLP with biases and MSE: the gradients of the parameters
// only. The first layer reads data, so it gets no emb.dense_grad_input. The
// argument attributes of @forward stay on @train_step.
// CHECK-LABEL: module @mlp
// CHECK-NOT:     func.func @forward
// CHECK:         func.func @train_step(%[[X:.*]]: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"}, %[[Y:.*]]: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>)
// CHECK-NEXT:      %[[W0:.*]] = emb.get @w0
// CHECK-NEXT:      %[[B0:.*]] = emb.get @b0
// CHECK-NEXT:      %[[H:.*]] = emb.dense %[[X]], %[[W0]], %[[B0]]
// CHECK-NEXT:      %[[R:.*]] = emb.activation relu %[[H]]
// CHECK-NEXT:      %[[W1:.*]] = emb.get @w1
// CHECK-NEXT:      %[[B1:.*]] = emb.get @b1
// CHECK-NEXT:      %[[P:.*]] = emb.dense %[[R]], %[[W1]], %[[B1]]
// CHECK-NEXT:      %[[L:.*]] = emb.loss mse %[[P]], %[[Y]]
// CHECK-NEXT:      %[[DP:.*]] = emb.loss_grad mse %[[P]], %[[Y]] : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %[[DR:.*]] = emb.dense_grad_input %[[DP]], %[[W1]] : tensor<4x1xf32>, tensor<8x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %[[DW1:.*]] = emb.dense_grad_weight %[[R]], %[[DP]] : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      %[[DB1:.*]] = emb.bias_grad %[[DP]] : tensor<4x1xf32> -> tensor<1xf32>
// CHECK-NEXT:      emb.accumulate_grad @b1, %[[DB1]] : tensor<1xf32>
// CHECK-NEXT:      emb.accumulate_grad @w1, %[[DW1]] : tensor<8x1xf32>
// CHECK-NEXT:      %[[DH:.*]] = emb.activation_grad relu %[[DR]], %[[H]] : tensor<4x8xf32>
// CHECK-NEXT:      %[[DW0:.*]] = emb.dense_grad_weight %[[X]], %[[DH]] : tensor<4x3xf32>, tensor<4x8xf32> -> tensor<3x8xf32>
// CHECK-NEXT:      %[[DB0:.*]] = emb.bias_grad %[[DH]] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK-NEXT:      emb.accumulate_grad @b0, %[[DB0]] : tensor<8xf32>
// CHECK-NEXT:      emb.accumulate_grad @w0, %[[DW0]] : tensor<3x8xf32>
// CHECK-NEXT:      return %[[L]], %[[P]] : tensor<f32>, tensor<4x1xf32>
// CHECK-NEXT:    }
// No table, no clipping: one update per parameter, in the order their
// gradients appear in @train_step.
// CHECK-NEXT:    func.func @update() {
// CHECK-NEXT:      emb.update @b1
// CHECK-NEXT:      emb.update @w1
// CHECK-NEXT:      emb.update @b0
// CHECK-NEXT:      emb.update @w0
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:  }

module @mlp attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w0 : tensor<3x8xf32> init<kind = xavier_uniform>
  emb.param @b0 : tensor<8xf32> init<kind = zeros>
  emb.param @w1 : tensor<8x1xf32> init<kind = xavier_uniform>
  emb.param @b1 : tensor<1xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x3xf32> {emb.feature = "x", emb.role = "dense"},
                     %y: tensor<4x1xf32> {emb.feature = "y", emb.role = "label"}) -> (tensor<f32>, tensor<4x1xf32>) {
    %w0 = emb.get @w0 : tensor<3x8xf32>
    %b0 = emb.get @b0 : tensor<8xf32>
    %h = emb.dense %x, %w0, %b0 : tensor<4x3xf32>, tensor<3x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %r = emb.activation relu %h : tensor<4x8xf32>
    %w1 = emb.get @w1 : tensor<8x1xf32>
    %b1 = emb.get @b1 : tensor<1xf32>
    %p = emb.dense %r, %w1, %b1 : tensor<4x8xf32>, tensor<8x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// A value used twice (%h feeds two dense layers): its two gradients are
// summed with emb.add before they flow on. emb.add passes its gradient to
// each input unchanged.
// CHECK-LABEL: module @used_twice
// CHECK:         %[[H:.*]] = emb.dense %[[X:.*]], %[[W:.*]] :
// CHECK-NEXT:    %[[WA:.*]] = emb.get @wa
// CHECK-NEXT:    emb.dense %[[H]], %[[WA]]
// CHECK-NEXT:    %[[WB:.*]] = emb.get @wb
// CHECK-NEXT:    emb.dense %[[H]], %[[WB]]
// CHECK-NEXT:    %[[S:.*]] = emb.add
// CHECK-NEXT:    emb.loss bce_with_logits
// CHECK-NEXT:    %[[DS:.*]] = emb.loss_grad bce_with_logits %[[S]]
// CHECK-NEXT:    %[[DHB:.*]] = emb.dense_grad_input %[[DS]], %[[WB]]
// CHECK-NEXT:    %[[DWB:.*]] = emb.dense_grad_weight %[[H]], %[[DS]]
// CHECK-NEXT:    emb.accumulate_grad @wb, %[[DWB]]
// CHECK-NEXT:    %[[DHA:.*]] = emb.dense_grad_input %[[DS]], %[[WA]]
// CHECK-NEXT:    %[[DWA:.*]] = emb.dense_grad_weight %[[H]], %[[DS]]
// CHECK-NEXT:    %[[DH:.*]] = emb.add %[[DHB]], %[[DHA]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    emb.accumulate_grad @wa, %[[DWA]]
// CHECK-NEXT:    %[[DW:.*]] = emb.dense_grad_weight %[[X]], %[[DH]] : tensor<4x3xf32>, tensor<4x8xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    emb.accumulate_grad @w, %[[DW]]
// CHECK-NEXT:    return
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.update @wb
// CHECK-NEXT:      emb.update @wa
// CHECK-NEXT:      emb.update @w
// CHECK-NEXT:      return

module @used_twice attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x8xf32> init<kind = xavier_uniform>
  emb.param @wa : tensor<8x1xf32> init<kind = xavier_uniform>
  emb.param @wb : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x8xf32>
    %h = emb.dense %x, %w : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
    %wa = emb.get @wa : tensor<8x1xf32>
    %a = emb.dense %h, %wa : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %wb = emb.get @wb : tensor<8x1xf32>
    %b = emb.dense %h, %wb : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %s = emb.add %a, %b : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %s, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %s : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// A 1-D bias read once and used twice (by the dense layer and as the bias of
// emb.add) cannot be summed with emb.add, which needs B x N tensors: each use
// accumulates its own gradient into the parameter. The 2-D %h, used twice,
// is summed.
// CHECK-LABEL: module @bias_twice
// CHECK:         %[[B:.*]] = emb.get @b : tensor<2xf32>
// CHECK-NEXT:    %[[H:.*]] = emb.dense %[[X:.*]], %{{.*}}, %[[B]]
// CHECK-NEXT:    %[[G:.*]] = emb.add %[[H]] bias %[[B]]
// CHECK-NEXT:    %[[D:.*]] = emb.dot %[[G]], %[[H]]
// CHECK-NEXT:    emb.loss mse
// CHECK-NEXT:    %[[DD:.*]] = emb.loss_grad mse %[[D]]
// CHECK-NEXT:    %[[DG:.*]], %[[DH1:.*]] = emb.dot_grad %[[DD]], %[[G]], %[[H]]
// CHECK-NEXT:    %[[DB1:.*]] = emb.bias_grad %[[DG]] : tensor<4x2xf32> -> tensor<2xf32>
// CHECK-NEXT:    %[[DH:.*]] = emb.add %[[DH1]], %[[DG]] : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK-NEXT:    %[[DW:.*]] = emb.dense_grad_weight %[[X]], %[[DH]]
// CHECK-NEXT:    %[[DB2:.*]] = emb.bias_grad %[[DH]] : tensor<4x2xf32> -> tensor<2xf32>
// CHECK-NEXT:    emb.accumulate_grad @b, %[[DB1]] : tensor<2xf32>
// CHECK-NEXT:    emb.accumulate_grad @b, %[[DB2]] : tensor<2xf32>
// CHECK-NEXT:    emb.accumulate_grad @w, %[[DW]] : tensor<3x2xf32>
// CHECK-NEXT:    return
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.update @b
// CHECK-NEXT:      emb.update @w
// CHECK-NEXT:      return

module @bias_twice attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x2xf32> init<kind = xavier_uniform>
  emb.param @b : tensor<2xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %w = emb.get @w : tensor<3x2xf32>
    %b = emb.get @b : tensor<2xf32>
    %h = emb.dense %x, %w, %b : tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
    %g = emb.add %h bias %b : tensor<4x2xf32> bias tensor<2xf32> -> tensor<4x2xf32>
    %d = emb.dot %g, %h : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %d, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %d : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// concat: one emb.slice per trainable input at its column offset (the 8-wide
// lookup at 0, the 4-wide one at 8 + 3 = 11); the dense input in between is
// data and gets none.
// CHECK-LABEL: module @concat
// CHECK:         %[[A:.*]] = emb.lookup @ta[%[[AIDS:.*]], %[[AOFFS:.*]]] sum
// CHECK-NEXT:    %[[C:.*]] = emb.lookup @tc[%[[CIDS:.*]], %[[COFFS:.*]]] mean
// CHECK-NEXT:    %[[CAT:.*]] = emb.concat %[[A]], %{{.*}}, %[[C]]
// CHECK-NEXT:    %[[W:.*]] = emb.get @w
// CHECK-NEXT:    %[[P:.*]] = emb.dense %[[CAT]], %[[W]]
// CHECK-NEXT:    emb.loss bce_with_logits
// CHECK-NEXT:    %[[DP:.*]] = emb.loss_grad bce_with_logits %[[P]]
// CHECK-NEXT:    %[[DCAT:.*]] = emb.dense_grad_input %[[DP]], %[[W]] : tensor<4x1xf32>, tensor<15x1xf32> -> tensor<4x15xf32>
// CHECK-NEXT:    %[[DW:.*]] = emb.dense_grad_weight %[[CAT]], %[[DP]]
// CHECK-NEXT:    emb.accumulate_grad @w, %[[DW]]
// CHECK-NEXT:    %[[DA:.*]] = emb.slice %[[DCAT]][0] : tensor<4x15xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[DC:.*]] = emb.slice %[[DCAT]][11] : tensor<4x15xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %[[RC:.*]] = emb.lookup_grad @tc[%[[CIDS]], %[[COFFS]]] mean %[[DC]]
// CHECK-NEXT:    emb.accumulate_rows @tc[%[[CIDS]]], %[[RC]]
// CHECK-NEXT:    %[[RA:.*]] = emb.lookup_grad @ta[%[[AIDS]], %[[AOFFS]]] sum %[[DA]]
// CHECK-NEXT:    emb.accumulate_rows @ta[%[[AIDS]]], %[[RA]]
// CHECK-NEXT:    return
// Tables are coalesced first, then parameters and tables are updated.
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.coalesce_rows @tc
// CHECK-NEXT:      emb.coalesce_rows @ta
// CHECK-NEXT:      emb.update @w
// CHECK-NEXT:      emb.update @tc
// CHECK-NEXT:      emb.update @ta
// CHECK-NEXT:      return

module @concat attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.001>>} {
  emb.table @ta [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @tc [50 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w : tensor<15x1xf32> init<kind = xavier_uniform>
  func.func @forward(%aids: tensor<?xi64>, %aoffs: tensor<5xi64>, %x: tensor<4x3xf32>,
                     %cids: tensor<?xi64>, %coffs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %a = emb.lookup @ta[%aids, %aoffs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %c = emb.lookup @tc[%cids, %coffs] mean : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %cat = emb.concat %a, %x, %c : tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x4xf32> -> tensor<4x15xf32>
    %w = emb.get @w : tensor<15x1xf32>
    %p = emb.dense %cat, %w : tensor<4x15xf32>, tensor<15x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// A lookup's gradient stays sparse: emb.lookup_grad (one row per id, with
// the per-id weights when the lookup has them) and emb.accumulate_rows, never
// a dense gradient of the table.
// CHECK-LABEL: module @lookup
// CHECK-NOT:     emb.accumulate_grad
// CHECK:         %[[U:.*]] = emb.lookup @users[%[[UIDS:.*]], %[[UOFFS:.*]]] sum
// CHECK-NEXT:    %[[I:.*]] = emb.lookup @items[%[[IIDS:.*]], %[[IOFFS:.*]] weights %[[IW:.*]]] mean
// CHECK-NEXT:    %[[S:.*]] = emb.dot %[[U]], %[[I]]
// CHECK-NEXT:    emb.loss mse %[[S]]
// CHECK-NEXT:    %[[DS:.*]] = emb.loss_grad mse %[[S]]
// CHECK-NEXT:    %[[DU:.*]], %[[DI:.*]] = emb.dot_grad %[[DS]], %[[U]], %[[I]] : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    %[[RI:.*]] = emb.lookup_grad @items[%[[IIDS]], %[[IOFFS]] weights %[[IW]]] mean %[[DI]] : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32>, tensor<?xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    emb.accumulate_rows @items[%[[IIDS]]], %[[RI]] : tensor<?xi64>, tensor<?x8xf32>
// CHECK-NEXT:    %[[RU:.*]] = emb.lookup_grad @users[%[[UIDS]], %[[UOFFS]]] sum %[[DU]] : tensor<?xi64>, tensor<5xi64>, tensor<4x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    emb.accumulate_rows @users[%[[UIDS]]], %[[RU]] : tensor<?xi64>, tensor<?x8xf32>
// CHECK-NEXT:    return
// CHECK-NOT:     emb.accumulate_grad
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.coalesce_rows @items
// CHECK-NEXT:      emb.coalesce_rows @users
// CHECK-NEXT:      emb.update @items
// CHECK-NEXT:      emb.update @users
// CHECK-NEXT:      return

module @lookup attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @users [100 x 8] f32 init<kind = zeros> optimizer<kind = adagrad>
  emb.table @items [50 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%uids: tensor<?xi64>, %uoffs: tensor<5xi64>, %iids: tensor<?xi64>, %ioffs: tensor<5xi64>,
                     %iw: tensor<?xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %u = emb.lookup @users[%uids, %uoffs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %i = emb.lookup @items[%iids, %ioffs weights %iw] mean : tensor<?xi64>, tensor<5xi64>, tensor<?xf32> -> tensor<4x8xf32>
    %s = emb.dot %u, %i : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %l = emb.loss mse %s, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %s : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Skip-gram: neg_sampling differentiates both its operands (two results);
// the gathered negatives (B x K x D) get their rows with 2-D ids.
// CHECK-LABEL: module @neg_sampling
// CHECK:         %[[C:.*]] = emb.lookup @in[%[[CIDS:.*]], %[[COFFS:.*]]] sum
// CHECK-NEXT:    %[[X:.*]] = emb.lookup @out[%[[XIDS:.*]], %[[XOFFS:.*]]] sum
// CHECK-NEXT:    %[[N:.*]] = emb.gather @out[%[[NEG:.*]]] : tensor<4x3xi64> -> tensor<4x3x8xf32>
// CHECK-NEXT:    %[[POS:.*]] = emb.dot %[[C]], %[[X]]
// CHECK-NEXT:    %[[NS:.*]] = emb.dot %[[C]], %[[N]]
// CHECK-NEXT:    emb.loss neg_sampling %[[POS]], %[[NS]]
// CHECK-NEXT:    %[[G:.*]]:2 = emb.loss_grad neg_sampling %[[POS]], %[[NS]] : tensor<4x1xf32>, tensor<4x3xf32> -> tensor<4x1xf32>, tensor<4x3xf32>
// CHECK-NEXT:    %[[DC1:.*]], %[[DN:.*]] = emb.dot_grad %[[G]]#1, %[[C]], %[[N]] : tensor<4x3xf32>, tensor<4x8xf32>, tensor<4x3x8xf32>
// CHECK-NEXT:    %[[DC2:.*]], %[[DX:.*]] = emb.dot_grad %[[G]]#0, %[[C]], %[[X]] : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    %[[DC:.*]] = emb.add %[[DC1]], %[[DC2]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    emb.accumulate_rows @out[%[[NEG]]], %[[DN]] : tensor<4x3xi64>, tensor<4x3x8xf32>
// CHECK-NEXT:    %[[RX:.*]] = emb.lookup_grad @out[%[[XIDS]], %[[XOFFS]]] sum %[[DX]]
// CHECK-NEXT:    emb.accumulate_rows @out[%[[XIDS]]], %[[RX]] : tensor<?xi64>, tensor<?x8xf32>
// CHECK-NEXT:    %[[RC:.*]] = emb.lookup_grad @in[%[[CIDS]], %[[COFFS]]] sum %[[DC]]
// CHECK-NEXT:    emb.accumulate_rows @in[%[[CIDS]]], %[[RC]] : tensor<?xi64>, tensor<?x8xf32>
// CHECK-NEXT:    return
// Each table is coalesced and updated once, however many times it is read.
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.coalesce_rows @out
// CHECK-NEXT:      emb.coalesce_rows @in
// CHECK-NEXT:      emb.update @out
// CHECK-NEXT:      emb.update @in
// CHECK-NEXT:      return

module @neg_sampling attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @in [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @out [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%cids: tensor<?xi64>, %coffs: tensor<5xi64>, %xids: tensor<?xi64>, %xoffs: tensor<5xi64>,
                     %neg: tensor<4x3xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %c = emb.lookup @in[%cids, %coffs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %x = emb.lookup @out[%xids, %xoffs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %n = emb.gather @out[%neg] : tensor<4x3xi64> -> tensor<4x3x8xf32>
    %pos = emb.dot %c, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %ns = emb.dot %c, %n : tensor<4x8xf32>, tensor<4x3x8xf32> -> tensor<4x3xf32>
    %l = emb.loss neg_sampling %pos, %ns : tensor<4x1xf32>, tensor<4x3xf32> -> tensor<f32>
    return %l, %pos : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Gathered negatives used by two dots: emb.add sums their B x K x D
// gradients (it sums any static float tensor of rank 2 or more, row by row),
// so the table gets one set of rows.
// CHECK-LABEL: module @gather_twice
// CHECK:         %[[N:.*]] = emb.gather @out[%[[NEG:.*]]] : tensor<4x3xi64> -> tensor<4x3x8xf32>
// CHECK:         %[[G:.*]]:2 = emb.loss_grad neg_sampling
// CHECK-NEXT:    %{{.*}}, %[[DN1:.*]] = emb.dot_grad %[[G]]#1, %{{.*}}, %[[N]]
// CHECK-NEXT:    %{{.*}}, %[[DN2:.*]] = emb.dot_grad %[[G]]#1, %{{.*}}, %[[N]]
// CHECK-NEXT:    %[[DN:.*]] = emb.add %[[DN1]], %[[DN2]] : tensor<4x3x8xf32>, tensor<4x3x8xf32> -> tensor<4x3x8xf32>
// CHECK:         emb.accumulate_rows @out[%[[NEG]]], %[[DN]] : tensor<4x3xi64>, tensor<4x3x8xf32>
// CHECK-NOT:     emb.accumulate_rows @out[%[[NEG]]]
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.coalesce_rows @out
// CHECK-NEXT:      emb.coalesce_rows @in
// CHECK-NEXT:      emb.update @out
// CHECK-NEXT:      emb.update @in
// CHECK-NEXT:      return

module @gather_twice attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @in [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @out [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%cids: tensor<?xi64>, %coffs: tensor<5xi64>, %dids: tensor<?xi64>, %doffs: tensor<5xi64>,
                     %neg: tensor<4x3xi64>) -> (tensor<f32>, tensor<4x1xf32>) {
    %c = emb.lookup @in[%cids, %coffs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %d = emb.lookup @in[%dids, %doffs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %n = emb.gather @out[%neg] : tensor<4x3xi64> -> tensor<4x3x8xf32>
    %pos = emb.dot %c, %d : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
    %n1 = emb.dot %c, %n : tensor<4x8xf32>, tensor<4x3x8xf32> -> tensor<4x3xf32>
    %n2 = emb.dot %d, %n : tensor<4x8xf32>, tensor<4x3x8xf32> -> tensor<4x3xf32>
    %ns = emb.add %n1, %n2 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
    %l = emb.loss neg_sampling %pos, %ns : tensor<4x1xf32>, tensor<4x3xf32> -> tensor<f32>
    return %l, %pos : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Hashed ids: the gradient rows go to the hashed rows; emb.hash itself has no
// gradient.
// CHECK-LABEL: module @hash
// CHECK:         %[[H:.*]] = emb.hash %[[IDS:.*]] buckets(100) seed(7)
// CHECK-NEXT:    %[[E:.*]] = emb.lookup @t[%[[H]], %[[OFFS:.*]]] max
// CHECK-NEXT:    emb.loss bce_with_logits %[[E]]
// CHECK-NEXT:    %[[DE:.*]] = emb.loss_grad bce_with_logits %[[E]]
// CHECK-NEXT:    %[[R:.*]] = emb.lookup_grad @t[%[[H]], %[[OFFS]]] max %[[DE]] : tensor<?xi64>, tensor<5xi64>, tensor<4x1xf32> -> tensor<?x1xf32>
// CHECK-NEXT:    emb.accumulate_rows @t[%[[H]]], %[[R]] : tensor<?xi64>, tensor<?x1xf32>
// CHECK-NEXT:    return

module @hash attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [100 x 1] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @forward(%ids: tensor<?xi64>, %offs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %h = emb.hash %ids buckets(100) seed(7) : tensor<?xi64>
    %e = emb.lookup @t[%h, %offs] max : tensor<?xi64>, tensor<5xi64> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %e, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %e : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// DLRM: the interaction's gradient for all three inputs; the bottom MLP output
// is also the first block of the concat, so its two gradients are summed.
// CHECK-LABEL: module @interaction
// CHECK:         %[[B:.*]] = emb.dense %[[X:.*]], %[[BW:.*]] :
// CHECK-NEXT:    %[[E0:.*]] = emb.lookup @t0[%[[IDS0:.*]], %[[OFFS0:.*]]] sum
// CHECK-NEXT:    %[[E1:.*]] = emb.lookup @t1[%[[IDS1:.*]], %[[OFFS1:.*]]] sum
// CHECK-NEXT:    %[[Z:.*]] = emb.interaction %[[B]], %[[E0]], %[[E1]]
// CHECK-NEXT:    %[[CAT:.*]] = emb.concat %[[B]], %[[Z]]
// CHECK-NEXT:    %[[TW:.*]] = emb.get @tw
// CHECK-NEXT:    %[[P:.*]] = emb.dense %[[CAT]], %[[TW]]
// CHECK-NEXT:    emb.loss
// CHECK-NEXT:    %[[DP:.*]] = emb.loss_grad bce_with_logits %[[P]]
// CHECK-NEXT:    %[[DCAT:.*]] = emb.dense_grad_input %[[DP]], %[[TW]]
// CHECK-NEXT:    %[[DTW:.*]] = emb.dense_grad_weight %[[CAT]], %[[DP]]
// CHECK-NEXT:    emb.accumulate_grad @tw, %[[DTW]]
// CHECK-NEXT:    %[[DB1:.*]] = emb.slice %[[DCAT]][0] : tensor<4x11xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[DZ:.*]] = emb.slice %[[DCAT]][8] : tensor<4x11xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[DI:.*]]:3 = emb.interaction_grad %[[DZ]], %[[B]], %[[E0]], %[[E1]] : tensor<4x3xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    %[[DB:.*]] = emb.add %[[DB1]], %[[DI]]#0
// CHECK-NEXT:    %[[R1:.*]] = emb.lookup_grad @t1[%[[IDS1]], %[[OFFS1]]] sum %[[DI]]#2
// CHECK-NEXT:    emb.accumulate_rows @t1[%[[IDS1]]], %[[R1]]
// CHECK-NEXT:    %[[R0:.*]] = emb.lookup_grad @t0[%[[IDS0]], %[[OFFS0]]] sum %[[DI]]#1
// CHECK-NEXT:    emb.accumulate_rows @t0[%[[IDS0]]], %[[R0]]
// CHECK-NEXT:    %[[DBW:.*]] = emb.dense_grad_weight %[[X]], %[[DB]]
// CHECK-NEXT:    emb.accumulate_grad @bw, %[[DBW]]
// CHECK-NEXT:    return
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.coalesce_rows @t1
// CHECK-NEXT:      emb.coalesce_rows @t0
// CHECK-NEXT:      emb.update @tw
// CHECK-NEXT:      emb.update @bw
// CHECK-NEXT:      emb.update @t1
// CHECK-NEXT:      emb.update @t0
// CHECK-NEXT:      return

module @interaction attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t0 [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.table @t1 [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @bw : tensor<3x8xf32> init<kind = xavier_uniform>
  emb.param @tw : tensor<11x1xf32> init<kind = xavier_uniform>
  func.func @forward(%x: tensor<4x3xf32>, %ids0: tensor<?xi64>, %offs0: tensor<5xi64>,
                     %ids1: tensor<?xi64>, %offs1: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %bw = emb.get @bw : tensor<3x8xf32>
    %b = emb.dense %x, %bw : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
    %e0 = emb.lookup @t0[%ids0, %offs0] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %e1 = emb.lookup @t1[%ids1, %offs1] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %z = emb.interaction %b, %e0, %e1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x3xf32>
    %cat = emb.concat %b, %z : tensor<4x8xf32>, tensor<4x3xf32> -> tensor<4x11xf32>
    %tw = emb.get @tw : tensor<11x1xf32>
    %p = emb.dense %cat, %tw : tensor<4x11xf32>, tensor<11x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Two DCN-v2 cross layers on a lookup: x0 feeds both layers (and is the
// first layer's xl), so its three gradients are summed. Each layer keeps
// its product xl W (`linear`), which its gradient reads.
// CHECK-LABEL: module @cross
// CHECK:         %[[X0:.*]] = emb.lookup @t[%[[IDS:.*]], %[[OFFS:.*]]] sum
// CHECK-NEXT:    %[[W0:.*]] = emb.get @w0
// CHECK-NEXT:    %[[B0:.*]] = emb.get @b0
// CHECK-NEXT:    %[[X1:.*]], %[[L0:.*]] = emb.cross %[[X0]], %[[X0]], %[[W0]], %[[B0]] : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> linear tensor<4x8xf32>
// CHECK-NEXT:    %[[W1:.*]] = emb.get @w1
// CHECK-NEXT:    %[[B1:.*]] = emb.get @b1
// CHECK-NEXT:    %[[X2:.*]], %[[L1:.*]] = emb.cross %[[X0]], %[[X1]], %[[W1]], %[[B1]]
// CHECK-NEXT:    %[[WO:.*]] = emb.get @wo
// CHECK-NEXT:    %[[P:.*]] = emb.dense %[[X2]], %[[WO]]
// CHECK-NEXT:    emb.loss
// CHECK-NEXT:    %[[DP:.*]] = emb.loss_grad bce_with_logits %[[P]]
// CHECK-NEXT:    %[[DX2:.*]] = emb.dense_grad_input %[[DP]], %[[WO]]
// CHECK-NEXT:    %[[DWO:.*]] = emb.dense_grad_weight %[[X2]], %[[DP]]
// CHECK-NEXT:    emb.accumulate_grad @wo, %[[DWO]]
// CHECK-NEXT:    %[[A0:.*]], %[[DX1:.*]], %[[DW1:.*]], %[[DB1:.*]] = emb.cross_grad %[[DX2]], %[[X0]], %[[X1]], %[[W1]], %[[B1]] linear(%[[L1]]) : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>
// CHECK-NEXT:    emb.accumulate_grad @b1, %[[DB1]] : tensor<8xf32>
// CHECK-NEXT:    emb.accumulate_grad @w1, %[[DW1]] : tensor<8x8xf32>
// CHECK-NEXT:    %[[A1:.*]], %[[A2:.*]], %[[DW0:.*]], %[[DB0:.*]] = emb.cross_grad %[[DX1]], %[[X0]], %[[X0]], %[[W0]], %[[B0]] linear(%[[L0]])
// CHECK-NEXT:    %[[S:.*]] = emb.add %[[A0]], %[[A1]]
// CHECK-NEXT:    %[[DX0:.*]] = emb.add %[[S]], %[[A2]]
// CHECK-NEXT:    emb.accumulate_grad @b0, %[[DB0]]
// CHECK-NEXT:    emb.accumulate_grad @w0, %[[DW0]]
// CHECK-NEXT:    %[[R:.*]] = emb.lookup_grad @t[%[[IDS]], %[[OFFS]]] sum %[[DX0]]
// CHECK-NEXT:    emb.accumulate_rows @t[%[[IDS]]], %[[R]]
// CHECK-NEXT:    return
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.coalesce_rows @t
// CHECK-NEXT:      emb.update @wo
// CHECK-NEXT:      emb.update @b1
// CHECK-NEXT:      emb.update @w1
// CHECK-NEXT:      emb.update @b0
// CHECK-NEXT:      emb.update @w0
// CHECK-NEXT:      emb.update @t
// CHECK-NEXT:      return

module @cross attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @t [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w0 : tensor<8x8xf32> init<kind = xavier_uniform>
  emb.param @b0 : tensor<8xf32> init<kind = zeros>
  emb.param @w1 : tensor<8x8xf32> init<kind = xavier_uniform>
  emb.param @b1 : tensor<8xf32> init<kind = zeros>
  emb.param @wo : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ids: tensor<?xi64>, %offs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %x0 = emb.lookup @t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %w0 = emb.get @w0 : tensor<8x8xf32>
    %b0 = emb.get @b0 : tensor<8xf32>
    %x1 = emb.cross %x0, %x0, %w0, %b0 : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    %w1 = emb.get @w1 : tensor<8x8xf32>
    %b1 = emb.get @b1 : tensor<8xf32>
    %x2 = emb.cross %x0, %x1, %w1, %b1 : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    %wo = emb.get @wo : tensor<8x1xf32>
    %p = emb.dense %x2, %wo : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// A cross layer on data: only its weight and bias gradients are used, and
// softmax_ce differentiates only its logits.
// CHECK-LABEL: module @cross_data
// CHECK:         %[[X1:[^,]*]], %[[L:.*]] = emb.cross %[[X:.*]], %[[X]], %[[W:.*]], %[[B:.*]] :
// CHECK-NEXT:    emb.loss softmax_ce %[[X1]], %[[Y:.*]] :
// CHECK-NEXT:    %[[D:.*]] = emb.loss_grad softmax_ce %[[X1]], %[[Y]] : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %[[DW:.*]], %[[DB:.*]] = emb.cross_grad %[[D]], %[[X]], %[[X]], %[[W]], %[[B]] linear(%[[L]])
// CHECK-NEXT:    emb.accumulate_grad @b, %[[DB]] : tensor<3xf32>
// CHECK-NEXT:    emb.accumulate_grad @w, %[[DW]] : tensor<3x3xf32>
// CHECK-NEXT:    return

module @cross_data attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @w : tensor<3x3xf32> init<kind = xavier_uniform>
  emb.param @b : tensor<3xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x3xf32>) {
    %w = emb.get @w : tensor<3x3xf32>
    %b = emb.get @b : tensor<3xf32>
    %x1 = emb.cross %x, %x, %w, %b : tensor<4x3xf32>, tensor<3x3xf32>, tensor<3xf32>
    %l = emb.loss softmax_ce %x1, %y : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %x1 : tensor<f32>, tensor<4x3xf32>
  }
}

// -----

// The optimizer step with clipping: one emb.coalesce_rows per table, then one
// emb.clip_grad_norm whose scale every emb.update takes; parameters and
// tables that no gradient reaches (@unused_p, @unused_t) are not updated.
// CHECK-LABEL: module @clip
// CHECK:         func.func @train_step
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @t
// CHECK-NEXT:      %[[S:.*]] = emb.clip_grad_norm max_norm(2.500000e-01) : tensor<f32>
// CHECK-NEXT:      emb.update @w scale %[[S]] : tensor<f32>
// CHECK-NEXT:      emb.update @t scale %[[S]] : tensor<f32>
// CHECK-NEXT:      return
// CHECK-NEXT:    }
module @clip attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = adam, lr = 0.001>,
                                                      grad_clip_norm = 0.25, grad_accumulation = 2>} {
  emb.table @t [100 x 8] f32 init<kind = zeros> optimizer<kind = rowwise_adagrad>
  emb.table @unused_t [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w : tensor<8x1xf32> init<kind = xavier_uniform>
  emb.param @unused_p : tensor<8xf32> init<kind = zeros>
  func.func @forward(%ids: tensor<?xi64>, %offs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %w = emb.get @w : tensor<8x1xf32>
    %p = emb.dense %e, %w : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// grad_clip_norm = 0 (the default) means no clipping.
// CHECK-LABEL: module @no_clip
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @t
// CHECK-NEXT:      emb.update @w{{$}}
// CHECK-NEXT:      emb.update @t{{$}}
// CHECK-NEXT:      return
module @no_clip attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>,
                                                         grad_clip_norm = 0.0>} {
  emb.table @t [100 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  emb.param @w : tensor<8x1xf32> init<kind = xavier_uniform>
  func.func @forward(%ids: tensor<?xi64>, %offs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %e = emb.lookup @t[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x8xf32>
    %w = emb.get @w : tensor<8x1xf32>
    %p = emb.dense %e, %w : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
    %l = emb.loss bce_with_logits %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<4x1xf32>
  }
}

// -----

// Weight decay the sparse update can honour is accepted: global decay with
// sgd without momentum and with adamw (a scaling of untouched rows), lazy
// decay with any optimizer, and a 'global' mode without decay.
// CHECK-LABEL: module @sparse_decay
// CHECK:         func.func @update() {
// CHECK-NEXT:      emb.coalesce_rows @lazy_momentum
// CHECK-NEXT:      emb.coalesce_rows @no_decay
// CHECK-NEXT:      emb.coalesce_rows @lazy_adagrad
// CHECK-NEXT:      emb.coalesce_rows @adamw_global
// CHECK-NEXT:      emb.coalesce_rows @sgd_global
// CHECK-NEXT:      emb.update @lazy_momentum
// CHECK-NEXT:      emb.update @no_decay
// CHECK-NEXT:      emb.update @lazy_adagrad
// CHECK-NEXT:      emb.update @adamw_global
// CHECK-NEXT:      emb.update @sgd_global
// CHECK-NEXT:      return
module @sparse_decay attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.table @sgd_global [10 x 4] f32 init<kind = zeros>
      optimizer<kind = sgd, weight_decay = 0.01, weight_decay_mode = global>
  emb.table @adamw_global [10 x 4] f32 init<kind = zeros>
      optimizer<kind = adamw, lr = 0.001, weight_decay = 0.01, weight_decay_mode = global>
  emb.table @lazy_adagrad [10 x 4] f32 init<kind = zeros>
      optimizer<kind = adagrad, weight_decay = 0.01, weight_decay_mode = lazy>
  emb.table @no_decay [10 x 4] f32 init<kind = zeros>
      optimizer<kind = rowwise_adagrad, weight_decay_mode = global>
  emb.table @lazy_momentum [10 x 4] f32 init<kind = zeros>
      optimizer<kind = sgd, momentum = 0.9, weight_decay = 0.01>
  func.func @forward(%ids: tensor<?xi64>, %offs: tensor<5xi64>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
    %a = emb.lookup @sgd_global[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %b = emb.lookup @adamw_global[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %c = emb.lookup @lazy_adagrad[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %d = emb.lookup @no_decay[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %e = emb.lookup @lazy_momentum[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    %s = emb.add %a, %b, %c, %d, %e : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %l = emb.loss softmax_ce %s, %y : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %s : tensor<f32>, tensor<4x4xf32>
  }
}

// -----

// Nothing trainable reaches the loss: no backward op at all (not even the
// loss's own gradient) and an empty optimizer step.
// CHECK-LABEL: module @nothing_trainable
// CHECK:         func.func @train_step(%[[X:.*]]: tensor<4x1xf32>, %[[Y:.*]]: tensor<4x1xf32>)
// CHECK-NEXT:      %[[L:.*]] = emb.loss mse %[[X]], %[[Y]]
// CHECK-NEXT:      return %[[L]], %[[X]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @update() {
// CHECK-NEXT:      return
// CHECK-NEXT:    }
module @nothing_trainable attributes {emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  emb.param @unused : tensor<4xf32> init<kind = zeros>
  func.func @forward(%x: tensor<4x1xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
    %l = emb.loss mse %x, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
    return %l, %x : tensor<f32>, tensor<4x1xf32>
  }
}
