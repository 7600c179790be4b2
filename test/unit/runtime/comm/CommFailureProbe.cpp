//===- CommFailureProbe.cpp - a job whose rank 1 fails, for the watchdog --===//
//
// `mpirun -np 2 comm-failure-probe MODE`: rank 0 enters an all-reduce that
// rank 1 never joins, because rank 1
//   hang: sleeps forever (rank 0's watchdog must abort the job),
//   kill: raises SIGKILL (mpirun or the watchdog must end rank 0),
//   exit: leaves main normally (MPI_Finalize at exit; rank 0 must not wait
//         for it forever),
//   late: never starts MPI (stopped before its init: rank 0 waits inside
//         MPI's init, or the first handshake, and its watchdog must end it).
// Every rank that returns from main says so and exits with 3, so a job that
// ends "normally" fails comm_failure_test.py.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/comm/Communicator.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

using namespace embc::runtime::comm;

int main(int argc, char **argv) {
  if (argc != 2 || (std::strcmp(argv[1], "hang") && std::strcmp(argv[1], "kill") &&
                    std::strcmp(argv[1], "exit") && std::strcmp(argv[1], "late"))) {
    std::fprintf(stderr, "usage: %s hang|kill|exit|late\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  const char *launched = std::getenv("OMPI_COMM_WORLD_RANK");
  if (mode == "late" && launched && std::strcmp(launched, "1") == 0)
    for (;;)
      pause();
  auto comm = createMpiCommunicator();
  comm->barrier(); // everybody is up before rank 1 fails
  if (comm->rank() == 1) {
    if (mode == "hang")
      for (;;)
        pause();
    if (mode == "kill")
      raise(SIGKILL);
    std::fprintf(stderr, "rank 1: leaving without joining the all-reduce\n");
    return 0;
  }
  std::vector<float> gradient(1 << 20, 1.0f);
  comm->allReduce(gradient.data(), gradient.size(), DType::F32, ReduceOp::Sum);
  std::fprintf(stderr, "rank %d: the all-reduce returned although rank 1 never joined\n",
               comm->rank());
  return 3;
}
