// -emb-quantize, dense half (passes/lib/QuantizeDense.cpp): bf16/fp16 dense
// compute with f32 master weights, and fp16 dynamic loss scaling.
// - bf16: every dense, interaction and cross op and their gradient ops get
//   `emb.compute = #emb<precision bf16>`; parameters, the loss gradient and
//   @update are unchanged (no loss scaling for bf16).
// - fp16: the same with fp16, the loss gradient `emb.loss_scaled`, and
//   emb.unscale_grads at the head of @update.
// - fp32: nothing changes.
// The RUN lines read Inputs/quantize-dense.mlir: -emb-autodiff's output for the
// models in Inputs/quantize-dense-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/quantize-dense.mlir -split-input-file -emb-quantize | FileCheck %s
// The marked IR parses back and verifies (emb.unscale_grads round-trips).
// RUN: emb-opt %S/Inputs/quantize-dense.mlir -split-input-file -emb-quantize | emb-opt -split-input-file \
// RUN:   | FileCheck %s
// The plan: "compute" on the dense kernels (fused or not), "loss_scaled" on
// loss_grad, the unscale_grads kernel over every gradient buffer, and the
// loss_scaling config; no embedding_update is fused under loss scaling.
// RUN: emb-opt %S/Inputs/quantize-dense.mlir -split-input-file -emb-quantize -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: emb-opt %S/Inputs/quantize-dense.mlir -split-input-file -emb-quantize -emb-pack-params -emb-fuse \
// RUN:   -emb-to-plan="emit-json=true cuda=false" -o /dev/null | tr -d '\n' | tr -s ' ' \
// RUN:   | grep -o '"model": "[a-z0-9_]*"\|"op": "[a-z_]*", "outputs": [[0-9, ]*\]\|"compute": "[a-z0-9]*"\|"loss_scaled": true\|"loss_scaling": {[^}]*}' \
// RUN:   | FileCheck %s --check-prefix=FUSED

// CHECK-LABEL: module @bf16
// CHECK:         func.func @train_step
// CHECK:           emb.dense {{.*}} {emb.compute = #emb<precision bf16>}
// CHECK:           emb.interaction {{.*}} {emb.compute = #emb<precision bf16>}
// CHECK:           emb.dense {{.*}} {emb.compute = #emb<precision bf16>}
// CHECK:           emb.loss_grad
// CHECK-NOT:         emb.loss_scaled
// CHECK-SAME:        -> tensor<4x1xf32>
// CHECK:           emb.dense_grad_input {{.*}} {emb.compute = #emb<precision bf16>}
// CHECK:           emb.dense_grad_weight {{.*}} {emb.compute = #emb<precision bf16>}
// CHECK:           emb.interaction_grad {{.*}} {emb.compute = #emb<precision bf16>}
// CHECK:           emb.dense_grad_weight {{.*}} {emb.compute = #emb<precision bf16>}
// CHECK:         func.func @update()
// CHECK-NOT:       emb.unscale_grads
// CHECK:           return

// PLAN: "loss_scaling": {
// PLAN-NEXT: "backoff": 0.5,
// PLAN-NEXT: "enabled": false,
// PLAN: "precision": "bf16"
// PLAN: "model": "bf16"
// PLAN: "step": [
// PLAN-NEXT: {
// PLAN-NEXT: "attrs": {
// PLAN-NEXT: "bias": true,
// PLAN-NEXT: "compute": "bf16"
// PLAN: "op": "dense",
// PLAN: "compute": "bf16"
// PLAN: "op": "interaction",
// PLAN-NOT: "loss_scaled"
// PLAN: "update": [
// PLAN-NOT: "unscale_grads"
// PLAN: "version": 12

// bf16 has no loss scaling, so the embedding update is still fused.
// FUSED: "loss_scaling": { "backoff": 0.5, "enabled": false, "growth": 2.0, "initial": 65536.0, "interval": 2000 }
// FUSED-NEXT: "model": "bf16"
// FUSED-NEXT: "compute": "bf16"
// FUSED-NEXT: "op": "dense_act"
// FUSED-NEXT: "op": "lookup"
// FUSED-NEXT: "compute": "bf16"
// FUSED-NEXT: "op": "interaction_concat"
// FUSED-NEXT: "compute": "bf16"
// FUSED-NEXT: "op": "dense"
// FUSED-NEXT: "op": "loss"
// FUSED-NEXT: "op": "loss_grad"
// FUSED-NEXT: "compute": "bf16"
// FUSED-NEXT: "op": "dense_act_grad"
// FUSED-NEXT: "compute": "bf16"
// FUSED-NEXT: "op": "interaction_concat_grad"
// FUSED-NEXT: "op": "embedding_update"
// FUSED-NEXT: "compute": "bf16"
// FUSED-NEXT: "op": "dense_act_grad"
// FUSED-NEXT: "op": "update_packed"
// Input: module @bf16, chunk 1 of Inputs/quantize-dense.mlir.

// -----

// fp16: the DCN cross layer too; the loss gradient is scaled and @update
// unscales first (before the clip norm, which needs true gradients).
// CHECK-LABEL: module @fp16
// CHECK:         func.func @train_step
// CHECK:           emb.cross {{.*}} {emb.compute = #emb<precision fp16>}
// CHECK:           emb.dense {{.*}} {emb.compute = #emb<precision fp16>}
// CHECK:           emb.loss_grad mse {{.*}} {emb.loss_scaled}
// CHECK:           emb.dense_grad_input {{.*}} {emb.compute = #emb<precision fp16>}
// CHECK:           emb.dense_grad_weight {{.*}} {emb.compute = #emb<precision fp16>}
// CHECK:           emb.cross_grad {{.*}} {emb.compute = #emb<precision fp16>}
// CHECK:         func.func @update()
// CHECK-NEXT:      emb.unscale_grads initial(6.553600e+04) growth(2.000000e+00) backoff(5.000000e-01) interval(2000)
// CHECK-NEXT:      emb.coalesce_rows @t0
// CHECK-NEXT:      %[[S:.*]] = emb.clip_grad_norm

// PLAN: "loss_scaling": {
// PLAN-NEXT: "backoff": 0.5,
// PLAN-NEXT: "enabled": true,
// PLAN-NEXT: "growth": 2.0,
// PLAN-NEXT: "initial": 65536.0,
// PLAN-NEXT: "interval": 2000
// PLAN: "precision": "fp16"
// PLAN: "model": "fp16"
// PLAN: "compute": "fp16"
// PLAN: "op": "cross",
// PLAN: "loss_scaled": true
// PLAN: "op": "loss_grad",
// PLAN: "update": [
// PLAN-NEXT: {
// PLAN-NEXT: "attrs": {},
// PLAN-NEXT: "bytes":
// PLAN-NEXT: "inputs": [],
// PLAN-NEXT: "op": "unscale_grads",

// After packing: one unscale of the pack's gradient and the table's sparse
// values; the embedding update stays in @update (a skipped step must not
// have touched the table).
// FUSED: "loss_scaling": { "backoff": 0.5, "enabled": true, "growth": 2.0, "initial": 65536.0, "interval": 2000 }
// FUSED-NEXT: "model": "fp16"
// FUSED-NEXT: "op": "lookup"
// FUSED-NEXT: "compute": "fp16"
// FUSED-NEXT: "op": "cross"
// FUSED-NEXT: "compute": "fp16"
// FUSED-NEXT: "op": "dense_act"
// FUSED-NEXT: "op": "loss"
// FUSED-NEXT: "loss_scaled": true
// FUSED-NEXT: "op": "loss_grad"
// FUSED-NEXT: "compute": "fp16"
// FUSED-NEXT: "op": "dense_act_grad"
// FUSED-NEXT: "compute": "fp16"
// FUSED-NEXT: "op": "cross_grad"
// FUSED-NOT: "embedding_update"
// FUSED: "op": "accumulate_rows", "outputs": [ {{[0-9]+}}, [[VALUES:[0-9]+]] ]
// FUSED-NEXT: "op": "unscale_grads", "outputs": [ [[PACKGRAD:[0-9]+]], [[VALUES]] ]
// FUSED-NEXT: "op": "coalesce_rows", "outputs": [ {{[0-9]+}}, [[VALUES]] ]
// FUSED-NEXT: "op": "clip_grad_norm"
// FUSED-NEXT: "op": "update_packed"
// FUSED-NEXT: "op": "update_table"
// Input: module @fp16, chunk 2 of Inputs/quantize-dense.mlir.

// -----

// fp32: the IR is left as it is.
// CHECK-LABEL: module @fp32
// CHECK-NOT:     emb.compute
// CHECK-NOT:     emb.loss_scaled
// CHECK-NOT:     emb.unscale_grads
// CHECK:         return

// PLAN: "model": "fp32"
// PLAN-NOT: "compute"
// PLAN-NOT: "unscale_grads"
// PLAN: "version": 12
// Input: module @fp32, chunk 3 of Inputs/quantize-dense.mlir.
