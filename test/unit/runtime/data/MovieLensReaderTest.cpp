//===- MovieLensReaderTest.cpp - the MovieLens ratings reader -------------===//

#include "DataTestUtil.h"

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

std::vector<FeatureSpec> ratingFeatures(int64_t users = 0, int64_t items = 0) {
  return {sparseFeature("user", users), sparseFeature("item", items),
          labelFeature("rating", "real"), denseFeature("time", 1, "timestamp")};
}

std::unique_ptr<BatchStream> openRatings(const TempFile &file, BadDataPolicy policy,
                                         int64_t users = 0, int64_t items = 0) {
  StreamOptions options = streamOptions("movielens", file.path(), 4, false);
  options.onBadData = policy;
  return openStream(options, ratingFeatures(users, items));
}

std::string failureOf(const std::string &content, int64_t users = 0, int64_t items = 0) {
  TempFile file(content);
  std::string message =
      dataErrorOf([&] { openRatings(file, BadDataPolicy::Fail, users, items); });
  if (message.rfind(file.path(), 0) == 0)
    message = "PATH" + message.substr(file.path().size());
  return message;
}

} // namespace

TEST(MovieLensReader, ReadsTabSeparatedRatings) {
  TempFile file("196\t242\t3\t881250949\n186\t302\t4.5\t891717742\n");
  auto stream = openRatings(file, BadDataPolicy::Fail, 944, 1683);
  EXPECT_EQ(stream->examplesPerEpoch(), 2u);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.valid, 2);
  EXPECT_EQ(batch.features[0].ids, (std::vector<int64_t>{196, 186, 186, 186}));
  EXPECT_EQ(batch.features[0].offsets, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(batch.features[1].ids, (std::vector<int64_t>{242, 302, 302, 302}));
  EXPECT_EQ(batch.features[2].label, (std::vector<float>{3, 4.5f, 4.5f, 4.5f}));
  EXPECT_EQ(batch.features[3].dense[0], 881250949.0f);
  EXPECT_EQ(batch.features[3].dense[1], 891717742.0f);
}

TEST(MovieLensReader, ReadsDoubleColonRatings) {
  TempFile file("1::1193::5::978300760\r\n1::661::3::978302109\r\n");
  auto stream = openRatings(file, BadDataPolicy::Fail);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.valid, 2);
  EXPECT_EQ(batch.features[1].ids, (std::vector<int64_t>{1193, 661, 661, 661}));
  EXPECT_EQ(batch.features[2].label[0], 5.0f);
}

// ratings.csv of ML-20M, ML-25M and ml-latest: a header, commas, half
// stars, item ids up to 193,609.
TEST(MovieLensReader, ReadsRatingsCsvWithItsHeader) {
  TempFile file("userId,movieId,rating,timestamp\r\n1,193609,4.5,964982703\r\n"
                "610,1,0.5,1493850311\r\n");
  auto stream = openRatings(file, BadDataPolicy::Fail, 611, 193610);
  EXPECT_EQ(stream->examplesPerEpoch(), 2u);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.valid, 2);
  EXPECT_EQ(batch.features[0].ids, (std::vector<int64_t>{1, 610, 610, 610}));
  EXPECT_EQ(batch.features[1].ids, (std::vector<int64_t>{193609, 1, 1, 1}));
  EXPECT_EQ(batch.features[2].label, (std::vector<float>{4.5f, 0.5f, 0.5f, 0.5f}));
  // The header keeps its line number: a bad row is named by its own.
  EXPECT_EQ(failureOf("userId,movieId,rating,timestamp\n1,2,3,4\n1,2,x,4\n"),
            "PATH:3: rating: 'x' is not a number (line: \"1,2,x,4\")");
  // An item beyond the model's table is refused with its row.
  EXPECT_EQ(failureOf("userId,movieId,rating,timestamp\n1,193609,4,5\n", 944, 1683),
            "PATH:2: item: id 193609 out of range for feature 'item' (vocab 1683) (line: "
            "\"1,193609,4,5\")");
  // Another header is not skipped silently: it is a malformed line.
  EXPECT_EQ(failureOf("user,item,rating,time\n1,2,3,4\n"),
            "PATH:1: user: 'user' is not a non-negative integer id (line: \"user,item,rating,time\")");
}

TEST(MovieLensReader, FailsOnTheFirstMalformedLineWithItsNumber) {
  std::string good = "1\t2\t3\t4\n";
  EXPECT_EQ(failureOf(good + good + "1\t2\t3\n"),
            "PATH:3: expected 4 fields separated by '\\t', got "
            "3 (line: \"1\\t2\\t3\")");
  EXPECT_EQ(failureOf(good + "1::2::3::4\n"),
            "PATH:2: expected 4 fields separated by '\\t', got "
            "1 (line: \"1::2::3::4\")");
  EXPECT_EQ(failureOf(good + "abc\t2\t3\t4\n"),
            "PATH:2: user: 'abc' is not a non-negative integer id (line: \"abc\\t2\\t3\\t4\")");
  EXPECT_EQ(failureOf(good + "1\t-2\t3\t4\n"),
            "PATH:2: item: '-2' is not a non-negative integer id (line: \"1\\t-2\\t3\\t4\")");
  EXPECT_EQ(failureOf(good + "1\t2\tgood\t4\n"),
            "PATH:2: rating: 'good' is not a number (line: \"1\\t2\\tgood\\t4\")");
  EXPECT_EQ(failureOf(good + "1\t2\t3\tsoon\n"),
            "PATH:2: timestamp: field 3 'soon' is not a number (line: \"1\\t2\\t3\\tsoon\")");
  EXPECT_EQ(failureOf(good + "1\t2000\t3\t4\n", 944, 1683),
            "PATH:2: item: id 2000 out of range for feature 'item' (vocab 1683) (line: "
            "\"1\\t2000\\t3\\t4\")");
  EXPECT_EQ(failureOf("1::2::3::4\n1::2::3\n"),
            "PATH:2: expected 4 fields separated by '::', got "
            "3 (line: \"1::2::3\")");
}

TEST(MovieLensReader, SkipsMalformedLinesAndCountsThem) {
  TempFile file("1\t10\t5\t100\n"  // good
                "x\t10\t5\t100\n"  // bad id
                "2\t20\t4\t200\n"  // good
                "3\t30\t4\n"       // wrong field count
                "4\t2000\t1\t1\n"  // id out of range
                "5\t50\t?\t1\n"    // bad number
                "6\t60\t2\t600\n"); // good
  auto stream = openRatings(file, BadDataPolicy::Skip, 944, 1683);
  const DataStats &stats = stream->stats();
  EXPECT_EQ(stats.examples, 3);
  EXPECT_EQ(stats.skipped, 4);
  EXPECT_EQ(stats.skippedByReason,
            (std::map<std::string, int64_t>{{"bad id", 1},
                                            {"wrong field count", 1},
                                            {"id out of range", 1},
                                            {"bad label", 1}}));
  EXPECT_EQ(stats.firstProblem,
            file.path() + ":2: user: 'x' is not a non-negative integer id");
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.features[0].ids, (std::vector<int64_t>{1, 2, 6, 6}));
  EXPECT_EQ(batch.features[2].label, (std::vector<float>{5, 4, 2, 2}));
}

TEST(MovieLensReader, BindingErrorsNameTheFeatureAndTheColumns) {
  TempFile file("1\t2\t3\t4\n");
  auto bindingError = [&](const FeatureSpec &spec) {
    return bindingErrorOf("movielens", file.path(), spec);
  };
  std::string where = "movielens data " + file.path();
  EXPECT_EQ(bindingError(labelFeature("liked", "binary", "rating")),
            "feature 'liked' cannot read column 'rating' of " + where +
                ": the feature is a binary label, but column 'rating' holds real labels");
  EXPECT_EQ(bindingError(sparseFeature("movie", 0)),
            "feature 'movie' reads column 'movie', which " + where +
                " does not have (columns: user, item, rating, timestamp)");
  EXPECT_EQ(bindingError(denseFeature("timestamp", 2)),
            "feature 'timestamp' cannot read column 'timestamp' of " + where +
                ": the feature has width 2, column 'timestamp' 1");
  EXPECT_EQ(bindingError(denseFeature("user", 1)),
            "feature 'user' cannot read column 'user' of " + where +
                ": a dense feature reads a dense column, but column 'user' is categorical");
}
