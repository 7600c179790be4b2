//===- SafetensorsFormat.cpp - dtypes and sizes of the format -------------===//
//
// The dtype table follows the safetensors specification, so files holding
// dtypes embc does not compute with (e.g. quantised U8 tables, BOOL masks)
// still read and write correctly.
//
//===----------------------------------------------------------------------===//

#include "SafetensorsInternal.h"

#include "embc/runtime/checkpoint/Checkpoint.h"
#include "embc/runtime/checkpoint/Safetensors.h"

#include <cstdio>
#include <limits>

using namespace embc::runtime::checkpoint;

std::optional<size_t>
embc::runtime::checkpoint::dtypeSize(const std::string &dtype) {
  static const std::pair<const char *, size_t> kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8},
  };
  for (const auto &[name, size] : kSizes)
    if (dtype == name)
      return size;
  return std::nullopt;
}

std::string embc::runtime::checkpoint::checksumHex(uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(digest));
  return text;
}

std::string FileChecksum::headerText(nlohmann::json header) {
  auto metadata = header.find("__metadata__");
  if (metadata != header.end() && metadata->is_object())
    metadata->erase(kChecksumKey);
  return header.dump();
}

FileChecksum::FileChecksum(HeaderText header)
    : state_(XXH64_createState(), &XXH64_freeState) {
  if (!state_)
    throw std::bad_alloc();
  XXH64_reset(state_.get(), 0);
  update(header.text.data(), header.text.size());
}

std::string FileChecksum::value() const {
  return kChecksumPrefix + checksumHex(XXH64_digest(state_.get()));
}

std::optional<uint64_t>
embc::runtime::checkpoint::tensorByteSize(const std::vector<int64_t> &shape,
                                          size_t elementSize) {
  uint64_t total = elementSize;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (dim != 0 && total > std::numeric_limits<uint64_t>::max() /
                                static_cast<uint64_t>(dim))
      return std::nullopt;
    total *= static_cast<uint64_t>(dim);
  }
  return total;
}

std::string
embc::runtime::checkpoint::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}
