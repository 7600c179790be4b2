emb_unit_test(ExecTests ${CMAKE_CURRENT_SOURCE_DIR}/exec/ExecutorTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/TeamTunerTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/CpuBindingCoverageTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/BackendRegistryTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/FiniteCheckTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/EarlyStopTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/HashCollisionsTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/DiskTrafficTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/RowPrefetcherTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/DropoutBindingTest.cpp)
target_link_libraries(ExecTests PRIVATE EmbExec EmbBackends EmbCpuBackend)
# TeamTuner.h is private to the CPU backend, FiniteCheck.h and EarlyStop.h to EmbExec.
target_include_directories(ExecTests PRIVATE ${PROJECT_SOURCE_DIR}/runtime/lib/backends/cpu
                           ${PROJECT_SOURCE_DIR}/runtime/lib/exec)
