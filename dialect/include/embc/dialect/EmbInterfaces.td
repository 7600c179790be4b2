//===- EmbInterfaces.td - emb op interfaces --------------------*- tablegen -*-===//
//
// Cross-cutting behaviour that passes query through interfaces instead of
// switching on op names.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBINTERFACES_TD
#define EMBC_DIALECT_EMBINTERFACES_TD

include "mlir/IR/OpBase.td"

def Emb_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::embc::emb";
  let description = [{
    The forward cost of one op for one batch: floating-point operations and
    bytes read plus written. Used by the model summary, the auto planner and
    the pipeline cost model. Jagged inputs (bags of ids) count one id per bag,
    so their figures are lower bounds.
  }];
  let methods = [
    InterfaceMethod<"Floating-point operations of the forward.", "int64_t",
                    "getForwardFlops">,
    InterfaceMethod<"Bytes read and written by the forward.", "int64_t",
                    "getForwardBytes">,
  ];
}

def Emb_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::embc::emb";
  let description = [{
    The backward rule of a differentiable op. `-emb-autodiff` walks the
    forward ops in reverse and asks each one to build its own backward, so a
    new op brings its gradient with it and the pass never switches on op
    names.

    `resultGrads` holds the gradient of each result, or a null Value where
    the result does not reach the loss. The loss is the root of the backward
    pass: the pass hands a loss op its own result as the gradient, meaning
    "d loss / d loss = 1". `needOperandGrad[i]` says whether operand i
    depends on a trainable value; the rule returns, in `operandGrads` (one
    entry per operand), the gradient of each operand it was asked for and a
    null Value for the rest. Ops that read trainable storage (`emb.get`,
    `emb.lookup`, `emb.gather`) also emit the accumulation of the storage's
    gradient (`emb.accumulate_grad`, `emb.accumulate_rows`).
  }];
  let methods = [
    InterfaceMethod<"Builds the backward of this op at the builder's point.",
      "::mlir::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::mlir::ArrayRef<bool>":$needOperandGrad,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // EMBC_DIALECT_EMBINTERFACES_TD
