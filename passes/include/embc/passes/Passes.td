//===- Passes.td - emb passes ----------------------------------*- tablegen -*-===//
//
// Every -emb-* pass, grouped under banners, alphabetical within a group.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_PASSES_TD
#define EMBC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Analyses and reports
//===----------------------------------------------------------------------===//

def EmbPrintSummaryPass : Pass<"emb-print-summary", "::mlir::ModuleOp"> {
  let summary = "Print the model summary: tables, parameters, memory and FLOPs";
  let description = [{
    Prints, without changing the IR, what a practitioner wants to know about
    a model before training it: each embedding table (rows x dim, storage,
    bytes, optimizer), the dense parameters (count, bytes), and the forward
    cost per batch (FLOPs and bytes moved, from each op's CostOpInterface).

    ```
    model summary: 2 tables, 3 dense parameters
      table @user     [943 x 64]   f32   241.4 KiB  adagrad lr=0.05
      ...
      forward per batch: 1.2 MFLOP, 0.6 MB moved, 7 ops
    ```

    The module must be verified and hold a `func.func @forward`.
  }];
  let options = [
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the summary ('-' is stdout)">,
  ];
  let statistics = [
    Statistic<"numTables", "tables", "Number of embedding tables">,
    Statistic<"numParams", "params", "Number of dense parameters">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def EmbAutodiffPass : Pass<"emb-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build the training step: forward, backward and optimizer update";
  let description = [{
    Turns `func.func @forward` into `func.func @train_step`: the forward ops,
    then the backward pass, built in reverse by each op's
    GradientOpInterface rule (an op brings its own gradient). A value used
    several times gets the sum of its uses' gradients (`emb.add` for B x N
    activations; otherwise the producer's rule runs once per gradient, which
    accumulates the same total). Parameter gradients
    go to `emb.accumulate_grad`; embedding gradients stay sparse: one row per
    looked-up id, appended by `emb.accumulate_rows`, never dense over a
    table.

    A second function, `func.func @update`, holds the optimizer step:
    `emb.coalesce_rows` per table, `emb.clip_grad_norm` when the training
    config clips, and one `emb.update` per parameter and table.

    Refused, with an error on the table: global weight decay on a table whose
    optimizer cannot apply it without touching every row's state (anything
    but plain SGD and AdamW), since that would silently become a dense
    update.

    ```mlir
    // before
    func.func @forward(%x: tensor<4x2xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
      %w = emb.get @w : tensor<2x1xf32>
      %p = emb.dense %x, %w : tensor<4x2xf32>, tensor<2x1xf32> -> tensor<4x1xf32>
      %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
      return %l, %p : tensor<f32>, tensor<4x1xf32>
    }
    // after
    func.func @train_step(...) -> (tensor<f32>, tensor<4x1xf32>) {
      ...forward...
      %dp = emb.loss_grad mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
      %dw = emb.dense_grad_weight %x, %dp : tensor<4x2xf32>, tensor<4x1xf32> -> tensor<2x1xf32>
      emb.accumulate_grad @w, %dw : tensor<2x1xf32>
      return %l, %p : tensor<f32>, tensor<4x1xf32>
    }
    func.func @update() {
      emb.update @w
      return
    }
    ```
  }];
  let statistics = [
    Statistic<"numGradOps", "grad-ops", "Backward ops built">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect", "::mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// Optimisation (between -emb-autodiff and -emb-to-plan)
//===----------------------------------------------------------------------===//

def EmbFusePass : Pass<"emb-fuse", "::mlir::ModuleOp"> {
  let summary = "Group ops that the plan runs as single kernels";
  let description = [{
    Forms `emb.fused` groups in `@train_step` (values used only inside a
    group are never written to memory):

    - `lookup`: every table's hash + pooled lookup, one launch for all;
    - `dense_act`: a dense layer with its activation (GEMM + epilogue); the
      activation's gradient is rewritten to read the activation's output
      (`from_output`), so the pre-activation is not kept;
    - `dense_act_grad`: a dense layer's backward (activation gradient, bias
      and weight gradients accumulated in place, input gradient);
    - `interaction_concat` / `interaction_concat_grad`: the interaction
      written straight into its concatenation, and the backward of both
      (the copied input's two gradients summed in the same pass);
    - `embedding_update`: each table's (or table batch's) backward with its
      optimizer update, moved from `@update` into the step, so no per-id
      gradient rows are materialised. Only when the update follows every
      step (no gradient accumulation) and nothing needs all gradients first
      (no clipping), for sum and mean pooling;
    - `elementwise`: remaining chains of adds and activations.

    Numerics: the contract is agreement with an unfused run within 1e-5
    relative (fp32); the CPU kernels make the plain kernels' GEMM calls and
    sum in their order, so on every example the runs are bit-identical.

    ```mlir
    // before
    %z = emb.dense %x, %w, %b : ... -> tensor<8x4xf32>
    %y = emb.activation relu %z : tensor<8x4xf32>
    // after
    %y = emb.fused dense_act -> tensor<8x4xf32> {
      %z = emb.dense %x, %w, %b : ... -> tensor<8x4xf32>
      %a = emb.activation relu %z : tensor<8x4xf32>
      emb.yield %a : tensor<8x4xf32>
    }
    ```
    Needs `-emb-autodiff` first; refuses a module that is already fused.
  }];
  let statistics = [
    Statistic<"numGroups", "groups", "Fusion groups formed">,
    Statistic<"numFusedOps", "fused-ops", "Ops moved into fusion groups">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbPackParamsPass : Pass<"emb-pack-params", "::mlir::ModuleOp"> {
  let summary = "Pack dense parameters into one buffer and batch the tables";
  let description = [{
    Dense parameters of one element type become one `emb.param_pack`: values,
    gradients and optimizer state each in one contiguous buffer (members at
    64-byte aligned offsets, in backward order), so `@update` runs one fused
    optimizer step for all of them, clipping sums the gradient member by
    member in one sweep of contiguous memory, and the gradient is cut into all-reduce buckets of at most
    `bucket-kib` KiB (at member boundaries) for data-parallel training.

    Tables with the same dim, storage and optimizer become one
    `emb.table_batch`: one rows x dim buffer with per-table row offsets (and
    the optimizer state alongside), one sparse gradient, and one
    `emb.coalesce_rows` and `emb.update` for all of them.

    Training is bit-identical with and without packing: every value gets the
    same arithmetic, only its address changes.

    ```mlir
    // before (in @update)
    emb.update @w0
    emb.update @b0
    // after
    emb.param_pack @dense_f32 : f32[48] members [@b0, @w0] offsets [0, 16] buckets [0, 48]
    emb.update @dense_f32
    ```
    Needs `-emb-autodiff` first; refuses a module that is already packed.
  }];
  let options = [
    Option<"bucketKiB", "bucket-kib", "int64_t", /*default=*/"25600",
           "Largest all-reduce bucket of the packed gradient, in KiB">,
    Option<"batchTables", "batch-tables", "bool", /*default=*/"true",
           "Also batch tables of the same dim, storage and optimizer">,
  ];
  let statistics = [
    Statistic<"numPackedParams", "packed-params", "Parameters packed">,
    Statistic<"numBatchedTables", "batched-tables", "Tables batched">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbToPlanPass : Pass<"emb-to-plan", "::mlir::ModuleOp"> {
  let summary = "Lower the training step to an executable plan";
  let description = [{
    Codegen for the runtime: gives every value of `@train_step` a buffer in
    one arena (parameters, gradients, optimizer state, tables with their
    sparse-gradient rows, inputs, activations), turns each op into a kernel
    of the plan's catalogue (docs/plan-format.md), records the data inputs
    with the columns they read, the training config and the memory report,
    and writes the plan file (`output`), or its JSON form (`emit-json`).
    Needs `-emb-autodiff` first. The IR is not changed.
  }];
  let options = [
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the plan ('-' is stdout)">,
    Option<"emitJson", "emit-json", "bool", /*default=*/"false",
           "Write the plan body as indented JSON instead of the binary file">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

#endif // EMBC_PASSES_PASSES_TD
