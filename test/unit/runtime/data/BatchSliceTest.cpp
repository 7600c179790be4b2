//===- BatchSliceTest.cpp - micro-batches of a batch -------------------------===//

#include "embc/runtime/data/BatchSlice.h"
#include "embc/runtime/cpu/Parallel.h"

#include <gtest/gtest.h>

using namespace embc::runtime::data;

namespace {

/// Four examples: dense width 2, a jagged sparse feature with weights,
/// two negatives each, and a label; the last example is padding.
Batch fourExamples() {
  Batch b;
  b.size = 4;
  b.valid = 3;
  b.position = 40;
  FeatureBatch dense, sparse, negatives, label;
  dense.dense = {0, 1, 10, 11, 20, 21, 30, 31};
  sparse.offsets = {0, 2, 2, 5, 6};
  sparse.ids = {7, 8, 9, 10, 11, 12};
  sparse.weights = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  negatives.negatives = {1, 2, 3, 4, 5, 6, 7, 8};
  label.label = {1, 0, 1, 0};
  b.features = {dense, sparse, negatives, label};
  return b;
}

/// Every column of every feature of `joined` equals `whole`'s.
void expectSameFeatures(const Batch &joined, const Batch &whole) {
  ASSERT_EQ(joined.features.size(), whole.features.size());
  for (size_t f = 0; f < whole.features.size(); ++f) {
    const FeatureBatch &a = joined.features[f], &b = whole.features[f];
    EXPECT_EQ(a.dense, b.dense) << "feature " << f;
    EXPECT_EQ(a.offsets, b.offsets) << "feature " << f;
    EXPECT_EQ(a.ids, b.ids) << "feature " << f;
    EXPECT_EQ(a.weights, b.weights) << "feature " << f;
    EXPECT_EQ(a.negatives, b.negatives) << "feature " << f;
    EXPECT_EQ(a.label, b.label) << "feature " << f;
  }
}

TEST(BatchSlice, RowsAndJaggedBagsAreCutAndRebased) {
  Batch part;
  sliceBatch(fourExamples(), 1, 2, part);
  EXPECT_EQ(part.size, 2);
  EXPECT_EQ(part.valid, 2);
  EXPECT_EQ(part.position, 40u);
  EXPECT_EQ(part.features[0].dense, (std::vector<float>{10, 11, 20, 21}));
  EXPECT_EQ(part.features[1].offsets, (std::vector<int64_t>{0, 0, 3}));
  EXPECT_EQ(part.features[1].ids, (std::vector<int64_t>{9, 10, 11}));
  EXPECT_EQ(part.features[1].weights, (std::vector<float>{2.5f, 3.5f, 4.5f}));
  EXPECT_EQ(part.features[2].negatives, (std::vector<int64_t>{3, 4, 5, 6}));
  EXPECT_EQ(part.features[3].label, (std::vector<float>{0, 1}));
}

TEST(BatchSlice, SplitCoversTheBatchInOrderAndCountsPadding) {
  Batch whole = fourExamples();
  std::vector<Batch> parts;
  splitBatch(whole, 2, parts);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].valid, 2);
  EXPECT_EQ(parts[1].valid, 1); // the padding row stays padding
  std::vector<int64_t> ids;
  std::vector<float> labels;
  for (const Batch &p : parts) {
    ids.insert(ids.end(), p.features[1].ids.begin(), p.features[1].ids.end());
    labels.insert(labels.end(), p.features[3].label.begin(), p.features[3].label.end());
  }
  EXPECT_EQ(ids, whole.features[1].ids);
  EXPECT_EQ(labels, whole.features[3].label);
  splitBatch(whole, 4, parts);
  EXPECT_EQ(parts[3].valid, 0);
  EXPECT_EQ(parts[2].features[1].offsets, (std::vector<int64_t>{0, 3}));
}

TEST(BatchSlice, JoiningTheSlicesGivesTheBatchBack) {
  const Batch whole = fourExamples();
  for (std::vector<int64_t> cuts : {std::vector<int64_t>{0, 1, 4}, {0, 3, 4}, {0, 2, 3, 4}}) {
    std::vector<Batch> parts(cuts.size() - 1);
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      sliceBatch(whole, cuts[i], cuts[i + 1] - cuts[i], parts[i]);
    Batch joined;
    joined.features.resize(1); // stale storage must be replaced, not appended to
    joined.features[0].ids = {99};
    joinBatches(parts, joined);
    EXPECT_EQ(joined.size, 4);
    expectSameFeatures(joined, whole);
  }
}

// A batch of several MB is joined on the CPU team, each (feature, part) pair a
// task: the result must not depend on that, nor on what `out` held before.
TEST(BatchSlice, ALargeJoinOnTheTeamEqualsTheSerialOne) {
  Batch whole;
  whole.size = 1 << 16;
  whole.features.resize(3);
  FeatureBatch &dense = whole.features[0], &bags = whole.features[1], &label = whole.features[2];
  bags.offsets.push_back(0);
  for (int64_t r = 0; r < whole.size; ++r) {
    dense.dense.push_back(float(r)), dense.dense.push_back(float(-r));
    for (int64_t k = 0; k < (r * 7) % 5; ++k) // bags of 0 to 4 ids
      bags.ids.push_back(r * 10 + k), bags.weights.push_back(float(k));
    bags.offsets.push_back(int64_t(bags.ids.size()));
    label.label.push_back(float(r % 2));
  }
  std::vector<Batch> parts(7);
  const int64_t cuts[] = {0, 1, 999, 20000, 20001, 40000, 65000, 1 << 16};
  for (size_t i = 0; i < parts.size(); ++i)
    sliceBatch(whole, cuts[i], cuts[i + 1] - cuts[i], parts[i]);
  embc::runtime::cpu::setTeamSize(4);
  Batch joined = whole; // stale storage of the same sizes, then of others
  for (FeatureBatch &f : joined.features)
    std::fill(f.ids.begin(), f.ids.end(), -1), std::fill(f.offsets.begin(), f.offsets.end(), -1);
  for (int round = 0; round < 2; ++round) {
    joinBatches(parts, joined);
    EXPECT_EQ(joined.size, whole.size);
    expectSameFeatures(joined, whole);
    joined.features[1].ids.resize(3); // a smaller stale batch next
  }
  embc::runtime::cpu::setTeamSize(0);
}

TEST(BatchSlice, RejectsCountsThatDoNotDivideAndRangesOutside) {
  std::vector<Batch> parts;
  EXPECT_THROW(splitBatch(fourExamples(), 3, parts), DataError);
  Batch part;
  EXPECT_THROW(sliceBatch(fourExamples(), 3, 2, part), DataError);
}

} // namespace
