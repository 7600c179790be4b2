//===- StreamTest.cpp - determinism, resume, epochs, padding, prefetch ----===//
//
// Properties every stream has whatever its reader: the same arguments give
// the same batches, a stream opened at a position continues an uninterrupted
// one exactly (also across an epoch boundary), training epochs visit every
// example once in a fresh order, evaluation pads its last batch, and the
// thread count never changes a batch.
//
//===----------------------------------------------------------------------===//

#include "DataTestUtil.h"

#include "embc/runtime/cpu/Parallel.h"

#include <algorithm>
#include <cstdio>
#include <set>

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

/// Ten criteo lines whose C1 id is the line number (1..10).
std::string tenCriteoLines() {
  std::string content;
  for (int line = 1; line <= 10; ++line) {
    content += line % 2 ? "1" : "0";
    for (int i = 0; i < 13; ++i)
      content += "\t" + std::to_string(line * i);
    char hex[16];
    std::snprintf(hex, sizeof hex, "\t%x", line);
    content += hex;
    for (int c = 1; c < 26; ++c)
      content += "\tabc";
    content += "\n";
  }
  return content;
}

std::vector<FeatureSpec> criteoFeatures() {
  return {labelFeature("label", "binary"), denseFeature("dense", 13), sparseFeature("C1", 0),
          sparseFeature("C2", 0)};
}

/// A small text: about 40 pairs per epoch.
const char *kSmallText = "the quick brown fox jumps over the lazy dog\nand the dog sleeps\n";

std::vector<FeatureSpec> textFeatures() {
  return {sparseFeature("center", 0), sparseFeature("context", 0),
          negativesFeature("negatives", 3)};
}

std::vector<FeatureSpec> syntheticFeatures() {
  return {denseFeature("dense", 3), sparseFeature("cat", 1000, 2),
          negativesFeature("negatives", 2, 1000), labelFeature("label", "binary")};
}

/// The C1 ids (one per row, the line number) of each batch's valid rows.
std::vector<int64_t> lineNumbers(const std::vector<Batch> &batches) {
  std::vector<int64_t> lines;
  for (const Batch &batch : batches)
    for (int64_t r = 0; r < batch.valid; ++r)
      lines.push_back(batch.features[2].ids[r]);
  return lines;
}

struct Source {
  std::string kind;
  std::string content; ///< file content; empty for synthetic
  std::vector<FeatureSpec> features;
};

std::vector<Source> allSources() {
  return {{"synthetic", "", syntheticFeatures()},
          {"criteo", tenCriteoLines(), criteoFeatures()},
          {"text", kSmallText, textFeatures()}};
}

} // namespace

TEST(Stream, SameSeedSameBatchesOtherSeedOthers) {
  for (const Source &source : allSources()) {
    TempFile file(source.content);
    std::string path = source.kind == "synthetic" ? "" : file.path();
    auto a = openStream(streamOptions(source.kind, path, 8, true, 1), source.features);
    auto b = openStream(streamOptions(source.kind, path, 8, true, 1), source.features);
    auto c = openStream(streamOptions(source.kind, path, 8, true, 2), source.features);
    std::vector<Batch> first = takeBatches(*a, 6);
    EXPECT_TRUE(sameBatches(first, takeBatches(*b, 6))) << source.kind;
    EXPECT_FALSE(sameBatches(first, takeBatches(*c, 6))) << source.kind;
  }
}

TEST(Stream, ResumeContinuesTheUninterruptedStreamAcrossEpochs) {
  // Batches of 8: the criteo epoch (10 examples) ends inside batch 1, the
  // text epoch (about 40 pairs) inside batch 4 or 5.
  for (const Source &source : allSources()) {
    TempFile file(source.content);
    std::string path = source.kind == "synthetic" ? "" : file.path();
    auto whole = openStream(streamOptions(source.kind, path, 8, true, 5), source.features);
    std::vector<Batch> expected = takeBatches(*whole, 12);
    ASSERT_EQ(expected.size(), 12u);
    if (source.kind != "synthetic") { // the batches cross at least one epoch end
      EXPECT_LT(whole->examplesPerEpoch(), 8u * 12) << source.kind;
    }
    for (size_t resumeAt : {1, 4, 5, 9}) {
      auto resumed = openStream(streamOptions(source.kind, path, 8, true, 5, 2),
                                source.features, expected[resumeAt - 1].position);
      std::vector<Batch> tail(expected.begin() + resumeAt, expected.end());
      EXPECT_TRUE(sameBatches(takeBatches(*resumed, tail.size()), tail))
          << source.kind << " resumed after batch " << resumeAt;
    }
  }
}

TEST(Stream, ResumeAtAnyExampleContinuesTheSameExampleSequence) {
  TempFile file(tenCriteoLines());
  auto whole = openStream(streamOptions("criteo", file.path(), 4, true), criteoFeatures());
  std::vector<int64_t> lines = lineNumbers(takeBatches(*whole, 10));
  auto resumed =
      openStream(streamOptions("criteo", file.path(), 4, true), criteoFeatures(), 13);
  std::vector<Batch> batches = takeBatches(*resumed, 5);
  EXPECT_EQ(batches.front().position, 17u);
  EXPECT_EQ(lineNumbers(batches), std::vector<int64_t>(lines.begin() + 13, lines.begin() + 33));
}

TEST(Stream, TrainingEpochsVisitEveryExampleOnceInFreshOrders) {
  TempFile file(tenCriteoLines());
  auto stream = openStream(streamOptions("criteo", file.path(), 4, true), criteoFeatures());
  EXPECT_EQ(stream->examplesPerEpoch(), 10u);
  std::vector<Batch> batches = takeBatches(*stream, 10); // 4 epochs
  EXPECT_EQ(batches.back().position, 40u);
  for (const Batch &batch : batches)
    EXPECT_EQ(batch.valid, 4);
  std::vector<int64_t> lines = lineNumbers(batches);
  std::set<std::vector<int64_t>> orders;
  for (int epoch = 0; epoch < 4; ++epoch) {
    std::vector<int64_t> order(lines.begin() + epoch * 10, lines.begin() + epoch * 10 + 10);
    orders.insert(order);
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  }
  EXPECT_EQ(orders.size(), 4u);

  // A batch larger than the epoch spans several epochs.
  auto wide = openStream(streamOptions("criteo", file.path(), 25, true), criteoFeatures());
  std::vector<int64_t> wideLines = lineNumbers(takeBatches(*wide, 1));
  ASSERT_EQ(wideLines.size(), 25u);
  EXPECT_TRUE(std::equal(wideLines.begin(), wideLines.end(), lines.begin()));
}

// --shuffle buffer:N: each window of N lines in its own fresh order, every
// line once an epoch, resumable at any position like the whole-epoch order.
TEST(Stream, AShuffleWindowKeepsEachLineInItsWindow) {
  TempFile file(tenCriteoLines());
  StreamOptions options = streamOptions("criteo", file.path(), 5, true);
  options.shuffleWindow = 4; // windows: lines 1-4, 5-8, 9-10
  auto stream = openStream(options, criteoFeatures());
  std::vector<int64_t> lines = lineNumbers(takeBatches(*stream, 8)); // 4 epochs
  std::set<std::vector<int64_t>> orders;
  for (int epoch = 0; epoch < 4; ++epoch) {
    std::vector<int64_t> order(lines.begin() + epoch * 10, lines.begin() + epoch * 10 + 10);
    for (int place = 0; place < 10; ++place)
      EXPECT_EQ((order[size_t(place)] - 1) / 4, place / 4) << "epoch " << epoch;
    orders.insert(order);
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  }
  EXPECT_GT(orders.size(), 1u);
  // Resumed at example 13 (epoch 1, inside the first window).
  auto resumed = openStream(options, criteoFeatures(), 13);
  std::vector<int64_t> rest = lineNumbers(takeBatches(*resumed, 3));
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), lines.begin() + 13));
  // Length buckets sort windows of a whole-epoch order: refused with it.
  options.lengthBuckets = 4;
  EXPECT_NE(dataErrorOf([&] { openStream(options, criteoFeatures()); })
                .find("--shuffle buffer:N keeps it near file order"),
            std::string::npos);
}

TEST(Stream, EvaluationIsOnePassInFileOrderWithThePaddedLastBatch) {
  TempFile file(tenCriteoLines());
  auto stream = openStream(streamOptions("criteo", file.path(), 4, false), criteoFeatures());
  std::vector<Batch> batches = takeBatches(*stream, 10);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].valid, 4);
  EXPECT_EQ(batches[2].size, 4);
  EXPECT_EQ(batches[2].valid, 2);
  EXPECT_EQ(batches[2].position, 10u);
  EXPECT_EQ(batches[2].features[2].ids, (std::vector<int64_t>{9, 10, 10, 10}));
  EXPECT_EQ(batches[2].features[0].label, (std::vector<float>{1, 0, 0, 0}));
  ASSERT_EQ(batches[2].features[1].dense.size(), 4u * 13);
  EXPECT_TRUE(std::equal(batches[2].features[1].dense.begin() + 13,
                         batches[2].features[1].dense.begin() + 26,
                         batches[2].features[1].dense.begin() + 39));
  EXPECT_EQ(lineNumbers(batches), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  Batch batch;
  EXPECT_FALSE(stream->next(batch));

  auto resumed =
      openStream(streamOptions("criteo", file.path(), 4, false), criteoFeatures(), 8);
  EXPECT_TRUE(sameBatches(takeBatches(*resumed, 10), {batches[2]}));
  auto finished =
      openStream(streamOptions("criteo", file.path(), 4, false), criteoFeatures(), 10);
  EXPECT_FALSE(finished->next(batch));
}

TEST(Stream, ThreadsAndPrefetchDoNotChangeBatches) {
  for (const Source &source : allSources()) {
    TempFile file(source.content);
    std::string path = source.kind == "synthetic" ? "" : file.path();
    for (bool training : {true, false}) {
      StreamOptions serial = streamOptions(source.kind, path, 7, training, 3, 1);
      serial.prefetch = 1;
      StreamOptions parallel = streamOptions(source.kind, path, 7, training, 3, 4);
      parallel.prefetch = 6;
      auto a = openStream(serial, source.features);
      auto b = openStream(parallel, source.features);
      std::vector<Batch> expected = takeBatches(*a, 30);
      EXPECT_TRUE(sameBatches(takeBatches(*b, 30), expected))
          << source.kind << (training ? " training" : " evaluation");
    }
  }
}

TEST(Stream, BatchesBuiltOnTheComputeTeamAreTheSame) {
  // The consumer builds a batch itself, in parts on the CPU team, when no
  // prefetch worker has started it (here: there are none): the parts joined
  // must be the batch one fill makes (team of 1: never in parts).
  const int saved = embc::runtime::cpu::teamSize();
  for (const Source &source : allSources()) {
    TempFile file(source.content);
    std::string path = source.kind == "synthetic" ? "" : file.path();
    StreamOptions options = streamOptions(source.kind, path, 300, true, 5, 1);
    options.prefetch = 0;
    embc::runtime::cpu::setTeamSize(1);
    std::vector<Batch> expected = takeBatches(*openStream(options, source.features), 12);
    embc::runtime::cpu::setTeamSize(3);
    std::vector<Batch> onTeam = takeBatches(*openStream(options, source.features), 12);
    EXPECT_TRUE(sameBatches(onTeam, expected)) << source.kind;
  }
  embc::runtime::cpu::setTeamSize(saved);
}

TEST(Stream, ReusedBatchesAreRefilledCompletely) {
  // next() hands back batches whose buffers are recycled: a reused batch must
  // not keep ids of an earlier one.
  auto stream = openStream(streamOptions("synthetic", "", 16, true, 1, 2), syntheticFeatures());
  auto fresh = openStream(streamOptions("synthetic", "", 16, true, 1, 2), syntheticFeatures());
  Batch reused;
  for (int i = 0; i < 10; ++i) {
    Batch expected;
    ASSERT_TRUE(stream->next(reused));
    ASSERT_TRUE(fresh->next(expected));
    EXPECT_TRUE(sameBatch(reused, expected)) << "batch " << i;
  }
}

TEST(Stream, RefusesBadOptionsAndFeatures) {
  std::vector<FeatureSpec> features{denseFeature("x", 1)};
  EXPECT_EQ(dataErrorOf([&] { openStream(streamOptions("synthetic", "", 0, true), features); }),
            "data: batch size must be at least 1, got 0");
  EXPECT_EQ(dataErrorOf([&] { openStream(streamOptions("parquet", "f", 8, true), features); }),
            "data: unknown kind 'parquet' (expected synthetic, criteo, movielens, mlperf_criteo, "
            "text, or a file read through the plan's data schema)");
  EXPECT_EQ(dataErrorOf([&] { openStream(streamOptions("criteo", "", 8, true), features); }),
            "data: kind 'criteo' needs a file path");
  StreamOptions badPrefetch = streamOptions("synthetic", "", 8, true);
  badPrefetch.prefetch = -1;
  EXPECT_EQ(dataErrorOf([&] { openStream(badPrefetch, features); }),
            "data: prefetch must be 0 (no prefetch threads) or more batches, got -1");
  auto featureError = [](FeatureSpec spec) {
    return dataErrorOf([&] { openStream(streamOptions("synthetic", "", 8, true), {spec}); });
  };
  EXPECT_EQ(featureError(denseFeature("x", 0)),
            "feature 'x': dense width must be at least 1, got 0");
  EXPECT_EQ(featureError(sparseFeature("s", 10, 0)),
            "feature 's': hotness must be at least 1, got 0");
  EXPECT_EQ(featureError(negativesFeature("n", 0)),
            "feature 'n': negatives count must be at least 1, got 0");
}
