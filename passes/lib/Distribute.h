//===- Distribute.h - what -emb-distribute leaves for later passes -*- C++ -*-===//
//
// Shared by -emb-distribute (Distribute.cpp), -emb-fuse and -emb-to-plan.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_DISTRIBUTE_H
#define EMBC_PASSES_LIB_DISTRIBUTE_H

#include "llvm/ADT/StringRef.h"

namespace embc::distribute {

/// On the module after -emb-distribute with N > 1 ranks: `N : i64`. The plan
/// takes its `data_parallel` from it, and refuses a module whose emb.plan
/// asks for ranks that no collective serves.
constexpr llvm::StringLiteral kDataParallelAttrName = "emb.data_parallel";

} // namespace embc::distribute

#endif // EMBC_PASSES_LIB_DISTRIBUTE_H
