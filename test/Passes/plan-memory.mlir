// -emb-plan-memory records the strategy on the module; -emb-to-plan plans
// the arena of the plan it lowers with it: lifetimes on the step's timeline
// and offsets in one arena, reused between buffers whose lifetimes do not
// meet. The IR is unchanged but for the emb.memory_plan attribute.
// The first case (before the `// -----` line) without packing:
// The RUN lines read Inputs/plan-memory.mlir: -emb-autodiff's output for the
// models in Inputs/plan-memory-forward.mlir (docs/testing.md).
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/plan-memory.mlir | emb-opt -emb-plan-memory | FileCheck %s
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/plan-memory.mlir | emb-opt -emb-plan-memory=strategy=sequential \
// RUN:   | FileCheck %s --check-prefix=SEQ
// The plan -emb-to-plan lays out by the attribute, one buffer per line.
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/plan-memory.mlir \
// RUN:   | emb-opt -emb-plan-memory -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// Without the pass, the same buffers lie one after another (no reuse).
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/plan-memory.mlir | emb-opt -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=NOPASS
// The second case with -emb-pack-params, as in embc's pipeline.
// RUN: sed '1,/^\/\/ -----/d' %S/Inputs/plan-memory.mlir | emb-opt -emb-pack-params -emb-plan-memory \
// RUN:   | FileCheck %s --check-prefix=PACKED-IR
// RUN: sed '1,/^\/\/ -----/d' %S/Inputs/plan-memory.mlir \
// RUN:   | emb-opt -emb-pack-params -emb-plan-memory -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PACKED
// The planning is a step of -emb-to-plan on the plan it lowers, so a pass
// may run after -emb-plan-memory: the same plan.
// RUN: sed '1,/^\/\/ -----/d' %S/Inputs/plan-memory.mlir \
// RUN:   | emb-opt -emb-plan-memory -emb-pack-params -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PACKED

// A three-layer MLP, batch 8: 22 buffers, 17 step kernels (6 forward) and
// 3 update kernels. Greedy by size needs 21376 bytes where one buffer after
// another needs 27776; at most 21284 bytes are live at once (kernel 12,
// where the 4 KiB weight gradient of the middle layer is written).
// CHECK-LABEL: module @chain attributes {emb.memory_plan = {strategy = "greedy_by_size"}
// CHECK:       func.func @train_step
// CHECK-NOT:   emb.memory_plan
// SEQ-LABEL:   module @chain attributes {emb.memory_plan = {strategy = "sequential"}

// Parameters and gradients live for the whole run (-1/-1); an input from
// the start of the step (the executor writes it first); the prediction
// (act/12) and the loss (act/13) to the step's last kernel (16), as the
// trainer reads them after the step.
// PLAN:      { "arena_bytes": 21376, "buffers": [
// PLAN-SAME: "first_use": -1, "last_use": -1, "name": "param/w0", "offset": {{[0-9]+}}, "origin": "frontend"
// PLAN:      "first_use": -1, "last_use": -1, "name": "grad/w0", "offset": {{[0-9]+}}, "origin": "emb-autodiff"
// PLAN:      "first_use": 0, "last_use": 15, "name": "input/x/dense", "offset": {{[0-9]+}}, "origin": "frontend"
// The second layer's output lives from its dense (kernel 2) to the relu
// gradient that reads it (kernel 10); the weight gradients written at
// kernels 12 and 15 come later and take its bytes.
// PLAN:      "first_use": 2, "last_use": 10, "name": "act/10/dense", "offset": [[SHARED:[0-9]+]], "origin": "frontend"
// PLAN:      "first_use": 4, "last_use": 16, "name": "act/12/dense"
// PLAN:      "first_use": 5, "last_use": 16, "name": "act/13/loss"
// PLAN:      "first_use": 12, "last_use": 13, "name": "act/19/dense_grad_weight", "offset": [[SHARED]], "origin": "emb-autodiff"
// PLAN:      "first_use": 15, "last_use": 16, "name": "act/21/dense_grad_weight", "offset": [[SHARED]], "origin": "emb-autodiff"
// PLAN:      "memory": { "arena_bytes": 21376, {{.*}} "lower_bound_bytes": 21284, "peak_bytes": 21376, "strategy": "greedy_by_size" }
// PLAN-SAME: "notes": [ "step: 6 forward and 11 backward kernels; update: 3 kernels", "-emb-plan-memory: greedy_by_size layout, peak 21376 bytes (lower bound 21284)" ]

// NOPASS:    "first_use": 2, "last_use": 10, "name": "act/10/dense", "offset": 15168,
// NOPASS:    "first_use": 12, "last_use": 13, "name": "act/19/dense_grad_weight", "offset": 20608,
// NOPASS:    "memory": { "arena_bytes": 27776, {{.*}} "lower_bound_bytes": 21284, "peak_bytes": 27776, "strategy": "sequential" }
// NOPASS-SAME: "-emb-to-plan: buffers laid out without reuse (-emb-plan-memory not run)"
// Input: module @chain, chunk 1 of Inputs/plan-memory.mlir.

// -----

// Packed parameters: the pack is placed, its members' views follow it at
// their offsets and take its lifetime (the whole run). The batched tables'
// sparse gradient is a gradient: whole run too. The first lookup's output
// (kernels 0..2) and the input gradient of the dense layer (6..10) share.
// PACKED-IR-LABEL: module @packed attributes {emb.memory_plan = {strategy = "greedy_by_size"}
// PACKED:    "first_use": -1, "last_use": -1, "name": "pack/dense_f32", "offset": [[PACK:[0-9]+]], "origin": "emb-pack-params", "parent": -1
// PACKED:    "first_use": -1, "last_use": -1, "name": "param/w", "offset": [[PACK]], "origin": "frontend", "parent": 0
// PACKED:    "first_use": -1, "last_use": -1, "name": "tables/tables_d4", "offset": [[TABLES:[0-9]+]], "origin": "emb-pack-params"
// PACKED:    "first_use": -1, "last_use": -1, "name": "grad_values/tables_d4", "offset": {{[0-9]+}}, "origin": "emb-pack-params"
// PACKED:    "first_use": -1, "last_use": -1, "name": "table/ta", "offset": [[TABLES]], "origin": "frontend", "parent": 8
// PACKED:    "first_use": 0, "last_use": 2, "name": "act/21/lookup", "offset": [[LOOKUP:[0-9]+]], "origin": "frontend"
// PACKED:    "first_use": 6, "last_use": 10, "name": "act/27/dense_grad_input", "offset": [[LOOKUP]], "origin": "emb-autodiff"
// Input: module @packed, chunk 2 of Inputs/plan-memory.mlir.
