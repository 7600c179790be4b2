//===- Safetensors.h - read and write safetensors files ---------*- C++ -*-===//
//
// The Hugging Face safetensors format, byte for byte: an 8-byte little-endian
// u64 N, N bytes of JSON header (padded with spaces to a multiple of 8), then
// the data buffer. The header maps each tensor name to its dtype, shape and
// [begin, end) byte offsets into the buffer, plus an optional "__metadata__"
// object of string values. Checkpoints and exported embeddings both use it,
// so trained tables load directly in Python (`safetensors`, PyTorch, NumPy).
//
// Writes are atomic (temp file, fsync, rename) so a crash mid-save never
// destroys the previous file. The writer also stores an XXH64 checksum of the
// header and the data buffer in the metadata ("embc.checksum"); the reader
// requires and verifies it unless told not to (Verify::No, embrun's
// --no-verify), so an edited offset or step is caught like a flipped bit.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CHECKPOINT_SAFETENSORS_H
#define EMBC_RUNTIME_CHECKPOINT_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::checkpoint {

/// Metadata key of the checksum: "xxh64:" and 16 lowercase hex digits of
/// XXH64 (seed 0) over the header without this key, written canonically
/// (nlohmann's dump: sorted keys, no spaces), then the data buffer. Covering
/// the header means swapped data_offsets or an edited step are refused.
/// writeSafetensors always sets it, replacing any value the caller passed,
/// so re-saving loaded metadata never keeps a stale one.
inline constexpr const char *kChecksumKey = "embc.checksum";
inline constexpr const char *kChecksumPrefix = "xxh64:";
/// The key of the data-only checksum embc wrote before; such a file is
/// refused as unverifiable unless Verify::No.
inline constexpr const char *kLegacyChecksumKey = "embc.xxh64";

/// Largest header the reader accepts; the official implementation uses the
/// same bound. A larger length means the file is not safetensors.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

/// A tensor to write: borrowed memory, not copied until it is written.
struct TensorView {
  std::string name;
  std::string dtype; ///< safetensors dtype name: "F32", "F64", "I64", ...
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t bytes = 0; ///< must equal product(shape) * dtypeSize(dtype)
};

/// A tensor read from a file, owning its bytes (little-endian, row-major).
struct TensorData {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::map<std::string, TensorData> tensors;
};

/// Every failure to read, validate or write a safetensors file or checkpoint.
/// Messages name the file (and the tensor, where one is involved).
class CheckpointError : public std::runtime_error {
public:
  using runtime_error::runtime_error;
};

/// Bytes per element of a safetensors dtype (BOOL, U8, I8, F8_E5M2, F8_E4M3,
/// I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64); nullopt if unknown.
std::optional<size_t> dtypeSize(const std::string &dtype);

/// Writes `tensors` (in the given order, contiguous) and `metadata` to
/// `path` atomically: PATH.tmp is written, flushed and fsync'd, then renamed
/// over PATH. On any failure PATH is untouched, the temp file is removed and
/// a CheckpointError names the path and the errno text. Tensor names must be
/// unique and not "__metadata__"; each view's byte count must match its
/// dtype and shape.
void writeSafetensors(const std::string &path,
                      const std::vector<TensorView> &tensors,
                      const std::map<std::string, std::string> &metadata);

/// Whether the reader requires and checks kChecksumKey.
enum class Verify { Yes, No };

/// Reads and fully validates `path`: header length, header JSON (no NUL
/// byte), dtypes, shapes against byte ranges, offsets (in range, contiguous,
/// no overlaps or gaps), trailing bytes, duplicate names, and (Verify::Yes)
/// the checksum, which must be present. Holds every tensor in memory: a
/// file that may not fit is read with SafetensorsReader, which this uses.
SafetensorsFile readSafetensors(const std::string &path, Verify verify = Verify::Yes);

} // namespace embc::runtime::checkpoint

#endif // EMBC_RUNTIME_CHECKPOINT_SAFETENSORS_H
