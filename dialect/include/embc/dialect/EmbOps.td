//===- EmbOps.td - emb dialect operations ----------------------*- tablegen -*-===//

#ifndef EMBC_DIALECT_EMBOPS_TD
#define EMBC_DIALECT_EMBOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "embc/dialect/EmbAttrs.td"
include "embc/dialect/EmbInterfaces.td"

def Emb_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Emb_IdTensor : RankedTensorOf<[AnySignlessInteger]>;
def Emb_Cost : DeclareOpInterfaceMethods<Emb_CostOpInterface>;
// Ops with a backward rule (see GradientOpInterface).
def Emb_Differentiable : DeclareOpInterfaceMethods<Emb_GradientOpInterface>;
// Ops that become plan kernels (see PlanLoweringOpInterface): Emb_Lowered
// takes the default lowering, Emb_LowersItself writes its own lowerToPlan.
def Emb_Lowered : DeclareOpInterfaceMethods<Emb_PlanLoweringOpInterface>;
def Emb_LowersItself : DeclareOpInterfaceMethods<Emb_PlanLoweringOpInterface, ["lowerToPlan"]>;

//===----------------------------------------------------------------------===//
// Module-level symbols
//===----------------------------------------------------------------------===//

def Emb_TableOp : Emb_Op<"table", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "an embedding table";
  let description = [{
    A table of `rows` x `dim` trainable embeddings, stored as `storage`,
    initialised by `init`. `optimizer` overrides the model's embedding
    optimizer for this table; `sharding` says how ranks split it.
    `placement` says where its rows and optimizer state live: `device`
    (the default: the arena), `host` or `disk` (arena pages mapped from a
    file, each of its buffers page-aligned); only an unsharded table is off
    the device.

    ```mlir
    emb.table @user[943 x 64] f32 init<kind = normal, std = 0.01>
        optimizer<kind = adagrad, lr = 0.05>
    emb.table @ads[40000000 x 128] f32 init<kind = zeros>
        optimizer<kind = rowwise_adagrad> placement disk
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    ConfinedAttr<I64Attr, [IntPositive]>:$rows,
    ConfinedAttr<I64Attr, [IntPositive]>:$dim,
    Emb_StorageTypeAttr:$storage,
    Emb_InitializerAttr:$init,
    Emb_OptimizerAttr:$optimizer,
    DefaultValuedAttr<Emb_ShardingAttr, "::embc::emb::Sharding::none">:$sharding,
    DefaultValuedAttr<Emb_PlacementAttr, "::embc::emb::Placement::device">:$placement);
  let assemblyFormat = [{
    $sym_name `[` $rows `x` $dim `]` `` $storage `init` `` $init
    `optimizer` `` $optimizer (`sharding` `` $sharding^)? (`placement` `` $placement^)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bytes of the table's storage (fp16 scale and bias included for
    /// int8/int4 row-wise; int4 packs two elements per byte).
    int64_t getStorageBytes();
  }];
}

def Emb_ParamOp : Emb_Op<"param", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a dense trainable parameter";
  let description = [{
    A dense parameter (an MLP weight or bias, a cross-layer matrix) of static
    shape, initialised by `init`. The dense optimizer of `emb.training`
    updates it.

    ```mlir
    emb.param @bottom_0_w : tensor<13x512xf32> init<kind = xavier_uniform>
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<AnyStaticShapeTensor>:$type,
    Emb_InitializerAttr:$init);
  let assemblyFormat = "$sym_name `:` $type `init` `` $init attr-dict";
  let hasVerifier = 1;
}

def Emb_GetOp : Emb_Op<"get", [Emb_LowersItself, Emb_Differentiable, Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read a dense parameter as a tensor";
  let description = [{
    Gives the current value of the `emb.param` named by `param`. Gradients of
    the loss with respect to this value are the parameter's gradients.

    ```mlir
    %w = emb.get @bottom_0_w : tensor<13x512xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Embedding access
//===----------------------------------------------------------------------===//

def Emb_LookupOp : Emb_Op<"lookup", [Emb_LowersItself, Emb_Differentiable,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, Emb_Cost,
    MemoryEffects<[MemRead]>]> {
  let summary = "pooled lookup of jagged bags of ids";
  let description = [{
    For each of the B bags `offsets[b] .. offsets[b+1]` of `ids`, gathers the
    rows of `table` and pools them (`sum`, `mean` or `max`); with `weights`,
    each row is first scaled by its per-id weight. `offsets` has B + 1
    entries; the result is B x dim.

    ```mlir
    %e = emb.lookup @t0[%ids, %offsets] sum
        : tensor<?xi64>, tensor<129xi64> -> tensor<128x16xf32>
    %w = emb.lookup @t0[%ids, %offsets weights %wts] mean
        : tensor<?xi64>, tensor<129xi64>, tensor<?xf32> -> tensor<128x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       Emb_IdTensor:$ids,
                       Emb_IdTensor:$offsets,
                       Optional<Emb_FloatTensor>:$weights,
                       Emb_PoolingAttr:$pooling);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `,` $offsets (`weights` $weights^)? `]` `` $pooling attr-dict
    `:` type($ids) `,` type($offsets) (`,` type($weights)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_GatherOp : Emb_Op<"gather", [Emb_LowersItself, Emb_Differentiable,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, Emb_Cost,
    MemoryEffects<[MemRead]>]> {
  let summary = "unpooled lookup of a fixed-shape tensor of ids";
  let description = [{
    Gathers one row of `table` per id; the result has the shape of `ids`
    followed by the table's dim. Used for sequences and sampled negatives.

    ```mlir
    %n = emb.gather @ctx[%neg] : tensor<256x5xi64> -> tensor<256x5x100xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, Emb_IdTensor:$ids);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` type($ids) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_TableScoresOp : Emb_Op<"table_scores", [Emb_LowersItself, Emb_Differentiable,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, Emb_Cost, MemoryEffects<[MemRead]>]> {
  let summary = "scores of every row of a table: an output projection tied to the table";
  let description = [{
    Row i of the result is `input` row i (every dimension but the last are
    rows: B, or B x L positions) times the transpose of `table` (rows x
    dim): one score per table row, the logits of a language model whose
    output projection is its input embedding (tied embeddings). The
    gradient reaches the table as rows too: `emb.read_table` gives dx =
    dy table, and dy^T input is accumulated into every row of the table
    (`emb.row_ids`, `emb.accumulate_rows`).

    ```mlir
    %logits = emb.table_scores @words, %h : tensor<32x10x128xf32> -> tensor<32x10x8001xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, Emb_FloatTensor:$input);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "$table `,` $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Emb_ReadTableOp : Emb_Op<"read_table", [Emb_LowersItself, Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the whole f32 table as a rows x dim tensor (no copy)";
  let description = [{
    Gives the current values of `table` (f32 storage) as a tensor, read
    where the table lives: the backward of `emb.table_scores` multiplies by
    it. Not differentiable: a table's gradient is rows (`emb.accumulate_rows`).

    ```mlir
    %e = emb.read_table @words : tensor<8001x128xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "$table attr-dict `:` type($result)";
}

def Emb_RowIdsOp : Emb_Op<"row_ids", [Emb_LowersItself, Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the ids 0 .. rows - 1 of a table";
  let description = [{
    Every row of `table`, in order: the ids of a gradient that covers the
    whole table (`emb.table_scores`'s), accumulated as rows.

    ```mlir
    %ids = emb.row_ids @words : tensor<8001xi64>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table);
  let results = (outs Emb_IdTensor:$result);
  let assemblyFormat = "$table attr-dict `:` type($result)";
}

def Emb_HashOp : Emb_Op<"hash", [Emb_LowersItself, Pure, SameOperandsAndResultType]> {
  let summary = "hash raw ids into a table's rows";
  let description = [{
    Maps each raw id to `xxh64(id, seed) mod buckets`, so an unbounded id
    space (a raw Criteo category, a user id) fits a table of `buckets` rows.

    ```mlir
    %h = emb.hash %ids buckets(100000) seed(0) : tensor<?xi64>
    ```
  }];
  let arguments = (ins Emb_IdTensor:$ids,
                       ConfinedAttr<I64Attr, [IntPositive]>:$buckets,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$seed);
  let results = (outs Emb_IdTensor:$result);
  let assemblyFormat = [{
    $ids `buckets` `(` $buckets `)` `seed` `(` $seed `)` attr-dict `:` type($ids)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sequences: jagged token ids as B x L x D, and back to B x D
//===----------------------------------------------------------------------===//

def Emb_SequenceLookupOp : Emb_Op<"sequence_lookup", [Emb_LowersItself, Emb_Differentiable,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, Emb_Cost,
    MemoryEffects<[MemRead]>]> {
  let summary = "un-pooled lookup of jagged sequences of ids, zero-padded";
  let description = [{
    Sequence b is the ids `offsets[b] .. offsets[b+1]`, in order. Position l
    of result row b is the table row of its l-th id, for l below the
    sequence's length; the positions after it are zeros. The result is
    B x L x dim, L the longest sequence the model allows (`max_len`): a
    longer sequence is a data error at run time. Each batch is padded only
    to its own longest sequence: the kernels stop there.

    ```mlir
    %x = emb.sequence_lookup @words[%ids, %offsets]
        : tensor<?xi64>, tensor<33xi64> -> tensor<32x64x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, Emb_IdTensor:$ids,
                       Emb_IdTensor:$offsets);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `,` $offsets `]` attr-dict `:` type($ids) `,` type($offsets)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_SequenceLookupGradOp : Emb_GradOp<"sequence_lookup_grad", [Emb_Lowered, Pure]> {
  let summary = "per-id gradient rows of emb.sequence_lookup";
  let description = [{
    Row i of the result is the gradient `grad[b, l]` of the position id i
    was looked up at: the sparse gradient of the table, one row per id, in
    the order of `ids` (rows of ids outside every sequence are zeros).

    ```mlir
    %rows = emb.sequence_lookup_grad %ids, %offsets, %dx
        : tensor<?xi64>, tensor<33xi64>, tensor<32x64x16xf32> -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Emb_IdTensor:$ids, Emb_IdTensor:$offsets, Emb_FloatTensor:$grad);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $offsets `,` $grad attr-dict `:` type($ids) `,` type($offsets) `,`
    type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_PositionsOp : Emb_Op<"positions", [Emb_LowersItself, Emb_Differentiable, Pure,
    Emb_Cost]> {
  let summary = "add positional embeddings to each sequence's valid positions";
  let description = [{
    Position l of sequence b (l below its length n_b, from `offsets`) gets
    row l of `table` (`learned`: a parameter of at least L rows of D) or
    the sinusoid of l (`sinusoidal`: column 2i holds sin(l / 10000^(2i/D)),
    column 2i + 1 the cosine of the same angle). Positions past n_b stay
    zero.

    ```mlir
    %y = emb.positions %x, %offsets table %pos learned
        : tensor<32x64x16xf32>, tensor<33xi64>, tensor<64x16xf32> -> tensor<32x64x16xf32>
    %s = emb.positions %x, %offsets sinusoidal
        : tensor<32x64x16xf32>, tensor<33xi64> -> tensor<32x64x16xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input, Emb_IdTensor:$offsets,
                       Optional<Emb_FloatTensor>:$table, Emb_PositionKindAttr:$kind);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $offsets (`table` $table^)? `` $kind attr-dict `:` type($input) `,`
    type($offsets) (`,` type($table)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_PositionsGradOp : Emb_GradOp<"positions_grad", [Emb_LowersItself, Pure]> {
  let summary = "gradients of emb.positions: its input and its learned table";
  let description = [{
    The input's gradient is `grad` on each sequence's valid positions and 0
    after them; with a `table_grad` result (learned positions), row l of it
    is the sum over the sequences at least l + 1 long of grad[b, l], in
    sequence order (rows past L are 0).

    ```mlir
    %dx, %dpos = emb.positions_grad %dy, %offsets learned
        : tensor<32x64x16xf32>, tensor<33xi64> -> tensor<32x64x16xf32>, tensor<64x16xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_IdTensor:$offsets,
                       Emb_PositionKindAttr:$kind);
  let results = (outs Emb_FloatTensor:$input_grad, Optional<Emb_FloatTensor>:$table_grad);
  let assemblyFormat = [{
    $grad `,` $offsets `` $kind attr-dict `:` type($grad) `,` type($offsets) `->`
    type($input_grad) (`,` type($table_grad)^)?
  }];
  let hasVerifier = 1;
}

def Emb_AttentionOp : Emb_Op<"attention", [Emb_LowersItself, Emb_Differentiable, Pure, Emb_Cost,
    AllTypesMatch<["query", "key", "value", "result"]>]> {
  let summary = "multi-head scaled dot-product attention within each sequence";
  let description = [{
    `query`, `key` and `value` are B x L x D, split into `heads` heads of
    D / heads columns. Query position i of sequence b (i below its length
    n_b, from `offsets`) attends to the key positions j < n_b (j <= i as
    well when `causal`): with s_ij = q_i . k_j / sqrt(D / heads) in its
    head, the result row is sum_j softmax_j(s_ij) v_j. Padded positions
    are never attended to and their results are zeros. The softmax is
    computed in double (its maximum, exponentials and sum); the scores and
    the weighted sum of values in the operands' type, in position order.

    ```mlir
    %o = emb.attention %q, %k, %v, %offsets heads(4) causal
        : tensor<32x64x128xf32>, tensor<33xi64>
    ```

    With `dropout` (and its `stream`, both or neither), the weights are
    dropped while training as emb.dropout drops values: weight (i, j) of
    head h of sequence b is element ((b H + h) L + i) L + j of the site's
    global tensor of weights, kept with probability 1 - `dropout` and
    scaled by 1 / (1 - `dropout`) (nn.MultiheadAttention's dropout). In
    evaluation nothing is dropped.

    ```mlir
    %o = emb.attention %q, %k, %v, %offsets heads(4) {dropout = 1.000000e-01 : f64, stream = 7 : i64}
        : tensor<32x64x128xf32>, tensor<33xi64>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$query, Emb_FloatTensor:$key, Emb_FloatTensor:$value,
                       Emb_IdTensor:$offsets, ConfinedAttr<I64Attr, [IntPositive]>:$heads,
                       UnitAttr:$causal, OptionalAttr<F64Attr>:$dropout,
                       OptionalAttr<I64Attr>:$stream);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $offsets `heads` `(` $heads `)` (`causal` $causal^)?
    attr-dict `:` type($query) `,` type($offsets)
  }];
  let hasVerifier = 1;
}

def Emb_AttentionGradOp : Emb_GradOp<"attention_grad", [Emb_LowersItself, Pure,
    AllTypesMatch<["grad", "query", "key", "value", "query_grad", "key_grad", "value_grad"]>]> {
  let summary = "gradients of emb.attention: query, key and value";
  let description = [{
    The attention weights are recomputed from `query` and `key` (nothing of
    the forward is kept): with P the weights, dP_ij = grad_i . v_j and
    dS_ij = P_ij (dP_ij - sum_j' P_ij' dP_ij'), the query's gradient is
    sum_j dS_ij k_j / sqrt(dh), the key's sum_i dS_ij q_i / sqrt(dh) and the
    value's sum_i P_ij grad_i; padded positions get zeros. With the
    forward's `dropout` and `stream`, its mask M (kept weights scaled by
    1 / (1 - dropout), dropped ones 0) is drawn again: dP_ij = M_ij grad_i .
    v_j and the value's gradient is sum_i M_ij P_ij grad_i.

    ```mlir
    %dq, %dk, %dv = emb.attention_grad %do, %q, %k, %v, %offsets heads(4) causal
        : tensor<32x64x128xf32>, tensor<33xi64>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_FloatTensor:$query, Emb_FloatTensor:$key,
                       Emb_FloatTensor:$value, Emb_IdTensor:$offsets,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$dropout, OptionalAttr<I64Attr>:$stream);
  let results = (outs Emb_FloatTensor:$query_grad, Emb_FloatTensor:$key_grad,
                      Emb_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $grad `,` $query `,` $key `,` $value `,` $offsets `heads` `(` $heads `)`
    (`causal` $causal^)? attr-dict `:` type($grad) `,` type($offsets)
  }];
  let hasVerifier = 1;
}

def Emb_SequencePoolOp : Emb_Op<"sequence_pool", [Emb_LowersItself, Emb_Differentiable, Pure,
    Emb_Cost]> {
  let summary = "pooling of each sequence's valid positions";
  let description = [{
    Row b of the result pools positions 0 .. n_b - 1 of `input[b]` (B x L x
    D), n_b the length of sequence b in `offsets` (at most L): their `sum`,
    `mean` or `max`, or the `first` position's row. A sequence of length 0
    pools to zeros. The result is B x D.

    ```mlir
    %p = emb.sequence_pool %x, %offsets mean
        : tensor<32x64x16xf32>, tensor<33xi64> -> tensor<32x16xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input, Emb_IdTensor:$offsets,
                       Emb_SequencePoolingAttr:$mode);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $offsets `` $mode attr-dict `:` type($input) `,` type($offsets) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Emb_SequencePoolGradOp : Emb_GradOp<"sequence_pool_grad", [Emb_LowersItself, Pure]> {
  let summary = "gradient of emb.sequence_pool with respect to its input";
  let description = [{
    Spreads `grad` (B x D) back over each sequence's valid positions: a copy
    for `sum` (divided by n_b for `mean`), position 0 for `first`, and for
    `max` the position that gave the maximum (the first such position),
    which is why `max` reads the forward `input`. Padded positions get 0.

    ```mlir
    %dx = emb.sequence_pool_grad %dy, %offsets mean
        : tensor<32x16xf32>, tensor<33xi64> -> tensor<32x64x16xf32>
    %dm = emb.sequence_pool_grad %dy, %offsets input %x max
        : tensor<32x16xf32>, tensor<33xi64>, tensor<32x64x16xf32> -> tensor<32x64x16xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_IdTensor:$offsets,
                       Optional<Emb_FloatTensor>:$input, Emb_SequencePoolingAttr:$mode);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $offsets (`input` $input^)? `` $mode attr-dict `:` type($grad) `,`
    type($offsets) (`,` type($input)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_NextTokenTargetsOp : Emb_Op<"next_token_targets", [Emb_LowersItself, Pure]> {
  let summary = "each position's next token: the targets of a causal language model";
  let description = [{
    Sequence b is the ids `offsets[b] .. offsets[b+1]`, n_b of them. Position
    l of result row b is the id at l + 1 (as a class index), for l below
    n_b - 1; every other position is -1 (nothing to predict: the last token
    and the padding). The result is B x L, L the longest sequence allowed,
    and feeds an `emb.loss sequence_softmax_ce` whose logits at position l
    saw the tokens up to l only.

    ```mlir
    %t = emb.next_token_targets %ids, %offsets
        : tensor<?xi64>, tensor<33xi64> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Emb_IdTensor:$ids, Emb_IdTensor:$offsets);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $offsets attr-dict `:` type($ids) `,` type($offsets) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_MaskTokensOp : Emb_Op<"mask_tokens", [Emb_LowersItself, Pure]> {
  let summary = "BERT's masking of a batch of sequences: the masked-token objective";
  let description = [{
    Of sequence b (the ids `offsets[b] .. offsets[b+1]`, n_b of them),
    max(1, round(`rate` n_b)) positions are chosen; position l's original id
    becomes `targets[b, l]` (-1 at every other position) and its id in
    `masked_ids` is replaced by `mask_id` (80% of the chosen), by a random
    id below `vocab` (10%) or kept (10%). The choices are counter-based
    draws keyed by the run's seed, `stream`, the training step and each
    position's place in the global batch (a fixed step in evaluation), as
    dropout's are (runtime/include/embc/runtime/cpu/MaskKernels.h).

    ```mlir
    %m, %t = emb.mask_tokens %ids, %offsets {mask_id = 8000 : i64, rate = 1.500000e-01 : f64,
        stream = 0 : i64, vocab = 8000 : i64}
        : tensor<?xi64>, tensor<33xi64> -> tensor<?xi64>, tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Emb_IdTensor:$ids, Emb_IdTensor:$offsets, F64Attr:$rate,
                       I64Attr:$mask_id, I64Attr:$vocab, I64Attr:$stream);
  let results = (outs Emb_IdTensor:$masked_ids, Emb_FloatTensor:$targets);
  let assemblyFormat = [{
    $ids `,` $offsets attr-dict `:` type($ids) `,` type($offsets) `->` type($masked_ids) `,`
    type($targets)
  }];
  let hasVerifier = 1;
}

def Emb_SelectTargetsOp : Emb_Op<"select_targets", [Emb_LowersItself, Emb_Differentiable, Pure,
    Emb_Cost]> {
  let summary = "the rows of each sequence's positions with a target";
  let description = [{
    For a token loss whose targets are few (the masked-token objective
    predicts 15% of the positions), the positions with a target: row p of
    sequence b in `rows` is `input[b, l_p]` and `selected[b, p]` is
    `targets[b, l_p]`, l_0 < l_1 < ... the positions of sequence b whose
    target is not -1; rows past a sequence's count are zeros with target -1.
    P (the result's second dimension) bounds the targets of a sequence: more
    is a data error. -emb-select-targets puts it before the layers that
    compute the logits, which then compute P rows a sequence instead of L.

    ```mlir
    %r, %t = emb.select_targets %h, %targets
        : tensor<32x64x128xf32>, tensor<32x64xf32> -> tensor<32x10x128xf32>, tensor<32x10xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input, Emb_FloatTensor:$targets);
  let results = (outs Emb_FloatTensor:$rows, Emb_FloatTensor:$selected);
  let assemblyFormat = [{
    $input `,` $targets attr-dict `:` type($input) `,` type($targets) `->` type($rows) `,`
    type($selected)
  }];
  let hasVerifier = 1;
}

def Emb_SelectTargetsGradOp : Emb_GradOp<"select_targets_grad", [Emb_LowersItself, Pure]> {
  let summary = "gradient of emb.select_targets: each row back to its position";
  let description = [{
    Row p of `grad` (B x P x D) goes to the position of sequence b's p-th
    target in `targets` (B x L); every other position gets zeros.

    ```mlir
    %dx = emb.select_targets_grad %dr, %targets
        : tensor<32x10x128xf32>, tensor<32x64xf32> -> tensor<32x64x128xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_FloatTensor:$targets);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $targets attr-dict `:` type($grad) `,` type($targets) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense layers
//===----------------------------------------------------------------------===//

def Emb_DenseOp : Emb_Op<"dense", [Emb_LowersItself, Emb_Differentiable, Pure, Emb_Cost]> {
  let summary = "fully connected layer: input x weight + bias";
  let description = [{
    `input` is B x K, `weight` is K x N, the optional `bias` has N entries;
    the result is B x N.

    ```mlir
    %y = emb.dense %x, %w, %b
        : tensor<128x13xf32>, tensor<13x512xf32>, tensor<512xf32> -> tensor<128x512xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input, Emb_FloatTensor:$weight,
                       Optional<Emb_FloatTensor>:$bias);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_ActivationOp : Emb_Op<"activation",
    [Emb_LowersItself, Emb_Differentiable, Pure, SameOperandsAndResultType, Emb_Cost]> {
  let summary = "elementwise activation";
  let description = [{
    Applies `relu`, `sigmoid`, `tanh` or `gelu` (tanh approximation)
    elementwise.

    ```mlir
    %y = emb.activation relu %x : tensor<128x512xf32>
    ```
  }];
  let arguments = (ins Emb_ActivationAttr:$kind, Emb_FloatTensor:$input);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "`` $kind $input attr-dict `:` type($input)";
}

def Emb_ConcatOp : Emb_Op<"concat", [Emb_Lowered, Emb_Differentiable, Pure, Emb_Cost]> {
  let summary = "concatenate B x N_i tensors along the feature axis";
  let description = [{
    ```mlir
    %y = emb.concat %a, %b : tensor<128x16xf32>, tensor<128x8xf32> -> tensor<128x24xf32>
    ```
  }];
  let arguments = (ins Variadic<Emb_FloatTensor>:$inputs);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Emb_AddOp : Emb_Op<"add", [Emb_LowersItself, Emb_Differentiable, Pure,
    AttrSizedOperandSegments, Emb_Cost]> {
  let summary = "elementwise sum of same-shaped tensors, plus an optional bias";
  let description = [{
    Sums its `inputs` (all B x N); `bias` (N entries) is broadcast over the
    batch. Wide&Deep adds its wide and deep logits; biased matrix
    factorisation adds user, item and global biases.

    ```mlir
    %y = emb.add %a, %b bias %g
        : tensor<128x1xf32>, tensor<128x1xf32> bias tensor<1xf32> -> tensor<128x1xf32>
    ```
  }];
  let arguments = (ins Variadic<Emb_FloatTensor>:$inputs,
                       Optional<Emb_FloatTensor>:$bias);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs (`bias` $bias^)? attr-dict `:` type($inputs)
    (`bias` type($bias)^)? `->` type($result)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Feature interactions
//===----------------------------------------------------------------------===//

def Emb_InteractionOp : Emb_Op<"interaction", [Emb_LowersItself, Emb_Differentiable, Pure, Emb_Cost]> {
  let summary = "DLRM pairwise dot-product interaction";
  let description = [{
    Given F feature vectors (each B x D), returns the dot products of every
    pair i < j (with `self`, also i == j), in row-major upper-triangle order:
    B x F(F-1)/2 (or B x F(F+1)/2).

    ```mlir
    %z = emb.interaction %x, %e0, %e1
        : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32> -> tensor<128x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Emb_FloatTensor>:$inputs, UnitAttr:$self);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs (`self` $self^)? attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_CrossOp : Emb_Op<"cross", [Emb_Lowered, Emb_Differentiable, Pure, Emb_Cost,
    AllTypesMatch<["x0", "xl", "result"]>]> {
  let summary = "DCN-v2 cross layer: x0 * (xl W + b) + xl";
  let description = [{
    `x0` and `xl` are B x D, `weight` is D x D and `bias` has D entries.
    With a `linear` result the op also returns the product xl W (B x D,
    without the bias), which its gradient then reads instead of computing
    it again (-emb-autodiff adds it).

    ```mlir
    %x1 = emb.cross %x0, %x0, %w, %b
        : tensor<128x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    %x2, %xw = emb.cross %x0, %x1, %w, %b
        : tensor<128x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> linear tensor<128x32xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$x0, Emb_FloatTensor:$xl,
                       Emb_FloatTensor:$weight, Emb_FloatTensor:$bias);
  let results = (outs Emb_FloatTensor:$result, Optional<Emb_FloatTensor>:$linear);
  let assemblyFormat = [{
    $x0 `,` $xl `,` $weight `,` $bias attr-dict `:` type($x0) `,`
    type($weight) `,` type($bias) (`->` `linear` type($linear)^)?
  }];
  let hasVerifier = 1;
}

def Emb_DotOp : Emb_Op<"dot", [Emb_Lowered, Emb_Differentiable, Pure, Emb_Cost]> {
  let summary = "row-wise dot products";
  let description = [{
    With `lhs` and `rhs` both B x D, returns B x 1 (matrix factorisation,
    two-tower scores). With `rhs` B x K x D, returns B x K: the dot of each
    row of `lhs` with its K candidates (skip-gram negatives).

    ```mlir
    %s = emb.dot %u, %v : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x1xf32>
    %n = emb.dot %c, %neg : tensor<128x64xf32>, tensor<128x5x64xf32> -> tensor<128x5xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$lhs, Emb_FloatTensor:$rhs);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Emb_LayerNormOp : Emb_Op<"layer_norm", [Emb_Lowered, Emb_Differentiable, Pure, Emb_Cost]> {
  let summary = "layer normalisation over the last dimension, with scale and shift";
  let description = [{
    Each row of `input` (the last dimension, D wide; any number of leading
    dimensions) is normalised to mean 0 and variance 1, then scaled by
    `gamma` and shifted by `beta` (D entries each):
    y = (x - mean) / sqrt(var + eps) * gamma + beta, with the biased
    variance (the mean of the squared deviations), as PyTorch's LayerNorm.

    ```mlir
    %y = emb.layer_norm %x, %gamma, %beta {eps = 1.0e-05 : f64}
        : tensor<128x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input, Emb_FloatTensor:$gamma,
                       Emb_FloatTensor:$beta, F64Attr:$eps);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma) `,`
    type($beta) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_LayerNormGradOp : Emb_GradOp<"layer_norm_grad", [Emb_Lowered, Pure]> {
  let summary = "gradients of emb.layer_norm: input, gamma and beta";
  let description = [{
    From the gradient of the result `grad`, the layer's `input` and `gamma`
    (the row statistics are recomputed from the input, not kept from the
    forward): with x^ = (x - mean) * rstd and g = grad * gamma,
    dx = rstd * (g - mean(g) - x^ * mean(g * x^)) per row,
    dgamma = sum over rows of grad * x^, dbeta = sum over rows of grad.

    ```mlir
    %dx, %dg, %db = emb.layer_norm_grad %dy, %x, %gamma {eps = 1.0e-05 : f64}
        : tensor<128x64xf32>, tensor<128x64xf32>, tensor<64xf32>
        -> tensor<128x64xf32>, tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_FloatTensor:$input,
                       Emb_FloatTensor:$gamma, F64Attr:$eps);
  let results = (outs Emb_FloatTensor:$input_grad, Emb_FloatTensor:$gamma_grad,
                      Emb_FloatTensor:$beta_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $gamma attr-dict `:` type($grad) `,` type($input) `,`
    type($gamma) `->` type($input_grad) `,` type($gamma_grad) `,` type($beta_grad)
  }];
  let hasVerifier = 1;
}

def Emb_DropoutOp : Emb_Op<"dropout",
    [Emb_Lowered, Emb_Differentiable, Pure, SameOperandsAndResultType, Emb_Cost]> {
  let summary = "inverted dropout with a counter-based mask (identity in evaluation)";
  let description = [{
    While training, each element is kept with probability 1 - `rate` and
    scaled by 1 / (1 - `rate`), or set to 0; in evaluation the op is the
    identity. The mask is not random state: element i draws a hash of the
    run's seed, `stream`, the training step and i's place in the global
    batch (runtime/include/embc/runtime/cpu/DropoutKernels.h). So the op is
    a pure function of its input and the step: its gradient, a recomputed
    forward, a resumed run, micro-batches and data-parallel ranks all see
    one mask. `stream` names the dropout site; two sites with one stream
    and one shape share their masks, so the frontend numbers them apart.

    ```mlir
    %y = emb.dropout %x {rate = 1.000000e-01 : f64, stream = 3 : i64} : tensor<32x64x128xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input, F64Attr:$rate, I64Attr:$stream);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Emb_DropoutGradOp : Emb_GradOp<"dropout_grad", [Emb_Lowered, Pure, SameOperandsAndResultType]> {
  let summary = "gradient of emb.dropout: the forward's mask and scale applied to grad";
  let description = [{
    Regenerates the mask of the emb.dropout of the same `rate` and `stream`
    at the same step and applies it, with the scale 1 / (1 - `rate`), to
    the gradient of its result.

    ```mlir
    %dx = emb.dropout_grad %dy {rate = 1.000000e-01 : f64, stream = 3 : i64} : tensor<32x64x128xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, F64Attr:$rate, I64Attr:$stream);
  let results = (outs Emb_FloatTensor:$input_grad);
  let assemblyFormat = "$grad attr-dict `:` type($grad)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

def Emb_LossOp : Emb_Op<"loss", [Emb_LowersItself, Emb_Differentiable, Pure, Emb_Cost]> {
  let summary = "mean training loss over the batch";
  let description = [{
    The mean over the batch of:
    - `bce_with_logits`: binary cross-entropy of `input` logits (B x 1)
      against 0/1 `target` (B x 1);
    - `mse`: squared error of `input` (B x 1) against `target` (B x 1);
    - `softmax_ce`: cross-entropy of `input` logits (B x C) against the class
      index in `target` (B x 1);
    - `neg_sampling`: `-log s(input) - sum log s(-target)` with `input` the
      positive scores (B x 1) and `target` the K negative scores (B x K).
    - `sequence_softmax_ce`: softmax cross-entropy of `input` logits
      (B x L x C) at each position against the class index in `target`
      (B x L; -1 where a position has no target). Each sequence's loss is
      the mean over its positions with a target (0 when it has none), so the
      batch mean does not depend on how the batch is split (micro-batches,
      data-parallel ranks).

    ```mlir
    %l = emb.loss bce_with_logits %logit, %label
        : tensor<128x1xf32>, tensor<128x1xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Emb_LossKindAttr:$kind, Emb_FloatTensor:$input,
                       Emb_FloatTensor:$target);
  let results = (outs 0DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    `` $kind $input `,` $target attr-dict `:` type($input) `,` type($target)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Emb_SampledLogitsOp : Emb_Op<"sampled_logits", [Emb_Lowered, Emb_Differentiable, Pure,
    Emb_Cost]> {
  let summary = "an output projection's logits at the target and S sampled classes";
  let description = [{
    Sampled softmax (-emb-sample-softmax builds it from a token loss's
    output projection). Each row r of `input` (every dimension but the last
    are rows) with target class t = `target`[r] gets 1 + S logits, which
    `emb.loss sequence_softmax_ce` reads against class 0 (`classes`):

    - column 0: z_t - log(S Q(t));
    - column 1 + j: z_c - log(S Q(c)) for candidate c = `candidates`[j], or
      -inf when c == t (an accidental hit);

    with z_v = input_r . w_v (+ `bias`_v), w_v class v's weights: column v
    of a D x V `weight` (a dense layer's), or row v of a V x D one when
    `tied` (a table's rows, read by `emb.read_table`). While training the
    S = `num_sampled` candidates are drawn with replacement from the
    log-uniform distribution Q(v) = log((v + 2) / (v + 1)) / log(V + 1),
    keyed by the run's seed, `stream` and the step (the same draw for every
    micro-batch and rank of a step). In evaluation nothing is sampled:
    column 0 is z_t and column 1 the log-sum-exp of every other class, so
    the loss and perplexity are the full softmax's. A row whose target is
    -1 gets zeros and class -1. Kernels: runtime/include/embc/runtime/cpu/SampledSoftmaxKernels.h.

    ```mlir
    %logits, %classes, %candidates = emb.sampled_logits %h, %w, %t bias %b
        {num_sampled = 512 : i64, stream = 0 : i64, tied = false}
        : tensor<32x64x128xf32>, tensor<128x8000xf32>, tensor<32x64xf32>, tensor<8000xf32>
        -> tensor<32x64x513xf32>, tensor<32x64xf32>, tensor<512xi64>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$input, Emb_FloatTensor:$weight, Emb_FloatTensor:$target,
                       Optional<Emb_FloatTensor>:$bias, I64Attr:$num_sampled, BoolAttr:$tied,
                       I64Attr:$stream);
  let results = (outs Emb_FloatTensor:$logits, Emb_FloatTensor:$classes,
                      Emb_IdTensor:$candidates);
  let assemblyFormat = [{
    $input `,` $weight `,` $target (`bias` $bias^)? attr-dict `:` type($input) `,`
    type($weight) `,` type($target) (`,` type($bias)^)? `->` type($logits) `,` type($classes)
    `,` type($candidates)
  }];
  let hasVerifier = 1;
}

def Emb_SampledLogitsGradOp : Emb_GradOp<"sampled_logits_grad", [Emb_Lowered, Pure]> {
  let summary = "gradient of emb.sampled_logits: input, weight and bias gradients";
  let description = [{
    From `grad`, the gradient of emb.sampled_logits's logits, and the
    forward's `candidates`: the input's gradient, the weight's (in its
    layout: zero but at the candidates' and targets' classes) and, when
    the forward had a bias, the bias's. Rows whose target is -1 have none.

    ```mlir
    %dx, %dw, %db = emb.sampled_logits_grad %g, %h, %w, %t, %c {tied = false}
        : tensor<32x64x513xf32>, tensor<32x64x128xf32>, tensor<128x8000xf32>,
          tensor<32x64xf32>, tensor<512xi64>
        -> tensor<32x64x128xf32>, tensor<128x8000xf32>, tensor<8000xf32>
    ```
  }];
  let arguments = (ins Emb_FloatTensor:$grad, Emb_FloatTensor:$input, Emb_FloatTensor:$weight,
                       Emb_FloatTensor:$target, Emb_IdTensor:$candidates, BoolAttr:$tied);
  let results = (outs Emb_FloatTensor:$input_grad, Emb_FloatTensor:$weight_grad,
                      Optional<Emb_FloatTensor>:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight `,` $target `,` $candidates attr-dict `:` type($grad) `,`
    type($input) `,` type($weight) `,` type($target) `,` type($candidates) `->`
    type($input_grad) `,` type($weight_grad) (`,` type($bias_grad)^)?
  }];
  let hasVerifier = 1;
}

include "embc/dialect/EmbGradOps.td"
include "embc/dialect/EmbTransformOps.td"
include "embc/dialect/EmbScheduleOps.td"
include "embc/dialect/EmbPrecisionOps.td"
include "embc/dialect/EmbCommOps.td"

#endif // EMBC_DIALECT_EMBOPS_TD
