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
