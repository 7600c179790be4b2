# DataTests: the readers (on small files the tests write, and on the shared
# datasets when present), the synthetic generator, determinism, resume,
# padding and prefetching of EmbData (runtime/lib/data).
emb_unit_test(DataTests
  ${CMAKE_CURRENT_SOURCE_DIR}/data/BatchSliceTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/data/CriteoReaderTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/data/MovieLensReaderTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/data/PermutationTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/data/RealDataTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/data/StalledWorkerTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/data/StreamTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/data/SyntheticTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/data/TextReaderTest.cpp
)
target_link_libraries(DataTests PRIVATE EmbData)
# StalledWorkerTest drives a PrefetchStream over a source of its own.
target_include_directories(DataTests PRIVATE ${PROJECT_SOURCE_DIR}/runtime/lib/data)
target_compile_definitions(DataTests PRIVATE EMBC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
