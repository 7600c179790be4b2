# EmulatedDeviceTests: the CUDA device emulated on the CPU (runtime/lib/cuda):
# hand-written kernels, GEMM epilogues, library kernels, graph capture. The
# compiled test program is cached in the build tree, so reruns take seconds.
emb_unit_test(EmulatedDeviceTests ${CMAKE_CURRENT_SOURCE_DIR}/cuda/EmulatedDeviceTest.cpp)
target_compile_definitions(EmulatedDeviceTests PRIVATE
                           EMBC_TEST_CACHE_DIR="${CMAKE_CURRENT_BINARY_DIR}/embc-cache")
target_link_libraries(EmulatedDeviceTests PRIVATE EmbCuda)
