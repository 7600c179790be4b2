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

#endif // EMBC_PASSES_PASSES_TD
