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
//===----------------------------------------------------------------------===//

#include "embc/runtime/cuda/CudaBackend.h"

#include "embc/runtime/cpu/LossScaling.h"
#include "embc/runtime/data/Data.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace embc::runtime;
using namespace embc::runtime::cuda;

namespace {

/// A launch with its arguments in resolvable form.
struct PreparedLaunch {
  enum Kind { Kernel, Gemm, Library, Memset, Nothing } kind = Nothing;
  int32_t handle = -1;
  int64_t grid[3] = {1, 1, 1};
  int64_t block = 1, shared = 0, bytes = 0;
  std::vector<CudaArg> args;
};

class CudaBackend : public Backend {
public:
  CudaBackend(std::unique_ptr<Device> device, CudaBackendOptions options)
      : device_(std::move(device)), options_(options) {}

  const char *name() const override { return "cuda"; }
  std::string description() const override { return device_->description(); }
  bool deviceArena() const override { return true; }

  std::byte *allocateArena(size_t bytes) override {
    host_.assign(bytes + 64, std::byte{0});
    auto at = reinterpret_cast<uintptr_t>(host_.data());
    return host_.data() + ((64 - at % 64) % 64);
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
    if (index >= list.size())
      throw PlanError(where + " has no CUDA launches in the plan");
    std::vector<PreparedLaunch> launches;
    for (const CudaLaunch &l : list[index].launches)
      launches.push_back(prepare(l, where));
    const char *op = kernel.op.c_str();
    return [this, launches = std::move(launches), op](ExecState &state) {
      for (const PreparedLaunch &l : launches)
        issue(l, state, op);
    };
  }

  void toDevice(const ExecState &state, int64_t offset, int64_t bytes) override {
    if (bytes > 0)
      device_->toDevice(arena_ + offset, state.arena + offset, size_t(bytes));
  }
  void toHost(ExecState &state, int64_t offset, int64_t bytes) override {
    if (bytes > 0)
      device_->toHost(state.arena + offset, arena_ + offset, size_t(bytes));
  }
  void setLength(const ExecState &state, int32_t buffer) override {
    const Buffer &b = plan_->buffers[size_t(buffer)];
    if (!b.dynamic)
      return;
    int64_t value = state.length[size_t(buffer)];
    device_->toDevice(lengthCell(buffer, state.microBatch), &value, sizeof value);
  }
  void zero(ExecState &state, int32_t buffer) override {
    Backend::zero(state, buffer); // the host mirror agrees
    const Buffer &b = plan_->buffers[size_t(buffer)];
    device_->zero(arena_ + b.offset, size_t(b.bytes * b.slots));
  }

  void run(std::vector<BoundKernel> &kernels, const std::vector<size_t> *which, ExecState &state,
           int key, std::vector<KernelTiming> *timings) override {
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
    if (!options_.graphs || key < 0) {
      for (size_t j = 0; j < n; ++j)
        kernels[kernelAt(j)](state);
      return;
    }
    // One graph per sequence and micro-batch (slots move buffers).
    auto found = graphs_.find({key, state.microBatch});
    if (found == graphs_.end()) {
      device_->beginCapture();
      try {
        for (size_t j = 0; j < n; ++j)
          kernels[kernelAt(j)](state);
      } catch (...) {
        device_->endCapture();
        throw;
      }
      found = graphs_.emplace(std::make_pair(key, state.microBatch), device_->endCapture()).first;
    }
    device_->replay(found->second);
  }

  void finish(ExecState &state) override {
    device_->synchronize();
    EmbStep step{};
    device_->toHost(&step, reinterpret_cast<std::byte *>(step_), sizeof step);
    if (step.error != 0) {
      // Clear it on the device, so the next step starts clean.
      uploadStep(state);
      size_t code = size_t(step.error);
      std::string what = code <= plan_->cuda.errors.size() ? plan_->cuda.errors[code - 1]
                                                           : "device error " + std::to_string(code);
      throw data::DataError(what + " (value " + std::to_string(step.errorValue) + ")");
    }
    if (state.inUpdate && plan_->config.lossScaling.enabled) {
      const LossScaling &ls = plan_->config.lossScaling;
      bool applied = cpu::advanceLossScale(state.lossScale, step.skip == 0, ls.growth, ls.backoff,
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
    device_->loadProgram(plan.cuda.source);
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
    int64_t total = stepAt + align(sizeof(EmbStep));
    arena_ = device_->allocate(size_t(total));
    scratch_ = arena_ + scratchAt;
    lengths_ = reinterpret_cast<int64_t *>(arena_ + lengthsAt);
    step_ = reinterpret_cast<EmbStep *>(arena_ + stepAt);
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

  std::byte *lengthCell(int32_t buffer, int32_t microBatch) const {
    const Buffer &b = plan_->buffers[size_t(buffer)];
    return reinterpret_cast<std::byte *>(lengths_ + lengthBase_[size_t(buffer)] +
                                         microBatch % b.slots);
  }

  void *resolve(const CudaArg &a, const ExecState &state) const {
    if (a.buffer >= 0) {
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
    step.lrScale = float(state.lrScale);
    step.lossScale = plan_->config.lossScaling.enabled ? float(state.lossScale.scale) : 1.0f;
    device_->toDevice(reinterpret_cast<std::byte *>(step_), &step, sizeof step);
  }

  std::unique_ptr<Device> device_;
  CudaBackendOptions options_;
  const Plan *plan_ = nullptr;
  std::vector<std::byte> host_;
  std::byte *arena_ = nullptr, *scratch_ = nullptr;
  int64_t *lengths_ = nullptr;
  EmbStep *step_ = nullptr;
  std::vector<int64_t> lengthBase_;
  std::map<std::string, KernelHandle> kernels_;
  std::map<std::pair<int, int32_t>, int32_t> graphs_;
};

} // namespace

std::unique_ptr<Backend> embc::runtime::createCudaBackend(std::unique_ptr<Device> device,
                                                          CudaBackendOptions options) {
  return std::make_unique<CudaBackend>(std::move(device), options);
}
