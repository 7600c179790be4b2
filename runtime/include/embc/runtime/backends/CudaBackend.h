//===- CudaBackend.h - plans on a CUDA device -------------------*- C++ -*-===//
//
// The CUDA backend runs a plan's CUDA program (Plan::cuda) on a Device: a
// real GPU or the CPU emulation. One device allocation holds the arena (laid
// out by the plan), the scratch and the length cells; the executor keeps a
// host mirror of the arena for initialisation, batches and checkpoints and
// copies between the two at those points only. Programs normally reach it
// by name (Registry.h: "cuda", "emulated").
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_BACKENDS_CUDABACKEND_H
#define EMBC_RUNTIME_BACKENDS_CUDABACKEND_H

#include "embc/runtime/cuda/Device.h"
#include "embc/runtime/exec/Executor.h"

#include <memory>

namespace embc::runtime {

struct CudaBackendOptions {
  bool graphs = true; ///< capture each schedule once and replay it (CUDA graphs)
  /// Bind kernels the codegen left unlowered (EMBC_CUDA_PARTIAL) as doing
  /// nothing: emb-parity runs them on the CPU. Never for training.
  bool allowMissing = false;
};

/// Throws PlanError when the plan has no CUDA program. `collectives` is the
/// communicator the plan's collectives use on device memory: NCCL over the
/// job's ranks on the device's stream (Device::nativeStream) for a GPU; null
/// for the emulation, whose memory the job's communicator (ExecState::comm)
/// reaches directly. A GPU without it refuses a plan with collectives.
std::unique_ptr<Backend> createCudaBackend(std::unique_ptr<cuda::Device> device,
                                           CudaBackendOptions options = {},
                                           std::unique_ptr<comm::Communicator> collectives = {});

} // namespace embc::runtime

#endif // EMBC_RUNTIME_BACKENDS_CUDABACKEND_H
