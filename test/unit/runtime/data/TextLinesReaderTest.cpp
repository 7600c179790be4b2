//===- TextLinesReaderTest.cpp - one example per line of text -------------===//
//
// The line reader of sequence models: the tokens of each line in order, the
// label before a tab, the vocabulary with <unk> at id 0 (capped, minimum
// count, the training vocabulary for evaluation), long lines cut to the
// feature's hotness, and every malformed line named by file and line.
//
//===----------------------------------------------------------------------===//

#include "DataTestUtil.h"

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

/// A class label of 3 classes and a tokens feature of up to `hotness` ids.
std::vector<FeatureSpec> linesFeatures(int64_t vocab = 0, int64_t hotness = 4) {
  FeatureSpec label = labelFeature("label", "class");
  label.classes = 3;
  return {sparseFeature("tokens", vocab, hotness), label};
}

/// Every example of one evaluation pass: its ids and its label.
std::vector<std::pair<std::vector<int64_t>, float>> allLines(BatchStream &stream) {
  std::vector<std::pair<std::vector<int64_t>, float>> out;
  Batch batch;
  while (stream.next(batch)) {
    const FeatureBatch &tokens = batch.features[0];
    for (int64_t r = 0; r < batch.valid; ++r)
      out.push_back({std::vector<int64_t>(tokens.ids.begin() + tokens.offsets[r],
                                          tokens.ids.begin() + tokens.offsets[r + 1]),
                     batch.features[1].label[r]});
  }
  return out;
}

using Lines = std::vector<std::pair<std::vector<int64_t>, float>>;

} // namespace

TEST(TextLinesReader, TokensInOrderLabelsAndLongLinesCut) {
  // A blank line is no example; the third line keeps its first 4 words.
  TempFile file("1\tb a b\n0\tc\n\n2\ta b c d e f\r\n");
  auto stream = openStream(streamOptions("text", file.path(), 2, false), linesFeatures());
  ASSERT_NE(stream->vocabulary(), nullptr);
  EXPECT_EQ(*stream->vocabulary(),
            (std::vector<std::string>{"<unk>", "b", "a", "c", "d", "e", "f"}));
  EXPECT_EQ(allLines(*stream), (Lines{{{1, 2, 1}, 1.0f}, {{3}, 0.0f}, {{2, 1, 3, 4}, 2.0f}}));
  const std::string &d = stream->stats().description;
  EXPECT_NE(d.find("3 lines (label<TAB>text), 10 words, 6 distinct, vocabulary 7 with <unk>"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("1 lines longer than 4 words cut"), std::string::npos) << d;
}

TEST(TextLinesReader, CappedVocabularyMapsOtherWordsToUnknown) {
  // vocab 3: <unk> and the two most frequent words; min count 2 would drop c.
  TempFile file("0\tb a b c\n1\ta c b\n");
  auto stream = openStream(streamOptions("text", file.path(), 4, false), linesFeatures(3));
  EXPECT_EQ(*stream->vocabulary(), (std::vector<std::string>{"<unk>", "b", "a"}));
  EXPECT_EQ(allLines(*stream), (Lines{{{1, 2, 1, 0}, 0.0f}, {{2, 0, 1}, 1.0f}}));

  StreamOptions options = streamOptions("text", file.path(), 4, false);
  options.textMinCount = 3;
  stream = openStream(options, linesFeatures());
  EXPECT_EQ(*stream->vocabulary(), (std::vector<std::string>{"<unk>", "b"}));
}

TEST(TextLinesReader, EvaluationReadsThroughTheTrainingVocabulary) {
  TempFile train("0\tx y\n1\ty z\n");
  auto trainStream =
      openStream(streamOptions("text", train.path(), 2, true), linesFeatures());
  TempFile eval("2\tz w y\n");
  StreamOptions options = streamOptions("text", eval.path(), 2, false);
  options.textVocabulary =
      std::make_shared<const std::vector<std::string>>(*trainStream->vocabulary());
  auto stream = openStream(options, linesFeatures());
  EXPECT_EQ(*stream->vocabulary(), *trainStream->vocabulary());
  EXPECT_EQ(allLines(*stream), (Lines{{{3, 0, 1}, 2.0f}})); // y x z: ids 1 2 3; w unknown
}

TEST(TextLinesReader, TextWithoutALabel) {
  TempFile file("the cat\nthe dog sat\n");
  auto stream = openStream(streamOptions("text", file.path(), 2, false),
                           {sparseFeature("tokens", 0, 8)});
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.features[0].ids, (std::vector<int64_t>{1, 2, 1, 3, 4}));
  EXPECT_EQ(batch.features[0].offsets, (std::vector<int64_t>{0, 2, 5}));
}

TEST(TextLinesReader, MalformedLinesAndBindingsAreNamed) {
  TempFile noTab("1\tfine line\nno label here\n");
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("text", noTab.path(), 2, true), linesFeatures());
            }),
            noTab.path() + ":2: expected 'label<TAB>text' (line: \"no label here\")");
  TempFile badClass("3\tx\n");
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("text", badClass.path(), 2, true), linesFeatures());
            }),
            badClass.path() + ":1: a class label is an integer in [0, 3), got 3 (line: \"3\")");
  TempFile badBinary("0.5\tx\n");
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("text", badBinary.path(), 2, true),
                         {sparseFeature("tokens", 0, 4), labelFeature("label", "binary")});
            }),
            badBinary.path() + ":1: a binary label is 0 or 1, got 0.5 (line: \"0.5\")");
  TempFile empty(" \n\t\n");
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("text", empty.path(), 2, true), linesFeatures());
            }),
            empty.path() + ": no lines with words");

  TempFile file("1\ta b\n");
  const std::string where = "text data " + file.path();
  EXPECT_EQ(bindingErrorOf("text", file.path(), denseFeature("tokens", 4)),
            "feature 'tokens' is dense but column 'tokens' of " + where +
                " is the line's word ids (columns: tokens, label)");
  EXPECT_EQ(bindingErrorOf("text", file.path(), sparseFeature("tokens", 1, 4)),
            "feature 'tokens' has vocab 1: column 'tokens' needs 2 ids at least, the unknown "
            "word and one word");
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("text", file.path(), 2, true),
                         {sparseFeature("tokens", 0, 4), sparseFeature("center", 0)});
            }),
            "feature 'center' reads column 'center', which " + where +
                " does not have (columns: tokens, label)");
}
