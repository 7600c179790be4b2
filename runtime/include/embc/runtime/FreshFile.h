//===- FreshFile.h - create a temporary file that was not there -*- C++ -*-===//
//
// Saves write beside their target (PATH.tmp) and rename over it. A file or
// symbolic link already at PATH.tmp (left by a save that was killed, or
// planted) must never be written through: opening it with O_TRUNC would
// follow a link and overwrite whatever it points to. createFresh removes
// what is there (a link itself, never its target) and creates the file with
// O_EXCL | O_NOFOLLOW, so a link planted between the two makes the save fail
// instead of writing through it.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_FRESHFILE_H
#define EMBC_RUNTIME_FRESHFILE_H

#include <cerrno>
#include <cstddef>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace embc::runtime {

/// A new file at `path`, open for writing (mode 0644), or -1 with errno set.
inline int createFresh(const std::string &path) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(path.c_str(), kFlags, 0644);
  if (fd >= 0 || errno != EEXIST)
    return fd;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return -1;
  return ::open(path.c_str(), kFlags, 0644);
}

/// Writes all `bytes` to `fd` (short writes and EINTR retried); false with
/// errno set on failure. Linux caps one write() near 2 GiB, so each asks
/// for at most 1 GiB.
inline bool writeAll(int fd, const char *data, size_t bytes) {
  constexpr size_t kChunk = size_t(1) << 30;
  while (bytes > 0) {
    const ssize_t n = ::write(fd, data, bytes < kChunk ? bytes : kChunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    data += n, bytes -= size_t(n);
  }
  return true;
}

} // namespace embc::runtime

#endif // EMBC_RUNTIME_FRESHFILE_H
