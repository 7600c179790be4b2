// -emb-remat on a chain of four dense + relu layers (8 x 4 f32 activations,
// 128 bytes each) and a last dense layer whose output the step returns.
// After -emb-autodiff the backward reads each relu output (the activation
// gradients are rewritten to read it, from_output), so the chain has four
// stages y1..y4 of 128 bytes; the returned logits are always kept.
//
// mode=all (sqrt(n) segments: threshold 512 / 2 = 256 bytes) keeps y3 and
// recomputes y1, y2 and y4: y4 right before its first backward use (the last
// layer's weight gradient) from y3, y1 and y2 right before y2's first use
// (layer 3's weight gradient) from the input, and the later uses of y1 read
// the same clones.
// The RUN lines read Inputs/remat.mlir: -emb-autodiff's output for the
// models in Inputs/remat-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat="mode=all" | FileCheck %s --check-prefix=ALL
// mode=auto with a budget of 708 persistent + 384 bytes (the lowest chain
// peak): the fewest FLOPs at that peak keep y2 and y4 and recompute y1, y3.
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat="mode=auto budget=1092" | FileCheck %s --check-prefix=AUTO
// A budget that holds every activation: nothing to recompute.
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat="mode=auto budget=1220" | FileCheck %s --check-prefix=ROOMY
// mode=none (and the default: the module's emb.plan) leaves the IR unchanged.
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file > %t.plain
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat="mode=none" | diff %t.plain -
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat | FileCheck %s --check-prefix=PLANATTR
// -emb-fuse after it groups the clones like the originals (dense_act).
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat="mode=all" -emb-fuse | FileCheck %s --check-prefix=FUSE
// The rewritten IR parses back and verifies.
// RUN: emb-opt %S/Inputs/remat.mlir -split-input-file -emb-remat="mode=all" | emb-opt -split-input-file > /dev/null

// ALL-LABEL: module @chain attributes {emb.remat_note = "recomputes 3 values (6 ops), +20.6% step FLOPs, activation estimate 900 -> 772 bytes (all, sqrt(n) segments; chain peak 512 -> 384 bytes over 708 persistent)"
// ALL:         %[[X:.*]] = emb.get @w1
// ALL-NEXT:    %[[B1:.*]] = emb.get @b1
// ALL-NEXT:    %[[Z1:.*]] = emb.dense %arg0, %[[X]], %[[B1]] :
// ALL-NEXT:    %[[Y1:.*]] = emb.activation relu %[[Z1]] :
// ALL-NEXT:    %[[W2:.*]] = emb.get @w2
// ALL-NEXT:    %[[Z2:.*]] = emb.dense %[[Y1]], %[[W2]] :
// ALL-NEXT:    %[[Y2:.*]] = emb.activation relu %[[Z2]] :
// ALL-NEXT:    %[[W3:.*]] = emb.get @w3
// ALL-NEXT:    %[[Z3:.*]] = emb.dense %[[Y2]], %[[W3]] :
// ALL-NEXT:    %[[Y3:.*]] = emb.activation relu %[[Z3]] :
// ALL-NEXT:    %[[W4:.*]] = emb.get @w4
// ALL-NEXT:    %[[Z4:.*]] = emb.dense %[[Y3]], %[[W4]] :
// ALL-NEXT:    %[[Y4:.*]] = emb.activation relu %[[Z4]] :
// ALL:         %[[DL:.*]] = emb.loss_grad mse
// ALL-NEXT:    %[[DY4:.*]] = emb.dense_grad_input %[[DL]]
// ALL-NEXT:    %[[RZ4:.*]] = emb.dense %[[Y3]], %[[W4]] {emb.remat} :
// ALL-NEXT:    %[[RY4:.*]] = emb.activation relu %[[RZ4]] {emb.remat} :
// ALL-NEXT:    emb.dense_grad_weight %[[RY4]], %[[DL]]
// ALL-NEXT:    emb.accumulate_grad @w5
// ALL-NEXT:    %[[DZ4:.*]] = emb.activation_grad relu %[[DY4]], %[[RY4]] from_output
// ALL-NEXT:    %[[DY3:.*]] = emb.dense_grad_input %[[DZ4]], %[[W4]]
// ALL-NEXT:    emb.dense_grad_weight %[[Y3]], %[[DZ4]]
// ALL-NEXT:    emb.accumulate_grad @w4
// ALL-NEXT:    %[[DZ3:.*]] = emb.activation_grad relu %[[DY3]], %[[Y3]] from_output
// ALL-NEXT:    %[[DY2:.*]] = emb.dense_grad_input %[[DZ3]], %[[W3]]
// ALL-NEXT:    %[[RZ1:.*]] = emb.dense %arg0, %[[X]], %[[B1]] {emb.remat} :
// ALL-NEXT:    %[[RY1:.*]] = emb.activation relu %[[RZ1]] {emb.remat} :
// ALL-NEXT:    %[[RZ2:.*]] = emb.dense %[[RY1]], %[[W2]] {emb.remat} :
// ALL-NEXT:    %[[RY2:.*]] = emb.activation relu %[[RZ2]] {emb.remat} :
// ALL-NEXT:    emb.dense_grad_weight %[[RY2]], %[[DZ3]]
// ALL-NEXT:    emb.accumulate_grad @w3
// ALL-NEXT:    %[[DZ2:.*]] = emb.activation_grad relu %[[DY2]], %[[RY2]] from_output
// ALL-NEXT:    %[[DY1:.*]] = emb.dense_grad_input %[[DZ2]], %[[W2]]
// ALL-NEXT:    emb.dense_grad_weight %[[RY1]], %[[DZ2]]
// ALL-NEXT:    emb.accumulate_grad @w2
// ALL-NEXT:    %[[DZ1:.*]] = emb.activation_grad relu %[[DY1]], %[[RY1]] from_output
// ALL-NEXT:    emb.dense_grad_weight %arg0, %[[DZ1]]
// ALL-NOT:     {emb.remat}
// ALL:         return

// AUTO-LABEL: module @chain attributes {emb.remat_note = "recomputes 2 values (4 ops), +13.5% step FLOPs, activation estimate 900 -> 772 bytes (auto, budget 1092 bytes; chain peak 512 -> 384 bytes over 708 persistent)"
// AUTO:         emb.activation relu
// AUTO:         %[[Y2:.*]] = emb.activation relu
// AUTO:         emb.activation relu
// AUTO:         %[[Y4:.*]] = emb.activation relu
// AUTO:         emb.loss_grad
// AUTO-NOT:     {emb.remat}
// AUTO:         emb.dense_grad_weight %[[Y4]],
// AUTO:         emb.activation_grad relu %{{.*}}, %[[Y4]] from_output
// AUTO:         %[[RZ3:.*]] = emb.dense %[[Y2]], %{{.*}} {emb.remat} :
// AUTO-NEXT:    %[[RY3:.*]] = emb.activation relu %[[RZ3]] {emb.remat} :
// AUTO-NEXT:    emb.dense_grad_weight %[[RY3]],
// AUTO:         emb.activation_grad relu %{{.*}}, %[[RY3]] from_output
// AUTO:         emb.dense_grad_weight %[[Y2]],
// AUTO:         emb.activation_grad relu %{{.*}}, %[[Y2]] from_output
// AUTO-NEXT:    emb.dense_grad_input
// AUTO-NEXT:    %[[RZ1:.*]] = emb.dense %arg0, %{{.*}}, %{{.*}} {emb.remat} :
// AUTO-NEXT:    %[[RY1:.*]] = emb.activation relu %[[RZ1]] {emb.remat} :
// AUTO-NEXT:    emb.dense_grad_weight %[[RY1]],
// AUTO-NOT:     {emb.remat}
// AUTO:         return

// ROOMY-LABEL: module @chain attributes {emb.remat_note = "recomputes 0 values (0 ops), +0.0% step FLOPs, activation estimate 900 -> 900 bytes (auto, budget 1220 bytes; chain peak 512 -> 512 bytes over 708 persistent)"
// ROOMY-NOT:   {emb.remat}

// PLANATTR-LABEL: module @chain attributes {emb.training
// PLANATTR-NOT:   emb.remat

// FUSE-LABEL: module @chain
// FUSE:         emb.loss_grad
// FUSE-NEXT:    %[[R4:.*]] = emb.fused dense_act -> tensor<8x4xf32> {
// FUSE-NEXT:      %[[Z:.*]] = emb.dense %{{.*}}, %{{.*}} {emb.remat} :
// FUSE-NEXT:      %[[A:.*]] = emb.activation relu %[[Z]] {emb.remat} :
// FUSE-NEXT:      emb.yield %[[A]] : tensor<8x4xf32>
// FUSE-NEXT:    }
// FUSE:         emb.fused dense_act_grad
// FUSE:         emb.activation_grad relu %{{.*}}, %[[R4]] from_output
// FUSE:         %[[R1:.*]] = emb.fused dense_act -> tensor<8x4xf32> {
// FUSE-NEXT:      emb.dense %arg0, %{{.*}}, %{{.*}} {emb.remat} :
// FUSE:         emb.fused dense_act -> tensor<8x4xf32> {
// FUSE-NEXT:      emb.dense %[[R1]], %{{.*}} {emb.remat} :
// Input: module @chain, chunk 1 of Inputs/remat.mlir.

// -----

// The mode from the module's emb.plan (remat = all); an activation the
// backward reads directly (gelu's gradient needs its input) is a stage too:
// the dense output %z feeds the gelu and its gradient. Two stages (z and
// y, 64 bytes each): the sqrt(n) threshold 128 / sqrt(2) keeps y and
// recomputes z (the same chain peak, 128 bytes: a lesson in why auto exists).
// PLANATTR-LABEL: module @gelu attributes {emb.plan = #emb.plan<remat = all>, emb.remat_note = "recomputes 1 values (1 ops)
// PLANATTR:         %[[Z:.*]] = emb.dense %arg0
// PLANATTR:         %[[Y:.*]] = emb.activation gelu %[[Z]]
// PLANATTR:         emb.dense_grad_weight %[[Y]],
// PLANATTR:         %[[RZ:.*]] = emb.dense %arg0, %{{.*}} {emb.remat} :
// PLANATTR-NEXT:    emb.activation_grad gelu %{{.*}}, %[[RZ]] :
// Input: module @gelu, chunk 2 of Inputs/remat.mlir.
