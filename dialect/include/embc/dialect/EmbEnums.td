//===- EmbEnums.td - emb dialect enumerations ------------------*- tablegen -*-===//

#ifndef EMBC_DIALECT_EMBENUMS_TD
#define EMBC_DIALECT_EMBENUMS_TD

include "mlir/IR/EnumAttr.td"
include "embc/dialect/EmbBase.td"

def Emb_Pooling : I32EnumAttr<"Pooling", "pooling of a bag of embedding rows", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_PoolingAttr : EnumAttr<Emb_Dialect, Emb_Pooling, "pooling">;

def Emb_SequencePooling : I32EnumAttr<"SequencePooling",
    "pooling of a sequence's valid positions", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"first", 3>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_SequencePoolingAttr : EnumAttr<Emb_Dialect, Emb_SequencePooling, "sequence_pooling">;

def Emb_PositionKind : I32EnumAttr<"PositionKind", "positional embedding of a sequence", [
    I32EnumAttrCase<"learned", 0>, I32EnumAttrCase<"sinusoidal", 1>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_PositionKindAttr : EnumAttr<Emb_Dialect, Emb_PositionKind, "position_kind">;

def Emb_Activation : I32EnumAttr<"Activation", "elementwise activation", [
    I32EnumAttrCase<"relu", 0>, I32EnumAttrCase<"sigmoid", 1>,
    I32EnumAttrCase<"tanh", 2>, I32EnumAttrCase<"gelu", 3>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_ActivationAttr : EnumAttr<Emb_Dialect, Emb_Activation, "activation">;

def Emb_LossKind : I32EnumAttr<"LossKind", "training loss", [
    I32EnumAttrCase<"bce_with_logits", 0>, I32EnumAttrCase<"mse", 1>,
    I32EnumAttrCase<"softmax_ce", 2>, I32EnumAttrCase<"neg_sampling", 3>,
    I32EnumAttrCase<"sequence_softmax_ce", 4>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_LossKindAttr : EnumAttr<Emb_Dialect, Emb_LossKind, "loss_kind">;

def Emb_StorageType : I32EnumAttr<"StorageType", "storage of an embedding table", [
    I32EnumAttrCase<"f32", 0>, I32EnumAttrCase<"f16", 1>,
    I32EnumAttrCase<"bf16", 2>, I32EnumAttrCase<"int8_rowwise", 3>,
    I32EnumAttrCase<"int4_rowwise", 4>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_StorageTypeAttr : EnumAttr<Emb_Dialect, Emb_StorageType, "storage">;

def Emb_InitKind : I32EnumAttr<"InitKind", "parameter initialiser", [
    I32EnumAttrCase<"zeros", 0>, I32EnumAttrCase<"constant", 1>,
    I32EnumAttrCase<"uniform", 2>, I32EnumAttrCase<"normal", 3>,
    I32EnumAttrCase<"xavier_uniform", 4>, I32EnumAttrCase<"xavier_normal", 5>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}

def Emb_OptimizerKind : I32EnumAttr<"OptimizerKind", "optimizer", [
    I32EnumAttrCase<"sgd", 0>, I32EnumAttrCase<"adagrad", 1>,
    I32EnumAttrCase<"rowwise_adagrad", 2>, I32EnumAttrCase<"adam", 3>,
    I32EnumAttrCase<"adamw", 4>, I32EnumAttrCase<"lamb", 5>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}

def Emb_WeightDecayMode : I32EnumAttr<"WeightDecayMode",
    "how weight decay applies to sparse embedding rows", [
    I32EnumAttrCase<"lazy", 0>, I32EnumAttrCase<"global", 1>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}

def Emb_EmbeddingUpdates : I32EnumAttr<"EmbeddingUpdates",
    "when the embedding tables take their optimizer step", [
    I32EnumAttrCase<"batch", 0>, I32EnumAttrCase<"per_example", 1>,
    I32EnumAttrCase<"hogwild", 2>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}

def Emb_LrSchedule : I32EnumAttr<"LrSchedule", "learning-rate decay after warmup", [
    I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"linear", 1>,
    I32EnumAttrCase<"cosine", 2>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}

def Emb_Precision : I32EnumAttr<"Precision", "dense compute precision", [
    I32EnumAttrCase<"fp32", 0>, I32EnumAttrCase<"bf16", 1>,
    I32EnumAttrCase<"fp16", 2>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}

def Emb_Sharding : I32EnumAttr<"Sharding", "how a table is split across ranks", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"table_wise", 1>,
    I32EnumAttrCase<"row_wise", 2>, I32EnumAttrCase<"column_wise", 3>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_ShardingAttr : EnumAttr<Emb_Dialect, Emb_Sharding, "sharding">;

def Emb_Placement : I32EnumAttr<"Placement",
    "where a table's rows and optimizer state live", [
    I32EnumAttrCase<"device", 0>, I32EnumAttrCase<"host", 1>,
    I32EnumAttrCase<"disk", 2>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_PlacementAttr : EnumAttr<Emb_Dialect, Emb_Placement, "placement">;

def Emb_RematMode : I32EnumAttr<"RematMode", "activation rematerialisation", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"automatic", 1, "auto">,
    I32EnumAttrCase<"all", 2>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}

def Emb_PipelineSchedule : I32EnumAttr<"PipelineSchedule", "pipeline schedule", [
    I32EnumAttrCase<"gpipe", 0>, I32EnumAttrCase<"one_f_one_b", 1>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}

def Emb_FusionKind : I32EnumAttr<"FusionKind", "what an emb.fused group runs as", [
    I32EnumAttrCase<"lookup", 0>, I32EnumAttrCase<"dense_act", 1>,
    I32EnumAttrCase<"dense_act_grad", 2>, I32EnumAttrCase<"elementwise", 3>,
    I32EnumAttrCase<"interaction_concat", 4>,
    I32EnumAttrCase<"interaction_concat_grad", 5>,
    I32EnumAttrCase<"embedding_update", 6>, I32EnumAttrCase<"skipgram", 7>,
    I32EnumAttrCase<"add_layer_norm", 8>, I32EnumAttrCase<"add_layer_norm_grad", 9>,
    I32EnumAttrCase<"dense_multi", 10>, I32EnumAttrCase<"dense_multi_grad", 11>]> {
  let cppNamespace = "::embc::emb";
  let genSpecializedAttr = 0;
}
def Emb_FusionKindAttr : EnumAttr<Emb_Dialect, Emb_FusionKind, "fusion_kind">;

#endif // EMBC_DIALECT_EMBENUMS_TD
