//===- CommSupport.cpp - the watchdog and argument checks -----------------===//

#include "CommSupport.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

using namespace embc::runtime::comm;
using namespace embc::runtime::comm::detail;

double detail::resolveTimeout(const CommOptions &options) {
  if (const char *env = std::getenv("EMBC_COMM_TIMEOUT")) {
    char *end = nullptr;
    errno = 0;
    double seconds = std::strtod(env, &end);
    if (end == env || *end != '\0' || errno == ERANGE || !std::isfinite(seconds) || seconds <= 0)
      throw CommError("EMBC_COMM_TIMEOUT='" + std::string(env) +
                      "' is not a number of seconds > 0 (how long a collective may wait for its "
                      "peers before the job is aborted)");
    return seconds;
  }
  if (!std::isfinite(options.timeoutSeconds) || options.timeoutSeconds <= 0)
    throw CommError("CommOptions::timeoutSeconds is " + std::to_string(options.timeoutSeconds) +
                    "; it must be a number of seconds > 0");
  return options.timeoutSeconds;
}

std::string detail::formatBytes(size_t bytes) {
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  return text;
}

void detail::checkPerRank(const char *call, const char *what, const std::vector<size_t> &counts,
                          int size) {
  if (counts.size() != static_cast<size_t>(size))
    throw CommError(std::string(call) + ": " + what + " has " + std::to_string(counts.size()) +
                    " entries, expected one per rank (" + std::to_string(size) + ")");
}

void detail::checkRank(const char *call, const char *role, int peer, int size) {
  if (peer < 0 || peer >= size)
    throw CommError(std::string(call) + ": " + role + " " + std::to_string(peer) +
                    " is not a rank of this job (0.." + std::to_string(size - 1) + ")");
}

std::vector<size_t> detail::prefixSums(const std::vector<size_t> &counts) {
  std::vector<size_t> displs(counts.size());
  size_t at = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    displs[r] = at;
    at += counts[r];
  }
  return displs;
}

//===----------------------------------------------------------------------===//
// Watchdog
//===----------------------------------------------------------------------===//

Watchdog::Watchdog(int rank, double timeoutSeconds,
                   std::function<void(const std::string &)> abortJob)
    : rank_(rank), timeout_(timeoutSeconds), abortJob_(std::move(abortJob)),
      thread_([this] { run(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

uint64_t Watchdog::begin(const char *what, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t id = nextId_++;
  bool wasIdle = inFlight_.empty();
  inFlight_.push_back({id, what, bytes, Clock::now(), {}});
  // Only an idle watchdog sleeps without a deadline; a busy one polls anyway.
  if (wasIdle)
    changed_.notify_one();
  return id;
}

void Watchdog::watchUntil(const char *what, size_t bytes, Probe done) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool wasIdle = inFlight_.empty();
  inFlight_.push_back({nextId_++, what, bytes, Clock::now(), std::move(done)});
  if (wasIdle)
    changed_.notify_one();
}

void Watchdog::end(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = inFlight_.begin(); it != inFlight_.end(); ++it)
    if (it->id == id) {
      inFlight_.erase(it);
      return;
    }
}

void Watchdog::run() {
  using namespace std::chrono;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (inFlight_.empty()) {
      changed_.wait(lock, [&] { return stopping_ || !inFlight_.empty(); });
      continue;
    }
    changed_.wait_for(lock, milliseconds(100));
    if (stopping_)
      break;
    // Retire probed work that has completed (probes are cheap queries).
    for (auto it = inFlight_.begin(); it != inFlight_.end();)
      it = it->done && it->done() ? inFlight_.erase(it) : std::next(it);
    Clock::time_point now = Clock::now();
    for (const Entry &entry : inFlight_) {
      double waited = duration<double>(now - entry.start).count();
      if (waited > timeout_)
        fire(entry, waited);
    }
  }
}

void Watchdog::fire(const Entry &entry, double waited) {
  std::ostringstream message;
  message.precision(1);
  message << "embrun: rank " << (rank_ >= 0 ? std::to_string(rank_) : std::string("?")) << ": "
          << entry.what << " (" << formatBytes(entry.bytes)
          << ") waited " << std::fixed << waited
          << " s for its peers: a rank died or hangs; aborting the job";
  // abortJob prints the message and ends the job (the mutex stays held, so
  // no other call starts meanwhile); should it return, end this process.
  abortJob_(message.str());
  std::string text = message.str() + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
  std::_Exit(1);
}
