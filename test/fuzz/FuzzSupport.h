//===- FuzzSupport.h - what the libFuzzer targets share ---------*- C++ -*-===//
//
// A broken invariant aborts (libFuzzer then records the input), and readers
// that take a path read each input from one scratch file per process.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_TEST_FUZZ_FUZZSUPPORT_H
#define EMBC_TEST_FUZZ_FUZZSUPPORT_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace embc::fuzz {

/// Prints "<target>: invariant violated: <what>" and aborts.
[[noreturn]] inline void violated(const char *target, const std::string &what) {
  std::fprintf(stderr, "%s: invariant violated: %s\n", target, what.c_str());
  std::abort();
}

/// A file of this process in the temporary directory ($TMPDIR), created once.
inline const std::string &scratchPath() {
  static const std::string path = [] {
    std::string name =
        (std::filesystem::temp_directory_path() / "embc-fuzz-input.XXXXXX").string();
    int fd = mkstemp(name.data());
    if (fd < 0)
      violated("fuzz", "cannot create a scratch file");
    close(fd);
    return name;
  }();
  return path;
}

/// Writes `size` bytes of `data` to scratchPath().
inline void writeScratch(const uint8_t *data, size_t size) {
  FILE *out = std::fopen(scratchPath().c_str(), "wb");
  if (!out || (size && std::fwrite(data, 1, size, out) != size))
    violated("fuzz", "cannot write the scratch file");
  std::fclose(out);
}

} // namespace embc::fuzz

#endif // EMBC_TEST_FUZZ_FUZZSUPPORT_H
