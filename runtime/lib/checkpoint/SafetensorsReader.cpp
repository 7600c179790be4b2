//===- SafetensorsReader.cpp - read and validate a safetensors file -------===//
//
// Everything in the header is untrusted: a checkpoint may be truncated by a
// full disk, corrupted in transit, or not a safetensors file at all. The
// reader validates the whole header (including that the tensors tile the
// data buffer exactly) before it allocates anything, and verifies the embc
// checksum of header and data after reading, so a bad file is refused with
// a message saying what is wrong instead of resuming training from garbage.
// A file without the checksum is refused too (unless Verify::No): otherwise
// deleting one metadata key would switch verification off.
//
//===----------------------------------------------------------------------===//

#include "SafetensorsInternal.h"

#include "embc/runtime/checkpoint/Checkpoint.h"
#include "embc/runtime/checkpoint/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <tuple>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace embc::runtime::checkpoint;
using nlohmann::json;

namespace {

/// Closes the file descriptor on every exit path.
struct FileHandle {
  int fd = -1;
  ~FileHandle() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Where a tensor's bytes lie in the data buffer, for the tiling check.
struct Extent {
  uint64_t begin;
  uint64_t end;
  std::string name;
};

class Reader {
public:
  Reader(std::string path, Verify verify) : path_(std::move(path)), verify_(verify) {}
  SafetensorsFile read();

private:
  [[noreturn]] void error(const std::string &message) const {
    throw CheckpointError(path_ + ": " + message);
  }
  /// Reads exactly `bytes` at `offset`; a short read means the file shrank
  /// or was shorter than its header says.
  void readAt(void *out, size_t bytes, uint64_t offset);
  uint64_t readHeaderLength();
  json parseHeader(uint64_t headerBytes);
  void readMetadata(const json &value, SafetensorsFile &file);
  Extent readTensorEntry(const std::string &name, const json &entry,
                         SafetensorsFile &file);
  void checkTiling(std::vector<Extent> &extents, uint64_t bufferBytes);
  void readData(std::vector<Extent> &extents, uint64_t bufferStart, const json &header,
                SafetensorsFile &file);
  void verifyChecksum(const SafetensorsFile &file, const FileChecksum &checksum) const;

  std::string path_;
  Verify verify_;
  FileHandle file_;
  uint64_t fileBytes_ = 0;
};

void Reader::readAt(void *out, size_t bytes, uint64_t offset) {
  char *cursor = static_cast<char *>(out);
  while (bytes > 0) {
    ssize_t got = ::pread(file_.fd, cursor, bytes, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      error(std::string("read failed: ") + std::strerror(errno));
    }
    if (got == 0)
      error("truncated: the file ended at byte " + std::to_string(offset) +
            " while reading");
    cursor += got;
    bytes -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
}

uint64_t Reader::readHeaderLength() {
  if (fileBytes_ < 8)
    error("truncated: the file is " + std::to_string(fileBytes_) +
          " bytes, too short for the 8-byte header length");
  unsigned char length[8];
  readAt(length, sizeof length, 0);
  uint64_t headerBytes = 0;
  for (int i = 0; i < 8; ++i)
    headerBytes |= static_cast<uint64_t>(length[i]) << (8 * i);
  if (headerBytes > kMaxHeaderBytes)
    error("header length " + std::to_string(headerBytes) +
          " is absurd (the limit is " + std::to_string(kMaxHeaderBytes) +
          "): not a safetensors file, or corrupt");
  if (headerBytes > fileBytes_ - 8)
    error("header length " + std::to_string(headerBytes) +
          " is larger than the rest of the file (" +
          std::to_string(fileBytes_ - 8) +
          " bytes): the file is truncated or not a safetensors file");
  return headerBytes;
}

json Reader::parseHeader(uint64_t headerBytes) {
  std::string text(headerBytes, '\0');
  readAt(text.data(), text.size(), 8);
  // nlohmann stops at a NUL as at the end of input: what follows would be
  // ignored, unchecked.
  if (size_t nul = text.find('\0'); nul != std::string::npos)
    error("NUL byte at offset " + std::to_string(nul) +
          " of the header: not a safetensors header, or corrupt");
  // nlohmann keeps the last of duplicate keys silently; the callback sees
  // every top-level key (depth 1) so a duplicated tensor name is refused.
  std::set<std::string> seen;
  std::string duplicate;
  json::parser_callback_t noteKeys = [&](int depth, json::parse_event_t event,
                                         json &parsed) {
    if (event == json::parse_event_t::key && depth == 1 && parsed.is_string()) {
      const std::string &key = parsed.get_ref<const std::string &>();
      if (!seen.insert(key).second)
        duplicate = key;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text, noteKeys);
  } catch (const json::exception &e) {
    // parse_error, and out_of_range for a number no double holds (the
    // fuzzer's 1e999).
    error(std::string("bad header JSON: ") + e.what());
  }
  if (!header.is_object())
    error("bad header JSON: the header is not a JSON object");
  if (!duplicate.empty())
    error("duplicate tensor name '" + duplicate + "' in the header");
  return header;
}

void Reader::readMetadata(const json &value, SafetensorsFile &file) {
  if (!value.is_object())
    error("__metadata__ is not a JSON object");
  for (const auto &[key, text] : value.items()) {
    if (!text.is_string())
      error("__metadata__ value of '" + key + "' is not a string");
    file.metadata[key] = text.get<std::string>();
  }
}

Extent Reader::readTensorEntry(const std::string &name, const json &entry,
                               SafetensorsFile &file) {
  std::string where = "tensor '" + name + "'";
  if (!entry.is_object())
    error(where + ": the entry is not a JSON object");
  for (const auto &[key, unused] : entry.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      error(where + ": unexpected field '" + key + "'");
  auto field = [&](const char *key) -> const json & {
    auto it = entry.find(key);
    if (it == entry.end())
      error(where + ": missing '" + key + "'");
    return *it;
  };

  const json &dtype = field("dtype");
  if (!dtype.is_string())
    error(where + ": dtype is not a string");
  TensorData tensor;
  tensor.dtype = dtype.get<std::string>();
  std::optional<size_t> elementSize = dtypeSize(tensor.dtype);
  if (!elementSize)
    error(where + " has unknown dtype '" + tensor.dtype + "'");

  const json &shape = field("shape");
  if (!shape.is_array())
    error(where + ": shape is not an array");
  for (const json &dim : shape) {
    if (!dim.is_number_unsigned() ||
        dim.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      error(where + ": shape " + shape.dump() +
            " is not a list of non-negative integers");
    tensor.shape.push_back(dim.get<int64_t>());
  }

  const json &offsets = field("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2 ||
      !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
    error(where + ": data_offsets " + offsets.dump() +
          " is not a pair of non-negative integers");
  Extent extent{offsets[0].get<uint64_t>(), offsets[1].get<uint64_t>(), name};
  if (extent.end < extent.begin)
    error(where + ": data_offsets " + offsets.dump() +
          " end before they begin");

  std::optional<uint64_t> expected = tensorByteSize(tensor.shape, *elementSize);
  if (!expected)
    error(where + ": shape " + formatShape(tensor.shape) + " overflows");
  if (*expected != extent.end - extent.begin)
    error(where + " is " + tensor.dtype + " " + formatShape(tensor.shape) +
          " = " + std::to_string(*expected) + " bytes, but its data_offsets " +
          offsets.dump() + " span " +
          std::to_string(extent.end - extent.begin) + " bytes");
  file.tensors.emplace(name, std::move(tensor));
  return extent;
}

void Reader::checkTiling(std::vector<Extent> &extents, uint64_t bufferBytes) {
  std::sort(extents.begin(), extents.end(),
            [](const Extent &a, const Extent &b) {
              return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
            });
  uint64_t expected = 0;
  const Extent *previous = nullptr;
  for (const Extent &extent : extents) {
    if (extent.begin < expected)
      error("tensor '" + extent.name + "' (bytes " +
            std::to_string(extent.begin) + ".." + std::to_string(extent.end) +
            ") overlaps tensor '" + previous->name + "' (bytes " +
            std::to_string(previous->begin) + ".." +
            std::to_string(previous->end) + ")");
    if (extent.begin > expected)
      error("gap in the data buffer: bytes " + std::to_string(expected) + ".." +
            std::to_string(extent.begin) +
            " belong to no tensor (before tensor '" + extent.name + "')");
    expected = extent.end;
    previous = &extent;
  }
  if (expected > bufferBytes) {
    // Name the first tensor cut off: that is where the file ends.
    const Extent &cut = *std::find_if(
        extents.begin(), extents.end(),
        [&](const Extent &extent) { return extent.end > bufferBytes; });
    error("truncated: tensor '" + cut.name + "' ends at byte " +
          std::to_string(cut.end) +
          " of the data buffer, but the file holds "
          "only " +
          std::to_string(bufferBytes) + " bytes after the header");
  }
  if (expected < bufferBytes)
    error(std::to_string(bufferBytes - expected) +
          " trailing bytes after the last tensor");
}

void Reader::readData(std::vector<Extent> &extents, uint64_t bufferStart, const json &header,
                      SafetensorsFile &file) {
  FileChecksum checksum(header);
  // Extents are sorted, so the checksum covers the buffer in file order.
  for (const Extent &extent : extents) {
    std::vector<std::byte> &bytes = file.tensors.at(extent.name).bytes;
    bytes.resize(extent.end - extent.begin);
    if (bytes.empty())
      continue;
    readAt(bytes.data(), bytes.size(), bufferStart + extent.begin);
    checksum.update(bytes.data(), bytes.size());
  }
  verifyChecksum(file, checksum);
}

void Reader::verifyChecksum(const SafetensorsFile &file, const FileChecksum &checksum) const {
  if (verify_ == Verify::No)
    return;
  auto stored = file.metadata.find(kChecksumKey);
  if (stored == file.metadata.end()) {
    bool legacy = file.metadata.count(kLegacyChecksumKey) != 0;
    error(std::string("no '") + kChecksumKey + "' metadata, so its header and data cannot be " +
          "verified (" +
          (legacy ? "written by an older embc, whose checksum covered the data only"
                  : "written by another tool, or the key was removed") +
          "); --no-verify reads it unverified");
  }
  std::string computed = checksum.value();
  if (stored->second != computed)
    error("checksum mismatch: the file is corrupt (stored " + stored->second +
          ", computed " + computed + " over the header and data)");
}

SafetensorsFile Reader::read() {
  file_.fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (file_.fd < 0)
    throw CheckpointError("cannot open '" + path_ +
                          "': " + std::strerror(errno));
  struct stat info;
  if (::fstat(file_.fd, &info) != 0)
    error(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    error("not a regular file");
  fileBytes_ = static_cast<uint64_t>(info.st_size);

  uint64_t headerBytes = readHeaderLength();
  json header = parseHeader(headerBytes);

  SafetensorsFile file;
  std::vector<Extent> extents;
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__")
      readMetadata(entry, file);
    else
      extents.push_back(readTensorEntry(name, entry, file));
  }
  uint64_t bufferStart = 8 + headerBytes;
  checkTiling(extents, fileBytes_ - bufferStart);
  readData(extents, bufferStart, header, file);
  return file;
}

} // namespace

SafetensorsFile
embc::runtime::checkpoint::readSafetensors(const std::string &path, Verify verify) {
  return Reader(path, verify).read();
}
