//===- DropoutLowering.cpp - inverted dropout, forward and backward -------===//
//
// dropout and dropout_grad as runtime/include/embc/runtime/cpu/
// DropoutKernels.h computes them: element g of the global batch (the
// launch's first element, from the device-resident EmbStep's
// exampleOffset and microBatch, plus i) keeps its value, times
// 1 / (1 - rate), unless the top 24 bits of its word are below
// round(rate * 2^24). The word is two rounds of lowbias32 of g's low word,
// keyed by the halves of mix64(key + g's high word), with
// key = hashOf(seed, tag, stream, step) from the EmbStep (so a captured
// graph replays every step with that step's masks). In evaluation
// (EmbStep::training 0) the kernel copies. The words and the test are the
// CPU's, integer for integer, and y = x * (keep * scale) is the CPU's two
// f32 multiplies, so the results are bit-identical.
//
// One thread owns four consecutive elements (one float4 load and store
// when the operands are 16-byte aligned and n is a multiple of 4), in a
// grid-stride loop; the four words are independent 32-bit multiply chains.
//
//===----------------------------------------------------------------------===//

#include "DropoutLowering.h"
#include "DenseLowering.h"
#include "EmbeddingLowering.h"
#include "embc/runtime/cpu/DropoutKernels.h"

#include <sstream>

using namespace embc;
using namespace embc::codegen;
using namespace embc::codegen::dense;
using embc::codegen::emb::lit;
using embc::codegen::emb::ulit;

void codegen::appendDropoutHelpers(CudaEmitter &em) {
  emb::appendHelpers(em); // emb_mix64, emb_hash_word
  em.appendOnce("dropout:hash32", R"CUDA(
// lowbias32 (runtime/include/embc/runtime/cpu/DropoutKernels.h dropout::hash32).
__device__ __forceinline__ unsigned emb_hash32(unsigned x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  return x ^ (x >> 16);
}
// The round keys of the high word of the last element drawn.
struct emb_drop_cache { emb_u64 high, keys; };
// dropoutFactors' factor of global element g: (keep ? 1 : 0) * scale.
__device__ __forceinline__ float emb_drop_factor(emb_u64 key, emb_u64 g, unsigned threshold,
                                                 float scale, emb_drop_cache &c) {
  if ((g >> 32) != c.high) { c.high = g >> 32; c.keys = emb_mix64(key + c.high); }
  const unsigned w = emb_hash32(emb_hash32((unsigned)g ^ (unsigned)c.keys) ^ (unsigned)(c.keys >> 32));
  return (float)((w >> 8) >= threshold) * scale;
}
)CUDA");
}

std::string codegen::counterKeyCode(const std::string &name, uint64_t tag, int64_t stream,
                                    const std::string &step) {
  std::ostringstream t;
  t << "  emb_u64 " << name << " = emb_mix64((emb_u64)a.step->seed ^ 0x2545F4914F6CDD1DULL);\n"
    << "  " << name << " = emb_hash_word(" << name << ", " << ulit(tag) << ");\n"
    << "  " << name << " = emb_hash_word(" << name << ", " << ulit(uint64_t(stream)) << ");\n"
    << "  " << name << " = emb_hash_word(" << name << ", " << step << ");\n";
  return t.str();
}

std::string codegen::dropoutKeyCode(const std::string &name, int64_t stream) {
  return counterKeyCode(name, runtime::cpu::dropout::kTag, stream, "(emb_u64)a.step->step");
}

int64_t codegen::paddedPerExample(const rt::Buffer &b) {
  const int64_t rows = b.shape.empty() ? 1 : std::max<int64_t>(b.shape[0], 1);
  const int64_t perExample = numel(b) / rows;
  if (b.paddedLength <= 0 || b.shape.size() < 2 || b.shape[1] <= 0)
    return perExample;
  return perExample / b.shape[1] * b.paddedLength;
}

std::string codegen::paddedIndex(const std::string &i, int64_t perExample,
                                 int64_t paddedPerExample) {
  if (perExample <= 0 || perExample == paddedPerExample)
    return "(" + i + ")";
  return "((" + i + ") / " + lit(perExample) + " * " + lit(paddedPerExample) + " + (" + i +
         ") % " + lit(perExample) + ")";
}

namespace {

constexpr int64_t kBlock = 256, kPerThread = 4;

void lowerDropout(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 1, 1);
  const rt::Buffer &x = f32Buffer(em, k.inputs[0], "input");
  if (f32Buffer(em, k.outputs[0], "output").shape != x.shape)
    throw CodegenError(k.op + " output must have the input's shape");
  if (!k.attrs.contains("rate") || !k.attrs["rate"].is_number())
    throw CodegenError(k.op + " needs a number 'rate'");
  const double rate = k.attrs["rate"].get<double>();
  if (!(rate >= 0.0 && rate < 1.0))
    throw CodegenError(k.op + " rate must be in [0, 1), got " + std::to_string(rate));
  if (!k.attrs.contains("stream") || !k.attrs["stream"].is_number_integer() ||
      k.attrs["stream"].get<int64_t>() < 0)
    throw CodegenError(k.op + " needs a non-negative integer 'stream'");
  const int64_t stream = k.attrs["stream"].get<int64_t>();
  const int64_t n = numel(x), rows = x.shape.empty() ? 1 : x.shape[0];
  const int64_t perExample = rows > 0 ? n / rows : 0, padded = paddedPerExample(x);
  const rt::CudaArg in = CudaEmitter::buf(k.inputs[0]), y = CudaEmitter::buf(k.outputs[0]);
  const bool vector = n % kPerThread == 0 && aligned16(em, in) && aligned16(em, y);
  appendDropoutHelpers(em);

  const float scale = float(1.0 / (1.0 - rate));
  std::ostringstream t;
  t << "// " << k.op << " of " << n << " values, rate " << rate << ", stream " << stream
    << ": four values a thread.\n"
    << "extern \"C\" __global__ void " << kNamePlaceholder << "(EmbArgs a) {\n"
    << "  const float *x = (const float *)a.p[0];\n"
    << "  float *y = (float *)a.p[1];\n"
    << "  const bool drop = a.step->training != 0 && " << (rate > 0.0 ? "true" : "false") << ";\n"
    << dropoutKeyCode("key", stream)
    << "  const emb_u64 first = (emb_u64)((a.step->exampleOffset + (emb_i64)a.step->microBatch * "
    << lit(rows) << ") * " << lit(padded) << ");\n"
    << "  // The round keys of the high word of this thread's elements (a launch\n"
    << "  // rarely crosses a 2^32 boundary: then they are derived again).\n"
    << "  emb_u64 high = ~0ULL, keys = 0;\n"
    << "  for (emb_i64 i = ((emb_i64)blockIdx.x * blockDim.x + threadIdx.x) * " << kPerThread
    << "; i < " << lit(n) << "; i += (emb_i64)gridDim.x * blockDim.x * " << kPerThread << ") {\n"
    << "    float v[" << kPerThread << "];\n";
  if (vector)
    t << "    const float4 q = *(const float4 *)(x + i);\n"
      << "    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;\n";
  else
    t << "#pragma unroll\n"
      << "    for (int e = 0; e < " << kPerThread << "; ++e) v[e] = i + e < " << lit(n)
      << " ? x[i + e] : 0.0f;\n";
  t << "    if (drop) {\n"
    << "#pragma unroll\n"
    << "      for (int e = 0; e < " << kPerThread << "; ++e) {\n"
    << "        const emb_u64 g = first + (emb_u64)" << paddedIndex("i + e", perExample, padded)
    << ";\n"
    << "        if ((g >> 32) != high) { high = g >> 32; keys = emb_mix64(key + high); }\n"
    << "        const unsigned w = emb_hash32(emb_hash32((unsigned)g ^ (unsigned)keys) ^ "
       "(unsigned)(keys >> 32));\n"
    << "        const int keep = (w >> 8) >= " << runtime::cpu::dropoutThreshold(rate) << "u;\n"
    << "        v[e] = v[e] * ((float)keep * " << floatLiteral(scale) << ");\n"
    << "      }\n"
    << "    }\n";
  if (vector)
    t << "    *(float4 *)(y + i) = make_float4(v[0], v[1], v[2], v[3]);\n";
  else
    t << "#pragma unroll\n"
      << "    for (int e = 0; e < " << kPerThread << "; ++e) if (i + e < " << lit(n)
      << ") y[i + e] = v[e];\n";
  t << "  }\n}\n";
  const std::string entry = defineKernel(em, k.op, t.str());
  out.launches.push_back(CudaEmitter::kernelLaunch(
      entry, {in, y}, gridFor((n + kPerThread - 1) / kPerThread, kBlock), kBlock));
}

} // namespace

EMBC_CUDA_LOWERING(Dropout, lowerDropout)
EMBC_CUDA_LOWERING(DropoutGrad, lowerDropout)
