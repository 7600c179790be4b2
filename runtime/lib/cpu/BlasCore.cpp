//===- BlasCore.cpp - OpenBLAS kernels for the CPU it runs on -------------===//

#include "embc/runtime/cpu/BlasCore.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <unistd.h>

// Weak: absent unless the BLAS linked in is OpenBLAS.
extern "C" char *openblas_get_corename(void) __attribute__((weak));

namespace embc::runtime::cpu {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

} // namespace

std::string blasCore() {
  if (!openblas_get_corename)
    return "";
  const char *name = openblas_get_corename();
  return name ? name : "";
}

std::string betterBlasCore() {
  const std::string core = lower(blasCore());
  if (core.empty())
    return "";
#if defined(__x86_64__)
  // Cores whose sgemm uses the ISA named: leave those alone.
  static const std::set<std::string> avx512 = {"skylakex", "cooperlake", "sapphirerapids"};
  static const std::set<std::string> avx2 = {"haswell", "zen", "skylakex", "cooperlake",
                                             "sapphirerapids"};
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return avx512.count(core) ? "" : "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return avx2.count(core) ? "" : "Haswell";
#endif
  return "";
}

void useBestBlasKernels(char **argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("EMBC_BLAS_CORE_SET"))
    return;
  const std::string core = betterBlasCore();
  if (core.empty())
    return;
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  setenv("EMBC_BLAS_CORE_SET", "1", 1);
  execv("/proc/self/exe", argv);
  // The exec failed (no /proc): go on with the fallback kernels.
  unsetenv("OPENBLAS_CORETYPE");
}

} // namespace embc::runtime::cpu
