//===- NoMpiCommunicator.cpp - createMpiCommunicator without MPI ----------===//
//
// Built instead of MpiCommunicator.cpp when CMake found no MPI: a single
// process still runs (createSelfCommunicator), and asking for MPI says why
// it is missing.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/comm/Communicator.h"

using namespace embc::runtime::comm;

std::unique_ptr<Communicator> embc::runtime::comm::createMpiCommunicator(const CommOptions &) {
  throw CommError("this embrun was built without MPI (install an MPI such as OpenMPI's "
                  "libopenmpi-dev and rebuild) and cannot join a multi-process job");
}
