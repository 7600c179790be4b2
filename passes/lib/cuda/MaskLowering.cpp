//===- MaskLowering.cpp - mask_tokens, the masked-token objective's masks -===//
//
// mask_tokens as runtime/include/embc/runtime/cpu/MaskKernels.h computes
// it, draw for draw: a block per sequence, a thread per position. The CPU
// chooses the k smallest (word, position) pairs with nth_element; here each
// position counts the pairs below its own (its rank) and is chosen when
// the rank is below k: the same set, with no sort and no shared state (a
// sequence of n tokens costs n^2 32-bit hashes, spread over its threads).
// The key is the CPU's hashOf(seed, tag, stream, step), with step the
// EmbStep's in training and kEvaluationStep in evaluation, so a captured
// graph replays every step with that step's masks. Ids outside every
// sequence are copied by a grid-stride pass over the rest of the ids;
// a sequence longer than L or outside the ids is a data error.
//
//===----------------------------------------------------------------------===//

#include "DropoutLowering.h"
#include "EmbeddingLowering.h"
#include "embc/runtime/cpu/MaskKernels.h"

#include <sstream>

using namespace embc;
using namespace embc::codegen;
using embc::codegen::emb::Args;
using embc::codegen::emb::lit;
using embc::codegen::emb::ulit;

namespace {

constexpr int64_t kBlock = 128;

void lowerMaskTokens(CudaEmitter &em, const rt::Kernel &k, rt::CudaKernel &out) {
  expectCounts(k, 2, 2);
  const rt::Buffer &targets = f32Matrix(em, k.outputs[1], -1, -1, "targets");
  const int64_t B = targets.shape[0], L = targets.shape[1];
  // Positions are numbered by max_len when the batch runs padded to a
  // shorter L (Buffer::paddedLength), as on the CPU.
  const int64_t counterL = targets.paddedLength > 0 ? targets.paddedLength : L;
  expectOffsets(em, k.inputs[1], B);
  const double rate = k.attrs.at("rate").get<double>();
  if (!(rate > 0.0 && rate < 1.0))
    throw CodegenError("mask_tokens rate must be in (0, 1), got " + std::to_string(rate));
  const int64_t maskId = intAttr(k, "mask_id"), vocab = intAttr(k, "vocab"),
                stream = intAttr(k, "stream");
  appendDropoutHelpers(em); // emb_hash32, emb_mix64, emb_hash_word
  em.appendOnce("mask:word", R"CUDA(
// MaskKernels.h masking::word: dropout's word of global element `index`.
__device__ __forceinline__ unsigned emb_mask_word(emb_u64 key, emb_u64 index) {
  const emb_u64 keys = emb_mix64(key + (index >> 32));
  return emb_hash32(emb_hash32((unsigned)index ^ (unsigned)keys) ^ (unsigned)(keys >> 32));
}
)CUDA");
  const int lengthCode = em.errorCode("a sequence of the masked tokens longer than its max_len " +
                                      std::to_string(counterL) +
                                      " or outside its ids (the value is the sequence)");
  Args args;
  const rt::Buffer &idsBuf = em.buffer(k.inputs[0]);
  const std::string ids = args.buffer(k.inputs[0], "const emb_i64");
  const std::string n = args.count(idsBuf, k.inputs[0], numel(idsBuf));
  const std::string offsets = args.buffer(k.inputs[1], "const emb_i64");
  const std::string masked = args.buffer(k.outputs[0], "emb_i64");
  const std::string tgt = args.buffer(k.outputs[1], "float");
  const std::string setLength =
      em.buffer(k.outputs[0]).dynamic
          ? "  if (blockIdx.x == 0 && threadIdx.x == 0) *" + args.lengthCell(k.outputs[0]) +
                " = n;\n"
          : "";
  const std::string entry = em.entryName(k.op);
  std::ostringstream t;
  t << "// mask_tokens: " << B << " sequences of at most " << L << ", rate " << rate
    << ", mask id " << maskId << ", random ids below " << vocab << "; a block per sequence.\n"
    << "extern \"C\" __global__ void " << entry << "(EmbArgs a) {\n"
    << "  const emb_i64 n = " << n << ";\n"
    << "  const emb_i64 *ids = " << ids << ", *off = " << offsets << ";\n"
    << "  emb_i64 *masked = " << masked << ";\n"
    << "  float *targets = " << tgt << ";\n"
    << setLength
    << counterKeyCode("key", runtime::cpu::masking::kTag, stream,
                      "(a.step->training ? (emb_u64)a.step->step : " +
                          ulit(runtime::cpu::masking::kEvaluationStep) + ")")
    << "  const emb_u64 kChoose = key, kReplace = emb_mix64(key ^ 1ULL), kRandom = emb_mix64(key ^ "
       "2ULL);\n"
    << "  // Ids outside every sequence: copied.\n"
    << "  const emb_i64 lo0 = off[0] < 0 ? 0 : (off[0] > n ? n : off[0]);\n"
    << "  const emb_i64 hiB = off[" << B << "] < lo0 ? lo0 : (off[" << B << "] > n ? n : off["
    << B << "]);\n"
    << "  for (emb_i64 i = (emb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    << "       i += (emb_i64)gridDim.x * blockDim.x)\n"
    << "    if (i < lo0 || i >= hiB) masked[i] = ids[i];\n"
    << "  const emb_i64 firstExample = a.step->exampleOffset + (emb_i64)a.step->microBatch * "
    << lit(B) << ";\n"
    << "  for (emb_i64 b = blockIdx.x; b < " << lit(B) << "; b += gridDim.x) {\n"
    << "    const emb_i64 lo = off[b], len = off[b + 1] - lo;\n"
    << "    const bool bad = len < 0 || len > " << lit(L) << " || lo < 0 || lo + len > n;\n"
    << "    if (bad && threadIdx.x == 0) emb_set_error(a.step, " << lengthCode << ", b);\n"
    << "    const emb_i64 count = bad || len == 0 ? 0 : (emb_i64)llround((double)len * "
    << doubleLiteral(rate) << ");\n"
    << "    const emb_i64 k = bad || len == 0 ? 0 : (count < 1 ? 1 : (count > len ? len : count));\n"
    << "    const emb_u64 first = (emb_u64)(firstExample + b) * " << ulit(uint64_t(counterL))
    << ";\n"
    << "    for (emb_i64 l = threadIdx.x; l < " << lit(L) << "; l += blockDim.x) {\n"
    << "      float target = -1.0f;\n"
    << "      if (!bad && l < len) {\n"
    << "        const emb_i64 id = ids[lo + l];\n"
    << "        emb_i64 m = id;\n"
    << "        const unsigned w = emb_mask_word(kChoose, first + (emb_u64)l);\n"
    << "        emb_i64 rank = 0;\n"
    << "        for (emb_i64 j = 0; j < len; ++j) {\n"
    << "          const unsigned wj = emb_mask_word(kChoose, first + (emb_u64)j);\n"
    << "          rank += (wj < w || (wj == w && j < l)) ? 1 : 0;\n"
    << "        }\n"
    << "        if (rank < k) {\n"
    << "          target = (float)id;\n"
    << "          const unsigned r = emb_mask_word(kReplace, first + (emb_u64)l) >> 8;\n"
    << "          if (r < " << runtime::cpu::masking::kMaskBelow << "u) m = " << lit(maskId) << ";\n"
    << "          else if (r < " << runtime::cpu::masking::kRandomBelow << "u)\n"
    << "            m = (emb_i64)(((emb_u64)emb_mask_word(kRandom, first + (emb_u64)l) * "
    << ulit(uint64_t(vocab)) << ") >> 32);\n"
    << "        }\n"
    << "        masked[lo + l] = m;\n"
    << "      }\n"
    << "      targets[b * " << lit(L) << " + l] = target;\n"
    << "    }\n"
    << "  }\n"
    << "}\n";
  em.append(t.str());
  out.launches.push_back(
      CudaEmitter::kernelLaunch(entry, args.list, std::min<int64_t>(B, 65535), kBlock));
}

} // namespace

EMBC_CUDA_LOWERING(MaskTokens, lowerMaskTokens)
