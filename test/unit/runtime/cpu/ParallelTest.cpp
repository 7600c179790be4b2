//===- ParallelTest.cpp - the CPU backend's team of threads ---------------===//
//
// Parallel.h's contract: every task and index runs exactly once, nested
// regions run serially on the caller, the lowest task's exception reaches
// the caller, regions never wait for a worker that is not running, and the
// team survives being resized at any moment (a worker that starts after a
// resize once missed its wake-up and hung the process).
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace embc::runtime::cpu {
namespace {

/// Restores the team size a test changed.
struct TeamSizeGuard {
  int saved = teamSize();
  ~TeamSizeGuard() { setTeamSize(saved); }
};

TEST(Team, RegionRunsEveryTaskOnce) {
  TeamSizeGuard guard;
  for (int size : {1, 2, 3, 5}) {
    setTeamSize(size);
    EXPECT_EQ(teamSize(), size);
    std::vector<std::atomic<int>> runs(static_cast<size_t>(size));
    std::atomic<int> reportedThreads{-1};
    parallelRegion(size, [&](int t, int threads) {
      runs[size_t(t)]++;
      reportedThreads = threads;
      if (size > 1) // a one-thread region is a plain call
        EXPECT_TRUE(inParallelRegion());
    });
    EXPECT_FALSE(inParallelRegion());
    EXPECT_EQ(reportedThreads.load(), size);
    for (int t = 0; t < size; ++t)
      EXPECT_EQ(runs[size_t(t)].load(), 1) << "thread " << t << " of " << size;
  }
}

TEST(Team, ParallelForCoversTheRangeOnceInContiguousTasks) {
  TeamSizeGuard guard;
  setTeamSize(3);
  const int64_t n = 100; // 3 x kTasksPerThread = 12 tasks of ceil(100 / 12) = 9
  std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
  std::atomic<int> tasks{0};
  parallelFor(n, true, [&](int64_t begin, int64_t end) {
    tasks++;
    EXPECT_EQ(begin % 9, 0);
    EXPECT_EQ(end, std::min<int64_t>(n, begin + 9));
    for (int64_t i = begin; i < end; ++i)
      runs[size_t(i)]++;
  });
  EXPECT_EQ(tasks.load(), 12);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(runs[size_t(i)].load(), 1) << "index " << i;

  // Not parallel, or too short: one call over everything on the caller.
  int calls = 0;
  parallelFor(n, false, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, n);
  });
  EXPECT_EQ(calls, 1);
}

TEST(Team, ARegionFinishesWithoutAThreadThatDoesNotRun) {
  TeamSizeGuard guard;
  setTeamSize(2, 0);
  // The caller alone can finish every task: a region must not wait for a
  // worker that is slow to wake (here: one that is kept busy elsewhere is
  // simulated by tasks the caller finishes before the worker could start).
  for (int round = 0; round < 500; ++round) {
    std::atomic<int> runs{0};
    parallelFor(8, true, [&](int64_t begin, int64_t end) { runs += int(end - begin); });
    ASSERT_EQ(runs.load(), 8);
  }
}

TEST(Team, DynamicLoopRunsEachItemOnce) {
  TeamSizeGuard guard;
  setTeamSize(3);
  const int64_t n = 1000;
  std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
  parallelForDynamic(n, 7, true, [&](int64_t i) { runs[size_t(i)]++; });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(runs[size_t(i)].load(), 1) << "item " << i;
}

TEST(Team, NestedRegionsRunSeriallyOnTheCaller) {
  TeamSizeGuard guard;
  setTeamSize(2);
  std::atomic<int> inner{0};
  parallelRegion(2, [&](int, int) {
    const std::thread::id outer = std::this_thread::get_id();
    parallelFor(100, true, [&](int64_t begin, int64_t end) {
      EXPECT_EQ(begin, 0);
      EXPECT_EQ(end, 100);
      EXPECT_EQ(std::this_thread::get_id(), outer);
      inner++;
    });
  });
  EXPECT_EQ(inner.load(), 2);
}

TEST(Team, LowestTasksExceptionReachesTheCaller) {
  TeamSizeGuard guard;
  setTeamSize(3);
  try {
    parallelRegion(3, [&](int t, int) {
      if (t >= 1)
        throw std::runtime_error("task " + std::to_string(t));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "task 1");
  }
  // The team still works afterwards.
  std::atomic<int> runs{0};
  parallelRegion(3, [&](int, int) { runs++; });
  EXPECT_EQ(runs.load(), 3);
}

TEST(Team, SurvivesResizingBetweenRegions) {
  TeamSizeGuard guard;
  for (int round = 0; round < 200; ++round) {
    const int size = 1 + round % 4;
    setTeamSize(size, round % 3 == 0 ? 0 : -1); // with and without spinning
    std::atomic<int> runs{0};
    parallelRegion(size, [&](int, int) { runs++; });
    ASSERT_EQ(runs.load(), size) << "round " << round;
  }
}

TEST(Team, SleepingWorkersWakeForTheNextRegion) {
  TeamSizeGuard guard;
  setTeamSize(2, 0); // no spin: every region wakes a sleeping worker
  int64_t total = 0;
  for (int round = 0; round < 2000; ++round) {
    std::atomic<int64_t> sum{0};
    parallelFor(64, true, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        sum += i;
    });
    total += sum.load();
  }
  EXPECT_EQ(total, 2000 * (63 * 64 / 2));
}

TEST(Team, ASecondCallerRunsSeriallyInsteadOfWaiting) {
  TeamSizeGuard guard;
  setTeamSize(2);
  std::atomic<bool> release{false}, started{false};
  std::thread holder([&] {
    parallelRegion(2, [&](int t, int) {
      if (t == 0) {
        started = true;
        while (!release)
          std::this_thread::yield();
      }
    });
  });
  while (!started)
    std::this_thread::yield();
  // The team is busy: this region runs every t on the calling thread, in
  // order, rather than wait for the team.
  std::vector<int> order;
  const std::thread::id caller = std::this_thread::get_id();
  parallelRegion(2, [&](int t, int) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(t);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
  release = true;
  holder.join();
}

TEST(Team, DoesNotSpinWhenLargerThanTheCpus) {
  TeamSizeGuard guard;
  setTeamSize(availableCpus() + 1, 50);
  EXPECT_EQ(teamSpinMicros(), 0);
  setTeamSize(1, 50);
  EXPECT_EQ(teamSpinMicros(), 50);
}

TEST(Team, ParallelCopyCopiesEveryByteOfAnyLength) {
  TeamSizeGuard guard;
  setTeamSize(3, 0);
  // Below, at and past the size that takes the team, and a ragged tail.
  for (size_t bytes : {size_t(0), size_t(5), size_t(512) << 10, (size_t(3) << 20) + 13}) {
    std::vector<unsigned char> src(bytes), dst(bytes + 1, 0xAB);
    for (size_t i = 0; i < bytes; ++i)
      src[i] = static_cast<unsigned char>(i * 31 + 7);
    parallelCopy(dst.data(), src.data(), bytes);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << bytes << " bytes";
    EXPECT_EQ(dst[bytes], 0xAB) << "wrote past " << bytes << " bytes";
  }
}

TEST(Team, ParallelCopiesCopiesEveryRangeInOneCall) {
  TeamSizeGuard guard;
  setTeamSize(3, 0);
  // Empty, small, chunk-sized and ragged ranges together (the inputs of a
  // batch), and a set whose total is too small to wake the team.
  for (std::vector<size_t> sizes :
       {std::vector<size_t>{0, 5, size_t(256) << 10, (size_t(1) << 20) + 13, 1, 0, 700000},
        std::vector<size_t>{3, 0, 4096}}) {
    std::vector<std::vector<unsigned char>> src, dst;
    std::vector<CopyRange> copies;
    for (size_t r = 0; r < sizes.size(); ++r) {
      src.emplace_back(sizes[r]);
      dst.emplace_back(sizes[r] + 1, 0xAB);
      for (size_t i = 0; i < sizes[r]; ++i)
        src[r][i] = static_cast<unsigned char>(i * 31 + 7 * r + 1);
    }
    for (size_t r = 0; r < sizes.size(); ++r)
      copies.push_back({dst[r].data(), src[r].data(), sizes[r]});
    parallelCopies(copies.data(), copies.size());
    for (size_t r = 0; r < sizes.size(); ++r) {
      EXPECT_TRUE(std::equal(src[r].begin(), src[r].end(), dst[r].begin()))
          << "range " << r << " of " << sizes[r] << " bytes";
      EXPECT_EQ(dst[r][sizes[r]], 0xAB) << "range " << r << " written past its end";
    }
  }
}

} // namespace
} // namespace embc::runtime::cpu
