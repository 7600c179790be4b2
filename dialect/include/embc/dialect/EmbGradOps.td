//===- EmbGradOps.td - backward and update ops -----------------*- tablegen -*-===//
//
// The ops `-emb-autodiff` builds: the gradient ops of the first op families,
// the accumulation of parameter and table gradients, and the optimizer
// update. Included from EmbOps.td. A new op's gradient op goes beside the op
// itself (emb.layer_norm_grad in EmbOps.td), as Emb_GradOp (EmbBase.td).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBGRADOPS_TD
#define EMBC_DIALECT_EMBGRADOPS_TD

//===----------------------------------------------------------------------===//
// Gradients of forward ops
//===----------------------------------------------------------------------===//

def Emb_LossGradOp : Emb_GradOp<"loss_grad", [Emb_LowersItself, Pure]> {
  let summary = "gradient of the mean loss with respect to its inputs";
  let description = [{
    The root of the backward pass: d(loss)/d(input), including the 1/B of
    the batch mean. `neg_sampling` also differentiates its second operand
    (the negative scores) and returns two results; the other kinds return
    one (their target is data).

    ```mlir
    %d = emb.loss_grad bce_with_logits %logit, %label
        : tensor<128x1xf32>, tensor<128x1xf32> -> tensor<128x1xf32>
    ```
  }];
  let arguments = (ins Emb_LossKindAttr:$kind, Emb_FloatTensor:$input,
                       Emb_FloatTensor:$target);
  let results = (outs Variadic<Emb_FloatTensor>:$grads);
  let assemblyFormat = [{
    `` $kind $input `,` $target attr-dict `:` type($input) `,` type($target)
    `->` type($grads)
  }];
  let hasVerifier = 1;
}

def Emb_DenseGradInputOp : Emb_GradOp<"dense_grad_input", [Emb_Lowered, Pure]> {
  let summary = "gradient of a dense layer with respect to its input";
  let description = [{
    `dx = dy * weight^T`: `dy` is B x N, `weight` K x N, the result B x K.

    ```mlir
    %dx = emb.dense_grad_input %dy, %w
        : tensor<128x64xf32>, tensor<13x64xf32> -> tensor<128x13xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_FloatTensor:$weight);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $weight attr-dict `:` type($grad) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_DenseGradWeightOp : Emb_GradOp<"dense_grad_weight", [Emb_Lowered, Pure]> {
  let summary = "gradient of a dense layer with respect to its weight";
  let description = [{
    `dweight = input^T * dy`: `input` is B x K, `dy` B x N, the result K x N.

    ```mlir
    %dw = emb.dense_grad_weight %x, %dy
        : tensor<128x13xf32>, tensor<128x64xf32> -> tensor<13x64xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input, Emb_FloatTensor:$grad);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad attr-dict `:` type($input) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_BiasGradOp : Emb_GradOp<"bias_grad", [Emb_Lowered, Pure]> {
  let summary = "gradient of a broadcast bias: column sums";
  let description = [{
    Sums `dy` (B x N) over the batch into N entries.

    ```mlir
    %db = emb.bias_grad %dy : tensor<128x64xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def Emb_ActivationGradOp : Emb_GradOp<"activation_grad",
    [Emb_LowersItself, Pure, SameOperandsAndResultType]> {
  let summary = "gradient of an elementwise activation";
  let description = [{
    `dx = dy * f'(x)` where `x` is the activation's input. With
    `from_output`, the second operand is the activation's output `y = f(x)`
    and the derivative is computed from it (relu: `y > 0`, sigmoid:
    `y (1 - y)`, tanh: `1 - y^2`; gelu has no such form): -emb-fuse uses it
    so that a fused GEMM + activation need not keep its pre-activation.

    ```mlir
    %dx = emb.activation_grad relu %dy, %x : tensor<128x64xf32>
    %dx = emb.activation_grad relu %dy, %y from_output : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Emb_ActivationAttr:$kind, Emb_FloatTensor:$grad,
                       Emb_FloatTensor:$input, UnitAttr:$from_output);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    `` $kind $grad `,` $input (`from_output` $from_output^)? attr-dict `:` type($grad)
  }];
  let hasVerifier = 1;
}

def Emb_SliceOp : Emb_GradOp<"slice", [Emb_LowersItself, Pure]> {
  let summary = "columns of a B x N tensor (the gradient of concat)";
  let description = [{
    Returns columns `offset .. offset + width` of `input`, where the width is
    the result's.

    ```mlir
    %a = emb.slice %dy [16] : tensor<128x24xf32> -> tensor<128x8xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $input `[` $offset `]` attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Emb_InteractionGradOp : Emb_GradOp<"interaction_grad", [Emb_LowersItself, Pure]> {
  let summary = "gradient of the pairwise dot interaction";
  let description = [{
    Given `dy` (B x P) and the F interaction inputs, returns the gradient of
    each input (B x D each).

    ```mlir
    %d0, %d1 = emb.interaction_grad %dy, %a, %b
        : tensor<128x1xf32>, tensor<128x16xf32>, tensor<128x16xf32>
        -> tensor<128x16xf32>, tensor<128x16xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Variadic<Emb_FloatTensor>:$inputs,
                       UnitAttr:$self);
  let results = (outs Variadic<Emb_FloatTensor>:$results);
  let assemblyFormat = [{
    $grad `,` $inputs (`self` $self^)? attr-dict `:` type($grad) `,` type($inputs)
    `->` type($results)
  }];
  let hasVerifier = 1;
}

def Emb_CrossGradOp : Emb_GradOp<"cross_grad", [Emb_Lowered, Pure,
    AllTypesMatch<["grad", "x0", "xl", "dx0", "dxl"]>,
    OptionalTypesMatchWith<"linear has the type of grad", "grad", "linear", "$_self">,
    AllTypesMatch<["weight", "dweight"]>, AllTypesMatch<["bias", "dbias"]>]> {
  let summary = "gradient of a DCN-v2 cross layer";
  let description = [{
    Returns the gradients of `x0`, `xl`, `weight` and `bias`. `linear`,
    when given, is the forward's xl W (`emb.cross` with a `linear`
    result): the gradient reads it instead of computing xl W again, one
    of its three D x D products.

    ```mlir
    %d0, %dl, %dw, %db = emb.cross_grad %dy, %x0, %xl, %w, %b
        : tensor<128x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    %d0, %dl, %dw, %db = emb.cross_grad %dy, %x0, %xl, %w, %b linear(%xw)
        : tensor<128x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_FloatTensor:$x0,
                       Emb_FloatTensor:$xl, Emb_FloatTensor:$weight,
                       Emb_FloatTensor:$bias, Optional<Emb_FloatTensor>:$linear);
  let results = (outs Emb_FloatTensor:$dx0, Emb_FloatTensor:$dxl,
                      Emb_FloatTensor:$dweight, Emb_FloatTensor:$dbias);
  let assemblyFormat = [{
    $grad `,` $x0 `,` $xl `,` $weight `,` $bias (`linear` `(` $linear^ `)`)? attr-dict `:`
    type($grad) `,` type($weight) `,` type($bias)
  }];
  let hasVerifier = 1;
}

def Emb_DotGradOp : Emb_GradOp<"dot_grad", [Emb_Lowered, Pure,
    AllTypesMatch<["lhs", "dlhs"]>, AllTypesMatch<["rhs", "drhs"]>]> {
  let summary = "gradient of row-wise dot products";
  let description = [{
    Returns the gradients of `lhs` and `rhs` (same shapes as they).

    ```mlir
    %dl, %dr = emb.dot_grad %dy, %u, %v : tensor<128x1xf32>, tensor<128x64xf32>,
        tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_FloatTensor:$lhs,
                       Emb_FloatTensor:$rhs);
  let results = (outs Emb_FloatTensor:$dlhs, Emb_FloatTensor:$drhs);
  let assemblyFormat = [{
    $grad `,` $lhs `,` $rhs attr-dict `:` type($grad) `,` type($lhs) `,` type($rhs)
  }];
  let hasVerifier = 1;
}

def Emb_LookupGradOp : Emb_GradOp<"lookup_grad", [Emb_LowersItself, 
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead]>]> {
  let summary = "per-id gradient rows of a pooled lookup";
  let description = [{
    For each id of `ids`, the gradient of the loss with respect to the table
    row it read: its bag's row of `dy`, scaled by the id's weight, divided by
    the bag size for `mean`, and kept only where the id gave the maximum for
    `max` (which is why the table is read). The result has one row per id:
    the sparse gradient, never dense over the table.

    ```mlir
    %g = emb.lookup_grad @t0[%ids, %offsets] sum %dy
        : tensor<?xi64>, tensor<129xi64>, tensor<128x16xf32> -> tensor<?x16xf32>
    %w = emb.lookup_grad @t0[%ids, %offsets weights %wts] mean %dy
        : tensor<?xi64>, tensor<129xi64>, tensor<128x16xf32>, tensor<?xf32>
        -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, Emb_IdTensor:$ids,
                       Emb_IdTensor:$offsets, Optional<Emb_FloatTensor>:$weights,
                       Emb_PoolingAttr:$pooling, Emb_FloatTensor:$grad);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `,` $offsets (`weights` $weights^)? `]` `` $pooling $grad
    attr-dict `:` type($ids) `,` type($offsets) `,` type($grad)
    (`,` type($weights)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_AccumulateGradOp : Emb_GradOp<"accumulate_grad", [Emb_LowersItself, 
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite]>]> {
  let summary = "add a gradient into a dense parameter's gradient";
  let description = [{
    Adds `grad` into the gradient storage of `param`. The storage is zeroed
    before each optimizer step, so micro-batches of a gradient-accumulation
    step add up.

    ```mlir
    emb.accumulate_grad @top_w0, %dw : tensor<367x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Emb_FloatTensor:$grad);
  let assemblyFormat = "$param `,` $grad attr-dict `:` type($grad)";
}

def Emb_AccumulateRowsOp : Emb_GradOp<"accumulate_rows", [Emb_LowersItself, 
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite]>]> {
  let summary = "append sparse gradient rows to a table's gradient";
  let description = [{
    Appends one gradient row per id to the sparse gradient of `table`:
    `values` has the shape of `ids` followed by the table's dim (or is
    N x dim for N ids). Duplicates are summed by `emb.coalesce_rows` before
    the update.

    ```mlir
    emb.accumulate_rows @t0[%ids], %g : tensor<?xi64>, tensor<?x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, Emb_IdTensor:$ids,
                       Emb_FloatTensor:$values);
  let assemblyFormat = [{
    $table `[` $ids `]` `,` $values attr-dict `:` type($ids) `,` type($values)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The optimizer step (function @update)
//===----------------------------------------------------------------------===//

def Emb_CoalesceRowsOp : Emb_GradOp<"coalesce_rows", [Emb_LowersItself, 
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "sum the duplicate rows of a table's sparse gradient";
  let description = [{
    Sorts the table's accumulated (row, gradient) pairs by row and sums the
    duplicates, so the global norm and the update see each row once.

    ```mlir
    emb.coalesce_rows @t0
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table);
  let assemblyFormat = "$table attr-dict";
}

def Emb_ClipGradNormOp : Emb_GradOp<"clip_grad_norm", [Emb_LowersItself, MemoryEffects<[MemRead]>]> {
  let summary = "scale factor that clips all gradients to a global norm";
  let description = [{
    Computes the L2 norm of every parameter's and table's accumulated
    gradient together and returns `min(1, max_norm / (norm + 1e-6))`, which
    the updates multiply their gradients by.

    ```mlir
    %s = emb.clip_grad_norm max_norm(1.0) : tensor<f32>
    ```
  }];
  let arguments = (ins F64Attr:$max_norm);
  let results = (outs 0DTensorOf<[F32]>:$scale);
  let assemblyFormat = "`max_norm` `(` $max_norm `)` attr-dict `:` type($scale)";
  let hasVerifier = 1;
}

def Emb_UpdateOp : Emb_GradOp<"update", [Emb_LowersItself, 
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "apply the optimizer to a parameter or a table";
  let description = [{
    Applies the optimizer of `target` to it: the training config's dense
    optimizer for an `emb.param`, the table's own optimizer for an
    `emb.table` (touched rows only, with the table's weight-decay mode). The
    gradient is the accumulated one times `scale` when given.

    ```mlir
    emb.update @top_w0 scale %s : tensor<f32>
    emb.update @t0
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$target, Optional<0DTensorOf<[F32]>>:$scale);
  let assemblyFormat = "$target (`scale` $scale^ `:` type($scale))? attr-dict";
}

#endif // EMBC_DIALECT_EMBGRADOPS_TD
