//===- SequenceOps.cpp - sequence lookups, positions, attention, pools ----===//
//
// Sequences arrive as jagged ids (the bags of a sparse feature, in order):
// sequence_lookup lays them out as B x L x D, zero past each sequence's
// length, positions adds positional embeddings to the valid positions,
// attention mixes the positions of each sequence, and sequence_pool reduces
// them back to B x D. All read the lengths from the offsets.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// `offsets` is B + 1 ids for a static B x L x D `seq`; names `what` (the
/// op's B x L x D operand or result) in errors.
static LogicalResult verifySequence(Operation *op, Value seq, Value offsets, StringRef what) {
  RankedTensorType s = tensorType(seq), o = tensorType(offsets);
  if (s.getRank() != 3 || !s.hasStaticShape())
    return op->emitOpError() << what << " must be a static B x L x D tensor, got " << s;
  if (s.getDimSize(1) < 1 || s.getDimSize(2) < 1)
    return op->emitOpError() << what << " must have at least one position and one column, got "
                             << s;
  if (o.getRank() != 1 || o.getDimSize(0) != s.getDimSize(0) + 1 ||
      o.getElementType().getIntOrFloatBitWidth() != 64)
    return op->emitOpError("offsets must be ")
           << s.getDimSize(0) + 1 << " 64-bit ids (B + 1 for the " << what << "'s " << s
           << "), got " << o;
  return success();
}

/// A vector of 64-bit ids.
static LogicalResult verifyIds(Operation *op, Value ids) {
  RankedTensorType t = tensorType(ids);
  if (t.getRank() != 1 || t.getElementType().getIntOrFloatBitWidth() != 64)
    return op->emitOpError("ids must be a vector of 64-bit ids, got ") << t;
  return success();
}

//===----------------------------------------------------------------------===//
// SequenceLookupOp, SequenceLookupGradOp
//===----------------------------------------------------------------------===//

LogicalResult SequenceLookupOp::verify() {
  if (failed(verifyIds(*this, getIds())))
    return failure();
  return verifySequence(*this, getResult(), getOffsets(), "result");
}

LogicalResult SequenceLookupOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbolTable);
  if (failed(table))
    return failure();
  const int64_t dim = tensorType(getResult()).getShape().back();
  if (dim != int64_t(table->getDim()))
    return emitOpError("result width (")
           << dim << ") != dim of table @" << getTable() << " (" << table->getDim() << ")";
  return success();
}

int64_t SequenceLookupOp::getForwardFlops() { return 0; }

// Each position's row is read and written once.
int64_t SequenceLookupOp::getForwardBytes() {
  return 2 * tensorType(getResult()).getNumElements() * getElementBytes(getResult());
}

LogicalResult SequenceLookupOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                              ArrayRef<bool>,
                                              SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  if (!resultGrads[0])
    return success();
  RankedTensorType seq = tensorType(getResult());
  auto rowsType = RankedTensorType::get({ShapedType::kDynamic, seq.getDimSize(2)},
                                        seq.getElementType());
  Value rows = SequenceLookupGradOp::create(b, getLoc(), rowsType, getIds(), getOffsets(),
                                            resultGrads[0]);
  AccumulateRowsOp::create(b, getLoc(), getTableAttr(), getIds(), rows);
  return success();
}

LogicalResult SequenceLookupOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::SequenceLookup);
  k.attrs["table"] = e.table(getTable());
  if (failed(e.dequantize(*this, getTable(), k.attrs)))
    return failure();
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult SequenceLookupGradOp::verify() {
  if (failed(verifyIds(*this, getIds())) ||
      failed(verifySequence(*this, getGrad(), getOffsets(), "grad")))
    return failure();
  RankedTensorType rows = tensorType(getResult()), grad = tensorType(getGrad());
  if (rows.getRank() != 2 || rows.getDimSize(1) != grad.getDimSize(2) ||
      rows.getElementType() != grad.getElementType() ||
      rows.getDimSize(0) != tensorType(getIds()).getDimSize(0))
    return emitOpError("result must be one row of ")
           << grad.getDimSize(2) << " per id (" << tensorType(getIds()) << "), got " << rows;
  return success();
}

//===----------------------------------------------------------------------===//
// PositionsOp, PositionsGradOp
//===----------------------------------------------------------------------===//

/// A learned table `table` (T x D, T >= L) for `seq` (B x L x D), present
/// exactly when `kind` is learned; `what` names it in errors.
static LogicalResult verifyPositionTable(Operation *op, Value seq, Value table,
                                         PositionKind kind, StringRef what) {
  const bool learned = kind == PositionKind::learned;
  if (learned != bool(table))
    return op->emitOpError(learned ? "learned positions need their '" : "sinusoidal positions take no '")
           << what << "'";
  if (!table)
    return success();
  RankedTensorType s = tensorType(seq), t = tensorType(table);
  if (t.getRank() != 2 || t.getDimSize(1) != s.getDimSize(2) ||
      t.getDimSize(0) < s.getDimSize(1) || t.getElementType() != s.getElementType())
    return op->emitOpError() << what << " must be at least " << s.getDimSize(1) << " x "
                             << s.getDimSize(2) << " of " << s.getElementType()
                             << " (a row per position of " << s << "), got " << t;
  return success();
}

LogicalResult PositionsOp::verify() {
  if (failed(verifySequence(*this, getInput(), getOffsets(), "input")))
    return failure();
  if (getResult().getType() != getInput().getType())
    return emitOpError("result type ")
           << getResult().getType() << " must be the input's, " << getInput().getType();
  return verifyPositionTable(*this, getInput(), getTable(), getKind(), "table");
}

// An add per element; sinusoidal positions also a sin or cos.
int64_t PositionsOp::getForwardFlops() { return tensorType(getInput()).getNumElements(); }

int64_t PositionsOp::getForwardBytes() {
  int64_t elements = 2 * tensorType(getInput()).getNumElements();
  if (getTable())
    elements += tensorType(getTable()).getNumElements();
  return elements * getElementBytes(getResult());
}

LogicalResult PositionsOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                         ArrayRef<bool> need,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  const bool learned = bool(getTable());
  if (!resultGrads[0] || !(need[0] || (learned && need[2])))
    return success();
  auto grad = PositionsGradOp::create(b, getLoc(), getInput().getType(),
                                      learned ? getTable().getType() : Type(), resultGrads[0],
                                      getOffsets(), getKindAttr());
  if (need[0])
    operandGrads[0] = grad.getInputGrad();
  if (learned && need[2])
    operandGrads[2] = grad.getTableGrad();
  return success();
}

LogicalResult PositionsOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Positions);
  k.attrs["kind"] = stringifyPositionKind(getKind()).str();
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult PositionsGradOp::verify() {
  if (failed(verifySequence(*this, getGrad(), getOffsets(), "grad")))
    return failure();
  if (getInputGrad().getType() != getGrad().getType())
    return emitOpError("input_grad ") << getInputGrad().getType() << " must have grad's type "
                                      << getGrad().getType();
  return verifyPositionTable(*this, getGrad(), getTableGrad(), getKind(), "table_grad");
}

LogicalResult PositionsGradOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::PositionsGrad);
  k.attrs["kind"] = stringifyPositionKind(getKind()).str();
  return e.emitOnOperands(*this, std::move(k));
}

//===----------------------------------------------------------------------===//
// AttentionOp, AttentionGradOp
//===----------------------------------------------------------------------===//

/// `seq` (the operands' common type, ODS checked that) is a sequence of D
/// columns that `heads` divides.
static std::optional<double> rateOf(std::optional<APFloat> f) {
  return f ? std::optional<double>(f->convertToDouble()) : std::nullopt;
}
static std::optional<int64_t> streamOf(std::optional<uint64_t> v) {
  return v ? std::optional<int64_t>(int64_t(*v)) : std::nullopt;
}

/// The weights' dropout, when set: a rate in [0, 1) and its stream, both
/// or neither.
static LogicalResult verifyAttention(Operation *op, Value seq, Value offsets, int64_t heads,
                                     std::optional<double> dropout,
                                     std::optional<int64_t> stream) {
  if (failed(verifySequence(op, seq, offsets, "query")))
    return failure();
  const int64_t D = tensorType(seq).getDimSize(2);
  if (D % heads != 0)
    return op->emitOpError() << heads << " heads do not divide the " << D << " columns of "
                             << seq.getType();
  if (dropout.has_value() != stream.has_value())
    return op->emitOpError("dropout and stream go together: give both or neither");
  if (dropout && !(*dropout >= 0.0 && *dropout < 1.0))
    return op->emitOpError("dropout must be in [0, 1), got ") << *dropout;
  if (stream && *stream < 0)
    return op->emitOpError("stream must be non-negative, got ") << *stream;
  return success();
}

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, getQuery(), getOffsets(), int64_t(getHeads()),
                         rateOf(getDropout()), streamOf(getStream()));
}

// Per head and query row: L scores and L weighted values of D / heads.
int64_t AttentionOp::getForwardFlops() {
  RankedTensorType t = tensorType(getQuery());
  return 4 * t.getNumElements() * t.getDimSize(1);
}

int64_t AttentionOp::getForwardBytes() {
  return 4 * tensorType(getQuery()).getNumElements() * getElementBytes(getResult());
}

LogicalResult AttentionOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                         ArrayRef<bool> need,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  if (!resultGrads[0] || !(need[0] || need[1] || need[2]))
    return success();
  Type t = getQuery().getType();
  auto grad = AttentionGradOp::create(b, getLoc(), t, t, t, resultGrads[0], getQuery(), getKey(),
                                      getValue(), getOffsets(), getHeadsAttr(), getCausalAttr(),
                                      getDropoutAttr(), getStreamAttr());
  for (unsigned i = 0; i < 3; ++i)
    if (need[i])
      operandGrads[i] = grad->getResult(i);
  return success();
}

/// The kernel of an attention op: its heads and, when set, causal and the
/// weights' dropout.
template <class OpTy> static LogicalResult lowerAttention(OpTy op, rt::KernelOp kind,
                                                        PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(kind);
  k.attrs["heads"] = int64_t(op.getHeads());
  if (op.getCausal())
    k.attrs["causal"] = true;
  if (op.getDropout() && op.getDropout()->convertToDouble() > 0.0) {
    k.attrs["dropout"] = op.getDropout()->convertToDouble();
    k.attrs["stream"] = int64_t(*op.getStream());
  }
  return e.emitOnOperands(op, std::move(k));
}

LogicalResult AttentionOp::lowerToPlan(PlanEmitter &e) {
  return lowerAttention(*this, rt::KernelOp::Attention, e);
}

LogicalResult AttentionGradOp::verify() {
  return verifyAttention(*this, getQuery(), getOffsets(), int64_t(getHeads()),
                         rateOf(getDropout()), streamOf(getStream()));
}

LogicalResult AttentionGradOp::lowerToPlan(PlanEmitter &e) {
  return lowerAttention(*this, rt::KernelOp::AttentionGrad, e);
}

//===----------------------------------------------------------------------===//
// SequencePoolOp, SequencePoolGradOp
//===----------------------------------------------------------------------===//

/// `pooled` is B x D of `seq`'s element type.
static LogicalResult verifyPooled(Operation *op, Value seq, Value pooled, StringRef what) {
  RankedTensorType s = tensorType(seq), p = tensorType(pooled);
  if (p.getRank() != 2 || p.getDimSize(0) != s.getDimSize(0) ||
      p.getDimSize(1) != s.getDimSize(2) || p.getElementType() != s.getElementType())
    return op->emitOpError() << what << " must be " << s.getDimSize(0) << " x "
                             << s.getDimSize(2) << " of " << s.getElementType()
                             << " (B x D of " << s << "), got " << p;
  return success();
}

LogicalResult SequencePoolOp::verify() {
  if (failed(verifySequence(*this, getInput(), getOffsets(), "input")))
    return failure();
  return verifyPooled(*this, getInput(), getResult(), "result");
}

// A read of each valid position, a divide per row for mean.
int64_t SequencePoolOp::getForwardFlops() { return tensorType(getInput()).getNumElements(); }

int64_t SequencePoolOp::getForwardBytes() {
  return (tensorType(getInput()).getNumElements() + tensorType(getResult()).getNumElements()) *
         getElementBytes(getResult());
}

LogicalResult SequencePoolOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                            ArrayRef<bool> need,
                                            SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  if (!resultGrads[0] || !need[0])
    return success();
  // Only max needs the forward input: which position won.
  Value input = getMode() == SequencePooling::max ? getInput() : Value();
  operandGrads[0] = SequencePoolGradOp::create(b, getLoc(), getInput().getType(), resultGrads[0],
                                               getOffsets(), input, getModeAttr());
  return success();
}

LogicalResult SequencePoolOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::SequencePool);
  k.attrs["mode"] = stringifySequencePooling(getMode()).str();
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult SequencePoolGradOp::verify() {
  if (failed(verifySequence(*this, getResult(), getOffsets(), "result")) ||
      failed(verifyPooled(*this, getResult(), getGrad(), "grad")))
    return failure();
  const bool max = getMode() == SequencePooling::max;
  if (max != bool(getInput()))
    return emitOpError(max ? "max pooling needs the forward 'input'"
                           : "only max pooling reads the forward 'input'");
  if (getInput() && getInput().getType() != getResult().getType())
    return emitOpError("input ") << getInput().getType() << " must have the result's type "
                                 << getResult().getType();
  return success();
}

LogicalResult SequencePoolGradOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::SequencePoolGrad);
  k.attrs["mode"] = stringifySequencePooling(getMode()).str();
  return e.emitOnOperands(*this, std::move(k));
}

//===----------------------------------------------------------------------===//
// NextTokenTargetsOp
//===----------------------------------------------------------------------===//

LogicalResult NextTokenTargetsOp::verify() {
  if (failed(verifyIds(*this, getIds())))
    return failure();
  RankedTensorType t = tensorType(getResult()), o = tensorType(getOffsets());
  if (t.getRank() != 2 || !t.hasStaticShape() || t.getDimSize(1) < 1)
    return emitOpError("result must be a static B x L tensor, got ") << t;
  if (o.getRank() != 1 || o.getDimSize(0) != t.getDimSize(0) + 1 ||
      o.getElementType().getIntOrFloatBitWidth() != 64)
    return emitOpError("offsets must be ")
           << t.getDimSize(0) + 1 << " 64-bit ids (B + 1 for the result's " << t << "), got "
           << o;
  return success();
}

LogicalResult NextTokenTargetsOp::lowerToPlan(PlanEmitter &e) {
  return e.emitOnOperands(*this, PlanEmitter::kernel(rt::KernelOp::NextTokenTargets));
}

//===----------------------------------------------------------------------===//
// MaskTokensOp
//===----------------------------------------------------------------------===//

LogicalResult MaskTokensOp::verify() {
  if (failed(verifyIds(*this, getIds())))
    return failure();
  if (getMaskedIds().getType() != getIds().getType())
    return emitOpError("masked ids must have the type of the ids (")
           << getIds().getType() << "), got " << getMaskedIds().getType();
  RankedTensorType t = tensorType(getTargets()), o = tensorType(getOffsets());
  if (t.getRank() != 2 || !t.hasStaticShape() || t.getDimSize(1) < 1)
    return emitOpError("targets must be a static B x L tensor, got ") << t;
  if (o.getRank() != 1 || o.getDimSize(0) != t.getDimSize(0) + 1 ||
      o.getElementType().getIntOrFloatBitWidth() != 64)
    return emitOpError("offsets must be ")
           << t.getDimSize(0) + 1 << " 64-bit ids (B + 1 for the targets' " << t << "), got "
           << o;
  const double rate = getRate().convertToDouble();
  if (!(rate > 0.0 && rate < 1.0))
    return emitOpError("rate must be in (0, 1), got ") << rate;
  if (getVocab() < 1 || getMaskId() < 0 || getStream() < 0)
    return emitOpError("needs vocab >= 1, mask_id >= 0 and stream >= 0, got ")
           << getVocab() << ", " << getMaskId() << " and " << getStream();
  return success();
}

LogicalResult MaskTokensOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::MaskTokens);
  k.attrs["rate"] = getRate().convertToDouble();
  k.attrs["mask_id"] = getMaskId();
  k.attrs["vocab"] = getVocab();
  k.attrs["stream"] = getStream();
  return e.emitOnOperands(*this, std::move(k));
}

//===----------------------------------------------------------------------===//
// SelectTargetsOp, SelectTargetsGradOp
//===----------------------------------------------------------------------===//

/// `seq` B x L x D and `targets` B x L; `rows` B x P x D and `selected`
/// B x P with P <= L (either may be null).
static LogicalResult verifySelection(Operation *op, Value seq, Value targets, Value rows,
                                     Value selected) {
  RankedTensorType x = tensorType(seq), t = tensorType(targets), r = tensorType(rows);
  if (x.getRank() != 3 || !x.hasStaticShape())
    return op->emitOpError("the sequence must be a static B x L x D tensor, got ") << x;
  if (t.getRank() != 2 || t.getShape() != x.getShape().drop_back())
    return op->emitOpError("targets must be B x L (")
           << x.getDimSize(0) << "x" << x.getDimSize(1) << "), got " << t;
  if (r.getRank() != 3 || !r.hasStaticShape() || r.getDimSize(0) != x.getDimSize(0) ||
      r.getDimSize(2) != x.getDimSize(2) || r.getDimSize(1) < 1 ||
      r.getDimSize(1) > x.getDimSize(1))
    return op->emitOpError("the selected rows must be B x P x D with 1 <= P <= L (")
           << x.getDimSize(0) << "xPx" << x.getDimSize(2) << ", P <= " << x.getDimSize(1)
           << "), got " << r;
  if (selected && tensorType(selected).getShape() != r.getShape().drop_back())
    return op->emitOpError("the selected targets must be B x P (")
           << r.getDimSize(0) << "x" << r.getDimSize(1) << "), got " << selected.getType();
  return success();
}

LogicalResult SelectTargetsOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  return verifySelection(*this, getInput(), getTargets(), getRows(), getSelected());
}

int64_t SelectTargetsOp::getForwardFlops() { return 0; }

int64_t SelectTargetsOp::getForwardBytes() {
  return (2 * tensorType(getRows()).getNumElements() + tensorType(getTargets()).getNumElements()) *
         getElementBytes(getRows());
}

LogicalResult SelectTargetsOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                             ArrayRef<bool> need,
                                             SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  if (!resultGrads[0] || !need[0])
    return success(); // the targets are data
  operandGrads[0] = SelectTargetsGradOp::create(b, getLoc(), getInput().getType(), resultGrads[0],
                                                getTargets());
  return success();
}

LogicalResult SelectTargetsOp::lowerToPlan(PlanEmitter &e) {
  return e.emitOnOperands(*this, PlanEmitter::kernel(rt::KernelOp::SelectTargets));
}

LogicalResult SelectTargetsGradOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  return verifySelection(*this, getResult(), getTargets(), getGrad(), Value());
}

LogicalResult SelectTargetsGradOp::lowerToPlan(PlanEmitter &e) {
  return e.emitOnOperands(*this, PlanEmitter::kernel(rt::KernelOp::SelectTargetsGrad));
}
