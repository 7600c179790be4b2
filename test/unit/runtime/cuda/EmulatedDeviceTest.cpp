//===- EmulatedDeviceTest.cpp - the CUDA device emulated on the CPU -------===//
//
// Kernels written against the ABI of generated programs (KernelAbi.h) run
// through createEmulatedDevice(): block reductions over __shared__ memory
// with __syncthreads, warp shuffles, atomics, deadlock reports; the GEMM
// epilogues, batches and 16-bit operands against a naive reference; the
// library kernels; graph capture and replay; compiler errors.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/HalfFloat.h"
#include "embc/runtime/cuda/Device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>

using namespace embc::runtime::cuda;
using embc::runtime::DType;
using embc::runtime::enumCount;
using embc::runtime::GemmEpilogue;
using embc::runtime::hasRelu;

namespace {

/// Test kernels, in the shape the codegen emits: extern "C" __global__
/// entries taking EmbArgs, after the ABI text.
const char *kKernels = R"CUDA(
// p0 in (float, n), p1 out (float, one per block), p2 n (i64 cell):
// a tree reduction in shared memory, one barrier per level.
extern "C" __global__ void block_sum(EmbArgs a) {
  __shared__ float partial[256];
  const float *in = (const float *)a.p[0];
  float *out = (float *)a.p[1];
  const long long n = *(const long long *)a.p[2];
  const unsigned t = threadIdx.x;
  const long long i = (long long)blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

// p0 in (float), p1 warp sums (float, per thread), p2 broadcast (int, per
// thread): a butterfly sum and a broadcast of lane 3's index.
extern "C" __global__ void warp_ops(EmbArgs a) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = ((const float *)a.p[0])[i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  ((float *)a.p[1])[i] = v;
  ((int *)a.p[2])[i] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 3);
}

// p0 in (int, gridDim.x * gridDim.y * blockDim.x), p1 negatives counter
// (unsigned long long), p2 per-block sums (int), 2-D grid. The first
// negative value reports an error through a.step as the prelude does.
extern "C" __global__ void atomics(EmbArgs a) {
  const unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
  const unsigned i = block * blockDim.x + threadIdx.x;
  const int v = ((const int *)a.p[0])[i];
  if (v < 0) {
    atomicAdd((unsigned long long *)a.p[1], 1ull);
    if (atomicCAS(&a.step->error, 0, 7) == 0) a.step->errorValue = i;
  }
  atomicAdd(&((int *)a.p[2])[block], v);
}

// p0: a counter (long long), incremented once per launch.
extern "C" __global__ void bump(EmbArgs a) {
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd((long long *)a.p[0], 1ll);
}

// Math and bit casts: p0 out (float, 4).
extern "C" __global__ void math_ops(EmbArgs a) {
  float *o = (float *)a.p[0];
  o[0] = expf(1.0f) + rsqrtf(4.0f) + fmaxf(-1.0f, 2.0f) + tanhf(0.0f);
  o[1] = __uint_as_float(__float_as_uint(1.5f)) + __int_as_float(__float_as_int(2.5f));
  o[2] = (isfinite(o[0]) && !isnan(o[0]) && !isinf(o[0])) ? 1.0f : 0.0f;
  o[3] = __shfl_xor_sync(0xffffffffu, (float)threadIdx.x, 1);
}

// p0 floats, p1 out (float per thread), p2 an i64 offset in floats: a
// 16-byte vector load at p0 + offset, as the prelude's emb_vload does it
// under emulation, and a 16-byte store back there.
struct alignas(16) test_f4 { float x, y, z, w; };
extern "C" __global__ void vector_access(EmbArgs a) {
  float *at = (float *)a.p[0] + *(const long long *)a.p[2];
  const test_f4 v = emb_emu_vload<test_f4>(at);
  ((float *)a.p[1])[threadIdx.x] = v.x + v.w;
  if (threadIdx.x == 0) emb_emu_vstore(at, v);
}

// A barrier only half of the block reaches.
extern "C" __global__ void divergent_barrier(EmbArgs a) {
  if (threadIdx.x < 16) __syncthreads();
}

// A shuffle whose partner lanes have exited.
extern "C" __global__ void divergent_shuffle(EmbArgs a) {
  if (threadIdx.x >= 8) return;
  ((float *)a.p[0])[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
}
)CUDA";

std::string program() { return std::string(kKernelAbiSource) + kKernels; }

/// Runs `f`, which must throw a DeviceError whose message names every one
/// of `parts`.
template <class F> void expectDeviceError(F f, std::initializer_list<const char *> parts) {
  try {
    f();
    FAIL() << "no error";
  } catch (const DeviceError &e) {
    const std::string what = e.what();
    for (const char *part : parts)
      EXPECT_NE(what.find(part), std::string::npos) << what;
  }
}

class EmulatedDeviceTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    // A cache in the build tree: repeated runs reuse the compiled program.
    if (!std::getenv("EMBC_CACHE_DIR"))
      setenv("EMBC_CACHE_DIR", EMBC_TEST_CACHE_DIR, 1);
  }
  void SetUp() override {
    dev = createEmulatedDevice();
    dev->loadProgram(program());
    step = reinterpret_cast<EmbStep *>(dev->allocate(sizeof(EmbStep)));
  }
  template <class T> T *alloc(size_t n) {
    return reinterpret_cast<T *>(dev->allocate(n * sizeof(T)));
  }
  EmbArgs args(std::initializer_list<void *> ptrs) {
    EmbArgs a{};
    size_t i = 0;
    for (void *p : ptrs)
      a.p[i++] = p;
    a.step = step;
    return a;
  }
  void launch(const std::string &entry, int64_t gx, int64_t gy, int64_t block, const EmbArgs &a) {
    const int64_t grid[3] = {gx, gy, 1};
    dev->launch(dev->kernel(entry), grid, block, 0, a, entry.c_str());
  }

  std::unique_ptr<Device> dev;
  EmbStep *step = nullptr;
};

TEST_F(EmulatedDeviceTest, Describes) {
  EXPECT_EQ(dev->description(), "emulated CUDA (CPU)");
  EXPECT_EQ(dev->arch(), "sm_90");
}

TEST_F(EmulatedDeviceTest, MemoryIsAlignedAndZeroed) {
  for (size_t bytes : {0, 1, 300, 4096}) {
    std::byte *p = dev->allocate(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
    EXPECT_TRUE(std::all_of(p, p + bytes, [](std::byte b) { return b == std::byte{0}; }));
  }
  std::byte *h = dev->allocateHost(100);
  std::byte *d = dev->allocate(100);
  const char text[] = "emulated";
  dev->toDevice(d, text, sizeof text);
  dev->toHost(h, d, sizeof text);
  EXPECT_STREQ(reinterpret_cast<const char *>(h), text);
  dev->zero(d, sizeof text);
  EXPECT_EQ(d[0], std::byte{0});
  dev->synchronize();
}

TEST_F(EmulatedDeviceTest, BlockReductionWithSharedMemoryAndBarriers) {
  const int64_t n = 1000, block = 256, blocks = (n + block - 1) / block;
  float *in = alloc<float>(size_t(n));
  float *out = alloc<float>(size_t(blocks));
  int64_t *count = alloc<int64_t>(1);
  *count = n;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < n; ++i)
    in[i] = u(rng);
  launch("block_sum", blocks, 1, block, args({in, out, count}));
  // The same tree, in the same order: bit-identical.
  for (int64_t b = 0; b < blocks; ++b) {
    std::vector<float> p(block);
    for (int64_t t = 0; t < block; ++t)
      p[size_t(t)] = b * block + t < n ? in[b * block + t] : 0.0f;
    for (int64_t s = block / 2; s > 0; s >>= 1)
      for (int64_t t = 0; t < s; ++t)
        p[size_t(t)] += p[size_t(t + s)];
    EXPECT_EQ(out[b], p[0]) << "block " << b;
  }
}

TEST_F(EmulatedDeviceTest, WarpShuffles) {
  const int block = 96, blocks = 2, n = block * blocks; // three warps per block
  float *in = alloc<float>(n), *sums = alloc<float>(n);
  int *bcast = alloc<int>(n);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < n; ++i)
    in[i] = u(rng);
  launch("warp_ops", blocks, 1, block, args({in, sums, bcast}));
  for (int w = 0; w < n / 32; ++w) {
    float v[32];
    std::copy(in + w * 32, in + w * 32 + 32, v);
    for (int o = 16; o > 0; o >>= 1) { // the butterfly, lane by lane
      float next[32];
      for (int l = 0; l < 32; ++l)
        next[l] = v[l] + v[l ^ o];
      std::copy(next, next + 32, v);
    }
    for (int l = 0; l < 32; ++l) {
      const int i = w * 32 + l;
      EXPECT_EQ(sums[i], v[l]) << "thread " << i;
      EXPECT_EQ(bcast[i], (w * 32) % block + 3) << "thread " << i;
    }
  }
}

TEST_F(EmulatedDeviceTest, AtomicsAndTwoDimensionalGrid) {
  const int gx = 3, gy = 2, block = 64, n = gx * gy * block;
  int *in = alloc<int>(n), *sums = alloc<int>(gx * gy);
  auto *negatives = alloc<unsigned long long>(1);
  for (int i = 0; i < n; ++i)
    in[i] = i % 37 == 5 ? -i : i % 11;
  launch("atomics", gx, gy, block, args({in, negatives, sums}));
  int expectNeg = 0, firstNeg = -1;
  for (int b = 0; b < gx * gy; ++b) {
    int sum = 0;
    for (int t = 0; t < block; ++t) {
      const int i = b * block + t;
      sum += in[i];
      if (in[i] < 0 && expectNeg++ == 0)
        firstNeg = i;
    }
    EXPECT_EQ(sums[b], sum) << "block " << b;
  }
  EXPECT_EQ(*negatives, unsigned(expectNeg));
  EXPECT_EQ(step->error, 7);
  EXPECT_EQ(step->errorValue, firstNeg); // blocks and threads run in order
}

TEST_F(EmulatedDeviceTest, MathAndBitCasts) {
  float *o = alloc<float>(4);
  launch("math_ops", 1, 1, 32, args({o}));
  EXPECT_FLOAT_EQ(o[0], std::exp(1.0f) + 0.5f + 2.0f);
  EXPECT_EQ(o[1], 4.0f);
  EXPECT_EQ(o[2], 1.0f);
  EXPECT_EQ(o[3], 30.0f); // the last thread to store is 31, whose partner is 30
}

TEST_F(EmulatedDeviceTest, DivergentBarrierIsADeviceError) {
  expectDeviceError([&] { launch("divergent_barrier", 1, 1, 32, args({})); },
                    {"divergent_barrier", "16 wait at __syncthreads", "16 have exited"});
  // The device keeps working after a reported deadlock.
  int64_t *counter = alloc<int64_t>(1);
  launch("bump", 1, 1, 32, args({counter}));
  EXPECT_EQ(*counter, 1);
}

// x86 forgives a misaligned vector access; a GPU faults. The emulation
// reports it, naming the kernel, the block, the thread and the width.
TEST_F(EmulatedDeviceTest, MisalignedVectorAccessIsADeviceError) {
  float *data = alloc<float>(16), *out = alloc<float>(32);
  int64_t *offset = alloc<int64_t>(1);
  for (int i = 0; i < 16; ++i)
    data[i] = float(i);
  *offset = 4; // 16 bytes in: aligned
  launch("vector_access", 1, 1, 32, args({data, out, offset}));
  EXPECT_EQ(out[31], 4.0f + 7.0f);
  *offset = 1; // 4 bytes in
  expectDeviceError([&] { launch("vector_access", 1, 1, 32, args({data, out, offset})); },
                    {"vector_access", "16-byte vector load", "misaligned address"});
}

TEST_F(EmulatedDeviceTest, DivergentShuffleIsADeviceError) {
  float *o = alloc<float>(32);
  expectDeviceError([&] { launch("divergent_shuffle", 1, 1, 32, args({o})); },
                    {"divergent_shuffle", "8 wait at a warp shuffle"});
}

TEST_F(EmulatedDeviceTest, BadLaunchesAndKernels) {
  EXPECT_THROW(dev->kernel("no_such_kernel"), DeviceError);
  EXPECT_THROW(launch("bump", 1, 1, 2048, args({})), DeviceError);
  EXPECT_THROW(launch("bump", 0, 1, 32, args({})), DeviceError);
}

TEST_F(EmulatedDeviceTest, TwoDevicesRunTheSameProgram) {
  auto other = createEmulatedDevice();
  other->loadProgram(program());
  auto *c1 = alloc<int64_t>(1);
  auto *c2 = reinterpret_cast<int64_t *>(other->allocate(8));
  const int64_t grid[3] = {2, 1, 1};
  other->launch(other->kernel("bump"), grid, 32, 0, args({c2}), "bump");
  launch("bump", 1, 1, 32, args({c1}));
  EXPECT_EQ(*c1, 1);
  EXPECT_EQ(*c2, 1);
}

TEST_F(EmulatedDeviceTest, CaptureRecordsAndReplayRuns) {
  auto *counter = alloc<int64_t>(1);
  float *staging = reinterpret_cast<float *>(dev->allocateHost(4 * sizeof(float)));
  float *a = alloc<float>(4), *b = alloc<float>(4), *c = alloc<float>(4);
  for (int i = 0; i < 4; ++i)
    b[i] = float(i == 0 || i == 3); // identity 2x2
  GemmSpec g;
  g.m = g.n = g.k = 2;
  g.lda = g.ldb = g.ldc = 2;
  const PreparedHandle h = dev->prepareGemm(g);

  dev->beginCapture();
  dev->toDevice(reinterpret_cast<std::byte *>(a), staging, 4 * sizeof(float));
  launch("bump", 1, 1, 32, args({counter}));
  void *gemmArgs[3] = {a, b, c};
  dev->gemm(h, gemmArgs, "gemm");
  EXPECT_THROW(dev->synchronize(), DeviceError);
  const int32_t graph = dev->endCapture();
  EXPECT_EQ(*counter, 0) << "captured work ran during capture";
  EXPECT_EQ(c[0], 0.0f);

  // The copy reads the staging buffer at replay time, as a graph node does.
  for (int i = 0; i < 4; ++i)
    staging[i] = float(i + 1);
  dev->replay(graph);
  EXPECT_EQ(*counter, 1);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{1, 2, 3, 4}));
  staging[0] = 10;
  dev->replay(graph);
  EXPECT_EQ(*counter, 2);
  EXPECT_EQ(c[0], 10.0f);
  EXPECT_THROW(dev->replay(graph + 1), DeviceError);
  EXPECT_THROW(dev->endCapture(), DeviceError);
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

/// Naive row-major reference in double, on operands already widened to f32.
void referenceGemm(const GemmSpec &g, const std::vector<float> &A, const std::vector<float> &B,
                   std::vector<float> &C, std::vector<float> &bias) {
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          const float a = g.transA ? A[size_t(b * g.strideA + p * g.lda + i)]
                                   : A[size_t(b * g.strideA + i * g.lda + p)];
          const float v = g.transB ? B[size_t(b * g.strideB + j * g.ldb + p)]
                                   : B[size_t(b * g.strideB + p * g.ldb + j)];
          s += double(a) * double(v);
        }
        float &c = C[size_t(b * g.strideC + i * g.ldc + j)];
        double r = g.alpha * s + g.beta * double(c);
        if (g.epilogue == GemmEpilogue::Bias || g.epilogue == GemmEpilogue::ReluBias)
          r += bias[size_t(j)];
        if (hasRelu(g.epilogue))
          r = r > 0 ? r : 0;
        c = float(r);
      }
  if (g.epilogue == GemmEpilogue::BGradB)
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < g.k; ++p)
        s += B[size_t(p * g.ldb + j)];
      bias[size_t(j)] = float(s);
    }
}

/// Runs `g` on the device with random operands (16-bit ones rounded from
/// the same values) and compares with the reference.
void checkGemm(Device &dev, const GemmSpec &g, uint32_t seed) {
  const int64_t rowsA = g.transA ? g.k : g.m, rowsB = g.transB ? g.n : g.k;
  const size_t sizeA = size_t((g.batch - 1) * g.strideA + rowsA * g.lda);
  const size_t sizeB = size_t((g.batch - 1) * g.strideB + rowsB * g.ldb);
  const size_t sizeC = size_t((g.batch - 1) * g.strideC + g.m * g.ldc);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(sizeA), B(sizeB), C(sizeC), bias(size_t(g.n));
  for (auto *v : {&A, &B, &C, &bias})
    for (float &x : *v)
      x = u(rng);
  const size_t elem = g.abType == DType::F32 ? 4 : 2;
  std::byte *dA = dev.allocate(sizeA * elem), *dB = dev.allocate(sizeB * elem);
  auto *dC = reinterpret_cast<float *>(dev.allocate(sizeC * 4));
  auto *dBias = reinterpret_cast<float *>(dev.allocate(size_t(g.n) * 4));
  auto upload = [&](std::vector<float> &v, std::byte *d) {
    if (g.abType == DType::F32)
      return (void)std::memcpy(d, v.data(), v.size() * 4);
    auto *h = reinterpret_cast<uint16_t *>(d);
    namespace cpu = embc::runtime::cpu;
    for (size_t i = 0; i < v.size(); ++i) {
      h[i] = g.abType == DType::BF16 ? cpu::floatToBf16(v[i]) : cpu::floatToHalf(v[i]);
      v[i] = g.abType == DType::BF16 ? cpu::bf16ToFloat(h[i]) : cpu::halfToFloat(h[i]);
    }
  };
  upload(A, dA);
  upload(B, dB);
  std::memcpy(dC, C.data(), sizeC * 4);
  std::memcpy(dBias, bias.data(), size_t(g.n) * 4);
  referenceGemm(g, A, B, C, bias);
  void *args[4] = {dA, dB, dC, dBias};
  dev.gemm(dev.prepareGemm(g), args, "gemm");
  const std::string what = gemmToJson(g).dump();
  for (size_t i = 0; i < sizeC; ++i)
    EXPECT_NEAR(dC[i], C[i], 1e-5 * std::max(1.0f, std::fabs(C[i]))) << what << " at " << i;
  if (g.epilogue == GemmEpilogue::BGradB) {
    for (int64_t j = 0; j < g.n; ++j)
      EXPECT_NEAR(dBias[j], bias[size_t(j)], 1e-5 * std::max(1.0f, std::fabs(bias[size_t(j)])))
          << what;
  }
}

GemmSpec spec(int64_t m, int64_t n, int64_t k, bool ta, bool tb, int64_t pad = 0) {
  GemmSpec g;
  g.m = m, g.n = n, g.k = k, g.transA = ta, g.transB = tb;
  g.lda = (ta ? m : k) + pad, g.ldb = (tb ? k : n) + pad, g.ldc = n + pad;
  return g;
}

// The upload stream runs behind, as a GPU's may: compute sees an upload
// only after waiting for an event recorded after it, and the host may reuse
// the staging only after waiting for it.
TEST_F(EmulatedDeviceTest, UploadsLandWhenAnEventIsWaitedFor) {
  std::byte *staging = dev->allocateHost(8);
  std::byte *target = dev->allocate(8);
  const int64_t value = 42;
  std::memcpy(staging, &value, sizeof value);
  int32_t first = dev->createEvent(), second = dev->createEvent();
  dev->recordUploads(first); // before the upload: waiting for it brings nothing
  dev->uploadAsync(target, staging, sizeof value);
  dev->computeWaits(first);
  int64_t seen = -1;
  std::memcpy(&seen, target, sizeof seen);
  EXPECT_EQ(seen, 0);
  dev->recordUploads(second);
  dev->computeWaits(second);
  std::memcpy(&seen, target, sizeof seen);
  EXPECT_EQ(seen, 42);

  const int64_t next = 7;
  std::memcpy(staging, &next, sizeof next);
  dev->uploadAsync(target, staging, sizeof next);
  dev->recordUploads(second);
  dev->hostWaits(second);
  std::memcpy(&seen, target, sizeof seen);
  EXPECT_EQ(seen, 7);
  EXPECT_THROW(dev->computeWaits(99), DeviceError);
}

TEST_F(EmulatedDeviceTest, TimingEventsMeasureTheWorkBetweenThem) {
  int32_t start = dev->createTimingEvent(), end = dev->createTimingEvent();
  dev->recordCompute(start);
  std::this_thread::sleep_for(std::chrono::milliseconds(20)); // the emulation's "kernels"
  dev->recordCompute(end);
  const double seconds = dev->secondsBetween(start, end);
  EXPECT_GE(seconds, 0.019);
  EXPECT_LT(seconds, 5.0);
  EXPECT_THROW(dev->secondsBetween(start, 99), DeviceError);
}

TEST_F(EmulatedDeviceTest, GemmTranspositionsStridesAndScalars) {
  uint32_t seed = 10;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t pad : {0, 3}) {
        GemmSpec g = spec(7, 5, 9, ta, tb, pad);
        checkGemm(*dev, g, seed++);
        g.alpha = 0.5f, g.beta = -2.0f;
        checkGemm(*dev, g, seed++);
      }
}

TEST_F(EmulatedDeviceTest, GemmEpilogues) {
  uint32_t seed = 20;
  for (size_t i = 0; i < enumCount<GemmEpilogue>(); ++i) {
    const GemmEpilogue e = GemmEpilogue(i);
    GemmSpec g = spec(6, 8, 5, e == GemmEpilogue::BGradB, false);
    g.epilogue = e;
    checkGemm(*dev, g, seed++);
    g.beta = 1.0f;
    checkGemm(*dev, g, seed++);
  }
  GemmSpec bad = spec(2, 2, 2, false, true);
  bad.epilogue = GemmEpilogue::BGradB;
  EXPECT_THROW(dev->prepareGemm(bad), DeviceError);
}

TEST_F(EmulatedDeviceTest, GemmBatchedAndHalfPrecisionOperands) {
  uint32_t seed = 30;
  for (DType type : {DType::F32, DType::BF16, DType::F16})
    for (bool ta : {false, true}) {
      GemmSpec g = spec(4, 6, 5, ta, !ta, 1);
      g.abType = type;
      g.batch = 3;
      g.strideA = (ta ? g.k : g.m) * g.lda + 2;
      g.strideB = (ta ? g.k : g.n) * g.ldb;
      g.strideC = g.m * g.ldc + 4;
      g.epilogue = GemmEpilogue::ReluBias;
      checkGemm(*dev, g, seed++);
    }
}

//===----------------------------------------------------------------------===//
// Library kernels
//===----------------------------------------------------------------------===//

TEST_F(EmulatedDeviceTest, SortPairsIsStable) {
  const int n = 500, bits = 5;
  auto *keys = alloc<int64_t>(n), *keysOut = alloc<int64_t>(n);
  auto *values = alloc<int32_t>(n), *valuesOut = alloc<int32_t>(n);
  std::mt19937 rng(3);
  std::vector<std::pair<int64_t, int32_t>> expect;
  for (int i = 0; i < n; ++i) {
    keys[i] = int64_t(rng() % 7) * 4; // few distinct keys: many ties
    values[i] = i;
    expect.push_back({keys[i], i});
  }
  std::stable_sort(expect.begin(), expect.end(),
                   [](auto &x, auto &y) { return x.first < y.first; });
  const PreparedHandle h = dev->prepareLibrary("sort_pairs", {{"count", n}, {"key_bits", bits}});
  void *args[4] = {keys, values, keysOut, valuesOut};
  dev->library(h, args, "sort");
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(keysOut[i], expect[size_t(i)].first) << i;
    EXPECT_EQ(valuesOut[i], expect[size_t(i)].second) << i;
  }
  // In place, too.
  void *inPlace[4] = {keys, values, keys, values};
  dev->library(h, inPlace, "sort");
  EXPECT_TRUE(std::equal(keys, keys + n, keysOut));
  EXPECT_TRUE(std::equal(values, values + n, valuesOut));

  keys[0] = int64_t(1) << bits; // out of the declared key range
  EXPECT_THROW(dev->library(h, args, "sort"), DeviceError);
  EXPECT_THROW(dev->prepareLibrary("sort_pairs", {{"count", n}}), DeviceError);
  EXPECT_THROW(dev->prepareLibrary("radix_select", {{"count", n}}), DeviceError);
}

TEST_F(EmulatedDeviceTest, ExclusiveScan) {
  const int n = 100;
  auto *in = alloc<int32_t>(n), *out = alloc<int32_t>(n);
  auto *total = alloc<int64_t>(1);
  std::iota(in, in + n, 1);
  void *args[3] = {in, out, total};
  dev->library(dev->prepareLibrary("exclusive_scan", {{"count", n}}), args, "scan");
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(out[i], i * (i + 1) / 2) << i;
  EXPECT_EQ(*total, n * (n + 1) / 2);
}

//===----------------------------------------------------------------------===//
// Program loading
//===----------------------------------------------------------------------===//

TEST(EmulatedDeviceProgram, CompileErrorCarriesTheCompilerMessage) {
  if (!std::getenv("EMBC_CACHE_DIR"))
    setenv("EMBC_CACHE_DIR", EMBC_TEST_CACHE_DIR, 1);
  auto dev = createEmulatedDevice();
  const std::string source = std::string(kKernelAbiSource) +
                             "extern \"C\" __global__ void broken(EmbArgs a) {\n"
                             "  atomicAdd((float *)a.p[0], 1.0f); // not in the CUDA subset\n"
                             "  undeclared_name_in_kernel = 1;\n"
                             "}\n";
  expectDeviceError([&] { dev->loadProgram(source); }, {"undeclared_name_in_kernel", "atomicAdd"});
}

} // namespace
