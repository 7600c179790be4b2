//===- DiskTrafficTest.cpp - disk tables' traffic per step ----------------===//
//
// DiskTraffic (runtime/lib/exec/DiskTraffic.h) counts only for a plan with
// a disk table, and gives the process's storage bytes and major faults per
// step between calls, and over the training once it is stopped: writing and syncing a file shows in the bytes written
// where the system accounts them (/proc/self/io).
//
//===----------------------------------------------------------------------===//

#include "DiskTraffic.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace embc::runtime;

namespace {

Plan planWith(Placement placement) {
  Plan plan;
  plan.tables.resize(2);
  plan.tables[1].placement = placement;
  return plan;
}

TEST(DiskTraffic, NothingWithoutADiskTable) {
  for (Placement p : {Placement::Device, Placement::Host}) {
    DiskTraffic traffic(planWith(p), 0);
    EXPECT_FALSE(bool(traffic));
    std::map<std::string, double> values;
    traffic.addSince(10, values);
    traffic.stop(10);
    traffic.addTotal(values);
    EXPECT_TRUE(values.empty());
    EXPECT_EQ(traffic.line(), "");
  }
}

TEST(DiskTraffic, PerStepBetweenCalls) {
  DiskTraffic traffic(planWith(Placement::Disk), 4);
  ASSERT_TRUE(bool(traffic));
  // 8 MiB written and synced in a file beside the test.
  const std::string path = std::filesystem::temp_directory_path() /
                           ("disk_traffic_" + std::to_string(getpid()));
  std::vector<char> bytes(8 << 20, 'x');
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
  std::remove(path.c_str());

  std::map<std::string, double> values;
  traffic.addSince(4, values); // no step since the start: nothing
  EXPECT_TRUE(values.empty());
  traffic.addSince(8, values); // 4 steps
  ASSERT_EQ(values.size(), 3u);
  for (const auto &[key, value] : values)
    EXPECT_GE(value, 0) << key;
  const bool accounted = std::ifstream("/proc/self/io").good() &&
                         values["disk_written_bytes_per_step"] > 0;
  if (accounted) // tmpfs and some containers account no block I/O
    EXPECT_GE(values["disk_written_bytes_per_step"], double(8 << 20) / 4 * 0.9);
  std::map<std::string, double> total;
  traffic.addTotal(total); // not stopped yet: nothing
  EXPECT_TRUE(total.empty());
  traffic.stop(8);
  traffic.addTotal(total);
  EXPECT_GE(total["disk_written_bytes_per_step"], values["disk_written_bytes_per_step"]);
  EXPECT_NE(traffic.line().find("disk tables: "), std::string::npos);
  EXPECT_NE(traffic.line().find("per step (steps 5-8)"), std::string::npos);
}

} // namespace
