//===- SafetensorsReader.h - read a safetensors file in chunks --*- C++ -*-===//
//
// A checkpoint of tables placed on disk can be larger than memory (issue 24),
// so it is never read whole: opening a file validates its header and reads
// no tensor data; read() then goes once over the data buffer, in file order,
// a chunk at a time, reading each requested byte range straight into its
// destination (e.g. the executor's arena) and hashing every byte for the
// checksum. The chunks' pages are dropped from the page cache behind the
// pass, so besides the destinations a pass needs at most one chunk of memory
// (a bounce buffer, for bytes no destination wants but the checksum covers).
//
// readSafetensors (Safetensors.h) is this reader with one destination per
// tensor, in memory it owns: there is one parser and one checksum pass.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CHECKPOINT_SAFETENSORSREADER_H
#define EMBC_RUNTIME_CHECKPOINT_SAFETENSORSREADER_H

#include "embc/runtime/checkpoint/Safetensors.h"

namespace embc::runtime::checkpoint {

/// Bytes read() reads (and hashes, and drops from the page cache) at a time.
inline constexpr size_t kDefaultChunkBytes = size_t(64) << 20;

/// A tensor as the validated header describes it.
struct TensorInfo {
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0; ///< offset of its first byte in the data buffer
  uint64_t bytes = 0; ///< product(shape) * dtypeSize(dtype)
};

/// Where read() puts bytes [offset, offset + bytes) of tensor `name`.
struct TensorCopy {
  std::string name;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  void *out = nullptr;
};

class SafetensorsReader {
public:
  /// Opens `path` and validates all of it but the checksum: header length,
  /// header JSON (no NUL byte, no duplicate name), dtypes, shapes against
  /// byte ranges, offsets (in range, contiguous, no overlaps or gaps) and
  /// trailing bytes. Reads no tensor data. `chunkBytes` (> 0) bounds what one
  /// pread reads; tests make it small.
  explicit SafetensorsReader(std::string path, Verify verify = Verify::Yes,
                             size_t chunkBytes = kDefaultChunkBytes);
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader &) = delete;
  SafetensorsReader &operator=(const SafetensorsReader &) = delete;

  const std::string &path() const { return path_; }
  /// The header's metadata: not verified until read() has returned.
  const std::map<std::string, std::string> &metadata() const { return metadata_; }
  const std::map<std::string, TensorInfo> &tensors() const { return tensors_; }
  /// The tensor called `name`, or nullptr.
  const TensorInfo *find(const std::string &name) const;

  /// One pass over the data buffer in file order: the bytes of each copy go
  /// straight to its `out`, chunk by chunk. With Verify::Yes every byte of
  /// the buffer is read and hashed (the bytes no copy wants through a bounce
  /// buffer of at most one chunk) and the checksum is then required and
  /// checked: a bad file throws after the copies were written, so their
  /// destinations must not be trusted then. With Verify::No only the
  /// copies' bytes are read. Copies may overlap. A copy naming no tensor or
  /// reaching past its end is a CheckpointError, thrown before any read.
  void read(const std::vector<TensorCopy> &copies);

private:
  [[noreturn]] void error(const std::string &message) const;
  /// Reads `bytes` (<= chunkBytes_) at `offset` of the data buffer into
  /// `out`, then drops those pages of the file from the page cache.
  void readChunk(void *out, size_t bytes, uint64_t offset);
  void verifyChecksum(const std::string &computed) const;

  std::string path_;
  Verify verify_;
  size_t chunkBytes_;
  int fd_ = -1;
  uint64_t dataStart_ = 0; ///< file offset of the data buffer
  uint64_t dataBytes_ = 0;
  /// What the checksum covers of the header: the canonical JSON text without
  /// the checksum key (FileChecksum's form).
  std::string checksummedHeader_;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, TensorInfo> tensors_;
};

} // namespace embc::runtime::checkpoint

#endif // EMBC_RUNTIME_CHECKPOINT_SAFETENSORSREADER_H
