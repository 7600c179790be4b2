//===- SafetensorsWriter.cpp - write a safetensors file atomically --------===//
//
// Tensors are laid out in the order given, back to back, and streamed from
// the caller's memory straight to the file (no copy of a multi-GiB buffer).
// The header is built with ordered JSON so "__metadata__" comes first and
// tensors appear in buffer order, matching what the reference writer emits.
//
//===----------------------------------------------------------------------===//

#include "AtomicFile.h"
#include "SafetensorsInternal.h"

#include "embc/runtime/checkpoint/Checkpoint.h"
#include "embc/runtime/checkpoint/Safetensors.h"

#include <nlohmann/json.hpp>
#include <xxhash.h>

#include <memory>
#include <set>

using namespace embc::runtime::checkpoint;

namespace {

/// Checks what the format requires of each view before anything is written,
/// so a bad call never leaves even a temp file behind.
void validateViews(const std::string &path,
                   const std::vector<TensorView> &tensors) {
  std::set<std::string> seen;
  for (const TensorView &view : tensors) {
    std::string where =
        "cannot write '" + path + "': tensor '" + view.name + "'";
    if (view.name.empty())
      throw CheckpointError("cannot write '" + path +
                            "': a tensor has an empty name");
    if (view.name == "__metadata__")
      throw CheckpointError(where + ": the name is reserved for metadata");
    if (!seen.insert(view.name).second)
      throw CheckpointError(where + " appears twice");
    std::optional<size_t> elementSize = dtypeSize(view.dtype);
    if (!elementSize)
      throw CheckpointError(where + " has unknown dtype '" + view.dtype + "'");
    std::optional<uint64_t> expected = tensorByteSize(view.shape, *elementSize);
    if (!expected)
      throw CheckpointError(where + " has an invalid shape " +
                            formatShape(view.shape));
    if (*expected != view.bytes)
      throw CheckpointError(where + " is " + view.dtype + " " +
                            formatShape(view.shape) + " = " +
                            std::to_string(*expected) + " bytes, but " +
                            std::to_string(view.bytes) + " bytes were given");
    if (view.bytes > 0 && view.data == nullptr)
      throw CheckpointError(where + " has no data");
  }
}

/// The header in file order: metadata first, then tensors back to back.
nlohmann::ordered_json headerOf(const std::vector<TensorView> &tensors,
                                const std::map<std::string, std::string> &metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorView &view : tensors) {
    header[view.name] = {{"dtype", view.dtype},
                         {"shape", view.shape},
                         {"data_offsets", {offset, offset + view.bytes}}};
    offset += view.bytes;
  }
  return header;
}

std::string dumpHeader(const std::string &path, const nlohmann::ordered_json &header) {
  try {
    return header.dump();
  } catch (const nlohmann::json::exception &e) {
    // dump() refuses strings that are not UTF-8.
    throw CheckpointError("cannot write '" + path +
                          "': a tensor name or metadata string is not valid "
                          "UTF-8 (" +
                          e.what() + ")");
  }
}

std::string buildHeader(const std::string &path,
                        const std::vector<TensorView> &tensors,
                        std::map<std::string, std::string> metadata) {
  metadata.erase(kChecksumKey);
  metadata.erase(kLegacyChecksumKey);
  // The checksum covers the header as the reader will parse it back.
  FileChecksum checksum(nlohmann::json::parse(dumpHeader(path, headerOf(tensors, metadata))));
  for (const TensorView &view : tensors)
    checksum.update(view.data, view.bytes);
  metadata[kChecksumKey] = checksum.value();
  std::string text = dumpHeader(path, headerOf(tensors, metadata));
  // Spaces keep the buffer 8-byte aligned for readers that map the file.
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

} // namespace

void embc::runtime::checkpoint::writeSafetensors(
    const std::string &path, const std::vector<TensorView> &tensors,
    const std::map<std::string, std::string> &metadata) {
  validateViews(path, tensors);
  std::string header = buildHeader(path, tensors, metadata);

  unsigned char length[8];
  uint64_t headerBytes = header.size();
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<unsigned char>(headerBytes >> (8 * i));

  AtomicFileWriter out(path);
  out.write(length, sizeof length);
  out.write(header.data(), header.size());
  for (const TensorView &view : tensors)
    if (view.bytes > 0)
      out.write(view.data, view.bytes);
  out.commit();
}
