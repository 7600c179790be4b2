//===- Executor.cpp - arena, initialisation, batches and schedules -------===//

#include "embc/runtime/exec/Executor.h"
#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/data/CounterRandom.h"
#include "embc/runtime/plan/KernelCatalogue.h"
#include "embc/runtime/storage/RowStorage.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <type_traits>

using namespace embc::runtime;
namespace data = embc::runtime::data;

/// The data features the plan's inputs read (in first-use order), and for
/// each input the index of its feature: what a batch must hold.
static std::vector<data::FeatureSpec>
buildFeatureSpecs(const Plan &plan, std::vector<size_t> &inputFeature) {
  std::vector<data::FeatureSpec> specs;
  inputFeature.clear();
  for (const Input &in : plan.inputs) {
    size_t f = 0;
    while (f < specs.size() && specs[f].name != in.feature)
      ++f;
    if (f == specs.size()) {
      data::FeatureSpec spec;
      spec.name = in.feature;
      spec.source = in.source;
      specs.push_back(spec);
    }
    inputFeature.push_back(f);
    data::FeatureSpec &s = specs[f];
    switch (in.role) {
    case InputRole::Dense:
      s.kind = data::FeatureKind::Dense;
      s.width = in.width;
      break;
    case InputRole::Ids:
      s.kind = data::FeatureKind::Sparse;
      s.vocab = in.vocab;
      s.hotness = in.hotness;
      break;
    case InputRole::Weights:
      s.weighted = true;
      break;
    case InputRole::Negatives:
      s.kind = data::FeatureKind::Negatives;
      s.count = in.width;
      s.vocab = in.vocab;
      s.power = in.power;
      break;
    case InputRole::Label:
      s.kind = data::FeatureKind::Label;
      s.labelKind = in.labelKind.value_or(LabelKind::Binary);
      break;
    case InputRole::Offsets:
      break; // the ids' bags: set with them
    }
  }
  // A class label has as many classes as the softmax_ce loss reading it has
  // logits (its input's width), so data of another range is refused.
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    data::FeatureSpec &s = specs[inputFeature[i]];
    if (plan.inputs[i].role != InputRole::Label || s.labelKind != LabelKind::Class)
      continue;
    for (const Kernel &k : plan.step)
      if (k.op == kernelName(KernelOp::Loss) && k.inputs.size() == 2 &&
          k.inputs[1] == plan.inputs[i].buffer) {
        const Buffer &logits = plan.buffers[size_t(k.inputs[0])];
        if (logits.shape.size() == 2)
          s.classes = logits.shape[1];
      }
  }
  return specs;
}

/// Every length a batch may run at (one sequence at a time), checked now
/// as the plan reader checks the compiled one: no run stops at a batch
/// length first met late.
static std::string checkEveryLength(const Plan &plan, const SequenceLayout &layout,
                                    const std::vector<int64_t> &maxLengths,
                                    const std::vector<std::vector<int64_t>> &bound) {
  for (size_t s = 0; s < maxLengths.size(); ++s)
    for (int64_t length : bound[s]) {
      if (length == maxLengths[s])
        continue;
      std::vector<int64_t> lengths = maxLengths;
      lengths[s] = length;
      const Plan at = specialiseLengths(plan, layout, lengths);
      for (size_t i : layout.kernels) {
        const Kernel &k = at.step[i];
        if (std::optional<std::string> bad = checkKernelOperands(
                findKernel(k.op)->op, k, at, "step[" + std::to_string(i) + "]"))
          return "at sequence length " + std::to_string(length) + ", " + *bad;
      }
    }
  return "";
}

Executor::Executor(const Plan &plan, std::unique_ptr<Backend> backend)
    : plan_(plan), backend_(std::move(backend)) {
  for (const Kernel &k : plan_.step)
    if (k.op == kernelName(KernelOp::Loss) && k.inputs.size() == 2 &&
        k.attrs.value("kind", "") == enumName(LossKind::SequenceSoftmaxCe))
      lossTargets_ = k.inputs[1];
  for (size_t i = 0; i < plan_.step.size(); ++i)
    step_.push_back(backend_->bind(plan_.step[i], plan_, "step", i));
  for (size_t i = 0; i < plan_.update.size(); ++i)
    update_.push_back(backend_->bind(plan_.update[i], plan_, "update", i));
  if (plan_.forwardKernels < 0 || plan_.forwardKernels > int64_t(step_.size()))
    throw PlanError("forward_kernels out of range");
  // A packed gradient is zeroed once as a whole; batched tables share one
  // sparse gradient.
  for (const Param &p : plan_.params) {
    int32_t whole = plan_.buffers[p.grad].parent >= 0 ? plan_.buffers[p.grad].parent : p.grad;
    if (std::find(gradBuffers_.begin(), gradBuffers_.end(), whole) == gradBuffers_.end())
      gradBuffers_.push_back(whole);
  }
  for (const Table &t : plan_.tables)
    for (int32_t g : {t.gradRows, t.gradValues})
      if (std::find(sparseGradBuffers_.begin(), sparseGradBuffers_.end(), g) ==
          sparseGradBuffers_.end())
        sparseGradBuffers_.push_back(g);
  specs_ = buildFeatureSpecs(plan_, inputFeature_);
  sequences_ = findSequenceLayout(plan_);
  for (const SequenceLayout::Sequence &sq : sequences_.sequences)
    maxLengths_.push_back(sq.maxLen);
  loadedLengths_ = activeLengths_ = maxLengths_;
  variants_[maxLengths_]; // in use: its kernels are step_ (id 0)
  for (int64_t maxLen : maxLengths_) {
    std::string why;
    boundLengths_.push_back(backend_->sequenceLengths(plan_, maxLen, why));
    if (boundLengths_.back().empty() && backendPadsToMax_.empty())
      backendPadsToMax_ = why.empty() ? "the backend binds no shorter length" : why;
    boundLengths_.back().push_back(maxLen);
  }
  if (!sequences_.empty() && sequences_.unsupported.empty() && backendPadsToMax_.empty())
    lengthsRefused_ = checkEveryLength(plan_, sequences_, maxLengths_, boundLengths_);
  stepTimings_.resize(step_.size());
  updateTimings_.resize(update_.size());
  state_.plan = &plan_;
  state_.arena = backend_->allocateArena(size_t(plan_.arenaBytes));
  state_.length.resize(plan_.buffers.size());
  for (size_t i = 0; i < plan_.buffers.size(); ++i)
    state_.length[i] = plan_.buffers[i].dynamic ? 0 : plan_.buffers[i].shape[0];
  for (int64_t i = 0; i < plan_.forwardKernels; ++i)
    forwardList_.push_back(size_t(i));
  prepareSchedule();
  placeOnRank(); // rank 0 until setCommunicator
}

Executor::~Executor() = default;

Backend::~Backend() = default;

void Backend::zero(ExecState &state, int32_t buffer) {
  const Buffer &b = state.buffer(buffer);
  std::memset(state.arena + b.offset, 0, size_t(b.bytes * b.slots));
}

void Backend::loadInput(const ExecState &state, int32_t buffer, int64_t bytes) {
  toDevice(state, state.data<std::byte>(buffer) - state.arena, bytes);
  setLength(state, buffer);
}

void Backend::loadInputs(const ExecState &state, const std::vector<InputValues> &inputs) {
  std::vector<cpu::CopyRange> copies;
  copies.reserve(inputs.size());
  for (const InputValues &in : inputs)
    copies.push_back({state.data<std::byte>(in.buffer), in.values, size_t(in.bytes)});
  cpu::parallelCopies(copies.data(), copies.size());
  if (deviceArena())
    for (const InputValues &in : inputs)
      loadInput(state, in.buffer, in.bytes);
}

void Backend::run(std::vector<BoundKernel> &kernels, const std::vector<size_t> *which,
                  ExecState &state, int, std::vector<KernelTiming> *timings) {
  size_t n = which ? which->size() : kernels.size();
  if (!timings) {
    for (size_t j = 0; j < n && !state.skipUpdate; ++j)
      kernels[which ? (*which)[j] : j](state);
    return;
  }
  // CPU kernels are synchronous (their parallel regions end before they
  // return), so the interval is the kernel's whole cost.
  using Clock = std::chrono::steady_clock;
  for (size_t j = 0; j < n && !state.skipUpdate; ++j) {
    size_t i = which ? (*which)[j] : j;
    auto start = Clock::now();
    kernels[i](state);
    (*timings)[i].launches += 1;
    (*timings)[i].seconds += std::chrono::duration<double>(Clock::now() - start).count();
  }
}

namespace {

/// Fills `n` floats from `init`, element i a pure function of (seed, name,
/// first + i): the same on every machine and thread count, and a shard
/// starting at element `first` gets the whole tensor's values. Large
/// tensors are filled on the backend's host threads (Backend::hostFor).
void fillInitial(Backend &backend, float *out, int64_t n, const Initializer &init,
                 const std::vector<int64_t> &shape, uint64_t seed,
                 const std::string &name, int64_t first = 0) {
  uint64_t stream = data::hashName(name);
  double fanIn = shape.size() >= 2 ? double(shape[0]) : double(n);
  double fanOut = shape.size() >= 2 ? double(shape[1]) : double(n);
  double a = 0, b = 0;
  enum { Const, Uniform, Normal } mode = Const;
  switch (init.kind) {
  case InitKind::Zeros:
    a = 0;
    break;
  case InitKind::Constant:
    a = init.value;
    break;
  case InitKind::Uniform:
    mode = Uniform, a = init.low, b = init.high;
    break;
  case InitKind::Normal:
    mode = Normal, a = init.mean, b = init.std;
    break;
  case InitKind::XavierUniform: {
    double limit = init.gain * std::sqrt(6.0 / (fanIn + fanOut));
    mode = Uniform, a = -limit, b = limit;
    break;
  }
  case InitKind::XavierNormal:
    mode = Normal, a = 0, b = init.gain * std::sqrt(2.0 / (fanIn + fanOut));
    break;
  }
  backend.hostFor(n, n > 65536, [&](int64_t iBegin, int64_t iEnd) {
    for (int64_t i = iBegin; i < iEnd; ++i) {
      uint64_t h = data::hashOf(seed, stream, uint64_t(first + i));
      double v = mode == Const     ? a
                 : mode == Uniform ? a + (b - a) * data::uniform01(h)
                                   : a + b * data::standardNormal(h);
      out[i] = float(v);
    }
  });
}

int64_t numel(const Buffer &b) {
  int64_t n = 1;
  for (int64_t d : b.shape)
    n *= d;
  return n;
}

} // namespace

void Executor::initialize(uint64_t seed) {
  auto initStates = [&](const std::vector<int32_t> &states, const Optimizer &o) {
    float start = (o.kind == OptimizerKind::Adagrad || o.kind == OptimizerKind::RowwiseAdagrad)
                      ? float(o.initialAccumulator)
                      : 0.0f;
    for (int32_t s : states)
      std::fill_n(data<float>(s), numel(plan_.buffers[s]), start);
  };
  for (const Param &p : plan_.params) {
    const Buffer &b = plan_.buffers[p.buffer];
    fillInitial(*backend_, data<float>(p.buffer), numel(b), p.init, b.shape, seed, p.name);
    initStates(p.state, p.optimizer);
  }
  for (const Table &t : plan_.tables) {
    const Buffer &b = plan_.buffers[t.buffer];
    if (!t.shardRows.empty()) {
      // This rank's rows only (f32: -emb-distribute shards no other
      // storage); a rank without rows must not write: its bytes may hold
      // another table_wise table.
      int64_t rows = t.rowsOn(state_.rank()), first = t.firstRowOn(state_.rank());
      if (rows == 0)
        continue;
      fillInitial(*backend_, data<float>(t.buffer), rows * t.dim, t.init, {t.rows, t.dim}, seed,
                  t.name, first * t.dim);
      initStates(t.state, t.optimizer);
      continue;
    }
    if (t.storage == Storage::F32) {
      fillInitial(*backend_, data<float>(t.buffer), numel(b), t.init, b.shape, seed, t.name);
    } else {
      // The f32 values an f32 table would get, rounded to nearest into the
      // table's storage (-emb-quantize). Its rows x dim, not the buffer's
      // shape: int4 packs two values per byte.
      std::vector<float> values(size_t(t.rows * t.dim));
      fillInitial(*backend_, values.data(), t.rows * t.dim, t.init, {t.rows, t.dim}, seed,
                  t.name);
      storage::QuantizedTable q{t.storage, data<std::byte>(t.buffer),
                                t.qparams >= 0 ? data<uint16_t>(t.qparams) : nullptr,
                                t.rows, t.dim};
      // Rows are independent (int4 rows are whole bytes): a 4M-row table
      // takes seconds on one thread.
      backend_->hostFor(t.rows, t.rows * t.dim > 65536, [&](int64_t rBegin, int64_t rEnd) {
        for (int64_t r = rBegin; r < rEnd; ++r)
          storage::quantizeRow(q, r, values.data() + r * t.dim, /*nearest=*/true, 0);
      });
    }
    initStates(t.state, t.optimizer);
  }
  state_.seed = seed;
  state_.lossScale = LossScaleState();
  if (plan_.config.lossScaling.enabled)
    state_.lossScale.scale = plan_.config.lossScaling.initial;
  zeroGradients();
  syncToDevice();
}

void Executor::syncToDevice() {
  settleUpdate();
  if (backend_->deviceArena())
    backend_->toDevice(state_, 0, plan_.arenaBytes);
}

void Executor::syncToHost() {
  settleUpdate();
  if (backend_->deviceArena())
    backend_->toHost(state_, 0, plan_.arenaBytes);
}

void Executor::fetchOutputs() {
  if (!backend_->deviceArena())
    return;
  for (int32_t b : {plan_.lossBuffer, plan_.predictionBuffer, lossTargets_}) {
    if (b < 0 || (b != plan_.lossBuffer && !fetchPredictions_))
      continue;
    const Buffer &buf = plan_.buffers[b];
    int64_t slot = buf.slots > 1 ? int64_t(state_.microBatch % buf.slots) * buf.bytes : 0;
    backend_->toHost(state_, buf.offset + slot, buf.bytes);
  }
}

void Executor::copyStateFrom(const Executor &other) {
  settleUpdate();
  std::memcpy(state_.arena, other.state_.arena, size_t(plan_.arenaBytes));
  state_.length = other.state_.length;
  state_.optimizerStep = other.state_.optimizerStep;
  state_.step = other.state_.step;
  state_.lrScale = other.state_.lrScale;
  state_.lossScale = other.state_.lossScale;
  state_.seed = other.state_.seed;
  state_.microBatch = other.state_.microBatch;
  state_.exampleOffset = other.state_.exampleOffset;
  syncToDevice();
  if (backend_->deviceArena())
    for (size_t b = 0; b < plan_.buffers.size(); ++b)
      if (plan_.buffers[b].dynamic)
        backend_->setLength(state_, int32_t(b));
}

void Executor::runKernelForTest(bool update, size_t index, bool training) {
  settleUpdate();
  std::vector<size_t> one{index};
  if (!update) {
    backend_->useLoadedBatch();
    useLengths(loadedLengths_);
  }
  state_.inUpdate = update;
  state_.training = training;
  backend_->run(update ? update_ : step_, &one, state_, -1, nullptr);
  backend_->finish(state_);
  state_.inUpdate = false;
}

void Executor::loadBatch(const data::Batch &batch) {
  backend_->beginBatch(state_);
  loadInputs(batch, allInputs_);
  loadedLengths_ = longestSequences({&batch});
}

std::string Executor::dynamicPaddingUnsupported() const {
  if (sequences_.empty())
    return "";
  if (!sequences_.unsupported.empty())
    return sequences_.unsupported;
  if (!backendPadsToMax_.empty())
    return backendPadsToMax_;
  return lengthsRefused_;
}


void Executor::setDynamicPadding(bool on) {
  if (on && !dynamicPaddingUnsupported().empty())
    throw PlanError("cannot pad each batch to its longest sequence: " +
                    dynamicPaddingUnsupported());
  dynamicPadding_ = on && !sequences_.empty();
  if (!dynamicPadding_) {
    settleUpdate();
    useLengths(maxLengths_);
    loadedLengths_ = maxLengths_;
  }
}

std::vector<int64_t>
Executor::longestSequences(const std::vector<const data::Batch *> &batches) const {
  if (!dynamicPadding_)
    return maxLengths_;
  std::vector<int64_t> lengths = maxLengths_;
  for (size_t s = 0; s < sequences_.sequences.size(); ++s) {
    const SequenceLayout::Sequence &sq = sequences_.sequences[s];
    const size_t feature = inputFeature_[size_t(sq.input)];
    int64_t longest = 0;
    for (const data::Batch *batch : batches) {
      if (feature >= batch->features.size())
        return maxLengths_; // loadInputs refuses the batch
      const std::vector<int64_t> &offsets = batch->features[feature].offsets;
      for (size_t b = 0; b + 1 < offsets.size(); ++b)
        longest = std::max(longest, offsets[b + 1] - offsets[b]);
    }
    // The first bound length that holds it; longer than max_len: at
    // max_len, where the kernels report it.
    const std::vector<int64_t> &bound = boundLengths_[s];
    lengths[s] = *std::lower_bound(bound.begin(), bound.end() - 1, longest);
  }
  return lengths;
}

void Executor::useLengths(const std::vector<int64_t> &lengths) {
  if (lengths == activeLengths_)
    return;
  const std::vector<size_t> &which = sequences_.kernels;
  LengthVariant &next = variants_[lengths];
  if (!next.plan && lengths != maxLengths_) {
    next.id = int32_t(variants_.size() - 1);
    // First use: bind the sequence kernels to the plan at these lengths,
    // their operands checked as the plan reader checks the compiled ones.
    next.plan = std::make_unique<Plan>(specialiseLengths(plan_, sequences_, lengths));
    for (size_t i : which) {
      const Kernel &k = next.plan->step[i];
      const std::string at = "step[" + std::to_string(i) + "]";
      if (std::optional<std::string> bad = checkKernelOperands(findKernel(k.op)->op, k, *next.plan, at))
        throw PlanError("dynamic padding: at sequence length " + std::to_string(lengths[0]) +
                        ", " + *bad);
      next.kernels.push_back(backend_->bind(k, *next.plan, "step", i));
    }
  }
  LengthVariant &current = variants_[activeLengths_];
  current.kernels.resize(which.size());
  for (size_t j = 0; j < which.size(); ++j) {
    std::swap(current.kernels[j], step_[which[j]]);
    std::swap(step_[which[j]], next.kernels[j]);
  }
  next.kernels.clear();
  activeLengths_ = lengths;
  state_.lengthVariant = next.id;
}

std::vector<int64_t> Executor::activeShape(int32_t buffer) const {
  std::vector<int64_t> shape = plan_.buffers.at(size_t(buffer)).shape;
  const int32_t s = sequences_.of.empty() ? -1 : sequences_.of[size_t(buffer)];
  if (s >= 0)
    shape[1] = activeLengths_[size_t(s)];
  return shape;
}

void Executor::loadInputs(const data::Batch &batch, const std::vector<size_t> &which) {
  if (batch.features.size() != specs_.size())
    throw data::DataError("batch has " + std::to_string(batch.features.size()) +
                          " features, the plan reads " +
                          std::to_string(specs_.size()));
  std::vector<Backend::InputValues> loads;
  loads.reserve(which.size());
  for (size_t i : which) {
    const Input &in = plan_.inputs[i];
    const data::FeatureBatch &fb = batch.features[inputFeature_[i]];
    const Buffer &buf = plan_.buffers[in.buffer];
    auto copy = [&](const auto &values, auto *dst) {
      int64_t capacity = numel(buf);
      if (int64_t(values.size()) > capacity ||
          (!buf.dynamic && int64_t(values.size()) != capacity))
        throw data::DataError("feature '" + in.feature + "' (" + enumString(in.role) +
                              ") has " + std::to_string(values.size()) +
                              " values; its buffer holds " +
                              std::to_string(capacity));
      state_.length[in.buffer] =
          buf.dynamic ? int64_t(values.size()) : buf.shape[0];
      static_assert(std::is_same_v<std::decay_t<decltype(values[0])>,
                                   std::remove_pointer_t<decltype(dst)>>,
                    "the batch's values have the input buffer's type");
      loads.push_back({in.buffer, values.data(), int64_t(values.size() * sizeof(*dst))});
    };
    switch (in.role) {
    case InputRole::Dense:
      copy(fb.dense, data<float>(in.buffer));
      break;
    case InputRole::Ids:
      copy(fb.ids, data<int64_t>(in.buffer));
      break;
    case InputRole::Offsets:
      copy(fb.offsets, data<int64_t>(in.buffer));
      break;
    case InputRole::Weights:
      copy(fb.weights, data<float>(in.buffer));
      break;
    case InputRole::Negatives:
      copy(fb.negatives, data<int64_t>(in.buffer));
      break;
    case InputRole::Label:
      copy(fb.label, data<float>(in.buffer));
      break;
    }
  }
  backend_->loadInputs(state_, loads);
}

void Executor::zeroGradients() {
  settleUpdate();
  for (int32_t g : gradBuffers_)
    backend_->zero(state_, g);
  for (int32_t g : sparseGradBuffers_) {
    state_.length[g] = 0;
    backend_->setLength(state_, g);
  }
}

float Executor::forward() {
  settleUpdate();
  backend_->useLoadedBatch();
  useLengths(loadedLengths_);
  state_.training = false;
  if (plan_.config.pipelineRanks() > 1)
    return forwardOnRanks();
  backend_->run(step_, &forwardList_, state_, kForwardKey, nullptr);
  backend_->finish(state_);
  fetchOutputs();
  return *data<float>(plan_.lossBuffer);
}

void Executor::beginStep(int64_t step, double lrScale) {
  settleUpdate();
  state_.optimizerStep = step - state_.lossScale.skippedSteps;
  state_.step = step;
  state_.lrScale = lrScale;
}

float Executor::forwardBackward() {
  startForwardBackward();
  return finishForwardBackward();
}

void Executor::startForwardBackward() {
  settleUpdate();
  if (stepPending_)
    throw std::logic_error("startForwardBackward: the last one was not finished");
  backend_->useLoadedBatch();
  useLengths(loadedLengths_);
  state_.training = true;
  backend_->run(step_, nullptr, state_, kStepKey, profiling_ ? &stepTimings_ : nullptr);
  stepPending_ = true;
}

float Executor::finishForwardBackward() {
  if (!stepPending_)
    throw std::logic_error("finishForwardBackward: no forward and backward was started");
  stepPending_ = false;
  backend_->finish(state_);
  fetchOutputs();
  return *data<float>(plan_.lossBuffer);
}

bool Executor::update(int64_t step, double lrScale) {
  queueUpdate(step, lrScale);
  return settleUpdate();
}

void Executor::queueUpdate(int64_t step, double lrScale) {
  settleUpdate();
  state_.optimizerStep = step - state_.lossScale.skippedSteps;
  state_.step = step;
  state_.lrScale = lrScale;
  state_.skipUpdate = false;
  state_.inUpdate = true;
  updatePending_ = true;
  backend_->run(update_, nullptr, state_, kUpdateKey, profiling_ ? &updateTimings_ : nullptr);
}

bool Executor::settleUpdate() {
  if (!updatePending_)
    return true;
  updatePending_ = false;
  try {
    backend_->finish(state_);
  } catch (...) {
    state_.inUpdate = state_.skipUpdate = false;
    throw;
  }
  state_.inUpdate = false;
  // Cleared here, not only at the start: the step's kernels run under the
  // same flag check when profiling.
  bool applied = !state_.skipUpdate;
  state_.skipUpdate = false;
  return applied;
}

void Executor::resetTimings() {
  std::fill(stepTimings_.begin(), stepTimings_.end(), KernelTiming());
  std::fill(updateTimings_.begin(), updateTimings_.end(), KernelTiming());
}

const float *Executor::predictions() const {
  return state_.data<float>(plan_.predictionBuffer);
}

const float *Executor::lossTargets() const {
  return lossTargets_ >= 0 ? state_.data<float>(lossTargets_) : nullptr;
}

int64_t Executor::predictionWidth() const {
  const Buffer &b = plan_.buffers[plan_.predictionBuffer];
  return b.shape.size() > 1 ? b.shape[1] : 1;
}

double embc::runtime::learningRateScale(const TrainingConfig &config,
                                        int64_t step) {
  if (step < config.warmupSteps)
    return double(step + 1) / double(config.warmupSteps);
  if (config.lrSchedule == LrSchedule::Constant || config.decaySteps <= 0)
    return 1.0;
  double t = std::min(1.0, double(step - config.warmupSteps) /
                               double(config.decaySteps));
  if (config.lrSchedule == LrSchedule::Linear)
    return 1.0 - t;
  return 0.5 * (1.0 + std::cos(3.14159265358979323846 * t)); // cosine
}

void Executor::adviseDiskAccess(DiskAccess access) const { backend_->adviseDiskAccess(access); }

int64_t Executor::placeDiskTables(const std::string &directory) {
  // A table in a batch (-emb-pack-params) lives in the batch's buffers.
  std::vector<int32_t> buffers;
  auto add = [&](int32_t b) {
    if (b >= 0 && std::find(buffers.begin(), buffers.end(), b) == buffers.end())
      buffers.push_back(b);
  };
  auto addTable = [&](int32_t buffer, int32_t qparams, const std::vector<int32_t> &state) {
    add(buffer), add(qparams);
    for (int32_t s : state)
      add(s);
  };
  for (const TableBatch &batch : plan_.tableBatches)
    if (batch.placement == Placement::Disk)
      addTable(batch.buffer, batch.qparams, batch.state);
  for (const Table &table : plan_.tables)
    if (table.placement == Placement::Disk && plan_.buffers[size_t(table.buffer)].parent < 0)
      addTable(table.buffer, table.qparams, table.state);
  const int64_t kPage = kDiskPageBytes;
  int64_t placed = 0;
  for (int32_t b : buffers) {
    const Buffer &buffer = plan_.buffers[size_t(b)];
    if (buffer.parent >= 0)
      continue; // inside a buffer placed with its owner
    const int64_t bytes = (buffer.bytes * buffer.slots + kPage - 1) / kPage * kPage;
    if (buffer.offset % kPage != 0 || buffer.offset + bytes > plan_.arenaBytes)
      throw PlanError("buffer '" + buffer.name + "' of a disk table lies at arena offset " +
                      std::to_string(buffer.offset) + " (" + std::to_string(bytes) +
                      " bytes): not on page boundaries inside the arena; recompile the plan");
    backend_->backWithFile(buffer.offset, bytes, directory);
    placed += bytes;
  }
  return placed;
}
