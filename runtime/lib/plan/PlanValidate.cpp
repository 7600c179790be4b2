//===- PlanValidate.cpp - what makes a structurally sound plan runnable ----===//
//
// The executor trusts a plan that passed these checks: every buffer lies
// inside the arena at a 64-byte boundary with exactly the bytes its shape
// needs, every buffer reference is in range and points at a buffer of the
// expected role (and, for tables, shape and dtype), and every enumerated
// word is one the runtime knows, and every kernel is one of the catalogue
// (KernelCatalogue.h) with the operand counts and attributes it declares.
// The rules are listed in docs/plan-format.md ("Validation").
//
//===----------------------------------------------------------------------===//

#include "PlanInternal.h"

#include "embc/runtime/cuda/KernelAbi.h"
#include "embc/runtime/plan/KernelCatalogue.h"
#include "embc/runtime/plan/SequenceLayout.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <charconv>
#include <map>
#include <set>

using namespace embc::runtime;
using namespace embc::runtime::detail;
using nlohmann::json;

namespace {

void requireWord(const std::string &value, const std::vector<std::string> &words,
                 const std::string &path, const char *what) {
  if (std::find(words.begin(), words.end(), value) == words.end())
    failAt(path, "unknown " + std::string(what) + " '" + value + "' (expected " +
                     joinAlternatives(words) + ")");
}

/// A collective launch's entry: the all-reduce's two halves, or the plan
/// kernel it runs (CudaCollectives.cpp reads them).
const std::vector<std::string> &collectiveEntries() {
  static const std::vector<std::string> entries = [] {
    std::vector<std::string> e = {"all_reduce_start", "all_reduce_wait"};
    for (KernelOp op : {KernelOp::GatherRows, KernelOp::ShardIds, KernelOp::ShardPool,
                        KernelOp::ShardPoolGrad, KernelOp::ShardIdsGroup,
                        KernelOp::ShardPoolGroup, KernelOp::ShardPoolGradGroup})
      e.push_back(kernelName(op));
    return e;
  }();
  return entries;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Names of parameters, tables, packs, batches and input features are the
/// model file's identifiers (and names derived from them with '_'): they
/// become checkpoint tensor names, log keys and CUDA symbols, so a name such
/// as "../../etc/x" or one with control characters is an edited plan.
void requireIdentifier(const std::string &name, const std::string &path) {
  bool ok = !name.empty() && name.size() <= 256 &&
            (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    failAt(path, "'" + std::string(name.substr(0, 64)) + (name.size() > 64 ? "...'" : "'") +
                     " is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)");
}

/// Buffer names are free text for messages and profiles, but printable.
void requirePrintable(const std::string &name, const std::string &path) {
  if (name.empty())
    failAt(path, "must not be empty");
  for (char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      failAt(path, "contains a control character");
}

/// Checks buffer references against the buffer list, naming both ends.
class BufferRefs {
public:
  explicit BufferRefs(const Plan &plan) : plan(plan) {}

  const Buffer &get(int32_t index, const std::string &path) const {
    if (index < 0 || static_cast<size_t>(index) >= plan.buffers.size())
      failAt(path, "buffer " + std::to_string(index) + " is out of range (the plan has " +
                       std::to_string(plan.buffers.size()) + " buffers)");
    return plan.buffers[index];
  }

  const Buffer &withRole(int32_t index, BufferRole role, const std::string &path) const {
    const Buffer &buffer = get(index, path);
    if (buffer.role != role)
      failAt(path, "buffer " + std::to_string(index) + " '" + buffer.name + "' has role " +
                       roleName(buffer.role) + ", expected " + roleName(role));
    return buffer;
  }

private:
  const Plan &plan;
};

void validateConfig(const TrainingConfig &config) {
  if (config.batchSize <= 0)
    failAt("config.batch_size", "must be positive, got " + std::to_string(config.batchSize));
  if (config.gradAccumulation < 1)
    failAt("config.grad_accumulation",
           "must be at least 1, got " + std::to_string(config.gradAccumulation));
  if (config.gradClipNorm < 0)
    failAt("config.grad_clip_norm",
           "must be >= 0 (0 disables clipping), got " + std::to_string(config.gradClipNorm));
  if (config.warmupSteps < 0)
    failAt("config.warmup_steps", "must be >= 0, got " + std::to_string(config.warmupSteps));
  if (config.decaySteps < 0)
    failAt("config.decay_steps", "must be >= 0, got " + std::to_string(config.decaySteps));
  if (config.lrSchedule != LrSchedule::Constant && config.decaySteps == 0)
    failAt("config.decay_steps", "must be positive for the '" + enumString(config.lrSchedule) +
                                     "' schedule");
  // Dynamic loss scaling: checked even when disabled, so a plan never
  // carries a policy that would misbehave if switched on.
  const LossScaling &ls = config.lossScaling;
  if (!(ls.initial > 0) || !std::isfinite(ls.initial))
    failAt("config.loss_scaling.initial",
           "must be a positive finite scale, got " + std::to_string(ls.initial));
  if (!(ls.growth >= 1) || !std::isfinite(ls.growth))
    failAt("config.loss_scaling.growth",
           "must be >= 1 (the scale never shrinks on good steps), got " +
               std::to_string(ls.growth));
  if (!(ls.backoff > 0 && ls.backoff < 1))
    failAt("config.loss_scaling.backoff",
           "must lie in (0, 1) (an overflow must lower the scale), got " +
               std::to_string(ls.backoff));
  if (ls.interval < 1)
    failAt("config.loss_scaling.interval",
           "must be at least 1 good step, got " + std::to_string(ls.interval));
  if (ls.enabled && config.precision != ComputeType::F16)
    failAt("config.loss_scaling.enabled",
           "loss scaling is for fp16 compute; the plan's precision is " +
                                   enumString(config.precision));
  if (config.dataParallel < 1)
    failAt("config.data_parallel",
           "must be at least 1 (ranks), got " + std::to_string(config.dataParallel));
}

void validateBuffer(const Buffer &buffer, int64_t arenaBytes, const std::string &path) {
  requirePrintable(buffer.name, childPath(path, "name"));
  if (buffer.dynamic && buffer.shape.empty())
    failAt(childPath(path, "dynamic"), "a scalar buffer has no leading dimension to fill");
  // An empty shape is a scalar: one element.
  int64_t elements = 1;
  for (size_t i = 0; i < buffer.shape.size(); ++i) {
    int64_t dim = buffer.shape[i];
    if (dim <= 0)
      failAt(childPath(childPath(path, "shape"), i),
             "dimensions must be positive, got " + std::to_string(dim));
    if (__builtin_mul_overflow(elements, dim, &elements))
      failAt(childPath(path, "shape"), shapeText(buffer.shape) + " has too many elements");
  }
  int64_t expected;
  if (__builtin_mul_overflow(elements, dtypeBytes(buffer.dtype), &expected))
    failAt(childPath(path, "shape"), shapeText(buffer.shape) + " is too large");
  if (buffer.bytes != expected)
    failAt(childPath(path, "bytes"),
           std::to_string(buffer.bytes) + " but shape " + shapeText(buffer.shape) + " of " +
               dtypeName(buffer.dtype) + " needs " + std::to_string(expected));
  if (buffer.offset < 0)
    failAt(childPath(path, "offset"), "must be >= 0, got " + std::to_string(buffer.offset));
  // A view (packing) is aligned to its element; a buffer of its own to 64.
  int64_t alignment = buffer.parent >= 0 ? dtypeBytes(buffer.dtype) : 64;
  if (buffer.offset % alignment != 0)
    failAt(childPath(path, "offset"), std::to_string(buffer.offset) + " is not a multiple of " +
                                          std::to_string(alignment));
  // offset + bytes <= arenaBytes, written so that it cannot overflow.
  if (buffer.bytes > arenaBytes || buffer.offset > arenaBytes - buffer.bytes)
    failAt(childPath(path, "offset"),
           "buffer '" + buffer.name + "' at offset " + std::to_string(buffer.offset) +
               " with " + std::to_string(buffer.bytes) + " bytes ends past the arena (" +
               std::to_string(arenaBytes) + " bytes)");
}

/// The shortest text that reads back as `value` ("0.1", "1e+39").
std::string formatDouble(double value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : std::string("?");
}

/// `value` lies in [low, high] (or (low, high] with `open`), a finite number.
void requireRange(double value, double low, double high, bool open, const std::string &path,
                  const char *what) {
  bool ok = std::isfinite(value) && (open ? value > low : value >= low) && value <= high;
  if (!ok)
    failAt(path, std::string("must be ") + what + ", got " + formatDouble(value));
}

/// The model file's rules for an optimizer (frontend/lib/ModelParser.cpp),
/// so a plan edited past them is refused before it trains.
void validateHyperParameters(const Optimizer &opt, const std::string &path) {
  const double inf = HUGE_VAL;
  requireRange(opt.lr, 0, inf, true, childPath(path, "lr"), "a positive finite number");
  requireRange(opt.momentum, 0, std::nextafter(1.0, 0.0), false, childPath(path, "momentum"),
               "in [0, 1)");
  requireRange(opt.beta1, 0, std::nextafter(1.0, 0.0), false, childPath(path, "beta1"),
               "in [0, 1)");
  requireRange(opt.beta2, 0, std::nextafter(1.0, 0.0), false, childPath(path, "beta2"),
               "in [0, 1)");
  requireRange(opt.eps, 0, inf, true, childPath(path, "eps"), "a positive finite number");
  requireRange(opt.weightDecay, 0, inf, false, childPath(path, "weight_decay"),
               "a finite number >= 0");
  requireRange(opt.initialAccumulator, 0, inf, false, childPath(path, "initial_accumulator"),
               "a finite number >= 0");
}

/// An initializer's numbers: finite, ordered, and within float32 (where
/// every parameter and table is initialised), as the model file requires.
void validateInitializer(const Initializer &init, const std::string &path) {
  const double kFloatMax = 3.4028234663852886e38;
  auto inFloat = [&](double v, const char *key) {
    requireRange(v, -kFloatMax, kFloatMax, false, childPath(path, key),
                 "a finite number within float32");
  };
  switch (init.kind) {
  case InitKind::Zeros:
    return;
  case InitKind::Constant:
    return inFloat(init.value, "value");
  case InitKind::Uniform:
    inFloat(init.low, "low");
    inFloat(init.high, "high");
    if (!(init.low < init.high) || !(init.high - init.low <= kFloatMax))
      failAt(childPath(path, "high"), "needs low < high and high - low within float32, got low " +
                                          formatDouble(init.low) + ", high " +
                                          formatDouble(init.high));
    return;
  case InitKind::Normal:
    inFloat(init.mean, "mean");
    requireRange(init.std, 0, kFloatMax / 10, true, childPath(path, "std"),
                 "positive, with mean + 10 std within float32");
    inFloat(std::abs(init.mean) + 10 * init.std, "std");
    return;
  case InitKind::XavierUniform:
  case InitKind::XavierNormal:
    requireRange(init.gain, 0, kFloatMax, true, childPath(path, "gain"),
                 "a positive finite number");
    return;
  }
}

void validateOptimizer(const Optimizer &opt, const std::vector<int32_t> &state,
                       const BufferRefs &refs, const std::string &path) {
  std::string optPath = childPath(path, "optimizer");
  validateHyperParameters(opt, optPath);
  std::string statePath = childPath(path, "state");
  for (size_t i = 0; i < state.size(); ++i)
    refs.withRole(state[i], BufferRole::OptimizerState, childPath(statePath, i));
  size_t expected = opt.stateBuffers();
  if (state.size() != expected)
    failAt(statePath, "optimizer " + enumString(opt.kind) + " needs " + std::to_string(expected) +
                          " state buffers, got " + std::to_string(state.size()));
}

/// A view lies inside its parent, which is a buffer of its own with the
/// same role and dtype.
void validateView(const Plan &plan, size_t index, const std::string &path) {
  const Buffer &view = plan.buffers[index];
  if (view.parent < 0)
    return;
  std::string at = childPath(path, "parent");
  if (static_cast<size_t>(view.parent) >= plan.buffers.size() ||
      static_cast<size_t>(view.parent) == index)
    failAt(at, "buffer " + std::to_string(view.parent) + " is not another buffer of the plan");
  const Buffer &parent = plan.buffers[view.parent];
  if (parent.parent >= 0)
    failAt(at, "'" + parent.name + "' is itself a view; views nest one level");
  if (parent.role != view.role || parent.dtype != view.dtype || parent.dynamic || view.dynamic)
    failAt(at, "view '" + view.name + "' (" + roleName(view.role) + ", " +
                   dtypeName(view.dtype) + ") must have the role and dtype of its static parent '" +
                   parent.name + "' (" + roleName(parent.role) + ", " + dtypeName(parent.dtype) +
                   ")");
  if (view.offset < parent.offset || view.offset - parent.offset > parent.bytes - view.bytes)
    failAt(at, "view '" + view.name + "' [" + std::to_string(view.offset) + ", +" +
                   std::to_string(view.bytes) + ") lies outside its parent '" + parent.name +
                   "' [" + std::to_string(parent.offset) + ", +" + std::to_string(parent.bytes) +
                   ")");
}

/// Memory planning (-emb-plan-memory): slots, origins and lifetimes are
/// well-formed, every copy fits the arena, and buffers that are live at the
/// same time never share a byte (reuse is only between disjoint lifetimes).
/// A disk table's buffers of their own start on a page (kDiskPageBytes) and
/// own whole pages: their extent is rounded up to the next page, which must
/// lie in the arena and share no byte with another buffer (embrun maps a
/// file over exactly those pages).
void validateMemoryLayout(const Plan &plan) {
  static const std::vector<std::string> origins = {
      "frontend", "emb-autodiff", "emb-quantize", "emb-pack-params", "emb-remat",
      "emb-pipeline", "emb-fuse", "emb-to-plan"};
  if (!parseEnum<MemoryStrategy>(plan.memory.strategy))
    failAt("memory.strategy", "unknown memory strategy '" + plan.memory.strategy +
                                  "' (expected " + enumChoices<MemoryStrategy>() + ")");
  const int64_t positions = int64_t(plan.step.size() + plan.update.size());
  const std::vector<Placement> placement = plan.bufferPlacements();
  std::vector<int64_t> extent(plan.buffers.size(), 0);
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const Buffer &b = plan.buffers[i];
    std::string path = childPath("buffers", i);
    if (b.slots < 1)
      failAt(childPath(path, "slots"), "must be at least 1, got " + std::to_string(b.slots));
    const bool paged = placement[i] == Placement::Disk && b.parent < 0;
    if (paged && b.offset % kDiskPageBytes != 0)
      failAt(childPath(path, "offset"),
             std::to_string(b.offset) + " is not a multiple of " +
                 std::to_string(kDiskPageBytes) + ": buffer '" + b.name +
                 "' of a disk table is mapped from a file page by page");
    if (!b.origin.empty()) // hand-written plans may leave it out
      requireWord(b.origin, origins, childPath(path, "origin"), "origin");
    bool whole = b.firstUse == -1 && b.lastUse == -1;
    if (!whole && !(b.firstUse >= 0 && b.firstUse <= b.lastUse && b.lastUse < positions))
      failAt(childPath(path, "first_use"),
             "lifetime [" + std::to_string(b.firstUse) + ", " + std::to_string(b.lastUse) +
                 "] is neither -1/-1 (whole run) nor within the " + std::to_string(positions) +
                 " kernel positions of the step and update");
    // Every copy of a multi-slot buffer lies in the arena too.
    if (__builtin_mul_overflow(b.bytes, int64_t(b.slots), &extent[i]) ||
        extent[i] > plan.arenaBytes || b.offset > plan.arenaBytes - extent[i])
      failAt(childPath(path, "slots"), "buffer '" + b.name + "' with " +
                                           std::to_string(b.slots) + " slots of " +
                                           std::to_string(b.bytes) +
                                           " bytes ends past the arena (" +
                                           std::to_string(plan.arenaBytes) + " bytes)");
    if (paged) { // whole pages: cannot overflow, extent <= arena bytes
      extent[i] = (extent[i] + kDiskPageBytes - 1) / kDiskPageBytes * kDiskPageBytes;
      if (extent[i] > plan.arenaBytes - b.offset)
        failAt(childPath(path, "offset"),
               "buffer '" + b.name + "' of a disk table at offset " + std::to_string(b.offset) +
                   " rounded up to whole pages (" + std::to_string(extent[i]) +
                   " bytes) ends past the arena (" + std::to_string(plan.arenaBytes) + " bytes)");
    }
    if (b.parent >= 0) {
      const Buffer &parent = plan.buffers[b.parent];
      bool inside = parent.firstUse < 0 ||
                    (!whole && b.firstUse >= parent.firstUse && b.lastUse <= parent.lastUse);
      if (!inside)
        failAt(childPath(path, "first_use"),
               "view '" + b.name + "' lives [" + std::to_string(b.firstUse) + ", " +
                   std::to_string(b.lastUse) + "], outside its parent '" + parent.name +
                   "' [" + std::to_string(parent.firstUse) + ", " +
                   std::to_string(parent.lastUse) + "]");
    }
  }
  // Buffers of their own by offset; each is compared with the earlier ones
  // whose bytes reach past its start.
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].parent < 0)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plan.buffers[a].offset < plan.buffers[b].offset;
  });
  auto span = [&](const Buffer &b) {
    return b.firstUse < 0 ? std::pair<int64_t, int64_t>{0, INT64_MAX}
                          : std::pair<int64_t, int64_t>{b.firstUse, b.lastUse};
  };
  auto describe = [&](size_t i) {
    const Buffer &b = plan.buffers[i];
    std::string life = b.firstUse < 0 ? "the whole run"
                                      : "[" + std::to_string(b.firstUse) + ", " +
                                            std::to_string(b.lastUse) + "]";
    return "buffers[" + std::to_string(i) + "] '" + b.name + "' [" + std::to_string(b.offset) +
           ", +" + std::to_string(extent[i]) + ") live " + life;
  };
  std::vector<size_t> open; // earlier buffers whose bytes may still overlap
  for (size_t i : order) {
    const Buffer &b = plan.buffers[i];
    std::vector<size_t> still;
    for (size_t j : open) {
      const Buffer &a = plan.buffers[j];
      if (a.offset + extent[j] <= b.offset)
        continue; // ends before b starts: so will it for every later buffer
      still.push_back(j);
      auto [af, al] = span(a);
      auto [bf, bl] = span(b);
      bool sameRank = a.rank < 0 || b.rank < 0 || a.rank == b.rank;
      if (extent[i] > 0 && af <= bl && bf <= al && sameRank)
        failAt(childPath(childPath("buffers", i), "offset"),
               describe(i) + " overlaps " + describe(j) +
                   ": buffers live at the same time must not share memory");
    }
    still.push_back(i);
    open.swap(still);
  }
}

/// Member `index` of a pack or batch: its buffer `member` must be a view of
/// the pack's `whole` at `relative` bytes from the pack's start.
void requireViewAt(const Plan &plan, int32_t member, int32_t whole, int64_t relative,
                   const std::string &path) {
  const Buffer &view = plan.buffers.at(member);
  const Buffer &parent = plan.buffers.at(whole);
  if (view.parent != whole || view.offset != parent.offset + relative)
    failAt(path, "buffer '" + view.name + "' must be a view of '" + parent.name + "' at byte " +
                     std::to_string(relative) + " of it");
}

void validatePack(const Plan &plan, const ParamPack &pack, const BufferRefs &refs,
                  std::vector<int> &packOf, size_t self, const std::string &path) {
  requireIdentifier(pack.name, childPath(path, "name"));
  const Buffer &values = refs.withRole(pack.buffer, BufferRole::Param, childPath(path, "buffer"));
  const Buffer &grad = refs.withRole(pack.grad, BufferRole::Grad, childPath(path, "grad"));
  if (values.parent >= 0 || grad.parent >= 0 || grad.shape != values.shape ||
      values.shape.size() != 1)
    failAt(path, "a pack's values and gradient are 1-d buffers of the same size, not views");
  validateOptimizer(pack.optimizer, pack.state, refs, path);
  if (pack.members.empty())
    failAt(childPath(path, "members"), "a pack has at least one member");
  for (size_t m = 0; m < pack.members.size(); ++m) {
    std::string at = childPath(childPath(path, "members"), m);
    int32_t p = pack.members[m];
    if (p < 0 || static_cast<size_t>(p) >= plan.params.size())
      failAt(at, "parameter " + std::to_string(p) + " is out of range");
    if (packOf[p] >= 0)
      failAt(at, "parameter '" + plan.params[p].name + "' is already in pack " +
                     std::to_string(packOf[p]));
    packOf[p] = static_cast<int>(self);
    const Param &param = plan.params[p];
    if (param.optimizer.kind != pack.optimizer.kind)
      failAt(at, "parameter '" + param.name + "' uses " + enumString(param.optimizer.kind) +
                     ", the pack " + enumString(pack.optimizer.kind));
    const Buffer &member = plan.buffers.at(param.buffer);
    int64_t relative = member.offset - values.offset;
    requireViewAt(plan, param.buffer, pack.buffer, relative, at);
    requireViewAt(plan, param.grad, pack.grad, relative, at);
    if (pack.optimizer.kind == OptimizerKind::RowwiseAdagrad)
      continue; // one accumulator per row: its own offsets, checked by the kernel binder
    for (size_t s = 0; s < pack.state.size(); ++s)
      requireViewAt(plan, param.state.at(s), pack.state[s], relative, at);
  }
  int64_t elements = values.shape[0];
  const std::vector<int64_t> &b = pack.buckets;
  bool ordered = b.size() >= 2 && b.front() == 0 && b.back() == elements;
  for (size_t i = 1; ordered && i < b.size(); ++i)
    ordered = b[i] > b[i - 1];
  if (!ordered)
    failAt(childPath(path, "buckets"), "must rise strictly from 0 to the pack's " +
                                           std::to_string(elements) + " elements");
}

/// The shape of a rows x dim table's values buffer in `storage`: int4 packs
/// two 4-bit codes per byte, so its u8 buffer is rows x dim/2.
std::vector<int64_t> storageShape(Storage storage, int64_t rows, int64_t dim) {
  return {rows, storage == Storage::Int4 ? dim / 2 : dim};
}

/// A table's (or batch's) storage (-emb-quantize): the values buffer has
/// the storage's dtype, int4 needs an even dim, and int8/int4 rows come
/// with a rows x 2 f16 scale/bias buffer (role table); other storages have
/// none. The values buffer's shape is checked by the caller (storageShape),
/// after this.
void validateStorage(Storage storage, int32_t qparams, const Buffer &values, int64_t rows,
                     int64_t dim, const BufferRefs &refs, const std::string &path) {
  const DType dtype = storageDType(storage);
  if (values.dtype != dtype)
    failAt(childPath(path, "buffer"), "values buffer '" + values.name + "' is " +
                                          dtypeName(values.dtype) + ", but " +
                                          enumString(storage) + " storage needs " +
                                          dtypeName(dtype));
  if (storage == Storage::Int4 && dim % 2 != 0)
    failAt(childPath(path, "dim"), "is " + std::to_string(dim) +
                                       ", but int4 storage packs two values per byte and "
                                       "needs an even dim");
  std::string qpath = childPath(path, "qparams");
  if (!isRowwise(storage)) {
    if (qparams != -1)
      failAt(qpath, "must be -1: only int8 and int4 storage have a per-row scale and bias");
    return;
  }
  const Buffer &q = refs.withRole(qparams, BufferRole::Table, qpath);
  if (q.dtype != DType::F16 || q.shape != std::vector<int64_t>{rows, 2})
    failAt(qpath, "scale/bias buffer '" + q.name + "' must be f16" + shapeText({rows, 2}) +
                      " (scale, bias per row), got " + dtypeName(q.dtype) + shapeText(q.shape));
}

void validateTableBatch(const Plan &plan, const TableBatch &batch, const BufferRefs &refs,
                        std::vector<int> &batchOf, size_t self, const std::string &path) {
  requireIdentifier(batch.name, childPath(path, "name"));
  const Buffer &values = refs.withRole(batch.buffer, BufferRole::Table, childPath(path, "buffer"));
  validateStorage(batch.storage, batch.qparams, values, batch.rows, batch.dim, refs, path);
  std::vector<int64_t> shape = storageShape(batch.storage, batch.rows, batch.dim);
  if (values.parent >= 0 || values.shape != shape)
    failAt(childPath(path, "buffer"),
           std::string("must be a ") +
               (batch.storage == Storage::Int4 ? "[rows, dim / 2] = " : "[rows, dim] = ") +
               shapeText(shape) + " buffer of its own, got '" + values.name + "' " +
               shapeText(values.shape));
  refs.withRole(batch.gradRows, BufferRole::Grad, childPath(path, "grad_rows"));
  refs.withRole(batch.gradValues, BufferRole::Grad, childPath(path, "grad_values"));
  validateOptimizer(batch.optimizer, batch.state, refs, path);
  if (batch.members.empty() || batch.members.size() != batch.rowOffsets.size())
    failAt(childPath(path, "members"), "needs at least one member and one row offset each");
  int64_t nextRow = 0;
  for (size_t m = 0; m < batch.members.size(); ++m) {
    std::string at = childPath(childPath(path, "members"), m);
    int32_t t = batch.members[m];
    if (t < 0 || static_cast<size_t>(t) >= plan.tables.size())
      failAt(at, "table " + std::to_string(t) + " is out of range");
    if (batchOf[t] >= 0)
      failAt(at, "table '" + plan.tables[t].name + "' is already in batch " +
                     std::to_string(batchOf[t]));
    batchOf[t] = static_cast<int>(self);
    const Table &table = plan.tables[t];
    if (batch.rowOffsets[m] != nextRow || table.dim != batch.dim)
      failAt(childPath(childPath(path, "row_offsets"), m),
             "table '" + table.name + "' must start at row " + std::to_string(nextRow) +
                 " with dim " + std::to_string(batch.dim));
    nextRow += table.rows;
    if (table.optimizer.kind != batch.optimizer.kind)
      failAt(at, "table '" + table.name + "' uses " + enumString(table.optimizer.kind) +
                     ", the batch " + enumString(batch.optimizer.kind));
    int64_t rowBytes = shape[1] * dtypeBytes(values.dtype);
    requireViewAt(plan, table.buffer, batch.buffer, batch.rowOffsets[m] * rowBytes, at);
    for (size_t s = 0; s < batch.state.size(); ++s) {
      const Buffer &whole = plan.buffers.at(batch.state[s]);
      int64_t perRow = whole.bytes / batch.rows; // rowwise: one value per row
      requireViewAt(plan, table.state.at(s), batch.state[s], batch.rowOffsets[m] * perRow, at);
    }
    if (table.gradRows != batch.gradRows || table.gradValues != batch.gradValues)
      failAt(at, "table '" + table.name + "' must share the batch's sparse gradient buffers");
    if (table.storage != batch.storage)
      failAt(at, "table '" + table.name + "' is stored as " + enumString(table.storage) +
                     ", the batch as " + enumString(batch.storage));
    if (table.placement != batch.placement)
      failAt(at, "table '" + table.name + "' has placement " + enumString(table.placement) +
                     ", the batch " + enumString(batch.placement) +
                     ": a batch's members share one placement");
    if (batch.qparams >= 0)
      requireViewAt(plan, table.qparams, batch.qparams, batch.rowOffsets[m] * 2 * 2, at);
  }
  if (nextRow != batch.rows)
    failAt(childPath(path, "rows"), std::to_string(batch.rows) + " but the members hold " +
                                        std::to_string(nextRow) + " rows");
}

/// Parameters and tables share one namespace: checkpoints store them by name.
void requireUniqueName(const std::string &name, std::set<std::string> &names,
                       const std::string &path) {
  requireIdentifier(name, path);
  if (!names.insert(name).second)
    failAt(path, "'" + name + "' names another parameter or table");
}

void validateParam(const Param &param, const BufferRefs &refs, std::set<std::string> &names,
                   const std::string &path) {
  requireUniqueName(param.name, names, childPath(path, "name"));
  const Buffer &values = refs.withRole(param.buffer, BufferRole::Param, childPath(path, "buffer"));
  const Buffer &grad = refs.withRole(param.grad, BufferRole::Grad, childPath(path, "grad"));
  if (grad.dtype != values.dtype || grad.shape != values.shape)
    failAt(childPath(path, "grad"), "gradient buffer '" + grad.name + "' is " +
                                        dtypeName(grad.dtype) + shapeText(grad.shape) +
                                        " but the parameter is " + dtypeName(values.dtype) +
                                        shapeText(values.shape));
  validateInitializer(param.init, childPath(path, "init"));
  validateOptimizer(param.optimizer, param.state, refs, path);
}

/// A sharded table's row boundaries: 0 = b_0 <= b_1 <= ... <= b_N = rows,
/// one shard per rank of the plan.
void validateShards(const Table &table, const std::string &path) {
  const std::vector<int64_t> &b = table.shardRows;
  if (b.empty())
    return;
  std::string at = childPath(path, "shard_rows");
  if (b.size() < 3 || b.front() != 0 || b.back() != table.rows ||
      !std::is_sorted(b.begin(), b.end()))
    failAt(at, "must be N + 1 >= 3 ascending row boundaries from 0 to " +
                   std::to_string(table.rows) + ", got " + shapeText(b));
}

void validateTable(const Table &table, const BufferRefs &refs, std::set<std::string> &names,
                   const std::string &path) {
  requireUniqueName(table.name, names, childPath(path, "name"));
  if (table.rows <= 0)
    failAt(childPath(path, "rows"), "must be positive, got " + std::to_string(table.rows));
  if (table.dim <= 0)
    failAt(childPath(path, "dim"), "must be positive, got " + std::to_string(table.dim));
  const Buffer &values = refs.withRole(table.buffer, BufferRole::Table, childPath(path, "buffer"));
  // Storage first: an odd int4 dim is reported as such, not as a shape mismatch.
  validateShards(table, path);
  validateStorage(table.storage, table.qparams, values, table.storedRows(), table.dim, refs,
                  path);
  std::vector<int64_t> shape = storageShape(table.storage, table.storedRows(), table.dim);
  if (values.shape != shape)
    failAt(childPath(path, "buffer"),
           "table buffer '" + values.name + "' has shape " + shapeText(values.shape) +
               (table.storage == Storage::Int4 ? ", expected [rows, dim / 2] = "
                                        : ", expected [rows, dim] = ") +
               shapeText(shape) + (table.shardRows.empty() ? "" : " (its largest shard)"));

  // The sparse gradient: C row ids (filled up to a runtime count) and C x dim values.
  std::string rowsPath = childPath(path, "grad_rows");
  const Buffer &rows = refs.withRole(table.gradRows, BufferRole::Grad, rowsPath);
  if (rows.dtype != DType::I64 || rows.shape.size() != 1 || !rows.dynamic)
    failAt(rowsPath, "gradient rows buffer '" + rows.name +
                         "' must be a dynamic 1-d i64 buffer, got " +
                         (rows.dynamic ? "dynamic " : "static ") + dtypeName(rows.dtype) +
                         shapeText(rows.shape));
  std::string valuesPath = childPath(path, "grad_values");
  const Buffer &grads = refs.withRole(table.gradValues, BufferRole::Grad, valuesPath);
  std::vector<int64_t> gradShape = {rows.shape[0], table.dim};
  if (grads.dtype != DType::F32 || grads.shape != gradShape)
    failAt(valuesPath, "gradient values buffer '" + grads.name + "' must be f32" +
                           shapeText(gradShape) + " (rows capacity x dim), got " +
                           dtypeName(grads.dtype) + shapeText(grads.shape));
  validateInitializer(table.init, childPath(path, "init"));
  validateOptimizer(table.optimizer, table.state, refs, path);
  if (table.placement != Placement::Device && !table.shardRows.empty())
    failAt(childPath(path, "placement"),
           "table '" + table.name + "' is sharded but has placement " +
               enumString(table.placement) + ": a sharded table lives on its ranks' devices");
}

void validateInput(const Input &input, const BufferRefs &refs, const std::string &path) {
  requireIdentifier(input.feature, childPath(path, "feature"));
  refs.withRole(input.buffer, BufferRole::Input, childPath(path, "buffer"));
  if (input.width < 0)
    failAt(childPath(path, "width"), "must be >= 0, got " + std::to_string(input.width));
  if (input.vocab < 0)
    failAt(childPath(path, "vocab"),
           "must be >= 0 (0: unbounded), got " + std::to_string(input.vocab));
  if (input.hotness < 1)
    failAt(childPath(path, "hotness"), "must be at least 1, got " + std::to_string(input.hotness));
  std::string kindPath = childPath(path, "label_kind");
  if (input.role == InputRole::Label && !input.labelKind)
    failAt(kindPath, "unknown label kind '' (expected " + enumChoices<LabelKind>() + ")");
  if (input.role != InputRole::Label && input.labelKind)
    failAt(kindPath, "only a label input has a label kind, this is a '" + enumString(input.role) +
                         "' input");
}

void validateKernels(const Plan &plan, const std::vector<Kernel> &kernels, const BufferRefs &refs,
                     bool update) {
  const std::string path = update ? "update" : "step";
  for (size_t k = 0; k < kernels.size(); ++k) {
    const Kernel &kernel = kernels[k];
    std::string at = childPath(path, k);
    for (size_t i = 0; i < kernel.inputs.size(); ++i)
      refs.get(kernel.inputs[i], childPath(childPath(at, "inputs"), i));
    for (size_t i = 0; i < kernel.outputs.size(); ++i)
      refs.get(kernel.outputs[i], childPath(childPath(at, "outputs"), i));
    if (kernel.bytes < 0)
      failAt(childPath(at, "bytes"), "must be >= 0, got " + std::to_string(kernel.bytes));
    if (auto problem = checkKernel(kernel, plan, update, at))
      throw PlanFormatError(*problem);
  }
}

/// A `kernel` launch's entry is defined in the source, and its block fits
/// the kernel's __launch_bounds__ where it declares them (a GPU refuses a
/// larger block, and the compiler kept the registers for that many threads).
void checkKernelEntry(const std::string &source, const CudaLaunch &l, const std::string &at) {
  const std::string plain = "void " + l.entry + "(", bounded = "void __launch_bounds__(";
  if (source.find(plain) != std::string::npos)
    return;
  for (size_t p = source.find(bounded); p != std::string::npos;
       p = source.find(bounded, p + 1)) {
    size_t close = source.find(") ", p + bounded.size());
    if (close == std::string::npos || source.compare(close + 2, l.entry.size() + 1,
                                                     l.entry + "(") != 0)
      continue;
    std::string digits = source.substr(p + bounded.size(), close - p - bounded.size());
    digits = digits.substr(0, digits.find(',')); // (threads[, min blocks])
    int64_t bound = 0;
    for (char c : digits)
      bound = std::isdigit(static_cast<unsigned char>(c)) && bound < (int64_t(1) << 20)
                  ? bound * 10 + (c - '0')
                  : -1;
    if (digits.empty() || bound <= 0)
      failAt(childPath(at, "entry"), "'" + l.entry + "' has malformed launch bounds (" +
                                         digits + ")");
    if (l.block > bound)
      failAt(childPath(at, "block"), "'" + l.entry + "' is launched with " +
                                         std::to_string(l.block) + " threads but its "
                                         "__launch_bounds__ allow " + std::to_string(bound));
    return;
  }
  failAt(childPath(at, "entry"), "'" + l.entry + "' is not defined in cuda.source");
}

/// The length variants (CudaLengthVariant): for the plan's one sequence,
/// lengths ascending below its max_len, each with launches for exactly the
/// step kernels findSequenceLayout says touch a sequence buffer.
template <class Check> void validateCudaLengths(const Plan &plan, const Check &check) {
  const CudaProgram &cuda = plan.cuda;
  if (cuda.lengths.empty()) {
    if (!cuda.lengthKernels.empty())
      failAt("cuda.length_kernels", "is set but the program has no length variants");
    return;
  }
  const SequenceLayout layout = findSequenceLayout(plan);
  if (layout.sequences.size() != 1 || !layout.unsupported.empty())
    failAt("cuda.lengths", "length variants need a plan with one sequence feature whose "
                           "kernels all pad per batch" +
                               (layout.unsupported.empty() ? std::string()
                                                           : " (" + layout.unsupported + ")"));
  if (cuda.lengthKernels.size() != layout.kernels.size() ||
      !std::equal(layout.kernels.begin(), layout.kernels.end(), cuda.lengthKernels.begin(),
                  [](size_t a, int64_t b) { return int64_t(a) == b; }))
    failAt("cuda.length_kernels", "must list the " + std::to_string(layout.kernels.size()) +
                                      " step kernels that touch a sequence buffer");
  int64_t previous = 0;
  for (size_t i = 0; i < cuda.lengths.size(); ++i) {
    const CudaLengthVariant &v = cuda.lengths[i];
    const std::string at = childPath("cuda.lengths", i);
    if (v.length <= previous || v.length >= layout.sequences[0].maxLen)
      failAt(childPath(at, "length"), std::to_string(v.length) +
                                          " is not above the previous length and below max_len " +
                                          std::to_string(layout.sequences[0].maxLen));
    previous = v.length;
    check(v.step, cuda.lengthKernels.size(), childPath(at, "step"), "cuda.length_kernels");
  }
}

/// The CUDA program: one launch list per kernel, known kinds, args in range
/// (a `length` arg names a dynamic buffer), scratch inside scratch_bytes,
/// and every generated entry defined in the source.
void validateCuda(const Plan &plan, const BufferRefs &refs) {
  const CudaProgram &cuda = plan.cuda;
  if (cuda.source.empty())
    return;
  if (cuda.scratchBytes < 0)
    failAt("cuda.scratch_bytes", "must be >= 0, got " + std::to_string(cuda.scratchBytes));
  // `path`: where the list is; `what`: the plan's list it is parallel to.
  auto check = [&](const std::vector<CudaKernel> &kernels, size_t expected,
                   const std::string &path, const std::string &what) {
    if (kernels.size() != expected)
      failAt(path, "has " + std::to_string(kernels.size()) + " kernels, " + what + " has " +
                       std::to_string(expected));
    for (size_t k = 0; k < kernels.size(); ++k) {
      std::string at = childPath(path, k);
      if (kernels[k].launches.empty())
        failAt(at, "has no launch");
      for (size_t j = 0; j < kernels[k].launches.size(); ++j) {
        const CudaLaunch &l = kernels[k].launches[j];
        std::string lat = childPath(at, j);
        requireWord(l.kind, {"kernel", "gemm", "library", "memset", "collective"},
                    childPath(lat, "kind"), "launch kind");
        if (l.kind == "collective")
          requireWord(l.entry, collectiveEntries(), childPath(lat, "entry"), "collective");
        if (l.kind == "kernel")
          checkKernelEntry(cuda.source, l, lat);
        if (l.args.size() > EMB_MAX_ARGS)
          failAt(childPath(lat, "args"), "more than " + std::to_string(EMB_MAX_ARGS) + " args");
        for (size_t i = 0; i < l.args.size(); ++i) {
          const CudaArg &a = l.args[i];
          std::string aat = childPath(childPath(lat, "args"), i);
          if (a.buffer >= 0) {
            refs.get(a.buffer, childPath(aat, "buffer"));
          } else if (a.length >= 0) {
            if (!refs.get(a.length, childPath(aat, "length")).dynamic)
              failAt(childPath(aat, "length"), "buffer " + std::to_string(a.length) +
                                                   " is not dynamic: it has no length cell");
          } else if (a.scratch < 0 || a.scratch >= std::max<int64_t>(cuda.scratchBytes, 1)) {
            failAt(childPath(aat, "scratch"), std::to_string(a.scratch) +
                                                  " is outside the scratch's " +
                                                  std::to_string(cuda.scratchBytes) + " bytes");
          }
        }
        for (int d = 0; d < 3; ++d)
          if (l.grid[d] < 1 || l.grid[d] > (d == 0 ? 2147483647 : 65535))
            failAt(childPath(lat, "grid"), "grid dimension out of range: " +
                                               std::to_string(l.grid[d]));
        if (l.kind == "kernel" && (l.block < 1 || l.block > 1024))
          failAt(childPath(lat, "block"), "must be 1..1024 threads, got " + std::to_string(l.block));
        if (l.shared < 0 || l.shared > 227 * 1024)
          failAt(childPath(lat, "shared"), "must be 0..232448 bytes, got " + std::to_string(l.shared));
      }
    }
  };
  check(cuda.step, plan.step.size(), "cuda.step", "the plan's step");
  check(cuda.update, plan.update.size(), "cuda.update", "the plan's update");
  validateCudaLengths(plan, check);
}

} // namespace

void embc::runtime::detail::validatePlan(const Plan &plan) {
  if (plan.version != kPlanVersion)
    failAt("version", "plan format version " + std::to_string(plan.version) +
                          ", this embrun reads version " + std::to_string(kPlanVersion) +
                          ": recompile the model with a matching embc");
  validateConfig(plan.config);
  if (plan.arenaBytes <= 0)
    failAt("arena_bytes", "must be positive, got " + std::to_string(plan.arenaBytes));
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    validateBuffer(plan.buffers[i], plan.arenaBytes, childPath("buffers", i));
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    validateView(plan, i, childPath("buffers", i));
  validateMemoryLayout(plan);

  BufferRefs refs(plan);
  std::set<std::string> names;
  // stage_ranks itself is checked by validateSchedule, below.
  int64_t jobRanks = plan.config.jobRanks();
  for (size_t i = 0; i < plan.params.size(); ++i)
    validateParam(plan.params[i], refs, names, childPath("params", i));
  for (size_t i = 0; i < plan.tables.size(); ++i) {
    validateTable(plan.tables[i], refs, names, childPath("tables", i));
    const std::vector<int64_t> &shards = plan.tables[i].shardRows;
    if (!shards.empty() && int64_t(shards.size()) != jobRanks + 1)
      failAt(childPath(childPath("tables", i), "shard_rows"),
             std::to_string(shards.size() - 1) + " shards, but the plan runs on " +
                 std::to_string(jobRanks) + " ranks");
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].rank < -1 || plan.buffers[i].rank >= jobRanks)
      failAt(childPath(childPath("buffers", i), "rank"),
             "must be -1 or a rank below " + std::to_string(jobRanks) + ", got " +
                 std::to_string(plan.buffers[i].rank));
  std::vector<int> packOf(plan.params.size(), -1), batchOf(plan.tables.size(), -1);
  for (size_t i = 0; i < plan.packs.size(); ++i)
    validatePack(plan, plan.packs[i], refs, packOf, i, childPath("packs", i));
  for (size_t i = 0; i < plan.tableBatches.size(); ++i)
    validateTableBatch(plan, plan.tableBatches[i], refs, batchOf, i,
                       childPath("table_batches", i));
  // A disk table outside a batch has buffers of its own, which the layout
  // check above found on pages (a view would lie in another's memory).
  for (size_t i = 0; i < plan.tables.size(); ++i) {
    const Table &table = plan.tables[i];
    if (table.placement != Placement::Disk || batchOf[i] >= 0)
      continue;
    std::vector<int32_t> own = table.state;
    own.push_back(table.buffer);
    if (table.qparams >= 0)
      own.push_back(table.qparams);
    for (int32_t b : own)
      if (plan.buffers[size_t(b)].parent >= 0)
        failAt(childPath(childPath("tables", i), "placement"),
               "disk table '" + table.name + "' is in no batch, but its buffer '" +
                   plan.buffers[size_t(b)].name + "' is a view into '" +
                   plan.buffers[size_t(plan.buffers[size_t(b)].parent)].name + "'");
  }
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    validateInput(plan.inputs[i], refs, childPath("inputs", i));
  // A plan that reads no data or updates nothing would "train" without
  // learning: such a plan was edited, not written by embc.
  if (plan.inputs.empty())
    failAt("inputs", "a plan reads at least one input (its label)");
  if (plan.step.empty())
    failAt("step", "a plan runs at least one kernel per step");
  // The kernels that write parameters or table rows: the update phase's,
  // and the fused ones of the step (-emb-fuse: embedding_update, and the
  // skip-gram kernel's per-example updates).
  auto updates = [](const Kernel &k) {
    const KernelSpec *spec = findKernel(k.op);
    if (!spec)
      return false;
    switch (spec->op) {
    case KernelOp::UpdateParam:
    case KernelOp::UpdatePacked:
    case KernelOp::UpdateTable:
    case KernelOp::EmbeddingUpdate:
    case KernelOp::SkipgramStep:
      return true;
    default:
      return false;
    }
  };
  const bool learns = std::any_of(plan.step.begin(), plan.step.end(), updates) ||
                      std::any_of(plan.update.begin(), plan.update.end(), updates);
  if (!learns && (!plan.params.empty() || !plan.tables.empty()))
    failAt("update", "the plan has " + std::to_string(plan.params.size()) + " parameters and " +
                         std::to_string(plan.tables.size()) +
                         " tables but no kernel that updates them: nothing would learn");
  validateKernels(plan, plan.step, refs, /*update=*/false);
  validateKernels(plan, plan.update, refs, /*update=*/true);
  if (plan.forwardKernels < 0 || static_cast<uint64_t>(plan.forwardKernels) > plan.step.size())
    failAt("forward_kernels", std::to_string(plan.forwardKernels) +
                                  " is not between 0 and the " +
                                  std::to_string(plan.step.size()) + " kernels of the step");
  refs.get(plan.lossBuffer, "loss_buffer");
  refs.get(plan.predictionBuffer, "prediction_buffer");
  validateSchedule(plan);
  validateCuda(plan, refs);
}

void embc::runtime::detail::checkMemoryReport(const json &reported, const Plan &plan) {
  if (!reported.is_object())
    failAt("memory", "expected an object, got " + std::string(reported.type_name()));
  // The report is derived from the buffers, so rebuilding it and comparing
  // catches a hand-edited or stale report. Totals are summed with overflow
  // checks: each buffer fits the arena, but many of them need not fit int64.
  for (BufferRole role : allRoles()) {
    int64_t total = 0;
    for (const Buffer &buffer : plan.buffers)
      if (buffer.role == role && buffer.parent < 0 &&
          __builtin_add_overflow(total, buffer.bytes, &total))
        failAt("memory.by_role", std::string("the ") + roleName(role) +
                                     " buffers total more than 2^63 bytes");
  }
  json expected = memoryReportJson(plan);
  for (auto it = reported.begin(); it != reported.end(); ++it)
    if (!expected.contains(it.key()))
      failAt(childPath("memory", it.key()), "unknown field");
  if (!reported.contains("arena_bytes"))
    failAt("memory.arena_bytes", "missing field");
  if (reported.at("arena_bytes") != expected.at("arena_bytes"))
    failAt("memory.arena_bytes", reported.at("arena_bytes").dump() + " but arena_bytes is " +
                                     std::to_string(plan.arenaBytes));
  // The planner's figures (format v3; older bodies lack them): the peak is
  // the arena, the lower bound follows from the buffers' lifetimes.
  if (reported.contains("peak_bytes") && reported.at("peak_bytes") != expected.at("peak_bytes"))
    failAt("memory.peak_bytes", reported.at("peak_bytes").dump() + " but arena_bytes is " +
                                    std::to_string(plan.arenaBytes));
  if (reported.contains("lower_bound_bytes") &&
      reported.at("lower_bound_bytes") != expected.at("lower_bound_bytes"))
    failAt("memory.lower_bound_bytes",
           reported.at("lower_bound_bytes").dump() + " but the buffers' lifetimes give " +
               expected.at("lower_bound_bytes").dump() + " bytes live at most");
  if (!reported.contains("by_role"))
    failAt("memory.by_role", "missing field");
  const json &reportedRoles = reported.at("by_role");
  if (!reportedRoles.is_object())
    failAt("memory.by_role", "expected an object, got " + std::string(reportedRoles.type_name()));
  for (auto it = reportedRoles.begin(); it != reportedRoles.end(); ++it)
    if (!parseRole(it.key()))
      failAt(childPath("memory.by_role", it.key()), "unknown role");
  for (BufferRole role : allRoles()) {
    std::string path = childPath("memory.by_role", roleName(role));
    if (!reportedRoles.contains(roleName(role)))
      failAt(path, "missing field");
    const json &value = reportedRoles.at(roleName(role));
    if (value != expected.at("by_role").at(roleName(role)))
      failAt(path, value.dump() + " but the " + roleName(role) + " buffers total " +
                       std::to_string(plan.bytesWithRole(role)) + " bytes");
  }
}
