//===- Emulation.h - the CUDA subset, emulated on the CPU -------*- C++ -*-===//
//
// kEmulationHeader is the text the emulated device (EmulatedDevice.cpp)
// puts in front of a plan's CUDA program before compiling it with the host
// C++ compiler into a shared object. It defines exactly the CUDA subset that
// generated code may use (docs/cuda.md), so a kernel that needs more fails to
// compile here, in CI, not first on a GPU:
//
//   __global__ __device__ __host__ __forceinline__ __shared__ (__restrict__
//   is a GCC/Clang keyword already); threadIdx blockIdx blockDim gridDim;
//   __syncthreads; __shfl_xor_sync __shfl_sync (any type of at most 8
//   bytes); atomicAdd atomicCAS on int, unsigned, long long and unsigned
//   long long (not float: reductions must be deterministic);
//   __float_as_uint __uint_as_float __float_as_int __int_as_float; the
//   <math.h> functions (expf logf sqrtf tanhf fabsf fmaxf fminf powf ...),
//   rsqrtf (exactly 1/sqrtf), isfinite isnan isinf; the vector types
//   float2 float4 int2 int4 uint2 uint4 and their make_* functions.
//
// How it runs (the device's side is EmulatedDevice.cpp and Fibers.cpp):
//  - A kernel is an ordinary C++ function `void ENTRY(EmbArgs a)`; the device
//    calls it once per CUDA thread, each thread on its own fiber.
//  - Blocks run one after another, and all fibers of a block on one OS
//    thread, so `__shared__` is simply `static`: a function-static array is
//    the shared memory of the block being run (like CUDA shared memory, its
//    contents at block start are unspecified: here, the previous block's).
//    Dynamic shared memory (`extern __shared__`) is not provided.
//  - threadIdx etc. read `emb_emu`, which the scheduler sets before it
//    resumes a fiber. __syncthreads and the shuffles call back into the
//    scheduler, which switches to the other threads until the whole block
//    (barrier) or the warp's lanes in `mask` (shuffle) have arrived.
//  - Atomics are plain read-modify-writes: fibers switch only at barriers and
//    shuffles, so nothing can interleave with them.
//
// The hooks struct is written once, in EMB_EMU_HOOKS, compiled here for the
// device and stringified into the header, as KernelAbi.h does for EmbArgs.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_EMULATION_H
#define EMBC_RUNTIME_LIB_CUDA_EMULATION_H

#include "embc/runtime/cuda/KernelAbi.h"

// clang-format off
#define EMB_EMU_HOOKS                                                         \
  struct EmbEmuDim3 { unsigned int x, y, z; };                                \
  /* The running thread's coordinates and the scheduler's entry points. */    \
  struct EmbEmuHooks {                                                        \
    EmbEmuDim3 threadIdx, blockIdx, blockDim, gridDim;                        \
    unsigned int lane; /* linear thread index mod 32 */                       \
    void *scheduler;                                                          \
    void (*syncthreads)(void *scheduler);                                     \
    /* Sends `value` to the warp and returns the value of lane srcLane */     \
    /* (srcLane < 0: the caller's own value), once all lanes in mask */       \
    /* have arrived. */                                                       \
    unsigned long long (*shuffle)(void *scheduler, unsigned int mask,         \
                                  unsigned long long value, int srcLane);     \
    /* A vector access of `bytes` at `address` that is not aligned to */     \
    /* them: a GPU faults; the launch reports it (the first one). */          \
    void (*misaligned)(void *scheduler, const void *address,                  \
                       unsigned int bytes, int store);                        \
  };
// clang-format on

namespace embc::runtime::cuda::emu {
EMB_EMU_HOOKS

/// The symbol the compiled program exports: EmbEmuHooks *emb_emu_hooks(void).
inline constexpr const char *kHooksSymbol = "emb_emu_hooks";

/// The emulation header's text (written next to the program as
/// embc_cuda_emulation.h and #included by it).
inline constexpr const char *kEmulationHeader =
    "// embc's CUDA emulation (runtime/lib/cuda/Emulation.h): the CUDA subset\n"
    "// generated kernels may use, for the host C++ compiler.\n"
    "#ifndef EMBC_CUDA_EMULATION_H\n"
    "#define EMBC_CUDA_EMULATION_H\n"
    "#include <math.h>\n" EMB_ABI_STR(EMB_EMU_HOOKS) "\n" R"EMU(
// The program's own copy, filled in by the device after dlopen.
extern "C" {
__attribute__((visibility("hidden"))) EmbEmuHooks emb_emu;
}
extern "C" __attribute__((visibility("default"))) EmbEmuHooks *emb_emu_hooks(void) {
  return &emb_emu;
}

#define EMB_EMULATION 1
#define __global__
// The codegen derives each kernel's bounds from its launches (so no launch
// exceeds them); on the host the attribute means nothing.
#define __launch_bounds__(...)
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __shared__ static

#define threadIdx (emb_emu.threadIdx)
#define blockIdx (emb_emu.blockIdx)
#define blockDim (emb_emu.blockDim)
#define gridDim (emb_emu.gridDim)

// The empty asm statements keep the compiler from moving memory accesses
// across a switch (the opaque call already forbids it; this makes it plain).
static inline void __syncthreads(void) {
  __asm__ __volatile__("" ::: "memory");
  emb_emu.syncthreads(emb_emu.scheduler);
  __asm__ __volatile__("" ::: "memory");
}

template <class T> static inline T emb_emu_shuffle(unsigned int mask, T v, int srcLane) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  unsigned long long bits = 0;
  __builtin_memcpy(&bits, &v, sizeof v);
  __asm__ __volatile__("" ::: "memory");
  bits = emb_emu.shuffle(emb_emu.scheduler, mask, bits, srcLane);
  __asm__ __volatile__("" ::: "memory");
  T r;
  __builtin_memcpy(&r, &bits, sizeof r);
  return r;
}
// CUDA's rules for width < 32: each group of `width` lanes is its own warp;
// a xor that lands in a later group returns the caller's value, __shfl_sync
// takes srcLane modulo width within the caller's group.
template <class T>
static inline T __shfl_xor_sync(unsigned int mask, T v, int laneMask, int width = 32) {
  const int lane = (int)emb_emu.lane;
  const int src = lane ^ laneMask;
  return emb_emu_shuffle(mask, v, src >= (lane / width + 1) * width ? -1 : src);
}
template <class T>
static inline T __shfl_sync(unsigned int mask, T v, int srcLane, int width = 32) {
  const int lane = (int)emb_emu.lane;
  return emb_emu_shuffle(mask, v, (lane / width) * width + (srcLane & (width - 1)));
}

// Vector accesses (the prelude's emb_vload / emb_vstore): x86 forgives a
// misaligned one, a GPU does not, so each is checked and reported; the
// access itself goes through memcpy so the emulation keeps running.
template <class T> static inline T emb_emu_vload(const void *p) {
  if ((unsigned long long)p % sizeof(T) != 0)
    emb_emu.misaligned(emb_emu.scheduler, p, sizeof(T), 0);
  T v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class T> static inline void emb_emu_vstore(void *p, const T &v) {
  if ((unsigned long long)p % sizeof(T) != 0)
    emb_emu.misaligned(emb_emu.scheduler, p, sizeof(T), 1);
  __builtin_memcpy(p, &v, sizeof v);
}

// One OS thread runs the block and switches only at barriers and shuffles:
// a plain read-modify-write is atomic. Signed sums wrap as on the GPU.
static inline int atomicAdd(int *p, int v) {
  const int old = *p;
  *p = (int)((unsigned int)old + (unsigned int)v);
  return old;
}
static inline unsigned int atomicAdd(unsigned int *p, unsigned int v) {
  const unsigned int old = *p;
  *p = old + v;
  return old;
}
static inline long long atomicAdd(long long *p, long long v) {
  const long long old = *p;
  *p = (long long)((unsigned long long)old + (unsigned long long)v);
  return old;
}
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
  const unsigned long long old = *p;
  *p = old + v;
  return old;
}
template <class T> static inline T emb_emu_cas(T *p, T compare, T v) {
  const T old = *p;
  if (old == compare)
    *p = v;
  return old;
}
static inline int atomicCAS(int *p, int c, int v) { return emb_emu_cas(p, c, v); }
static inline unsigned int atomicCAS(unsigned int *p, unsigned int c, unsigned int v) {
  return emb_emu_cas(p, c, v);
}
static inline long long atomicCAS(long long *p, long long c, long long v) {
  return emb_emu_cas(p, c, v);
}
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long c,
                                           unsigned long long v) {
  return emb_emu_cas(p, c, v);
}

static inline unsigned int __float_as_uint(float f) {
  unsigned int u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}
static inline float __uint_as_float(unsigned int u) {
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}
static inline int __float_as_int(float f) {
  int i;
  __builtin_memcpy(&i, &f, sizeof i);
  return i;
}
static inline float __int_as_float(int i) {
  float f;
  __builtin_memcpy(&f, &i, sizeof f);
  return f;
}
// CUDA's built-in vector types, with its alignment (a misaligned float4
// access faults on the GPU; here the compiler may use aligned moves too).
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(8))) uint2 { unsigned int x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned int x, y, z, w; };
static inline float2 make_float2(float x, float y) { return float2{x, y}; }
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
static inline int2 make_int2(int x, int y) { return int2{x, y}; }
static inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
static inline uint2 make_uint2(unsigned int x, unsigned int y) { return uint2{x, y}; }
static inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) {
  return uint4{x, y, z, w};
}

// Exactly 1/sqrt (the GPU's rsqrtf is within 2 ulp of it).
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }

#endif // EMBC_CUDA_EMULATION_H
)EMU";

} // namespace embc::runtime::cuda::emu

#endif // EMBC_RUNTIME_LIB_CUDA_EMULATION_H
