//===- DropoutLowering.h - dropout's device helpers, shared --------*- C++ -*-===//
//
// The generated kernels that drop values (dropout, dropout_grad, and the
// attention kernels' weight dropout) draw the masks of
// runtime/include/embc/runtime/cpu/DropoutKernels.h through these helpers.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_CUDA_DROPOUTLOWERING_H
#define EMBC_PASSES_CUDA_DROPOUTLOWERING_H

#include "Emitter.h"

#include <cstdint>
#include <string>

namespace embc::codegen {

/// Appends, once per program, emb_hash32, emb_drop_cache and
/// emb_drop_factor(key, g, threshold, scale, cache): the factor
/// (keep ? 1 : 0) * scale of global element g (and the embedding helpers
/// they use: emb_mix64, emb_hash_word).
void appendDropoutHelpers(CudaEmitter &em);

/// Device statements declaring `emb_u64 NAME` = data::hashOf(seed, tag,
/// stream, step) from a.step's seed, `step` a device expression.
std::string counterKeyCode(const std::string &name, uint64_t tag, int64_t stream,
                           const std::string &step);

/// Device statements declaring `emb_u64 NAME`, the key of dropout stream
/// `stream` at the running step (cpu::dropoutKey from a.step's seed and
/// step).
std::string dropoutKeyCode(const std::string &name, int64_t stream);

/// Dynamic padding (Buffer::paddedLength): a sequence buffer that runs at
/// its batch's length draws the numbers of the max_len layout, as the CPU
/// does. paddedPerExample is the values an example has at max_len (b's own
/// count when it is not padded); paddedIndex is the expression of value
/// `i`'s place in that layout (`i` is the index among the launch's values,
/// perExample of them an example), `(i)` when nothing is padded, so the
/// max_len kernels keep their text.
int64_t paddedPerExample(const runtime::Buffer &b);
std::string paddedIndex(const std::string &i, int64_t perExample, int64_t paddedPerExample);

} // namespace embc::codegen

#endif // EMBC_PASSES_CUDA_DROPOUTLOWERING_H
