//===- CudaBackend.cpp - a plan's CUDA program on a Device ---------------===//
//
// Binds each plan kernel to its launches in Plan::cuda and runs them on a
// Device (a GPU, or the CPU emulation). One device allocation holds, in
// order: the arena (the plan's layout), the scratch the launches share, the
// length cells of the dynamic buffers (one i64 per slot) and the EmbStep.
// Launch arguments are resolved when the kernel runs, because a buffer with
// slots lives at a different copy for each micro-batch; everything that
// changes per step is in the EmbStep, uploaded before each sequence, so a
// sequence captured once as a CUDA graph replays exactly.
//
// Input prefetch: the input buffers have two copies after the EmbStep (the
// arena's own bytes for them are left to the buffers the memory plan
// overlaps with them). Batches alternate between the copies (beginBatch),
// and a batch's inputs travel on the device's upload stream from
// page-locked staging, so they are copied while the previous batch's step
// and update still run (useLoadedBatch switches the kernels over when the
// next forward starts). Events keep order:
// compute waits for its batch's uploads; an upload into a copy waits for
// the compute that last read it; the host reuses a staging area only after
// its uploads are done. Graphs are captured per copy.
//
// A distributed plan's `collective` launches run through CudaCollectives
// (NCCL on a GPU, the job's MPI communicator on the emulation); such a plan
// is never captured as a graph.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/backends/CudaBackend.h"

#include "CudaCollectives.h"

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/exec/LossScale.h"
#include "embc/runtime/data/Data.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

using namespace embc::runtime;
using namespace embc::runtime::cuda;

namespace {

/// A launch with its arguments in resolvable form.
struct PreparedLaunch {
  enum Kind { Kernel, Gemm, Library, Memset, Collective, Nothing } kind = Nothing;
  int32_t handle = -1;
  int64_t grid[3] = {1, 1, 1};
  int64_t block = 1, shared = 0, bytes = 0;
  std::vector<CudaArg> args;
};

class CudaBackend : public Backend {
public:
  CudaBackend(std::unique_ptr<Device> device, CudaBackendOptions options,
              std::unique_ptr<comm::Communicator> collectives)
      : device_(std::move(device)), options_(options),
        collectives_(*device_, std::move(collectives)) {}

  const char *name() const override { return "cuda"; }
  int64_t deviceBytes() const override { return deviceBytes_; }
  std::string description() const override { return device_->description(); }
  bool deviceArena() const override { return true; }
  /// The host mirror is filled on the process's team of threads (the one
  /// the data streams share; cpu/Parallel.h): a GPU's tables can be large.
  void hostFor(int64_t n, bool parallel,
               const std::function<void(int64_t, int64_t)> &body) override {
    cpu::parallelFor(n, parallel, [&body](int64_t begin, int64_t end) { body(begin, end); });
  }

  std::byte *allocateArena(size_t bytes) override {
    host_.assign(bytes + 64, std::byte{0});
    auto at = reinterpret_cast<uintptr_t>(host_.data());
    return host_.data() + ((64 - at % 64) % 64);
  }

  /// The lengths its program has variants for (CudaLengthVariant).
  std::vector<int64_t> sequenceLengths(const Plan &plan, int64_t maxLen,
                                       std::string &why) const override {
    std::vector<int64_t> lengths;
    for (const CudaLengthVariant &v : plan.cuda.lengths)
      if (v.length < maxLen)
        lengths.push_back(v.length);
    if (lengths.empty())
      why = "the plan's CUDA program has kernels for max_len only (no length variants: "
            "a plan with several sequence features, or compiled by an embc without them)";
    return lengths;
  }

  BoundKernel bind(const Kernel &kernel, const Plan &) override {
    throw PlanError("kernel '" + kernel.op + "': the CUDA backend binds by schedule position");
  }

  BoundKernel bind(const Kernel &kernel, const Plan &plan, const char *schedule,
                   size_t index) override {
    setUp(plan);
    const std::vector<CudaKernel> &list =
        std::strcmp(schedule, "update") == 0 ? plan.cuda.update : plan.cuda.step;
    std::string where = std::string(schedule) + " kernel " + std::to_string(index) + " '" +
                        kernel.op + "'";
    if (index >= list.size() || list[index].launches.empty())
      throw PlanError(where + " has no CUDA launches in the plan" +
                      (index < list.size() ? " at these sequence lengths" : ""));
    std::vector<PreparedLaunch> launches;
    for (const CudaLaunch &l : list[index].launches)
      launches.push_back(prepare(l, where));
    const char *op = kernel.op.c_str();
    return [this, launches = std::move(launches), op](ExecState &state) {
      for (const PreparedLaunch &l : launches)
        issue(l, state, op);
    };
  }

  // A whole-arena copy to the device (initialisation, resume, a test's
  // state) also fills the input copy in use from the host's input buffers.
  // Back to the host, the arena alone: its bytes at an input's offset belong
  // to whatever buffer the memory plan overlaps with it, and nothing reads
  // a batch back. A copy of part of the arena is one buffer's slot that is
  // not an input (the loss, a pipeline boundary).
  void toDevice(const ExecState &state, int64_t offset, int64_t bytes) override {
    if (bytes <= 0)
      return;
    device_->toDevice(arena_ + offset, state.arena + offset, size_t(bytes));
    if (offset == 0 && bytes >= plan_->arenaBytes)
      forInputsInUse(state, [&](int64_t at, int64_t n, std::byte *shadow) {
        device_->toDevice(shadow, state.arena + at, size_t(n));
      });
  }
  void toHost(ExecState &state, int64_t offset, int64_t bytes) override {
    if (bytes <= 0)
      return;
    device_->toHost(state.arena + offset, arena_ + offset, size_t(bytes));
  }
  void setLength(const ExecState &state, int32_t buffer) override {
    const Buffer &b = plan_->buffers[size_t(buffer)];
    if (!b.dynamic)
      return;
    int64_t value = state.length[size_t(buffer)];
    device_->toDevice(lengthCell(buffer, state.microBatch), &value, sizeof value);
  }

  void beginBatch(ExecState &) override {
    if (!plan_)
      return; // nothing bound yet
    loading_ = copy_ ^ 1;
    InputCopy &c = copies_[loading_];
    flushUploads(c); // a batch loaded into it before and never run
    device_->hostWaits(c.uploaded); // its staging is free
    device_->uploadsWait(c.read);   // the kernels that last read it are done
    ranSinceBatch_ = false;
    batchLoaded_ = true;
  }

  void useLoadedBatch() override {
    if (batchLoaded_)
      copy_ = loading_;
    batchLoaded_ = false;
  }

  void loadInputs(const ExecState &state, const std::vector<InputValues> &inputs) override {
    std::vector<InputValues> unprefetched; // nothing prefetched: through the arena
    std::vector<InputValues> prefetched;
    for (const InputValues &in : inputs)
      (isInput(in.buffer) ? prefetched : unprefetched).push_back(in);
    if (!unprefetched.empty())
      Backend::loadInputs(state, unprefetched);
    if (prefetched.empty())
      return;
    InputCopy &c = copies_[loading_];
    if (ranSinceBatch_ && loading_ == copy_) {
      // A later micro-batch of a pipelined schedule: its slot may be the
      // one kernels just queued read, and its staging may still be in flight.
      device_->recordCompute(c.read);
      device_->uploadsWait(c.read);
      device_->recordUploads(c.uploaded);
      device_->hostWaits(c.uploaded);
      ranSinceBatch_ = false;
    }
    // The only host copy of the batch: every input into page-locked
    // staging in one region of the team, then the uploads.
    std::vector<cpu::CopyRange> copies;
    copies.reserve(prefetched.size());
    for (const InputValues &in : prefetched)
      copies.push_back(
          {stagingOf(c.staging, in.buffer, state.microBatch), in.values, size_t(in.bytes)});
    cpu::parallelCopies(copies.data(), copies.size());
    for (size_t i = 0; i < prefetched.size(); ++i) {
      const InputValues &in = prefetched[i];
      device_->uploadAsync(inputAddress(in.buffer, state.microBatch, loading_),
                           static_cast<const std::byte *>(copies[i].dst),
                           copies[i].bytes);
      const Buffer &b = plan_->buffers[size_t(in.buffer)];
      if (b.dynamic) {
        int64_t cell = lengthBase_[size_t(in.buffer)] + state.microBatch % b.slots;
        std::byte *value = c.staging + stagingLengths_ + cell * int64_t(sizeof(int64_t));
        std::memcpy(value, &state.length[size_t(in.buffer)], sizeof(int64_t));
        device_->uploadAsync(lengthCell(in.buffer, state.microBatch, loading_), value,
                             sizeof(int64_t));
      }
    }
    c.unrecorded = c.unwaited = true;
  }
  /// Where input buffer `buffer`'s selected slot waits in a copy's staging.
  std::byte *stagingOf(std::byte *staging, int32_t buffer, int32_t microBatch) const {
    const Buffer &b = plan_->buffers[size_t(buffer)];
    int64_t slot = b.slots > 1 ? int64_t(microBatch % b.slots) : 0;
    return staging + inputAt_[size_t(buffer)] + slot * b.bytes;
  }
  // The device's bytes only: the host arena is a copy that syncToHost
  // refreshes, and every step zeroes its gradients (19 MB of host memset a
  // step for the MLPerf DLRM, with the device idle).
  void zero(ExecState &, int32_t buffer) override {
    const Buffer &b = plan_->buffers[size_t(buffer)];
    device_->zero(arena_ + b.offset, size_t(b.bytes * b.slots));
  }

  void run(std::vector<BoundKernel> &kernels, const std::vector<size_t> *which, ExecState &state,
           int key, std::vector<KernelTiming> *timings) override {
    InputCopy &c = copies_[copy_];
    flushUploads(c);
    Timer timer = startTimer(key);
    if (c.unwaited) {
      device_->computeWaits(c.uploaded);
      c.unwaited = false;
    }
    device_->recordCompute(timer.start);
    ranSinceBatch_ = true;
    runQueued(kernels, which, state, key, timings);
    device_->recordCompute(timer.end);
    device_->recordCompute(c.read);
    runningTimers_.push_back(timer);
  }

  std::optional<DeviceTimes> deviceTimes(int key) const override {
    auto it = deviceTimes_.find(key);
    return it == deviceTimes_.end() ? DeviceTimes{} : it->second;
  }

  void runQueued(std::vector<BoundKernel> &kernels, const std::vector<size_t> *which,
                 ExecState &state, int key, std::vector<KernelTiming> *timings) {
    uploadStep(state);
    size_t n = which ? which->size() : kernels.size();
    auto kernelAt = [&](size_t j) -> size_t { return which ? (*which)[j] : j; };
    if (timings) {
      using Clock = std::chrono::steady_clock;
      for (size_t j = 0; j < n; ++j) {
        auto start = Clock::now();
        kernels[kernelAt(j)](state);
        device_->synchronize();
        (*timings)[kernelAt(j)].launches += 1;
        (*timings)[kernelAt(j)].seconds +=
            std::chrono::duration<double>(Clock::now() - start).count();
      }
      return;
    }
    if (!options_.graphs || key < 0 || hostSynchronises_) {
      for (size_t j = 0; j < n; ++j)
        kernels[kernelAt(j)](state);
      return;
    }
    // One graph per sequence, micro-batch and input copy (both move buffers).
    GraphKey graphKey{key, state.microBatch, copy_, state.lengthVariant};
    auto found = graphs_.find(graphKey);
    if (found == graphs_.end()) {
      device_->beginCapture();
      try {
        for (size_t j = 0; j < n; ++j)
          kernels[kernelAt(j)](state);
      } catch (...) {
        device_->endCapture();
        throw;
      }
      found = graphs_.emplace(graphKey, device_->endCapture()).first;
    }
    device_->replay(found->second);
  }

  void finish(ExecState &state) override {
    device_->synchronize();
    settleTimers(0);
    EmbStep step{};
    device_->toHost(&step, reinterpret_cast<std::byte *>(step_), sizeof step);
    if (step.error != 0) {
      // Clear it on the device, so the next step starts clean.
      uploadStep(state);
      size_t code = size_t(step.error);
      std::string what = code <= plan_->cuda.errors.size() ? plan_->cuda.errors[code - 1]
                                                           : "device error " + std::to_string(code);
      const std::vector<int64_t> &nonFinite = plan_->cuda.nonFiniteErrors;
      if (std::find(nonFinite.begin(), nonFinite.end(), int64_t(code)) != nonFinite.end()) {
        const size_t at = what.find("{}");
        if (at != std::string::npos)
          what.replace(at, 2, std::to_string(step.errorValue));
        throw NonFiniteError("step " + std::to_string(state.step) + ": " + what +
                             ". Training diverged: lower the learning rate or clip gradients "
                             "(training.grad_clip_norm)");
      }
      throw data::DataError(what + " (value " + std::to_string(step.errorValue) + ")");
    }
    if (state.inUpdate && plan_->config.lossScaling.enabled) {
      const LossScaling &ls = plan_->config.lossScaling;
      bool applied = advanceLossScale(state.lossScale, step.skip == 0, ls.growth, ls.backoff,
                                           ls.interval);
      state.skipUpdate = !applied;
    }
  }

  void synchronize() override { device_->synchronize(); }

  int64_t readLength(const ExecState &state, int32_t buffer) override {
    const Buffer &b = plan_->buffers[size_t(buffer)];
    if (!b.dynamic)
      return b.shape.empty() ? 1 : b.shape[0];
    int64_t value = 0;
    device_->toHost(&value, lengthCell(buffer, state.microBatch), sizeof value);
    return value;
  }

private:
  /// Loads the program and allocates the device memory, once.
  void setUp(const Plan &plan) {
    if (plan_)
      return;
    plan_ = &plan;
    if (plan.cuda.source.empty())
      throw PlanError("the plan has no CUDA program: compile it with embc --cuda, "
                      "or run it with --device cpu");
    // The program must have been generated against this runtime's EmbStep
    // and EmbArgs: a mismatch would read every per-step value wrongly.
    if (plan.cuda.source.find(kKernelAbiSource) == std::string::npos)
      throw PlanError("the plan's CUDA program was generated for another kernel ABI "
                      "(another embc version): recompile it with this embc");
    device_->loadProgram(plan.cuda.source);
    // A collective reads counts back to the host mid-sequence (and the
    // emulation runs it at capture time, not at replay): no graphs then.
    for (const auto *list : {&plan.cuda.step, &plan.cuda.update})
      for (const CudaKernel &k : *list)
        for (const CudaLaunch &l : k.launches)
          hostSynchronises_ |= l.kind == "collective";
    auto align = [](int64_t v) { return (v + 255) / 256 * 256; };
    int64_t cells = 0;
    lengthBase_.assign(plan.buffers.size(), -1);
    for (size_t b = 0; b < plan.buffers.size(); ++b)
      if (plan.buffers[b].dynamic) {
        lengthBase_[b] = cells;
        cells += plan.buffers[b].slots;
      }
    int64_t scratchAt = align(plan.arenaBytes);
    int64_t lengthsAt = scratchAt + align(plan.cuda.scratchBytes);
    int64_t stepAt = lengthsAt + align(cells * int64_t(sizeof(int64_t)));
    // Two copies of the input buffers outside the arena, then the second
    // copy of all length cells (only the inputs' are used; one index for
    // both keeps lengthCell simple). Not the arena's own input buffers: the
    // memory plan lets later buffers of a step reuse their bytes, and the
    // next batch is uploaded while this one's step runs.
    int64_t inputBytes = 0;
    inputAt_.assign(plan.buffers.size(), -1);
    for (const Input &in : plan.inputs)
      if (!isInput(in.buffer)) {
        const Buffer &b = plan.buffers[size_t(in.buffer)];
        inputAt_[size_t(in.buffer)] = inputBytes;
        inputBytes += align(b.bytes * b.slots);
      }
    stagingLengths_ = inputBytes;
    int64_t shadowAt = stepAt + align(sizeof(EmbStep));
    int64_t shadowLengthsAt = shadowAt + 2 * inputBytes;
    int64_t total = shadowLengthsAt + align(cells * int64_t(sizeof(int64_t)));
    arena_ = device_->allocate(size_t(total));
    deviceBytes_ = total;
    scratch_ = arena_ + scratchAt;
    lengths_[0] = reinterpret_cast<int64_t *>(arena_ + lengthsAt);
    lengths_[1] = reinterpret_cast<int64_t *>(arena_ + shadowLengthsAt);
    step_ = reinterpret_cast<EmbStep *>(arena_ + stepAt);
    shadow_[0] = arena_ + shadowAt;
    shadow_[1] = shadow_[0] + inputBytes;
    size_t stagingBytes = size_t(inputBytes + cells * int64_t(sizeof(int64_t)));
    for (InputCopy &c : copies_) {
      c.staging = device_->allocateHost(stagingBytes);
      c.uploaded = device_->createEvent();
      c.read = device_->createEvent();
    }
  }

  /// Where input buffer `buffer`'s slot for `microBatch` lives in input copy
  /// `copy` (the one the kernels read when not given).
  std::byte *inputAddress(int32_t buffer, int32_t microBatch, int copy = -1) const {
    const Buffer &b = plan_->buffers[size_t(buffer)];
    int64_t slot = b.slots > 1 ? int64_t(microBatch % b.slots) * b.bytes : 0;
    return shadow_[copy < 0 ? copy_ : copy] + inputAt_[size_t(buffer)] + slot;
  }

  /// Calls f(offset, bytes, device address) for each input buffer of this
  /// rank (another rank's are never loaded here) in the copy in use.
  template <class F> void forInputsInUse(const ExecState &state, F &&f) const {
    for (size_t buffer = 0; buffer < inputAt_.size(); ++buffer) {
      int64_t at = inputAt_[buffer];
      const Buffer &b = plan_->buffers[buffer];
      if (at < 0 || (b.rank >= 0 && b.rank != state.rank()))
        continue;
      f(b.offset, b.bytes * b.slots, shadow_[copy_] + at);
    }
  }

  PreparedLaunch prepare(const CudaLaunch &l, const std::string &where) {
    PreparedLaunch p;
    p.args = l.args;
    std::copy(l.grid, l.grid + 3, p.grid);
    p.block = l.block;
    p.shared = l.shared;
    if (l.params.value("missing", false)) {
      if (!options_.allowMissing)
        throw PlanError(where + " has no CUDA lowering (the plan was compiled with "
                                "EMBC_CUDA_PARTIAL=1)");
      return p; // Nothing: emb-parity runs it on the CPU
    }
    try {
      if (l.kind == "kernel") {
        p.kind = PreparedLaunch::Kernel;
        auto it = kernels_.find(l.entry);
        if (it == kernels_.end())
          it = kernels_.emplace(l.entry, device_->kernel(l.entry)).first;
        p.handle = it->second;
      } else if (l.kind == "gemm") {
        p.kind = PreparedLaunch::Gemm;
        p.handle = device_->prepareGemm(gemmFromJson(l.params));
      } else if (l.kind == "library") {
        p.kind = PreparedLaunch::Library;
        p.handle = device_->prepareLibrary(l.entry, l.params);
      } else if (l.kind == "collective") {
        p.kind = PreparedLaunch::Collective;
        p.handle = collectives_.prepare(*plan_, l, where);
      } else if (l.kind == "memset") {
        p.kind = PreparedLaunch::Memset;
        p.bytes = l.params.value("bytes", int64_t(0));
        if (l.args.size() != 1 || p.bytes <= 0)
          throw PlanError("a memset takes one arg and a positive 'bytes'");
      } else {
        throw PlanError("unknown launch kind '" + l.kind + "'");
      }
    } catch (const DeviceError &e) {
      throw PlanError(where + ": " + e.what());
    }
    return p;
  }

  std::byte *lengthCell(int32_t buffer, int32_t microBatch, int inputCopy = -1) const {
    const Buffer &b = plan_->buffers[size_t(buffer)];
    int copy = isInput(buffer) ? (inputCopy < 0 ? copy_ : inputCopy) : 0;
    return reinterpret_cast<std::byte *>(lengths_[copy] + lengthBase_[size_t(buffer)] +
                                         microBatch % b.slots);
  }

  void *resolve(const CudaArg &a, const ExecState &state) const {
    if (a.buffer >= 0) {
      if (isInput(a.buffer))
        return inputAddress(a.buffer, state.microBatch);
      const Buffer &b = plan_->buffers[size_t(a.buffer)];
      return arena_ + b.offset + (b.slots > 1 ? int64_t(state.microBatch % b.slots) * b.bytes : 0);
    }
    if (a.length >= 0)
      return lengthCell(a.length, state.microBatch);
    return scratch_ + a.scratch;
  }

  void issue(const PreparedLaunch &l, ExecState &state, const char *op) {
    switch (l.kind) {
    case PreparedLaunch::Kernel: {
      EmbArgs args{};
      for (size_t i = 0; i < l.args.size(); ++i)
        args.p[i] = resolve(l.args[i], state);
      args.step = step_;
      device_->launch(l.handle, l.grid, l.block, l.shared, args, op);
      break;
    }
    case PreparedLaunch::Gemm:
    case PreparedLaunch::Library: {
      void *ptrs[EMB_MAX_ARGS] = {};
      for (size_t i = 0; i < l.args.size(); ++i)
        ptrs[i] = resolve(l.args[i], state);
      if (l.kind == PreparedLaunch::Gemm)
        device_->gemm(l.handle, ptrs, op);
      else
        device_->library(l.handle, ptrs, op);
      break;
    }
    case PreparedLaunch::Memset:
      device_->zero(static_cast<std::byte *>(resolve(l.args[0], state)), size_t(l.bytes));
      break;
    case PreparedLaunch::Collective: {
      void *ptrs[EMB_MAX_ARGS] = {};
      for (size_t i = 0; i < l.args.size(); ++i)
        ptrs[i] = resolve(l.args[i], state);
      collectives_.run(l.handle, ptrs, state, op);
      break;
    }
    case PreparedLaunch::Nothing:
      break;
    }
  }

  /// The per-step values, fresh for each sequence (errors and the skip flag
  /// cleared).
  void uploadStep(const ExecState &state) {
    EmbStep step{};
    step.optimizerStep = state.optimizerStep;
    step.seed = static_cast<long long>(state.seed);
    step.lrScale = state.lrScale;
    step.lossScale = plan_->config.lossScaling.enabled ? float(state.lossScale.scale) : 1.0f;
    step.step = state.step;
    step.exampleOffset = state.exampleOffset;
    step.microBatch = state.microBatch;
    step.training = state.training ? 1 : 0;
    device_->toDevice(reinterpret_cast<std::byte *>(step_), &step, sizeof step);
  }

  std::unique_ptr<Device> device_;
  CudaBackendOptions options_;
  CudaCollectives collectives_; ///< before device_ goes: NCCL runs on its stream
  bool hostSynchronises_ = false; ///< the program has collectives: no graphs
  int64_t deviceBytes_ = 0;       ///< the one device allocation (setUp)
  const Plan *plan_ = nullptr;
  std::vector<std::byte> host_;
  std::byte *arena_ = nullptr, *scratch_ = nullptr;
  std::byte *shadow_[2] = {nullptr, nullptr}; ///< the two copies of the input buffers
  int64_t *lengths_[2] = {nullptr, nullptr}; ///< per input copy (others use [0])
  EmbStep *step_ = nullptr;
  std::vector<int64_t> lengthBase_;
  std::map<std::string, KernelHandle> kernels_;
  /// Sequence, micro-batch, input copy, sequence lengths.
  using GraphKey = std::tuple<int, int32_t, int, int32_t>;
  std::map<GraphKey, int32_t> graphs_;

  /// One copy of the input buffers: its page-locked staging (laid out as
  /// the shadow: inputAt_, then the length cells) and its events.
  struct InputCopy {
    std::byte *staging = nullptr;
    int32_t uploaded = -1;   ///< the uploads queued into this copy are done
    int32_t read = -1;       ///< the kernels queued on this copy are done
    bool unrecorded = false; ///< uploads queued since `uploaded` was recorded
    bool unwaited = false;   ///< uploads the compute stream has not waited for
  };
  InputCopy copies_[2];

  /// Three timing events around one run() (before the wait for its uploads,
  /// before its first kernel, after its last) and the run's key.
  struct Timer {
    int key = 0;
    int32_t queued = -1, start = -1, end = -1;
  };
  std::vector<Timer> freeTimers_, runningTimers_;
  std::map<int, DeviceTimes> deviceTimes_;

  Timer startTimer(int key) {
    if (freeTimers_.empty() && runningTimers_.size() >= 8)
      settleTimers(runningTimers_.size() / 2); // a caller that never finishes
    Timer t;
    if (!freeTimers_.empty()) {
      t = freeTimers_.back();
      freeTimers_.pop_back();
    } else {
      t.queued = device_->createTimingEvent();
      t.start = device_->createTimingEvent();
      t.end = device_->createTimingEvent();
    }
    t.key = key;
    device_->recordCompute(t.queued);
    return t;
  }

  /// Adds the times of all but the last `keep` runs (waiting for them).
  void settleTimers(size_t keep) {
    size_t n = runningTimers_.size() > keep ? runningTimers_.size() - keep : 0;
    for (size_t i = 0; i < n; ++i) {
      const Timer &t = runningTimers_[i];
      DeviceTimes &d = deviceTimes_[t.key];
      d.runs += 1;
      d.inputWaitSeconds += device_->secondsBetween(t.queued, t.start);
      d.seconds += device_->secondsBetween(t.start, t.end);
      freeTimers_.push_back(t);
    }
    runningTimers_.erase(runningTimers_.begin(), runningTimers_.begin() + long(n));
  }

  /// Records the event after the uploads queued into `c` (once).
  void flushUploads(InputCopy &c) {
    if (!c.unrecorded)
      return;
    device_->recordUploads(c.uploaded);
    c.unrecorded = false;
  }
  int copy_ = 0;             ///< the copy the kernels read (the batch in use)
  int loading_ = 0;          ///< the copy loadInput fills
  bool batchLoaded_ = false; ///< beginBatch since the last useLoadedBatch
  std::vector<int64_t> inputAt_; ///< per buffer: offset in the shadow, -1 if no input
  bool isInput(int32_t buffer) const { return inputAt_[size_t(buffer)] >= 0; }
  int64_t stagingLengths_ = 0;       ///< where the length cells start in staging
  bool ranSinceBatch_ = false;
};

} // namespace

std::unique_ptr<Backend>
embc::runtime::createCudaBackend(std::unique_ptr<Device> device, CudaBackendOptions options,
                                 std::unique_ptr<comm::Communicator> collectives) {
  return std::make_unique<CudaBackend>(std::move(device), options, std::move(collectives));
}
