//===- Executor.h - runs a plan's kernels on a backend ----------*- C++ -*-===//
//
// The executor owns the arena a plan lays out, initialises parameters and
// tables, copies batches into the input buffers, and runs the plan's three
// schedules (forward, step, update) on a Backend. Everything it knows about
// the model comes from the plan; nothing here depends on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_EXECUTOR_H
#define EMBC_RUNTIME_EXEC_EXECUTOR_H

#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/KernelCatalogue.h"
#include "embc/runtime/plan/SequenceLayout.h"
#include "embc/runtime/exec/LossScale.h"
#include "embc/runtime/comm/Communicator.h"
#include "embc/runtime/data/Data.h"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime {

/// A plan the runtime cannot execute (an unknown kernel, wrong operand
/// count or shapes), found before anything runs.
class PlanError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A value training wrote became NaN or infinite: every update checks the
/// parameters, tables and optimizer state it wrote (docs/training.md,
/// "Non-finite values"). The message names the step, the kernel, the tensor
/// and the element, and whether the gradient was already not finite.
class NonFiniteError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Wall time spent in one kernel of a schedule while profiling is on.
struct KernelTiming {
  int64_t launches = 0;
  double seconds = 0;
};

/// Mutable state of a plan's buffers: the arena and the filled length of
/// each dynamic buffer (ids, sparse-gradient rows).
struct ExecState {
  const Plan *plan = nullptr;
  std::byte *arena = nullptr;
  std::vector<int64_t> length; ///< leading-dimension fill per buffer
  int64_t optimizerStep = 0;   ///< 1-based step of the update being run
  /// The training step (1-based) being run, for messages: optimizerStep
  /// leaves out the updates loss scaling skipped.
  int64_t step = 0;
  double lrScale = 1.0;        ///< learning-rate schedule factor
  /// fp16 dynamic loss scaling (config.lossScaling): the scale the loss
  /// gradient is multiplied by, and the counts behind its policy.
  LossScaleState lossScale;
  /// Set by `unscale_grads` when a gradient overflowed: the executor runs
  /// no further kernel of this update (nothing changes but the scale).
  bool skipUpdate = false;
  /// The run's seed (initialize): keys the stochastic rounding of quantised
  /// table updates, so a resumed run rounds as the uninterrupted one.
  uint64_t seed = 0;

  /// Set while the optimizer update runs (a device backend's finish() then
  /// applies loss scaling's verdict).
  bool inUpdate = false;
  /// True while a training step runs, false for an evaluation's forward: a
  /// step kernel that also updates its tables (skipgram_step) then only
  /// computes its outputs.
  bool training = false;

  /// The micro-batch being run (-emb-pipeline): a buffer with several
  /// slots is used at its copy microBatch % slots (Executor::selectMicroBatch).
  int32_t microBatch = 0;
  /// Which sequence lengths the step's kernels are bound at (dynamic
  /// padding: 0 is max_len, then one number per set of lengths met), so a
  /// backend that captures the step keeps one capture per set.
  int32_t lengthVariant = 0;
  /// The index in the batch the trainer read of this process's first
  /// example (data-parallel ranks run slices of it): dropout draws each
  /// element's mask by its place in that batch (cpu/DropoutKernels.h).
  int64_t exampleOffset = 0;

  /// The job's ranks (distributed plans: collective kernels use it); null
  /// for a single process (Executor::setCommunicator).
  comm::Communicator *comm = nullptr;
  /// This process's rank in the job (0 without a communicator).
  int rank() const { return comm ? comm->rank() : 0; }

  template <class T> T *data(int32_t buffer) const {
    const Buffer &b = plan->buffers[buffer];
    std::byte *at = arena + b.offset;
    if (b.slots > 1)
      at += int64_t(microBatch % b.slots) * b.bytes;
    return reinterpret_cast<T *>(at);
  }
  const Buffer &buffer(int32_t id) const { return plan->buffers[id]; }
};

/// A kernel bound to its buffers, ready to run.
using BoundKernel = std::function<void(ExecState &)>;

/// One device: allocates the arena and binds plan kernels to its code.
///
/// The executor always works on a host copy of the arena (ExecState::arena):
/// it initialises parameters there, copies batches into it and checkpoints
/// from it. On the CPU that copy is the arena the kernels use and the hooks
/// below cost nothing. A device backend (CUDA) keeps the real arena in
/// device memory; the executor then calls toDevice/toHost at exactly the
/// points where the two must agree (after initialisation or a resume, after
/// loading a batch, before a checkpoint, for the loss and predictions).
/// A decision a backend took while training, for the console (`line`) and
/// the JSON-lines log (an `event` record with `values`).
struct BackendNote {
  std::string event, line;
  std::map<std::string, double> values;
};

/// How the file-backed bytes of disk tables are read (Backend::
/// adviseDiskAccess): row by row at random, or once through in order.
enum class DiskAccess { Random, Sequential };

class Backend {
public:
  virtual ~Backend();
  virtual const char *name() const = 0;
  /// For logs: the device the kernels run on.
  virtual std::string description() const { return name(); }
  /// Allocates `bytes` of zeroed, 64-byte aligned host memory for the arena
  /// (a device backend: the host mirror; it allocates the device arena itself).
  virtual std::byte *allocateArena(size_t bytes) = 0;
  /// Backs arena bytes [offset, offset + bytes) (page-aligned) with a
  /// scratch file in `directory` instead of memory: a `disk` table's rows
  /// and optimizer state, read and written through the page cache. The
  /// bytes read as zeros. Backends without it refuse.
  virtual void backWithFile(int64_t offset, int64_t bytes, const std::string &directory) {
    (void)offset, (void)bytes, (void)directory;
    throw PlanError(std::string("the ") + name() + " backend keeps tables in its own memory: placement "
                    "disk (and host) runs on the CPU backend only for now");
  }  /// The access pattern the file-backed bytes will see next (advice; a
  /// backend without disk tables ignores it).
  virtual void adviseDiskAccess(DiskAccess access) { (void)access; }

  /// Binds a kernel; throws PlanError when it cannot run it. `schedule` is
  /// "step" or "update" and `index` the kernel's position in it.
  virtual BoundKernel bind(const Kernel &kernel, const Plan &plan) = 0;
  virtual BoundKernel bind(const Kernel &kernel, const Plan &plan, const char *schedule,
                           size_t index) {
    (void)schedule, (void)index;
    return bind(kernel, plan);
  }

  /// Whether kernels run on memory other than the host arena.
  virtual bool deviceArena() const { return false; }
  /// The lengths below `maxLen` (one of `plan`'s sequences' max_len) at
  /// which bind() takes the plan specialised to a batch's sequence lengths
  /// (dynamic padding, specialiseLengths), ascending. Empty: every batch
  /// runs at max_len, and `why` says why.
  virtual std::vector<int64_t> sequenceLengths(const Plan &plan, int64_t maxLen,
                                               std::string &why) const {
    (void)plan, (void)maxLen;
    why = std::string("the ") + name() + " backend runs kernels compiled for max_len";
    return {};
  }
  /// Copies arena bytes [offset, offset + bytes) of the selected
  /// micro-batch's view host -> device / device -> host (no-ops on the CPU).
  virtual void toDevice(const ExecState &state, int64_t offset, int64_t bytes) {
    (void)state, (void)offset, (void)bytes;
  }
  virtual void toHost(ExecState &state, int64_t offset, int64_t bytes) {
    (void)state, (void)offset, (void)bytes;
  }
  /// Makes the device see state.length[buffer] for the selected micro-batch.
  virtual void setLength(const ExecState &state, int32_t buffer) {
    (void)state, (void)buffer;
  }
  /// A new batch's inputs follow (loadInput for each). A device backend may
  /// fill a second copy of the input buffers, so the new batch travels
  /// while work queued for the previous one (its forward and backward, its
  /// update) still runs.
  virtual void beginBatch(ExecState &state) { (void)state; }
  /// The batch loaded since the last call (if any) becomes the one the
  /// kernels read: the executor calls it before a forward (and backward),
  /// never before an update, so an update queued after the next batch was
  /// loaded still reads the batch its gradients came from.
  virtual void useLoadedBatch() {}
  /// Makes the device see input buffer `buffer`'s first `bytes` bytes and its
  /// length, as the host arena holds them, for the selected micro-batch.
  virtual void loadInput(const ExecState &state, int32_t buffer, int64_t bytes);
  /// One input buffer's values of a batch: `bytes` of them at `values`.
  struct InputValues {
    int32_t buffer;
    const void *values;
    int64_t bytes;
  };
  /// Loads a batch's input buffers (their lengths already in state.length)
  /// for the selected micro-batch, all at once so that their copies share
  /// one region of the CPU team. The CPU copies them into the arena; a
  /// device backend may copy them straight to where they travel from,
  /// leaving the host arena's copy of the inputs unwritten (nothing on the
  /// host reads a batch back).
  virtual void loadInputs(const ExecState &state, const std::vector<InputValues> &inputs);
  /// Zeroes a buffer, every slot of it.
  virtual void zero(ExecState &state, int32_t buffer);
  /// Runs kernels[i] for each i in `which` (all of them when null), in
  /// order. `key` names the sequence (with the selected micro-batch): a
  /// device backend may capture it once and replay it (CUDA graphs). The
  /// CPU stops early when a kernel sets state.skipUpdate.
  /// With `timings` (profiling), each kernel's wall time is added to
  /// timings[i] (a device backend waits for each kernel, and replays no graph).
  virtual void run(std::vector<BoundKernel> &kernels, const std::vector<size_t> *which,
                   ExecState &state, int key, std::vector<KernelTiming> *timings);
  /// Waits for the queued work and takes the step's device-side results
  /// into `state`: a data error found by a kernel is thrown as
  /// data::DataError; loss scaling's overflow sets state.skipUpdate and
  /// advances state.lossScale. Nothing to do on the CPU.
  virtual void finish(ExecState &state) { (void)state; }
  /// Waits for queued work (profiling times each kernel).
  virtual void synchronize() {}
  /// The filled length of a dynamic buffer as the kernels see it (for the
  /// selected micro-batch).
  virtual int64_t readLength(const ExecState &state, int32_t buffer) {
    return state.length[size_t(buffer)];
  }
  /// The wall time of the optimizer step that just ended (data included),
  /// called between steps: the CPU backend sizes its team by it
  /// (TeamTuner.h), comparing seconds per unit of `work` (1: a full step;
  /// with dynamic padding, the step's share of max_len's positions). No
  /// work is in flight when it is called. Returns what the backend
  /// decided, if it decided something.
  virtual std::optional<BackendNote> stepTimed(double seconds, double work) {
    (void)seconds, (void)work;
    return std::nullopt;
  }
  /// CPU threads the kernels use now (0: not a CPU backend).
  virtual int threads() const { return 0; }
  /// Bytes of device memory the backend holds (0: none, the CPU).
  virtual int64_t deviceBytes() const { return 0; }
  /// Runs body(begin, end) over pieces that cover [0, n) once, on the host
  /// threads the backend has (the executor fills the host arena's
  /// parameters and tables with it); with `parallel` false, or by default,
  /// in one piece on the calling thread. The body must compute the same
  /// whatever the pieces are. Rethrows what a piece threw.
  virtual void hostFor(int64_t n, bool parallel,
                       const std::function<void(int64_t, int64_t)> &body) {
    (void)parallel;
    body(0, n);
  }

  /// What a device spent on the sequences run() ran under one key, measured
  /// on the device (events around each run): their kernels, and before them
  /// the wait for their inputs' uploads. Settled by finish().
  struct DeviceTimes {
    int64_t runs = 0;
    double seconds = 0, inputWaitSeconds = 0;
  };
  /// Nothing for a backend without a device.
  virtual std::optional<DeviceTimes> deviceTimes(int key) const {
    (void)key;
    return std::nullopt;
  }
};

class Executor {
public:
  /// Binds every kernel of the plan (PlanError if one cannot run) and
  /// allocates the arena.
  Executor(const Plan &plan, std::unique_ptr<Backend> backend);
  ~Executor();

  const Plan &plan() const { return plan_; }
  size_t arenaBytes() const { return size_t(plan_.arenaBytes); }

  /// Fills parameters and tables from their initialisers and the optimizer
  /// state from its initial values; a pure function of `seed`.
  void initialize(uint64_t seed);

  /// The data features the plan's inputs read, in input order.
  const std::vector<data::FeatureSpec> &featureSpecs() const { return specs_; }
  /// Copies a batch (from a stream opened with featureSpecs()) into the
  /// input buffers. Throws data::DataError for ids outside a table.
  void loadBatch(const data::Batch &batch);

  /// Dynamic padding (plan/SequenceLayout.h, docs/training.md): with it
  /// on, each batch's step kernels run at the batch's longest sequence
  /// (every micro-batch of a step at the step's longest), with it off at
  /// max_len. Off by default; the trainer turns it on (embrun --padding).
  /// Turning it on throws PlanError with the reason when the backend or
  /// the plan cannot (dynamicPaddingUnsupported).
  void setDynamicPadding(bool on);
  bool dynamicPadding() const { return dynamicPadding_; }
  /// Why this executor cannot pad per batch, or "".
  std::string dynamicPaddingUnsupported() const;
  const SequenceLayout &sequenceLayout() const { return sequences_; }
  /// Each sequence's length (SequenceLayout::sequences) in the batch the
  /// kernels run on: max_len without dynamic padding.
  const std::vector<int64_t> &sequenceLengths() const { return activeLengths_; }
  /// The shape the kernels see of `buffer` for the batch in use.
  std::vector<int64_t> activeShape(int32_t buffer) const;

  /// Micro-batches per batch: with a schedule the step kernels run on
  /// config.batchSize / microBatches() examples at a time.
  int64_t microBatches() const { return plan_.config.microBatches; }
  /// Whether the plan has a micro-batch schedule (-emb-pipeline).
  bool hasSchedule() const { return !plan_.schedule.empty(); }
  /// Runs the schedule's instructions on one batch split into micro-batches
  /// (data::sliceBatch): load, forward and backward per stage; send, recv
  /// and reduce do nothing on one device (the boundary buffers are shared
  /// slots). With stages on ranks (config.stageRanks) this rank runs its
  /// stages' instructions, and send/recv between ranks are messages; the
  /// returned loss is the loss rank's, on every rank. The steps are the caller's
  /// update() after the last accumulation step: the checker placed them
  /// last. `afterForward(mb, loss)` runs once each micro-batch's loss is
  /// computed, with that micro-batch selected (predictions() are its own).
  /// Returns the mean of the micro-batch losses.
  double runSchedule(const std::vector<data::Batch> &microBatches,
                     const std::function<void(int32_t, float)> &afterForward);
  /// Makes data(), predictions() and the kernels use micro-batch mb's copy
  /// of every slotted buffer (and its filled lengths).
  void selectMicroBatch(int32_t mb);

  /// Zeroes gradient accumulators (start of an optimizer step).
  void zeroGradients();
  /// Sets the optimizer step (1-based) and learning-rate factor the coming
  /// forwardBackward() runs under: a fused embedding backward updates its
  /// tables inside the step.
  void beginStep(int64_t step, double lrScale);
  /// Runs the forward kernels; returns the batch loss.
  float forward();
  /// Runs forward and backward (accumulating gradients); returns the loss.
  float forwardBackward();
  /// forwardBackward() in two halves, so the host can prepare and load the
  /// next batch (loadBatch) while a device runs this one: start queues the
  /// kernels, finish waits for them and returns the loss. Nothing else may
  /// run kernels in between; queueUpdate() after finish still updates with
  /// this batch (Backend::useLoadedBatch).
  void startForwardBackward();
  float finishForwardBackward();
  /// The device's own time for the forward-backward sequences (update:
  /// the optimizer updates) run so far; nothing on the CPU.
  std::optional<Backend::DeviceTimes> deviceTimes(bool update) const {
    return backend_->deviceTimes(update ? kUpdateKey : kStepKey);
  }
  /// Whether kernels run asynchronously to the host (a device backend), so
  /// that loading the next batch between startForwardBackward() and
  /// finishForwardBackward() overlaps the step.
  bool runsAsynchronously() const { return backend_->deviceArena(); }
  /// Runs the optimizer update as step `step` (1-based) at `lrScale`.
  /// Returns false when loss scaling skipped it (a gradient was not finite):
  /// then no parameter, table or optimizer state changed. Optimizers see
  /// step minus the updates skipped so far (Adam's bias correction counts
  /// applied updates only).
  bool update(int64_t step, double lrScale);
  /// update() in two halves, so the next batch can be loaded (and copied to
  /// a device) while the update runs there: queueUpdate starts it,
  /// settleUpdate waits for it and returns whether it was applied (true
  /// when none is pending). Every call that runs kernels, copies state or
  /// zeroes gradients settles first; loadBatch does not. A data error the
  /// update's kernels found is thrown by whichever call settles it.
  void queueUpdate(int64_t step, double lrScale);
  bool settleUpdate();

  /// Dynamic loss scaling state (scale 1 and no counts without it); set on
  /// resume so the run continues with the checkpoint's scale.
  const LossScaleState &lossScale() const { return state_.lossScale; }
  void setLossScale(const LossScaleState &state) { state_.lossScale = state; }

  /// Turns per-kernel timing of forwardBackward() and update() on or off
  /// (embrun --profile). Off costs one branch per schedule; forward()
  /// (evaluation) is never timed.
  void setProfiling(bool on) { profiling_ = on; }
  /// Backs every `disk` table's buffers (rows, scale/bias, optimizer state)
  /// with scratch files in `directory` (docs/memory.md, "Tables larger than
  /// memory"); before anything is written to them. Returns the bytes placed
  /// on disk. Throws PlanError for a buffer the plan did not page-align, and
  /// the backend's refusal.
  int64_t placeDiskTables(const std::string &directory);
  /// How the disk tables' pages are read next (advice to the system):
  /// Random for training steps (the default: a fault reads one page, not
  /// the rows around it), Sequential for a pass over whole tables (a
  /// checkpoint, the export, the finite check), which then reads ahead.
  void adviseDiskAccess(DiskAccess access) const;
  /// Whether a forward brings the predictions (and a token loss's targets)
  /// to the host, for metrics: on by default. A token loss's predictions
  /// are B x L x vocab logits that only an evaluation reads, so the
  /// trainer turns it off while training (on a device, that saves their
  /// copy every step).
  void setFetchPredictions(bool on) { fetchPredictions_ = on; }
  /// The job's ranks, for the plan's collective kernels (ExecState::comm)
  /// and, with stages on ranks, which stages and inputs are this rank's.
  void setCommunicator(comm::Communicator *comm);
  /// Where this process's examples start in the batch the trainer read
  /// (ExecState::exampleOffset): rank * batchSize for data-parallel ranks.
  void setExampleOffset(int64_t offset) { state_.exampleOffset = offset; }
  /// Whether this rank computes the loss and predictions (with stages on
  /// ranks: runs the loss's stage; otherwise always).
  bool computesLoss() const;
  bool profiling() const { return profiling_; }
  /// Accumulated timings, one per kernel of plan().step / plan().update.
  const std::vector<KernelTiming> &stepTimings() const { return stepTimings_; }
  const std::vector<KernelTiming> &updateTimings() const { return updateTimings_; }
  /// Zeroes the accumulated timings (e.g. after warm-up steps).
  void resetTimings();

  /// The backend's description (for logs).
  std::string deviceDescription() const { return backend_->description(); }
  /// See Backend::stepTimed and Backend::threads.
  std::optional<BackendNote> stepTimed(double seconds, double work = 1.0) {
    return backend_->stepTimed(seconds, work);
  }
  int backendThreads() const { return backend_->threads(); }
  int64_t backendDeviceBytes() const { return backend_->deviceBytes(); }
  /// Device backends: copies the whole arena device -> host (before a
  /// checkpoint or an export) / host -> device (after a resume).
  void syncToHost();
  void syncToDevice();

  /// Tests (emb-parity): runs one kernel of plan().step or plan().update
  /// alone, and waits for it: a training step's (dropout drops, masks and
  /// samples are drawn for the step), or an evaluation's when !training.
  void runKernelForTest(bool update, size_t index, bool training = true);
  /// Tests: makes this executor's state (arena, lengths, step values) a copy
  /// of `other`'s, which runs the same plan (on another backend).
  void copyStateFrom(const Executor &other);
  /// The host arena (a device backend: the mirror, current after syncToHost()).
  const std::byte *hostArena() const { return state_.arena; }
  /// A dynamic buffer's filled length as the backend's kernels see it.
  int64_t filledLength(int32_t buffer) { return backend_->readLength(state_, buffer); }

  /// Predictions of the last forward (B x width, row-major).
  const float *predictions() const;
  /// A sequence_softmax_ce loss's targets (B x L class indices, -1 where a
  /// position has none) of the last forward, or null for other losses.
  const float *lossTargets() const;
  int64_t predictionWidth() const;

  template <class T> T *data(int32_t buffer) { return state_.data<T>(buffer); }
  template <class T> const T *data(int32_t buffer) const {
    return state_.data<T>(buffer);
  }

private:
  /// Copies the inputs `which` (indices into plan().inputs) from a batch.
  void loadInputs(const data::Batch &batch, const std::vector<size_t> &which);
  /// Each sequence's longest in `batches` (1 at least; max_len when one is
  /// longer, so that its kernels report it).
  std::vector<int64_t> longestSequences(const std::vector<const data::Batch *> &batches) const;
  /// Makes the step kernels those bound for `lengths` (binding them the
  /// first time): the kernels of the current lengths go back to their
  /// variant, the new ones take their places in step_.
  void useLengths(const std::vector<int64_t> &lengths);
  /// Per stage: its inputs, forward and backward kernels (ScheduleRun.cpp).
  void prepareSchedule();
  void runKernels(const std::vector<size_t> &kernels, int key);
  /// After a forward: the loss and predictions to the host.
  void fetchOutputs();
  /// With stages on ranks (StageRanks.cpp): this rank's inputs per stage.
  void placeOnRank();
  bool mineStage(int32_t stage) const;
  /// The boundary `buffers` from stage `from` to stage `to` (of another
  /// rank) for micro-batch state_.microBatch, as one message: the
  /// micro-batch, each buffer's filled length, then its bytes. A started
  /// send's message is kept in `staged` until it is waited for.
  void sendBoundary(int32_t from, int32_t to, const std::vector<int32_t> &buffers,
                    std::vector<comm::Request> &sends,
                    std::vector<std::vector<std::byte>> &staged);
  void receiveBoundary(int32_t from, int32_t to, const std::vector<int32_t> &buffers);
  /// forward() with stages on ranks: each of this rank's stages in order,
  /// receiving and sending the forward boundaries of micro-batch 0's slots.
  float forwardOnRanks();

  /// Graph keys of the sequences the executor runs (Backend::run); a
  /// schedule's per-stage phases use kScheduleKey + their index.
  static constexpr int kForwardKey = 1, kStepKey = 2, kUpdateKey = 3, kScheduleKey = 16;

  Plan plan_;
  std::vector<size_t> allInputs_, forwardList_;
  std::vector<std::vector<size_t>> stageInputs_, stageForward_, stageBackward_;
  std::vector<int32_t> slottedDynamic_;           ///< dynamic buffers with slots > 1
  std::vector<std::vector<int64_t>> savedLength_; ///< their lengths, per slot
  int32_t lossStage_ = 0;
  /// Stages on ranks: the sends of micro-batch 0 to later stages (what an
  /// evaluation forward exchanges).
  std::vector<const ScheduleOp *> forwardSends_;
  std::unique_ptr<Backend> backend_;
  ExecState state_;
  std::vector<BoundKernel> step_, update_;
  /// Dynamic padding: the step kernels bound for other sequence lengths
  /// (SequenceLayout::kernels only; the rest are the same at any length),
  /// each with the specialised plan they were bound to. The variant in use
  /// has its kernels in step_ and its `kernels` empty.
  struct LengthVariant {
    std::unique_ptr<Plan> plan;
    std::vector<BoundKernel> kernels;
    int32_t id = 0; ///< ExecState::lengthVariant
  };
  SequenceLayout sequences_;
  bool dynamicPadding_ = false;
  std::map<std::vector<int64_t>, LengthVariant> variants_;
  std::vector<int64_t> maxLengths_, loadedLengths_, activeLengths_;
  /// Why a length below max_len fails its kernels' operand checks, or "".
  std::string lengthsRefused_;
  /// Per sequence, the lengths a batch may run at, ascending, the last its
  /// max_len (Backend::sequenceLengths): a batch rounds up to the first that
  /// holds its longest sequence.
  std::vector<std::vector<int64_t>> boundLengths_;
  /// Why the backend runs every batch at max_len, or "".
  std::string backendPadsToMax_;
  std::vector<int32_t> gradBuffers_, sparseGradBuffers_;
  std::vector<data::FeatureSpec> specs_;
  int32_t lossTargets_ = -1; ///< the buffer lossTargets() reads, or -1
  std::vector<size_t> inputFeature_; ///< per plan input: its index in specs_
  bool profiling_ = false;
  bool fetchPredictions_ = true;
  bool updatePending_ = false;
  bool stepPending_ = false; ///< startForwardBackward() without its finish
  std::vector<KernelTiming> stepTimings_, updateTimings_;
};

/// The learning-rate factor of 0-based step `step`: linear warmup, then the
/// schedule (constant, linear or cosine decay to 0 over decaySteps).
double learningRateScale(const TrainingConfig &config, int64_t step);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_EXECUTOR_H
