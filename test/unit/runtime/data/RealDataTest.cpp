//===- RealDataTest.cpp - the readers on the shared datasets --------------===//
//
// The real files in ../shared/data (next to the repository) when present:
// every line of the Criteo sample and of the MovieLens splits parses, and the
// text corpus yields a vocabulary and pairs. Skipped when the data is absent.
//
//===----------------------------------------------------------------------===//

#include "DataTestUtil.h"

#include <numeric>

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

/// Reads an evaluation pass and returns the sum of the label feature `label`.
double labelSum(BatchStream &stream, size_t label, int64_t &examples) {
  double sum = 0;
  examples = 0;
  Batch batch;
  while (stream.next(batch)) {
    examples += batch.valid;
    sum += std::accumulate(batch.features[label].label.begin(),
                           batch.features[label].label.begin() + batch.valid, 0.0);
  }
  return sum;
}

} // namespace

TEST(RealData, CriteoSampleParsesEveryLine) {
  std::string path = sharedData("criteo-kaggle-sample/criteo_kaggle_train_lines_00001-08000.txt");
  if (path.empty())
    GTEST_SKIP() << "the Criteo sample is not in ../shared/data";
  std::vector<FeatureSpec> features{labelFeature("label", "binary"), denseFeature("dense", 13)};
  for (int c = 1; c <= 26; ++c)
    features.push_back(sparseFeature("C" + std::to_string(c), int64_t(1) << 32));
  auto stream = openStream(streamOptions("criteo", path, 1000, false, 1, 2), features);
  EXPECT_EQ(stream->stats().examples, 8000);
  EXPECT_EQ(stream->stats().skipped, 0);
  int64_t examples;
  double clicks = labelSum(*stream, 0, examples);
  EXPECT_EQ(examples, 8000);
  EXPECT_EQ(clicks, 1728); // click rate 0.2160
}

TEST(RealData, MovieLensSplitsParseEveryRating) {
  std::string base = sharedData("movielens-100k/splits/u1.base");
  std::string test = sharedData("movielens-100k/splits/u1.test");
  if (base.empty() || test.empty())
    GTEST_SKIP() << "MovieLens 100K is not in ../shared/data";
  // ML-100K: users 1..943, items 1..1682; ids index tables directly.
  std::vector<FeatureSpec> features{sparseFeature("user", 944), sparseFeature("item", 1683),
                                    labelFeature("rating", "real"),
                                    denseFeature("timestamp", 1)};
  int64_t expected[2] = {80000, 20000};
  std::string paths[2] = {base, test};
  for (int i = 0; i < 2; ++i) {
    auto stream = openStream(streamOptions("movielens", paths[i], 4096, false, 1, 2), features);
    EXPECT_EQ(stream->stats().examples, expected[i]) << paths[i];
    EXPECT_EQ(stream->stats().skipped, 0);
    int64_t examples;
    double mean = labelSum(*stream, 2, examples) / expected[i];
    EXPECT_EQ(examples, expected[i]);
    EXPECT_GT(mean, 3.4); // the ML-100K mean rating is 3.53
    EXPECT_LT(mean, 3.7);
  }
}

TEST(RealData, GutenbergTextYieldsVocabularyAndPairs) {
  std::string path = sharedData("text-gutenberg/gutenberg7_normalized.txt");
  if (path.empty())
    GTEST_SKIP() << "the Gutenberg text is not in ../shared/data";
  std::vector<FeatureSpec> features{sparseFeature("center", 20000),
                                    sparseFeature("context", 20000),
                                    negativesFeature("negatives", 5, 20000)};
  auto stream = openStream(streamOptions("text", path, 4096, true, 1, 2), features);
  ASSERT_NE(stream->vocabulary(), nullptr);
  const std::vector<std::string> &words = *stream->vocabulary();
  ASSERT_EQ(words.size(), 20000u);
  EXPECT_EQ(words[0], "the");
  EXPECT_EQ(words[1], "and");
  // 2.4M words, about 3 context words on each side (window 1..5).
  EXPECT_GT(stream->examplesPerEpoch(), 12000000u);
  EXPECT_LT(stream->examplesPerEpoch(), 16000000u);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  for (size_t f = 0; f < 2; ++f)
    for (int64_t id : batch.features[f].ids) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, 20000);
    }
  ASSERT_EQ(batch.features[2].negatives.size(), 4096u * 5);
  for (int64_t id : batch.features[2].negatives)
    ASSERT_LT(id, 20000);
}
