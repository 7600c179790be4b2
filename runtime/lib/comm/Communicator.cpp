//===- Communicator.cpp - what every communicator shares ------------------===//

#include "embc/runtime/comm/Communicator.h"

#include "CommSupport.h"

#include <cstdio>
#include <cstdlib>
#include <map>

using namespace embc::runtime::comm;

Communicator::~Communicator() = default;

size_t embc::runtime::comm::sizeOf(DType type) {
  return detail::byDType<size_t>(type, 4, 8, 4, 8, 1);
}

bool embc::runtime::comm::launchedByMpi() {
  // OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE; MPICH/Hydra PMI_SIZE; PMIx
  // launchers (srun --mpi=pmix, prterun) PMIX_RANK. Checked in builds
  // without MPI too: those must refuse (createMpiCommunicator throws), not
  // run as N unrelated single processes.
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name))
      return true;
  return false;
}

static std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

void embc::runtime::comm::checkSameEverywhere(Communicator &comm, uint64_t fingerprint,
                                              const std::string &what) {
  std::vector<uint64_t> all(static_cast<size_t>(comm.size()));
  comm.allGather(&fingerprint, all.data(), 1, DType::I64);
  // Every rank sees the same gathered values, so every rank builds the same
  // message and throws: none is left waiting in a later collective.
  std::map<uint64_t, std::vector<int>> others; // value -> ranks disagreeing with rank 0
  for (int r = 1; r < comm.size(); ++r)
    if (all[r] != all[0])
      others[all[r]].push_back(r);
  if (others.empty())
    return;
  std::string message = "ranks disagree on " + what + ": rank 0 has " + hex(all[0]);
  for (const auto &[value, ranks] : others) {
    message += ranks.size() == 1 ? ", rank " : ", ranks ";
    for (size_t i = 0; i < ranks.size(); ++i)
      message += (i ? ", " : "") + std::to_string(ranks[i]);
    message += (ranks.size() == 1 ? " has " : " have ") + hex(value);
  }
  // "the plan" reads "start every rank with the same plan".
  std::string noun = what.rfind("the ", 0) == 0 ? what.substr(4) : what;
  message += " (start every rank with the same " + noun + ")";
  throw CommError(message);
}
