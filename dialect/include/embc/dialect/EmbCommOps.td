//===- EmbCommOps.td - collectives of data-parallel training ---*- tablegen -*-===//
//
// -emb-distribute inserts these ops when the plan runs on several ranks
// (`plan.data_parallel` N > 1): each rank trains on its slice of the global
// batch, and the collectives make every rank apply the same update. They
// name what they exchange by symbol (a pack, a parameter, a table or a table
// batch), like emb.accumulate_grad and emb.update, and carry no SSA values:
// gradients live in storage, not in tensors. On one rank they are absent.
// Included from EmbOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBCOMMOPS_TD
#define EMBC_DIALECT_EMBCOMMOPS_TD

// Collectives belong to the backward pass and the update: evaluation, which
// runs a step's forward prefix, never reaches one.
class Emb_CommOp<string mnemonic, list<Trait> traits = []>
    : Emb_Op<mnemonic, !listconcat([Emb_Backward,
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

#endif // EMBC_DIALECT_EMBCOMMOPS_TD
