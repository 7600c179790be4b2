//===- Metrics.h - metrics, progress line and JSON-lines log ----*- C++ -*-===//
//
// What a training run reports: loss, AUC/accuracy (CTR models), RMSE
// (rating models), throughput and peak memory. People watch a live progress
// line on a terminal (plain lines when the output is a file or pipe);
// scripts and hyper-parameter tools read a JSON-lines log with one object
// per report, so they never have to parse the human output.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_METRICS_H
#define EMBC_RUNTIME_METRICS_H

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace embc::runtime {

/// Exact ROC AUC: the probability that a random positive scores above a
/// random negative, ties counting one half (the average-rank formula).
/// Labels must be 0 or 1. Returns NaN when one class is absent or a score is
/// NaN (a diverged model); throws std::invalid_argument on size mismatch or
/// a label other than 0/1.
double computeAuc(const std::vector<float> &scores,
                  const std::vector<float> &labels);

/// Root mean squared error; NaN for empty input; throws
/// std::invalid_argument on size mismatch.
double computeRmse(const std::vector<float> &pred,
                   const std::vector<float> &target);

/// Binary accuracy of logits: a sample is predicted positive when its score
/// is > 0. Labels must be 0 or 1. NaN for empty input; throws
/// std::invalid_argument on size mismatch or a label other than 0/1.
double computeAccuracy(const std::vector<float> &logits,
                       const std::vector<float> &labels);

/// (score, label) pairs for a metric over an unbounded stream: every pair
/// while there are at most `limit` (0: no limit), then a uniform sample of
/// `limit` of them (reservoir sampling, algorithm R): after n offers each
/// pair is kept with probability limit / n. The draws come from a fixed
/// splitmix64 stream, so the same run keeps the same sample.
class ReservoirSample {
public:
  explicit ReservoirSample(size_t limit = 0) : limit_(limit) {}
  /// Every pair of `scores` and `labels`, with no limit (the samples of
  /// several ranks gathered).
  static ReservoirSample of(std::vector<float> scores, std::vector<float> labels) {
    ReservoirSample all;
    all.scores_ = std::move(scores);
    all.labels_ = std::move(labels);
    all.offered_ = all.scores_.size();
    return all;
  }
  void offer(float score, float label);
  const std::vector<float> &scores() const { return scores_; }
  const std::vector<float> &labels() const { return labels_; }
  uint64_t offered() const { return offered_; }
  bool empty() const { return scores_.empty(); }

private:
  std::vector<float> scores_, labels_;
  size_t limit_;
  uint64_t offered_ = 0;
  uint64_t random_ = 0x9E3779B97F4A7C15ull; ///< splitmix64 state
};

/// Peak resident set size of this process so far, in bytes.
size_t peakResidentBytes();
/// The resident set of this process now (/proc/self/statm; 0 where the
/// system does not say).
size_t residentBytes();

/// This process's storage traffic and major page faults so far: what disk
/// tables cost (their pages are read and written through the page cache).
/// Bytes from /proc/self/io (read_bytes: fetched from storage; write_bytes:
/// dirtied for storage), faults from getrusage; zeros where the system does
/// not say.
struct IoCounters {
  double readBytes = 0, writtenBytes = 0, majorFaults = 0;
};
IoCounters ioCounters();

/// "950.0", "12.3k", "4.56M", "1.20G" (per second, no unit).
std::string formatRate(double perSecond);
/// "512.0 MiB", "1.50 GiB".
std::string formatBytes(double bytes);
/// A value as the console shows it, chosen by its key: loss/auc/accuracy/
/// rmse with 4 decimals, samples_per_s via formatRate, keys ending in
/// "_bytes" via formatBytes, anything else in %g. Non-finite: "nan", "inf".
std::string formatMetric(const std::string &key, double value);

/// One report. `values` holds loss, auc, rmse, samples_per_s, lr,
/// peak_memory_bytes, ...; the keys event, step and epoch are reserved.
struct ReportRecord {
  std::string event; ///< "train", "eval", "summary"
  int64_t step = 0;
  double epoch = 0;
  std::map<std::string, double> values;
};

class Reporter {
public:
  /// `jsonlPath` "" means no log; otherwise the file is created or
  /// truncated, and std::runtime_error names the path if that fails.
  Reporter(std::ostream &console, bool consoleIsTty,
           const std::string &jsonlPath);
  ~Reporter();
  Reporter(const Reporter &) = delete;
  Reporter &operator=(const Reporter &) = delete;

  /// Shows `r` on the console. On a TTY a "train" record rewrites one live
  /// line in place ('\r', padded to erase the previous text); other events
  /// (e.g. "eval") end the live line and stay on screen. Not a TTY: one
  /// plain line per call.
  void progress(const ReportRecord &r);
  /// Appends `r` to the log as one JSON object
  /// {"event":..,"step":..,"epoch":..,<values>}, flushed; NaN/inf -> null.
  /// Does nothing without a log.
  void record(const ReportRecord &r);
  /// Ends the live line, prints a multi-line summary and logs it with
  /// event "summary".
  void summary(const ReportRecord &r);
  /// Also keeps every recorded record in memory (embrun --plot draws them).
  void keepRecords() { keep_ = true; }
  const std::vector<ReportRecord> &kept() const { return kept_; }

private:
  void endLiveLine();

  std::ostream &console_;
  bool tty_;
  std::string jsonlPath_;
  std::ofstream log_;
  size_t liveLineWidth_ = 0; ///< 0: no live line on screen
  bool keep_ = false;
  std::vector<ReportRecord> kept_;
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_METRICS_H
