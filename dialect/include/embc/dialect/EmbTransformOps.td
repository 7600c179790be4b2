//===- EmbTransformOps.td - ops the optimisation passes create -*- tablegen -*-===//
//
// -emb-pack-params declares packed parameter buffers and table batches;
// -emb-fuse groups ops that the plan runs as one kernel. Neither changes
// what the model computes, only how it is stored and launched.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBTRANSFORMOPS_TD
#define EMBC_DIALECT_EMBTRANSFORMOPS_TD

//===----------------------------------------------------------------------===//
// Packing (-emb-pack-params)
//===----------------------------------------------------------------------===//

def Emb_ParamPackOp : Emb_Op<"param_pack", [Symbol, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "dense parameters stored in one contiguous buffer";
  let description = [{
    The values of `members` live in one buffer of `size` elements of
    `element_type`, member i at element `offsets[i]` (64-byte aligned); their
    gradients and each optimizer state are packed the same way, so
    `emb.update` on the pack is one fused optimizer step and the global norm
    is one pass. `buckets` cuts the gradient into all-reduce buckets
    (element boundaries, from 0 to `size`), members in backward order so that
    bucket 0 is complete first.

    ```mlir
    emb.param_pack @dense_f32 : f32[96] members [@b, @w] offsets [0, 16] buckets [0, 96]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$element_type,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size,
                       FlatSymbolRefArrayAttr:$members,
                       DenseI64ArrayAttr:$offsets, DenseI64ArrayAttr:$buckets);
  let assemblyFormat = [{
    $sym_name `:` $element_type `[` $size `]` `members` $members
    `offsets` $offsets `buckets` $buckets attr-dict
  }];
  let hasVerifier = 1;
}

def Emb_TableBatchOp : Emb_Op<"table_batch", [Symbol, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "embedding tables stored as one table-batched buffer";
  let description = [{
    The `members` (same dim, storage and optimizer) are stored one after
    another in one buffer: member i starts at row `sum of rows of members
    before it`, and its optimizer state is batched alongside. The members'
    sparse gradients go to the batch (ids offset by the member's first row),
    so one `emb.coalesce_rows` and one `emb.update` on the batch serve them
    all, and a fused lookup reads every member from one base pointer.

    ```mlir
    emb.table_batch @tables_d16 [@t_C1, @t_C2]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefArrayAttr:$members);
  let assemblyFormat = "$sym_name $members attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The first batch row of each member (the running sum of their rows).
    ::llvm::SmallVector<int64_t> getRowOffsets(::mlir::SymbolTableCollection &symbols);
  }];
}

//===----------------------------------------------------------------------===//
// Fusion (-emb-fuse)
//===----------------------------------------------------------------------===//

def Emb_FusedOp : Emb_Op<"fused", [Emb_LowersItself, RecursiveMemoryEffects]> {
  let summary = "ops that the plan runs as one kernel";
  let description = [{
    The body's ops run as a single kernel of the kind `kind`; values used only
    inside the body are never written to memory, and `emb.yield` gives the
    values used after it. The body reads values from outside directly (it is
    not isolated). The kinds and what they hold:

    - `lookup`: hash + lookup of several tables (one launch for all);
    - `dense_act`: a dense layer and its activation (GEMM + epilogue);
    - `dense_act_grad`: that layer's backward with the parameter gradients;
    - `elementwise`: a chain of adds and activations (and their gradients);
    - `interaction_concat` / `interaction_concat_grad`: the interaction
      written into its concatenation, and the backward of both;
    - `embedding_update`: a table's backward (lookup_grad, accumulate_rows)
      with its coalesce and optimizer update, no gradient rows materialised;
    - `skipgram`: a whole skip-gram step (centre and context lookups,
      gathered negatives, their dots, the neg_sampling loss, its backward
      and the tables' update), run example by example with each example's
      own gradient applied before the next (training attribute
      `embedding_updates` = `per_example` or `hogwild`);
    - `add_layer_norm`: a residual connection's add (of a dropout's result,
      when one feeds it) and the layer norm of the sum, one pass a row;
    - `add_layer_norm_grad`: a layer_norm_grad, the add of another gradient
      of the sum, and the dropout_grad of the total.

    ```mlir
    %y = emb.fused dense_act -> tensor<8x4xf32> {
      %z = emb.dense %x, %w, %b : tensor<8x3xf32>, tensor<3x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
      %a = emb.activation relu %z : tensor<8x4xf32>
      emb.yield %a : tensor<8x4xf32>
    }
    ```
  }];
  let arguments = (ins Emb_FusionKindAttr:$kind);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`` $kind (`->` type($results)^)? $body attr-dict";
  let hasVerifier = 1;
}

def Emb_YieldOp : Emb_Op<"yield", [Pure, Terminator, HasParent<"FusedOp">]> {
  let summary = "the values an emb.fused group gives to the ops after it";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // EMBC_DIALECT_EMBTRANSFORMOPS_TD
