//===- CheckpointRestore.h - restore a checkpoint without holding it -*- C++ -*-===//
//
// loadCheckpoint holds every tensor of a checkpoint in memory, which a model
// whose tables are placed on disk (larger than memory, issue 24) cannot
// afford. A CheckpointRestore is told where each tensor goes (the executor's
// arena), then reads the file once, a chunk at a time, straight into those
// places, hashing it on the way (SafetensorsReader).
//
// Checking the checksum needs the whole file, so it comes after the copies;
// every check and its message stay those of loadCheckpoint + restoreTensor,
// in the same order: structure, checksum, format, the caller's metadata
// checks, then the tensors the caller asked for. A tensor that is missing or
// mismatched is not copied; its error waits until the metadata has been
// checked (a checkpoint of another model is named as such, not by its first
// missing tensor). On any error the destinations hold partly restored
// values and must not be used.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CHECKPOINT_CHECKPOINTRESTORE_H
#define EMBC_RUNTIME_CHECKPOINT_CHECKPOINTRESTORE_H

#include "embc/runtime/checkpoint/SafetensorsReader.h"

#include <functional>

namespace embc::runtime::checkpoint {

class CheckpointRestore {
public:
  /// Opens DIR/checkpoint.safetensors and validates its structure, with
  /// loadCheckpoint's errors; reads no tensor data yet.
  explicit CheckpointRestore(const std::string &dir, Verify verify = Verify::Yes,
                             size_t chunkBytes = kDefaultChunkBytes);

  /// The checkpoint file.
  const std::string &path() const { return reader_.path(); }

  /// Restores tensor `name` into `out` (`bytes` long) if it has `dtype` and
  /// `shape` (restoreTensor's checks and messages).
  void addTensor(const std::string &name, const std::string &dtype,
                 const std::vector<int64_t> &shape, void *out, size_t bytes);
  /// Restores rows [firstRow, firstRow + rows) of tensor `name` of `shape`
  /// into `out` (restoreRows' checks and messages).
  void addRows(const std::string &name, const std::string &dtype,
               const std::vector<int64_t> &shape, int64_t firstRow, int64_t rows, void *out);

  /// Called with the metadata once it is verified (or with Verify::No,
  /// once the file was read); throws to refuse the checkpoint.
  using MetadataCheck = std::function<void(const std::map<std::string, std::string> &)>;

  /// Reads the file once, copying what was asked for; then throws the first
  /// error of: the checksum (Verify::Yes), the format marker,
  /// `checkMetadata`, the tensors asked for (in the order asked).
  void run(const MetadataCheck &checkMetadata = {});

private:
  SafetensorsReader reader_;
  std::vector<TensorCopy> copies_;
  /// The error of the first tensor asked for that cannot be restored.
  std::optional<std::string> firstMismatch_;
};

} // namespace embc::runtime::checkpoint

#endif // EMBC_RUNTIME_CHECKPOINT_CHECKPOINTRESTORE_H
