//===- LengthBucketsTest.cpp - batches of alike sequence lengths ----------===//
//
// StreamOptions::lengthBuckets (LengthBuckets.h): an epoch still visits
// every example once, a batch's sequences are alike in length, the order is
// a pure function of the position (so a stream resumed mid-epoch, on any
// thread count, continues it exactly), and data it cannot bucket is refused.
// Text lines and data read through a schema (a bag column) both bucket.
//
//===----------------------------------------------------------------------===//

#include "DataTestUtil.h"

#include "embc/runtime/data/Schema.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

constexpr int64_t kLines = 203, kBatch = 8, kHotness = 20;

/// Line i: a word of its own, then i % 17 more: lengths 1 .. 17.
std::string lines() {
  std::ostringstream text;
  for (int64_t i = 0; i < kLines; ++i) {
    text << "line" << i;
    for (int64_t w = 0; w < i % 17; ++w)
      text << " w" << w;
    text << "\n";
  }
  return text.str();
}

StreamOptions bucketed(const std::string &path, int64_t buckets, int threads = 1) {
  StreamOptions o = streamOptions("text", path, kBatch, /*training=*/true, /*seed=*/11, threads);
  o.lengthBuckets = buckets;
  return o;
}

std::vector<FeatureSpec> tokens() { return {sparseFeature("tokens", 0, kHotness)}; }

/// Per batch: its examples' first ids (the line's own word) and lengths.
struct Rows {
  std::vector<int64_t> first, length;
};
std::vector<Rows> rowsOf(const std::vector<Batch> &batches) {
  std::vector<Rows> out;
  for (const Batch &b : batches) {
    const FeatureBatch &f = b.features[0];
    Rows rows;
    for (size_t r = 0; r + 1 < f.offsets.size(); ++r) {
      rows.first.push_back(f.ids[size_t(f.offsets[r])]);
      rows.length.push_back(f.offsets[r + 1] - f.offsets[r]);
    }
    out.push_back(rows);
  }
  return out;
}

double meanSpread(const std::vector<Rows> &batches) {
  double sum = 0;
  for (const Rows &b : batches)
    sum += double(*std::max_element(b.length.begin(), b.length.end()) -
                  *std::min_element(b.length.begin(), b.length.end()));
  return sum / double(batches.size());
}

} // namespace

TEST(LengthBuckets, AnEpochVisitsEveryExampleOnceInBatchesOfAlikeLengths) {
  TempFile file(lines());
  // 25 whole batches of the first epoch (the 26th holds its last 3 lines).
  auto stream = openStream(bucketed(file.path(), 5), tokens());
  const std::vector<Rows> batches = rowsOf(takeBatches(*stream, kLines / kBatch));
  std::set<int64_t> seen;
  for (const Rows &b : batches)
    seen.insert(b.first.begin(), b.first.end());
  EXPECT_EQ(seen.size(), size_t(kLines / kBatch * kBatch)) << "an example came twice";
  auto plain = openStream(bucketed(file.path(), 0), tokens());
  const double spread = meanSpread(batches),
               plainSpread = meanSpread(rowsOf(takeBatches(*plain, kLines / kBatch)));
  EXPECT_LT(spread, 5.0);
  EXPECT_GT(plainSpread, 10.0);
  // The batches of a window come in a shuffled order, not shortest first.
  std::vector<int64_t> shortest;
  for (size_t b = 0; b < 5; ++b)
    shortest.push_back(*std::min_element(batches[b].length.begin(), batches[b].length.end()));
  EXPECT_FALSE(std::is_sorted(shortest.begin(), shortest.end()));
}

TEST(LengthBuckets, AResumedStreamContinuesTheOrderExactly) {
  TempFile file(lines());
  // Into the second epoch (203 lines: its batches straddle windows).
  auto whole = openStream(bucketed(file.path(), 5), tokens());
  const std::vector<Batch> all = takeBatches(*whole, 40);
  for (uint64_t at : {3u, 12u, 27u}) {
    SCOPED_TRACE("resumed at batch " + std::to_string(at));
    auto resumed = openStream(bucketed(file.path(), 5, /*threads=*/3), tokens(), at * kBatch);
    EXPECT_TRUE(sameBatches(takeBatches(*resumed, 40 - at),
                            std::vector<Batch>(all.begin() + long(at), all.end())));
  }
}

TEST(LengthBuckets, RefusesDataItCannotBucket) {
  TempFile file(lines());
  StreamOptions fileOrder = bucketed(file.path(), 4);
  fileOrder.shuffle = false;
  EXPECT_NE(dataErrorOf([&] { openStream(fileOrder, tokens()); })
                .find("--no-shuffle reads it in file order"),
            std::string::npos);
  TempFile labelled("1\ta b\n0\tc\n");
  FeatureSpec label = labelFeature("label", "binary");
  EXPECT_NE(dataErrorOf([&] { openStream(bucketed(labelled.path(), 4), {label}); })
                .find("needs a sequence feature"),
            std::string::npos);
  StreamOptions synthetic = bucketed("", 4);
  synthetic.kind = "synthetic";
  EXPECT_NE(dataErrorOf([&] { openStream(synthetic, {sparseFeature("s", 100, 4)}); })
                .find("generated data has no epochs"),
            std::string::npos);
}

TEST(LengthBuckets, SchemaDataBucketsByItsLongestBag) {
  // The same lengths as lines(), as a CSV column of space-separated ids
  // (a token sequence), read through a data schema held in memory.
  std::ostringstream csv;
  for (int64_t i = 0; i < kLines; ++i) {
    csv << i % 2 << "," << i;
    for (int64_t w = 0; w < i % 17; ++w)
      csv << " " << 1000 + w;
    csv << "\n";
  }
  TempFile file(csv.str());
  auto open = [&](int64_t buckets) {
    StreamOptions o = bucketed(file.path(), buckets);
    o.kind = "schema";
    o.schema = std::make_shared<DataSchema>(parseDataSchema(nlohmann::json::parse(R"({
        "format": "csv", "columns": [
          {"name": "label", "type": "label", "field": 0},
          {"name": "tokens", "type": "categorical", "field": 1, "separator": " "}]})"),
                                                            "/data"));
    return openStream(o, {sparseFeature("tokens", 0, kHotness), labelFeature("label", "binary")});
  };
  const std::vector<Rows> batches = rowsOf(takeBatches(*open(5), kLines / kBatch));
  std::set<int64_t> seen;
  for (const Rows &b : batches)
    seen.insert(b.first.begin(), b.first.end());
  EXPECT_EQ(seen.size(), size_t(kLines / kBatch * kBatch)) << "an example came twice";
  EXPECT_LT(meanSpread(batches), 5.0);
  EXPECT_GT(meanSpread(rowsOf(takeBatches(*open(0), kLines / kBatch))), 10.0);
}
