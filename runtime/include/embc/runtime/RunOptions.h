//===- RunOptions.h - embrun command line -----------------------*- C++ -*-===//
//
// What a training run is asked to do. Parsed from embrun's command line with
// CLI11; kept apart from main() so it can be tested.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_RUNOPTIONS_H
#define EMBC_RUNTIME_RUNOPTIONS_H

#include "embc/runtime/backends/BackendInfo.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace embc::runtime {

/// A data source: KIND:PATH (criteo:train.tsv, movielens:u1.base,
/// text:corpus.txt), the built-in `synthetic` generator, or kind `schema`:
/// a path read through the plan's data schema.
struct DataSource {
  std::string kind = "synthetic";
  std::string path;
};

/// Early stopping (docs/training.md, "Early stopping"): a target on an
/// evaluation metric (--stop-at eval_auc>=0.8025), and patience (stop after
/// `patience` evaluations without a better `monitor`).
struct StopTarget {
  std::string metric; ///< an evaluation record's key: eval_auc, eval_loss, ...
  bool atLeast = true; ///< >= (else <=)
  double value = 0;
};

struct RunOptions {
  std::string planPath;
  std::optional<int64_t> steps; ///< 0 (with saveDir): write the initial checkpoint only
  std::optional<int64_t> epochs;
  DataSource data;
  std::optional<DataSource> eval;
  /// Text data (training and evaluation): the window, word2vec's min_count
  /// and its frequent-word subsampling threshold (0: off).
  int textWindow = 5;
  /// Training data from a file: a fresh order each epoch (false: file order).
  bool shuffle = true;
  /// With shuffle: 0 the whole epoch, N each window of N examples
  /// (--shuffle buffer:N; StreamOptions::shuffleWindow).
  uint64_t shuffleWindow = 0;
  int64_t textMinCount = 1;
  double textSample = 0;
  int64_t evalEvery = 0;
  int64_t reportEvery = 0; ///< 0: about 20 reports per run
  int64_t saveEvery = 0;   ///< 0: checkpoint only at the end
  std::optional<uint64_t> seed;
  std::string logPath;
  /// Training curves at the end (metrics/Plot.h): FILE.svg or FILE.html.
  std::string plotPath;
  std::string saveDir;
  std::string resumeDir;
  /// --no-verify: resume from a checkpoint whose checksum is missing or wrong.
  bool verifyCheckpoint = true;
  std::string exportEmbeddings;
  int threads = 0; ///< 0: all cores
  std::string device = "auto"; ///< auto or a backend's name (backends/Registry.h)
  bool cudaGraphs = true;       ///< CUDA: replay captured graphs (--no-graphs: eager)
  std::string onBadData = "fail"; ///< fail or skip
  bool profile = false; ///< time every kernel launch; print and log a per-op table
  /// Sequence features: "batch" runs each batch at its longest sequence
  /// (rounded up to a multiple of 8), "max_len" at the plan's max_len
  /// (docs/training.md, "Dynamic padding").
  std::string padding = "batch";
  /// Training on a file with a sequence feature: batches of alike lengths
  /// from windows of this many batches (StreamOptions::lengthBuckets; 0: off).
  int64_t lengthBuckets = 0;
  /// MiB of parsed rows a data file may hold in memory: data that fits is
  /// held whole (and shuffled whole); larger data is streamed, shuffled in
  /// windows of a sixteenth of it (StreamOptions::residentBudget).
  int64_t dataMemoryMiB = 1024;
  /// Where `disk` tables get their scratch files (removed at exit).
  std::string tableDir = "/tmp";
  /// Read the `disk` tables' rows of each batch ahead while the data loader
  /// fills it (RowPrefetcher.h); off only to measure against.
  bool prefetchRows = true;
  /// fp16 plans: the initial dynamic loss scale instead of the plan's
  /// config.loss_scaling.initial (a fresh run only; a resume keeps the
  /// checkpoint's scale).
  std::optional<double> lossScale;
  /// Count raw ids per hashed bucket and report each hashed feature's
  /// collision rate at the end (HashCollisions.h; costs the trainer ~100 ns
  /// an id, so off by default).
  bool hashStats = false;
  /// Stop at the first evaluation that meets it.
  std::optional<StopTarget> stopAt;
  /// Stop after this many evaluations without a better `monitor` (0: never).
  int64_t patience = 0;
  /// The metric patience and the best checkpoint follow ("" when not
  /// given: stopAt's metric, else eval_loss).
  std::string monitor;
};

/// Result of parsing: options, or a message (help text or error) and the
/// exit code to leave with.
struct ParseResult {
  std::optional<RunOptions> options;
  std::string message;
  int exitCode = 0;
};

/// Parses embrun's arguments. Never exits the process. `backends` are what
/// --device may name besides `auto` (the registry's knownBackends(),
/// backends/Registry.h); --help lists them.
ParseResult parseRunOptions(const std::vector<std::string> &args,
                            const std::vector<BackendInfo> &backends);

/// Parses "KIND:PATH" or "synthetic"; returns an error message on failure.
std::optional<std::string> parseDataSource(const std::string &text,
                                           DataSource &out);

/// The runtime's version string.
const char *runtimeVersion();

} // namespace embc::runtime

#endif // EMBC_RUNTIME_RUNOPTIONS_H
