//===- CpuBindingCoverageTest.cpp - every catalogue kernel runs on the CPU ===//
//
// The CPU backend binds kernels through a table keyed by KernelOp; a kernel
// declared in the catalogue without a CPU binding would only fail on a
// user's machine, so this walks the catalogue.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/backends/CpuBackend.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <gtest/gtest.h>

using namespace embc::runtime;

TEST(CpuBindingCoverage, EveryCatalogueKernelHasACpuBinding) {
  for (const KernelSpec &spec : kernelCatalogue())
    EXPECT_TRUE(cpuBackendBinds(spec.op)) << "kernel '" << spec.name << "' has no CPU binding";
}
