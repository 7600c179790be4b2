//===- SelfCommunicatorTest.cpp - one-rank jobs, the watchdog, start-up checks -===//
//
// What runs without mpirun: the one-rank communicator (collectives are
// copies, point-to-point has no peer), the watchdog ending a job whose call
// waited too long (as a death test), the timeout's validation, and the
// message checkSameEverywhere builds when ranks disagree (over a fake
// communicator that plays four ranks).
//
//===----------------------------------------------------------------------===//

#include "CommSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace embc::runtime::comm;
using namespace embc::runtime::comm::detail;

namespace {

/// Runs `body` expecting a CommError whose message contains `part`.
template <typename Body> void expectCommError(Body body, const std::string &part) {
  try {
    body();
    ADD_FAILURE() << "expected a CommError containing '" << part << "'";
  } catch (const CommError &error) {
    EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
  }
}

TEST(SelfCommunicator, IsOneRank) {
  auto comm = createSelfCommunicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->localRank(), 0);
  EXPECT_STREQ(comm->name(), "self");
  comm->barrier();
}

TEST(SelfCommunicator, ReductionsAndBroadcastKeepTheBuffer) {
  auto comm = createSelfCommunicator();
  std::vector<double> buf = {1.5, -2, 3};
  comm->allReduce(buf.data(), buf.size(), DType::F64, ReduceOp::Sum);
  comm->broadcast(buf.data(), buf.size(), DType::F64, 0);
  Request first = comm->startAllReduce(buf.data(), buf.size(), DType::F64, ReduceOp::Max);
  Request second = comm->startAllReduce(buf.data(), 1, DType::F64, ReduceOp::Min);
  comm->wait(second);
  comm->wait(first);
  EXPECT_EQ(buf, (std::vector<double>{1.5, -2, 3}));
  expectCommError([&] { comm->wait(second + 1); }, "not returned by startAllReduce");
  expectCommError([&] { comm->broadcast(buf.data(), 3, DType::F64, 1); }, "root 1 is not a rank");
}

TEST(SelfCommunicator, GathersCopySendToRecv) {
  auto comm = createSelfCommunicator();
  std::vector<int64_t> send = {7, 8, 9}, recv(3, 0);
  comm->allGather(send.data(), recv.data(), 3, DType::I64);
  EXPECT_EQ(recv, send);

  std::vector<float> fsend = {1, 2}, frecv(2, 0);
  comm->allGatherV(fsend.data(), frecv.data(), {2}, DType::F32);
  EXPECT_EQ(frecv, fsend);
  // The same buffer is its own result.
  comm->allGather(fsend.data(), fsend.data(), 2, DType::F32);
  EXPECT_EQ(fsend, (std::vector<float>{1, 2}));
  expectCommError(
      [&] {
        comm->allGatherV(fsend.data(), frecv.data(), {1, 1}, DType::F32);
      },
      "allGatherV: counts has 2 entries, expected one per rank (1)");

  std::vector<uint8_t> bytes = {1, 2, 3}, out(3, 0);
  comm->reduceScatter(bytes.data(), out.data(), 3, DType::U8, ReduceOp::Sum);
  EXPECT_EQ(out, bytes);
}

TEST(SelfCommunicator, AllToAllVCopiesAndChecksCounts) {
  auto comm = createSelfCommunicator();
  std::vector<int32_t> send = {4, 5, 6, 7}, recv(4, 0);
  comm->allToAllV(send.data(), {4}, recv.data(), {4}, DType::I32);
  EXPECT_EQ(recv, send);
  expectCommError([&] { comm->allToAllV(send.data(), {4}, recv.data(), {3}, DType::I32); },
                  "sends itself 4 elements but expects to receive 3");
  expectCommError([&] { comm->allToAllV(send.data(), {}, recv.data(), {4}, DType::I32); },
                  "sendCounts has 0 entries");
}

TEST(SelfCommunicator, PointToPointHasNoPeer) {
  auto comm = createSelfCommunicator();
  float value = 1;
  expectCommError([&] { comm->send(&value, 1, DType::F32, 0, 0); }, "no peer");
  expectCommError([&] { comm->recv(&value, 1, DType::F32, 0, 0); }, "no peer");
  expectCommError([&] { comm->startSend(&value, 1, DType::F32, 0, 0); }, "no peer");
}

TEST(SelfCommunicator, SameEverywhereHoldsForOneRank) {
  auto comm = createSelfCommunicator();
  checkSameEverywhere(*comm, 0x1234, "the plan");
}

#ifdef EMBC_TEST_WITHOUT_MPI
TEST(SelfCommunicator, AskingForMpiSaysItIsMissing) {
  EXPECT_FALSE(launchedByMpi());
  expectCommError([] { createMpiCommunicator(); }, "this embrun was built without MPI");
}
#endif

TEST(SelfCommunicatorDeathTest, AbortPrintsAndExitsWithTheCode) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(createSelfCommunicator()->abort("embrun: rank 0: bad ids in batch 3", 3),
              ::testing::ExitedWithCode(3), "bad ids in batch 3");
}

TEST(CommSupport, SizesAndFormats) {
  EXPECT_EQ(sizeOf(DType::F32), 4u);
  EXPECT_EQ(sizeOf(DType::F64), 8u);
  EXPECT_EQ(sizeOf(DType::I32), 4u);
  EXPECT_EQ(sizeOf(DType::I64), 8u);
  EXPECT_EQ(sizeOf(DType::U8), 1u);
  EXPECT_EQ(formatBytes(0), "0 bytes");
  EXPECT_EQ(formatBytes(1023), "1023 bytes");
  EXPECT_EQ(formatBytes(4096), "4.0 KiB");
  EXPECT_EQ(formatBytes(3u << 19), "1.5 MiB");
  EXPECT_EQ(prefixSums({3, 0, 2}), (std::vector<size_t>{0, 3, 3}));
}

/// Sets an environment variable for one scope.
struct ScopedEnv {
  ScopedEnv(const char *name, const char *value) : name(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name); }
  const char *name;
};

TEST(CommSupport, TimeoutComesFromTheEnvironmentAndIsChecked) {
  CommOptions options;
  options.timeoutSeconds = 42;
  EXPECT_EQ(resolveTimeout(options), 42);
  {
    ScopedEnv env("EMBC_COMM_TIMEOUT", "2.5");
    EXPECT_EQ(resolveTimeout(options), 2.5);
  }
  for (const char *bad : {"", "abc", "3s", "0", "-1", "inf", "nan"}) {
    ScopedEnv env("EMBC_COMM_TIMEOUT", bad);
    expectCommError([&] { resolveTimeout(options); },
                    "EMBC_COMM_TIMEOUT='" + std::string(bad) + "' is not a number of seconds > 0");
  }
  options.timeoutSeconds = 0;
  expectCommError([&] { resolveTimeout(options); }, "timeoutSeconds");
}

TEST(WatchdogDeathTest, EndsTheJobWhenACallWaitsTooLong) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto hang = [] {
    Watchdog dog(2, 0.3, [](const std::string &why) {
      std::fprintf(stderr, "%s\n", why.c_str());
      std::_Exit(7);
    });
    Watchdog::Scope watched(dog, "allReduce", 4096);
    std::this_thread::sleep_for(std::chrono::seconds(5));
  };
  EXPECT_EXIT(hang(), ::testing::ExitedWithCode(7),
              "embrun: rank 2: allReduce \\(4.0 KiB\\) waited 0.[3-9] s for its peers: a rank died "
              "or hangs; aborting the job");
}

TEST(Watchdog, QuietWhileCallsFinishInTime) {
  std::atomic<bool> fired{false};
  Watchdog dog(0, 0.3, [&](const std::string &) { fired = true; });
  for (int i = 0; i < 3; ++i) {
    Watchdog::Scope watched(dog, "barrier", 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  // Probed work retires itself once done.
  std::atomic<bool> done{false};
  dog.watchUntil("allReduce", 8, [&] { return done.load(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  done = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_FALSE(fired);
}

/// Plays four ranks whose all-gathered fingerprints are `values`.
class FourRanks final : public Communicator {
public:
  explicit FourRanks(std::vector<uint64_t> values) : values_(std::move(values)) {}
  int rank() const override { return 2; }
  int size() const override { return 4; }
  int localRank() const override { return 2; }
  const char *name() const override { return "fake"; }
  void allGather(const void *, void *recv, size_t count, DType type) override {
    ASSERT_EQ(count, 1u);
    ASSERT_EQ(sizeOf(type), 8u);
    std::memcpy(recv, values_.data(), values_.size() * 8);
  }
  void allReduce(void *, size_t, DType, ReduceOp) override {}
  Request startAllReduce(void *, size_t, DType, ReduceOp) override { return 0; }
  void wait(Request) override {}
  void allGatherV(const void *, void *, const std::vector<size_t> &, DType) override {}
  void reduceScatter(const void *, void *, size_t, DType, ReduceOp) override {}
  void allToAllV(const void *, const std::vector<size_t> &, void *, const std::vector<size_t> &,
                 DType) override {}
  void send(const void *, size_t, DType, int, int) override {}
  Request startSend(const void *, size_t, DType, int, int) override { return 0; }
  void recv(void *, size_t, DType, int, int) override {}
  void broadcast(void *, size_t, DType, int) override {}
  void barrier() override {}
  [[noreturn]] void abort(const std::string &, int code) override { std::_Exit(code); }

private:
  std::vector<uint64_t> values_;
};

TEST(CheckSameEverywhere, NamesTheRanksThatDisagreeWithRankZero) {
  FourRanks same({5, 5, 5, 5});
  checkSameEverywhere(same, 5, "the plan");
  FourRanks differ({0xa, 0xbeef, 0xa, 0xbeef});
  expectCommError([&] { checkSameEverywhere(differ, 0xa, "the plan"); },
                  "ranks disagree on the plan: rank 0 has 0x000000000000000a, ranks 1, 3 have "
                  "0x000000000000beef (start every rank with the same plan)");
  FourRanks three({1, 2, 1, 3});
  expectCommError([&] { checkSameEverywhere(three, 1, "the model"); },
                  "rank 0 has 0x0000000000000001, rank 1 has 0x0000000000000002, rank 3 has "
                  "0x0000000000000003 (start");
}

} // namespace
