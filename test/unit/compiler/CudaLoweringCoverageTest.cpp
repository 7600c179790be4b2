//===- CudaLoweringCoverageTest.cpp - the CUDA target against the catalogue ===//
//
// Every kernel the catalogue marks `cuda` has a CUDA lowering, and no other
// kernel has one: `embc --cuda` refuses exactly the plans the catalogue says
// it refuses.
//
//===----------------------------------------------------------------------===//

#include "embc/passes/CudaCodegen.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <gtest/gtest.h>

using namespace embc;

TEST(CudaLoweringCoverage, LoweredExactlyWhereTheCatalogueSays) {
  for (const runtime::KernelSpec &spec : runtime::kernelCatalogue())
    EXPECT_EQ(codegen::cudaLowers(spec.op), spec.cuda)
        << "kernel '" << spec.name << "': the catalogue says cuda = " << spec.cuda;
}
