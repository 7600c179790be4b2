//===- CheckpointInternal.h - checks loadCheckpoint and restore share -----===//
//
// Both ways of reading a checkpoint (all in memory, and streamed into the
// caller's memory) refuse the same things with the same words. Private to
// EmbCheckpoint.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CHECKPOINT_CHECKPOINTINTERNAL_H
#define EMBC_RUNTIME_LIB_CHECKPOINT_CHECKPOINTINTERNAL_H

#include <map>
#include <string>

namespace embc::runtime::checkpoint {

/// DIR/checkpoint.safetensors, after checking that DIR is a directory and
/// the file exists.
std::string existingCheckpointFile(const std::string &dir);

/// Throws unless `metadata` (of file `path`) says kCheckpointFormat.
void checkCheckpointFormat(const std::string &path,
                           const std::map<std::string, std::string> &metadata);

} // namespace embc::runtime::checkpoint

#endif // EMBC_RUNTIME_LIB_CHECKPOINT_CHECKPOINTINTERNAL_H
