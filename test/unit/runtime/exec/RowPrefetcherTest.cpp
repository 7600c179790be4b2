//===- RowPrefetcherTest.cpp - the pages a batch's disk rows occupy -------===//
//
// RowPrefetcher (runtime/lib/exec/RowPrefetcher.h): from a hand-built plan
// with a disk table read through a `hash` kernel, a disk table batch whose
// member a `fused_lookup` reads directly, and a device table, the pages of
// a batch are those of the right rows (hashed, at the member's row offset)
// in every per-row buffer (rows and optimizer state), each page once,
// adjacent pages joined, and none of the device table's.
//
//===----------------------------------------------------------------------===//

#include "RowPrefetcher.h"

#include "../PlanBuffers.h"
#include "embc/runtime/cpu/IdHash.h"

#include <gtest/gtest.h>

#include <set>

using namespace embc::runtime;
using embc::runtime::testing::addBuffer;
using embc::runtime::testing::addIdsInput;
using embc::runtime::testing::makeKernel;

namespace {

constexpr int64_t kPage = kDiskPageBytes;

data::FeatureSpec spec(const std::string &name, data::FeatureKind kind) {
  data::FeatureSpec s;
  s.name = name;
  s.kind = kind;
  return s;
}

/// The next buffer starts on a page, as a disk table's do.
void toPage(Plan &plan) { plan.arenaBytes = (plan.arenaBytes + kPage - 1) / kPage * kPage; }

/// A view of `rows` rows of `parent`'s at row `first` (a batch member's).
int32_t addView(Plan &plan, const std::string &name, int32_t parent, int64_t first, int64_t rows) {
  const Buffer &p = plan.buffers[size_t(parent)];
  Buffer view = p;
  view.name = name;
  view.parent = parent;
  const int64_t rowBytes = p.bytes / p.shape[0];
  view.shape[0] = rows;
  view.bytes = rows * rowBytes;
  view.offset = p.offset + first * rowBytes;
  plan.buffers.push_back(view);
  return int32_t(plan.buffers.size() - 1);
}

struct Fixture {
  Plan plan;
  std::vector<data::FeatureSpec> specs;
  int32_t hashedRows = -1, hashedState = -1; // table 0: 1000 x 8 f32, row-wise Adagrad
  int32_t batchRows = -1, batchM = -1, batchV = -1; // batch of tables 1, 2: 800 x 16 f32, Adam
  int32_t deviceRows = -1;                          // table 3: 64 x 4 f32, on the device
  static constexpr int64_t kBuckets = 1000, kSeed = 7, kOffset2 = 300;

  Fixture() {
    auto input = [&](const std::string &feature) { return addIdsInput(plan, feature, 256, 128); };
    auto [a, aOff] = input("a");
    auto [b, bOff] = input("b");
    auto [d, dOff] = input("d");
    const int32_t hashed = addBuffer(plan, "a.hashed", BufferRole::Activation, DType::I64, {256}, true);
    const int32_t ya = addBuffer(plan, "ya", BufferRole::Activation, DType::F32, {128, 8});
    const int32_t yb = addBuffer(plan, "yb", BufferRole::Activation, DType::F32, {128, 16});
    const int32_t yd = addBuffer(plan, "yd", BufferRole::Activation, DType::F32, {128, 4});

    auto table = [&](const std::string &name, int64_t rows, int64_t dim, int32_t buffer,
                     std::vector<int32_t> state, Placement placement) {
      Table t;
      t.name = name;
      t.rows = rows, t.dim = dim;
      t.buffer = buffer;
      t.state = std::move(state);
      t.placement = placement;
      plan.tables.push_back(t);
    };
    toPage(plan);
    hashedRows = addBuffer(plan, "t0", BufferRole::Table, DType::F32, {1000, 8});
    toPage(plan);
    hashedState = addBuffer(plan, "t0.acc", BufferRole::OptimizerState, DType::F32, {1000});
    table("t0", 1000, 8, hashedRows, {hashedState}, Placement::Disk);

    toPage(plan);
    batchRows = addBuffer(plan, "batch", BufferRole::Table, DType::F32, {800, 16});
    toPage(plan);
    batchM = addBuffer(plan, "batch.m", BufferRole::OptimizerState, DType::F32, {800, 16});
    toPage(plan);
    batchV = addBuffer(plan, "batch.v", BufferRole::OptimizerState, DType::F32, {800, 16});
    table("t1", 300, 16, addView(plan, "t1", batchRows, 0, 300),
          {addView(plan, "t1.m", batchM, 0, 300), addView(plan, "t1.v", batchV, 0, 300)},
          Placement::Disk);
    table("t2", 500, 16, addView(plan, "t2", batchRows, kOffset2, 500),
          {addView(plan, "t2.m", batchM, kOffset2, 500),
           addView(plan, "t2.v", batchV, kOffset2, 500)},
          Placement::Disk);
    TableBatch batch;
    batch.name = "batch";
    batch.rows = 800, batch.dim = 16;
    batch.buffer = batchRows;
    batch.state = {batchM, batchV};
    batch.members = {1, 2};
    batch.rowOffsets = {0, kOffset2};
    batch.placement = Placement::Disk;
    plan.tableBatches.push_back(batch);

    toPage(plan); // a disk buffer's last page is its own
    deviceRows = addBuffer(plan, "t3", BufferRole::Table, DType::F32, {64, 4});
    table("t3", 64, 4, deviceRows, {}, Placement::Device);

    plan.step.push_back(
        makeKernel("hash", {a}, {hashed}, {{"buckets", kBuckets}, {"seed", kSeed}}));
    plan.step.push_back(
        makeKernel("lookup", {hashed, aOff}, {ya}, {{"table", 0}, {"pooling", "sum"}}));
    nlohmann::json members = nlohmann::json::array();
    members.push_back({{"table", 3}, {"pooling", "sum"}, {"weighted", false}, {"hash", false}});
    members.push_back({{"table", 2}, {"pooling", "sum"}, {"weighted", false}, {"hash", false}});
    plan.step.push_back(
        makeKernel("fused_lookup", {d, dOff, b, bOff}, {yd, yb}, {{"members", members}}));

    // The batch's features in another order than the inputs'.
    specs = {spec("x", data::FeatureKind::Dense), spec("d", data::FeatureKind::Sparse),
             spec("b", data::FeatureKind::Sparse), spec("a", data::FeatureKind::Sparse),
             spec("label", data::FeatureKind::Label)};
  }

  /// A batch of one id a row of each sparse feature.
  data::Batch batch(const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                    const std::vector<int64_t> &d) const {
    data::Batch out;
    out.size = out.valid = int64_t(a.size());
    out.features.resize(specs.size());
    auto fill = [&](size_t index, const std::vector<int64_t> &ids) {
      out.features[index].ids = ids;
      for (size_t i = 0; i <= ids.size(); ++i)
        out.features[index].offsets.push_back(int64_t(i));
    };
    fill(1, d), fill(2, b), fill(3, a);
    return out;
  }

  int64_t offset(int32_t buffer) const { return plan.buffers[size_t(buffer)].offset; }
};

std::set<int64_t> pagesOf(const std::vector<RowPrefetcher::Range> &ranges) {
  std::set<int64_t> pages;
  for (const RowPrefetcher::Range &r : ranges)
    for (int64_t at = r.offset; at < r.offset + r.bytes; at += kPage)
      pages.insert(at / kPage);
  return pages;
}

} // namespace

TEST(RowPrefetcher, FindsTheDiskTablesFeaturesThroughHashKernelsAndFusedLookups) {
  Fixture f;
  RowPrefetcher p(f.plan, nullptr, f.specs);
  ASSERT_EQ(p.features().size(), 2u); // not d: its table is on the device
  const RowPrefetcher::Feature &a = p.features()[0];
  EXPECT_EQ(a.index, 3u);
  EXPECT_TRUE(a.hashed);
  EXPECT_EQ(a.buckets, Fixture::kBuckets);
  EXPECT_EQ(a.seed, uint64_t(Fixture::kSeed));
  EXPECT_EQ(a.rows, 1000);
  EXPECT_EQ(a.firstRow, 0);
  ASSERT_EQ(a.buffers.size(), 2u);
  EXPECT_EQ(a.buffers[0].offset, f.offset(f.hashedRows));
  EXPECT_EQ(a.buffers[0].rowBytes, 32);
  EXPECT_EQ(a.buffers[1].offset, f.offset(f.hashedState));
  EXPECT_EQ(a.buffers[1].rowBytes, 4);
  const RowPrefetcher::Feature &b = p.features()[1];
  EXPECT_EQ(b.index, 2u);
  EXPECT_FALSE(b.hashed);
  EXPECT_EQ(b.rows, 500);
  EXPECT_EQ(b.firstRow, Fixture::kOffset2);
  ASSERT_EQ(b.buffers.size(), 3u); // the batch's rows and both Adam moments
  EXPECT_EQ(b.buffers[0].offset, f.offset(f.batchRows));
  EXPECT_EQ(b.buffers[1].offset, f.offset(f.batchM));
  EXPECT_EQ(b.buffers[2].offset, f.offset(f.batchV));
  for (const RowPrefetcher::RowBuffer &buffer : b.buffers)
    EXPECT_EQ(buffer.rowBytes, 64);
}

TEST(RowPrefetcher, AdjacentRowsOfADirectMemberGiveOneRangeABuffer) {
  Fixture f;
  RowPrefetcher p(f.plan, nullptr, f.specs);
  // b's ids 0..127: batch rows 300..427, bytes 19200..27391 of each
  // 64-byte-row buffer: its pages 4, 5 and 6. a's bags are empty.
  std::vector<int64_t> b, d(128, 5);
  for (int64_t i = 0; i < 128; ++i)
    b.push_back(i);
  data::Batch batch = f.batch(std::vector<int64_t>(128, 0), b, d);
  batch.features[3].ids.clear();
  batch.features[3].offsets.assign(129, 0);
  const std::vector<RowPrefetcher::Range> ranges = p.ranges(batch);
  const std::vector<RowPrefetcher::Range> expected = {
      {f.offset(f.batchRows) + 4 * kPage, 3 * kPage},
      {f.offset(f.batchM) + 4 * kPage, 3 * kPage},
      {f.offset(f.batchV) + 4 * kPage, 3 * kPage}};
  EXPECT_EQ(ranges, expected);
}

TEST(RowPrefetcher, PagesAreTheRowsOfEveryBufferOnceAndNoneOfTheDeviceTable) {
  Fixture f;
  RowPrefetcher p(f.plan, nullptr, f.specs);
  const std::vector<int64_t> a = {5, 5, 123456, -3, 77, 5};
  const std::vector<int64_t> b = {0, 499, 499, 250, 500 /* outside t2: skipped */, 17};
  const std::vector<int64_t> d = {1, 2, 3, 4, 5, 6};
  const std::vector<RowPrefetcher::Range> ranges = p.ranges(f.batch(a, b, d));

  std::set<int64_t> expected;
  for (int64_t id : a) {
    const int64_t row = int64_t(cpu::idHash(id, Fixture::kSeed) % uint64_t(Fixture::kBuckets));
    expected.insert((f.offset(f.hashedRows) + row * 32) / kPage);
    expected.insert((f.offset(f.hashedState) + row * 4) / kPage);
  }
  for (int64_t id : b) {
    if (id >= 500)
      continue;
    for (int32_t buffer : {f.batchRows, f.batchM, f.batchV})
      expected.insert((f.offset(buffer) + (Fixture::kOffset2 + id) * 64) / kPage);
  }
  EXPECT_EQ(pagesOf(ranges), expected);
  // Ascending, disjoint, and joined where adjacent.
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(ranges[i].offset % kPage, 0);
    EXPECT_GT(ranges[i].bytes, 0);
    if (i > 0) {
      EXPECT_GT(ranges[i].offset, ranges[i - 1].offset + ranges[i - 1].bytes);
    }
  }
  // Nothing of the device table's.
  const Buffer &device = f.plan.buffers[size_t(f.deviceRows)];
  for (const RowPrefetcher::Range &r : ranges)
    EXPECT_TRUE(r.offset + r.bytes <= device.offset ||
                r.offset >= device.offset + device.bytes);
}

TEST(RowPrefetcher, APlanWithoutDiskTablesIsEmpty) {
  Fixture f;
  for (Table &t : f.plan.tables)
    t.placement = Placement::Device;
  f.plan.tableBatches[0].placement = Placement::Device;
  RowPrefetcher p(f.plan, nullptr, f.specs);
  EXPECT_TRUE(p.empty());
  EXPECT_TRUE(p.ranges(f.batch({1, 2}, {3, 4}, {5, 6})).empty());
  p.prefetch(f.batch({1, 2}, {3, 4}, {5, 6})); // nothing to advise
}

TEST(RowPrefetcher, PrefetchAdvisesTheArenaItWasGiven) {
  // madvise over real memory: an anonymous arena takes the advice (the
  // call is best effort; this checks it addresses the arena, not 0).
  Fixture f;
  std::vector<std::byte> storage(size_t(f.plan.arenaBytes + kPage));
  std::byte *arena = reinterpret_cast<std::byte *>(
      (reinterpret_cast<uintptr_t>(storage.data()) + kPage - 1) / kPage * kPage);
  RowPrefetcher p(f.plan, arena, f.specs);
  p.prefetch(f.batch({1, 2}, {3, 4}, {5, 6}));
  SUCCEED();
}
