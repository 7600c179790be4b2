//===- KernelAbi.h - what generated CUDA kernels receive --------*- C++ -*-===//
//
// The contract between the compiler's CUDA codegen and the runtime's CUDA
// backend. Every generated kernel is
//
//   extern "C" __global__ void ENTRY(EmbArgs a)
//
// and finds its operands in a.p[i] in the order of the launch's `args`
// (plan: CudaLaunch). Values that change from step to step (optimizer step,
// learning-rate factor, loss scale) live in device memory (a.step), never in
// kernel parameters, so a captured CUDA graph replays correctly.
//
// The struct definitions are written once, in EMB_KERNEL_ABI, and used twice:
// compiled here for the host, and as text (kKernelAbiSource) at the top of
// every generated program, so both sides agree on the layout by construction.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CUDA_KERNELABI_H
#define EMBC_RUNTIME_CUDA_KERNELABI_H

#define EMB_MAX_ARGS 256

// clang-format off
#define EMB_KERNEL_ABI                                                        \
  /* Device-resident values of the running step (one per backend). */        \
  struct EmbStep {                                                            \
    long long optimizerStep; /* 1-based, applied updates only (Adam) */       \
    long long seed;          /* the run's seed: keys stochastic rounding */   \
    double lrScale;          /* learning-rate schedule factor (the CPU's) */  \
    float lossScale;         /* fp16 loss scale S (1 without scaling) */      \
    int skip;                /* set by unscale_grads: skip this update */     \
    int error;               /* first device error code (plan errors), 0 */   \
    long long errorValue;    /* the offending value (an id) */                \
    long long step;          /* the training step (1-based): keys dropout */  \
    long long exampleOffset; /* this rank's first example in the batch */     \
    int microBatch;          /* the micro-batch being run */                  \
    int training;            /* 1 in a training step, 0 in evaluation */      \
  };                                                                          \
  /* A launch's operands, in the order of its args. */                        \
  struct EmbArgs {                                                            \
    void *p[EMB_MAX_ARGS];                                                    \
    EmbStep *step;                                                            \
  };
// clang-format on

namespace embc::runtime::cuda {
EMB_KERNEL_ABI
} // namespace embc::runtime::cuda

#define EMB_ABI_STR2(...) #__VA_ARGS__
#define EMB_ABI_STR(...) EMB_ABI_STR2(__VA_ARGS__)

namespace embc::runtime::cuda {
/// The ABI as source text, for the top of generated programs.
inline constexpr const char *kKernelAbiSource =
    "#define EMB_MAX_ARGS " EMB_ABI_STR(EMB_MAX_ARGS) "\n" EMB_ABI_STR(EMB_KERNEL_ABI) "\n";
} // namespace embc::runtime::cuda

#endif // EMBC_RUNTIME_CUDA_KERNELABI_H
