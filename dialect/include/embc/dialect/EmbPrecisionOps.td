//===- EmbPrecisionOps.td - mixed precision: compute type, loss scaling -*- tablegen -*-===//
//
// What the dense half of -emb-quantize (passes/lib/QuantizeDense.cpp) puts
// into the training IR: the compute precision of dense products as the
// discardable attribute `emb.compute = #emb<precision bf16>` on emb.dense,
// emb.interaction, emb.cross and their gradient ops, `emb.loss_scaled` on the
// emb.loss_grad of an fp16 model, and the op below at the head of @update.
// Included from EmbOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBPRECISIONOPS_TD
#define EMBC_DIALECT_EMBPRECISIONOPS_TD

/// `#emb<precision bf16>`: the value of `emb.compute`.
def Emb_PrecisionAttr : EnumAttr<Emb_Dialect, Emb_Precision, "precision">;

def Emb_UnscaleGradsOp : Emb_GradOp<"unscale_grads", [Emb_LowersItself, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "fp16 dynamic loss scaling: unscale all gradients, skip the update on overflow";
  let description = [{
    The loss gradient of an fp16 model is multiplied by a scale S (held by
    the runtime, starting at `initial`), so every accumulated gradient, dense
    and sparse (embedding rows), is S times too large. This op divides them
    all by S and checks them for inf/NaN. If any is not finite, the rest of
    @update does not run (no parameter, table or optimizer state changes,
    and the optimizer step count does not advance) and S is multiplied by
    `backoff`; after `interval` updates in a row without overflow S is
    multiplied by `growth`. It must come before any `emb.update` and
    `emb.clip_grad_norm` (the norm is of the unscaled gradients), at most
    once per function, and only in a module whose training precision is
    fp16.

    ```mlir
    func.func @update() {
      emb.unscale_grads initial(65536.0) growth(2.0) backoff(0.5) interval(2000)
      emb.coalesce_rows @t0
      emb.update @t0
      return
    }
    ```
  }];
  let arguments = (ins F64Attr:$initial, F64Attr:$growth, F64Attr:$backoff,
                       I64Attr:$interval);
  let assemblyFormat = [{
    `initial` `(` $initial `)` `growth` `(` $growth `)` `backoff` `(` $backoff `)`
    `interval` `(` $interval `)` attr-dict
  }];
  let hasVerifier = 1;
}

#endif // EMBC_DIALECT_EMBPRECISIONOPS_TD
