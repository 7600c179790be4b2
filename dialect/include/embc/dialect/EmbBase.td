//===- EmbBase.td - emb dialect definition and base op class -*- tablegen -*-===//
//
// The `emb` dialect describes the training of embedding-heavy models: the
// embedding tables and dense parameters of a model (module-level symbols), the
// forward graph on tensors, and (after passes) the backward, the optimizer
// updates and the execution plan.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBBASE_TD
#define EMBC_DIALECT_EMBBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Emb_Dialect : Dialect {
  let name = "emb";
  let cppNamespace = "::embc::emb";
  let summary = "Training of embedding-heavy models (tables, lookups, MLPs, losses).";
  let description = [{
    The `emb` dialect models one training step of an embedding-heavy model
    (DLRM, DCN, Wide&Deep, two-tower retrieval, matrix factorisation,
    skip-gram). Tables (`emb.table`) and dense parameters (`emb.param`) are
    module-level symbols; the forward graph lives in `func.func @forward`,
    whose arguments are the batch (feature ids, offsets, dense values, labels)
    and whose results are the loss and the predictions. The training
    configuration is the module attribute `emb.training`, the plan knobs are
    `emb.plan`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

class Emb_Op<string mnemonic, list<Trait> traits = []>
    : Op<Emb_Dialect, mnemonic, traits>;

// Marks ops of the backward pass (defined beside their forward op or in
// EmbGradOps.td), so later passes and the plan can tell the
// forward prefix of a training step (evaluation runs only that prefix).
def Emb_Backward : NativeOpTrait<"BackwardOp"> {
  let cppNamespace = "::embc::emb";
}

class Emb_GradOp<string mnemonic, list<Trait> traits = []>
    : Emb_Op<mnemonic, !listconcat([Emb_Backward], traits)>;

class Emb_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Emb_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

/// A float parameter of an attribute, printed so that it round-trips exactly.
/// `Real` wraps a double so that attribute storage can hash it.
class Emb_F64Param<string desc, string default>
    : AttrOrTypeParameter<"::embc::emb::Real", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::embc::emb::Real> {
      double v;
      if (::mlir::failed($_parser.parseFloat(v)))
        return ::mlir::failure();
      return ::embc::emb::Real{v};
    }() }];
  let printer = [{ ::embc::emb::printReal($_printer, $_self) }];
  let defaultValue = "::embc::emb::Real{" # default # "}";
}

#endif // EMBC_DIALECT_EMBBASE_TD
