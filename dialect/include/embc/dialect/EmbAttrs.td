//===- EmbAttrs.td - emb dialect attributes --------------------*- tablegen -*-===//
//
// Structured attributes: initialisers, optimizer configurations, the training
// configuration and the plan knobs. Parameters equal to their default are not
// printed, so IR stays short.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBATTRS_TD
#define EMBC_DIALECT_EMBATTRS_TD

include "embc/dialect/EmbEnums.td"

def Emb_InitializerAttr : Emb_Attr<"Initializer", "init"> {
  let summary = "how a table or parameter is initialised";
  let description = [{
    `kind` selects the distribution; the other fields are its parameters:
    `constant` uses `value`, `uniform` draws from [`low`, `high`), `normal`
    uses `mean` and `std`, and the Xavier/Glorot kinds scale by `gain`.

    ```mlir
    #emb.init<kind = uniform, low = -0.05, high = 0.05>
    #emb.init<kind = xavier_uniform>
    ```
  }];
  let parameters = (ins
    EnumParameter<Emb_InitKind>:$kind,
    Emb_F64Param<"constant value", "0.0">:$value,
    Emb_F64Param<"uniform lower bound", "0.0">:$low,
    Emb_F64Param<"uniform upper bound", "0.0">:$high,
    Emb_F64Param<"normal mean", "0.0">:$mean,
    Emb_F64Param<"normal standard deviation", "0.0">:$std,
    Emb_F64Param<"Xavier gain", "1.0">:$gain);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Emb_OptimizerAttr : Emb_Attr<"Optimizer", "optimizer"> {
  let summary = "an optimizer and its hyper-parameters";
  let description = [{
    One optimizer configuration, for dense parameters or for the rows of an
    embedding table. `weight_decay_mode` states how decay reaches sparse rows:
    `lazy` decays only the rows a step touches, `global` decays every row
    every step (dense parameters always decay globally).

    ```mlir
    #emb.optimizer<kind = rowwise_adagrad, lr = 0.05>
    #emb.optimizer<kind = adamw, lr = 0.001, weight_decay = 0.01>
    ```
  }];
  let parameters = (ins
    EnumParameter<Emb_OptimizerKind>:$kind,
    Emb_F64Param<"learning rate", "0.01">:$lr,
    Emb_F64Param<"SGD momentum", "0.0">:$momentum,
    Emb_F64Param<"Adam/LAMB beta1", "0.9">:$beta1,
    Emb_F64Param<"Adam/LAMB beta2", "0.999">:$beta2,
    Emb_F64Param<"denominator epsilon", "1e-08">:$eps,
    Emb_F64Param<"weight decay", "0.0">:$weight_decay,
    DefaultValuedParameter<"::embc::emb::WeightDecayMode",
        "::embc::emb::WeightDecayMode::lazy", "sparse weight decay">:$weight_decay_mode,
    Emb_F64Param<"initial Adagrad accumulator", "0.0">:$initial_accumulator);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Emb_TrainingAttr : Emb_Attr<"Training", "training"> {
  let summary = "the training configuration of a model";
  let description = [{
    Batch size, dense compute precision, the dense optimizer and its
    learning-rate schedule, gradient clipping (global norm; 0 disables),
    gradient accumulation, the seed of every random choice, and when the
    embedding tables step: once per batch with the batch's summed gradient
    (`batch`), or after every example with its own gradient, in example
    order (`per_example`) or by threads side by side without locks
    (`hogwild`); the last two exist for skip-gram models (-emb-fuse's
    `skipgram` group).

    ```mlir
    module attributes {emb.training = #emb.training<batch_size = 128,
        dense_optimizer = #emb.optimizer<kind = sgd, lr = 0.1>, seed = 7>} {}
    ```
  }];
  let parameters = (ins
    "int64_t":$batch_size,
    "::embc::emb::OptimizerAttr":$dense_optimizer,
    DefaultValuedParameter<"::embc::emb::Precision",
        "::embc::emb::Precision::fp32">:$precision,
    Emb_F64Param<"clip by global norm (0: off)", "0.0">:$grad_clip_norm,
    DefaultValuedParameter<"int64_t", "1">:$grad_accumulation,
    DefaultValuedParameter<"int64_t", "0">:$warmup_steps,
    DefaultValuedParameter<"::embc::emb::LrSchedule",
        "::embc::emb::LrSchedule::constant">:$lr_schedule,
    DefaultValuedParameter<"int64_t", "0">:$decay_steps,
    DefaultValuedParameter<"int64_t", "0">:$seed,
    DefaultValuedParameter<"::embc::emb::EmbeddingUpdates",
        "::embc::emb::EmbeddingUpdates::batch">:$embedding_updates);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Emb_PlanAttr : Emb_Attr<"Plan", "plan"> {
  let summary = "knobs that shape the execution plan";
  let description = [{
    The memory budget in bytes (0: unlimited), activation rematerialisation,
    micro-batches per step, pipeline stages and schedule, the number of
    data-parallel ranks, and the number of ranks the pipeline stages are
    spread over (`pipeline_ranks`: 1 runs every stage on one device).

    ```mlir
    #emb.plan<memory_budget = 1073741824, micro_batches = 4>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "0">:$memory_budget,
    DefaultValuedParameter<"::embc::emb::RematMode",
        "::embc::emb::RematMode::none">:$remat,
    DefaultValuedParameter<"int64_t", "1">:$micro_batches,
    DefaultValuedParameter<"int64_t", "1">:$pipeline_stages,
    DefaultValuedParameter<"::embc::emb::PipelineSchedule",
        "::embc::emb::PipelineSchedule::gpipe">:$schedule,
    DefaultValuedParameter<"int64_t", "1">:$data_parallel,
    DefaultValuedParameter<"int64_t", "1">:$pipeline_ranks);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // EMBC_DIALECT_EMBATTRS_TD
