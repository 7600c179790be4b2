//===- EmbScheduleOps.td - the micro-batch pipeline schedule ---*- tablegen -*-===//
//
// -emb-pipeline emits the schedule of one optimizer step as an explicit
// instruction list: `emb.schedule` holds `emb.sched.*` instructions, each
// run by one pipeline stage. The verifier of `emb.schedule` is the schedule
// checker (dialect/lib/ScheduleOps.cpp): it simulates every stage's
// instruction queue with blocking receives and rejects deadlocks, unmatched
// or disagreeing send/recv pairs, missing or repeated micro-batches, a
// backward before its forward and a step before the last backward.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBSCHEDULEOPS_TD
#define EMBC_DIALECT_EMBSCHEDULEOPS_TD

def Emb_PipelineScheduleAttr
    : EnumAttr<Emb_Dialect, Emb_PipelineSchedule, "pipeline_schedule">;

def Emb_ScheduleOp : Emb_Op<"schedule", [HasParent<"::mlir::ModuleOp">,
    NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "the micro-batch schedule of one optimizer step";
  let description = [{
    The instructions of one optimizer step over `micro_batches` micro-batches
    and `stages` pipeline stages, in the order one device runs them. Stage
    s's own program is the subsequence of instructions with `stage s`; on
    several devices each stage runs its program, blocking in `recv` until
    the matching `send` has run. `kind` records the generator (GPipe: all
    forwards, then all backwards; 1F1B: p-s-1 warm-up forwards, then one
    forward and one backward alternately, then the cool-down backwards).

    The verifier checks that every stage runs the forward and the backward
    of every micro-batch exactly once, the backward after the forward; that
    every send has exactly one matching recv (same micro-batch, stages
    swapped) carrying the same types; that the stage programs cannot
    deadlock (a simulation of the per-stage queues with blocking recv); that
    the order as listed is itself a valid single-device execution; and that
    each stage's `step` follows all its backwards.

    `ranks` (from -emb-distribute with `pipeline_ranks` > 1) places the
    stages on ranks: stage s runs on rank ranks[s], contiguous stages per
    rank, every rank from 0 on running at least one. Each rank then runs the
    listed instructions of its stages in order; a send and recv between
    stages of different ranks are a message between them (sends do not
    block), between stages of one rank they share memory. Without it every
    stage runs on one device.

    ```mlir
    emb.schedule gpipe stages 1 micro_batches 2 {
      emb.sched.load stage 0 mb 0
      emb.sched.forward stage 0 mb 0
      emb.sched.backward stage 0 mb 0
      emb.sched.load stage 0 mb 1
      emb.sched.forward stage 0 mb 1
      emb.sched.backward stage 0 mb 1
      emb.sched.reduce stage 0
      emb.sched.step stage 0
    }
    ```
  }];
  let arguments = (ins Emb_PipelineScheduleAttr:$kind,
                       ConfinedAttr<I64Attr, [IntPositive]>:$stages,
                       ConfinedAttr<I64Attr, [IntPositive]>:$micro_batches,
                       OptionalAttr<DenseI64ArrayAttr>:$ranks);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `` $kind `stages` $stages `micro_batches` $micro_batches (`ranks` $ranks^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

class Emb_SchedOp<string mnemonic, list<Trait> traits = []>
    : Emb_Op<"sched." # mnemonic, !listconcat(traits, [HasParent<"ScheduleOp">])> {
  let hasVerifier = 1;
}

class Emb_SchedMicroBatchOp<string mnemonic, string what>
    : Emb_SchedOp<mnemonic> {
  let summary = what;
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$stage,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$mb);
  let assemblyFormat = "`stage` $stage `mb` $mb attr-dict";
}

def Emb_SchedLoadOp : Emb_SchedMicroBatchOp<"load",
    "copy micro-batch `mb`'s slice of the batch into the stage's inputs">;
def Emb_SchedForwardOp : Emb_SchedMicroBatchOp<"forward",
    "run the stage's forward ops on micro-batch `mb`">;
def Emb_SchedBackwardOp : Emb_SchedMicroBatchOp<"backward",
    "run the stage's backward ops on micro-batch `mb` (accumulating gradients)">;

class Emb_SchedTransferOp<string mnemonic, string what, string dir>
    : Emb_SchedOp<mnemonic> {
  let summary = what;
  let description = [{
    `types` are the boundary values' types, in the order both sides list
    them; a send and its recv must agree on them. Forward boundaries go to
    a later stage, gradients to an earlier one.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$stage,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$mb,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$peer,
                       TypeArrayAttr:$types);
  let assemblyFormat = "`stage` $stage `mb` $mb " # dir # " $peer `:` $types attr-dict";
}

def Emb_SchedSendOp : Emb_SchedTransferOp<"send",
    "send micro-batch `mb`'s boundary values to stage `peer`", "`to`">;
def Emb_SchedRecvOp : Emb_SchedTransferOp<"recv",
    "receive micro-batch `mb`'s boundary values from stage `peer` (blocking)", "`from`">;

class Emb_SchedStageOp<string mnemonic, string what> : Emb_SchedOp<mnemonic> {
  let summary = what;
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$stage);
  let assemblyFormat = "`stage` $stage attr-dict";
}

def Emb_SchedReduceOp : Emb_SchedStageOp<"reduce",
    "the stage's gradient all-reduce point (data parallelism; nothing on one device)">;
def Emb_SchedStepOp : Emb_SchedStageOp<"step",
    "the stage's optimizer update, after all its backwards">;

#endif // EMBC_DIALECT_EMBSCHEDULEOPS_TD
