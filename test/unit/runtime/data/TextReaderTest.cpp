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
  auto bindingError = [&](const FeatureSpec &spec) {
    return bindingErrorOf("text", file.path(), spec);
  };
  std::string where = "text data " + file.path();
  EXPECT_EQ(bindingError(denseFeature("word", 4)),
            "feature 'word' reads column 'word', which " + where +
                " does not have (columns: center, context, negatives)");
  EXPECT_EQ(bindingError(denseFeature("center", 4)),
            "feature 'center' is dense but column 'center' of " + where +
                " is sparse (1 id per example) (columns: center, context, negatives)");
  EXPECT_EQ(bindingError(sparseFeature("negatives", 10)),
            "feature 'negatives' is sparse but column 'negatives' of " + where +
                " is negatives (sampled ids) (columns: center, context, negatives)");
}

TEST(TextReader, EveryPairIsFoundInLongTexts) {
  // 3000 distinct words (id = position) over lines of 1 to 17 words, one-word
  // lines giving centres without pairs: pair k of the evaluation pass must be
  // the k-th pair of the centre-by-centre enumeration (the pair index looks
  // centres up by blocks of 64 pairs), for windows up to 5 and up to 40.
  std::string text;
  std::vector<std::pair<int64_t, int64_t>> lines; // [begin, end) in words
  for (int64_t word = 0, length = 1; word < 3000; length = length % 17 + 1) {
    const int64_t end = std::min<int64_t>(3000, word + length);
    lines.emplace_back(word, end);
    for (; word < end; ++word)
      text += "w" + std::to_string(word) + " ";
    text += "\n";
  }
  TempFile file(text);
  for (int window : {5, 40}) {
    StreamOptions options = streamOptions("text", file.path(), 100, false);
    options.textWindow = window;
    auto stream = openStream(options, skipGramFeatures());
    auto pairs = allPairs(*stream);
    ASSERT_EQ(pairs.size(), stream->examplesPerEpoch());
    size_t k = 0;
    for (auto [begin, end] : lines)
      for (int64_t center = begin; center < end; ++center) {
        // The window b of this centre: the largest distance it reaches.
        int64_t b = 0;
        for (size_t j = k; j < pairs.size() && pairs[j].first == center; ++j)
          b = std::max(b, std::abs(pairs[j].second - center));
        if (end - begin == 1) {
          EXPECT_EQ(b, 0) << "a one-word line has no pairs";
          continue;
        }
        ASSERT_GE(b, 1) << "centre " << center;
        ASSERT_LE(b, window);
        for (int64_t context = std::max(begin, center - b);
             context <= std::min(end - 1, center + b); ++context)
          if (context != center) {
            ASSERT_LT(k, pairs.size());
            ASSERT_EQ(pairs[k], std::make_pair(center, context)) << "pair " << k;
            ++k;
          }
      }
    EXPECT_EQ(k, pairs.size()) << "window " << window;
  }
}

TEST(TextReader, MinCountDropsRareWords) {
  TempFile file("a b a c a b d\nb a e a\n");
  StreamOptions options = streamOptions("text", file.path(), 8, false);
  options.textMinCount = 2;
  auto stream = openStream(options, skipGramFeatures());
  EXPECT_EQ(*stream->vocabulary(), (std::vector<std::string>{"a", "b"}));
  for (auto [center, context] : allPairs(*stream)) {
    EXPECT_LT(center, 2);
    EXPECT_LT(context, 2);
  }
  EXPECT_NE(stream->stats().description.find("min count 2, 3 out-of-vocabulary words dropped"),
            std::string::npos)
      << stream->stats().description;
  options.textMinCount = 6;
  EXPECT_EQ(dataErrorOf([&] { openStream(options, skipGramFeatures()); }),
            file.path() + ": no word occurs at least 6 times (the text minimum count)");
  options.textMinCount = 0;
  EXPECT_EQ(dataErrorOf([&] { openStream(options, skipGramFeatures()); }),
            "data: the text minimum count must be at least 1, got 0");
}

TEST(TextReader, SubsamplingThinsFrequentWordsOnly) {
  // "the" is half of the 4000 words; the 2000 others occur once each. With
  // sample 1e-3, an occurrence of "the" stays with probability
  // (sqrt(0.5 / 1e-3) + 1) * 1e-3 / 0.5 = 0.0467, the rare words always.
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += "the r" + std::to_string(i) + " ";
  TempFile file(text + "\n");
  auto centres = [&](uint64_t seed, double sample) {
    StreamOptions options = streamOptions("text", file.path(), 64, false, seed);
    options.textSample = sample;
    auto stream = openStream(options, skipGramFeatures());
    // Evaluation pairs come centre by centre: count each centre's run once
    // (two kept "the" in a row would merge, but they are rare).
    std::map<int64_t, int> runs;
    int64_t previous = -1;
    for (auto [center, context] : allPairs(*stream)) {
      if (center != previous)
        ++runs[center == 0 ? 0 : 1];
      previous = center;
    }
    return std::make_pair(runs[0], runs[1]);
  };
  auto [theKept, rareKept] = centres(7, 1e-3);
  EXPECT_EQ(rareKept, 2000);
  EXPECT_GT(theKept, 93 - 40); // mean 93.4, sd 9.4
  EXPECT_LT(theKept, 93 + 40);
  EXPECT_EQ(centres(7, 1e-3), std::make_pair(theKept, rareKept)) << "same seed, same subsample";
  EXPECT_EQ(centres(7, 0), std::make_pair(2000, 2000)) << "0: no subsampling";

  StreamOptions bad = streamOptions("text", file.path(), 64, false);
  bad.textSample = -0.1;
  EXPECT_EQ(dataErrorOf([&] { openStream(bad, skipGramFeatures()); }),
            "data: the text subsampling threshold must be in [0, 1), got -0.100000");
}

TEST(TextReader, AGivenVocabularyKeepsItsIds) {
  // An evaluation reads with the training data's vocabulary: "a" is id 2 and
  // "b" id 0 whatever this file's counts, "c" is not in it and is dropped,
  // "x" is in it but not in the file.
  TempFile file("a b c a b a\n");
  StreamOptions options = streamOptions("text", file.path(), 8, false);
  options.textVocabulary =
      std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"b", "x", "a"});
  options.textMinCount = 5; // does not apply to a given vocabulary
  auto stream = openStream(options, skipGramFeatures(3, 2));
  EXPECT_EQ(*stream->vocabulary(), *options.textVocabulary);
  auto pairs = allPairs(*stream);
  ASSERT_FALSE(pairs.empty());
  for (auto [center, context] : pairs) {
    EXPECT_TRUE(center == 0 || center == 2) << center;
    EXPECT_TRUE(context == 0 || context == 2) << context;
  }
  EXPECT_EQ(pairs.front(), std::make_pair(int64_t(2), int64_t(0))); // "a" then "b"
  EXPECT_NE(stream->stats().description.find("vocabulary 3 (the training data's)"),
            std::string::npos)
      << stream->stats().description;
  // Negatives come only from words this file has (x has count 0).
  Batch batch;
  auto again = openStream(options, skipGramFeatures(3, 2));
  while (again->next(batch))
    for (int64_t id : batch.features[2].negatives)
      EXPECT_NE(id, 1);
}
