# PlanTests: the plan file format (runtime/lib/plan, docs/plan-format.md).
# xxhash is linked directly because the tests build containers by hand (a
# body edited after serialisation needs a fresh checksum to reach the checks
# behind the checksum).
emb_unit_test(PlanTests
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/PlanTestUtil.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/PlanRoundTripTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/PlanContainerTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/PlanValidationTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/PlanScheduleTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/PlanDocExampleTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/PlanCudaTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/ShardGroupAttrsTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan/KernelCatalogueDocTest.cpp)
target_include_directories(PlanTests PRIVATE ${XXHASH_INCLUDE_DIR})
target_link_libraries(PlanTests PRIVATE EmbPlan ${XXHASH_LIBRARY})
# The example in docs/plan-format.md is read and validated by a test.
target_compile_definitions(PlanTests PRIVATE EMBC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
