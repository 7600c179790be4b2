//===- Passes.td - emb passes ----------------------------------*- tablegen -*-===//
//
// Every -emb-* pass, grouped under banners, alphabetical within a group.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_PASSES_TD
#define EMBC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Analyses and reports
//===----------------------------------------------------------------------===//

def EmbPrintSummaryPass : Pass<"emb-print-summary", "::mlir::ModuleOp"> {
  let summary = "Print the model summary: tables, parameters, memory and FLOPs";
  let description = [{
    Prints, without changing the IR, what a practitioner wants to know about
    a model before training it: each embedding table (rows x dim, storage,
    bytes, optimizer), the dense parameters (count, bytes), and the forward
    cost per batch (FLOPs and bytes moved, from each op's CostOpInterface).

    ```
    model summary: 2 tables, 3 dense parameters
      table @user     [943 x 64]   f32   241.4 KiB  adagrad lr=0.05
      ...
      forward per batch: 1.2 MFLOP, 0.6 MB moved, 7 ops
    ```

    The module must be verified and hold a `func.func @forward`.
  }];
  let options = [
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the summary ('-' is stdout)">,
  ];
  let statistics = [
    Statistic<"numTables", "tables", "Number of embedding tables">,
    Statistic<"numParams", "params", "Number of dense parameters">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def EmbAutodiffPass : Pass<"emb-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build the training step: forward, backward and optimizer update";
  let description = [{
    Turns `func.func @forward` into `func.func @train_step`: the forward ops,
    then the backward pass, built in reverse by each op's
    GradientOpInterface rule (an op brings its own gradient). A value used
    several times gets the sum of its uses' gradients (`emb.add` for B x N
    activations; otherwise the producer's rule runs once per gradient, which
    accumulates the same total). Parameter gradients
    go to `emb.accumulate_grad`; embedding gradients stay sparse: one row per
    looked-up id, appended by `emb.accumulate_rows`, never dense over a
    table. A forward op whose gradient needs an intermediate the forward
    computes anyway keeps it: each `emb.cross` returns its product xl W
    (`linear`), which `emb.cross_grad` reads instead of running a third
    D x D GEMM.

    A second function, `func.func @update`, holds the optimizer step:
    `emb.coalesce_rows` per table, `emb.clip_grad_norm` when the training
    config clips, and one `emb.update` per parameter and table.

    Refused, with an error on the table: global weight decay on a table whose
    optimizer cannot apply it without touching every row's state (anything
    but plain SGD and AdamW), since that would silently become a dense
    update.

    ```mlir
    // before
    func.func @forward(%x: tensor<4x2xf32>, %y: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
      %w = emb.get @w : tensor<2x1xf32>
      %p = emb.dense %x, %w : tensor<4x2xf32>, tensor<2x1xf32> -> tensor<4x1xf32>
      %l = emb.loss mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<f32>
      return %l, %p : tensor<f32>, tensor<4x1xf32>
    }
    // after
    func.func @train_step(...) -> (tensor<f32>, tensor<4x1xf32>) {
      ...forward...
      %dp = emb.loss_grad mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
      %dw = emb.dense_grad_weight %x, %dp : tensor<4x2xf32>, tensor<4x1xf32> -> tensor<2x1xf32>
      emb.accumulate_grad @w, %dw : tensor<2x1xf32>
      return %l, %p : tensor<f32>, tensor<4x1xf32>
    }
    func.func @update() {
      emb.update @w
      return
    }
    ```
  }];
  let statistics = [
    Statistic<"numGradOps", "grad-ops", "Backward ops built">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect", "::mlir::func::FuncDialect"];
}

def EmbSelectTargetsPass : Pass<"emb-select-targets", "::mlir::ModuleOp"> {
  let summary = "Compute a masked-token loss's logits only at the masked positions";
  let description = [{
    On `func.func @forward`, before -emb-autodiff. A `sequence_softmax_ce`
    loss whose targets come from `emb.mask_tokens` has at most
    P = max(1, round(rate L)) targets a sequence (10 of 64 at the usual 15%),
    but its logits are B x L x vocab: the output projection, by far the
    largest GEMM of a masked-token model, computes L rows a sequence for P
    of them to count. This pass walks back from the loss's input through
    the row-wise ops that only lead to it (`emb.dense`, `emb.activation`,
    `emb.layer_norm`), puts an `emb.select_targets` of the target positions
    before them, and rebuilds them on B x P rows: the same logits at the
    positions with a target, so the loss, its gradients and every update
    are those of the plain model (the rows and targets past a sequence's
    count are zeros and -1, which the loss skips). The forward's
    prediction result becomes the B x P x vocab logits.

    Nothing changes when the targets are not masked tokens (next-token
    targets are every position), when the chain starts with another op, or
    when P = L. `embc --no-select-targets` leaves the pass out.

    ```mlir
    // before
    %m, %t = emb.mask_tokens %ids, %offsets {...} : ... -> tensor<?xi64>, tensor<32x64xf32>
    ...
    %logits = emb.dense %h, %w, %b : tensor<32x64x128xf32>, ... -> tensor<32x64x8000xf32>
    %l = emb.loss sequence_softmax_ce %logits, %t : ...
    // after
    %r, %s = emb.select_targets %h, %t
        : tensor<32x64x128xf32>, tensor<32x64xf32> -> tensor<32x10x128xf32>, tensor<32x10xf32>
    %logits = emb.dense %r, %w, %b : tensor<32x10x128xf32>, ... -> tensor<32x10x8000xf32>
    %l = emb.loss sequence_softmax_ce %logits, %s : ...
    ```
  }];
  let statistics = [
    Statistic<"numSelected", "selected-losses", "Token losses computed at their targets only">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect", "::mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// Optimisation (between -emb-autodiff and -emb-to-plan)
//===----------------------------------------------------------------------===//

def EmbSampleSoftmaxPass : Pass<"emb-sample-softmax", "::mlir::ModuleOp"> {
  let summary = "Train a token loss on sampled classes (sampled softmax)";
  let description = [{
    On `func.func @forward`, before -emb-autodiff (after
    -emb-select-targets). A `sequence_softmax_ce` loss marked
    `emb.sampled = S` (the model file's `"sampled": S`) whose logits come
    from an output projection, `emb.dense` (weight D x V, optional bias) or
    `emb.table_scores` (tied embeddings), has the projection and the loss
    replaced by `emb.sampled_logits`, which computes 1 + S logits a row:
    the target's and those of S classes drawn each step from a log-uniform
    distribution, each corrected by its log expected count, and
    `emb.loss sequence_softmax_ce` against class 0. The projection's GEMM
    shrinks from V to S + 1 columns, and its backward with it. Evaluation
    computes the full softmax (the loss and perplexity are exact). The
    forward's prediction result becomes the sampled logits.

    Refused, at the loss: a marked loss of another kind, logits that are not
    an output projection's, logits used by other ops, and S not below the
    number of classes.

    ```mlir
    // before
    %logits = emb.dense %h, %w, %b : ... -> tensor<32x64x8000xf32>
    %l = emb.loss sequence_softmax_ce %logits, %t {emb.sampled = 512 : i64} : ...
    // after
    %s, %c, %ids = emb.sampled_logits %h, %w, %t bias %b
        {num_sampled = 512 : i64, stream = 0 : i64, tied = false} : ...
        -> tensor<32x64x513xf32>, tensor<32x64xf32>, tensor<512xi64>
    %l = emb.loss sequence_softmax_ce %s, %c : ...
    ```
  }];
  let statistics = [
    Statistic<"numSampled", "sampled-losses", "Token losses trained on sampled classes">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect", "::mlir::func::FuncDialect"];
}

def EmbAutoPass : Pass<"emb-auto", "::mlir::ModuleOp"> {
  let summary = "Fit the plan into the memory budget: micro-batches, remat, sharding, table placement and precision";
  let description = [{
    With `plan.memory_budget` set (or the `budget` option), chooses the
    micro-batch count, activation rematerialisation and table storage so that
    the plan fits, and writes the choice into the module for the passes that
    follow (table `storage`, `emb.plan` remat and micro_batches). Exact
    levers come first: micro-batches (each divisor of the batch up to
    `max-micro-batches`) and remat (none or all) do not change what the model
    learns. With data parallelism (`plan.data_parallel` N > 1), sharding
    comes next and is exact too: the k largest tables (k = 1..T, the fewest
    that fit) are sharded row_wise, so each rank stores 1/N of them (the
    step-time model does not count the exchanges yet). Then, with `disk`
    (embc: a CPU target), tables move to `disk` placement, exact as well:
    the k tables (k = 1..T, the fewest that fit) with the most bytes per
    id their lookups read per example, which lose the least by living in
    the page cache. Only when none of them fits are tables quantised (replicated, f32 ones), along a
    ladder: the k largest tables at bf16 (k = 1..T), then the k largest at
    int8 with the others bf16, then int4 with the others int8; the lowest
    rung that fits is the mildest quantisation that does. Every candidate is compiled
    for real on a clone of the module (the planning passes and the plan),
    so the peak it compares is the plan's own. The search is a driver loop
    over compilations, `fitMemoryBudget` (passes/include/embc/passes/
    Pipeline.h), which embc runs between -emb-autodiff and the planning
    passes; this pass is its adapter for emb-opt. Among the
    fitting candidates of the best quality, the fastest by a nominal device
    model wins (bytes at `bandwidth-gbs`, FLOPs at `tflops`, `launch-us` per
    kernel launch). The reasons go into the `emb.auto` module attribute and
    the plan report.

    ```mlir
    // before: #emb.plan<memory_budget = 12582912>
    // after
    module attributes {emb.auto = ["-emb-auto: memory budget 12.0 MiB", ...,
        "  chose 4 micro-batches, remat none: peak 11.2 MiB, ..."],
      emb.plan = #emb.plan<memory_budget = 12582912, micro_batches = 4>, ...}
    ```
    Without a budget the module is unchanged; with micro_batches, remat or
    pipeline stages set by hand, they are the user's plan and nothing is
    chosen (remat `auto` fits the budget by itself). Refused: a module
    without @train_step, one already planned, and a budget below the
    smallest plan found (the error says the smallest budget that would fit).
  }];
  let options = [
    Option<"budgetBytes", "budget", "int64_t", /*default=*/"0",
           "Memory budget in bytes (0: the model's plan.memory_budget)">,
    Option<"maxMicroBatches", "max-micro-batches", "int64_t", /*default=*/"64",
           "Largest micro-batch count tried">,
    Option<"bandwidthGBs", "bandwidth-gbs", "double", /*default=*/"3000.0",
           "Device memory bandwidth of the time estimate, GB/s">,
    Option<"tflops", "tflops", "double", /*default=*/"100.0",
           "Device compute rate of the time estimate, TFLOP/s">,
    Option<"launchUs", "launch-us", "double", /*default=*/"5.0",
           "Cost of one kernel launch in the time estimate, microseconds">,
    Option<"pack", "pack", "bool", /*default=*/"true",
           "Candidates are compiled with -emb-pack-params">,
    Option<"fuse", "fuse", "bool", /*default=*/"true",
           "Candidates are compiled with -emb-fuse">,
    Option<"batchExchanges", "batch-exchanges", "bool", /*default=*/"true",
           "Candidates are compiled with -emb-batch-exchanges">,
    Option<"diskTables", "disk", "bool", /*default=*/"true",
           "Tables may be moved to disk placement before any is quantised">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect", "::mlir::func::FuncDialect"];
}

def EmbDistributePass : Pass<"emb-distribute", "::mlir::ModuleOp"> {
  let summary = "Insert the collectives of data-parallel training";
  let description = [{
    With `data_parallel` N > 1 in the module's `emb.plan` (or the `ranks`
    option), every rank runs `@train_step` on its B/N examples of the global
    batch (the frontend already typed the step for B/N) and this pass makes
    the ranks apply one update:

    - the dense gradient is summed over the ranks in buckets: for each
      all-reduce bucket of an `emb.param_pack` (its `buckets`, cut by
      -emb-pack-params), and for each trained parameter left unpacked, an
      `emb.grad_all_reduce_start` right after the `emb.accumulate_grad` that
      finishes the bucket's last member, so it travels while the backward
      goes on; `emb.grad_all_reduce_wait` at the head of `@update`, before
      anything reads the gradient (loss-scale check, clipping, updates).
      When the step runs several times per update (`grad_accumulation` > 1,
      or micro-batches and stages of -emb-pipeline) the starts move to the
      head of `@update` too: the sum is taken once per optimizer step;
    - each table's (or table batch's) sparse gradient is all-gathered in
      rank order by `emb.gather_rows` at the head of `@update`, before its
      `emb.coalesce_rows`: every rank then coalesces and applies the same
      rows, in global batch order, to its replica of the table;
    - a table whose `sharding` is `table_wise` or `row_wise` is split
      instead: `emb.shard_rows` gives rank r rows [b_r, b_{r+1}) (table_wise:
      all rows to one owner, balancing the ranks' table bytes, largest table
      first; row_wise: ceil(rows / N) each). Each lookup of it becomes
      `emb.shard_ids` (ids to the ranks storing their rows), a lookup of the
      N x B bags on the local shard and `emb.shard_pool` (pooled rows back,
      partial sums added); its gradient gathers the pooled gradients with
      `emb.shard_pool_grad` and accumulates local rows, which each rank
      coalesces and updates alone (no `emb.gather_rows`).

    The update's `grad_scale` gets a further 1/N (-emb-to-plan), so the sum
    of the ranks' batch-mean gradients becomes the global batch's mean. The
    module is marked `emb.data_parallel = N`, which -emb-to-plan requires
    when the plan asks for N > 1 ranks. With N = 1 nothing changes.

    ```mlir
    // before (N = 2)
    emb.accumulate_grad @w, %dw : tensor<4x2xf32>
    ...
    func.func @update() {
      emb.coalesce_rows @t
      emb.update @dense_f32
      emb.update @t
    }
    // after
    emb.accumulate_grad @w, %dw : tensor<4x2xf32>
    emb.grad_all_reduce_start @dense_f32 offset 0 size 16
    ...
    func.func @update() {
      emb.gather_rows @t
      emb.grad_all_reduce_wait @dense_f32
      emb.coalesce_rows @t
      emb.update @dense_f32
      emb.update @t
    }
    ```
    With `pipeline_ranks` R > 1 (or the `pipeline-ranks` option) the
    pipeline stages of -emb-pipeline's `emb.schedule` are spread over R
    ranks instead, contiguous stages per rank (`ranks [...]` on the
    schedule): each rank runs its stages' instructions on the whole batch,
    and the schedule's send/recv between stages of different ranks become
    messages. A table read only by one rank's stages lives on that rank
    alone (`emb.shard_rows` with one owner; no exchange: its lookups already
    run there); other tables are replicated and their sparse gradients
    gathered, and the dense gradient is all-reduced in `@update`, as above,
    but summed, not averaged (every rank saw the same examples: the
    gradients of parameters a rank's stages do not read are zero there). A
    table stays replicated when it is quantised or when the update clips
    gradients or checks fp16 overflow (those need every row's gradient on
    every rank). Refused: `data_parallel` > 1 with it, fewer stages than
    ranks, no `emb.schedule`, and tables with a `sharding`.

    Runs after -emb-pack-params and -emb-pipeline and before -emb-fuse
    (which keeps the collectives where they are and forms no
    `embedding_update` for a gathered or sharded table). Refused:
    `column_wise` sharding; a sharded table that is quantised, batched,
    read by `emb.gather`, max-pooled row_wise, or trained with gradient
    clipping; a module without `@train_step` and `@update`, and one already
    distributed.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"0",
           "Data-parallel ranks (0: the module's emb.plan data_parallel)">,
    Option<"pipelineRanks", "pipeline-ranks", "int64_t", /*default=*/"0",
           "Ranks the pipeline stages run on (0: the module's emb.plan pipeline_ranks)">,
  ];
  let statistics = [
    Statistic<"numAllReduces", "all-reduces", "Gradient all-reduce buckets started">,
    Statistic<"numGathers", "gathers", "Sparse gradients all-gathered">,
    Statistic<"numShardedTables", "sharded-tables", "Tables split across the ranks">,
    Statistic<"numOwnedTables", "owned-tables", "Tables stored on one pipeline rank only">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbBatchExchangesPass : Pass<"emb-batch-exchanges", "::mlir::ModuleOp"> {
  let summary = "Merge the exchanges of sharded tables into one collective set per step";
  let description = [{
    -emb-distribute gives each lookup of a sharded table its own exchanges:
    `emb.shard_ids` (three all-to-alls), `emb.shard_pool` and, in the
    backward, `emb.shard_pool_grad`. With T sharded tables a step runs 5T
    small collectives, each paying the communicator's latency. This pass
    merges the exchanges of one kind in a block into one
    `emb.shard_ids_group`, `emb.shard_pool_group` or
    `emb.shard_pool_grad_group`, which the runtime runs as 3, at most 2 and
    at most 2 collectives (row_wise and table_wise members travel
    separately). The numbers exchanged are the same, so training is
    unchanged.

    A group is placed right before the first use of any member's result,
    and takes members in program order while that place is after every
    member's operands: exchanges whose results are used before another's
    operands exist (a tower's lookups used before the next tower's ids are
    hashed) form separate groups. Only ops of the same pipeline stage
    (`emb.stage`) are merged. A kind with a single exchange is left alone.

    ```mlir
    // before
    %i0, %o0 = emb.shard_ids @a[%ids0, %off0] : ...
    %p0 = emb.lookup @a[%i0, %o0] sum : ...
    %e0 = emb.shard_pool @a %p0 : tensor<8x4xf32> -> tensor<4x4xf32>
    %i1, %o1 = emb.shard_ids @b[%ids1, %off1] : ...
    %p1 = emb.lookup @b[%i1, %o1] sum : ...
    %e1 = emb.shard_pool @b %p1 : tensor<8x4xf32> -> tensor<4x4xf32>
    // after
    %i:2, %o:2 = emb.shard_ids_group [@a, @b] ids(%ids0, %ids1) offsets(%off0, %off1) ...
    %p0 = emb.lookup @a[%i#0, %o#0] sum : ...
    %p1 = emb.lookup @b[%i#1, %o#1] sum : ...
    %e:2 = emb.shard_pool_group [@a, @b] %p0, %p1 : ...
    ```

    Runs after -emb-distribute and before -emb-fuse. Malformed groups are
    refused by the ops' verifiers.
  }];
  let statistics = [
    Statistic<"numGroups", "groups", "Groups of exchanges formed">,
    Statistic<"numMerged", "merged", "Per-table exchanges merged into groups">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbFusePass : Pass<"emb-fuse", "::mlir::ModuleOp"> {
  let summary = "Group ops that the plan runs as single kernels";
  let description = [{
    Forms `emb.fused` groups in `@train_step` (values used only inside a
    group are never written to memory):

    - `lookup`: every table's hash + pooled lookup, one launch for all;
    - `dense_act`: a dense layer with its activation (GEMM + epilogue); the
      activation's gradient is rewritten to read the activation's output
      (`from_output`), so the pre-activation is not kept;
    - `dense_act_grad`: a dense layer's backward (activation gradient, bias
      and weight gradients accumulated in place, input gradient);
    - `interaction_concat` / `interaction_concat_grad`: the interaction
      written straight into its concatenation, and the backward of both
      (the copied input's two gradients summed in the same pass);
    - `embedding_update`: each table's (or table batch's) backward with its
      optimizer update, moved from `@update` into the step, so no per-id
      gradient rows are materialised. Only when the update follows every
      step (no gradient accumulation) and nothing needs all gradients first
      (no clipping), for sum and mean pooling;
    - `add_layer_norm`: a layer norm of a two-input add without bias (a
      residual connection) with the dropout that feeds the add, when it
      has no other use: one pass a row writes the sum and its layer norm
      (the unfused dropout, add and layer_norm, operation for operation);
    - `add_layer_norm_grad`: its backward, a layer_norm_grad with the add
      of the residual stream's gradient and the dropout_grad of the sum
      (either may be missing), in the norm's row pass;
    - `dense_multi`: dense layers without activation that read one input
      (a Transformer layer's Q, K and V projections): each block of the
      input's rows goes through every layer's GEMM while in cache;
    - `dense_multi_grad`: their backward, when the input gradients are
      summed by a chain of adds (autodiff's accumulation): every layer's
      weight and bias gradients, and dx = ((dx_0 + dx_1) + ...) a block of
      rows at a time, the per-layer dx never written to memory;
    - `elementwise`: remaining chains of adds and activations;
    - `skipgram`: only when the model's training asks for
      `embedding_updates` = `per_example` or `hogwild`: the whole step of a
      skip-gram model (sum-pooled centre and context lookups, gathered
      negatives, their dots, a neg_sampling loss, its backward and the one
      update of the table batch holding the three tables), which the kernel
      runs example by example, each example's gradient applied before the
      next example reads the rows (word2vec's scheme; a new training mode,
      not a rewrite: it does not equal the batch update). Refused with an
      error for any other step (more layers, dense parameters, quantised or
      sharded tables, tables in several updates, accumulation, clipping,
      16-bit compute, micro-batches), and nothing else is fused then.

    Numerics: the contract is agreement with an unfused run within 1e-5
    relative (fp32); the CPU kernels make the plain kernels' GEMM calls and
    sum in their order, so on every example the runs are bit-identical.

    ```mlir
    // before
    %z = emb.dense %x, %w, %b : ... -> tensor<8x4xf32>
    %y = emb.activation relu %z : tensor<8x4xf32>
    // after
    %y = emb.fused dense_act -> tensor<8x4xf32> {
      %z = emb.dense %x, %w, %b : ... -> tensor<8x4xf32>
      %a = emb.activation relu %z : tensor<8x4xf32>
      emb.yield %a : tensor<8x4xf32>
    }
    ```
    Needs `-emb-autodiff` first; refuses a module that is already fused.
  }];
  let statistics = [
    Statistic<"numGroups", "groups", "Fusion groups formed">,
    Statistic<"numFusedOps", "fused-ops", "Ops moved into fusion groups">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbPackParamsPass : Pass<"emb-pack-params", "::mlir::ModuleOp"> {
  let summary = "Pack dense parameters into one buffer and batch the tables";
  let description = [{
    Dense parameters of one element type become one `emb.param_pack`: values,
    gradients and optimizer state each in one contiguous buffer (members at
    64-byte aligned offsets, in backward order), so `@update` runs one fused
    optimizer step for all of them, clipping sums the gradient member by
    member in one sweep of contiguous memory, and the gradient is cut into all-reduce buckets of at most
    `bucket-kib` KiB (at member boundaries) for data-parallel training.

    Tables with the same dim, storage, optimizer and placement become one
    `emb.table_batch`: one rows x dim buffer with per-table row offsets (and
    the optimizer state alongside), one sparse gradient, and one
    `emb.coalesce_rows` and `emb.update` for all of them. A table with a
    `sharding` stays alone when the plan has `data_parallel` > 1
    (-emb-distribute splits it by its own rows).

    Training is bit-identical with and without packing: every value gets the
    same arithmetic, only its address changes.

    ```mlir
    // before (in @update)
    emb.update @w0
    emb.update @b0
    // after
    emb.param_pack @dense_f32 : f32[48] members [@b0, @w0] offsets [0, 16] buckets [0, 48]
    emb.update @dense_f32
    ```
    Needs `-emb-autodiff` first; refuses a module that is already packed.
  }];
  let options = [
    Option<"bucketKiB", "bucket-kib", "int64_t", /*default=*/"25600",
           "Largest all-reduce bucket of the packed gradient, in KiB">,
    Option<"batchTables", "batch-tables", "bool", /*default=*/"true",
           "Also batch tables of the same dim, storage and optimizer">,
  ];
  let statistics = [
    Statistic<"numPackedParams", "packed-params", "Parameters packed">,
    Statistic<"numBatchedTables", "batched-tables", "Tables batched">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbPipelinePass : Pass<"emb-pipeline", "::mlir::ModuleOp"> {
  let summary = "Split the batch into micro-batches, assign pipeline stages, emit the schedule";
  let description = [{
    Reads `micro_batches` m, `pipeline_stages` p and `schedule` from the
    module's `emb.plan` (options override them); m = 1 and p = 1 leave the
    IR unchanged.

    Micro-batching rewrites `@train_step` to run on B/m examples: the
    batch-major arguments (dense, label, negatives: B rows; offsets: B+1;
    ids and weights: `emb.max_ids` divided by m) and every value computed
    from them take the micro-batch shape, while parameter-shaped values
    (`emb.get` results, parameter gradients) keep theirs. The rewritten
    module is verified, so every op re-checks its shapes. Gradients
    accumulate over the m micro-batches and -emb-to-plan scales the update
    by 1/(grad_accumulation * m): the result equals the full-batch step.

    With p > 1 the forward ops are split into p contiguous stages of
    balanced cost (CostOpInterface FLOPs + bytes; ops that already carry
    `emb.stage` keep it), and each backward op runs on the stage of the
    forward values it reads (it must lie between those and the stages of the
    gradients it reads). Every op gets `emb.stage = N : i64`.

    The schedule of one optimizer step (GPipe or 1F1B; with one stage both
    run each micro-batch's forward and backward back to back) is emitted as
    `emb.schedule`, whose verifier checks it for deadlocks and mismatched
    transfers.

    ```mlir
    // before: #emb.plan<micro_batches = 2>, batch 8
    func.func @train_step(%x: tensor<8x2xf32> {emb.role = "dense", ...}, ...)
    // after
    func.func @train_step(%x: tensor<4x2xf32> {emb.role = "dense", ...}, ...)
        attributes {emb.micro_batches = 2 : i64, emb.pipeline_stages = 1 : i64}
    emb.schedule gpipe stages 1 micro_batches 2 {
      emb.sched.load stage 0 mb 0
      emb.sched.forward stage 0 mb 0
      emb.sched.backward stage 0 mb 0
      ...
      emb.sched.step stage 0
    }
    ```
    Refused: m not dividing the batch, more stages than forward ops, stage
    assignments that send values backwards, a module already pipelined, and
    any op whose shapes do not survive the rewrite (the op's verifier says
    which).
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"0",
           "Micro-batches per batch (0: the module's emb.plan)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Pipeline stages (0: the module's emb.plan)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "gpipe or 1f1b (empty: the module's emb.plan)">,
  ];
  let statistics = [
    Statistic<"numRetyped", "retyped-values", "Values given the micro-batch shape">,
    Statistic<"numInstructions", "schedule-instructions", "Schedule instructions emitted">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect", "::mlir::func::FuncDialect"];
}

def EmbPlanMemoryPass : Pass<"emb-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Ask -emb-to-plan to plan the arena: buffer lifetimes and offsets with reuse";
  let description = [{
    Records the memory-planning strategy on the module. Memory planning is
    a plan-level step: `-emb-to-plan` runs it on the plan it has just
    lowered (after every IR pass, so nothing can change the buffers
    afterwards): it computes every buffer's lifetime on the step's timeline
    (step kernels 0..S-1, then update kernels S..S+U-1: a buffer lives from
    the first to the last kernel that names it), and gives the buffers
    offsets in one arena so that buffers whose lifetimes do not meet share
    memory. Parameters, tables, gradients and optimizer state live for the
    whole run; inputs from the start of the step; the loss and predictions
    to its end; a buffer with several micro-batch slots for the whole step.

    `strategy=greedy_by_size` (the default) places the largest buffer
    first, each at the lowest 64-byte aligned offset that no placed buffer
    with an overlapping lifetime uses; `sequential` keeps one buffer after
    another (no reuse), for comparison. Without the attribute the plan is
    laid out sequentially. The peak and lower bound are in the plan
    (`memory`) and its report (`embc --emit=report`).

    ```mlir
    // after
    module attributes {emb.memory_plan = {strategy = "greedy_by_size"}, ...}
    ```
    Refuses a module it has already planned.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string",
           /*default=*/"embc::runtime::enumString(embc::runtime::MemoryStrategy::GreedyBySize)",
           "How to place buffers: greedy_by_size or sequential">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbQuantizePass : Pass<"emb-quantize", "::mlir::ModuleOp"> {
  let summary = "Train embedding tables in quantised storage (f16, bf16, int8/int4 row-wise)";
  let description = [{
    Makes each table's storage (`emb.table ... bf16`, from the model's
    `dtype` or `plan.quantize`) explicit in the training IR:

    - every `emb.lookup` / `emb.gather` of a quantised table (and a max-pooled
      `emb.lookup_grad`, which reads the rows) gets `emb.dequantize =
      #emb<storage ...>`: rows are converted to f32 as they are read, fused
      into the lookup (int8/int4: `scale * q + bias` per row, with an fp16
      scale and bias; int4 packs two codes per byte and needs an even dim);
    - every `emb.update` of one gets `emb.requantize = "stochastic"`: the
      touched row is dequantised, takes the f32 optimizer step, and is
      stored back with stochastic rounding (unbiased, keyed on the seed,
      table, row, optimizer step and element, so deterministic for any
      thread count); int8/int4 rows first get a new fp16 scale and bias
      from their min and max (scale (max - min) / 255 or / 15);
    - the module gets `emb.quantized`; `-emb-to-plan` refuses quantised
      tables without it.

    Optimizer state stays f32. The dense half (bf16/fp16 compute, fp16 loss
    scaling) is QuantizeDense.cpp's, called from here: with
    `training.precision` bf16 or fp16, every emb.dense, emb.interaction,
    emb.cross and their gradient ops get `emb.compute = #emb<precision bf16>`
    (operands rounded to the compute type, f32 accumulation; parameters,
    gradients and optimizer state stay f32 master copies); fp16 also marks
    its emb.loss_grad `emb.loss_scaled` and puts `emb.unscale_grads` at the
    head of @update (dynamic loss scaling: an overflowing update is skipped
    and the scale halved):

    ```mlir
    %y = emb.dense %x, %w, %b {emb.compute = #emb<precision fp16>} : ...
    %d = emb.loss_grad bce_with_logits %y, %t {emb.loss_scaled} : ...
    func.func @update() {
      emb.unscale_grads initial(6.553600e+04) growth(2.000000e+00) backoff(5.000000e-01) interval(2000)
      ...
    ```

    ```mlir
    // before
    emb.table @t[1000 x 16] bf16 init<kind = normal, std = 0.01> optimizer<kind = adagrad, lr = 0.1>
    %e = emb.lookup @t[%ids, %offsets] sum : tensor<?xi64>, tensor<129xi64> -> tensor<128x16xf32>
    emb.update @t
    // after
    %e = emb.lookup @t[%ids, %offsets] sum {emb.dequantize = #emb<storage bf16>} : ...
    emb.update @t {emb.requantize = "stochastic"}
    ```
    Runs once, after `-emb-autodiff` and before `-emb-pack-params` and
    `-emb-fuse`. Refuses global weight decay on a quantised table (every row
    would be requantised each step) and `tables=int4` on a table of odd dim.
  }];
  let options = [
    Option<"tables", "tables", "std::string", /*default=*/"\"\"",
           "Store every table as f32, f16, bf16, int8 or int4 (default: each "
           "table's own storage)">,
  ];
  let statistics = [
    Statistic<"numQuantizedTables", "quantized-tables", "Tables in quantised storage">,
    Statistic<"numMarkedOps", "marked-ops", "Lookups and updates marked">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbRematPass : Pass<"emb-remat", "::mlir::ModuleOp"> {
  let summary = "Recompute forward activations in the backward instead of keeping them";
  let description = [{
    Forward values that the backward of `@train_step` reads live from the
    forward until their backward use: together they are the activation peak.
    The pass keeps some of them (checkpoints) and recomputes the others: for
    each dropped value it clones the forward ops that rebuild it from kept
    values right before the value's first backward use (a segment is rebuilt
    once; later backward uses read the same clones) and rewires the backward
    to the clones. Cloned ops carry the unit attribute `emb.remat`.

    Only pure ops with a cost (dense, activation, concat, add, interaction,
    cross, dot, ...) are recomputed; lookups (their pooled outputs are
    checkpoints), the loss, values the step returns and ops with side
    effects are always kept. Before planning, activation gradients are made
    to read the activation's output (`from_output`, as `-emb-fuse` does), so
    a dense layer's pre-activation is never needed by the backward.

    The forward values the backward reads form a chain of stages in op
    order (a DAG such as DLRM's is taken in op order too). The mode comes
    from the module's `emb.plan` (`remat`, `memory_budget`), the options
    override it:

    - `none`: the IR is left unchanged;
    - `all`: keep as little as possible: `strategy=sqrt` (the default) is
      the sqrt(n) segmentation of Chen et al.; `strategy=dp` is the dynamic
      program at its minimum-memory point (fewest FLOPs among the schedules
      of the lowest peak);
    - `auto`: the dynamic program, optimal for chains: the fewest recomputed
      FLOPs (CostOpInterface) such that the estimated peak (persistent bytes:
      tables, parameters, their gradients and optimizer state, inputs, the
      activations that are always kept; plus the kept activations and the
      largest recomputed segment) fits the budget.

    The module gets `emb.remat_note`, which the plan report shows:
    `recomputes K values (C ops), +X% step FLOPs, activation estimate A -> B
    bytes` (X against the step's FLOPs, counted as 3x the forward's; A and B
    from the liveness of the step's values in op order).

    ```mlir
    // before (mode all)
    %z = emb.dense %x, %w, %b : ... -> tensor<8x4xf32>
    %y = emb.activation relu %z : tensor<8x4xf32>
    ...
    %dz = emb.activation_grad relu %dy, %y from_output : tensor<8x4xf32>
    %dw = emb.dense_grad_weight %x, %dz : ...
    // after: %y is rebuilt where the backward first needs it
    %z2 = emb.dense %x, %w, %b {emb.remat} : ... -> tensor<8x4xf32>
    %y2 = emb.activation relu %z2 {emb.remat} : tensor<8x4xf32>
    %dz = emb.activation_grad relu %dy, %y2 from_output : tensor<8x4xf32>
    ```
    Needs `-emb-autodiff` first and runs before `-emb-fuse`. Refuses a
    budget below the smallest peak rematerialisation reaches (and says
    that peak), `auto` without a budget, and a module it has already run on.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"\"",
           "none, auto or all (default: the module's emb.plan remat)">,
    Option<"budget", "budget", "int64_t", /*default=*/"-1",
           "Memory budget in bytes for mode auto (default: the module's "
           "emb.plan memory_budget)">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"\"",
           "Schedule of mode all: sqrt (default) or dp (minimum memory)">,
  ];
  let statistics = [
    Statistic<"numRecomputed", "recomputed-values", "Activations recomputed">,
    Statistic<"numClonedOps", "cloned-ops", "Forward ops cloned into the backward">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

def EmbToPlanPass : Pass<"emb-to-plan", "::mlir::ModuleOp"> {
  let summary = "Lower the training step to an executable plan";
  let description = [{
    Codegen for the runtime: gives every value of `@train_step` a buffer in
    one arena (parameters, gradients, optimizer state, tables with their
    sparse-gradient rows, inputs, activations), turns each op into a kernel
    of the plan's catalogue (docs/plan-format.md), records the data inputs
    with the columns they read, the training config and the memory report,
    and writes the plan file (`output`), or its JSON form (`emit-json`).
    With `cuda` it also generates the plan's CUDA program
    (passes/lib/cuda: CUDA C++ per kernel, cuBLASLt GEMMs, library calls);
    a kernel without a CUDA lowering is an error naming it.
    Needs `-emb-autodiff` first. The IR is not changed.
  }];
  let options = [
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the plan ('-' is stdout)">,
    Option<"emitJson", "emit-json", "bool", /*default=*/"false",
           "Write the plan body as indented JSON instead of the binary file">,
    Option<"cuda", "cuda", "bool", /*default=*/"false",
           "Generate the plan's CUDA program (off: the plan runs on the CPU only)">,
  ];
  let dependentDialects = ["::embc::emb::EmbDialect"];
}

#endif // EMBC_PASSES_PASSES_TD
