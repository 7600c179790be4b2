//===- NoNcclCommunicator.cpp - createNcclCommunicator without NCCL -------===//
//
// Built instead of NcclCommunicator.cpp when CMake found no CUDA toolkit or
// no NCCL library in it.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/comm/Communicator.h"

using namespace embc::runtime::comm;

std::unique_ptr<Communicator>
embc::runtime::comm::createNcclCommunicator(Communicator &, int, void *, const CommOptions &) {
  throw CommError("this embrun was built without NCCL (it needs the CUDA toolkit with "
                  "libnccl and nccl.h) and cannot run collectives on the GPU");
}
