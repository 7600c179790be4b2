emb_unit_test(ExecTests ${CMAKE_CURRENT_SOURCE_DIR}/exec/ExecutorTest.cpp)
target_link_libraries(ExecTests PRIVATE EmbExec)
