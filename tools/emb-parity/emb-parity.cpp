//===- emb-parity.cpp - every kernel on the CPU and on a CUDA device -------===//
//
// emb-parity PLAN [--device emulated|cuda] [--steps N] [--tolerance T]
//
// Runs a plan's training steps, then an evaluation's forward, kernel by
// kernel on the CPU backend (the
// reference) and on the CUDA backend, starting each kernel from the same
// state (the CPU's, copied to the device), and compares every output: f32
// and f64 by the largest difference relative to the largest magnitude of
// the CPU's values, integers and quantised codes exactly, dynamic buffers
// over the CPU's filled length (and the length itself). A kernel the plan
// left unlowered (EMBC_CUDA_PARTIAL=1) runs on the CPU only and is listed
// as such. Exit 0 when every output is within the tolerance, 1 otherwise.
//
// This is the per-op parity check of the CUDA codegen: in CI on the
// emulated device, on a lent GPU with --device cuda.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/BlasCore.h"
#include "embc/runtime/Plan.h"
#include "embc/runtime/backends/Registry.h"
#include "embc/runtime/cpu/HalfFloat.h"
#include "embc/runtime/data/Data.h"
#include "embc/runtime/exec/Executor.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace rt = embc::runtime;

namespace {

struct Difference {
  double absolute = 0, relative = 0;
  int64_t mismatches = 0; ///< integer / code elements that differ
  bool lengthDiffers = false;
};

double valueAt(const std::byte *p, rt::DType type, int64_t i) {
  switch (type) {
  case rt::DType::F32:
    return double(reinterpret_cast<const float *>(p)[i]);
  case rt::DType::F64:
    return reinterpret_cast<const double *>(p)[i];
  case rt::DType::F16:
    return rt::cpu::halfToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case rt::DType::BF16:
    return rt::cpu::bf16ToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case rt::DType::I64:
    return double(reinterpret_cast<const int64_t *>(p)[i]);
  case rt::DType::U8:
    return double(reinterpret_cast<const uint8_t *>(p)[i]);
  }
  return 0;
}

Difference compare(const rt::Plan &plan, int32_t buffer, const std::byte *cpu,
                   const std::byte *dev, int64_t rows) {
  const rt::Buffer &b = plan.buffers[size_t(buffer)];
  int64_t inner = 1;
  for (size_t d = 1; d < b.shape.size(); ++d)
    inner *= b.shape[d];
  int64_t n = b.shape.empty() ? 1 : rows * inner;
  const std::byte *x = cpu + b.offset, *y = dev + b.offset;
  Difference diff;
  bool exact = b.dtype == rt::DType::I64 || b.dtype == rt::DType::U8;
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    double u = valueAt(x, b.dtype, i), v = valueAt(y, b.dtype, i);
    if (exact) {
      diff.mismatches += u != v;
      continue;
    }
    // Infinities (a sampled softmax's excluded logits) must match exactly
    // and leave the scale to the finite values.
    if (std::isinf(u) || std::isinf(v)) {
      if (u != v)
        diff.absolute = INFINITY;
      continue;
    }
    scale = std::max(scale, std::fabs(u));
    double d = (std::isnan(u) != std::isnan(v)) ? INFINITY : std::fabs(u - v);
    if (!std::isnan(d))
      diff.absolute = std::max(diff.absolute, d);
  }
  diff.relative = diff.absolute == 0 ? 0 : diff.absolute / std::max(scale, 1e-30);
  return diff;
}

} // namespace

int main(int argc, char **argv) {
  // Before anything loads work onto OpenBLAS: its fallback kernels on a CPU
  // it does not know are 5x slower (cpu/BlasCore.h).
  embc::runtime::cpu::useBestBlasKernels(argv);
  CLI::App app{"Runs every kernel of a plan on the CPU and on a CUDA device and compares"};
  std::string planPath, device = "emulated";
  int steps = 2, threads = 0;
  double tolerance = 1e-5;
  uint64_t seed = 1;
  app.add_option("plan", planPath, "The plan file")->required();
  app.add_option("--device", device, "emulated or cuda")
      ->check(CLI::IsMember({"emulated", "cuda"}));
  app.add_option("--steps", steps, "Optimizer steps to compare")->check(CLI::PositiveNumber);
  app.add_option("--tolerance", tolerance, "Largest relative difference of a float output");
  app.add_option("--seed", seed, "Initialisation and data seed");
  app.add_option("--threads", threads, "CPU threads (0: all cores)");
  CLI11_PARSE(app, argc, argv);

  std::string error;
  std::optional<rt::Plan> plan = rt::readPlanFile(planPath, error);
  if (!plan) {
    std::cerr << "emb-parity: error: " << error << "\n";
    return 1;
  }
  if (!plan->schedule.empty()) {
    std::cerr << "emb-parity: error: the plan has a micro-batch schedule; compare it with "
                 "whole runs (embrun --device " << device << ")\n";
    return 1;
  }
  int worst = 0;
  try {
    rt::BackendOptions cpuOptions;
    cpuOptions.threads = threads;
    rt::Executor cpu(*plan, rt::createBackend("cpu", cpuOptions));
    rt::BackendOptions options;
    options.cudaGraphs = false;
    options.allowMissing = true;
    std::unique_ptr<rt::Backend> backend = rt::createBackend(device, options);
    std::cout << "emb-parity: " << plan->model << " on " << backend->description() << "\n";
    rt::Executor gpu(*plan, std::move(backend));
    cpu.initialize(seed);
    gpu.initialize(seed);

    rt::data::StreamOptions so;
    so.batchSize = plan->config.batchSize;
    so.seed = seed;
    so.threads = threads;
    auto stream = rt::data::openStream(so, cpu.featureSpecs(), 0);
    rt::data::Batch batch;
    double worstRelative = 0;
    int64_t outputs = 0, cpuOnly = 0;
    // Runs kernel i of the step (or update) on both devices from the CPU's
    // state and compares its outputs; `head` starts its lines.
    auto compareKernel = [&](const char *phase, int s, bool update, size_t i, bool training) {
      const rt::Kernel &k = (update ? plan->update : plan->step)[i];
      const rt::CudaKernel &lowered = (update ? plan->cuda.update : plan->cuda.step)[i];
      bool missing = lowered.launches.size() == 1 &&
                     lowered.launches[0].params.value("missing", false);
      gpu.copyStateFrom(cpu);
      cpu.runKernelForTest(update, i, training);
      char head[96];
      std::snprintf(head, sizeof head, "%d %-6s %3zu %-24s", s, phase, i, k.op.c_str());
      if (missing) {
        ++cpuOnly;
        std::cout << head << " (no CUDA lowering: CPU only)\n";
        return;
      }
      gpu.runKernelForTest(update, i, training);
      gpu.syncToHost();
      for (int32_t out : k.outputs) {
        const rt::Buffer &b = plan->buffers[size_t(out)];
        int64_t rows = b.shape.empty() ? 1 : b.shape[0];
        Difference d;
        if (b.dynamic) {
          rows = cpu.filledLength(out);
          d.lengthDiffers = gpu.filledLength(out) != rows;
        }
        Difference c = compare(*plan, out, cpu.hostArena(), gpu.hostArena(), rows);
        c.lengthDiffers = d.lengthDiffers;
        bool bad = c.lengthDiffers || c.mismatches > 0 || !(c.relative <= tolerance);
        ++outputs;
        worstRelative = std::max(worstRelative, c.relative);
        if (bad)
          worst = 1;
        std::printf("%s %-28s rel %.3e abs %.3e%s%s %s\n", head, b.name.c_str(), c.relative,
                    c.absolute,
                    c.mismatches ? (" mismatches " + std::to_string(c.mismatches)).c_str() : "",
                    c.lengthDiffers ? " LENGTH DIFFERS" : "", bad ? "FAIL" : "ok");
      }
    };
    for (int s = 1; s <= steps; ++s) {
      cpu.zeroGradients();
      stream->next(batch);
      cpu.loadBatch(batch);
      cpu.beginStep(s, 1.0);
      for (size_t i = 0; i < plan->step.size(); ++i)
        compareKernel("step", s, false, i, true);
      for (size_t i = 0; i < plan->update.size(); ++i)
        compareKernel("update", s, true, i, true);
    }
    // Then an evaluation's forward (no dropout, the evaluation's masks, a
    // sampled softmax's full logits).
    stream->next(batch);
    cpu.loadBatch(batch);
    for (size_t i = 0; i < size_t(plan->forwardKernels); ++i)
      compareKernel("eval", steps, false, i, false);
    std::printf("emb-parity: %lld outputs compared over %d steps, worst relative difference "
                "%.3e (tolerance %.1e), %lld kernel runs on the CPU only: %s\n",
                (long long)outputs, steps, worstRelative, tolerance, (long long)cpuOnly,
                worst ? "FAIL" : "OK");
  } catch (const std::exception &e) {
    std::cerr << "emb-parity: error: " << e.what() << "\n";
    return 1;
  }
  return worst;
}
