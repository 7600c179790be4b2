//===- CheckpointFuzz.cpp - libFuzzer target for the checkpoint reader
//-----===//
//
// readSafetensors reads a file that a full disk, a bad copy or another tool
// may have damaged. Each input is written to one scratch file and read with
// and without checksum verification: any failure must be a CheckpointError
// with a message, and a file accepted must hold, for every tensor, exactly
// the bytes its dtype and shape need. Built by run-fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/checkpoint/Safetensors.h"

#include "FuzzSupport.h"

#include <string>

using namespace embc::runtime::checkpoint;

namespace {

using embc::fuzz::scratchPath;

[[noreturn]] void violated(const std::string &what) {
  embc::fuzz::violated("CheckpointFuzz", what);
}

void readBack(Verify verify) {
  try {
    SafetensorsFile file = readSafetensors(scratchPath(), verify);
    for (const auto &[name, tensor] : file.tensors) {
      std::optional<size_t> element = dtypeSize(tensor.dtype);
      if (!element)
        violated("tensor '" + name + "' was accepted with dtype '" +
                 tensor.dtype + "'");
      uint64_t expected = *element;
      for (int64_t d : tensor.shape)
        expected *= uint64_t(d);
      if (tensor.bytes.size() != expected)
        violated("tensor '" + name +
                 "' holds a byte count its shape does not give");
    }
  } catch (const CheckpointError &e) {
    if (std::string(e.what()).empty())
      violated("a CheckpointError without a message");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  embc::fuzz::writeScratch(data, size);
  readBack(Verify::Yes);
  readBack(Verify::No);
  return 0;
}
