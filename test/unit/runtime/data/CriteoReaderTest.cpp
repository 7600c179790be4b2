//===- CriteoReaderTest.cpp - the Criteo TSV reader -----------------------===//
//
// Values of good lines, every malformed case under both policies (with the
// exact line numbers), binding errors, and parallel parsing.
//
//===----------------------------------------------------------------------===//

#include "DataTestUtil.h"

#include <cmath>

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

/// A criteo line: label, 13 integer fields, 26 categorical fields. Fields
/// not given are filled with "1" and "0000000a".
std::string criteoLine(const std::string &label, std::vector<std::string> ints = {},
                       std::vector<std::string> cats = {}) {
  ints.resize(13, "1");
  cats.resize(26, "0000000a");
  std::string line = label;
  for (const std::string &field : ints)
    line += "\t" + field;
  for (const std::string &field : cats)
    line += "\t" + field;
  return line;
}

std::vector<FeatureSpec> criteoFeatures(int64_t c1Vocab = 0) {
  std::vector<FeatureSpec> features{labelFeature("click", "binary", "label"),
                                    denseFeature("dense", 13), denseFeature("i2", 1, "I2")};
  for (int c = 1; c <= 26; ++c)
    features.push_back(sparseFeature("C" + std::to_string(c), c == 1 ? c1Vocab : 0));
  return features;
}

/// Opens `content` as a criteo evaluation stream (file order) and returns
/// the stream; `file` keeps the file alive.
std::unique_ptr<BatchStream> openCriteo(const TempFile &file, BadDataPolicy policy,
                                        int64_t batchSize = 64, int64_t c1Vocab = 0,
                                        int threads = 1) {
  StreamOptions options = streamOptions("criteo", file.path(), batchSize, false, 7, threads);
  options.onBadData = policy;
  return openStream(options, criteoFeatures(c1Vocab));
}

std::string failureOf(const std::string &content, int64_t c1Vocab = 0) {
  TempFile file(content);
  std::string message =
      dataErrorOf([&] { openCriteo(file, BadDataPolicy::Fail, 64, c1Vocab); });
  // Make the message independent of the temporary path.
  if (message.rfind(file.path(), 0) == 0)
    message = "PATH" + message.substr(file.path().size());
  return message;
}

} // namespace

TEST(CriteoReader, ParsesValuesOfGoodLines) {
  std::vector<std::string> ints(13, "");
  ints[0] = "0";
  ints[1] = "1";
  ints[2] = "-3";
  ints[3] = "1000";
  std::vector<std::string> cats(26, "");
  cats[0] = "68fd1e64";
  cats[2] = "FFFFFFFF";
  cats[25] = "a";
  TempFile file(criteoLine("1", ints, cats) + "\n" + criteoLine("0") + "\n");
  auto stream = openCriteo(file, BadDataPolicy::Fail, 4);
  EXPECT_EQ(stream->examplesPerEpoch(), 2u);
  EXPECT_EQ(stream->stats().examples, 2);
  EXPECT_EQ(stream->stats().skipped, 0);
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.size, 4);
  EXPECT_EQ(batch.valid, 2);
  EXPECT_EQ(batch.position, 2u);
  EXPECT_EQ(batch.features[0].label, (std::vector<float>{1, 0, 0, 0}));

  const std::vector<float> &dense = batch.features[1].dense;
  ASSERT_EQ(dense.size(), 4u * 13);
  EXPECT_EQ(dense[0], 0.0f);                                   // log(1 + 0)
  EXPECT_FLOAT_EQ(dense[1], std::log(2.0f));                   // log(1 + 1)
  EXPECT_EQ(dense[2], 0.0f);                                   // negative -> 0
  EXPECT_FLOAT_EQ(dense[3], static_cast<float>(std::log1p(1000.0)));
  EXPECT_EQ(dense[12], 0.0f);                                  // missing -> 0
  EXPECT_FLOAT_EQ(dense[13 + 5], std::log(2.0f));              // line 2: all "1"
  EXPECT_EQ(batch.features[2].dense[0], dense[1]);             // I2 alone
  EXPECT_EQ(batch.features[2].dense[1], dense[13 + 1]);

  const FeatureBatch &c1 = batch.features[3];
  EXPECT_EQ(c1.ids, (std::vector<int64_t>{0x68fd1e64, 10, 10, 10}));
  EXPECT_EQ(c1.offsets, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  const FeatureBatch &c2 = batch.features[4]; // missing on line 1: an empty bag
  EXPECT_EQ(c2.ids, (std::vector<int64_t>{10, 10, 10}));
  EXPECT_EQ(c2.offsets, (std::vector<int64_t>{0, 0, 1, 2, 3}));
  EXPECT_EQ(batch.features[5].ids[0], 4294967295); // FFFFFFFF
  EXPECT_EQ(batch.features[28].ids[0], 10);        // "a"
  EXPECT_FALSE(stream->next(batch));
}

TEST(CriteoReader, AcceptsCrlfAndAFinalLineWithoutNewline) {
  TempFile file(criteoLine("1") + "\r\n" + criteoLine("0"));
  auto stream = openCriteo(file, BadDataPolicy::Fail);
  EXPECT_EQ(stream->examplesPerEpoch(), 2u);
}

TEST(CriteoReader, FailsOnTheFirstMalformedLineWithItsNumber) {
  std::string good = criteoLine("0") + "\n";
  EXPECT_EQ(failureOf(good + "1\t2\n"),
            "PATH:2: expected 40 fields separated by '\\t', got 2 (line: \"1\\t2\")");
  EXPECT_EQ(failureOf(good + good + criteoLine("2") + "\n"),
            "PATH:3: label: 2 is not 0 or 1 (line: \"" +
                std::string("2\\t1\\t1\\t1\\t1\\t1\\t1\\t1\\t1\\t1\\t1\\t1\\t1\\t1\\t0000000a\\t"
                            "0000000a\\t0000000a\\t0000000a\\t0000000a\\t0000000...") + // 80 bytes
                "\")");
  EXPECT_EQ(failureOf(good + criteoLine("x")).substr(0, 43),
            "PATH:2: label: 'x' is not a number (line: \"");
  std::vector<std::string> ints(13, "1");
  ints[3] = "abc";
  EXPECT_EQ(failureOf(good + criteoLine("1", ints)).substr(0, 46),
            "PATH:2: dense: field 4 'abc' is not a number (");
  ints[3] = "nan";
  EXPECT_EQ(failureOf(good + criteoLine("1", ints)).substr(0, 46),
            "PATH:2: dense: field 4 'nan' is not a number (");
  std::vector<std::string> cats(26, "0000000a");
  cats[6] = "zz";
  EXPECT_EQ(failureOf(good + criteoLine("1", {}, cats)).substr(0, 63),
            "PATH:2: C7: 'zz' is not a hex id of 1 to 16 digits (below 2^63)");
  cats[6] = "8000000000000000"; // 2^63
  EXPECT_EQ(failureOf(good + criteoLine("1", {}, cats)).substr(0, 77),
            "PATH:2: C7: '8000000000000000' is not a hex id of 1 to 16 digits (below 2^63)");
  EXPECT_EQ(failureOf(good + "\n" + good), "PATH:2: empty line (line: \"\")");
  std::vector<std::string> big(26, "0000000a");
  big[0] = "000007d0"; // 2000
  EXPECT_EQ(failureOf(good + criteoLine("1", {}, big), 1683).substr(0, 71),
            "PATH:2: C1: id 2000 out of range for feature 'C1' (vocab 1683) (line: \"");
}

TEST(CriteoReader, SkipsMalformedLinesAndCountsThem) {
  std::vector<std::string> badInt(13, "1"), badHex(26, "0000000a"), big(26, "0000000a");
  badInt[0] = "one";
  badHex[25] = "g";
  big[0] = "00000100"; // 256 >= vocab 100
  std::vector<std::string> first(26, "00000001"), second(26, "00000002"), third(26, "00000003");
  std::string content = criteoLine("1", {}, first) + "\n" + // line 1: good
                        "0\t1\n" +                          // 2: wrong field count
                        criteoLine("3") + "\n" +            // 3: bad label
                        criteoLine("0", badInt) + "\n" +    // 4: bad number
                        criteoLine("0", {}, second) + "\n" + // 5: good
                        criteoLine("0", {}, badHex) + "\n" + // 6: bad hex
                        "\n" +                              // 7: empty
                        criteoLine("1", {}, big) + "\n" +   // 8: id out of range
                        "0\t1\t2\n" +                       // 9: wrong field count
                        criteoLine("0", {}, third) + "\n";  // 10: good
  TempFile file(content);
  auto stream = openCriteo(file, BadDataPolicy::Skip, 8, 100);
  const DataStats &stats = stream->stats();
  EXPECT_EQ(stats.examples, 3);
  EXPECT_EQ(stats.skipped, 7);
  EXPECT_EQ(stats.skippedByReason,
            (std::map<std::string, int64_t>{{"wrong field count", 2},
                                            {"bad label", 1},
                                            {"bad number", 1},
                                            {"bad hex id", 1},
                                            {"empty line", 1},
                                            {"id out of range", 1}}));
  EXPECT_EQ(stats.firstProblem, file.path() + ":2: expected 40 fields separated by '\\t', got 2");
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.valid, 3);
  EXPECT_EQ(batch.features[0].label, (std::vector<float>{1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(batch.features[3].ids, (std::vector<int64_t>{1, 2, 3, 3, 3, 3, 3, 3}));
}

TEST(CriteoReader, RefusesEmptyMissingAndAllMalformedFiles) {
  TempFile empty("");
  EXPECT_EQ(dataErrorOf([&] { openCriteo(empty, BadDataPolicy::Skip); }),
            empty.path() + ": file is empty");
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("criteo", "/nonexistent/train.tsv", 8, true),
                         criteoFeatures());
            }),
            "/nonexistent/train.tsv: cannot open: No such file or directory");
  TempFile bad("1\t2\n3\n");
  EXPECT_EQ(dataErrorOf([&] { openCriteo(bad, BadDataPolicy::Skip); }),
            bad.path() + ": no valid examples in 2 lines (all malformed; first: " + bad.path() +
                ":1: expected 40 fields separated by '\\t', got 2)");
}

TEST(CriteoReader, BindingErrorsNameTheFeatureAndTheColumns) {
  TempFile file(criteoLine("1") + "\n");
  auto bindingError = [&](const FeatureSpec &spec) {
    return bindingErrorOf("criteo", file.path(), spec);
  };
  std::string where = "criteo data " + file.path();
  EXPECT_EQ(bindingError(sparseFeature("c27", 0, 1, "C27")),
            "feature 'c27' reads column 'C27', which " + where +
                " does not have (columns: label, dense, I1..I13, C1..C26)");
  EXPECT_EQ(bindingError(sparseFeature("i1", 0, 1, "I1")),
            "feature 'i1' cannot read column 'I1' of " + where +
                ": a sparse or sequence feature reads a categorical column, but column 'I1' is "
                "dense");
  EXPECT_EQ(bindingError(denseFeature("dense", 5)),
            "feature 'dense' cannot read column 'dense' of " + where +
                ": the feature has width 5, column 'dense' 13");
  EXPECT_EQ(bindingError(labelFeature("label", "real")),
            "feature 'label' cannot read column 'label' of " + where +
                ": the feature is a real label, but column 'label' holds binary labels");
  FeatureSpec weighted = sparseFeature("C1", 0);
  weighted.weighted = true;
  EXPECT_EQ(bindingError(weighted),
            "feature 'C1' cannot read column 'C1' of " + where +
                ": the feature is weighted, but column 'C1' has no weights (\"weighted\": "
                "true reads id:weight)");
  EXPECT_EQ(bindingError(negativesFeature("negatives", 4)),
            "feature 'negatives' reads column 'negatives', which " + where +
                " does not have (columns: label, dense, I1..I13, C1..C26)");
  EXPECT_EQ(bindingError(negativesFeature("neg", 4, 0, "C3")),
            "feature 'neg' cannot read column 'C3' of " + where +
                ": negatives are drawn by the text reader; a data schema has none");
}

TEST(CriteoReader, ParallelParsingKeepsOrderAndLineNumbers) {
  std::string content;
  for (int line = 1; line <= 997; ++line) {
    std::vector<std::string> cats(26, "0");
    char hex[16];
    std::snprintf(hex, sizeof hex, "%x", line);
    cats[0] = hex;
    content += criteoLine(line % 3 ? "0" : "1", {std::to_string(line)}, cats) + "\n";
  }
  TempFile file(content);
  auto one = openCriteo(file, BadDataPolicy::Fail, 100, 0, 1);
  auto four = openCriteo(file, BadDataPolicy::Fail, 100, 0, 4);
  std::vector<Batch> expected = takeBatches(*one, 20);
  ASSERT_EQ(expected.size(), 10u);
  EXPECT_EQ(expected[9].valid, 97);
  EXPECT_TRUE(sameBatches(takeBatches(*four, 20), expected));
  EXPECT_EQ(expected[3].features[3].ids[5], 306); // line 306, in order

  TempFile broken(content + criteoLine("0") + "\n" + "bad line\n" + content);
  std::string message =
      dataErrorOf([&] { openCriteo(broken, BadDataPolicy::Fail, 100, 0, 4); });
  EXPECT_EQ(message.substr(0, broken.path().size() + 6), broken.path() + ":999: ");
}
