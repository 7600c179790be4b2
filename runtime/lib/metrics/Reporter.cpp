//===- Reporter.cpp - progress line, summary and JSON-lines log -----------===//
//
// The console gets one line per report, formatted for people; on a terminal
// training progress rewrites a single live line so a long run does not
// scroll thousands of lines, while eval results and the summary stay on
// screen. The log gets the raw numbers as JSON, one object per line, flushed
// at once so a tool tailing it (or a crash) never sees a partial record.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Metrics.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

using namespace embc::runtime;

namespace {

/// Console order: the headline numbers first, then anything else by name.
const char *const kPreferredOrder[] = {
    "loss",          "auc", "accuracy",         "rmse",
    "samples_per_s", "lr",  "peak_memory_bytes"};

std::string displayName(const std::string &key) {
  if (key == "samples_per_s")
    return "samples/s";
  if (key == "peak_memory_bytes")
    return "peak mem";
  return key;
}

std::vector<std::pair<std::string, std::string>>
displayedValues(const ReportRecord &r) {
  std::vector<std::pair<std::string, std::string>> shown;
  auto add = [&](const std::string &key, double value) {
    shown.emplace_back(displayName(key), formatMetric(key, value));
  };
  for (const char *key : kPreferredOrder)
    if (auto it = r.values.find(key); it != r.values.end())
      add(it->first, it->second);
  for (const auto &[key, value] : r.values)
    if (std::find(std::begin(kPreferredOrder), std::end(kPreferredOrder),
                  key) == std::end(kPreferredOrder))
      add(key, value);
  return shown;
}

std::string epochText(double epoch) {
  if (!std::isfinite(epoch))
    return formatMetric("epoch", epoch); // "nan" / "inf"
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", epoch);
  return text;
}

/// Values a train record carries for scripts (docs/training.md, "Metrics
/// and logs": memory, the reader, disk tables' traffic) but the progress
/// line leaves out.
const char *const kLoggedOnly[] = {"rss_bytes",        "arena_bytes",
                                   "device_bytes",     "reader_queue_fill",
                                   "reader_rows_per_thread_s", "data_wait_ms_per_step",
                                   "disk_read_bytes_per_step", "disk_written_bytes_per_step",
                                   "major_faults_per_step"};

std::string progressLine(const ReportRecord &r) {
  std::string line = r.event + " step " + std::to_string(r.step) + " | epoch " +
                     epochText(r.epoch);
  ReportRecord shown = r;
  if (r.event == "train")
    for (const char *key : kLoggedOnly)
      shown.values.erase(key);
  for (const auto &[name, text] : displayedValues(shown))
    line += " | " + name + " " + text;
  return line;
}

nlohmann::json finiteOrNull(double value) {
  if (std::isfinite(value))
    return value;
  return nullptr;
}

} // namespace

Reporter::Reporter(std::ostream &console, bool consoleIsTty,
                   const std::string &jsonlPath)
    : console_(console), tty_(consoleIsTty), jsonlPath_(jsonlPath) {
  if (jsonlPath_.empty())
    return;
  errno = 0;
  log_.open(jsonlPath_, std::ios::out | std::ios::trunc);
  if (!log_)
    throw std::runtime_error("cannot open metrics log '" + jsonlPath_ + "': " +
                             (errno ? std::strerror(errno) : "open failed"));
}

Reporter::~Reporter() { endLiveLine(); }

void Reporter::endLiveLine() {
  if (liveLineWidth_ == 0)
    return;
  console_ << '\n' << std::flush;
  liveLineWidth_ = 0;
}

void Reporter::progress(const ReportRecord &r) {
  std::string line = progressLine(r);
  if (!tty_) {
    console_ << line << '\n' << std::flush;
    return;
  }
  if (r.event != "train") {
    endLiveLine();
    console_ << line << '\n' << std::flush;
    return;
  }
  // '\r' returns to the start of the live line; spaces erase whatever the
  // previous, longer line left behind (works on any terminal, no escapes).
  std::string padding(
      liveLineWidth_ > line.size() ? liveLineWidth_ - line.size() : 0, ' ');
  console_ << '\r' << line << padding << std::flush;
  liveLineWidth_ = line.size();
}

void Reporter::record(const ReportRecord &r) {
  if (keep_)
    kept_.push_back(r);
  if (jsonlPath_.empty())
    return;
  nlohmann::ordered_json object;
  object["event"] = r.event;
  object["step"] = r.step;
  object["epoch"] = finiteOrNull(r.epoch);
  for (const auto &[key, value] : r.values) {
    if (key == "event" || key == "step" || key == "epoch")
      throw std::invalid_argument("metric name '" + key +
                                  "' is reserved in the metrics log");
    object[key] = finiteOrNull(value);
  }
  log_ << object.dump() << '\n' << std::flush;
  if (!log_)
    throw std::runtime_error("writing metrics log '" + jsonlPath_ + "' failed");
}

void Reporter::summary(const ReportRecord &r) {
  endLiveLine();
  console_ << "summary: step " << r.step << ", epoch " << epochText(r.epoch)
           << '\n';
  auto shown = displayedValues(r);
  size_t width = 0;
  for (const auto &entry : shown)
    width = std::max(width, entry.first.size());
  for (const auto &[name, text] : shown)
    console_ << "  " << name << std::string(width - name.size() + 2, ' ')
             << text << '\n';
  console_ << std::flush;
  ReportRecord logged = r;
  logged.event = "summary";
  record(logged);
}
