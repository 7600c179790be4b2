//===- TextReaderTest.cpp - skip-gram pairs from plain text ---------------===//

#include "DataTestUtil.h"

#include <map>
#include <set>

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

std::vector<FeatureSpec> skipGramFeatures(int64_t vocab = 0, int64_t negatives = 0) {
  std::vector<FeatureSpec> features{sparseFeature("center", vocab),
                                    sparseFeature("context", vocab)};
  if (negatives)
    features.push_back(negativesFeature("negatives", negatives, vocab));
  return features;
}

/// Every (center, context) pair of one evaluation pass, in order.
std::vector<std::pair<int64_t, int64_t>> allPairs(BatchStream &stream) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  Batch batch;
  while (stream.next(batch))
    for (int64_t r = 0; r < batch.valid; ++r)
      pairs.emplace_back(batch.features[0].ids[r], batch.features[1].ids[r]);
  return pairs;
}

} // namespace

TEST(TextReader, VocabularyIsByCountThenFirstAppearance) {
  TempFile file("b a b c a b\nd c e\n");
  auto stream = openStream(streamOptions("text", file.path(), 8, false), skipGramFeatures());
  ASSERT_NE(stream->vocabulary(), nullptr);
  EXPECT_EQ(*stream->vocabulary(), (std::vector<std::string>{"b", "a", "c", "d", "e"}));
  Batch batch;
  ASSERT_TRUE(stream->next(batch));
  EXPECT_EQ(batch.features[0].ids[0], 0); // the first centre is "b"
}

TEST(TextReader, VocabularyIsCappedAndOtherWordsAreDropped) {
  // Capped at 2 words ("x" and "y"), "z" and "w" vanish, so the line reads
  // "x y x y": pairs only ever hold ids 0 and 1.
  TempFile file("x z y w x z y\n");
  auto stream =
      openStream(streamOptions("text", file.path(), 64, false), skipGramFeatures(2));
  EXPECT_EQ(*stream->vocabulary(), (std::vector<std::string>{"x", "z"}));
  auto pairs = allPairs(*stream);
  ASSERT_FALSE(pairs.empty());
  for (auto [center, context] : pairs) {
    EXPECT_LT(center, 2);
    EXPECT_LT(context, 2);
  }
  EXPECT_NE(stream->stats().description.find("vocabulary 2 (capped at 2), 3 out-of-vocabulary "
                                             "words dropped"),
            std::string::npos)
      << stream->stats().description;
}

TEST(TextReader, PairsComeFromShrinkingWindowsWithinLines) {
  // Every word is distinct, so a word's id is its position in the text (ids
  // by first appearance) and each pair shows the distance it spans.
  std::string line1, line2;
  for (int i = 0; i < 40; ++i)
    line1 += "a" + std::to_string(i) + " ";
  for (int i = 0; i < 12; ++i)
    line2 += "b" + std::to_string(i) + " ";
  TempFile file(line1 + "\n\n" + line2 + "\n");
  auto stream = openStream(streamOptions("text", file.path(), 32, false), skipGramFeatures());
  auto pairs = allPairs(*stream);
  EXPECT_EQ(pairs.size(), stream->examplesPerEpoch());
  std::map<int64_t, std::vector<int64_t>> contexts;
  int64_t previousCenter = -1;
  for (auto [center, context] : pairs) {
    EXPECT_GE(center, previousCenter); // evaluation: centre by centre
    previousCenter = center;
    contexts[center].push_back(context);
  }
  std::set<int64_t> windows;
  for (int64_t center = 0; center < 52; ++center) {
    int64_t lineBegin = center < 40 ? 0 : 40, lineEnd = center < 40 ? 40 : 52;
    ASSERT_TRUE(contexts.count(center)) << center;
    const std::vector<int64_t> &seen = contexts[center];
    // The window b is the largest distance on the side that is not clipped.
    int64_t b = 0;
    for (int64_t context : seen)
      b = std::max(b, std::abs(context - center));
    ASSERT_GE(b, 1);
    ASSERT_LE(b, 5);
    std::vector<int64_t> expected;
    for (int64_t context = std::max(lineBegin, center - b);
         context <= std::min(lineEnd - 1, center + b); ++context)
      if (context != center)
        expected.push_back(context);
    if (center - b > lineBegin && center + b < lineEnd - 1) {
      EXPECT_EQ(seen, expected) << "centre " << center;
      windows.insert(b);
    }
  }
  EXPECT_GE(windows.size(), 4u); // windows really shrink at random
}

TEST(TextReader, NegativesFollowUnigramPowerAndAvoidTheContext) {
  // "the" (34 times) is 4.25 times as frequent as each other word (8 times).
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += (i % 6 ? "w" : "the w") + std::to_string(i % 25) + " ";
  TempFile file(text);
  auto stream =
      openStream(streamOptions("text", file.path(), 512, true), skipGramFeatures(0, 6));
  ASSERT_EQ(stream->vocabulary()->front(), "the");
  std::map<int64_t, int> drawn;
  Batch batch;
  for (int b = 0; b < 4; ++b) {
    ASSERT_TRUE(stream->next(batch));
    ASSERT_EQ(batch.features[2].negatives.size(), 512u * 6);
    for (int64_t r = 0; r < 512; ++r)
      for (int j = 0; j < 6; ++j) {
        int64_t id = batch.features[2].negatives[r * 6 + j];
        ASSERT_GE(id, 0);
        ASSERT_LT(id, 26);
        ASSERT_NE(id, batch.features[1].ids[r]);
        ++drawn[id];
      }
  }
  // P(the) / P(other) = 4.25^0.75 = 2.96, a little less after "the" is
  // excluded where it is the context (1 pair in 7).
  double ratio = drawn[0] / (static_cast<double>(512 * 4 * 6 - drawn[0]) / 25);
  EXPECT_GT(ratio, 2.2);
  EXPECT_LT(ratio, 3.1);
}

TEST(TextReader, ParallelReadingGivesTheSameStream) {
  std::string text;
  for (int line = 0; line < 300; ++line) {
    for (int w = 0; w < 1 + line % 9; ++w)
      text += "w" + std::to_string((line * 7 + w * 13) % 97) + (w % 4 ? " " : "  \t");
    text += line % 5 ? "\n" : "\r\n\n";
  }
  TempFile file(text);
  std::vector<Batch> batches[2];
  int threads[2] = {1, 4};
  for (int i = 0; i < 2; ++i) {
    auto stream = openStream(streamOptions("text", file.path(), 100, false, 3, threads[i]),
                             skipGramFeatures(50, 3));
    batches[i] = takeBatches(*stream, 1000);
  }
  EXPECT_GT(batches[0].size(), 10u);
  EXPECT_TRUE(sameBatches(batches[0], batches[1]));
}

TEST(TextReader, RefusesTextWithoutPairsAndBadBindings) {
  TempFile single("one\ntwo\nthree\n");
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("text", single.path(), 8, true), skipGramFeatures());
            }),
            single.path() + ": no (center, context) pairs: no line has two in-vocabulary words");
  TempFile blank(" \n\t\n");
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("text", blank.path(), 8, true), skipGramFeatures());
            }),
            blank.path() + ": no words (the file is only whitespace)");

  TempFile file("a b c\n");
  auto bindingError = [&](FeatureSpec spec) {
    return dataErrorOf([&] { openStream(streamOptions("text", file.path(), 8, true), {spec}); });
  };
  std::string where = "text data " + file.path();
  EXPECT_EQ(bindingError(labelFeature("label", "binary")),
            "feature 'label' reads column 'label', which " + where +
                " does not have (columns: center, context, negatives)");
  EXPECT_EQ(bindingError(denseFeature("center", 4)),
            "feature 'center' is dense but column 'center' of " + where +
                " is sparse (1 id per example) (columns: center, context, negatives)");
  EXPECT_EQ(bindingError(sparseFeature("negatives", 10)),
            "feature 'negatives' is sparse but column 'negatives' of " + where +
                " is negatives (sampled ids) (columns: center, context, negatives)");
}
