//===- AtomicFile.h - write a file so it appears whole or not at all ------===//
//
// Checkpoints must survive a crash or a full disk during a save: the bytes go
// to PATH.tmp, which is fsync'd and then renamed over PATH, so PATH is always
// either the old complete file or the new complete file. Private to
// EmbCheckpoint.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CHECKPOINT_ATOMICFILE_H
#define EMBC_RUNTIME_LIB_CHECKPOINT_ATOMICFILE_H

#include <cstddef>
#include <string>

namespace embc::runtime::checkpoint {

class AtomicFileWriter {
public:
  /// Creates (or truncates) PATH.tmp. Throws CheckpointError on failure.
  explicit AtomicFileWriter(std::string path);
  /// Without a successful commit(), removes the temp file; PATH is untouched.
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;

  void write(const void *data, size_t bytes);
  /// fsync, close, rename PATH.tmp over PATH, fsync the directory.
  void commit();

private:
  [[noreturn]] void fail(const std::string &what, int error);

  std::string path_;
  std::string tmpPath_;
  int fd_ = -1;
  bool committed_ = false;
};

} // namespace embc::runtime::checkpoint

#endif // EMBC_RUNTIME_LIB_CHECKPOINT_ATOMICFILE_H
