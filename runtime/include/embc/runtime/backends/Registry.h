//===- Registry.h - backends by name -----------------------------*- C++ -*-===//
//
// The one way programs (embrun, emb-parity, the tests) get a Backend: by
// name, from one table (runtime/lib/backends/Registry.cpp) that lists every
// backend the runtime has. A new backend is a library under
// runtime/lib/backends/ and one row of that table; embrun's --device and
// --help follow from it.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_BACKENDS_REGISTRY_H
#define EMBC_RUNTIME_BACKENDS_REGISTRY_H

#include "embc/runtime/backends/BackendInfo.h"
#include "embc/runtime/exec/Executor.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace embc::runtime {

/// What a backend may need to start; each takes the fields it knows.
struct BackendOptions {
  /// cpu: the most threads (0: every CPU the process may use).
  int threads = 0;
  /// cuda, emulated: capture each schedule once and replay it (CUDA graphs).
  bool cudaGraphs = true;
  /// cuda, emulated: bind kernels the codegen left unlowered as doing
  /// nothing (emb-parity runs them on the CPU). Never for training.
  bool allowMissing = false;
  /// The job's ranks (null: one process). cuda: a rank takes its host's
  /// GPU by its local rank.
  comm::Communicator *ranks = nullptr;
  /// cuda: the plan has collectives over several ranks, which a GPU runs
  /// over NCCL on `ranks` (bootstrapped from them) on the device's stream.
  bool deviceCollectives = false;
  /// Where a backend says which device it took (null: nowhere).
  std::ostream *log = nullptr;
};

/// Every backend, in the table's order.
std::vector<BackendInfo> knownBackends();
/// The names, as "cpu, cuda, emulated".
std::string knownBackendNames();

/// Whether backend `name` can run here; `why` says why not (no GPU, built
/// without the CUDA toolkit). Throws std::invalid_argument for an unknown
/// name.
bool backendAvailable(std::string_view name, std::string &why);

/// Backend `name` ("cpu", "cuda", "emulated"). Throws std::invalid_argument
/// naming the known backends for an unknown name, and what the backend
/// throws when it cannot start (cuda::DeviceError: no GPU).
std::unique_ptr<Backend> createBackend(std::string_view name, const BackendOptions &options);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_BACKENDS_REGISTRY_H
