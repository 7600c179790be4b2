//===- Registry.cpp - every backend, in one table ------------------------===//
//
// An explicit table rather than self-registering static objects: the
// backends are static libraries, and a linker drops an object file nobody
// references, registrar and all. Here every backend is referenced, so
// linking EmbBackends links them all.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/backends/Registry.h"

#include "embc/runtime/backends/CpuBackend.h"
#include "embc/runtime/backends/CudaBackend.h"
#include "embc/runtime/cuda/Device.h"

#include <ostream>
#include <stdexcept>

using namespace embc::runtime;

namespace {

/// The CUDA backend on a real GPU or on the emulated device.
std::unique_ptr<Backend> createCuda(const BackendOptions &o, bool emulated) {
  // Ranks on one host take one GPU each, by their rank among the host's
  // ranks (MPI_COMM_TYPE_SHARED: any launcher), round robin over its GPUs.
  int ordinal = !emulated && o.ranks ? cuda::cudaDeviceOrdinalFor(o.ranks->localRank()) : 0;
  std::unique_ptr<cuda::Device> device =
      emulated ? cuda::createEmulatedDevice() : cuda::createCudaDevice(ordinal);
  if (o.log)
    *o.log << "embrun: device: " << device->description() << "\n";
  // A GPU's collectives run over NCCL on the device's stream, bootstrapped
  // from the ranks; the emulation's memory is the host's, which the ranks'
  // own communicator reaches.
  std::unique_ptr<comm::Communicator> collectives;
  if (!emulated && o.ranks && o.deviceCollectives) {
    collectives = comm::createNcclCommunicator(*o.ranks, ordinal, device->nativeStream());
    if (o.log)
      *o.log << "embrun: collectives: NCCL over " << o.ranks->size() << " ranks\n";
  }
  CudaBackendOptions cudaOptions;
  cudaOptions.graphs = o.cudaGraphs;
  cudaOptions.allowMissing = o.allowMissing;
  return createCudaBackend(std::move(device), cudaOptions, std::move(collectives));
}

struct Entry {
  BackendInfo info;
  bool (*available)(std::string &why);
  std::unique_ptr<Backend> (*create)(const BackendOptions &);
};

/// The table: one row per backend.
const Entry kBackends[] = {
    {{"cpu", "the CPU kernels on one team of threads (--threads)"},
     [](std::string &) { return true; },
     [](const BackendOptions &o) { return createCpuBackend(o.threads); }},
    {{"cuda", "the plan's CUDA program on a GPU (NVRTC, cuBLASLt, CUDA graphs)"},
     [](std::string &why) { return cuda::cudaDeviceAvailable(why); },
     [](const BackendOptions &o) { return createCuda(o, /*emulated=*/false); }},
    {{"emulated", "the plan's CUDA program on the CPU, emulating the GPU (slow; for tests)"},
     [](std::string &) { return true; },
     [](const BackendOptions &o) { return createCuda(o, /*emulated=*/true); }},
};

const Entry &find(std::string_view name) {
  for (const Entry &e : kBackends)
    if (name == e.info.name)
      return e;
  throw std::invalid_argument("unknown backend '" + std::string(name) +
                              "' (known: " + knownBackendNames() + ")");
}

} // namespace

std::vector<BackendInfo> embc::runtime::knownBackends() {
  std::vector<BackendInfo> all;
  for (const Entry &e : kBackends)
    all.push_back(e.info);
  return all;
}

std::string embc::runtime::knownBackendNames() {
  std::string names;
  for (const Entry &e : kBackends)
    names += (names.empty() ? "" : ", ") + std::string(e.info.name);
  return names;
}

bool embc::runtime::backendAvailable(std::string_view name, std::string &why) {
  return find(name).available(why);
}

std::unique_ptr<Backend> embc::runtime::createBackend(std::string_view name,
                                                      const BackendOptions &options) {
  return find(name).create(options);
}
