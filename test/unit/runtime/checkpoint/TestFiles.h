//===- TestFiles.h - scratch directories and raw files for tests ----------===//
//
// Checkpoint tests write real files: each test gets its own directory under
// the system temp dir (removed afterwards), and helpers to read, write and
// hand-build the raw bytes of safetensors files.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_TEST_UNIT_RUNTIME_CHECKPOINT_TESTFILES_H
#define EMBC_TEST_UNIT_RUNTIME_CHECKPOINT_TESTFILES_H

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

namespace embc::test {

/// A fresh directory per test, named after the test and the process.
class ScratchDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("embc-" + std::string(info->test_suite_name()) + "-" +
            info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string &name) const {
    return (dir_ / name).string();
  }

  std::filesystem::path dir_;
};

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// The 8-byte little-endian length prefix.
inline std::string lengthPrefix(uint64_t length) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  return bytes;
}

/// A safetensors file as another tool would write it: the given header
/// text verbatim, then the data.
inline std::string rawSafetensors(const std::string &header,
                                  const std::string &data) {
  return lengthPrefix(header.size()) + header + data;
}

template <typename T> std::string bytesOf(const std::vector<T> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(T));
}

} // namespace embc::test

#endif // EMBC_TEST_UNIT_RUNTIME_CHECKPOINT_TESTFILES_H
