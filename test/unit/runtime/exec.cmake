emb_unit_test(ExecTests ${CMAKE_CURRENT_SOURCE_DIR}/exec/ExecutorTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/TeamTunerTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/exec/CpuBindingCoverageTest.cpp)
target_link_libraries(ExecTests PRIVATE EmbExec)
# TeamTuner.h is private to EmbExec.
target_include_directories(ExecTests PRIVATE ${PROJECT_SOURCE_DIR}/runtime/lib/exec)
