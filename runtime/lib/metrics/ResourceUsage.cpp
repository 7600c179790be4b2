//===- ResourceUsage.cpp - peak memory and I/O of this process ------------===//
//
// The peak resident set is what the memory report's arena size is compared
// against: it includes the arena plus everything else (data buffers,
// libraries), so the difference shows runtime overhead.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Metrics.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <cstdio>

#include <sys/resource.h>
#include <unistd.h>

size_t embc::runtime::residentBytes() {
  std::FILE *statm = std::fopen("/proc/self/statm", "r");
  if (!statm)
    return 0;
  unsigned long long size = 0, resident = 0;
  const bool read = std::fscanf(statm, "%llu %llu", &size, &resident) == 2;
  std::fclose(statm);
  const long page = sysconf(_SC_PAGESIZE);
  return read && page > 0 ? size_t(resident) * size_t(page) : 0;
}

size_t embc::runtime::peakResidentBytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    throw std::runtime_error(std::string("getrusage failed: ") +
                             std::strerror(errno));
  // Linux reports ru_maxrss in KiB.
  return static_cast<size_t>(usage.ru_maxrss) * 1024;
}

embc::runtime::IoCounters embc::runtime::ioCounters() {
  IoCounters counters;
  if (std::FILE *io = std::fopen("/proc/self/io", "r")) {
    char key[64];
    unsigned long long value = 0;
    while (std::fscanf(io, "%63[^:]: %llu\n", key, &value) == 2) {
      if (std::strcmp(key, "read_bytes") == 0)
        counters.readBytes = double(value);
      else if (std::strcmp(key, "write_bytes") == 0)
        counters.writtenBytes = double(value);
    }
    std::fclose(io);
  }
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) == 0)
    counters.majorFaults = double(usage.ru_majflt);
  return counters;
}
