//===- Checkpoint.cpp - checkpoint directories and embedding export -------===//
//
// A thin layer over safetensors: a fixed file name inside a directory, a
// format marker so that arbitrary safetensors files (e.g. an embedding
// export) are not mistaken for resumable checkpoints, and per-tensor
// restore that checks the checkpoint against what the plan expects.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/checkpoint/Checkpoint.h"

#include <cstring>
#include <filesystem>
#include <system_error>

using namespace embc::runtime::checkpoint;
namespace fs = std::filesystem;

std::string
embc::runtime::checkpoint::checkpointFilePath(const std::string &dir) {
  return (fs::path(dir) / kCheckpointFileName).string();
}

void embc::runtime::checkpoint::saveCheckpoint(
    const std::string &dir, const CheckpointContent &content) {
  std::map<std::string, std::string> metadata = content.metadata;
  auto format = metadata.find("format");
  if (format == metadata.end())
    metadata["format"] = kCheckpointFormat;
  else if (format->second != kCheckpointFormat)
    throw CheckpointError("cannot save a checkpoint in '" + dir +
                          "': metadata format is '" + format->second +
                          "', expected '" + kCheckpointFormat + "'");
  std::error_code error;
  fs::create_directories(dir, error);
  if (error)
    throw CheckpointError("cannot create checkpoint directory '" + dir +
                          "': " + error.message());
  writeSafetensors(checkpointFilePath(dir), content.tensors, metadata);
}

SafetensorsFile
embc::runtime::checkpoint::loadCheckpoint(const std::string &dir, Verify verify) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    throw CheckpointError("checkpoint directory '" + dir +
                          "' does not exist or is not a directory");
  std::string path = checkpointFilePath(dir);
  if (!fs::exists(path, error))
    throw CheckpointError("'" + dir + "' holds no checkpoint: " + path +
                          " does not exist");
  SafetensorsFile file = readSafetensors(path, verify);
  auto format = file.metadata.find("format");
  std::string found = format == file.metadata.end() ? "" : format->second;
  if (found != kCheckpointFormat)
    throw CheckpointError(path + " is not an embc checkpoint (format '" +
                          found + "', expected '" + kCheckpointFormat + "')");
  return file;
}

namespace {

/// Tensor `name` of `file`, checked to have `dtype` and `shape`.
const TensorData &expectedTensor(const SafetensorsFile &file, const std::string &name,
                                 const std::string &dtype,
                                 const std::vector<int64_t> &shape) {
  auto it = file.tensors.find(name);
  if (it == file.tensors.end())
    throw CheckpointError("checkpoint has no tensor '" + name +
                          "', which the plan expects");
  const TensorData &tensor = it->second;
  if (tensor.dtype != dtype)
    throw CheckpointError("checkpoint tensor '" + name + "' has dtype " +
                          tensor.dtype + ", the plan expects " + dtype);
  if (tensor.shape != shape)
    throw CheckpointError("checkpoint tensor '" + name + "' has shape " +
                          formatShape(tensor.shape) + ", the plan expects " +
                          formatShape(shape));
  return tensor;
}

} // namespace

void embc::runtime::checkpoint::restoreTensor(const SafetensorsFile &file,
                                              const std::string &name,
                                              const std::string &dtype,
                                              const std::vector<int64_t> &shape,
                                              void *out, size_t bytes) {
  const TensorData &tensor = expectedTensor(file, name, dtype, shape);
  if (tensor.bytes.size() != bytes)
    throw CheckpointError("restoring checkpoint tensor '" + name +
                          "': it holds " + std::to_string(tensor.bytes.size()) +
                          " bytes, but the destination is " +
                          std::to_string(bytes) + " bytes");
  if (bytes > 0)
    std::memcpy(out, tensor.bytes.data(), bytes);
}

void embc::runtime::checkpoint::restoreRows(const SafetensorsFile &file,
                                            const std::string &name, const std::string &dtype,
                                            const std::vector<int64_t> &shape,
                                            int64_t firstRow, int64_t rows, void *out) {
  const TensorData &tensor = expectedTensor(file, name, dtype, shape);
  if (shape.empty() || firstRow < 0 || rows < 0 || firstRow + rows > shape[0])
    throw CheckpointError("restoring rows [" + std::to_string(firstRow) + ", " +
                          std::to_string(firstRow + rows) + ") of checkpoint tensor '" +
                          name + "' of shape " + formatShape(shape));
  size_t rowBytes = tensor.bytes.size() / size_t(shape[0]);
  if (rows > 0)
    std::memcpy(out, tensor.bytes.data() + size_t(firstRow) * rowBytes, size_t(rows) * rowBytes);
}

void embc::runtime::checkpoint::exportEmbeddings(
    const std::string &path, const std::vector<TensorView> &tables,
    const std::map<std::string, std::string> &metadata) {
  writeSafetensors(path, tables, metadata);
}
