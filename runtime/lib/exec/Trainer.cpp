//===- Trainer.cpp - the training loop behind embrun ---------------------===//
//
// One optimizer step = gradAccumulation micro-batches of forward+backward,
// then the update. Everything that decides the result (initial values, data
// order, sampled negatives) is a pure function of the seed and the step, so
// a run resumed from a checkpoint continues bit-identically.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/exec/Trainer.h"
#include "DiskTraffic.h"
#include "EarlyStop.h"
#include "HashCollisions.h"
#include "RowPrefetcher.h"
#include "FiniteCheck.h"
#include "embc/runtime/Metrics.h"
#include "embc/runtime/WholeNumber.h"
#include "embc/runtime/checkpoint/Checkpoint.h"
#include "embc/runtime/checkpoint/CheckpointRestore.h"
#include "embc/runtime/cpu/Kernels.h"
#include "embc/runtime/data/BatchSlice.h"
#include "embc/runtime/exec/Executor.h"
#include "embc/runtime/metrics/Plot.h"
#include "embc/runtime/storage/RowStorage.h"

#include <xxhash.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <future>
#include <limits>
#include <optional>
#include <utility>

using namespace embc::runtime;
namespace data = embc::runtime::data;
namespace ckpt = embc::runtime::checkpoint;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Where the training loop's host time goes, for the summary record: what
/// a device waits for when the host is slower than its kernels.
struct HostTimes {
  int64_t steps = 0;
  double data = 0;    ///< waiting for the data stream's next batch
  double load = 0;    ///< copying batches into the input buffers (and to a device)
  double wait = 0;    ///< waiting for a device's forward and backward
  double metrics = 0; ///< the train metrics of each report
  void addTo(std::map<std::string, double> &values, const Executor &executor) const {
    if (steps == 0)
      return;
    auto perStep = [&](double s) { return 1e3 * s / double(steps); };
    values["host_data_ms_per_step"] = perStep(data);
    values["host_load_ms_per_step"] = perStep(load);
    values["host_metrics_ms_per_step"] = perStep(metrics);
    if (!executor.runsAsynchronously())
      return;
    values["device_wait_ms_per_step"] = perStep(wait);
    // The device's own clock: the step's kernels, their wait for the
    // inputs' upload, and the update's kernels (evaluation not included).
    if (auto step = executor.deviceTimes(false)) {
      values["device_step_ms_per_step"] = perStep(step->seconds);
      values["device_input_wait_ms_per_step"] = perStep(step->inputWaitSeconds);
    }
    if (auto update = executor.deviceTimes(true))
      values["device_update_ms_per_step"] = perStep(update->seconds);
  }
};

/// Index of the label feature among the specs, or -1.
int labelIndex(const std::vector<data::FeatureSpec> &specs) {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].kind == data::FeatureKind::Label)
      return int(i);
  return -1;
}

/// Loss of one example from its prediction, for the losses whose per-example
/// form is closed (evaluation must not count the padding of a last batch).
std::optional<double> exampleLoss(LossKind loss, float z, float y) {
  if (loss == LossKind::BceWithLogits)
    return std::max(double(z), 0.0) - double(z) * y +
           std::log1p(std::exp(-std::abs(double(z))));
  if (loss == LossKind::Mse)
    return (double(z) - y) * (double(z) - y);
  return std::nullopt;
}

/// Predictions and labels collected over a report interval or an evaluation.
/// A training interval keeps at most kTrainingSample of them per rank (a
/// uniform reservoir sample past that, 8 MiB), so a long --report-every does
/// not grow memory without bound; an evaluation keeps every one (exact AUC).
struct Outcomes {
  static constexpr size_t kTrainingSample = size_t(1) << 20;

  ReservoirSample sample;
  double lossSum = 0;
  int64_t examples = 0;
  int64_t classified = 0, correct = 0; ///< class labels: rows, argmax == label
  double tokenLossSum = 0; ///< next-token models: the cross-entropy of every target
  int64_t tokens = 0;      ///< and the count of targets

  /// Token prediction (next or masked): pred is rows x L x C logits,
  /// targets rows x L (-1: none).
  void addTokens(const float *pred, const float *targets, int64_t rows, int64_t L, int64_t C) {
    int64_t n = 0;
    tokenLossSum += cpu::sequenceTokenLossSum(pred, targets, rows, L, C, n);
    tokens += n;
  }

  /// `rows` examples: predictions pred[r * width ...], labels (null when
  /// the model has none), and the batch's mean loss.
  void add(const float *pred, int64_t width, const float *truth, std::optional<LabelKind> labelKind,
           int64_t rows, double batchLoss, LossKind lossKind) {
    bool perExample = truth && width == 1 && exampleLoss(lossKind, 0, 0).has_value();
    if (!perExample)
      lossSum += batchLoss * double(rows);
    for (int64_t r = 0; r < rows; ++r) {
      if (truth && labelKind == LabelKind::Class && width > 1) {
        // The first of equal logits wins, as argmax does.
        const float *row = pred + r * width;
        correct += int64_t(std::max_element(row, row + width) - row) == int64_t(truth[r]);
        ++classified;
      }
      if (!truth || width != 1)
        continue;
      float y = truth[r];
      if (perExample)
        lossSum += *exampleLoss(lossKind, pred[r], y);
      if (labelKind == LabelKind::Binary || labelKind == LabelKind::Real)
        sample.offer(pred[r], y);
    }
    examples += rows;
  }

  /// loss, and auc (binary labels), rmse (real labels) or accuracy (class
  /// labels: the argmax of the logits).
  std::map<std::string, double> metrics(std::optional<LabelKind> labelKind,
                                        const std::string &prefix) const {
    std::map<std::string, double> m;
    m[prefix + "loss"] = examples ? lossSum / double(examples) : NAN;
    if (!sample.empty() && labelKind == LabelKind::Binary)
      m[prefix + "auc"] = computeAuc(sample.scores(), sample.labels());
    if (!sample.empty() && labelKind == LabelKind::Real)
      m[prefix + "rmse"] = computeRmse(sample.scores(), sample.labels());
    if (classified > 0)
      m[prefix + "accuracy"] = double(correct) / double(classified);
    if (tokens > 0) // exp of the mean over tokens (the loss is per sequence)
      m[prefix + "perplexity"] = std::exp(tokenLossSum / double(tokens));
    return m;
  }
};

std::string checkpointName(const std::string &kind, const std::string &name) {
  return kind + "/" + name;
}

/// A tensor of a checkpoint and the buffer it lives in. A sharded table's
/// tensors are whole (logical) tables in the file, whatever the layout, so a
/// checkpoint resumes on any number of ranks and sharding.
struct CheckpointTensor {
  std::string name;
  int32_t buffer = -1;
  const Table *shardOf = nullptr; ///< the sharded table whose rows it holds

  /// The shape in the file: a shard's buffer has the table's rows there.
  std::vector<int64_t> shape(const Plan &plan) const {
    std::vector<int64_t> s = plan.buffers[buffer].shape;
    if (shardOf)
      s[0] = shardOf->rows;
    return s;
  }
  /// Bytes of one row (leading index) of the buffer.
  int64_t rowBytes(const Plan &plan) const {
    const Buffer &b = plan.buffers[buffer];
    return b.bytes / b.shape[0];
  }
};

/// The tensors a checkpoint holds: parameters, tables, optimizer states.
std::vector<CheckpointTensor> checkpointTensors(const Plan &plan) {
  std::vector<CheckpointTensor> out;
  for (const Param &p : plan.params) {
    out.push_back({checkpointName("param", p.name), p.buffer});
    for (size_t i = 0; i < p.state.size(); ++i)
      out.push_back({"state/" + p.name + "/" + std::to_string(i), p.state[i]});
  }
  for (const Table &t : plan.tables) {
    const Table *shard = t.shardRows.empty() ? nullptr : &t;
    out.push_back({checkpointName("table", t.name), t.buffer, shard});
    if (t.qparams >= 0) // int8/int4 storage: the rows' fp16 scale and bias
      out.push_back({checkpointName("qparams", t.name), t.qparams, shard});
    for (size_t i = 0; i < t.state.size(); ++i)
      out.push_back({"state/" + t.name + "/" + std::to_string(i), t.state[i], shard});
  }
  return out;
}

/// A checkpointed buffer's safetensors dtype: tables keep their storage
/// (F16, BF16, U8 codes; -emb-quantize), everything else is F32.
std::string safetensorsDType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::U8:
    return "U8";
  case DType::F64:
    return "F64";
  case DType::I64:
    return "I64";
  case DType::F32:
    break;
  }
  return "F32";
}

std::string fingerprint(const Plan &plan) {
  std::string f = plan.model;
  for (const CheckpointTensor &tensor : checkpointTensors(plan)) {
    f += ";" + tensor.name;
    for (int64_t d : tensor.shape(plan))
      f += "," + std::to_string(d);
  }
  // xxh64, not std::hash: the fingerprint must match across builds and
  // machines (a checkpoint written on one host resumes on another).
  return std::to_string(XXH64(f.data(), f.size(), 0));
}

/// One row of the --profile table: the kernels of one op in one schedule.
struct OpProfile {
  std::string phase, op; ///< phase: "step" (forward + backward) or "update"
  int64_t launches = 0;
  double seconds = 0;
  int64_t bytes = 0; ///< the plan's estimate (Kernel::bytes) times launches
};

/// The per-kernel timings of a run, summed per (phase, op) and split into
/// forward, backward and update time; `steps` is how many optimizer steps
/// the timings cover.
struct ProfileReport {
  int64_t steps = 0;
  double forward = 0, backward = 0, update = 0; ///< seconds over all steps
  std::vector<OpProfile> ops;                   ///< in first-use order

  double total() const { return forward + backward + update; }
};

ProfileReport profileReport(const Plan &plan, const Executor &ex, int64_t steps) {
  ProfileReport report;
  report.steps = steps;
  auto add = [&](const char *phase, const std::vector<Kernel> &kernels,
                 const std::vector<KernelTiming> &timings) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      auto row = std::find_if(report.ops.begin(), report.ops.end(), [&](const OpProfile &o) {
        return o.phase == phase && o.op == kernels[i].op;
      });
      if (row == report.ops.end())
        row = report.ops.insert(report.ops.end(), OpProfile{phase, kernels[i].op});
      row->launches += timings[i].launches;
      row->seconds += timings[i].seconds;
      row->bytes += kernels[i].bytes * timings[i].launches;
    }
  };
  add("step", plan.step, ex.stepTimings());
  add("update", plan.update, ex.updateTimings());
  for (size_t i = 0; i < plan.step.size(); ++i)
    (int64_t(i) < plan.forwardKernels ? report.forward : report.backward) +=
        ex.stepTimings()[i].seconds;
  for (const KernelTiming &t : ex.updateTimings())
    report.update += t.seconds;
  return report;
}

/// Achieved GB/s of `bytes` moved in `seconds`; 0 when the plan gives no
/// estimate (bytes 0) or nothing was timed.
double gigabytesPerSecond(int64_t bytes, double seconds) {
  return bytes > 0 && seconds > 0 ? double(bytes) / seconds / 1e9 : 0;
}

void printProfile(std::ostream &out, const ProfileReport &r) {
  double steps = double(r.steps), total = r.total();
  auto ms = [&](double seconds) { return 1e3 * seconds / steps; };
  char line[256];
  std::snprintf(line, sizeof line, "profile: %lld steps, %.3f ms/step in kernels\n",
                static_cast<long long>(r.steps), ms(total));
  out << line;
  std::snprintf(line, sizeof line, "  %-6s %-24s %9s %10s %7s %12s %8s\n", "phase", "op",
                "launches", "ms/step", "%step", "bytes/step", "GB/s");
  out << line;
  for (const OpProfile &o : r.ops) {
    double gbs = gigabytesPerSecond(o.bytes, o.seconds);
    char rate[32] = "-";
    if (gbs > 0)
      std::snprintf(rate, sizeof rate, "%.2f", gbs);
    std::snprintf(line, sizeof line, "  %-6s %-24s %9.1f %10.3f %6.1f%% %12.0f %8s\n",
                  o.phase.c_str(), o.op.c_str(), double(o.launches) / steps, ms(o.seconds),
                  total > 0 ? 100 * o.seconds / total : 0.0, double(o.bytes) / steps, rate);
    out << line;
  }
  std::snprintf(line, sizeof line,
                "  forward %.3f ms/step, backward %.3f ms/step, update %.3f ms/step\n",
                ms(r.forward), ms(r.backward), ms(r.update));
  out << line << std::flush;
}

/// The profile as one JSON-lines record, the same numbers as the table.
nlohmann::ordered_json profileRecord(const ProfileReport &r, int64_t step) {
  double steps = double(r.steps), total = r.total();
  auto ms = [&](double seconds) { return 1e3 * seconds / steps; };
  nlohmann::ordered_json record;
  record["event"] = "profile";
  record["type"] = "profile";
  record["step"] = step;
  record["steps_profiled"] = r.steps;
  record["step_ms"] = ms(total);
  record["forward_ms"] = ms(r.forward);
  record["backward_ms"] = ms(r.backward);
  record["update_ms"] = ms(r.update);
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const OpProfile &o : r.ops) {
    nlohmann::ordered_json row;
    row["phase"] = o.phase;
    row["op"] = o.op;
    row["launches_per_step"] = double(o.launches) / steps;
    row["ms_per_step"] = ms(o.seconds);
    row["percent"] = total > 0 ? 100 * o.seconds / total : 0.0;
    row["bytes_per_step"] = double(o.bytes) / steps;
    row["gb_per_s"] = gigabytesPerSecond(o.bytes, o.seconds);
    ops.push_back(row);
  }
  record["ops"] = ops;
  return record;
}

class Trainer {
public:
  Trainer(const Plan &plan, const RunOptions &options, std::unique_ptr<Backend> backend,
          std::ostream &console, bool tty, comm::Communicator *comm)
      : plan_(plan), options_(options), executor_(plan, std::move(backend)),
        reporter_(console, tty, options.logPath), console_(console), comm_(comm) {
    if (!options.plotPath.empty()) {
      // Written at the end; a path that cannot be written fails now, not
      // after the training.
      if (!std::ofstream(options.plotPath, std::ios::out | std::ios::trunc))
        throw std::runtime_error("cannot write the plot file '" + options.plotPath + "'");
      reporter_.keepRecords();
    }
    ranks_ = int(plan.config.jobRanks());
    dataRanks_ = int(plan.config.dataParallel);
    for (const Table &t : plan.tables)
      sharded_ = sharded_ || !t.shardRows.empty();
    int jobRanks = comm ? comm->size() : 1;
    std::string compiledFor =
        plan.config.pipelineRanks() == 1
            ? "data_parallel " + std::to_string(ranks_)
            : std::to_string(plan.config.pipelineStages) + " pipeline stages on " +
                  std::to_string(ranks_) + " ranks (pipeline_ranks)";
    if (jobRanks != ranks_)
      throw std::runtime_error(
          ranks_ > 1 ? "the plan was compiled for " + compiledFor + " but the job has " +
                           std::to_string(jobRanks) + " rank(s): start it with mpirun -np " +
                           std::to_string(ranks_) + " embrun ... (docs/distributed.md)"
                     : "the job has " + std::to_string(jobRanks) +
                           " ranks but the plan was compiled for one: compile it with "
                           "plan.data_parallel " + std::to_string(jobRanks) +
                           " (or pipeline_ranks)");
    rank_ = comm ? comm->rank() : 0;
    executor_.setCommunicator(comm);
    if (dataRanks_ > 1) // localBatch's slice
      executor_.setExampleOffset(int64_t(rank_) * plan.config.batchSize);
    executor_.setProfiling(options.profile);
    // Dynamic padding, the default where the backend binds kernels per
    // length; said, never silently, where it cannot.
    if (options.padding == "batch" && !executor_.sequenceLayout().empty()) {
      const std::string why = executor_.dynamicPaddingUnsupported();
      if (why.empty())
        executor_.setDynamicPadding(true);
      else if (rank_ == 0)
        std::fprintf(stderr, "embrun: padding: every batch to max_len (%s)\n", why.c_str());
    }
    specs_ = executor_.featureSpecs();
    label_ = labelIndex(specs_);
    // Training metrics never read a token loss's logits (the evaluation's
    // perplexity does: evaluate() fetches them).
    executor_.setFetchPredictions(executor_.lossTargets() == nullptr);
    if (label_ >= 0)
      labelKind_ = specs_[label_].labelKind;
    seed_ = options.seed.value_or(plan.config.seed);
  }

  TrainSummary run();

private:
  data::StreamOptions streamOptions(const DataSource &source, bool training) const {
    data::StreamOptions s;
    s.kind = source.kind;
    s.path = source.path;
    if (source.kind == "schema") {
      if (!plan_.dataSchema)
        throw data::DataError(
            "data: '" + source.path +
            "' names no reader (synthetic, criteo:, movielens:, mlperf_criteo:, text:) and "
            "the plan has no data schema to read it with (add \"data\" to the model file: "
            "docs/model-format.md, \"Data schema\")");
      s.schema = std::make_shared<data::DataSchema>(*plan_.dataSchema);
    }
    // Every rank reads the global batch and runs its slice (localBatch);
    // pipeline ranks all run the whole batch.
    s.batchSize = plan_.config.batchSize * dataRanks_;
    s.seed = seed_;
    s.training = training;
    s.onBadData = options_.onBadData == "skip" ? data::BadDataPolicy::Skip
                                               : data::BadDataPolicy::Fail;
    s.threads = options_.threads;
    s.textWindow = options_.textWindow;
    s.shuffle = options_.shuffle;
    s.shuffleWindow = options_.shuffleWindow;
    s.residentBudget = uint64_t(options_.dataMemoryMiB) << 20;
    s.windowBudget = s.residentBudget / 16;
    s.lengthBuckets = training ? options_.lengthBuckets : 0;
    s.textMinCount = options_.textMinCount;
    s.textSample = options_.textSample;
    // A resumed run reads words with the ids the checkpoint's tables were
    // trained with, whatever the training file holds now.
    if (training && resumedVocabulary_) {
      s.textVocabulary = resumedVocabulary_;
      s.textVocabularyFrom = "the checkpoint's";
    }
    if (rowPrefetcher_)
      s.onPartFilled = [p = rowPrefetcher_](const data::Batch &part) { p->prefetch(part); };
    return s;
  }
  void resume();
  /// This rank's copy of every checkpointed tensor (a sharded table's own
  /// rows), for the finite check (FiniteCheck.h).
  std::vector<ckpt::TensorView> localTensors() const;
  /// Throws, naming the tensors, when a local tensor holds a non-finite
  /// value; `what` says when ("the initial values", ...), `hint` what to do.
  void requireFinite(const std::string &what, const std::string &hint) const;
  /// Every rank calls it; rank 0 writes.
  void save(const std::string &dir) const;
  /// On rank 0: the whole tensor of a sharded table, every rank's rows in
  /// place; the other ranks send theirs and get nothing. Every rank calls it.
  std::vector<std::byte> wholeTensor(const CheckpointTensor &tensor) const;
  static constexpr int kShardTag = 7007;
  void exportEmbeddings(const std::string &path) const;
  /// The training text's words in id order (text data only), for the
  /// evaluation streams.
  std::shared_ptr<const std::vector<std::string>> trainVocabulary_;
  /// The vocabulary a resumed checkpoint was trained with (its metadata
  /// "vocabulary"); null when not resuming or it has none.
  std::shared_ptr<const std::vector<std::string>> resumedVocabulary_;
  std::map<std::string, double> evaluate();
  void reportProfile(int64_t steps);
  /// Storage traffic of disk tables since training began (when it has them).
  std::optional<DiskTraffic> diskTraffic_;
  /// Reads the disk tables' rows of each part of a batch ahead, as the
  /// loader fills it (null: no disk tables, or --no-prefetch-rows).
  std::shared_ptr<const RowPrefetcher> rowPrefetcher_;
  /// This rank's examples of a global batch (itself on one rank), in
  /// slice_[which] (two batches are in use when the next one is loaded
  /// ahead).
  const data::Batch &localBatch(const data::Batch &global, int which = 0);
  /// Adds a forward pass's predictions, labels and mean loss over `rows`
  /// examples of `batch` (this rank's) to `outcomes`.
  void record(Outcomes &outcomes, const data::Batch &batch, int64_t rows, double loss,
              bool evaluation = false);
  /// The metrics of `outcomes` over every rank's examples: each rank's are
  /// gathered here, once per report, not once per step.
  std::map<std::string, double> metrics(Outcomes &outcomes, const std::string &prefix);
  /// Every rank's examples of `outcomes` into each rank's (collectives; one
  /// rank: nothing).
  void gather(Outcomes &outcomes);

  const Plan &plan_;
  const RunOptions &options_;
  Executor executor_;
  Reporter reporter_;
  std::ostream &console_;
  std::string lastNote_; ///< the backend's decision last printed
  std::vector<data::FeatureSpec> specs_;
  int label_ = -1;
  std::optional<LabelKind> labelKind_;
  uint64_t seed_ = 0;
  int64_t step_ = 0;
  uint64_t position_ = 0;
  int64_t skipped_ = 0, evalSkipped_ = 0;
  comm::Communicator *comm_ = nullptr; ///< null: one process
  int ranks_ = 1, rank_ = 0; ///< the job's ranks (data-parallel or pipeline), this one
  int dataRanks_ = 1;        ///< ranks that split each global batch (data_parallel)
  bool sharded_ = false; ///< some table is sharded: the forward exchanges rows
  data::Batch slice_[2]; ///< this rank's part of the batch in use and of the next
};

const data::Batch &Trainer::localBatch(const data::Batch &global, int which) {
  if (dataRanks_ == 1)
    return global;
  int64_t local = plan_.config.batchSize;
  data::Batch &slice = slice_[which];
  data::sliceBatch(global, int64_t(rank_) * local, local, slice);
  return slice;
}

void Trainer::record(Outcomes &outcomes, const data::Batch &batch, int64_t rows,
                     double loss, bool evaluation) {
  if (!executor_.computesLoss())
    return; // pipeline stages on ranks: the loss rank records, metrics() gathers
  const float *labels = label_ >= 0 ? batch.features[size_t(label_)].label.data() : nullptr;
  outcomes.add(executor_.predictions(), executor_.predictionWidth(), labels, labelKind_, rows,
               loss, plan_.config.loss);
  // The perplexity costs as much as the loss kernel: evaluations only.
  const float *targets = executor_.lossTargets();
  if (evaluation && targets && rows > 0) {
    // B x L x C at the batch's length (dynamic padding).
    const std::vector<int64_t> pred = executor_.activeShape(plan_.predictionBuffer);
    outcomes.addTokens(executor_.predictions(), targets, rows, pred[1], pred[2]);
  }
}

std::map<std::string, double> Trainer::metrics(Outcomes &outcomes, const std::string &prefix) {
  gather(outcomes);
  return outcomes.metrics(labelKind_, prefix);
}

void Trainer::gather(Outcomes &outcomes) {
  if (ranks_ > 1) {
    // Every rank reports at the same steps, so these collectives match.
    comm_->allReduce(&outcomes.lossSum, 1, comm::DType::F64, comm::ReduceOp::Sum);
    comm_->allReduce(&outcomes.examples, 1, comm::DType::I64, comm::ReduceOp::Sum);
    comm_->allReduce(&outcomes.classified, 1, comm::DType::I64, comm::ReduceOp::Sum);
    comm_->allReduce(&outcomes.correct, 1, comm::DType::I64, comm::ReduceOp::Sum);
    comm_->allReduce(&outcomes.tokenLossSum, 1, comm::DType::F64, comm::ReduceOp::Sum);
    comm_->allReduce(&outcomes.tokens, 1, comm::DType::I64, comm::ReduceOp::Sum);
    int64_t mine = int64_t(outcomes.sample.scores().size());
    std::vector<int64_t> counts(static_cast<size_t>(ranks_));
    comm_->allGather(&mine, counts.data(), 1, comm::DType::I64);
    std::vector<size_t> sizes(counts.begin(), counts.end());
    size_t total = 0;
    for (size_t c : sizes)
      total += c;
    std::vector<float> scores(total), labels(total);
    comm_->allGatherV(outcomes.sample.scores().data(), scores.data(), sizes, comm::DType::F32);
    comm_->allGatherV(outcomes.sample.labels().data(), labels.data(), sizes, comm::DType::F32);
    outcomes.sample = ReservoirSample::of(std::move(scores), std::move(labels));
  }
}

std::vector<std::byte> Trainer::wholeTensor(const CheckpointTensor &tensor) const {
  // Rank 0 receives every other rank's rows in rank order; the others send.
  const Table &t = *tensor.shardOf;
  int64_t rowBytes = tensor.rowBytes(plan_);
  auto floats = [&](int64_t rows) { return size_t(rows * rowBytes) / sizeof(float); };
  const std::byte *mine = executor_.data<std::byte>(tensor.buffer);
  if (rank_ != 0) {
    if (t.rowsOn(rank_) > 0)
      comm_->send(mine, floats(t.rowsOn(rank_)), comm::DType::F32, 0, kShardTag);
    return {};
  }
  std::vector<std::byte> whole(size_t(t.rows * rowBytes));
  std::memcpy(whole.data() + t.firstRowOn(0) * rowBytes, mine, size_t(t.rowsOn(0) * rowBytes));
  for (int r = 1; r < ranks_; ++r)
    if (t.rowsOn(r) > 0)
      comm_->recv(whole.data() + t.firstRowOn(r) * rowBytes, floats(t.rowsOn(r)),
                  comm::DType::F32, r, kShardTag);
  return whole;
}

namespace {
/// A pass over whole tables (initialising, resuming, a checkpoint, the
/// export, the finite check) goes through disk tables once in order: the
/// system reads ahead while it runs.
class WholeTablePass {
public:
  explicit WholeTablePass(const Executor &executor) : executor_(executor) {
    executor_.adviseDiskAccess(DiskAccess::Sequential);
  }
  ~WholeTablePass() { executor_.adviseDiskAccess(DiskAccess::Random); }

private:
  const Executor &executor_;
};
} // namespace

void Trainer::save(const std::string &dir) const {
  WholeTablePass pass(executor_);
  // Rank 0 writes the whole (logical) checkpoint: replicated tensors from
  // its own copy, sharded tables with every rank's rows; any world size and
  // sharding can resume it.
  std::vector<CheckpointTensor> tensors = checkpointTensors(plan_);
  std::vector<std::vector<std::byte>> gathered;
  gathered.reserve(tensors.size());
  for (const CheckpointTensor &tensor : tensors)
    if (tensor.shardOf)
      gathered.push_back(wholeTensor(tensor));
  if (rank_ != 0)
    return;
  ckpt::CheckpointContent content;
  content.metadata = {{"model", plan_.model},
                      {"fingerprint", fingerprint(plan_)},
                      {"step", std::to_string(step_)},
                      {"position", std::to_string(position_)},
                      {"seed", std::to_string(seed_)}};
  // The words of a text's ids (row i of the tables the words are looked
  // up in), so a resumed run maps words to the same rows.
  if (trainVocabulary_)
    content.metadata["vocabulary"] = nlohmann::json(*trainVocabulary_).dump();
  if (plan_.config.lossScaling.enabled) {
    // fp16 loss scaling: the scale and its counts, so a resumed run scales
    // (and skips) exactly as the uninterrupted one. %.17g round-trips a double.
    const LossScaleState &ls = executor_.lossScale();
    char scale[32];
    std::snprintf(scale, sizeof scale, "%.17g", ls.scale);
    content.metadata["loss_scale"] = scale;
    content.metadata["loss_scale_good_steps"] = std::to_string(ls.goodSteps);
    content.metadata["loss_scale_skipped_steps"] = std::to_string(ls.skippedSteps);
  }
  size_t next = 0;
  for (const CheckpointTensor &tensor : tensors) {
    const Buffer &b = plan_.buffers[tensor.buffer];
    if (tensor.shardOf) {
      const std::vector<std::byte> &whole = gathered[next++];
      content.tensors.push_back({tensor.name, safetensorsDType(b.dtype), tensor.shape(plan_),
                                 whole.data(), whole.size()});
      continue;
    }
    content.tensors.push_back({tensor.name, safetensorsDType(b.dtype), b.shape,
                               executor_.data<std::byte>(tensor.buffer), size_t(b.bytes)});
  }
  if (std::optional<std::string> bad = describeNonFinite(content.tensors))
    throw std::runtime_error("not saving the checkpoint in '" + dir + "' at step " +
                             std::to_string(step_) + ": these values are not finite: " + *bad +
                             ". Training diverged (lower the learning rate or clip gradients); "
                             "the checkpoint already there is kept");
  ckpt::saveCheckpoint(dir, content);
}

std::vector<ckpt::TensorView> Trainer::localTensors() const {
  std::vector<ckpt::TensorView> views;
  for (const CheckpointTensor &tensor : checkpointTensors(plan_)) {
    const Buffer &b = plan_.buffers[tensor.buffer];
    size_t bytes = size_t(b.bytes);
    if (tensor.shardOf) // this rank's rows, at the start of the buffer
      bytes = size_t(tensor.shardOf->rowsOn(rank_) * tensor.rowBytes(plan_));
    if (bytes > 0)
      views.push_back({tensor.name, safetensorsDType(b.dtype), b.shape,
                       executor_.data<std::byte>(tensor.buffer), bytes});
  }
  return views;
}

void Trainer::requireFinite(const std::string &what, const std::string &hint) const {
  WholeTablePass pass(executor_);
  if (std::optional<std::string> bad = describeNonFinite(localTensors()))
    throw std::runtime_error(what + " are not finite: " + *bad + ". " + hint);
}

namespace {

/// A whole decimal count in [0, max]: the checkpoint's numbers are written
/// with std::to_string, so a sign, a space, a fraction or an exponent means
/// the header was edited.
uint64_t countField(const std::string &path, const std::string &key, const std::string &text,
                    uint64_t max) {
  std::optional<uint64_t> value = parseWholeNumber(text);
  if (!value || *value > max)
    throw ckpt::CheckpointError(path + ": metadata '" + key + "' is '" + text +
                                "', expected a whole number from 0 to " + std::to_string(max));
  return *value;
}

} // namespace

void Trainer::resume() {
  WholeTablePass pass(executor_);
  const bool verify = options_.verifyCheckpoint;
  // Streamed: each tensor goes from the file straight to its bytes in the
  // arena, a chunk at a time, so tables on disk larger than memory resume.
  // The metadata is checked (below) once the pass has verified it, and
  // before a missing or mismatched tensor is reported.
  ckpt::CheckpointRestore restore(options_.resumeDir,
                                  verify ? ckpt::Verify::Yes : ckpt::Verify::No);
  const std::string path = restore.path();
  if (!verify && rank_ == 0)
    std::fprintf(stderr, "embrun: warning: --no-verify: %s is resumed without checking its "
                         "checksum\n", path.c_str());
  for (const CheckpointTensor &tensor : checkpointTensors(plan_)) {
    const Buffer &b = plan_.buffers[tensor.buffer];
    if (tensor.shardOf) {
      // This rank's rows of the whole table (a rank without rows writes
      // nothing: its bytes may hold another rank's table).
      const Table &t = *tensor.shardOf;
      if (t.rowsOn(rank_) > 0)
        restore.addRows(tensor.name, safetensorsDType(b.dtype), tensor.shape(plan_),
                        t.firstRowOn(rank_), t.rowsOn(rank_),
                        executor_.data<std::byte>(tensor.buffer));
      continue;
    }
    restore.addTensor(tensor.name, safetensorsDType(b.dtype), b.shape,
                      executor_.data<std::byte>(tensor.buffer), size_t(b.bytes));
  }
  restore.run([&](const std::map<std::string, std::string> &metadata) {
    auto meta = [&](const std::string &key) {
      auto it = metadata.find(key);
      if (it == metadata.end())
        throw ckpt::CheckpointError(path + ": metadata '" + key + "' is missing");
      return it->second;
    };
    auto count = [&](const std::string &key, uint64_t max) {
      return countField(path, key, meta(key), max);
    };
    if (meta("model") != plan_.model)
      throw ckpt::CheckpointError("checkpoint in '" + options_.resumeDir +
                                  "' is of model '" + meta("model") +
                                  "', the plan is '" + plan_.model + "'");
    if (meta("fingerprint") != fingerprint(plan_))
      throw ckpt::CheckpointError(
          "checkpoint in '" + options_.resumeDir +
          "' was written by a plan with other parameters, tables or optimizers");
    const uint64_t kInt64Max = uint64_t(std::numeric_limits<int64_t>::max());
    uint64_t seed = count("seed", std::numeric_limits<uint64_t>::max());
    if (options_.seed && *options_.seed != seed)
      throw ckpt::CheckpointError(
          "the checkpoint was trained with seed " + std::to_string(seed) +
          "; --seed " + std::to_string(*options_.seed) +
          " would change the data order of the resumed run");
    seed_ = seed;
    step_ = int64_t(count("step", kInt64Max));
    position_ = count("position", kInt64Max);
    if (auto it = metadata.find("vocabulary"); it != metadata.end()) {
      nlohmann::json words = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
      bool ok = words.is_array() && !words.empty();
      for (const nlohmann::json &w : words)
        ok = ok && w.is_string() && !w.get_ref<const std::string &>().empty();
      if (!ok)
        throw ckpt::CheckpointError(path + ": metadata 'vocabulary' is not a JSON list of "
                                    "non-empty words");
      resumedVocabulary_ =
          std::make_shared<const std::vector<std::string>>(words.get<std::vector<std::string>>());
    }
    if (plan_.config.lossScaling.enabled) {
      const std::string scaleText = meta("loss_scale");
      char *end = nullptr;
      double scale = std::strtod(scaleText.c_str(), &end);
      if (scaleText.empty() || *end != '\0' || !(scale > 0) || !std::isfinite(scale))
        throw ckpt::CheckpointError(path + ": metadata 'loss_scale' is '" + scaleText +
                                    "', expected a positive finite number");
      executor_.setLossScale({scale, int64_t(count("loss_scale_good_steps", kInt64Max)),
                              int64_t(count("loss_scale_skipped_steps", kInt64Max))});
    }
  });
}

void Trainer::exportEmbeddings(const std::string &path) const {
  WholeTablePass pass(executor_);
  std::vector<ckpt::TensorView> tables;
  // Quantised tables are exported dequantised, as f32 like the others:
  // the export is for use elsewhere, not for resuming.
  std::vector<std::vector<float>> dequantised;
  dequantised.reserve(plan_.tables.size());
  std::vector<std::vector<std::byte>> gathered;
  gathered.reserve(plan_.tables.size());
  for (const Table &t : plan_.tables)
    if (!t.shardRows.empty()) // f32: -emb-distribute shards no other storage
      gathered.push_back(wholeTensor({t.name, t.buffer, &t}));
  if (rank_ != 0)
    return;
  size_t next = 0;
  for (const Table &t : plan_.tables) {
    const Buffer &b = plan_.buffers[t.buffer];
    if (!t.shardRows.empty()) {
      const std::vector<std::byte> &whole = gathered[next++];
      tables.push_back({t.name, "F32", {t.rows, t.dim}, whole.data(), whole.size()});
      continue;
    }
    if (t.storage == Storage::F32) {
      tables.push_back({t.name, "F32", b.shape, executor_.data<float>(t.buffer),
                        size_t(b.bytes)});
      continue;
    }
    std::vector<float> &values = dequantised.emplace_back(size_t(t.rows * t.dim));
    storage::QuantizedTable q{t.storage,
                              const_cast<std::byte *>(executor_.data<std::byte>(t.buffer)),
                              t.qparams >= 0
                                  ? const_cast<uint16_t *>(executor_.data<uint16_t>(t.qparams))
                                  : nullptr,
                              t.rows, t.dim};
    for (int64_t r = 0; r < t.rows; ++r)
      storage::dequantizeRow(q, r, values.data() + r * t.dim);
    // rows x dim, not the buffer's shape (int4 packs two values per byte).
    tables.push_back({t.name, "F32", {t.rows, t.dim}, values.data(),
                      values.size() * sizeof(float)});
  }
  if (std::optional<std::string> bad = describeNonFinite(tables))
    throw std::runtime_error("not exporting the tables to '" + path +
                             "': these values are not finite: " + *bad +
                             ". Training diverged (lower the learning rate or clip gradients)");
  std::map<std::string, std::string> metadata = {{"model", plan_.model},
                                                 {"step", std::to_string(step_)}};
  if (trainVocabulary_) // row i of a table the text's words index is word i
    metadata["vocabulary"] = nlohmann::json(*trainVocabulary_).dump();
  ckpt::exportEmbeddings(path, tables, metadata);
}

std::map<std::string, double> Trainer::evaluate() {
  // A token loss's logits come to the host for the perplexity only.
  executor_.setFetchPredictions(true);
  struct Restore {
    Executor &e;
    bool training;
    ~Restore() { e.setFetchPredictions(training); }
  } restore{executor_, executor_.lossTargets() == nullptr};
  DataSource source = options_.eval.value_or(DataSource{"synthetic", ""});
  data::StreamOptions eval = streamOptions(source, false);
  eval.textVocabulary = trainVocabulary_;
  auto stream = data::openStream(eval, specs_);
  Outcomes outcomes;
  data::Batch batch;
  std::vector<data::Batch> micro;
  while (stream->next(batch)) {
    const data::Batch &mine = localBatch(batch);
    if (!executor_.hasSchedule()) {
      executor_.loadBatch(mine);
      double loss = executor_.forward();
      record(outcomes, mine, mine.valid, loss, true);
      continue;
    }
    // A micro-batch plan evaluates micro-batch by micro-batch (the forward
    // kernels are sized for one); all-padding micro-batches are skipped
    // unless the forward exchanges rows of sharded tables: then every rank
    // runs every micro-batch, so that the exchanges match.
    data::splitBatch(mine, executor_.microBatches(), micro);
    for (const data::Batch &part : micro) {
      if (part.valid == 0 && !sharded_)
        continue;
      executor_.loadBatch(part);
      double loss = executor_.forward();
      record(outcomes, part, part.valid, loss, true);
    }
  }
  evalSkipped_ = stream->stats().skipped; // the same file each evaluation
  return metrics(outcomes, "eval_");
}

/// Prints the profile table and appends its record to the --log file. The
/// record is written after the summary, through a second stream opened for
/// appending: the Reporter's stream has written its last record by then, so
/// the two never interleave.
void Trainer::reportProfile(int64_t steps) {
  if (steps <= 0)
    return;
  ProfileReport report = profileReport(plan_, executor_, steps);
  printProfile(console_, report);
  nlohmann::ordered_json record = profileRecord(report, step_);
  if (diskTraffic_ && *diskTraffic_) {
    console_ << diskTraffic_->line() << std::flush;
    std::map<std::string, double> io;
    diskTraffic_->addTotal(io);
    for (const auto &[key, value] : io)
      record[key] = value;
  }
  if (options_.logPath.empty())
    return;
  std::ofstream log(options_.logPath, std::ios::out | std::ios::app);
  log << record.dump() << '\n' << std::flush;
  if (!log)
    throw std::runtime_error("writing the profile record to '" + options_.logPath +
                             "' failed");
}

TrainSummary Trainer::run() {
  if (const int64_t onDisk = executor_.placeDiskTables(options_.tableDir))
    std::fprintf(stderr, "embrun: tables on disk: %.1f MiB in scratch files in %s (read and "
                 "written through the page cache)\n", double(onDisk) / (1 << 20),
                 options_.tableDir.c_str());
  if (options_.prefetchRows && !executor_.runsAsynchronously()) {
    auto rows = std::make_shared<const RowPrefetcher>(executor_.plan(), executor_.hostArena(),
                                                      specs_);
    if (!rows->empty())
      rowPrefetcher_ = std::move(rows);
  }
  {
    WholeTablePass pass(executor_); // the initializers write every row
    executor_.initialize(seed_);
  }
  if (options_.lossScale) {
    if (!plan_.config.lossScaling.enabled)
      throw std::runtime_error("--loss-scale is for fp16 plans with dynamic loss scaling; "
                               "this plan's precision is " + enumString(plan_.config.precision));
    executor_.setLossScale({*options_.lossScale, 0, 0});
  }
  if (!options_.resumeDir.empty()) {
    resume();
    executor_.syncToDevice();
    requireFinite("the values resumed from '" + options_.resumeDir + "'",
                  "The checkpoint was written by a run that diverged; resume an earlier one");
  } else {
    requireFinite("the initial values", "Check the initializers (their range must be finite)");
  }

  const TrainingConfig &config = plan_.config;
  auto stream = data::openStream(streamOptions(options_.data, true), specs_,
                                 position_);
  // A text evaluation must read words with the training data's ids.
  if (rank_ == 0 && !stream->stats().description.empty())
    std::fprintf(stderr, "embrun: data: %s\n", stream->stats().description.c_str());
  if (const std::vector<std::string> *words = stream->vocabulary()) {
    trainVocabulary_ = std::make_shared<const std::vector<std::string>>(*words);
    if (!options_.resumeDir.empty() && !resumedVocabulary_ && rank_ == 0)
      std::fprintf(stderr,
                   "embrun: warning: the checkpoint in '%s' has no vocabulary (an embc before "
                   "2026-11-28 wrote it): the words' ids are built again from %s, which gives "
                   "the trained ids only if the file is the one it was trained on\n",
                   options_.resumeDir.c_str(), options_.data.path.c_str());
  }
  int64_t perStep = config.batchSize * dataRanks_ * config.gradAccumulation;
  int64_t steps = 0;
  if (options_.steps)
    steps = *options_.steps;
  else
    steps = int64_t(std::ceil(double(options_.epochs.value_or(1)) *
                              double(stream->examplesPerEpoch()) /
                              double(perStep)));
  int64_t reportEvery =
      options_.reportEvery ? options_.reportEvery : std::max<int64_t>(1, steps / 20);
  // Evaluate by default only where held-out data comes for free.
  bool evaluates = options_.eval.has_value() || options_.data.kind == "synthetic";
  // Early stopping follows the evaluations during training; the best one's
  // weights go to DIR/best beside the last checkpoint.
  std::optional<EarlyStop> stopper;
  if (options_.stopAt || options_.patience > 0 || !options_.monitor.empty()) {
    if (!evaluates || options_.evalEvery <= 0)
      throw std::runtime_error(
          "--stop-at, --patience and --monitor follow the evaluations during training: "
          "add --eval KIND:PATH --eval-every N (--eval synthetic on synthetic data)");
    stopper.emplace(options_.stopAt, options_.patience,
                    !options_.monitor.empty() ? options_.monitor
                    : options_.stopAt         ? options_.stopAt->metric
                                              : "eval_loss");
  }
  std::string stopReason;
  bool stoppedEarly = false;

  TrainSummary summary;
  Outcomes interval;
  interval.sample = ReservoirSample(Outcomes::kTrainingSample);
  std::map<std::string, double> lastTrain, lastEval;
  double trainSeconds = 0;
  int64_t examplesRun = 0;
  int64_t profiledSteps = 0;
  std::vector<data::Batch> micro; // the batch's micro-batches (-emb-pipeline)
  // On a device the host reads the next batch and copies it there while
  // the kernels of this one run (they wait for nothing on the host):
  // batches[current] runs, batches[current ^ 1] is the one loaded ahead.
  const bool loadAhead = executor_.runsAsynchronously() && !executor_.hasSchedule();
  data::Batch batches[2];
  int current = 0;
  bool loadedAhead = false;
  std::exception_ptr aheadError; // thrown when that batch's turn comes, as before
  HostTimes host;
  diskTraffic_.emplace(plan_, step_);
  // A train report's metrics (an AUC over every prediction since the last
  // report: ~90 ms for 1.3M) are computed beside the next steps on a
  // device, where the host would otherwise leave it idle; the report is
  // printed and logged when they are ready, before anything else is.
  struct PendingReport {
    ReportRecord record;
    std::future<std::map<std::string, double>> values;
  };
  std::optional<PendingReport> pendingReport;
  auto publishReport = [&](bool wait) {
    if (!pendingReport || (!wait && pendingReport->values.wait_for(std::chrono::seconds(0)) !=
                                        std::future_status::ready))
      return;
    auto t = Clock::now();
    lastTrain = pendingReport->values.get();
    host.metrics += secondsSince(t);
    for (const auto &[key, value] : lastTrain)
      pendingReport->record.values[key] = value;
    reporter_.progress(pendingReport->record);
    reporter_.record(pendingReport->record);
    pendingReport.reset();
  };
  // Raw ids per hashed bucket, over the batches this run trains on.
  HashCollisions collisions(options_.hashStats ? hashedFeatures(plan_)
                                               : std::vector<HashedFeature>{},
                            specs_);
  auto fetch = [&](int which) {
    auto t = Clock::now();
    stream->next(batches[which]);
    if (!collisions.empty())
      collisions.add(batches[which]);
    host.data += secondsSince(t);
    if (executor_.hasSchedule())
      return; // loaded micro-batch by micro-batch
    t = Clock::now();
    executor_.loadBatch(localBatch(batches[which], which));
    host.load += secondsSince(t);
  };
  double paddedSum = 0; // positions the batches since the last report ran at
  int64_t paddedCount = 0;
  // The reader's counters and the host's data wait at the last report.
  data::BatchStream::Fill lastFill = stream->fill();
  double lastDataWait = 0;
  int64_t lastReportStep = step_;
  auto t0 = Clock::now();
  for (int64_t i = 0; i < steps; ++i) {
    const auto stepStart = Clock::now();
    const bool last = i + 1 == steps;
    // An evaluation loads its own batches: none is loaded ahead of it.
    const bool evaluatesAfter =
        evaluates && ((options_.evalEvery && (step_ + 1) % options_.evalEvery == 0) || last);
    double stepLoss = 0, stepPositions = 0;
    for (int64_t a = 0; a < config.gradAccumulation; ++a) {
      if (loadedAhead) {
        current ^= 1;
        loadedAhead = false;
        if (aheadError)
          std::rethrow_exception(std::exchange(aheadError, nullptr));
      } else {
        // Loaded before the last step's update is waited for: on a GPU its
        // inputs travel while that update runs.
        fetch(current);
      }
      const data::Batch &batch = batches[current];
      const data::Batch &mine = localBatch(batch, current);
      if (a == 0) {
        executor_.zeroGradients();
        executor_.beginStep(step_ + 1, learningRateScale(config, step_));
      }
      if (executor_.hasSchedule()) {
        // -emb-pipeline: the batch runs as micro-batches; the loss is their
        // mean and the metrics see every micro-batch's predictions.
        data::splitBatch(mine, executor_.microBatches(), micro);
        stepLoss += executor_.runSchedule(micro, [&](int32_t mb, float loss) {
          record(interval, micro[size_t(mb)], micro[size_t(mb)].size, loss);
        });
      } else {
        executor_.startForwardBackward();
        if (loadAhead && (a + 1 < config.gradAccumulation || !(last || evaluatesAfter))) {
          try {
            fetch(current ^ 1);
          } catch (...) {
            aheadError = std::current_exception();
          }
          loadedAhead = true;
        }
        publishReport(false);
        auto t = Clock::now();
        double loss = executor_.finishForwardBackward();
        host.wait += secondsSince(t);
        stepLoss += loss;
        record(interval, mine, mine.size, loss);
      }
      position_ = batch.position;
      // The positions the batch ran at (dynamic padding: its longest
      // sequence, rounded up to 8; max_len otherwise).
      if (!executor_.sequenceLengths().empty()) {
        paddedSum += double(executor_.sequenceLengths()[0]);
        stepPositions += double(executor_.sequenceLengths()[0]);
        ++paddedCount;
      }
    }
    if (!std::isfinite(stepLoss))
      throw std::runtime_error("the loss became " + std::to_string(stepLoss) +
                               " at step " + std::to_string(step_ + 1) +
                               ": training diverged (lower the learning rate "
                               "or clip gradients)");
    executor_.queueUpdate(step_ + 1, learningRateScale(config, step_));
    ++step_;
    ++host.steps;
    // The CPU backend sizes its team by the step times (TeamTuner.h); a
    // profile keeps one size so its per-kernel times stay comparable.
    if (!options_.profile) {
      // With dynamic padding a step's cost follows its batch's length: the
      // team-size trials compare the time per max_len-step, not whichever
      // lengths each candidate's steps happened to get.
      double work = 1.0;
      if (stepPositions > 0)
        work = stepPositions / (double(config.gradAccumulation) *
                                double(executor_.sequenceLayout().sequences[0].maxLen));
      if (std::optional<BackendNote> note =
              executor_.stepTimed(secondsSince(stepStart), work)) {
        // Logged every time; printed when the decision changes (measuring
        // again every 20 s mostly confirms it).
        reporter_.record(ReportRecord{note->event, step_, 0, note->values});
        const std::string decided = note->line.substr(0, note->line.find(" ("));
        if (rank_ == 0 && decided != lastNote_)
          console_ << "embrun: " << note->line << "\n";
        lastNote_ = decided;
      }
    }
    examplesRun += perStep;
    // The first step pays one-off costs (first touch of the arena, thread
    // pool start-up); leave it out of the profile when there are others.
    if (options_.profile && i == 0 && steps > 1)
      executor_.resetTimings();
    else
      ++profiledSteps;

    if ((i + 1) % reportEvery == 0 || last) {
      executor_.settleUpdate(); // the loss scale it reports, the time it took
      trainSeconds += secondsSince(t0);
      ReportRecord r{"train", step_,
                     double(position_) / double(stream->examplesPerEpoch()), {}};
      r.values["samples_per_s"] = double(examplesRun) / trainSeconds;
      r.values["lr_scale"] = learningRateScale(config, step_ - 1);
      if (paddedCount > 0) {
        r.values["padded_len"] = paddedSum / double(paddedCount);
        paddedSum = 0, paddedCount = 0;
      }
      if (config.lossScaling.enabled) {
        r.values["loss_scale"] = executor_.lossScale().scale;
        r.values["skipped_steps"] = double(executor_.lossScale().skippedSteps);
      }
      // Memory and the reader, for scripts (logged, not on the progress line).
      r.values["rss_bytes"] = double(residentBytes());
      r.values["arena_bytes"] = double(plan_.arenaBytes);
      if (const int64_t device = executor_.backendDeviceBytes())
        r.values["device_bytes"] = double(device);
      const data::BatchStream::Fill fill = stream->fill();
      if (fill.capacity > 0) {
        r.values["reader_queue_fill"] = double(fill.ready) / double(fill.capacity);
        if (fill.seconds > lastFill.seconds)
          r.values["reader_rows_per_thread_s"] =
              double(fill.rows - lastFill.rows) / (fill.seconds - lastFill.seconds);
      }
      lastFill = fill;
      if (step_ > lastReportStep)
        r.values["data_wait_ms_per_step"] =
            (host.data - lastDataWait) * 1e3 / double(step_ - lastReportStep);
      lastDataWait = host.data, lastReportStep = step_;
      diskTraffic_->addSince(step_, r.values);
      auto t = Clock::now();
      gather(interval);
      host.metrics += secondsSince(t);
      publishReport(true); // the last one first
      const bool beside = executor_.runsAsynchronously();
      pendingReport.emplace(PendingReport{
          std::move(r), std::async(beside ? std::launch::async : std::launch::deferred,
                                   [this, outcomes = std::move(interval)] {
                                     return outcomes.metrics(labelKind_, "");
                                   })});
      if (!beside)
        publishReport(true);
      interval = Outcomes();
      interval.sample = ReservoirSample(Outcomes::kTrainingSample);
      t0 = Clock::now();
    }
    if (evaluates && ((options_.evalEvery && step_ % options_.evalEvery == 0) ||
                      last)) {
      publishReport(true);
      trainSeconds += secondsSince(t0);
      lastEval = evaluate();
      // The epoch of the training data the evaluated weights have seen.
      ReportRecord r{"eval", step_, double(position_) / double(stream->examplesPerEpoch()),
                     lastEval};
      reporter_.progress(r);
      reporter_.record(r);
      if (stopper) {
        const EarlyStop::Verdict verdict = stopper->observe(step_, lastEval);
        if (verdict.best && !options_.saveDir.empty()) {
          executor_.syncToHost();
          save(options_.saveDir + "/best");
        }
        stopReason = verdict.stop;
      }
      t0 = Clock::now();
    }
    if (!options_.saveDir.empty() && options_.saveEvery &&
        step_ % options_.saveEvery == 0 && !last && stopReason.empty()) {
      publishReport(true);
      executor_.syncToHost();
      save(options_.saveDir);
    }
    if (!stopReason.empty() && !last) {
      if (rank_ == 0)
        std::fprintf(stderr, "embrun: stopping early at step %lld: %s\n", (long long)step_,
                     stopReason.c_str());
      stoppedEarly = true;
      break;
    }
  }
  publishReport(true);
  diskTraffic_->stop(step_); // the training's, not the final passes'
  executor_.syncToHost(); // what is saved, exported and checked below
  if (!options_.saveDir.empty())
    save(options_.saveDir); // refuses non-finite values before writing
  if (!options_.exportEmbeddings.empty())
    exportEmbeddings(options_.exportEmbeddings);
  // The loss alone misses a NaN that a ReLU masks or an overflowed
  // optimizer state: no run ends well with one. A final save has scanned
  // every checkpointed tensor already.
  if (options_.saveDir.empty())
    requireFinite("after " + std::to_string(step_) + " steps, the trained values",
                  "Training diverged (lower the learning rate or clip gradients)");

  skipped_ = stream->stats().skipped + evalSkipped_;
  summary.steps = step_;
  summary.trainLoss = lastTrain.count("loss") ? lastTrain["loss"] : NAN;
  summary.eval = lastEval;
  summary.samplesPerSecond = trainSeconds > 0 ? double(examplesRun) / trainSeconds : 0;
  summary.peakMemoryBytes = int64_t(peakResidentBytes());
  summary.skippedLines = skipped_;

  ReportRecord r{"summary", step_,
                 double(position_) / double(stream->examplesPerEpoch()), {}};
  for (auto &[k, v] : lastTrain)
    r.values[k] = v;
  if (int threads = executor_.backendThreads())
    r.values["cpu_threads"] = threads;
  for (auto &[k, v] : lastEval)
    r.values[k] = v;
  r.values["samples_per_s"] = summary.samplesPerSecond;
  r.values["peak_memory_bytes"] = double(summary.peakMemoryBytes);
  r.values["arena_bytes"] = double(plan_.arenaBytes);
  r.values["skipped_lines"] = double(skipped_);
  for (const auto &[feature, rate] : collisions.rates())
    r.values["hash_collisions_" + feature] = rate;
  if (stopper && stopper->bestStep()) {
    r.values["stopped_early"] = stoppedEarly ? 1 : 0;
    r.values["best_step"] = double(*stopper->bestStep());
    r.values["best_" + stopper->monitor()] = stopper->bestValue();
  }
  if (config.lossScaling.enabled) {
    r.values["loss_scale"] = executor_.lossScale().scale;
    r.values["skipped_steps"] = double(executor_.lossScale().skippedSteps);
  }
  // Logged (--log), not printed: what the steps waited for on the host.
  ReportRecord times{"host", step_, 0, {}};
  host.addTo(times.values, executor_);
  reporter_.record(times);
  reporter_.summary(r);
  if (!options_.plotPath.empty() && rank_ == 0) {
    PlotRun run{plan_.model, {}};
    for (const ReportRecord &kept : reporter_.kept())
      if (kept.event == "train" || kept.event == "eval")
        run.records.push_back(LogRecord{kept.event, double(kept.step), kept.values});
    writePlot(options_.plotPath, {run});
  }
  if (options_.profile)
    reportProfile(profiledSteps);
  return summary;
}

} // namespace

TrainSummary embc::runtime::train(const Plan &plan, const RunOptions &options,
                                  std::unique_ptr<Backend> backend, std::ostream &console,
                                  bool tty, comm::Communicator *comm) {
  Trainer trainer(plan, options, std::move(backend), console, tty, comm);
  return trainer.run();
}
