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
