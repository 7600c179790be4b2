//===- DiskTraffic.cpp - what disk tables cost, per step ------------------===//

#include "DiskTraffic.h"

#include <algorithm>
#include <cstdio>

using namespace embc::runtime;

namespace {

void addPerStep(const IoCounters &from, const IoCounters &to, double steps,
                std::map<std::string, double> &values) {
  values["disk_read_bytes_per_step"] = (to.readBytes - from.readBytes) / steps;
  values["disk_written_bytes_per_step"] = (to.writtenBytes - from.writtenBytes) / steps;
  values["major_faults_per_step"] = (to.majorFaults - from.majorFaults) / steps;
}

} // namespace

DiskTraffic::DiskTraffic(const Plan &plan, int64_t step)
    : enabled_(std::any_of(plan.tables.begin(), plan.tables.end(),
                           [](const Table &t) { return t.placement == Placement::Disk; })),
      startStep_(step), lastStep_(step) {
  if (enabled_)
    start_ = last_ = ioCounters();
}

void DiskTraffic::addSince(int64_t step, std::map<std::string, double> &values) {
  if (!enabled_ || step <= lastStep_)
    return;
  const IoCounters now = ioCounters();
  addPerStep(last_, now, double(step - lastStep_), values);
  last_ = now, lastStep_ = step;
}

void DiskTraffic::stop(int64_t step) {
  if (enabled_ && !end_)
    end_ = ioCounters(), endStep_ = step;
}

void DiskTraffic::addTotal(std::map<std::string, double> &values) const {
  if (enabled_ && end_ && endStep_ > startStep_)
    addPerStep(start_, *end_, double(endStep_ - startStep_), values);
}

std::string DiskTraffic::line() const {
  std::map<std::string, double> v;
  addTotal(v);
  if (v.empty())
    return "";
  char text[160];
  std::snprintf(text, sizeof text,
                "  disk tables: %.1f MB read, %.1f MB written, %.1f major faults per step "
                "(steps %lld-%lld)\n",
                v["disk_read_bytes_per_step"] / 1e6, v["disk_written_bytes_per_step"] / 1e6,
                v["major_faults_per_step"], (long long)startStep_ + 1, (long long)endStep_);
  return text;
}
