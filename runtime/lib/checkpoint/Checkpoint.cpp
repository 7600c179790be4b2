//===- Checkpoint.cpp - checkpoint directories and embedding export -------===//
//
// A thin layer over safetensors: a fixed file name inside a directory and a
// format marker, so that arbitrary safetensors files (e.g. an embedding
// export) are not mistaken for resumable checkpoints. Restoring tensors,
// checked against what the plan expects, is CheckpointRestore.cpp.
//
//===----------------------------------------------------------------------===//

#include "CheckpointInternal.h"

#include "embc/runtime/checkpoint/Checkpoint.h"

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

std::string embc::runtime::checkpoint::existingCheckpointFile(const std::string &dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    throw CheckpointError("checkpoint directory '" + dir +
                          "' does not exist or is not a directory");
  std::string path = checkpointFilePath(dir);
  if (!fs::exists(path, error))
    throw CheckpointError("'" + dir + "' holds no checkpoint: " + path +
                          " does not exist");
  return path;
}

void embc::runtime::checkpoint::checkCheckpointFormat(
    const std::string &path, const std::map<std::string, std::string> &metadata) {
  auto format = metadata.find("format");
  std::string found = format == metadata.end() ? "" : format->second;
  if (found != kCheckpointFormat)
    throw CheckpointError(path + " is not an embc checkpoint (format '" +
                          found + "', expected '" + kCheckpointFormat + "')");
}

SafetensorsFile
embc::runtime::checkpoint::loadCheckpoint(const std::string &dir, Verify verify) {
  std::string path = existingCheckpointFile(dir);
  SafetensorsFile file = readSafetensors(path, verify);
  checkCheckpointFormat(path, file.metadata);
  return file;
}

void embc::runtime::checkpoint::exportEmbeddings(
    const std::string &path, const std::vector<TensorView> &tables,
    const std::map<std::string, std::string> &metadata) {
  writeSafetensors(path, tables, metadata);
}
