# DataTests: the readers and the schema reader (on small files the tests write, and on the shared
# datasets when present), the synthetic generator, determinism, resume,
# padding and prefetching of EmbData (runtime/lib/data). StalledWorkerTest
# drives a PrefetchStream over a source of its own (the private include).
emb_unit_test(DataTests
  data/BatchSliceTest.cpp data/CriteoReaderTest.cpp data/MovieLensReaderTest.cpp
  data/PermutationTest.cpp data/RealDataTest.cpp data/StalledWorkerTest.cpp
  data/StreamTest.cpp data/SyntheticTest.cpp data/TextLinesReaderTest.cpp
  data/TextReaderTest.cpp data/LengthBucketsTest.cpp data/SchemaReaderTest.cpp
  LIBS EmbData ${XXHASH_LIBRARY}
  INCLUDES ${PROJECT_SOURCE_DIR}/runtime/lib/data ${XXHASH_INCLUDE_DIR}
  DEFINES EMBC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
