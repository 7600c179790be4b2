//===- EmbCommOps.td - collectives of data-parallel training ---*- tablegen -*-===//
//
// -emb-distribute inserts these ops when the plan runs on several ranks
// (`plan.data_parallel` N > 1): each rank trains on its slice of the global
// batch, and the collectives make every rank apply the same update. The
// gradient collectives name what they exchange by symbol (a pack, a
// parameter, a table or a table batch), like emb.accumulate_grad and
// emb.update, and carry no SSA values: gradients live in storage, not in
// tensors. The exchanges of sharded tables (below) carry the values of
// their lookups. On one rank none of them appears.
// Included from EmbOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBCOMMOPS_TD
#define EMBC_DIALECT_EMBCOMMOPS_TD

// Collectives belong to the backward pass and the update: evaluation, which
// runs a step's forward prefix, never reaches one.
class Emb_CommOp<string mnemonic, list<Trait> traits = []>
    : Emb_Op<mnemonic, !listconcat([Emb_Backward, Emb_LowersItself,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        MemoryEffects<[MemRead, MemWrite]>], traits)>;

def Emb_GradAllReduceStartOp : Emb_CommOp<"grad_all_reduce_start"> {
  let summary = "start summing a slice of a dense gradient over the ranks";
  let description = [{
    Starts an in-place all-reduce (sum over the ranks) of elements
    `[offset, offset + size)` of the gradient accumulator of `target`, an
    `emb.param_pack` (one all-reduce bucket of it) or an unpacked
    `emb.param` (its whole gradient). It does not block: the backward goes on
    while the bucket travels, and `emb.grad_all_reduce_wait` on the same
    target completes every all-reduce started on it. Nothing may write the
    slice in between, so -emb-distribute places the start after the last
    `emb.accumulate_grad` of the bucket's members.

    ```mlir
    emb.grad_all_reduce_start @dense_f32 offset 0 size 4096
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$target,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size);
  let assemblyFormat = "$target `offset` $offset `size` $size attr-dict";
}

def Emb_GradAllReduceWaitOp : Emb_CommOp<"grad_all_reduce_wait"> {
  let summary = "wait for the all-reduces of a dense gradient";
  let description = [{
    Completes every `emb.grad_all_reduce_start` on `target` since the last
    wait: afterwards its gradient accumulator holds the sum over the ranks.
    -emb-distribute places it before the first op that reads the gradient
    (unscale, clipping, the update).

    ```mlir
    emb.grad_all_reduce_wait @dense_f32
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$target);
  let assemblyFormat = "$target attr-dict";
}

def Emb_GatherRowsOp : Emb_CommOp<"gather_rows"> {
  let summary = "all-gather a sparse gradient's rows from every rank";
  let description = [{
    Replaces the sparse gradient of `target` (an `emb.table` or an
    `emb.table_batch`: its row ids and gradient rows, as appended by
    `emb.accumulate_rows`) with the concatenation of every rank's, in rank
    order. Rank r trains on examples `[r B/N, (r+1) B/N)` of the global batch,
    so the rows arrive in global batch order and every rank coalesces and
    applies the same update to its replica of the table. The gradient's
    capacity is N times one rank's. It sits in `@update` before the table's
    `emb.coalesce_rows`.

    ```mlir
    emb.gather_rows @tables_d16
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$target);
  let assemblyFormat = "$target attr-dict";
}

//===----------------------------------------------------------------------===//
// Sharded tables
//===----------------------------------------------------------------------===//

// A sharded table (`emb.table` with `emb.shard_rows`, set by -emb-distribute)
// keeps rows [shard_rows[r], shard_rows[r+1]) on rank r: all of them on one
// rank (table_wise) or an even slice on each (row_wise). Its lookups become
// shard_ids (ids to the ranks that store their rows), a local lookup of the
// every rank's bags on the local shard, and shard_pool (each rank's pooled
// rows back to it, partial sums added); the backward sends the pooled
// gradients the other way with shard_pool_grad. Every rank runs the same
// exchanges in the same order, forward (evaluation too) and backward.
class Emb_ShardOp<string mnemonic, list<Trait> traits = []>
    : Emb_Op<mnemonic, !listconcat([Emb_LowersItself,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        MemoryEffects<[MemRead, MemWrite]>], traits)> {
  let hasVerifier = 1;
}

def Emb_ShardIdsOp : Emb_ShardOp<"shard_ids"> {
  let summary = "send bags' ids to the ranks that store their rows";
  let description = [{
    Every rank gives the jagged bags of its B examples (`ids`, `offsets`,
    optional per-id `weights`); each id goes to the rank whose shard of
    `table` holds its row, as a row of that shard. The results are the bags
    of all N x B examples of the step (rank 0's first), each holding only
    the ids this rank stores: `offsets` has N x B + 1 entries. With
    `per_bag_mean`, each id's weight (1 without `weights`) is divided by the
    size of its whole bag, so the partial sums of a row-wise table add up to
    the bag's mean. The result weights exist exactly when `weights` or
    `per_bag_mean` is given.

    ```mlir
    %i, %o = emb.shard_ids @t[%ids, %offsets]
        : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<9xi64>
    %i, %o, %w = emb.shard_ids @t[%ids, %offsets] per_bag_mean
        : tensor<?xi64>, tensor<5xi64> -> tensor<?xi64>, tensor<9xi64>, tensor<?xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, Emb_IdTensor:$ids,
                       Emb_IdTensor:$offsets, Optional<Emb_FloatTensor>:$weights,
                       UnitAttr:$per_bag_mean);
  let results = (outs Emb_IdTensor:$local_ids, Emb_IdTensor:$local_offsets,
                      Optional<Emb_FloatTensor>:$local_weights);
  let assemblyFormat = [{
    $table `[` $ids `,` $offsets (`weights` $weights^)? `]` (`per_bag_mean` $per_bag_mean^)?
    attr-dict `:` type($ids) `,` type($offsets) (`,` type($weights)^)? `->`
    type($local_ids) `,` type($local_offsets) (`,` type($local_weights)^)?
  }];
}

def Emb_ShardPoolOp : Emb_ShardOp<"shard_pool"> {
  let summary = "return pooled rows to the ranks whose bags they pool";
  let description = [{
    `partial` holds this rank's pooled rows of the N x B bags of
    `emb.shard_ids`; rank r's block (rows [r B, (r+1) B)) goes back to rank
    r, which sums what every rank sent: its B x dim pooled embeddings (a
    reduce-scatter; for a table_wise table only the owner's block is not
    zero).

    ```mlir
    %e = emb.shard_pool @t %p : tensor<8x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, Emb_FloatTensor:$partial);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "$table $partial attr-dict `:` type($partial) `->` type($result)";
}

def Emb_ShardPoolGradOp : Emb_ShardOp<"shard_pool_grad", [Emb_Backward]> {
  let summary = "send pooled gradients to the ranks that store the rows";
  let description = [{
    The gradient of `emb.shard_pool`: every rank's B x dim gradient of its
    pooled embeddings, concatenated in rank order (N x B rows) on each rank
    that stores rows of `table` (an all-gather; a table_wise table's owner
    alone receives them, the other ranks get zeros).

    ```mlir
    %g = emb.shard_pool_grad @t %dy : tensor<4x16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, Emb_FloatTensor:$grad);
  let results = (outs Emb_FloatTensor:$result);
  let assemblyFormat = "$table $grad attr-dict `:` type($grad) `->` type($result)";
}

// -emb-batch-exchanges merges the exchanges of several sharded tables into
// one op each, so that a step runs one set of collectives for all of them
// (as FBGEMM's and TorchRec's table-batched exchanges do) instead of one per
// table. Member i of a group is exactly the per-table op on tables[i].
class Emb_ShardGroupOp<string mnemonic, list<Trait> traits = []>
    : Emb_ShardOp<mnemonic, traits>;

def Emb_ShardIdsGroupOp : Emb_ShardGroupOp<"shard_ids_group",
    [AttrSizedOperandSegments, AttrSizedResultSegments]> {
  let summary = "emb.shard_ids of several tables in one exchange";
  let description = [{
    Member i sends `ids[i]`/`offsets[i]` to the ranks storing `tables[i]`,
    as `emb.shard_ids` would, and yields `local_ids[i]`/`local_offsets[i]`.
    `weighted[i]` says whether member i has input weights (taken in order
    from `weights`); it has local weights when it is weighted or
    `per_bag_mean[i]` (taken in order from `local_weights`). All members
    travel in one all-to-all of counts, one of ids and one of weights.

    ```mlir
    %i:2, %o:2 = emb.shard_ids_group [@a, @b]
        ids(%ia, %ib : tensor<?xi64>, tensor<?xi64>)
        offsets(%oa, %ob : tensor<5xi64>, tensor<5xi64>)
        weighted [false, false] per_bag_mean [false, false]
        -> local_ids(tensor<?xi64>, tensor<?xi64>) local_offsets(tensor<9xi64>, tensor<9xi64>)
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$tables, Variadic<Emb_IdTensor>:$ids,
                       Variadic<Emb_IdTensor>:$offsets, Variadic<Emb_FloatTensor>:$weights,
                       DenseBoolArrayAttr:$weighted, DenseBoolArrayAttr:$per_bag_mean);
  let results = (outs Variadic<Emb_IdTensor>:$local_ids,
                      Variadic<Emb_IdTensor>:$local_offsets,
                      Variadic<Emb_FloatTensor>:$local_weights);
  let assemblyFormat = [{
    $tables `ids` `(` $ids `:` type($ids) `)` `offsets` `(` $offsets `:` type($offsets) `)`
    (`weights` `(` $weights^ `:` type($weights) `)`)?
    `weighted` $weighted `per_bag_mean` $per_bag_mean attr-dict
    `->` `local_ids` `(` type($local_ids) `)` `local_offsets` `(` type($local_offsets) `)`
    (`local_weights` `(` type($local_weights)^ `)`)?
  }];
  let extraClassDeclaration = [{
    /// Member i's input weights, or null.
    ::mlir::Value getMemberWeights(unsigned i);
    /// Member i's local weights, or null.
    ::mlir::Value getMemberLocalWeights(unsigned i);
  }];
}

def Emb_ShardPoolGroupOp : Emb_ShardGroupOp<"shard_pool_group"> {
  let summary = "emb.shard_pool of several tables in one exchange";
  let description = [{
    `results[i]` is `emb.shard_pool` of `partials[i]` for `tables[i]`. The
    row_wise members are summed in one reduce-scatter, the table_wise
    members sent by their owners in one all-to-all.

    ```mlir
    %a, %b = emb.shard_pool_group [@a, @b] %pa, %pb
        : tensor<8x16xf32>, tensor<8x4xf32> -> tensor<4x16xf32>, tensor<4x4xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$tables, Variadic<Emb_FloatTensor>:$partials);
  let results = (outs Variadic<Emb_FloatTensor>:$results);
  let assemblyFormat = [{
    $tables $partials attr-dict `:` type($partials) `->` type($results)
  }];
}

def Emb_ShardPoolGradGroupOp : Emb_ShardGroupOp<"shard_pool_grad_group", [Emb_Backward]> {
  let summary = "emb.shard_pool_grad of several tables in one exchange";
  let description = [{
    `results[i]` is `emb.shard_pool_grad` of `grads[i]` for `tables[i]`. The
    row_wise members are gathered in one all-gather, the table_wise members
    sent to their owners in one all-to-all.

    ```mlir
    %a, %b = emb.shard_pool_grad_group [@a, @b] %ga, %gb
        : tensor<4x16xf32>, tensor<4x4xf32> -> tensor<8x16xf32>, tensor<8x4xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$tables, Variadic<Emb_FloatTensor>:$grads);
  let results = (outs Variadic<Emb_FloatTensor>:$results);
  let assemblyFormat = [{
    $tables $grads attr-dict `:` type($grads) `->` type($results)
  }];
}

#endif // EMBC_DIALECT_EMBCOMMOPS_TD
