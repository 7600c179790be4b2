# CpuKernelTests: gradient checks, optimizer closed forms and reference
# comparisons for EmbCpuKernels (runtime/lib/cpu).
emb_unit_test(CpuKernelTests
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/GradientCheckTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/OptimizerTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/OptimizerFormulaTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/ForwardReferenceTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/AttentionReferenceTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/EmbeddingUtilTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/FiniteUpdateTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/MaskKernelTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/SampledSoftmaxTest.cpp
)
target_include_directories(CpuKernelTests PRIVATE ${XXHASH_INCLUDE_DIR})
target_link_libraries(CpuKernelTests PRIVATE EmbCpuKernels ${XXHASH_LIBRARY})

# Fused kernels (-emb-fuse): each against the composition of the plain
# kernels it replaces, and gradient checks in double.
emb_unit_test(FusedDenseKernelTests ${CMAKE_CURRENT_SOURCE_DIR}/cpu/FusedDenseKernelTest.cpp)
target_link_libraries(FusedDenseKernelTests PRIVATE EmbCpuKernels)
emb_unit_test(FusedEmbeddingKernelTests ${CMAKE_CURRENT_SOURCE_DIR}/cpu/FusedEmbeddingKernelTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/SkipgramKernelTest.cpp)
target_include_directories(FusedEmbeddingKernelTests PRIVATE ${XXHASH_INCLUDE_DIR})
target_link_libraries(FusedEmbeddingKernelTests PRIVATE EmbCpuKernels ${XXHASH_LIBRARY})

# bf16/fp16 dense compute and fp16 loss scaling (-emb-quantize's dense half):
# conversions, rounded kernels, and the executor's skip-and-rescale.
emb_unit_test(MixedPrecisionTests ${CMAKE_CURRENT_SOURCE_DIR}/cpu/MixedPrecisionTest.cpp)
target_link_libraries(MixedPrecisionTests PRIVATE EmbExec EmbBackends)

# Quantised table storage (-emb-quantize): conversions, stochastic rounding,
# and the quantised lookup and update against their f32 counterparts.
emb_unit_test(QuantizedKernelTests ${CMAKE_CURRENT_SOURCE_DIR}/cpu/QuantizedKernelTest.cpp)
target_link_libraries(QuantizedKernelTests PRIVATE EmbCpuKernels)

# The team of threads (Parallel.h) and the GEMM layer (runtime/lib/cpu/Gemm.h,
# private: the test includes the library's source directory).
emb_unit_test(CpuTeamAndGemmTests
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/ParallelTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/GemmTest.cpp
)
target_include_directories(CpuTeamAndGemmTests PRIVATE ${PROJECT_SOURCE_DIR}/runtime/lib/cpu)
target_link_libraries(CpuTeamAndGemmTests PRIVATE EmbCpuKernels)
target_compile_options(CpuTeamAndGemmTests PRIVATE -fopenmp-simd) # the private headers' omp simd
