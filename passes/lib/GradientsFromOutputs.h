//===- GradientsFromOutputs.h - activation gradients from outputs -*- C++ -*-===//
//
// Private to EmbPasses: the rewrite -emb-fuse and -emb-remat both start
// with, so the backward reads an activation's output rather than its input.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_GRADIENTSFROMOUTPUTS_H
#define EMBC_PASSES_LIB_GRADIENTSFROMOUTPUTS_H

#include "embc/dialect/EmbDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace embc {

/// activation_grad(dy, z) -> activation_grad(dy, f(z)) from_output for each
/// one in `block` whose activation f(z) is computed there, so the forward
/// need not keep z (gelu's derivative needs its input: it stays).
/// `keepAttrs`: the replacement keeps the discardable attributes (emb.stage
/// of -emb-pipeline, emb.remat).
inline void gradientsFromOutputs(mlir::Block &block, bool keepAttrs) {
  using namespace embc::emb;
  for (auto grad : llvm::make_early_inc_range(block.getOps<ActivationGradOp>())) {
    if (grad.getFromOutput() || grad.getKind() == Activation::gelu)
      continue;
    ActivationOp forward;
    for (mlir::Operation *user : grad.getInput().getUsers())
      if (auto act = mlir::dyn_cast<ActivationOp>(user); act && act.getKind() == grad.getKind())
        forward = act;
    if (!forward)
      continue;
    mlir::OpBuilder b(grad);
    auto replacement = ActivationGradOp::create(b, grad.getLoc(), grad.getKind(), grad.getGrad(),
                                                forward.getResult(), /*from_output=*/true);
    if (keepAttrs)
      replacement->setDiscardableAttrs(grad->getDiscardableAttrDictionary());
    grad.replaceAllUsesWith(replacement.getResult());
    grad.erase();
  }
}

} // namespace embc

#endif // EMBC_PASSES_LIB_GRADIENTSFROMOUTPUTS_H
