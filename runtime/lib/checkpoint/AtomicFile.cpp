//===- AtomicFile.cpp - temp file, fsync, rename --------------------------===//
//
// POSIX calls rather than iostreams: iostreams cannot fsync and lose errno,
// and both are needed (durability, and messages that say why a save failed).
//
//===----------------------------------------------------------------------===//

#include "AtomicFile.h"

#include "embc/runtime/checkpoint/Safetensors.h"
#include "embc/runtime/FreshFile.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace embc::runtime::checkpoint;
using embc::runtime::createFresh;
using embc::runtime::writeAll;

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmpPath_(path_ + ".tmp") {
  fd_ = createFresh(tmpPath_); // never through a link left at PATH.tmp
  if (fd_ < 0)
    fail("cannot create '" + tmpPath_ + "'", errno);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (committed_)
    return;
  // Only a temp file this writer created reaches here with fd_ >= 0 or after
  // a failed rename; a failed open leaves nothing to remove.
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmpPath_.c_str());
  }
}

void AtomicFileWriter::fail(const std::string &what, int error) {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(tmpPath_.c_str());
  }
  throw CheckpointError("cannot write '" + path_ + "': " + what + ": " +
                        std::strerror(error));
}

void AtomicFileWriter::write(const void *data, size_t bytes) {
  if (!writeAll(fd_, static_cast<const char *>(data), bytes))
    fail("writing '" + tmpPath_ + "' failed", errno);
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0)
    fail("fsync of '" + tmpPath_ + "' failed", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int error = errno;
    ::unlink(tmpPath_.c_str());
    fail("closing '" + tmpPath_ + "' failed", error);
  }
  if (::rename(tmpPath_.c_str(), path_.c_str()) != 0) {
    int error = errno;
    ::unlink(tmpPath_.c_str());
    fail("renaming '" + tmpPath_ + "' over it failed", error);
  }
  committed_ = true;
  // The rename is durable only once the directory entry is on disk.
  std::string dir = std::filesystem::path(path_).parent_path().string();
  if (dir.empty())
    dir = ".";
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0)
    fail("opening directory '" + dir + "' to fsync it failed", errno);
  int syncResult = ::fsync(dirFd);
  int syncError = errno;
  ::close(dirFd);
  // EINVAL: the filesystem does not support fsync on directories (some
  // network and FUSE filesystems); the file itself is already durable.
  if (syncResult != 0 && syncError != EINVAL)
    fail("fsync of directory '" + dir + "' failed", syncError);
}
