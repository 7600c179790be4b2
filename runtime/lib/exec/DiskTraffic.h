//===- DiskTraffic.h - what disk tables cost, per step ----------*- C++ -*-===//
//
// A disk table's rows and optimizer state are pages of a file, read and
// written through the page cache. What that costs a step shows in the
// process's storage traffic and major page faults, which the train records
// (--log) and the --profile report give per step when a plan has disk
// tables.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_EXEC_DISKTRAFFIC_H
#define EMBC_RUNTIME_LIB_EXEC_DISKTRAFFIC_H

#include "embc/runtime/Metrics.h"
#include "embc/runtime/Plan.h"

#include <map>
#include <optional>
#include <string>

namespace embc::runtime {

class DiskTraffic {
public:
  /// Counts nothing unless `plan` has a disk table.
  DiskTraffic(const Plan &plan, int64_t step);
  explicit operator bool() const { return enabled_; }

  /// Per step since the last call (or the start): disk_read_bytes_per_step,
  /// disk_written_bytes_per_step, major_faults_per_step into `values`.
  void addSince(int64_t step, std::map<std::string, double> &values);
  /// Training ends at `step`: the passes after it (a checkpoint, the
  /// finite check read whole tables) are not counted.
  void stop(int64_t step);
  /// Per step from the start to the stop (or now), for --profile.
  void addTotal(std::map<std::string, double> &values) const;
  /// "disk tables: 12.3 MB read, 4.5 MB written, 67.0 major faults per
  /// step (steps 1-30)".
  std::string line() const;

private:
  bool enabled_ = false;
  IoCounters start_, last_;
  std::optional<IoCounters> end_;
  int64_t startStep_ = 0, lastStep_ = 0, endStep_ = 0;
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_LIB_EXEC_DISKTRAFFIC_H
