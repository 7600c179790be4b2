//===- embrun.cpp - run a compiled embc plan -------------------------------===//
//
// embrun PLAN [--steps N | --epochs E] [--data KIND:PATH] [--eval KIND:PATH]
//             [--eval-every N] [--seed S] [--log FILE.jsonl] [--save DIR]
//             [--resume DIR] [--export-embeddings FILE] [--threads N]
//
// Validates the plan, then trains it on the CPU or the CUDA backend
// (--device; docs/cuda.md). Links the runtime
// only (no LLVM/MLIR), so it runs where the compiler is not installed. Every
// failure (a bad plan, data or checkpoint) is one clear line and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Plan.h"
#include "embc/runtime/RunOptions.h"
#include "embc/runtime/cuda/CudaBackend.h"
#include "embc/runtime/exec/Trainer.h"

#include <unistd.h>

#include <exception>
#include <iostream>

namespace rt = embc::runtime;

/// --device: cpu, cuda, emulated, or auto (CUDA when the plan has a CUDA
/// program and a GPU is usable, else the CPU). The choice and, for auto, the
/// reason are printed to stderr: a run never changes device silently.
static std::unique_ptr<rt::Backend> chooseBackend(const rt::Plan &plan,
                                                  const rt::RunOptions &options) {
  rt::CudaBackendOptions cudaOptions;
  cudaOptions.graphs = options.cudaGraphs;
  std::string device = options.device;
  if (device == "auto") {
    std::string why;
    if (plan.cuda.source.empty())
      why = "the plan has no CUDA program";
    else if (rt::cuda::cudaDeviceAvailable(why))
      device = "cuda";
    if (device == "auto") {
      std::cerr << "embrun: device: cpu (no CUDA: " << why << ")\n";
      device = "cpu";
    }
  }
  if (device == "cpu")
    return rt::createCpuBackend(options.threads);
  std::unique_ptr<rt::cuda::Device> dev =
      device == "cuda" ? rt::cuda::createCudaDevice(0) : rt::cuda::createEmulatedDevice();
  std::cerr << "embrun: device: " << dev->description() << "\n";
  return rt::createCudaBackend(std::move(dev), cudaOptions);
}

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  embc::runtime::ParseResult parsed = embc::runtime::parseRunOptions(args);
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
  try {
    std::unique_ptr<embc::runtime::Backend> backend = chooseBackend(*plan, options);
    embc::runtime::train(*plan, options, std::move(backend), std::cout, isatty(STDOUT_FILENO));
  } catch (const std::exception &e) {
    std::cout.flush();
    std::cerr << "\nembrun: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
