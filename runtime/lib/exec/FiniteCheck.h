//===- FiniteCheck.h - no non-finite value is saved or trained on silently -*- C++ -*-===//
//
// The training loss is checked every step, but a NaN can sit in a weight a
// ReLU masks, an overflowed Adam moment or a quantised table's rows without
// reaching the loss. Before a checkpoint or an export is written, after the
// parameters are initialised and at the end of a run, every saved tensor is
// scanned; any non-finite value stops the run with the tensors named, and
// nothing is written (the previous checkpoint is kept).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_EXEC_FINITECHECK_H
#define EMBC_RUNTIME_LIB_EXEC_FINITECHECK_H

#include "embc/runtime/checkpoint/Safetensors.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace embc::runtime {

/// How many of a tensor's values are NaN or infinite, and the first one's
/// index. Floating dtypes (F32, F64, F16, BF16) only; others have none.
struct NonFinite {
  int64_t count = 0;
  int64_t first = -1;
};
NonFinite nonFiniteValues(const checkpoint::TensorView &tensor);

/// "param/w (3 of 4096 values, the first at 17), table/t (...)" for the
/// tensors that hold non-finite values, or nothing when every one is finite.
std::optional<std::string> describeNonFinite(const std::vector<checkpoint::TensorView> &tensors);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_LIB_EXEC_FINITECHECK_H
