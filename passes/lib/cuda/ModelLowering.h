//===- ModelLowering.h - shared by the model and optimizer lowerings -*- C++ -*-===//
//
// Private to passes/lib/cuda. The interaction, dot and loss lowerings
// (ModelLowering.cpp registers them) and the dense-optimizer lowerings
// (OptimizerLowering.cpp: update_param, update_packed, clip_grad_norm,
// unscale_grads) generate their kernels from text templates with $NAME
// placeholders; this header has the template filler, literal printers,
// operand checks, the deterministic block reduction they share and the
// "segmented" launch that walks several buffers in one grid.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_CUDA_MODELLOWERING_H
#define EMBC_PASSES_CUDA_MODELLOWERING_H

#include "Emitter.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace embc::codegen::model {

using Vars = std::map<std::string, std::string>;

/// Threads per block of the optimizer and gradient-scale kernels (their
/// segmented launches and block reductions are sized for it).
inline constexpr int64_t kBlock = 256;

/// `text` with every $NAME (letters, digits, '_') or ${NAME} replaced by
/// vars[NAME]; an unknown name is a bug in the lowering and throws.
std::string subst(const std::string &text, const Vars &vars);

/// Integer literal ("123" or "123ll" past 32 bits).
std::string lit(int64_t v);

/// A numeric (integer or floating) attribute.
double realAttr(const runtime::Kernel &k, const char *name);
/// A list-of-integers attribute.
std::vector<int64_t> intsAttr(const runtime::Kernel &k, const char *name);


/// `x` rounded to the compute type as the CPU's Rounding.h does (x itself
/// for f32).
std::string roundExpr(runtime::DType compute, const std::string &x);


/// loss / loss_grad of kind sequence_softmax_ce (SequenceLossLowering.cpp):
/// LossLowering.cpp hands that kind over.
void lowerSequenceLoss(CudaEmitter &em, const runtime::Kernel &k, runtime::CudaKernel &out);
void lowerSequenceLossGrad(CudaEmitter &em, const runtime::Kernel &k, runtime::CudaKernel &out);
/// useHelpers, then emb_block_max_f32(v, red) and emb_token_class(raw, C)
/// (-1: no target, a class below C, or -2: not a class), shared by the
/// token losses and sampled_logits.
void appendTokenRowHelpers(CudaEmitter &em);

/// Device helpers of this family (appended once): emb_log1pf, the stable
/// sigmoid, beta^t, and emb_block_sum_f64 (a deterministic block sum).
void useHelpers(CudaEmitter &em);


/// One buffer of a segmented launch: `elements` values at a.p[arg], of which
/// the first length x rowElements are live when `length` >= 0 (a dynamic
/// sparse gradient: the launch also passes its length cell at a.p[length]).
struct Segment {
  runtime::CudaArg buffer;
  int64_t elements = 0;   ///< capacity in floats
  int64_t rowElements = 0; ///< floats per leading-dimension entry
  bool dynamic = false;
  bool vec = false;        ///< float4 access (aligned, elements % 4 == 0)
};

/// Block ranges of a segmented launch: segment s owns blocks
/// [first[s], first[s] + count[s]) and grid-strides over its buffer with
/// them; blocks per segment follow its capacity, so big gradients get many.
struct SegmentPlan {
  std::vector<int64_t> first, count;
  int64_t blocks = 0;
};
SegmentPlan planSegments(const std::vector<Segment> &segs, int64_t block, int64_t maxBlocks);

/// The segments of the gradients `ids` (dense buffers whole, dynamic sparse
/// values to their filled rows), checked to be f32.
std::vector<Segment> gradSegments(const CudaEmitter &em, const std::vector<int32_t> &ids,
                                  const std::string &what);

} // namespace embc::codegen::model

namespace embc::codegen {
// The files of the model family (ModelLowering.cpp calls them).
// OptimizerLowering.cpp calls this one (clip_grad_norm, unscale_grads).
} // namespace embc::codegen

#endif // EMBC_PASSES_CUDA_MODELLOWERING_H
