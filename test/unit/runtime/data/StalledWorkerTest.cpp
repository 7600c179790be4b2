//===- StalledWorkerTest.cpp - a starved prefetch worker never stalls -----===//
//
// Prefetch workers run at the lowest priority, so on a busy machine one may
// claim part of a batch and then not run for a long time. The trainer must
// then fill that part itself after a short grace and deliver the same batch.
// Here the workers block outright inside fill() until the test ends.
//
//===----------------------------------------------------------------------===//

#include "PrefetchStream.h"

#include "DataTestUtil.h"

#include "embc/runtime/cpu/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;

namespace {

/// Row r of a batch holds id = its stream position. fill() blocks on every
/// thread but the one that created the source until `release` is set.
class BlockingSource final : public ExampleSource {
public:
  std::atomic<bool> release{false};
  mutable std::atomic<int> blockedFills{0};

  uint64_t size() const override { return 1'000'000; }
  bool shufflesEpochs() const override { return false; }
  const DataStats &stats() const override { return stats_; }
  void fill(const std::vector<uint64_t> &examples, const std::vector<uint64_t> &positions,
            Batch &out) const override {
    if (std::this_thread::get_id() != owner_) {
      ++blockedFills;
      while (!release.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (size_t r = 0; r < examples.size(); ++r) {
      out.features[0].ids.push_back(int64_t(positions[r]));
      closeBag(out.features[0]);
    }
  }

private:
  std::thread::id owner_ = std::this_thread::get_id();
  DataStats stats_;
};

TEST(StalledWorker, TrainerFillsTheStalledPartsItself) {
  const int saved = embc::runtime::cpu::teamSize();
  embc::runtime::cpu::setTeamSize(1); // every fill of the trainer's on this thread
  auto source = std::make_shared<BlockingSource>();
  StreamOptions options = streamOptions("synthetic", "", 256, true, 1, 2);
  options.prefetch = 3;
  {
    PrefetchStream stream(source, {sparseFeature("position", 0)}, options, 1000);
    // Destroyed before the stream, on every exit: lets the workers finish
    // their parts so that the stream can join them (a failed ASSERT included).
    struct Release {
      BlockingSource &source;
      ~Release() { source.release = true; }
    } release{*source};
    // Let both workers claim a part (and block) before the trainer asks.
    for (int waited = 0; source->blockedFills.load() < 2 && waited < 5000; ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(source->blockedFills.load(), 2);
    Batch batch;
    const auto began = std::chrono::steady_clock::now();
    for (uint64_t n = 0; n < 20; ++n) {
      ASSERT_TRUE(stream.next(batch));
      ASSERT_EQ(batch.size, 256);
      ASSERT_EQ(batch.features[0].ids.size(), 256u);
      for (int64_t r = 0; r < 256; ++r)
        ASSERT_EQ(batch.features[0].ids[size_t(r)], int64_t(1000 + n * 256 + uint64_t(r)))
            << "batch " << n << " row " << r;
      EXPECT_EQ(batch.position, 1000 + (n + 1) * 256);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    EXPECT_EQ(stream.partsRefilled(), 2u); // the two blocked parts, once each
    EXPECT_LT(seconds, 5.0) << "the trainer waited for blocked workers";
  }
  embc::runtime::cpu::setTeamSize(saved);
}

} // namespace
