# EmulatedDeviceTests: the CUDA device emulated on the CPU (runtime/lib/cuda):
# hand-written kernels, GEMM epilogues, library kernels, graph capture. The
# compiled test program is cached in the build tree, so reruns take seconds.
emb_unit_test(EmulatedDeviceTests ${CMAKE_CURRENT_SOURCE_DIR}/cuda/EmulatedDeviceTest.cpp)
target_compile_definitions(EmulatedDeviceTests PRIVATE
                           EMBC_TEST_CACHE_DIR="${CMAKE_CURRENT_BINARY_DIR}/embc-cache")
target_link_libraries(EmulatedDeviceTests PRIVATE EmbCudaDevice)

# CudaCollectivesTests: the CUDA backend's collective launches on the emulated
# device in a one-rank job (what prepare refuses, what each leaves behind);
# several ranks are e2e.distributed's.
emb_unit_test(CudaCollectivesTests ${CMAKE_CURRENT_SOURCE_DIR}/cuda/CudaCollectivesTest.cpp)
target_link_libraries(CudaCollectivesTests PRIVATE EmbCudaBackend EmbComm)
target_include_directories(CudaCollectivesTests PRIVATE ${PROJECT_SOURCE_DIR}/runtime/lib/backends/cuda)
