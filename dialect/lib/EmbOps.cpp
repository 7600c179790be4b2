//===- EmbOps.cpp - generated op definitions -------------------------------===//
//
// The hand-written parts of each op live in one file per op family
// (TableOps.cpp, LookupOps.cpp, DenseOps.cpp, InteractionOps.cpp,
// LossOps.cpp); this file instantiates what ODS generates.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace embc::emb;

#define GET_OP_CLASSES
#include "embc/dialect/EmbOps.cpp.inc"
