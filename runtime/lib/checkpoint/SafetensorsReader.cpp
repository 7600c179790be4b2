//===- SafetensorsReader.cpp - read and validate a safetensors file -------===//
//
// Everything in the header is untrusted: a checkpoint may be truncated by a
// full disk, corrupted in transit, or not a safetensors file at all. The
// reader validates the whole header (including that the tensors tile the
// data buffer exactly) before it reads or allocates anything for the data,
// and verifies the embc checksum of header and data in the same pass that
// reads the data, so a bad file is refused with a message saying what is
// wrong instead of resuming training from garbage. A file without the
// checksum is refused too (unless Verify::No): otherwise deleting one
// metadata key would switch verification off.
//
// The data is read a chunk at a time, straight into the caller's memory
// (SafetensorsReader.h says why); readSafetensors, at the end, is that pass
// into buffers it allocates. Everything readSafetensors needs is in this
// file and SafetensorsFormat.cpp, the two the checkpoint fuzzer builds.
//
//===----------------------------------------------------------------------===//

#include "SafetensorsInternal.h"

#include "embc/runtime/checkpoint/Checkpoint.h"
#include "embc/runtime/checkpoint/Safetensors.h"
#include "embc/runtime/checkpoint/SafetensorsReader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace embc::runtime::checkpoint;
using nlohmann::json;

namespace {

/// Closes the file descriptor on every exit path until release().
struct FileHandle {
  int fd = -1;
  ~FileHandle() {
    if (fd >= 0)
      ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

/// Reads exactly `bytes` at `offset`; a short read means the file shrank
/// or was shorter than its header says.
void readExactly(const std::string &path, int fd, void *out, size_t bytes, uint64_t offset) {
  char *cursor = static_cast<char *>(out);
  while (bytes > 0) {
    ssize_t got = ::pread(fd, cursor, bytes, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      throw CheckpointError(path + ": read failed: " + std::strerror(errno));
    }
    if (got == 0)
      throw CheckpointError(path + ": truncated: the file ended at byte " +
                            std::to_string(offset) + " while reading");
    cursor += got;
    bytes -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
}

/// Where a tensor's bytes lie in the data buffer, for the tiling check.
struct Extent {
  uint64_t begin;
  uint64_t end;
  std::string name;
};

/// What a reader keeps of a validated header.
struct Header {
  uint64_t dataStart = 0;
  uint64_t dataBytes = 0;
  std::string checksummed;
  std::map<std::string, std::string> metadata;
  std::map<std::string, TensorInfo> tensors;
};

/// Reads and validates the length prefix and the JSON header of an open
/// file; reads nothing of the data buffer.
class HeaderParser {
public:
  HeaderParser(const std::string &path, int fd, uint64_t fileBytes)
      : path_(path), fd_(fd), fileBytes_(fileBytes) {}
  Header parse();

private:
  [[noreturn]] void error(const std::string &message) const {
    throw CheckpointError(path_ + ": " + message);
  }
  void readAt(void *out, size_t bytes, uint64_t offset) {
    readExactly(path_, fd_, out, bytes, offset);
  }
  uint64_t readHeaderLength();
  json parseHeader(uint64_t headerBytes);
  void readMetadata(const json &value, Header &header);
  Extent readTensorEntry(const std::string &name, const json &entry, Header &header);
  void checkTiling(std::vector<Extent> &extents, uint64_t bufferBytes);

  const std::string &path_;
  int fd_;
  uint64_t fileBytes_;
};

uint64_t HeaderParser::readHeaderLength() {
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

json HeaderParser::parseHeader(uint64_t headerBytes) {
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

void HeaderParser::readMetadata(const json &value, Header &header) {
  if (!value.is_object())
    error("__metadata__ is not a JSON object");
  for (const auto &[key, text] : value.items()) {
    if (!text.is_string())
      error("__metadata__ value of '" + key + "' is not a string");
    header.metadata[key] = text.get<std::string>();
  }
}

Extent HeaderParser::readTensorEntry(const std::string &name, const json &entry,
                                     Header &header) {
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
  TensorInfo tensor;
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
  tensor.begin = extent.begin;
  tensor.bytes = *expected;
  header.tensors.emplace(name, std::move(tensor));
  return extent;
}

void HeaderParser::checkTiling(std::vector<Extent> &extents, uint64_t bufferBytes) {
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

Header HeaderParser::parse() {
  uint64_t headerBytes = readHeaderLength();
  json parsed = parseHeader(headerBytes);

  Header header;
  std::vector<Extent> extents;
  for (const auto &[name, entry] : parsed.items()) {
    if (name == "__metadata__")
      readMetadata(entry, header);
    else
      extents.push_back(readTensorEntry(name, entry, header));
  }
  header.dataStart = 8 + headerBytes;
  header.dataBytes = fileBytes_ - header.dataStart;
  checkTiling(extents, header.dataBytes);
  header.checksummed = FileChecksum::headerText(std::move(parsed));
  return header;
}

} // namespace

SafetensorsReader::SafetensorsReader(std::string path, Verify verify, size_t chunkBytes)
    : path_(std::move(path)), verify_(verify), chunkBytes_(std::max<size_t>(chunkBytes, 1)) {
  FileHandle file{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0)
    throw CheckpointError("cannot open '" + path_ + "': " + std::strerror(errno));
  struct stat info;
  if (::fstat(file.fd, &info) != 0)
    error(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    error("not a regular file");
  Header header = HeaderParser(path_, file.fd, static_cast<uint64_t>(info.st_size)).parse();
  dataStart_ = header.dataStart;
  dataBytes_ = header.dataBytes;
  checksummedHeader_ = std::move(header.checksummed);
  metadata_ = std::move(header.metadata);
  tensors_ = std::move(header.tensors);
  fd_ = file.release();
}

SafetensorsReader::~SafetensorsReader() {
  if (fd_ >= 0)
    ::close(fd_);
}

void SafetensorsReader::error(const std::string &message) const {
  throw CheckpointError(path_ + ": " + message);
}

const TensorInfo *SafetensorsReader::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void SafetensorsReader::readChunk(void *out, size_t bytes, uint64_t offset) {
  uint64_t at = dataStart_ + offset;
  readExactly(path_, fd_, out, bytes, at);
  // The pass never comes back to these pages: dropping them keeps a file
  // larger than memory from pushing out the pages being restored (e.g. a
  // disk-placed table's). From the page boundary below `at`, so the page
  // the previous chunk ended in goes too. Only a hint: a failure is harmless.
  static const uint64_t kPage = uint64_t(::sysconf(_SC_PAGESIZE));
  uint64_t from = at - at % kPage;
  ::posix_fadvise(fd_, static_cast<off_t>(from), static_cast<off_t>(at + bytes - from),
                  POSIX_FADV_DONTNEED);
}

void SafetensorsReader::read(const std::vector<TensorCopy> &copies) {
  // Each copy as a byte range of the data buffer, checked before any read.
  struct Span {
    uint64_t begin;
    uint64_t end;
    std::byte *out;
  };
  std::vector<Span> spans;
  for (const TensorCopy &copy : copies) {
    const TensorInfo *tensor = find(copy.name);
    if (!tensor)
      error("cannot read tensor '" + copy.name + "': the file has none of that name");
    if (copy.offset > tensor->bytes || copy.bytes > tensor->bytes - copy.offset)
      error("cannot read bytes [" + std::to_string(copy.offset) + ", " +
            std::to_string(copy.offset + copy.bytes) + ") of tensor '" + copy.name +
            "', which has " + std::to_string(tensor->bytes) + " bytes");
    if (copy.bytes == 0)
      continue;
    if (!copy.out)
      error("cannot read tensor '" + copy.name + "': no destination was given");
    spans.push_back({tensor->begin + copy.offset, tensor->begin + copy.offset + copy.bytes,
                     static_cast<std::byte *>(copy.out)});
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Span &a, const Span &b) { return a.begin < b.begin; });
  ::posix_fadvise(fd_, static_cast<off_t>(dataStart_), static_cast<off_t>(dataBytes_),
                  POSIX_FADV_SEQUENTIAL);

  // The checksum covers the buffer in file order, each byte once: `hashed`
  // is where it has got to. Bytes a copy reads are hashed in its
  // destination; the others go through `bounce`.
  std::optional<FileChecksum> checksum;
  if (verify_ == Verify::Yes)
    checksum.emplace(FileChecksum::HeaderText{checksummedHeader_});
  uint64_t hashed = 0;
  std::vector<std::byte> bounce;
  auto hashUpTo = [&](uint64_t end) {
    while (hashed < end) {
      size_t bytes = size_t(std::min<uint64_t>(chunkBytes_, end - hashed));
      if (bounce.size() < bytes)
        bounce.resize(bytes);
      readChunk(bounce.data(), bytes, hashed);
      checksum->update(bounce.data(), bytes);
      hashed += bytes;
    }
  };
  for (const Span &span : spans) {
    if (checksum)
      hashUpTo(span.begin);
    for (uint64_t at = span.begin; at < span.end;) {
      size_t bytes = size_t(std::min<uint64_t>(chunkBytes_, span.end - at));
      std::byte *out = span.out + (at - span.begin);
      readChunk(out, bytes, at);
      if (checksum && at + bytes > hashed) { // not yet hashed: overlapping copies
        uint64_t from = std::max(at, hashed);
        checksum->update(out + (from - at), size_t(at + bytes - from));
        hashed = at + bytes;
      }
      at += bytes;
    }
  }
  if (checksum) {
    hashUpTo(dataBytes_);
    verifyChecksum(checksum->value());
  }
}

void SafetensorsReader::verifyChecksum(const std::string &computed) const {
  auto stored = metadata_.find(kChecksumKey);
  if (stored == metadata_.end()) {
    bool legacy = metadata_.count(kLegacyChecksumKey) != 0;
    error(std::string("no '") + kChecksumKey + "' metadata, so its header and data cannot be " +
          "verified (" +
          (legacy ? "written by an older embc, whose checksum covered the data only"
                  : "written by another tool, or the key was removed") +
          "); --no-verify reads it unverified");
  }
  if (stored->second != computed)
    error("checksum mismatch: the file is corrupt (stored " + stored->second +
          ", computed " + computed + " over the header and data)");
}

SafetensorsFile
embc::runtime::checkpoint::readSafetensors(const std::string &path, Verify verify) {
  SafetensorsReader reader(path, verify);
  SafetensorsFile file;
  file.metadata = reader.metadata();
  std::vector<TensorCopy> copies;
  for (const auto &[name, info] : reader.tensors()) {
    TensorData &tensor = file.tensors[name];
    tensor.dtype = info.dtype;
    tensor.shape = info.shape;
    tensor.bytes.resize(info.bytes);
    copies.push_back({name, 0, info.bytes, tensor.bytes.data()});
  }
  reader.read(copies);
  return file;
}
