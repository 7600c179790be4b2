# CheckpointTests: safetensors layout and validation, checkpoint directories,
# restore checks, atomic replacement, embedding export.
emb_unit_test(CheckpointTests
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint/SafetensorsTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint/CheckpointTest.cpp
)
target_include_directories(CheckpointTests PRIVATE ${XXHASH_INCLUDE_DIR})
target_compile_definitions(CheckpointTests PRIVATE EMBC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(CheckpointTests PRIVATE EmbCheckpoint ${XXHASH_LIBRARY})
