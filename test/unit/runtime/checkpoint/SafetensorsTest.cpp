//===- SafetensorsTest.cpp - safetensors layout, round trip, validation ---===//
//
// The writer must produce exactly the Hugging Face layout (other tools read
// our embeddings), the reader must accept files from other tools, and every
// kind of damage must be refused with a message that says what is wrong.
//
//===----------------------------------------------------------------------===//

#include "ErrorText.h"
#include "TestFiles.h"

#include "embc/runtime/checkpoint/Safetensors.h"
#include "embc/runtime/checkpoint/SafetensorsReader.h"

#include <xxhash.h>

#include <csignal>
#include <cstring>
#include <filesystem>

#include <sys/resource.h>

using namespace embc::runtime::checkpoint;
using namespace embc::test;

namespace {

using SafetensorsTest = ScratchDirTest;

template <typename T> std::vector<T> valuesOf(const TensorData &tensor) {
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

template <typename T>
TensorView viewOf(const std::string &name, const std::string &dtype,
                  std::vector<int64_t> shape, const std::vector<T> &values) {
  return TensorView{name, dtype, std::move(shape), values.data(),
                    values.size() * sizeof(T)};
}

/// A valid two-tensor file written by writeSafetensors, for damaging.
std::string writeSample(const std::string &path) {
  static const std::vector<float> weights = {1, 2, 3, 4, 5, 6};
  static const std::vector<int64_t> counts = {7, 8, 9};
  writeSafetensors(path,
                   {viewOf("weights", "F32", {2, 3}, weights),
                    viewOf("counts", "I64", {3}, counts)},
                   {{"model", "sample"}});
  return readBytes(path);
}

uint64_t headerLengthOf(const std::string &file) {
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= static_cast<uint64_t>(static_cast<unsigned char>(file[i]))
              << (8 * i);
  return length;
}

TEST_F(SafetensorsTest, RoundTripsDtypesShapesAndMetadata) {
  std::vector<float> f32 = {1.5f, -2.25f, 3.0f, 0.0f, 1e-7f, -1e7f};
  std::vector<double> f64 = {3.141592653589793, -2.718281828459045};
  std::vector<int64_t> i64 = {0, -1, INT64_MAX, INT64_MIN};
  std::vector<uint16_t> bf16 = {0x3f80, 0xc000, 0x0000};
  std::vector<uint8_t> u8 = {0, 127, 255, 1};
  std::vector<float> scalar = {42.0f};
  std::vector<float> empty;
  std::map<std::string, std::string> metadata = {
      {"model", "dlrm"},
      {"step", "1200"},
      {"note", "quotes \" and \\ survive"}};
  std::string file = path("round.safetensors");
  writeSafetensors(
      file,
      {viewOf("f32", "F32", {2, 3}, f32), viewOf("f64", "F64", {2}, f64),
       viewOf("i64", "I64", {2, 1, 2}, i64), viewOf("bf16", "BF16", {3}, bf16),
       viewOf("u8", "U8", {2, 2}, u8), viewOf("scalar", "F32", {}, scalar),
       viewOf("empty", "F32", {0, 16}, empty)},
      metadata);

  SafetensorsFile read = readSafetensors(file);
  ASSERT_EQ(read.tensors.size(), 7u);
  EXPECT_EQ(read.tensors.at("f32").dtype, "F32");
  EXPECT_EQ(read.tensors.at("f32").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(valuesOf<float>(read.tensors.at("f32")), f32);
  EXPECT_EQ(valuesOf<double>(read.tensors.at("f64")), f64);
  EXPECT_EQ(valuesOf<int64_t>(read.tensors.at("i64")), i64);
  EXPECT_EQ(read.tensors.at("i64").shape, (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(valuesOf<uint16_t>(read.tensors.at("bf16")), bf16);
  EXPECT_EQ(valuesOf<uint8_t>(read.tensors.at("u8")), u8);
  EXPECT_EQ(read.tensors.at("scalar").shape, std::vector<int64_t>{});
  EXPECT_EQ(valuesOf<float>(read.tensors.at("scalar")), scalar);
  EXPECT_EQ(read.tensors.at("empty").shape, (std::vector<int64_t>{0, 16}));
  EXPECT_TRUE(read.tensors.at("empty").bytes.empty());
  for (const auto &[key, value] : metadata)
    EXPECT_EQ(read.metadata.at(key), value) << key;
  EXPECT_EQ(read.metadata.size(), metadata.size() + 1); // + the checksum
  EXPECT_EQ(read.metadata.at(kChecksumKey).rfind("xxh64:", 0), 0u);
  EXPECT_EQ(read.metadata.at(kChecksumKey).size(), 6u + 16u);
}

TEST_F(SafetensorsTest, ByteLayoutMatchesTheSpecification) {
  std::vector<float> values = {1.0f, -2.0f};
  std::string file = path("tiny.safetensors");
  writeSafetensors(file, {viewOf("w", "F32", {2}, values)}, {{"note", "hi"}});

  // Built by hand: length prefix, JSON header padded with spaces to a
  // multiple of 8, then the little-endian floats. The checksum covers the
  // header without itself, in canonical form (sorted keys), then the data.
  std::string data("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);
  std::string canonical = "{\"__metadata__\":{\"note\":\"hi\"},\"w\":{\"data_offsets\":[0,8],"
                          "\"dtype\":\"F32\",\"shape\":[2]}}";
  std::string covered = canonical + data;
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx",
                static_cast<unsigned long long>(XXH64(covered.data(), covered.size(), 0)));
  std::string header = std::string("{\"__metadata__\":{\"embc.checksum\":\"xxh64:") +
                       checksum +
                       "\",\"note\":\"hi\"},\"w\":{\"dtype\":\"F32\","
                       "\"shape\":[2],\"data_offsets\":[0,8]}}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string expected = lengthPrefix(header.size()) + header + data;

  std::string actual = readBytes(file);
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(headerLengthOf(actual) % 8, 0u);
  EXPECT_EQ(headerLengthOf(actual), header.size());
}

TEST_F(SafetensorsTest, ChecksumIsXxh64OfTheHeaderThenTheData) {
  std::vector<float> none;
  std::string file = path("empty.safetensors");
  writeSafetensors(file, {viewOf("nothing", "F32", {0}, none)}, {});
  std::string canonical = R"({"__metadata__":{},"nothing":{"data_offsets":[0,0],)"
                          R"("dtype":"F32","shape":[0]}})";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH64(canonical.data(), canonical.size(), 0)));
  EXPECT_EQ(readSafetensors(file).metadata.at(kChecksumKey), std::string("xxh64:") + hex);
}

TEST_F(SafetensorsTest, ReplacesAStaleChecksumPassedInMetadata) {
  std::vector<float> values = {1, 2};
  std::string file = path("stale.safetensors");
  writeSafetensors(file, {viewOf("w", "F32", {2}, values)},
                   {{kChecksumKey, "0000000000000000"}});
  EXPECT_NE(readSafetensors(file).metadata.at(kChecksumKey),
            "0000000000000000");
}

// A link planted at PATH.tmp (or a temp file a killed save left) is
// replaced, never written through: the file it points to keeps its bytes.
TEST_F(SafetensorsTest, ASaveDoesNotWriteThroughALinkAtItsTempPath) {
  const std::string victim = path("victim.txt"), file = path("ckpt.safetensors");
  writeBytes(victim, "must survive");
  std::filesystem::create_symlink(victim, file + ".tmp");
  std::vector<float> values = {1, 2};
  writeSafetensors(file, {viewOf("w", "F32", {2}, values)}, {});
  EXPECT_EQ(readBytes(victim), "must survive");
  EXPECT_EQ(readSafetensors(file).tensors.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(file + ".tmp")));
  writeBytes(file + ".tmp", "a stale temp file of a killed save");
  writeSafetensors(file, {viewOf("w", "F32", {2}, values)}, {});
  EXPECT_EQ(readSafetensors(file).tensors.size(), 1u);
}

// A file without the checksum cannot be told from one whose key was
// deleted, so it is refused unless the caller (embrun --no-verify) accepts
// it unverified; then files of other tools read as the format allows.
TEST_F(SafetensorsTest, ReadsFilesWithoutChecksumOnlyUnverified) {
  // Header order differs from buffer order, no metadata, padding spaces:
  // all allowed by the format.
  std::vector<float> a = {1, 2};
  std::vector<int64_t> b = {3};
  std::string header =
      "{\"b\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[8,16]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}    ";
  std::string file = path("foreign.safetensors");
  writeBytes(file, rawSafetensors(header, bytesOf(a) + bytesOf(b)));

  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "no 'embc.checksum' metadata, so its header and data cannot be verified "
                  "(written by another tool, or the key was removed); --no-verify reads it "
                  "unverified");
  SafetensorsFile read = readSafetensors(file, Verify::No);
  EXPECT_TRUE(read.metadata.empty());
  EXPECT_EQ(valuesOf<float>(read.tensors.at("a")), a);
  EXPECT_EQ(valuesOf<int64_t>(read.tensors.at("b")), b);

  // The data-only checksum of earlier embc versions is named as such.
  writeBytes(file, rawSafetensors(R"({"__metadata__":{"embc.xxh64":"0123456789abcdef"},)"
                                  R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                  bytesOf(a)));
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "written by an older embc, whose checksum covered the data only");
}

// The checksum covers the header: swapping the data_offsets of two tensors
// of the same shape leaves every data byte in place but is refused, and so
// is an edited metadata value of the same length.
TEST_F(SafetensorsTest, EditedHeaderFailsTheChecksum) {
  std::vector<float> a = {1, 2}, b = {3, 4};
  std::string file = path("edited.safetensors");
  writeSafetensors(file, {viewOf("a", "F32", {2}, a), viewOf("b", "F32", {2}, b)},
                   {{"step", "12"}});
  const std::string whole = readBytes(file);
  auto edited = [&](const std::string &from, const std::string &to) {
    std::string bytes = whole;
    size_t at = bytes.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    bytes.replace(at, from.size(), to);
    return bytes;
  };
  // Renaming a to b and b to a is swapping their data_offsets.
  std::string swapped = edited(R"("a":{)", R"("t":{)");
  swapped.replace(swapped.find(R"("b":{)"), 5, R"("a":{)");
  swapped.replace(swapped.find(R"("t":{)"), 5, R"("b":{)");
  writeBytes(file, swapped);
  EXPECT_EQ(valuesOf<float>(readSafetensors(file, Verify::No).tensors.at("a")), b);
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "checksum mismatch: the file is corrupt");

  writeBytes(file, edited(R"("step":"12")", R"("step":"99")"));
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "checksum mismatch: the file is corrupt");
}

// nlohmann stops reading at a NUL: bytes after one would be ignored.
TEST_F(SafetensorsTest, NulInTheHeaderIsRefused) {
  std::string file = path("nul.safetensors");
  std::vector<float> a = {1, 2};
  std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  writeBytes(file, rawSafetensors(header + std::string(1, '\0') + "{\"x\":1}", bytesOf(a)));
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file, Verify::No); }),
                  "NUL byte at offset " + std::to_string(header.size()) + " of the header");
}

TEST_F(SafetensorsTest, MissingFileNamesThePath) {
  std::string file = path("absent.safetensors");
  std::string message = checkpointErrorOf([&] { readSafetensors(file); });
  EXPECT_CONTAINS(message, file);
  EXPECT_CONTAINS(message, "No such file or directory");
}

TEST_F(SafetensorsTest, TruncationAnywhereIsRefused) {
  std::string file = path("whole.safetensors");
  std::string whole = writeSample(file);
  uint64_t headerEnd = 8 + headerLengthOf(whole);
  struct Cut {
    size_t size;
    const char *expected;
  } cuts[] = {
      {0, "too short for the 8-byte header length"},
      {5, "too short for the 8-byte header length"},
      {8, "header length"},
      {headerEnd / 2, "header length"},
      {headerEnd, "truncated: tensor"},
      {headerEnd + 3, "truncated: tensor"},
      {whole.size() - 1, "truncated: tensor"},
  };
  for (const Cut &cut : cuts) {
    std::string cutFile = path("cut.safetensors");
    writeBytes(cutFile, whole.substr(0, cut.size));
    std::string message = checkpointErrorOf([&] { readSafetensors(cutFile); });
    EXPECT_CONTAINS(message, cut.expected) << " (cut at " << cut.size << ")";
    EXPECT_CONTAINS(message, "truncated") << " (cut at " << cut.size << ")";
    EXPECT_CONTAINS(message, cutFile);
  }
}

TEST_F(SafetensorsTest, FlippedDataByteFailsTheChecksum) {
  std::string file = path("flipped.safetensors");
  std::string bytes = writeSample(file);
  bytes[bytes.size() - 5] ^= 0x10;
  writeBytes(file, bytes);
  std::string message = checkpointErrorOf([&] { readSafetensors(file); });
  EXPECT_CONTAINS(message, "checksum mismatch: the file is corrupt");
  EXPECT_CONTAINS(message, file);
}

TEST_F(SafetensorsTest, HeaderLengthLargerThanTheFileIsRefused) {
  std::string file = path("long-header.safetensors");
  std::string bytes = writeSample(file);
  writeBytes(file, lengthPrefix(bytes.size()) + bytes.substr(8));
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "is larger than the rest of the file");
}

TEST_F(SafetensorsTest, AbsurdHeaderLengthIsRefused) {
  std::string file = path("absurd.safetensors");
  writeBytes(file, lengthPrefix(uint64_t(1) << 40) + "{}");
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "header length 1099511627776 is absurd");
}

TEST_F(SafetensorsTest, BadHeaderJsonIsRefused) {
  std::string file = path("bad-json.safetensors");
  writeBytes(file, rawSafetensors("{\"w\": {\"dtype\": ", ""));
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "bad header JSON");
  writeBytes(file, rawSafetensors("[1, 2, 3]", ""));
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "not a JSON object");
  // A number no double holds (found by fuzz.checkpoint_reader): nlohmann
  // throws out_of_range, not parse_error.
  writeBytes(file, rawSafetensors("{\"w\": 1e999}", ""));
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }),
                  "bad header JSON");
}

/// Header entries that parse as JSON but break the format, each with the
/// part of the message that says what is wrong.
TEST_F(SafetensorsTest, InvalidHeaderEntriesAreRefused) {
  std::string eight(8, '\x01');
  struct Case {
    std::string header;
    std::string data;
    const char *expected;
  } cases[] = {
      {R"({"w":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", eight,
       "tensor 'w' has unknown dtype 'Q7'"},
      {R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight,
       "tensor 'w' is F32 [3] = 12 bytes, but its data_offsets [0,8] span 8 "
       "bytes"},
      {R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight,
       "is not a list of non-negative integers"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", eight,
       "end before they begin"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}})",
       eight, "unexpected field 'extra'"},
      {R"({"w":{"dtype":"F32","shape":[2]}})", eight, "missing 'data_offsets'"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
       R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
       std::string(12, '\0'), "gap in the data buffer: bytes 4..8"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
       R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       eight, "overlaps tensor 'a'"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
       std::string(12, '\0'), "gap in the data buffer: bytes 0..4"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
       eight + "xyz", "3 trailing bytes after the last tensor"},
      {R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", eight,
       "truncated: tensor 'w' ends at byte 16"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
       R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       eight, "duplicate tensor name 'w'"},
      {R"({"__metadata__":{"step":12},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
       eight, "__metadata__ value of 'step' is not a string"},
  };
  std::string file = path("invalid.safetensors");
  for (const Case &c : cases) {
    writeBytes(file, rawSafetensors(c.header, c.data));
    std::string message = checkpointErrorOf([&] { readSafetensors(file); });
    EXPECT_CONTAINS(message, c.expected) << " header: " << c.header;
    EXPECT_CONTAINS(message, file);
  }
}

TEST_F(SafetensorsTest, WriterRefusesInconsistentViewsAndWritesNothing) {
  std::vector<float> values = {1, 2, 3};
  std::string file = path("refused.safetensors");
  struct Case {
    std::vector<TensorView> views;
    const char *expected;
  } cases[] = {
      {{viewOf("w", "F32", {2}, values)},
       "tensor 'w' is F32 [2] = 8 bytes, but 12 bytes were given"},
      {{viewOf("w", "F32", {3}, values), viewOf("w", "F32", {3}, values)},
       "tensor 'w' appears twice"},
      {{viewOf("w", "F31", {3}, values)}, "unknown dtype 'F31'"},
      {{viewOf("__metadata__", "F32", {3}, values)}, "reserved"},
      {{viewOf("w", "F32", {-3}, values)}, "invalid shape [-3]"},
      {{TensorView{"w", "F32", {3}, nullptr, 12}}, "tensor 'w' has no data"},
  };
  for (const Case &c : cases) {
    std::string message =
        checkpointErrorOf([&] { writeSafetensors(file, c.views, {}); });
    EXPECT_CONTAINS(message, c.expected);
    EXPECT_CONTAINS(message, file);
    EXPECT_FALSE(std::filesystem::exists(file));
    EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));
  }
}

TEST_F(SafetensorsTest, FailedWriteLeavesThePreviousFileIntact) {
  std::string file = path("atomic.safetensors");
  std::vector<float> first = {1, 2, 3};
  writeSafetensors(file, {viewOf("w", "F32", {3}, first)}, {{"version", "1"}});
  std::string before = readBytes(file);

  // A directory where the temp file must go makes the write fail.
  std::filesystem::create_directory(file + ".tmp");
  std::vector<float> second = {4, 5, 6};
  std::string message = checkpointErrorOf([&] {
    writeSafetensors(file, {viewOf("w", "F32", {3}, second)},
                     {{"version", "2"}});
  });
  EXPECT_CONTAINS(message, file);
  EXPECT_CONTAINS(message, "Is a directory");
  EXPECT_TRUE(std::filesystem::is_directory(file + ".tmp"));
  EXPECT_EQ(readBytes(file), before);
  SafetensorsFile read = readSafetensors(file);
  EXPECT_EQ(read.metadata.at("version"), "1");
  EXPECT_EQ(valuesOf<float>(read.tensors.at("w")), first);
}

TEST_F(SafetensorsTest, WriteFailingMidwayRemovesTheTempFile) {
  std::string file = path("midway.safetensors");
  std::vector<float> first = {1, 2, 3};
  writeSafetensors(file, {viewOf("w", "F32", {3}, first)}, {});
  std::string before = readBytes(file);

  // A file-size limit makes write() fail with EFBIG part way through the
  // data, like a full disk would.
  std::vector<float> big(4096, 1.0f);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit limited = saved;
  limited.rlim_cur = 1024;
  auto savedHandler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string message = checkpointErrorOf(
      [&] { writeSafetensors(file, {viewOf("w", "F32", {4096}, big)}, {}); });
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, savedHandler);

  EXPECT_CONTAINS(message, "File too large");
  EXPECT_CONTAINS(message, file);
  EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));
  EXPECT_EQ(readBytes(file), before);
}

TEST_F(SafetensorsTest, MissingParentDirectoryNamesThePath) {
  std::string file = path("no/such/dir/x.safetensors");
  std::vector<float> values = {1};
  std::string message = checkpointErrorOf(
      [&] { writeSafetensors(file, {viewOf("w", "F32", {1}, values)}, {}); });
  EXPECT_CONTAINS(message, file);
  EXPECT_CONTAINS(message, "No such file or directory");
}

// The streamed reader (SafetensorsReader) is what readSafetensors and a
// resume use. A chunk of a few KiB and odd sizes make every tensor below
// span many chunks that start and end off page and element boundaries.
constexpr size_t kSmallChunk = 4099;

/// `count` floats that differ from each other and from a shifted copy.
std::vector<float> patternOf(size_t count, float seed) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = seed + float(i % 9973) * 0.5f - float(i / 9973);
  return values;
}

/// A file with a small tensor, an empty one and two large ones (3 MiB and
/// a bit, 1 MiB), and the values written.
struct LargeSample {
  std::vector<float> small = {1, 2, 3};
  std::vector<float> empty;
  std::vector<float> big = patternOf((3u << 20) / 4 + 3, 0.25f);
  std::vector<float> other = patternOf((1u << 20) / 4, -7.0f);

  explicit LargeSample(const std::string &file) {
    writeSafetensors(file,
                     {viewOf("small", "F32", {3}, small), viewOf("empty", "F32", {0, 4}, empty),
                      viewOf("big", "F32", {int64_t(big.size())}, big),
                      viewOf("other", "F32", {1024, 256}, other)},
                     {{"step", "9"}});
  }
};

TEST_F(SafetensorsTest, StreamedReadEqualsTheInMemoryBytes) {
  std::string file = path("large.safetensors");
  LargeSample sample(file);
  SafetensorsFile whole = readSafetensors(file);

  SafetensorsReader reader(file, Verify::Yes, kSmallChunk);
  EXPECT_EQ(reader.metadata(), whole.metadata);
  ASSERT_EQ(reader.tensors().size(), whole.tensors.size());
  std::map<std::string, std::vector<std::byte>> read;
  std::vector<TensorCopy> copies;
  for (const auto &[name, info] : reader.tensors()) {
    EXPECT_EQ(info.dtype, whole.tensors.at(name).dtype) << name;
    EXPECT_EQ(info.shape, whole.tensors.at(name).shape) << name;
    std::vector<std::byte> &bytes = read[name];
    bytes.resize(info.bytes);
    copies.push_back({name, 0, info.bytes, bytes.data()});
  }
  reader.read(copies);
  for (const auto &[name, tensor] : whole.tensors)
    EXPECT_TRUE(read.at(name) == tensor.bytes) << name;
  EXPECT_EQ(valuesOf<float>(whole.tensors.at("big")), sample.big);
  EXPECT_EQ(valuesOf<float>(whole.tensors.at("other")), sample.other);
}

// Parts of tensors (a shard's rows), overlapping and in any order: each
// lands exactly, and the checksum over the whole file still passes.
TEST_F(SafetensorsTest, StreamedReadOfRangesManyChunksLong) {
  std::string file = path("ranges.safetensors");
  LargeSample sample(file);
  SafetensorsReader reader(file, Verify::Yes, kSmallChunk);
  const uint64_t bigBytes = sample.big.size() * 4;
  std::vector<float> middle(300000), overlap(200000), tail(5), rows(512 * 256);
  reader.read({
      {"other", 256 * 256 * 4, rows.size() * 4, rows.data()},           // rows 256..767
      {"big", bigBytes - tail.size() * 4, tail.size() * 4, tail.data()}, // the last floats
      {"big", 100000 * 4, middle.size() * 4, middle.data()},
      {"big", 250000 * 4, overlap.size() * 4, overlap.data()}, // overlaps `middle`
  });
  auto slice = [](const std::vector<float> &values, size_t first, size_t count) {
    return std::vector<float>(values.begin() + first, values.begin() + first + count);
  };
  EXPECT_EQ(middle, slice(sample.big, 100000, middle.size()));
  EXPECT_EQ(overlap, slice(sample.big, 250000, overlap.size()));
  EXPECT_EQ(tail, slice(sample.big, sample.big.size() - tail.size(), tail.size()));
  EXPECT_EQ(rows, slice(sample.other, 256 * 256, rows.size()));
}

// The checksum is computed chunk by chunk as the data streams past: one
// flipped byte in the middle of the large tensor is the same error as for
// readSafetensors, whether that byte was copied somewhere or only hashed.
TEST_F(SafetensorsTest, StreamedReadVerifiesTheChecksumChunkByChunk) {
  std::string file = path("corrupt.safetensors");
  LargeSample sample(file);
  std::string bytes = readBytes(file);
  size_t dataStart = 8 + headerLengthOf(bytes);
  size_t flipped = dataStart + 12 + (sample.big.size() * 4) / 2 + 1; // after "small"
  bytes[flipped] ^= 0x40;
  writeBytes(file, bytes);

  std::string expected = file + ": checksum mismatch: the file is corrupt (stored xxh64:";
  EXPECT_CONTAINS(checkpointErrorOf([&] { readSafetensors(file); }), expected);
  std::vector<float> big(sample.big.size()), small(3);
  for (bool copyBig : {true, false}) {
    SafetensorsReader reader(file, Verify::Yes, kSmallChunk);
    std::vector<TensorCopy> copies = {{"small", 0, 12, small.data()}};
    if (copyBig)
      copies.push_back({"big", 0, big.size() * 4, big.data()});
    std::string message = checkpointErrorOf([&] { reader.read(copies); });
    EXPECT_EQ(message.rfind(expected, 0), 0u) << message;
    EXPECT_CONTAINS(message, " over the header and data)");
  }
  // Unverified, the copies are read as they are, flipped byte included.
  SafetensorsReader unverified(file, Verify::No, kSmallChunk);
  unverified.read({{"big", 0, big.size() * 4, big.data()}});
  EXPECT_EQ(std::memcmp(big.data(), bytes.data() + dataStart + 12, big.size() * 4), 0);
  EXPECT_NE(big, sample.big);
}

TEST_F(SafetensorsTest, StreamedReadRefusesBadCopiesBeforeReading) {
  std::string file = path("copies.safetensors");
  LargeSample sample(file);
  SafetensorsReader reader(file, Verify::Yes, kSmallChunk);
  std::vector<float> out(4, -1.0f);
  EXPECT_EQ(checkpointErrorOf([&] { reader.read({{"nothing", 0, 4, out.data()}}); }),
            file + ": cannot read tensor 'nothing': the file has none of that name");
  EXPECT_EQ(checkpointErrorOf([&] {
              reader.read({{"small", 0, 4, out.data()}, {"small", 8, 8, out.data()}});
            }),
            file + ": cannot read bytes [8, 16) of tensor 'small', which has 12 bytes");
  EXPECT_EQ(out, std::vector<float>(4, -1.0f)); // nothing was read
}

// A file that shrinks after it was opened (its header checked) is still
// refused as truncated when the pass reaches its end.
TEST_F(SafetensorsTest, FileTruncatedAfterOpeningIsRefused) {
  std::string file = path("shrinks.safetensors");
  LargeSample sample(file);
  SafetensorsReader reader(file, Verify::Yes, kSmallChunk);
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 1000);
  std::vector<float> small(3);
  std::string message = checkpointErrorOf([&] { reader.read({{"small", 0, 12, small.data()}}); });
  EXPECT_CONTAINS(message, file + ": truncated: the file ended at byte ");
}

} // namespace
