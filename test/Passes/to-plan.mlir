// -emb-to-plan: the plan of a differentiated module, as JSON (emit-json).
// The JSON is joined into one line per array element (one buffer, input or
// kernel per line) before FileCheck reads it.
// The RUN lines read Inputs/to-plan.mlir: -emb-autodiff's output for the
// models in Inputs/to-plan-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/to-plan.mlir -split-input-file -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s
// The pass leaves the IR alone.
// RUN: emb-opt %S/Inputs/to-plan.mlir -split-input-file -emb-to-plan="emit-json=true cuda=false" -o - \
// RUN:   | FileCheck %s --check-prefix=IR
// IR: func.func @train_step
// IR: func.func @update
// output= writes the plan to a file: the JSON form, or by default the binary
// file with its magic (the last split's plan: each split reopens the file).
// RUN: emb-opt %S/Inputs/to-plan.mlir -split-input-file -emb-to-plan="output=%t.json emit-json=true cuda=false" -o /dev/null
// RUN: FileCheck %s --check-prefix=FILE < %t.json
// FILE: "model": "plain"
// RUN: emb-opt %S/Inputs/to-plan.mlir -split-input-file -emb-to-plan=output=%t.plan -o /dev/null
// RUN: head -c 8 %t.plan | FileCheck %s --check-prefix=MAGIC
// MAGIC: EMBCPLAN

// Every optimizer's state: the dense optimizer (adam) gives each parameter
// two moments; tables: sgd none, adagrad one [rows x dim], adam two,
// rowwise_adagrad one accumulator per row [rows]. Buffers follow one another
// at 64-byte boundaries: parameters (value, gradient, state), then tables
// (value, sparse gradient rows and values, state), the inputs in argument
// order, the activations in op order and the clip scale.
//
// A table's sparse gradient holds a row per id looked up in it over the
// grad_accumulation = 2 micro-batches of a step: @sgd_t and @row_t read %ids
// (emb.max_ids = 12): 24 rows; @ada_t reads the ids hashed from %hids
// (emb.max_ids = 4): 8; @adam_t gathers 4 x 2 negatives: 16. The per-id rows
// of emb.lookup_grad have the capacity of their ids (12, 4).
//
// Inputs carry what the data reader binds: feature, role, the column read
// (source; the feature's name by default), vocab, hotness, label kind and
// the negatives' power. forward_kernels counts the kernels before the first
// backward one (emb.get reads a parameter's buffer and is no kernel); the
// update kernels scale gradients by 1 / grad_accumulation = 0.5 and take the
// clip scale last.
// CHECK:      { "arena_bytes": 8128, "buffers": [ { "bytes": 52, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "param/w", "offset": 0, "origin": "frontend", "parent": -1, "rank": -1, "role": "param", "shape": [ 13, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 52, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "grad/w", "offset": 64, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 13, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 52, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/w/0", "offset": 128, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 13, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 52, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/w/1", "offset": 192, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 13, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "param/b", "offset": 256, "origin": "frontend", "parent": -1, "rank": -1, "role": "param", "shape": [ 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "grad/b", "offset": 320, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/b/0", "offset": 384, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/b/1", "offset": 448, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 160, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "table/sgd_t", "offset": 512, "origin": "frontend", "parent": -1, "rank": -1, "role": "table", "shape": [ 10, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 192, "dtype": "i64", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_rows/sgd_t", "offset": 704, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 24 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 384, "dtype": "f32", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_values/sgd_t", "offset": 896, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 24, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 320, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "table/ada_t", "offset": 1280, "origin": "frontend", "parent": -1, "rank": -1, "role": "table", "shape": [ 20, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "i64", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_rows/ada_t", "offset": 1600, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 8 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 128, "dtype": "f32", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_values/ada_t", "offset": 1664, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 8, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 320, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/ada_t/0", "offset": 1792, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 20, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 480, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "table/adam_t", "offset": 2112, "origin": "frontend", "parent": -1, "rank": -1, "role": "table", "shape": [ 30, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 128, "dtype": "i64", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_rows/adam_t", "offset": 2624, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 16 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 256, "dtype": "f32", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_values/adam_t", "offset": 2752, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 16, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 480, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/adam_t/0", "offset": 3008, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 30, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 480, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/adam_t/1", "offset": 3520, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 30, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 640, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "table/row_t", "offset": 4032, "origin": "frontend", "parent": -1, "rank": -1, "role": "table", "shape": [ 40, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 192, "dtype": "i64", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_rows/row_t", "offset": 4672, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 24 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 384, "dtype": "f32", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_values/row_t", "offset": 4864, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 24, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 160, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/row_t/0", "offset": 5248, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 40 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 48, "dtype": "f32", "dynamic": false, "first_use": 0, "last_use": 6, "name": "input/x/dense", "offset": 5440, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 4, 3 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 96, "dtype": "i64", "dynamic": true, "first_use": 0, "last_use": 25, "name": "input/a/ids", "offset": 5504, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 12 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 40, "dtype": "i64", "dynamic": false, "first_use": 0, "last_use": 24, "name": "input/a/offsets", "offset": 5632, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 5 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 32, "dtype": "i64", "dynamic": true, "first_use": 0, "last_use": 1, "name": "input/h/ids", "offset": 5696, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 40, "dtype": "i64", "dynamic": false, "first_use": 0, "last_use": 22, "name": "input/h/offsets", "offset": 5760, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 5 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "i64", "dynamic": false, "first_use": 0, "last_use": 19, "name": "input/n/negatives", "offset": 5824, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 4, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 16, "dtype": "f32", "dynamic": false, "first_use": 0, "last_use": 9, "name": "input/y/label", "offset": 5888, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 4, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": false, "first_use": 0, "last_use": 6, "name": "act/31/lookup", "offset": 5952, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 32, "dtype": "i64", "dynamic": true, "first_use": 1, "last_use": 23, "name": "act/32/hash", "offset": 6016, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": false, "first_use": 2, "last_use": 6, "name": "act/33/lookup", "offset": 6080, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": false, "first_use": 3, "last_use": 18, "name": "act/34/lookup", "offset": 6144, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 128, "dtype": "f32", "dynamic": false, "first_use": 4, "last_use": 18, "name": "act/35/gather", "offset": 6208, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 2, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 32, "dtype": "f32", "dynamic": false, "first_use": 5, "last_use": 6, "name": "act/36/dot", "offset": 6336, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 208, "dtype": "f32", "dynamic": false, "first_use": 6, "last_use": 11, "name": "act/37/concat", "offset": 6400, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 13 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 16, "dtype": "f32", "dynamic": false, "first_use": 7, "last_use": 25, "name": "act/38/dense", "offset": 6656, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": 8, "last_use": 25, "name": "act/39/loss", "offset": 6720, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 16, "dtype": "f32", "dynamic": false, "first_use": 9, "last_use": 12, "name": "act/40/loss_grad", "offset": 6784, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 208, "dtype": "f32", "dynamic": false, "first_use": 10, "last_use": 17, "name": "act/41/dense_grad_input", "offset": 6848, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 13 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 52, "dtype": "f32", "dynamic": false, "first_use": 11, "last_use": 14, "name": "act/42/dense_grad_weight", "offset": 7104, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 13, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": 12, "last_use": 13, "name": "act/43/bias_grad", "offset": 7168, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": false, "first_use": 15, "last_use": 24, "name": "act/44/slice", "offset": 7232, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": false, "first_use": 16, "last_use": 22, "name": "act/45/slice", "offset": 7296, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 32, "dtype": "f32", "dynamic": false, "first_use": 17, "last_use": 18, "name": "act/46/slice", "offset": 7360, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": false, "first_use": 18, "last_use": 20, "name": "act/47/dot_grad", "offset": 7424, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 128, "dtype": "f32", "dynamic": false, "first_use": 18, "last_use": 19, "name": "act/48/dot_grad", "offset": 7488, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 2, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 192, "dtype": "f32", "dynamic": true, "first_use": 20, "last_use": 21, "name": "act/49/lookup_grad", "offset": 7616, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 12, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": true, "first_use": 22, "last_use": 23, "name": "act/50/lookup_grad", "offset": 7808, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 4, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 192, "dtype": "f32", "dynamic": true, "first_use": 24, "last_use": 25, "name": "act/51/lookup_grad", "offset": 7872, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 12, 4 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": 30, "last_use": 36, "name": "clip_scale", "offset": 8064, "origin": "emb-to-plan", "parent": -1, "rank": -1, "role": "workspace", "shape": [ 1 ], "slots": 1 } ]
// CHECK-SAME: "compiler": "embc {{[^"]*}}"
// CHECK-SAME: "config": { "batch_size": 4, "data_parallel": 1, "decay_steps": 0, "grad_accumulation": 2, "grad_clip_norm": 1.0, "loss": "bce_with_logits", "loss_scaling": { "backoff": 0.5, "enabled": false, "growth": 2.0, "initial": 65536.0, "interval": 2000 }, "lr_schedule": "constant", "micro_batches": 1, "pipeline_stages": 1, "precision": "fp32", "schedule": "gpipe", "seed": 0, "stage_ranks": [], "warmup_steps": 0 }
// CHECK-SAME: "format": "embc.plan"
// CHECK-SAME: "forward_kernels": 9
// CHECK-SAME: "inputs": [ { "buffer": 24, "feature": "x", "hotness": 1, "label_kind": "", "power": 0.75, "role": "dense", "source": "dense", "vocab": 0, "width": 3 },
// CHECK-NEXT: { "buffer": 25, "feature": "a", "hotness": 3, "label_kind": "", "power": 0.75, "role": "ids", "source": "a", "vocab": 10, "width": 0 },
// CHECK-NEXT: { "buffer": 26, "feature": "a", "hotness": 1, "label_kind": "", "power": 0.75, "role": "offsets", "source": "a", "vocab": 0, "width": 0 },
// CHECK-NEXT: { "buffer": 27, "feature": "h", "hotness": 1, "label_kind": "", "power": 0.75, "role": "ids", "source": "C7", "vocab": 0, "width": 0 },
// CHECK-NEXT: { "buffer": 28, "feature": "h", "hotness": 1, "label_kind": "", "power": 0.75, "role": "offsets", "source": "C7", "vocab": 0, "width": 0 },
// CHECK-NEXT: { "buffer": 29, "feature": "n", "hotness": 1, "label_kind": "", "power": 0.5, "role": "negatives", "source": "n", "vocab": 30, "width": 2 },
// CHECK-NEXT: { "buffer": 30, "feature": "y", "hotness": 1, "label_kind": "binary", "power": 0.75, "role": "label", "source": "label", "vocab": 0, "width": 1 } ]
// CHECK-SAME: "loss_buffer": 39
// CHECK-SAME: "memory": { "arena_bytes": 8128, "by_role": { "activation": 1692, "grad": 1784, "input": 336, "optimizer_state": 1552, "param": 56, "table": 1600, "workspace": 4 }, "lower_bound_bytes": 5960, "peak_bytes": 8128, "strategy": "sequential" }
// CHECK-SAME: "model": "tiny"
// CHECK-SAME: "notes": [ "step: {{[0-9]+}} forward and 17 backward kernels; update: 11 kernels", "-emb-to-plan: buffers laid out without reuse (-emb-plan-memory not run)" ]
// CHECK-SAME: "params": [ { "buffer": 0, "grad": 1
// CHECK-SAME: "init": { "gain": 1.0, "high": 0.0, "kind": "xavier_uniform", "low": 0.0, "mean": 0.0, "std": 0.0, "value": 0.0 }, "name": "w"
// CHECK-SAME: "optimizer": { "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "initial_accumulator": 0.0, "kind": "adam", "lr": 0.001, "momentum": 0.0, "weight_decay": 0.0, "weight_decay_mode": "lazy" }
// CHECK-SAME: "state": [ 2, 3 ] },
// CHECK-NEXT: { "buffer": 4, "grad": 5
// CHECK-SAME: "init": { "gain": 1.0, "high": 0.0, "kind": "zeros", "low": 0.0, "mean": 0.0, "std": 0.0, "value": 0.0 }, "name": "b"
// CHECK-SAME: "optimizer": { "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "initial_accumulator": 0.0, "kind": "adam", "lr": 0.001, "momentum": 0.0, "weight_decay": 0.0, "weight_decay_mode": "lazy" }
// CHECK-SAME: "state": [ 6, 7 ] } ]
// CHECK-SAME: "prediction_buffer": 38
// CHECK-SAME: "step": [ { "attrs": { "pooling": "sum", "table": 0 }
// CHECK-SAME: "inputs": [ 25, 26 ], "op": "lookup", "outputs": [ 31 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "buckets": 20, "seed": 1 }, "bytes": {{[0-9]+}}, "inputs": [ 27 ], "op": "hash", "outputs": [ 32 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "pooling": "mean", "table": 1 }, "bytes": {{[0-9]+}}, "inputs": [ 32, 28 ], "op": "lookup", "outputs": [ 33 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "pooling": "sum", "table": 3 }, "bytes": {{[0-9]+}}, "inputs": [ 25, 26 ], "op": "lookup", "outputs": [ 34 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "table": 2 }, "bytes": {{[0-9]+}}, "inputs": [ 29 ], "op": "gather", "outputs": [ 35 ], "stage": 0 },
// CHECK-NEXT: { "attrs": {}, "bytes": {{[0-9]+}}, "inputs": [ 34, 35 ], "op": "dot", "outputs": [ 36 ], "stage": 0 },
// CHECK-NEXT: { "attrs": {}, "bytes": {{[0-9]+}}, "inputs": [ 31, 24, 33, 36 ], "op": "concat", "outputs": [ 37 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "bias": true }, "bytes": {{[0-9]+}}, "inputs": [ 37, 0, 4 ], "op": "dense", "outputs": [ 38 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "kind": "bce_with_logits" }, "bytes": {{[0-9]+}}, "inputs": [ 38, 30 ], "op": "loss", "outputs": [ 39 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "kind": "bce_with_logits" }, "bytes": {{[0-9]+}}, "inputs": [ 38, 30 ], "op": "loss_grad", "outputs": [ 40 ], "stage": 0 },
// CHECK-NEXT: { "attrs": {}, "bytes": {{[0-9]+}}, "inputs": [ 40, 0 ], "op": "dense_grad_input", "outputs": [ 41 ], "stage": 0 },
// CHECK-NEXT: { "attrs": {}, "bytes": {{[0-9]+}}, "inputs": [ 37, 40 ], "op": "dense_grad_weight", "outputs": [ 42 ], "stage": 0 },
// CHECK-NEXT: { "attrs": {}, "bytes": {{[0-9]+}}, "inputs": [ 40 ], "op": "bias_grad", "outputs": [ 43 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "param": 1 }, "bytes": {{[0-9]+}}, "inputs": [ 43 ], "op": "accumulate_grad", "outputs": [ 5 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "param": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 42 ], "op": "accumulate_grad", "outputs": [ 1 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "offset": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 41 ], "op": "slice", "outputs": [ 44 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "offset": 7 }, "bytes": {{[0-9]+}}, "inputs": [ 41 ], "op": "slice", "outputs": [ 45 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "offset": 11 }, "bytes": {{[0-9]+}}, "inputs": [ 41 ], "op": "slice", "outputs": [ 46 ], "stage": 0 },
// CHECK-NEXT: { "attrs": {}, "bytes": {{[0-9]+}}, "inputs": [ 46, 34, 35 ], "op": "dot_grad", "outputs": [ 47, 48 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "row_offset": 0, "table": 2 }, "bytes": {{[0-9]+}}, "inputs": [ 29, 48 ], "op": "accumulate_rows", "outputs": [ 16, 17 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "pooling": "sum", "table": 3 }, "bytes": {{[0-9]+}}, "inputs": [ 25, 26, 47 ], "op": "lookup_grad", "outputs": [ 49 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "row_offset": 0, "table": 3 }, "bytes": {{[0-9]+}}, "inputs": [ 25, 49 ], "op": "accumulate_rows", "outputs": [ 21, 22 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "pooling": "mean", "table": 1 }, "bytes": {{[0-9]+}}, "inputs": [ 32, 28, 45 ], "op": "lookup_grad", "outputs": [ 50 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "row_offset": 0, "table": 1 }, "bytes": {{[0-9]+}}, "inputs": [ 32, 50 ], "op": "accumulate_rows", "outputs": [ 12, 13 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "pooling": "sum", "table": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 25, 26, 44 ], "op": "lookup_grad", "outputs": [ 51 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "row_offset": 0, "table": 0 }
// CHECK-SAME: "inputs": [ 25, 51 ], "op": "accumulate_rows", "outputs": [ 9, 10 ], "stage": 0 } ]
// CHECK-SAME: "tables": [ { "buffer": 8, "dim": 4, "grad_rows": 9, "grad_values": 10
// CHECK-SAME: "init": { "gain": 1.0, "high": 0.0, "kind": "zeros", "low": 0.0, "mean": 0.0, "std": 0.0, "value": 0.0 }, "name": "sgd_t"
// CHECK-SAME: "optimizer": { "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "initial_accumulator": 0.0, "kind": "sgd", "lr": 0.01, "momentum": 0.0, "weight_decay": 0.0, "weight_decay_mode": "lazy" }, "qparams": -1, "rows": 10
// CHECK-SAME: "state": [], "storage": "f32" },
// CHECK-NEXT: { "buffer": 11, "dim": 4, "grad_rows": 12, "grad_values": 13
// CHECK-SAME: "init": { "gain": 1.0, "high": 0.0, "kind": "normal", "low": 0.0, "mean": 0.0, "std": 0.01, "value": 0.0 }, "name": "ada_t"
// CHECK-SAME: "optimizer": { "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "initial_accumulator": 0.0, "kind": "adagrad", "lr": 0.05, "momentum": 0.0, "weight_decay": 0.0, "weight_decay_mode": "lazy" }, "qparams": -1, "rows": 20
// CHECK-SAME: "state": [ 14 ], "storage": "f32" },
// CHECK-NEXT: { "buffer": 15, "dim": 4, "grad_rows": 16, "grad_values": 17
// CHECK-SAME: "init": { "gain": 1.0, "high": 0.1, "kind": "uniform", "low": -0.1, "mean": 0.0, "std": 0.0, "value": 0.0 }, "name": "adam_t"
// CHECK-SAME: "optimizer": { "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "initial_accumulator": 0.0, "kind": "adam", "lr": 0.01, "momentum": 0.0, "weight_decay": 0.0, "weight_decay_mode": "lazy" }, "qparams": -1, "rows": 30
// CHECK-SAME: "state": [ 18, 19 ], "storage": "f32" },
// CHECK-NEXT: { "buffer": 20, "dim": 4, "grad_rows": 21, "grad_values": 22
// CHECK-SAME: "init": { "gain": 1.0, "high": 0.0, "kind": "zeros", "low": 0.0, "mean": 0.0, "std": 0.0, "value": 0.0 }, "name": "row_t"
// CHECK-SAME: "optimizer": { "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "initial_accumulator": 0.0, "kind": "rowwise_adagrad", "lr": 0.01, "momentum": 0.0, "weight_decay": 0.0, "weight_decay_mode": "lazy" }, "qparams": -1, "rows": 40
// CHECK-SAME: "state": [ 23 ], "storage": "f32" } ]
// CHECK-SAME: "update": [ { "attrs": { "table": 2 }
// CHECK-SAME: "inputs": [], "op": "coalesce_rows", "outputs": [ 16, 17 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "table": 3 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "coalesce_rows", "outputs": [ 21, 22 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "table": 1 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "coalesce_rows", "outputs": [ 12, 13 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "table": 0 }, "bytes": {{[0-9]+}}, "inputs": [], "op": "coalesce_rows", "outputs": [ 9, 10 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 0.5, "max_norm": 1.0 }, "bytes": {{[0-9]+}}, "inputs": [ 1, 5, 10, 13, 17, 22 ], "op": "clip_grad_norm", "outputs": [ 52 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 0.5, "param": 1 }, "bytes": {{[0-9]+}}, "inputs": [ 5, 52 ], "op": "update_param", "outputs": [ 4, 6, 7 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 0.5, "param": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 1, 52 ], "op": "update_param", "outputs": [ 0, 2, 3 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 0.5, "table": 2 }, "bytes": {{[0-9]+}}, "inputs": [ 16, 17, 52 ], "op": "update_table", "outputs": [ 15, 18, 19 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 0.5, "table": 3 }, "bytes": {{[0-9]+}}, "inputs": [ 21, 22, 52 ], "op": "update_table", "outputs": [ 20, 23 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 0.5, "table": 1 }, "bytes": {{[0-9]+}}, "inputs": [ 12, 13, 52 ], "op": "update_table", "outputs": [ 11, 14 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 0.5, "table": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 9, 10, 52 ], "op": "update_table", "outputs": [ 8 ], "stage": 0 } ], "version": 12}

// Input: module @tiny, chunk 1 of Inputs/to-plan.mlir.

// -----

// Plain SGD for the dense parameters: no state. A table with SGD momentum:
// one state. No accumulation (grad_scale 1) and no clipping (no
// clip_grad_norm kernel, no clip scale buffer). Static ids need no
// emb.max_ids.
// CHECK:      { "arena_bytes": 1152, "buffers": [ { "bytes": 8, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "param/w", "offset": 0, "origin": "frontend", "parent": -1, "rank": -1, "role": "param", "shape": [ 2, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 8, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "grad/w", "offset": 64, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 2, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "table/t", "offset": 128, "origin": "frontend", "parent": -1, "rank": -1, "role": "table", "shape": [ 8, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 24, "dtype": "i64", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_rows/t", "offset": 192, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 3 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 24, "dtype": "f32", "dynamic": true, "first_use": -1, "last_use": -1, "name": "grad_values/t", "offset": 256, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "grad", "shape": [ 3, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 64, "dtype": "f32", "dynamic": false, "first_use": -1, "last_use": -1, "name": "state/t/0", "offset": 320, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "optimizer_state", "shape": [ 8, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 24, "dtype": "i64", "dynamic": false, "first_use": 0, "last_use": 10, "name": "input/s/ids", "offset": 384, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 3 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 24, "dtype": "i64", "dynamic": false, "first_use": 0, "last_use": 9, "name": "input/s/offsets", "offset": 448, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 3 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 8, "dtype": "f32", "dynamic": false, "first_use": 0, "last_use": 4, "name": "input/y/label", "offset": 512, "origin": "frontend", "parent": -1, "rank": -1, "role": "input", "shape": [ 2, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 16, "dtype": "f32", "dynamic": false, "first_use": 0, "last_use": 8, "name": "act/9/lookup", "offset": 576, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 2, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 16, "dtype": "f32", "dynamic": false, "first_use": 1, "last_use": 6, "name": "act/10/activation", "offset": 640, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 2, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 8, "dtype": "f32", "dynamic": false, "first_use": 2, "last_use": 10, "name": "act/11/dense", "offset": 704, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 2, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 4, "dtype": "f32", "dynamic": false, "first_use": 3, "last_use": 10, "name": "act/12/loss", "offset": 768, "origin": "frontend", "parent": -1, "rank": -1, "role": "activation", "shape": [ 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 8, "dtype": "f32", "dynamic": false, "first_use": 4, "last_use": 6, "name": "act/13/loss_grad", "offset": 832, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 2, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 16, "dtype": "f32", "dynamic": false, "first_use": 5, "last_use": 8, "name": "act/14/dense_grad_input", "offset": 896, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 2, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 8, "dtype": "f32", "dynamic": false, "first_use": 6, "last_use": 7, "name": "act/15/dense_grad_weight", "offset": 960, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 2, 1 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 16, "dtype": "f32", "dynamic": false, "first_use": 8, "last_use": 9, "name": "act/16/activation_grad", "offset": 1024, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 2, 2 ], "slots": 1 },
// CHECK-NEXT: { "bytes": 24, "dtype": "f32", "dynamic": false, "first_use": 9, "last_use": 10, "name": "act/17/lookup_grad", "offset": 1088, "origin": "emb-autodiff", "parent": -1, "rank": -1, "role": "activation", "shape": [ 3, 2 ], "slots": 1 } ]
// CHECK-SAME: "compiler": "embc {{[^"]*}}"
// CHECK-SAME: "config": { "batch_size": 2, "data_parallel": 1, "decay_steps": 0, "grad_accumulation": 1, "grad_clip_norm": 0.0, "loss": "mse", "loss_scaling": { "backoff": 0.5, "enabled": false, "growth": 2.0, "initial": 65536.0, "interval": 2000 }, "lr_schedule": "constant", "micro_batches": 1, "pipeline_stages": 1, "precision": "fp32", "schedule": "gpipe", "seed": 0, "stage_ranks": [], "warmup_steps": 0 }
// CHECK-SAME: "format": "embc.plan"
// CHECK-SAME: "forward_kernels": 4
// CHECK-SAME: "inputs": [ { "buffer": 6, "feature": "s", "hotness": 1, "label_kind": "", "power": 0.75, "role": "ids", "source": "s", "vocab": 8, "width": 0 },
// CHECK-NEXT: { "buffer": 7, "feature": "s", "hotness": 1, "label_kind": "", "power": 0.75, "role": "offsets", "source": "s", "vocab": 0, "width": 0 },
// CHECK-NEXT: { "buffer": 8, "feature": "y", "hotness": 1, "label_kind": "real", "power": 0.75, "role": "label", "source": "y", "vocab": 0, "width": 1 } ]
// CHECK-SAME: "loss_buffer": 12
// CHECK-SAME: "memory": { "arena_bytes": 1152, "by_role": { "activation": 116, "grad": 56, "input": 56, "optimizer_state": 64, "param": 8, "table": 64, "workspace": 0 }, "lower_bound_bytes": 316, "peak_bytes": 1152, "strategy": "sequential" }
// CHECK-SAME: "model": "plain"
// CHECK-SAME: "notes": [ "step: {{[0-9]+}} forward and 7 backward kernels; update: 3 kernels", "-emb-to-plan: buffers laid out without reuse (-emb-plan-memory not run)" ]
// CHECK-SAME: "params": [ { "buffer": 0, "grad": 1
// CHECK-SAME: "init": { "gain": 1.0, "high": 0.0, "kind": "xavier_uniform", "low": 0.0, "mean": 0.0, "std": 0.0, "value": 0.0 }, "name": "w"
// CHECK-SAME: "optimizer": { "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "initial_accumulator": 0.0, "kind": "sgd", "lr": 0.1, "momentum": 0.0, "weight_decay": 0.0, "weight_decay_mode": "lazy" }
// CHECK-SAME: "state": [] } ]
// CHECK-SAME: "prediction_buffer": 11
// CHECK-SAME: "step": [ { "attrs": { "pooling": "max", "table": 0 }
// CHECK-SAME: "inputs": [ 6, 7 ], "op": "lookup", "outputs": [ 9 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "kind": "tanh" }, "bytes": {{[0-9]+}}, "inputs": [ 9 ], "op": "activation", "outputs": [ 10 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "bias": false }, "bytes": {{[0-9]+}}, "inputs": [ 10, 0 ], "op": "dense", "outputs": [ 11 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "kind": "mse" }, "bytes": {{[0-9]+}}, "inputs": [ 11, 8 ], "op": "loss", "outputs": [ 12 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "kind": "mse" }, "bytes": {{[0-9]+}}, "inputs": [ 11, 8 ], "op": "loss_grad", "outputs": [ 13 ], "stage": 0 },
// CHECK-NEXT: { "attrs": {}, "bytes": {{[0-9]+}}, "inputs": [ 13, 0 ], "op": "dense_grad_input", "outputs": [ 14 ], "stage": 0 },
// CHECK-NEXT: { "attrs": {}, "bytes": {{[0-9]+}}, "inputs": [ 10, 13 ], "op": "dense_grad_weight", "outputs": [ 15 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "param": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 15 ], "op": "accumulate_grad", "outputs": [ 1 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "kind": "tanh" }, "bytes": {{[0-9]+}}, "inputs": [ 14, 9 ], "op": "activation_grad", "outputs": [ 16 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "pooling": "max", "table": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 6, 7, 16 ], "op": "lookup_grad", "outputs": [ 17 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "row_offset": 0, "table": 0 }
// CHECK-SAME: "inputs": [ 6, 17 ], "op": "accumulate_rows", "outputs": [ 3, 4 ], "stage": 0 } ]
// CHECK-SAME: "tables": [ { "buffer": 2, "dim": 2, "grad_rows": 3, "grad_values": 4
// CHECK-SAME: "init": { "gain": 1.0, "high": 0.0, "kind": "zeros", "low": 0.0, "mean": 0.0, "std": 0.0, "value": 0.0 }, "name": "t"
// CHECK-SAME: "optimizer": { "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "initial_accumulator": 0.0, "kind": "sgd", "lr": 0.01, "momentum": 0.9, "weight_decay": 0.0, "weight_decay_mode": "lazy" }, "qparams": -1, "rows": 8
// CHECK-SAME: "state": [ 5 ], "storage": "f32" } ]
// CHECK-SAME: "update": [ { "attrs": { "table": 0 }
// CHECK-SAME: "inputs": [], "op": "coalesce_rows", "outputs": [ 3, 4 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 1.0, "param": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 1 ], "op": "update_param", "outputs": [ 0 ], "stage": 0 },
// CHECK-NEXT: { "attrs": { "grad_scale": 1.0, "table": 0 }, "bytes": {{[0-9]+}}, "inputs": [ 3, 4 ], "op": "update_table", "outputs": [ 2, 5 ], "stage": 0 } ], "version": 12}

// Input: module @plain, chunk 2 of Inputs/to-plan.mlir.
