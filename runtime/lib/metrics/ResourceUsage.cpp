//===- ResourceUsage.cpp - peak memory of this process --------------------===//
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

#include <sys/resource.h>

size_t embc::runtime::peakResidentBytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    throw std::runtime_error(std::string("getrusage failed: ") +
                             std::strerror(errno));
  // Linux reports ru_maxrss in KiB.
  return static_cast<size_t>(usage.ru_maxrss) * 1024;
}
