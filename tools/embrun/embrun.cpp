//===- embrun.cpp - run a compiled embc plan -------------------------------===//
//
// embrun PLAN [--steps N | --epochs E] [--data KIND:PATH] [--eval KIND:PATH]
//             [--eval-every N] [--seed S] [--log FILE.jsonl] [--save DIR]
//             [--resume DIR] [--export-embeddings FILE] [--threads N]
//
// Validates the plan, then trains it on a backend of the registry
// (--device: cpu, cuda, emulated; backends/Registry.h, docs/cuda.md). Under
// mpirun (`mpirun -np N embrun PLAN ...`, docs/distributed.md) every rank
// runs it on its slice of each batch; rank 0 prints, logs and writes
// checkpoints, and an error on any rank ends the whole job at once. Links
// the runtime only (no LLVM/MLIR), so it runs where the compiler is not
// installed. Every failure (a bad plan, data or checkpoint) is one clear
// line and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/BlasCore.h"
#include "embc/runtime/Plan.h"
#include "embc/runtime/RunOptions.h"
#include "embc/runtime/backends/Registry.h"
#include "embc/runtime/comm/Communicator.h"
#include "embc/runtime/exec/Trainer.h"

#include <unistd.h>
#include <xxhash.h>

#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>

namespace rt = embc::runtime;

/// --device: a backend of the registry (backends/Registry.h), or auto (cuda
/// when the plan has a CUDA program and a GPU is usable, else cpu). The
/// choice and, for auto, the reason are printed to stderr: a run never
/// changes device silently.
static std::unique_ptr<rt::Backend> chooseBackend(const rt::Plan &plan,
                                                  const rt::RunOptions &options,
                                                  rt::comm::Communicator *ranks) {
  int rank = ranks ? ranks->rank() : 0;
  std::string device = options.device;
  if (device == "auto") {
    std::string why;
    if (plan.cuda.source.empty())
      why = "the plan has no CUDA program";
    else if (rt::backendAvailable("cuda", why))
      device = "cuda";
    if (device == "auto") {
      if (rank == 0)
        std::cerr << "embrun: device: cpu (no CUDA: " << why << ")\n";
      device = "cpu";
    }
  }
  rt::BackendOptions backend;
  backend.threads = options.threads;
  backend.cudaGraphs = options.cudaGraphs;
  backend.ranks = ranks;
  backend.deviceCollectives = plan.config.jobRanks() > 1;
  backend.log = rank == 0 ? &std::cerr : nullptr;
  return rt::createBackend(device, backend);
}

/// What every rank must agree on: the plan as read (not its path: each rank
/// may read its own copy) and the other arguments.
static uint64_t runFingerprint(const rt::Plan &plan, const std::string &planPath,
                               const std::vector<std::string> &args) {
  std::string text = rt::serializePlan(plan);
  bool pathSkipped = false;
  for (const std::string &a : args) {
    if (!pathSkipped && a == planPath) {
      pathSkipped = true;
      continue;
    }
    text += '\0' + a;
  }
  return XXH64(text.data(), text.size(), 0);
}

/// Discards what is written to it (the console of ranks other than 0).
struct NullStream : std::ostream {
  NullStream() : std::ostream(nullptr) {}
};

int main(int argc, char **argv) {
  // Before anything loads work onto OpenBLAS: its fallback kernels on a CPU
  // it does not know are 5x slower (cpu/BlasCore.h).
  embc::runtime::cpu::useBestBlasKernels(argv);
  if (std::getenv("EMBC_BLAS_CORE_SET") && !embc::runtime::cpu::blasCore().empty())
    std::cerr << "embrun: BLAS: OpenBLAS " << embc::runtime::cpu::blasCore()
              << " kernels (it picked generic ones for this CPU; OPENBLAS_CORETYPE overrides)\n";
  std::vector<std::string> args(argv + 1, argv + argc);
  embc::runtime::ParseResult parsed = embc::runtime::parseRunOptions(args, rt::knownBackends());
  if (!parsed.options) {
    (parsed.exitCode == 0 ? std::cout : std::cerr) << parsed.message;
    return parsed.exitCode;
  }
  const embc::runtime::RunOptions &options = *parsed.options;
  std::string error;
  std::optional<embc::runtime::Plan> plan =
      embc::runtime::readPlanFile(options.planPath, error);
  if (!plan) {
    std::cerr << "embrun: error: " << error << "\n";
    return 1;
  }
  namespace comm = rt::comm;
  std::unique_ptr<comm::Communicator> ranks;
  try {
    ranks = comm::launchedByMpi() ? comm::createMpiCommunicator() : nullptr;
  } catch (const std::exception &e) {
    std::cerr << "embrun: error: " << e.what() << "\n";
    return 1;
  }
  int rank = ranks ? ranks->rank() : 0;
  try {
    rt::RunOptions mine = options;
    NullStream quiet;
    if (rank != 0) {
      // Rank 0 speaks for the job: the others print and log nothing. They
      // keep --save and --export-embeddings: rank 0 writes, and they hand it
      // their shards of sharded tables.
      mine.logPath.clear();
    }
    if (ranks && ranks->size() > 1)
      comm::checkSameEverywhere(*ranks, runFingerprint(*plan, options.planPath, args),
                                "the plan file and embrun's arguments");
    std::unique_ptr<rt::Backend> backend = chooseBackend(*plan, mine, ranks.get());
    rt::train(*plan, mine, std::move(backend), rank == 0 ? std::cout : quiet,
              rank == 0 && isatty(STDOUT_FILENO), ranks.get());
  } catch (const std::exception &e) {
    std::cout.flush();
    if (!ranks || ranks->size() == 1) {
      std::cerr << "\nembrun: error: " << e.what() << "\n";
      return 1;
    }
    // The other ranks may be waiting for this one: end the job now rather
    // than at their timeout.
    ranks->abort("\nembrun: rank " + std::to_string(rank) + ": error: " + e.what());
  }
  return 0;
}
