//===- CheckpointRestore.cpp - restore tensors checked against the plan ---===//
//
// The checks of a tensor about to be restored (present, dtype, shape, size,
// rows in range) are written once, for both the in-memory file of
// loadCheckpoint (restoreTensor, restoreRows) and the streamed restore
// (CheckpointRestore): the messages are part of the interface.
//
//===----------------------------------------------------------------------===//

#include "CheckpointInternal.h"

#include "embc/runtime/checkpoint/Checkpoint.h"
#include "embc/runtime/checkpoint/CheckpointRestore.h"

#include <cstring>

using namespace embc::runtime::checkpoint;

namespace {

uint64_t byteCount(const TensorData &tensor) { return tensor.bytes.size(); }
uint64_t byteCount(const TensorInfo &tensor) { return tensor.bytes; }

/// Why tensor `name` as found in the file (nullptr: absent; a TensorData or
/// a TensorInfo) is not the `dtype` `shape` the plan expects; nullopt if it is.
template <typename Tensor>
std::optional<std::string> tensorMismatch(const std::string &name, const Tensor *tensor,
                                          const std::string &dtype,
                                          const std::vector<int64_t> &shape) {
  if (!tensor)
    return "checkpoint has no tensor '" + name + "', which the plan expects";
  if (tensor->dtype != dtype)
    return "checkpoint tensor '" + name + "' has dtype " + tensor->dtype +
           ", the plan expects " + dtype;
  if (tensor->shape != shape)
    return "checkpoint tensor '" + name + "' has shape " + formatShape(tensor->shape) +
           ", the plan expects " + formatShape(shape);
  return std::nullopt;
}

/// tensorMismatch, then whether the whole tensor fills `bytes`.
template <typename Tensor>
std::optional<std::string> wholeMismatch(const std::string &name, const Tensor *tensor,
                                         const std::string &dtype,
                                         const std::vector<int64_t> &shape, size_t bytes) {
  if (std::optional<std::string> mismatch = tensorMismatch(name, tensor, dtype, shape))
    return mismatch;
  if (byteCount(*tensor) != bytes)
    return "restoring checkpoint tensor '" + name + "': it holds " +
           std::to_string(byteCount(*tensor)) + " bytes, but the destination is " +
           std::to_string(bytes) + " bytes";
  return std::nullopt;
}

/// tensorMismatch, then whether rows [firstRow, firstRow + rows) exist.
template <typename Tensor>
std::optional<std::string> rowsMismatch(const std::string &name, const Tensor *tensor,
                                        const std::string &dtype,
                                        const std::vector<int64_t> &shape, int64_t firstRow,
                                        int64_t rows) {
  if (std::optional<std::string> mismatch = tensorMismatch(name, tensor, dtype, shape))
    return mismatch;
  if (shape.empty() || firstRow < 0 || rows < 0 || firstRow > shape[0] ||
      rows > shape[0] - firstRow)
    return "restoring rows [" + std::to_string(firstRow) + ", " +
           std::to_string(firstRow + rows) + ") of checkpoint tensor '" + name +
           "' of shape " + formatShape(shape);
  return std::nullopt;
}

/// Bytes of one row of a tensor whose rows were checked by rowsMismatch
/// (rows > 0, so shape[0] > 0).
template <typename Tensor> uint64_t rowBytes(const Tensor &tensor) {
  return byteCount(tensor) / uint64_t(tensor.shape[0]);
}

const TensorData *find(const SafetensorsFile &file, const std::string &name) {
  auto it = file.tensors.find(name);
  return it == file.tensors.end() ? nullptr : &it->second;
}

} // namespace

void embc::runtime::checkpoint::restoreTensor(const SafetensorsFile &file,
                                              const std::string &name,
                                              const std::string &dtype,
                                              const std::vector<int64_t> &shape,
                                              void *out, size_t bytes) {
  const TensorData *tensor = find(file, name);
  if (std::optional<std::string> mismatch = wholeMismatch(name, tensor, dtype, shape, bytes))
    throw CheckpointError(*mismatch);
  if (bytes > 0)
    std::memcpy(out, tensor->bytes.data(), bytes);
}

void embc::runtime::checkpoint::restoreRows(const SafetensorsFile &file,
                                            const std::string &name, const std::string &dtype,
                                            const std::vector<int64_t> &shape,
                                            int64_t firstRow, int64_t rows, void *out) {
  const TensorData *tensor = find(file, name);
  if (std::optional<std::string> mismatch =
          rowsMismatch(name, tensor, dtype, shape, firstRow, rows))
    throw CheckpointError(*mismatch);
  if (rows > 0)
    std::memcpy(out, tensor->bytes.data() + uint64_t(firstRow) * rowBytes(*tensor),
                uint64_t(rows) * rowBytes(*tensor));
}

CheckpointRestore::CheckpointRestore(const std::string &dir, Verify verify, size_t chunkBytes)
    : reader_(existingCheckpointFile(dir), verify, chunkBytes) {}

void CheckpointRestore::addTensor(const std::string &name, const std::string &dtype,
                                  const std::vector<int64_t> &shape, void *out, size_t bytes) {
  const TensorInfo *tensor = reader_.find(name);
  if (std::optional<std::string> mismatch = wholeMismatch(name, tensor, dtype, shape, bytes)) {
    if (!firstMismatch_)
      firstMismatch_ = std::move(mismatch);
    return;
  }
  copies_.push_back({name, 0, bytes, out});
}

void CheckpointRestore::addRows(const std::string &name, const std::string &dtype,
                                const std::vector<int64_t> &shape, int64_t firstRow,
                                int64_t rows, void *out) {
  const TensorInfo *tensor = reader_.find(name);
  if (std::optional<std::string> mismatch =
          rowsMismatch(name, tensor, dtype, shape, firstRow, rows)) {
    if (!firstMismatch_)
      firstMismatch_ = std::move(mismatch);
    return;
  }
  if (rows > 0)
    copies_.push_back({name, uint64_t(firstRow) * rowBytes(*tensor),
                       uint64_t(rows) * rowBytes(*tensor), out});
}

void CheckpointRestore::run(const MetadataCheck &checkMetadata) {
  reader_.read(copies_); // the copies, then the checksum
  checkCheckpointFormat(reader_.path(), reader_.metadata());
  if (checkMetadata)
    checkMetadata(reader_.metadata());
  if (firstMismatch_)
    throw CheckpointError(*firstMismatch_);
}
