// -emb-quantize: lookups, gathers and max-pooled lookup gradients of tables
// in quantised storage are marked emb.dequantize (the storage they convert
// from), their updates emb.requantize = "stochastic", and the module
// emb.quantized; f32 tables and everything else are left alone.
// The RUN lines read Inputs/quantize.mlir: -emb-autodiff's output for the
// models in Inputs/quantize-forward.mlir (docs/testing.md).
// RUN: emb-opt %S/Inputs/quantize.mlir -split-input-file -emb-quantize | FileCheck %s
// The marked IR parses back.
// RUN: emb-opt %S/Inputs/quantize.mlir -split-input-file -emb-quantize | emb-opt -split-input-file \
// RUN:   | FileCheck %s
// tables= overrides every table's storage (here all int8).
// RUN: emb-opt %S/Inputs/quantize.mlir -split-input-file -emb-quantize="tables=int8" \
// RUN:   | FileCheck %s --check-prefix=INT8
// The plan of the first module: bf16 and int8 table buffers, the int8 scale
// and bias (origin emb-quantize), storage and qparams on the tables, and the
// kernels that say what they convert. One array element per line.
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/quantize.mlir \
// RUN:   | emb-opt -emb-quantize -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PLAN
// Packed: the int8 tables become one u8 batch with one rows x 2 f16 scale/bias
// buffer, the members' tables and qparams views into them.
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/quantize.mlir \
// RUN:   | emb-opt -emb-quantize="tables=int8" -emb-pack-params \
// RUN:       -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PACKED
// int4 (tables=int4): u8 buffers of rows x dim/2 (two codes per byte), the
// same f16 scale/bias, "int4" on the tables and the kernels; packed, the
// members' views sit at dim/2 bytes and 4 scale/bias bytes per row.
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/quantize.mlir \
// RUN:   | emb-opt -emb-quantize="tables=int4" -emb-to-plan="emit-json=true cuda=false" \
// RUN:       -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=INT4
// RUN: sed -n '/^\/\/ -----/q;p' %S/Inputs/quantize.mlir \
// RUN:   | emb-opt -emb-quantize="tables=int4" -emb-pack-params \
// RUN:       -emb-to-plan="emit-json=true cuda=false" -o /dev/null \
// RUN:   | tr -d '\n' | sed -e 's/}, *{/},\n{/g' | FileCheck %s --check-prefix=PACKED4

// CHECK-LABEL: module @quant
// CHECK-SAME:    emb.quantized = {rounding = "stochastic", tables = 3 : i64}
// CHECK:         emb.table @bt[10 x 4] bf16
// CHECK:         emb.table @it[20 x 4] int8_rowwise
// CHECK:         emb.table @ht[30 x 4] f16
// CHECK:         emb.table @ft[10 x 4] f32
// CHECK-LABEL:   func.func @train_step
// CHECK:           emb.lookup @bt[{{.*}}] sum {emb.dequantize = #emb<storage bf16>}
// CHECK:           emb.lookup @it[{{.*}}] mean {emb.dequantize = #emb<storage int8_rowwise>}
// CHECK:           emb.lookup @ht[{{.*}}] max {emb.dequantize = #emb<storage f16>}
// CHECK:           emb.gather @bt[{{.*}}] {emb.dequantize = #emb<storage bf16>}
// The f32 table's lookup is not marked.
// CHECK:           emb.lookup @ft[{{.*}}] sum :
// Only the max-pooled gradient reads the table.
// CHECK:           emb.lookup_grad @ht[{{.*}}] max %{{[0-9]+}} {emb.dequantize = #emb<storage f16>}
// CHECK-NOT:       emb.lookup_grad @it[{{.*}}] {{.*}}emb.dequantize
// CHECK-LABEL:   func.func @update
// CHECK-DAG:       emb.update @bt {emb.requantize = "stochastic"}
// CHECK-DAG:       emb.update @it {emb.requantize = "stochastic"}
// CHECK-DAG:       emb.update @ht {emb.requantize = "stochastic"}
// CHECK-DAG:       emb.update @ft{{$}}

// INT8-LABEL: module @quant
// INT8-SAME:    tables = 4 : i64
// INT8:         emb.table @bt[10 x 4] int8_rowwise
// INT8:         emb.table @ft[10 x 4] int8_rowwise
// INT8:         emb.lookup @ft[{{.*}}] sum {emb.dequantize = #emb<storage int8_rowwise>}
// INT8:         emb.update @ft {emb.requantize = "stochastic"}

// The bf16 table: 10 x 4 x 2 bytes; its adagrad state stays f32.
// PLAN:      { "bytes": 80, "dtype": "bf16", {{.*}}"name": "table/bt", {{.*}}"parent": -1, "rank": -1, "role": "table", "shape": [ 10, 4 ]
// PLAN:      { "bytes": 160, "dtype": "f32", {{.*}}"name": "state/bt/0", {{.*}}"role": "optimizer_state", "shape": [ 10, 4 ]
// The int8 table: 20 x 4 codes, then 20 x 2 f16 scale and bias.
// PLAN-NEXT: { "bytes": 80, "dtype": "u8", {{.*}}"name": "table/it", {{.*}}"role": "table", "shape": [ 20, 4 ]
// PLAN-NEXT: { "bytes": 80, "dtype": "f16", {{.*}}"name": "qparams/it", {{.*}}"origin": "emb-quantize", {{.*}}"role": "table", "shape": [ 20, 2 ]
// PLAN:      { "bytes": 240, "dtype": "f16", {{.*}}"name": "table/ht", {{.*}}"role": "table", "shape": [ 30, 4 ]
// PLAN:      { "bytes": 160, "dtype": "f32", {{.*}}"name": "table/ft", {{.*}}"role": "table", "shape": [ 10, 4 ]
// Kernels: lookups and the gather say what they dequantise; the updates requantise.
// PLAN:      "dequantize": "bf16", "pooling": "sum", "table": 0 }, {{.*}}"op": "lookup"
// PLAN-NEXT: "dequantize": "int8", "pooling": "mean", "table": 1 }, {{.*}}"op": "lookup"
// PLAN-NEXT: "dequantize": "f16", "pooling": "max", "table": 2 }, {{.*}}"op": "lookup"
// PLAN-NEXT: "dequantize": "bf16", "table": 0 }, {{.*}}"op": "gather"
// PLAN-NEXT: { "attrs": { "pooling": "sum", "table": 3 }, {{.*}}"op": "lookup"
// Only the max-pooled gradient reads (and dequantises) the table.
// PLAN:      "dequantize": "f16", "pooling": "max", "table": 2 }, {{.*}}"op": "lookup_grad"
// PLAN:      { "attrs": { "pooling": "mean", "table": 1 }, {{.*}}"op": "lookup_grad"
// The tables: storage, and qparams (the buffer index) only for int8.
// PLAN:      "name": "bt", {{.*}}"qparams": -1, {{.*}}"storage": "bf16"
// PLAN-NEXT: "name": "it", {{.*}}"qparams": 7, {{.*}}"storage": "int8"
// PLAN-NEXT: "name": "ht", {{.*}}"qparams": -1, {{.*}}"storage": "f16"
// PLAN-NEXT: "name": "ft", {{.*}}"qparams": -1, {{.*}}"storage": "f32"
// PLAN:      { "attrs": { "grad_scale": 1.0, "table": 3 }, {{.*}}"op": "update_table"
// PLAN-NEXT: { "attrs": { "grad_scale": 1.0, "requantize": "stochastic", "table": 0 }, {{.*}}"op": "update_table"

// PACKED:      { "bytes": 280, "dtype": "u8", {{.*}}"name": "tables/tables_d4", {{.*}}"parent": -1, "rank": -1, "role": "table", "shape": [ 70, 4 ]
// PACKED-NEXT: { "bytes": 280, "dtype": "f16", {{.*}}"name": "qparams/tables_d4", {{.*}}"parent": -1, "rank": -1, "role": "table", "shape": [ 70, 2 ]
// PACKED:      { "bytes": 80, "dtype": "u8", {{.*}}"name": "table/it", {{.*}}"parent": [[CODES:[0-9]+]], "rank": -1, "role": "table", "shape": [ 20, 4 ]
// PACKED-NEXT: { "bytes": 80, "dtype": "f16", {{.*}}"name": "qparams/it", {{.*}}"parent": [[SCALES:[0-9]+]], "rank": -1, "role": "table", "shape": [ 20, 2 ]
// PACKED:      "qparams": [[SCALES]], {{.*}}"storage": "int8"
// PACKED:      { "attrs": { "batch": 0, "grad_scale": 1.0, "requantize": "stochastic" }, {{.*}}"op": "update_table"

// INT4:      { "bytes": 20, "dtype": "u8", {{.*}}"name": "table/bt", {{.*}}"role": "table", "shape": [ 10, 2 ]
// INT4-NEXT: { "bytes": 40, "dtype": "f16", {{.*}}"name": "qparams/bt", {{.*}}"origin": "emb-quantize", {{.*}}"role": "table", "shape": [ 10, 2 ]
// INT4:      { "bytes": 40, "dtype": "u8", {{.*}}"name": "table/it", {{.*}}"role": "table", "shape": [ 20, 2 ]
// INT4-NEXT: { "bytes": 80, "dtype": "f16", {{.*}}"name": "qparams/it", {{.*}}"role": "table", "shape": [ 20, 2 ]
// INT4:      "dequantize": "int4", "pooling": "mean", "table": 1 }, {{.*}}"op": "lookup"
// INT4:      "dequantize": "int4", "pooling": "max", "table": 2 }, {{.*}}"op": "lookup_grad"
// INT4:      "name": "it", {{.*}}"qparams": 8, {{.*}}"storage": "int4"
// INT4:      { "attrs": { "grad_scale": 1.0, "requantize": "stochastic", "table": 0 }, {{.*}}"op": "update_table"

// The batch: 70 rows x 2 bytes of codes, 70 x 2 f16; member @it (rows 10..29)
// at byte 128 + 10 * 2 of the codes and 320 + 10 * 4 of the scale/bias.
// PACKED4:      { "bytes": 140, "dtype": "u8", {{.*}}"name": "tables/tables_d4", "offset": 128, {{.*}}"parent": -1, "rank": -1, "role": "table", "shape": [ 70, 2 ]
// PACKED4-NEXT: { "bytes": 280, "dtype": "f16", {{.*}}"name": "qparams/tables_d4", "offset": 320, {{.*}}"parent": -1, "rank": -1, "role": "table", "shape": [ 70, 2 ]
// PACKED4:      { "bytes": 40, "dtype": "u8", {{.*}}"name": "table/it", "offset": 148, {{.*}}"parent": 4, "rank": -1, "role": "table", "shape": [ 20, 2 ]
// PACKED4-NEXT: { "bytes": 80, "dtype": "f16", {{.*}}"name": "qparams/it", "offset": 360, {{.*}}"parent": 5, "rank": -1, "role": "table", "shape": [ 20, 2 ]
// PACKED4:      "-emb-quantize: tables 4 int4 (420 bytes with row-wise scale/bias)"
// PACKED4:      "qparams": 5, {{.*}}"storage": "int4"

// Input: module @quant, chunk 1 of Inputs/quantize.mlir.

// -----

// Nothing quantised: only the module is tagged.
// CHECK-LABEL: module @plain
// CHECK-SAME:    emb.quantized = {rounding = "stochastic", tables = 0 : i64}
// CHECK-NOT:     emb.dequantize
// CHECK-NOT:     emb.requantize
// Input: module @plain, chunk 2 of Inputs/quantize.mlir.
