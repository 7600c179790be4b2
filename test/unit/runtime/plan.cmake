# PlanTests: the plan file format (runtime/lib/plan, docs/plan-format.md).
# xxhash is linked directly because the tests build containers by hand (a
# body edited after serialisation needs a fresh checksum to reach the checks
# behind the checksum). The example in docs/plan-format.md is read and
# validated by a test (EMBC_SOURCE_DIR).
emb_unit_test(PlanTests
  plan/PlanTestUtil.cpp plan/PlanRoundTripTest.cpp plan/PlanContainerTest.cpp
  plan/PlanValidationTest.cpp plan/PlanScheduleTest.cpp plan/PlanDocExampleTest.cpp
  plan/PlanCudaTest.cpp plan/ShardGroupAttrsTest.cpp plan/KernelCatalogueDocTest.cpp
  plan/SequenceLayoutTest.cpp plan/PlanPlacementTest.cpp
  LIBS EmbPlan ${XXHASH_LIBRARY}
  INCLUDES ${XXHASH_INCLUDE_DIR}
  DEFINES EMBC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
