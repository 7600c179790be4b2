# CpuKernelTests: gradient checks, optimizer closed forms and reference
# comparisons for EmbCpuKernels (runtime/lib/cpu).
emb_unit_test(CpuKernelTests
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/GradientCheckTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/OptimizerTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/ForwardReferenceTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/EmbeddingUtilTest.cpp
)
target_include_directories(CpuKernelTests PRIVATE ${XXHASH_INCLUDE_DIR})
target_link_libraries(CpuKernelTests PRIVATE EmbCpuKernels ${XXHASH_LIBRARY})

# Fused kernels (-emb-fuse): each against the composition of the plain
# kernels it replaces, and gradient checks in double.
emb_unit_test(FusedDenseKernelTests ${CMAKE_CURRENT_SOURCE_DIR}/cpu/FusedDenseKernelTest.cpp)
target_link_libraries(FusedDenseKernelTests PRIVATE EmbCpuKernels)
emb_unit_test(FusedEmbeddingKernelTests ${CMAKE_CURRENT_SOURCE_DIR}/cpu/FusedEmbeddingKernelTest.cpp)
target_include_directories(FusedEmbeddingKernelTests PRIVATE ${XXHASH_INCLUDE_DIR})
target_link_libraries(FusedEmbeddingKernelTests PRIVATE EmbCpuKernels ${XXHASH_LIBRARY})
