//===- ModelImporter.cpp - checked Model -> emb IR ---------------------------===//
//
// The parser has already resolved every reference and width, so building IR
// is a straight walk: tables and parameters as module symbols, then the
// forward function with one op (or a short chain) per layer. Each op's
// location is the JSON pointer of the layer it came from.
//
//===----------------------------------------------------------------------===//

#include "embc/frontend/ModelImporter.h"

#include "embc/dialect/EmbDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <map>

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::frontend;

namespace {

template <typename EnumT>
EnumT symbolizeOrDie(std::optional<EnumT> value) {
  // The parser only lets through names the dialect's enums define.
  assert(value && "parser admitted an unknown enum name");
  return *value;
}

/// The dialect's enumerator spelled like the plan's `word` (the dialect's
/// enums keep the plan's spellings; EnumSpellingsTest checks that).
template <typename DialectE, typename PlanE> DialectE sameWord(PlanE word) {
  return symbolizeOrDie(symbolizeEnum<DialectE>(llvm::StringRef(runtime::enumName(word))));
}

InitializerAttr toAttr(MLIRContext *ctx, const Initializer &init) {
  return InitializerAttr::get(ctx, sameWord<InitKind>(init.kind),
                              Real{init.value}, Real{init.low},
                              Real{init.high}, Real{init.mean}, Real{init.std},
                              Real{init.gain});
}

OptimizerAttr toAttr(MLIRContext *ctx, const OptimizerConfig &opt) {
  return OptimizerAttr::get(
      ctx, sameWord<OptimizerKind>(opt.kind), Real{opt.lr},
      Real{opt.momentum}, Real{opt.beta1}, Real{opt.beta2}, Real{opt.eps},
      Real{opt.weightDecay},
      sameWord<WeightDecayMode>(opt.weightDecayMode),
      Real{opt.initialAccumulator});
}

StorageType toStorage(runtime::Storage dtype) {
  switch (dtype) {
  case runtime::Storage::F32:
    return StorageType::f32;
  case runtime::Storage::F16:
    return StorageType::f16;
  case runtime::Storage::BF16:
    return StorageType::bf16;
  case runtime::Storage::Int8:
    return StorageType::int8_rowwise;
  case runtime::Storage::Int4:
    return StorageType::int4_rowwise;
  }
  llvm_unreachable("a storage the dialect lacks");
}

class Importer {
public:
  Importer(const Model &model, MLIRContext &ctx, StringRef fileName)
      : model_(model), ctx_(&ctx), builder_(&ctx), fileName_(fileName) {}

  OwningOpRef<ModuleOp> run() {
    OwningOpRef<ModuleOp> module =
        ModuleOp::create(locOf(""), StringRef(model_.name));
    module_ = *module;
    module_->setAttr(kTrainingAttrName, trainingAttr());
    module_->setAttr(kPlanAttrName, planAttr());
    // The data schema, normalised, for -emb-to-plan to copy into the plan
    // (embc::kDataAttrName in passes/include/embc/passes/ToPlan.h).
    if (model_.data)
      module_->setAttr("emb.data", builder_.getStringAttr(
                                       runtime::data::dataSchemaToJson(*model_.data).dump()));
    builder_.setInsertionPointToEnd(module_.getBody());
    for (const Table &t : model_.tables)
      TableOp::create(builder_, locOf(t.pointer), t.name, t.rows, t.dim,
                      toStorage(t.dtype), toAttr(ctx_, t.init),
                      toAttr(ctx_, t.optimizer),
                      symbolizeOrDie(symbolizeSharding(t.sharding)),
                      sameWord<Placement>(t.placement));
    buildForward();
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }

private:
  Location locOf(const std::string &pointer) {
    return NameLoc::get(StringAttr::get(ctx_, pointer.empty() ? "/" : pointer),
                        FileLineColLoc::get(ctx_, fileName_, 1, 1));
  }

  /// The batch the IR computes on: one data-parallel rank's share of the
  /// model's (global) batch_size; the parser checked that it divides.
  int64_t batch() const { return model_.training.batchSize / model_.plan.dataParallel; }

  RankedTensorType f32Tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder_.getF32Type());
  }

  TrainingAttr trainingAttr() {
    const Training &t = model_.training;
    return TrainingAttr::get(
        ctx_, batch(), toAttr(ctx_, model_.denseOptimizer),
        sameWord<Precision>(t.precision), Real{t.gradClipNorm},
        t.gradAccumulation, t.warmupSteps,
        sameWord<LrSchedule>(t.lrSchedule), t.decaySteps,
        t.seed, symbolizeOrDie(symbolizeEmbeddingUpdates(t.embeddingUpdates)));
  }

  PlanAttr planAttr() {
    const PlanKnobs &p = model_.plan;
    return PlanAttr::get(
        ctx_, p.memoryBudget, symbolizeOrDie(symbolizeRematMode(p.remat)),
        p.microBatches, p.pipelineStages,
        toDialectSchedule(p.schedule),
        p.dataParallel, p.pipelineRanks);
  }

  /// Negatives are sampled from the rows of their table.
  int64_t negativesRange(const Feature &f) {
    const Table *t = model_.findTable(f.table);
    return t ? t->rows : 0;
  }

  /// Function arguments of one feature, with the attributes the runtime
  /// reads to bind data to them.
  void addFeatureArgs(const Feature &f, SmallVectorImpl<Type> &types,
                      SmallVectorImpl<DictionaryAttr> &attrs) {
    auto add = [&](Type type, StringRef role, int64_t maxIds = 0) {
      SmallVector<NamedAttribute> a = {
          builder_.getNamedAttr(kFeatureArgAttrName,
                                builder_.getStringAttr(f.name)),
          builder_.getNamedAttr(kRoleArgAttrName, builder_.getStringAttr(role))};
      if (maxIds)
        a.push_back(builder_.getNamedAttr(kMaxIdsArgAttrName,
                                          builder_.getI64IntegerAttr(maxIds)));
      if (f.source != f.name)
        a.push_back(builder_.getNamedAttr(kSourceArgAttrName,
                                          builder_.getStringAttr(f.source)));
      if (role == "ids" || role == "negatives") {
        // Hashed features take any raw id: no range to check.
        if (!f.hash)
          a.push_back(builder_.getNamedAttr(
              kVocabArgAttrName, builder_.getI64IntegerAttr(
                                     role == "ids" ? f.vocab : negativesRange(f))));
        if (role == "ids" && f.hotness != 1)
          a.push_back(builder_.getNamedAttr(
              kHotnessArgAttrName, builder_.getI64IntegerAttr(f.hotness)));
      }
      if (role == "label")
        a.push_back(builder_.getNamedAttr(kLabelKindArgAttrName,
                                          builder_.getStringAttr(runtime::enumName(f.labelKind))));
      if (role == "negatives")
        a.push_back(builder_.getNamedAttr(kPowerArgAttrName,
                                          builder_.getF64FloatAttr(f.power)));
      types.push_back(type);
      attrs.push_back(builder_.getDictionaryAttr(a));
    };
    Type i64 = builder_.getI64Type();
    switch (f.kind) {
    case FeatureKind::Dense:
      add(f32Tensor({batch(), f.dim}), "dense");
      break;
    case FeatureKind::Sparse:
      add(RankedTensorType::get({ShapedType::kDynamic}, i64), "ids",
          batch() * f.hotness);
      add(RankedTensorType::get({batch() + 1}, i64), "offsets");
      if (f.weighted)
        add(f32Tensor({ShapedType::kDynamic}), "weights", batch() * f.hotness);
      break;
    case FeatureKind::Sequence: // the jagged ids of a sparse feature, kept in order
      add(RankedTensorType::get({ShapedType::kDynamic}, i64), "ids", batch() * f.hotness);
      add(RankedTensorType::get({batch() + 1}, i64), "offsets");
      break;
    case FeatureKind::Negatives:
      add(RankedTensorType::get({batch(), f.count}, i64), "negatives");
      break;
    case FeatureKind::Label:
      add(f32Tensor({batch(), 1}), "label");
      break;
    }
  }

  void buildForward() {
    SmallVector<Type> argTypes;
    SmallVector<DictionaryAttr> argAttrs;
    std::vector<std::pair<const Feature *, unsigned>> firstArg;
    for (const Feature &f : model_.features) {
      firstArg.push_back({&f, unsigned(argTypes.size())});
      addFeatureArgs(f, argTypes, argAttrs);
    }
    ValueShape pred = model_.shapeOf(model_.loss.input);
    Type lossType = RankedTensorType::get({}, builder_.getF32Type());
    const Feature *sequence = model_.loss.nextToken || model_.loss.maskedToken
                                  ? model_.findFeature(model_.loss.label)
                                  : nullptr;
    Type predType = sequence ? f32Tensor({batch(), sequence->hotness, pred.width})
                             : f32Tensor({batch(), pred.width});
    auto funcType = builder_.getFunctionType(argTypes, {lossType, predType});
    auto func = func::FuncOp::create(builder_, locOf(""), kForwardFuncName,
                                     funcType);
    func.setAllArgAttrs(argAttrs);
    Block *body = func.addEntryBlock();
    OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToStart(body);
    for (auto [f, arg] : firstArg)
      featureArgs_[f->name] = arg;
    body_ = body;

    if (model_.loss.maskedToken) { // before the lookup, which reads the masked ids
      const Feature *f = model_.findFeature(model_.loss.label);
      const unsigned arg = featureArgs_.at(f->name);
      Value ids = body_->getArgument(arg);
      auto mask = MaskTokensOp::create(
          builder_, locOf("/loss"), ids.getType(), f32Tensor({batch(), f->hotness}), ids,
          body_->getArgument(arg + 1), builder_.getF64FloatAttr(model_.loss.maskRate),
          builder_.getI64IntegerAttr(f->vocab), builder_.getI64IntegerAttr(f->vocab),
          builder_.getI64IntegerAttr(0));
      maskedIds_[f->name] = mask.getMaskedIds();
      maskTargets_ = mask.getTargets();
    }
    for (const Layer &l : model_.layers)
      values_[l.name] = buildLayer(l);

    const Loss &loss = model_.loss;
    Value input = valueOf(loss.input);
    Value target;
    if (maskTargets_) {
      target = maskTargets_;
    } else if (sequence) { // each position's next token
      const unsigned arg = featureArgs_.at(sequence->name);
      target = NextTokenTargetsOp::create(builder_, locOf("/loss"),
                                          f32Tensor({batch(), sequence->hotness}),
                                          body_->getArgument(arg), body_->getArgument(arg + 1));
    } else {
      target = valueOf(loss.label);
    }
    Value lossValue = LossOp::create(
        builder_, locOf("/loss"), lossType,
        sameWord<LossKind>(loss.type), input, target);
    if (loss.sampled > 0) // -emb-sample-softmax reads it
      lossValue.getDefiningOp()->setAttr(kSampledAttrName,
                                         builder_.getI64IntegerAttr(loss.sampled));
    func::ReturnOp::create(builder_, locOf("/loss"),
                           ValueRange{lossValue, input});
  }

  /// The value of a feature (built on first use: hash, lookup or gather) or
  /// of an already built layer.
  Value valueOf(const std::string &name) {
    auto it = values_.find(name);
    if (it != values_.end())
      return it->second;
    const Feature *f = model_.findFeature(name);
    assert(f && "parser admitted an unknown reference");
    Location loc = locOf(f->pointer);
    unsigned arg = featureArgs_.at(name);
    Value v;
    switch (f->kind) {
    case FeatureKind::Dense:
    case FeatureKind::Label:
      v = body_->getArgument(arg);
      break;
    case FeatureKind::Sparse: {
      const Table *t = model_.findTable(f->table);
      Value ids = body_->getArgument(arg);
      if (f->hash)
        ids = HashOp::create(builder_, loc, ids, t->rows, /*seed=*/0);
      Value weights = f->weighted ? body_->getArgument(arg + 2) : Value();
      v = LookupOp::create(
          builder_, loc, f32Tensor({batch(), t->dim}), t->name, ids,
          body_->getArgument(arg + 1), weights,
          sameWord<Pooling>(f->pooling));
      break;
    }
    case FeatureKind::Sequence: {
      const Table *t = model_.findTable(f->table);
      Value offsets = body_->getArgument(arg + 1);
      auto masked = maskedIds_.find(f->name);
      Value ids = masked != maskedIds_.end() ? masked->second : body_->getArgument(arg);
      v = SequenceLookupOp::create(builder_, loc, f32Tensor({batch(), f->hotness, t->dim}),
                                   t->name, ids, offsets);
      if (f->positions) {
        // Learned positions: a parameter of max_len rows, N(0, 0.02^2) as BERT's.
        Value table;
        if (*f->positions == runtime::PositionKind::Learned) {
          Initializer init{runtime::InitKind::Normal};
          init.std = 0.02;
          table = param(f->name + "_positions", f->pointer, {f->hotness, t->dim}, init);
        }
        v = PositionsOp::create(builder_, loc, v.getType(), v, offsets, table,
                                sameWord<PositionKind>(*f->positions));
      }
      break;
    }
    case FeatureKind::Negatives: {
      const Table *t = model_.findTable(f->table);
      v = GatherOp::create(builder_, loc,
                           f32Tensor({batch(), f->count, t->dim}), t->name,
                           body_->getArgument(arg));
      break;
    }
    }
    values_[name] = v;
    return v;
  }

  /// Declares a parameter and returns its value in the forward function.
  Value param(const Layer &l, const std::string &name,
              ArrayRef<int64_t> shape, const Initializer &init) {
    return param(l.name + "_" + name, l.pointer, shape, init);
  }
  /// Declares parameter `symbol` (at `pointer` in the model file) and
  /// returns its value in the forward function.
  Value param(const std::string &symbol, const std::string &pointer, ArrayRef<int64_t> shape,
              const Initializer &init) {
    RankedTensorType type = f32Tensor(shape);
    {
      OpBuilder::InsertionGuard guard(builder_);
      builder_.setInsertionPointToEnd(module_.getBody());
      // Keep parameters before the forward function.
      builder_.setInsertionPoint(&module_.getBody()->back());
      ParamOp::create(builder_, locOf(pointer),
                      builder_.getStringAttr(symbol), TypeAttr::get(type),
                      toAttr(ctx_, init));
    }
    return GetOp::create(builder_, locOf(pointer), type, symbol);
  }

  Value activate(Location loc, Value x, runtime::Activation activation) {
    if (activation == runtime::Activation::None)
      return x;
    return ActivationOp::create(builder_, loc,
                                sameWord<Activation>(activation),
                                x);
  }

  /// The offsets of the sequence `name` is (a sequence feature, or a layer
  /// computed from one).
  Value sequenceOffsets(const std::string &name) {
    const Layer *l = model_.findLayer(name);
    return body_->getArgument(featureArgs_.at(l ? l->sequence : name) + 1);
  }

  Value buildLayer(const Layer &l) {
    Location loc = locOf(l.pointer);
    SmallVector<Value> in;
    for (const std::string &name : l.inputs)
      in.push_back(valueOf(name));
    const std::string &t = l.type;
    Initializer zeros{runtime::InitKind::Zeros};

    if (t == "mlp" || t == "dense") {
      Value x = in[0];
      for (size_t i = 0; i < l.sizes.size(); ++i) {
        std::string idx = std::to_string(i);
        Value w = param(l, "w" + idx, {widthOf(x), l.sizes[i]}, l.init);
        Value b = l.bias ? param(l, "b" + idx, {l.sizes[i]}, zeros) : Value();
        x = linear(loc, x, w, b);
        bool last = i + 1 == l.sizes.size();
        x = activate(loc, x, last ? l.finalActivation : l.activation);
      }
      return x;
    }
    if (t == "layer_norm")
      return layerNorm(loc, in[0], l.name, l);
    if (t == "tied") { // in[0] times the table's transpose: a score per row
      auto type = cast<RankedTensorType>(in[0].getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.back() = l.width;
      return TableScoresOp::create(builder_, loc, f32Tensor(shape), l.table, in[0]);
    }
    if (t == "encoder") {
      Value x = in[0];
      for (int64_t i = 0; i < l.encoder.layers; ++i)
        x = encoderLayer(loc, x, l, l.name + "_l" + std::to_string(i));
      // Pre-norm layers leave their residual stream unnormalised.
      return l.encoder.preNorm ? layerNorm(loc, x, l.name + "_final", l) : x;
    }
    if (t == "activation")
      return activate(loc, in[0], l.activation);
    if (t == "dropout")
      return dropout(loc, in[0], l.dropout);
    if (t == "concat")
      return ConcatOp::create(builder_, loc, f32Tensor({batch(), l.width}), in);
    if (t == "dot_interaction") {
      int64_t f = in.size();
      int64_t pairs = l.selfInteraction ? f * (f + 1) / 2 : f * (f - 1) / 2;
      Value z = InteractionOp::create(builder_, loc,
                                      f32Tensor({batch(), pairs}), in,
                                      l.selfInteraction);
      if (!l.keepFirst)
        return z;
      return ConcatOp::create(builder_, loc, f32Tensor({batch(), l.width}),
                              ValueRange{in[0], z});
    }
    if (t == "cross") {
      int64_t d = l.width;
      Value x0 = in[0], xl = in[0];
      for (int64_t i = 0; i < l.numLayers; ++i) {
        std::string idx = std::to_string(i);
        Value w = param(l, "w" + idx, {d, d}, Initializer{runtime::InitKind::XavierUniform});
        Value b = param(l, "b" + idx, {d}, zeros);
        // No `linear` result: -emb-autodiff adds it for the gradient.
        xl = CrossOp::create(builder_, loc, x0.getType(), /*linear=*/Type(), x0, xl, w, b)
                 .getResult();
      }
      return xl;
    }
    if (t == "sequence_pool") // the sequence's lengths are its offsets
      return SequencePoolOp::create(builder_, loc, f32Tensor({batch(), l.width}), in[0],
                                    sequenceOffsets(l.inputs[0]),
                                    sameWord<SequencePooling>(l.sequencePooling));
    if (t == "self_attention") // queries, keys and values are the sequence itself
      return attention(loc, in[0], in[0], in[0], sequenceOffsets(l.inputs[0]), l);
    if (t == "dot")
      return DotOp::create(builder_, loc, f32Tensor({batch(), l.width}), in[0],
                           in[1]);
    // add: the inputs share one type, B x width or B x L x width.
    Value bias = l.bias ? param(l, "b0", {l.width}, zeros) : Value();
    return AddOp::create(builder_, loc, in[0].getType(), in, bias);
  }

  /// Inverted dropout of x at `rate` (x itself at 0). Each site gets its
  /// own stream, numbered in the model's layer order, so no two share a
  /// mask and a recompiled model keeps its masks.
  Value dropout(Location loc, Value x, double rate) {
    if (rate == 0.0)
      return x;
    return DropoutOp::create(builder_, loc, x.getType(), x, builder_.getF64FloatAttr(rate),
                             builder_.getI64IntegerAttr(nextDropoutStream_++));
  }

  /// Multi-head attention of layer `l` (heads, causal), its weights dropped
  /// at the layer's dropout rate with a stream of their own.
  Value attention(Location loc, Value q, Value k, Value v, Value offsets, const Layer &l) {
    FloatAttr rate;
    IntegerAttr stream;
    if (l.dropout > 0.0) {
      rate = builder_.getF64FloatAttr(l.dropout);
      stream = builder_.getI64IntegerAttr(nextDropoutStream_++);
    }
    return AttentionOp::create(builder_, loc, q.getType(), q, k, v, offsets,
                               builder_.getI64IntegerAttr(l.heads),
                               l.causal ? builder_.getUnitAttr() : UnitAttr(), rate, stream);
  }

  static int64_t widthOf(Value x) { return cast<RankedTensorType>(x.getType()).getShape().back(); }

  /// x w (+ b) on each row of x: B x K, or every position of B x L x K.
  Value linear(Location loc, Value x, Value w, Value b) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = cast<RankedTensorType>(w.getType()).getDimSize(1);
    return DenseOp::create(builder_, loc, type.clone(shape), x, w, b);
  }

  /// A layer norm of x's rows with parameters `<prefix>_gamma` (ones) and
  /// `<prefix>_beta` (zeros).
  Value layerNorm(Location loc, Value x, const std::string &prefix, const Layer &l) {
    const int64_t d = widthOf(x);
    Initializer ones{runtime::InitKind::Constant};
    ones.value = 1.0;
    Value gamma = param(prefix + "_gamma", l.pointer, {d}, ones);
    Value beta = param(prefix + "_beta", l.pointer, {d}, Initializer{runtime::InitKind::Zeros});
    return LayerNormOp::create(builder_, loc, x.getType(), x, gamma, beta,
                               builder_.getF64FloatAttr(l.eps));
  }

  /// One Transformer encoder layer on x (B x L x d): multi-head
  /// self-attention with Q, K, V and output projections, then a GELU
  /// feed-forward block, each added to its input (the residual) with a layer
  /// norm before the sublayer (pre) or after the sum (post). Parameters are
  /// `<prefix>_{wq,bq,wk,wv,bv,wo,bo,wffn1,bffn1,wffn2,bffn2,ln1_*,ln2_*}`
  /// (ModelParser's layerParameters lists them for its name checks).
  Value encoderLayer(Location loc, Value x, const Layer &l, const std::string &prefix) {
    const int64_t d = widthOf(x), ffn = l.encoder.ffn;
    Initializer xavier{runtime::InitKind::XavierUniform}, zeros{runtime::InitKind::Zeros};
    auto project = [&](Value v, const std::string &name, int64_t out, bool bias = true) {
      Value w = param(prefix + "_w" + name, l.pointer, {widthOf(v), out}, xavier);
      Value b = bias ? param(prefix + "_b" + name, l.pointer, {out}, zeros) : Value();
      return linear(loc, v, w, b);
    };
    auto residual = [&](Value a, Value b) {
      return AddOp::create(builder_, loc, a.getType(), ValueRange{a, b}, Value()).getResult();
    };
    const bool pre = l.encoder.preNorm;
    Value offsets = sequenceOffsets(l.inputs[0]);
    Value a = pre ? layerNorm(loc, x, prefix + "_ln1", l) : x;
    // One statement each: the parameters are declared in this order.
    Value q = project(a, "q", d);
    // No key bias: it adds q . b to every score of a query alike, which the
    // softmax cancels, so its gradient is zero up to rounding (and Adam
    // would turn that rounding noise into steps).
    Value k = project(a, "k", d, /*bias=*/false);
    Value v = project(a, "v", d);
    Value attended = attention(loc, q, k, v, offsets, l);
    Value projected = dropout(loc, project(attended, "o", d), l.dropout);
    Value h = residual(x, projected);
    if (!pre)
      h = layerNorm(loc, h, prefix + "_ln1", l);
    Value f = pre ? layerNorm(loc, h, prefix + "_ln2", l) : h;
    f = activate(loc, project(f, "ffn1", ffn), runtime::Activation::Gelu);
    f = dropout(loc, f, l.dropout);
    f = dropout(loc, project(f, "ffn2", d), l.dropout);
    Value y = residual(h, f);
    return pre ? y : layerNorm(loc, y, prefix + "_ln2", l);
  }

  const Model &model_;
  MLIRContext *ctx_;
  OpBuilder builder_;
  std::string fileName_;
  ModuleOp module_;
  Block *body_ = nullptr;
  std::map<std::string, Value> values_;
  std::map<std::string, unsigned> featureArgs_;
  /// masked_token: the ids the masked sequence's lookup reads, the targets.
  std::map<std::string, Value> maskedIds_;
  Value maskTargets_;
  int64_t nextDropoutStream_ = 0;
};

} // namespace

OwningOpRef<ModuleOp> embc::frontend::importModel(const Model &model,
                                                  MLIRContext &context,
                                                  StringRef fileName) {
  context.getOrLoadDialect<EmbDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  // The parser has rejected symbol clashes; the verifier in run() is the
  // backstop for anything it missed.
  return Importer(model, context, fileName).run();
}
