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

#endif // EMBC_DIALECT_EMBINTERFACES_TD
