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

def Emb_PlanLoweringOpInterface : OpInterface<"PlanLoweringOpInterface"> {
  let cppNamespace = "::embc::emb";
  let description = [{
    How an op becomes kernels of the runtime plan. `-emb-to-plan` walks
    @train_step and @update in order and asks each op to lower itself
    through a PlanEmitter (PlanEmitter.h): the buffers of its operands, new
    buffers for its results, the plan's parameters and tables by symbol, and
    `emit` for each kernel. The pass never switches on op names, so a new op
    brings its lowering with it.

    The default lowering is the kernel of the catalogue named like the op
    (`emb.dot` -> `dot`): operands' buffers in, new activation buffers out,
    and each attribute the catalogue declares for the kernel taken from the
    op's attribute of the same name (numbers and flags). Ops with other
    attributes (enums, symbols), or that read or write the plan's
    parameters and tables, override it.
  }];
  let methods = [
    InterfaceMethod<"Emits this op's kernels (usually one) into the plan.",
      "::mlir::LogicalResult", "lowerToPlan",
      (ins "::embc::emb::PlanEmitter &":$emitter), [{}],
      [{ return ::embc::emb::lowerToNamedKernel($_op, emitter); }]>,
  ];
}

#endif // EMBC_DIALECT_EMBINTERFACES_TD
