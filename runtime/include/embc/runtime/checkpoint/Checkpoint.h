//===- Checkpoint.h - training checkpoints and embedding export -*- C++ -*-===//
//
// A training checkpoint is a directory holding `checkpoint.safetensors`: the
// parameters, tables and optimizer states as tensors, and the step, data
// position, seed, model and plan checksum as metadata, so a run resumes
// exactly where it stopped. The file is replaced atomically, so the previous
// checkpoint survives a crash during a save.
//
// Restoring goes tensor by tensor into the executor's arena, checking each
// one against what the plan expects, so a checkpoint of another model or
// configuration is refused with a message naming the tensor and both shapes.
// loadCheckpoint + restoreTensor hold the whole file in memory; a resume
// streams it instead (CheckpointRestore.h), with the same checks.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CHECKPOINT_CHECKPOINT_H
#define EMBC_RUNTIME_CHECKPOINT_CHECKPOINT_H

#include "embc/runtime/checkpoint/Safetensors.h"

namespace embc::runtime::checkpoint {

/// Value of the "format" metadata key of every embc checkpoint.
inline constexpr const char *kCheckpointFormat = "embc.checkpoint/v1";
/// The file inside a checkpoint directory.
inline constexpr const char *kCheckpointFileName = "checkpoint.safetensors";

struct CheckpointContent {
  /// The executor's bookkeeping: format, model, plan checksum, step, data
  /// position, seed, ... saveCheckpoint sets "format" to kCheckpointFormat
  /// when it is absent and refuses any other value.
  std::map<std::string, std::string> metadata;
  /// Params, tables and optimizer states, e.g. "param/top_w0",
  /// "table/t_C1", "state/t_C1/0".
  std::vector<TensorView> tensors;
};

/// The checkpoint file of directory `dir`.
std::string checkpointFilePath(const std::string &dir);

/// Creates `dir` (and its parents) if needed and atomically replaces
/// DIR/checkpoint.safetensors: the previous file stays intact until the new
/// one is completely written and renamed over it.
void saveCheckpoint(const std::string &dir, const CheckpointContent &content);

/// Reads DIR/checkpoint.safetensors and checks it is an embc checkpoint
/// (with Verify::No, also one whose checksum is missing or wrong).
SafetensorsFile loadCheckpoint(const std::string &dir, Verify verify = Verify::Yes);

/// Copies tensor `name` of `file` into `out` (`bytes` long), after checking
/// it exists and has exactly `dtype` and `shape`. Errors name the tensor and
/// both shapes (or dtypes).
void restoreTensor(const SafetensorsFile &file, const std::string &name,
                   const std::string &dtype, const std::vector<int64_t> &shape,
                   void *out, size_t bytes);

/// Like restoreTensor for rows [firstRow, firstRow + rows) of tensor `name`
/// of `shape` (a table's shard: the file holds the whole table): copies
/// them to `out`.
void restoreRows(const SafetensorsFile &file, const std::string &name,
                 const std::string &dtype, const std::vector<int64_t> &shape,
                 int64_t firstRow, int64_t rows, void *out);

/// Writes trained tables as a plain safetensors file, one tensor per table
/// named by the view's name, loadable by the Python `safetensors` package.
void exportEmbeddings(const std::string &path,
                      const std::vector<TensorView> &tables,
                      const std::map<std::string, std::string> &metadata);

/// "[10000, 16]": how shapes appear in messages.
std::string formatShape(const std::vector<int64_t> &shape);

} // namespace embc::runtime::checkpoint

#endif // EMBC_RUNTIME_CHECKPOINT_CHECKPOINT_H
