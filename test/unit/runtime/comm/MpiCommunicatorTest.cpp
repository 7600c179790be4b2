//===- MpiCommunicatorTest.cpp - the MPI communicator on 2 and 3 ranks ----===//
//
// Run by ctest under `mpirun -np 2` and `-np 3`: every rank runs every test
// in the same order, so the collectives match. Each rank's contribution is a
// function of its rank, and every rank checks the full result.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/comm/Communicator.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace embc::runtime::comm;

namespace {

/// One communicator for the whole program; it is destroyed before the
/// MPI_Finalize that runs at exit.
Communicator &world() {
  static std::unique_ptr<Communicator> comm = createMpiCommunicator();
  return *comm;
}

/// Sum over ranks of f(r).
template <typename F> auto sumOverRanks(F f) {
  decltype(f(0)) sum = 0;
  for (int r = 0; r < world().size(); ++r)
    sum += f(r);
  return sum;
}

TEST(Mpi, WorldIsTheLaunchedJob) {
  EXPECT_TRUE(launchedByMpi());
  EXPECT_STREQ(world().name(), "mpi");
  EXPECT_EQ(world().size(), std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")));
  EXPECT_GE(world().size(), 2);
}

// Every rank of this job runs on this host, so its rank among the host's
// ranks (MPI_COMM_TYPE_SHARED, the GPU it would take) is its rank; the
// launcher's own variable agrees where it sets one.
TEST(Mpi, LocalRankIsTheRankAmongThisHostsRanks) {
  EXPECT_EQ(world().localRank(), world().rank());
  if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK"))
    EXPECT_EQ(world().localRank(), std::atoi(local));
}

template <typename T> void checkAllReduce(DType type) {
  Communicator &comm = world();
  int r = comm.rank(), n = comm.size();
  // Element i of rank r holds (r + 1) * (i + 1) - 2 * r, negative on some ranks.
  auto value = [](int rank, int i) { return static_cast<T>((rank + 1) * (i + 1) - 2 * rank); };
  std::vector<T> sum(5), max(5), min(5);
  for (int i = 0; i < 5; ++i)
    sum[i] = max[i] = min[i] = value(r, i);
  comm.allReduce(sum.data(), sum.size(), type, ReduceOp::Sum);
  comm.allReduce(max.data(), max.size(), type, ReduceOp::Max);
  comm.allReduce(min.data(), min.size(), type, ReduceOp::Min);
  for (int i = 0; i < 5; ++i) {
    T expectMax = value(0, i), expectMin = value(0, i);
    for (int q = 1; q < n; ++q) {
      expectMax = std::max(expectMax, value(q, i));
      expectMin = std::min(expectMin, value(q, i));
    }
    EXPECT_EQ(sum[i], sumOverRanks([&](int q) { return value(q, i); })) << "element " << i;
    EXPECT_EQ(max[i], expectMax) << "element " << i;
    EXPECT_EQ(min[i], expectMin) << "element " << i;
  }
}

TEST(Mpi, AllReduceF32) { checkAllReduce<float>(DType::F32); }
TEST(Mpi, AllReduceF64) { checkAllReduce<double>(DType::F64); }
TEST(Mpi, AllReduceI64) { checkAllReduce<int64_t>(DType::I64); }
TEST(Mpi, AllReduceI32) { checkAllReduce<int32_t>(DType::I32); }

TEST(Mpi, StartedAllReducesOverlapAndWait) {
  Communicator &comm = world();
  std::vector<double> a(1000, comm.rank() + 1.0), b(3, 0.5 * comm.rank());
  Request ra = comm.startAllReduce(a.data(), a.size(), DType::F64, ReduceOp::Sum);
  Request rb = comm.startAllReduce(b.data(), b.size(), DType::F64, ReduceOp::Max);
  comm.wait(rb);
  comm.wait(ra);
  double n = comm.size();
  for (double v : a)
    ASSERT_EQ(v, n * (n + 1) / 2);
  for (double v : b)
    ASSERT_EQ(v, 0.5 * (n - 1));
  EXPECT_THROW(comm.wait(ra), CommError); // waited for already
}

TEST(Mpi, AllGatherInRankOrder) {
  Communicator &comm = world();
  int n = comm.size();
  std::vector<int64_t> send = {10 * comm.rank(), 10 * comm.rank() + 1};
  std::vector<int64_t> recv(2 * n, -1);
  comm.allGather(send.data(), recv.data(), 2, DType::I64);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(recv[2 * r], 10 * r);
    EXPECT_EQ(recv[2 * r + 1], 10 * r + 1);
  }
  // In place: this rank's block already sits in recv.
  std::vector<int64_t> inPlace(2 * n, -1);
  inPlace[2 * comm.rank()] = 10 * comm.rank();
  inPlace[2 * comm.rank() + 1] = 10 * comm.rank() + 1;
  comm.allGather(inPlace.data() + 2 * comm.rank(), inPlace.data(), 2, DType::I64);
  EXPECT_EQ(inPlace, recv);
}

TEST(Mpi, AllGatherVWithUnequalCountsIncludingZero) {
  Communicator &comm = world();
  int n = comm.size();
  // Rank 1 sends nothing; rank r != 1 sends r + 2 elements.
  std::vector<size_t> counts(n);
  for (int r = 0; r < n; ++r)
    counts[r] = r == 1 ? 0 : r + 2;
  std::vector<float> send(counts[comm.rank()]);
  for (size_t i = 0; i < send.size(); ++i)
    send[i] = 100.f * comm.rank() + i;
  size_t total = sumOverRanks([&](int r) { return counts[r]; });
  std::vector<float> recv(total, -1);
  comm.allGatherV(send.data(), recv.data(), counts, DType::F32);
  size_t at = 0;
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < counts[r]; ++i)
      EXPECT_EQ(recv[at++], 100.f * r + i) << "rank " << r << " element " << i;
  EXPECT_THROW(comm.allGatherV(send.data(), recv.data(), {1}, DType::F32), CommError);
}

TEST(Mpi, ReduceScatterGivesEachRankItsBlock) {
  Communicator &comm = world();
  int n = comm.size(), me = comm.rank();
  // Block b of rank r: {r + b, 10 * b}.
  std::vector<double> send(2 * n);
  for (int b = 0; b < n; ++b) {
    send[2 * b] = me + b;
    send[2 * b + 1] = 10 * b;
  }
  std::vector<double> recv(2, -1);
  comm.reduceScatter(send.data(), recv.data(), 2, DType::F64, ReduceOp::Sum);
  EXPECT_EQ(recv[0], sumOverRanks([&](int r) { return double(r + me); }));
  EXPECT_EQ(recv[1], 10.0 * me * n);
}

TEST(Mpi, AllToAllVWithUnequalCounts) {
  Communicator &comm = world();
  int n = comm.size(), me = comm.rank();
  // Rank s sends (s + d) % 3 elements to rank d (some zero), valued 100 s + 10 d + i.
  auto count = [](int s, int d) { return static_cast<size_t>((s + d) % 3); };
  std::vector<size_t> sendCounts(n), recvCounts(n);
  std::vector<int32_t> send;
  for (int d = 0; d < n; ++d) {
    sendCounts[d] = count(me, d);
    recvCounts[d] = count(d, me);
    for (size_t i = 0; i < sendCounts[d]; ++i)
      send.push_back(100 * me + 10 * d + static_cast<int>(i));
  }
  std::vector<int32_t> recv(sumOverRanks([&](int s) { return count(s, me); }), -1);
  comm.allToAllV(send.data(), sendCounts, recv.data(), recvCounts, DType::I32);
  size_t at = 0;
  for (int s = 0; s < n; ++s)
    for (size_t i = 0; i < count(s, me); ++i)
      EXPECT_EQ(recv[at++], 100 * s + 10 * me + static_cast<int>(i)) << "from rank " << s;
}

TEST(Mpi, SendRecvAroundARing) {
  Communicator &comm = world();
  int n = comm.size(), me = comm.rank();
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<uint8_t> out(5, static_cast<uint8_t>(me)), in(5, 255);
  // Rank 0 starts the ring; everybody else passes on what it received.
  if (me == 0) {
    comm.send(out.data(), out.size(), DType::U8, next, 7);
    comm.recv(in.data(), in.size(), DType::U8, prev, 7);
  } else {
    comm.recv(in.data(), in.size(), DType::U8, prev, 7);
    comm.send(out.data(), out.size(), DType::U8, next, 7);
  }
  EXPECT_EQ(in, std::vector<uint8_t>(5, static_cast<uint8_t>(prev)));
  EXPECT_THROW(comm.send(out.data(), 1, DType::U8, n, 7), CommError);
}

TEST(Mpi, StartedSendsDoNotBlockEvenWhenEveryRankSendsFirst) {
  // Every rank sends a large message (past any eager limit) to the next and
  // only then receives: blocking sends would wait for each other forever.
  Communicator &comm = world();
  int n = comm.size(), me = comm.rank();
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<float> out(1 << 20, float(me)), in(1 << 20, -1.f);
  Request sent = comm.startSend(out.data(), out.size(), DType::F32, next, 9);
  comm.recv(in.data(), in.size(), DType::F32, prev, 9);
  comm.wait(sent);
  EXPECT_EQ(in, std::vector<float>(1 << 20, float(prev)));
  EXPECT_THROW(comm.wait(sent), CommError); // waited for already
  EXPECT_THROW(comm.startSend(out.data(), 1, DType::F32, n, 9), CommError);
}

TEST(Mpi, BroadcastFromTheLastRank) {
  Communicator &comm = world();
  int root = comm.size() - 1;
  std::vector<double> buf(4, comm.rank() == root ? 3.25 : 0.0);
  comm.broadcast(buf.data(), buf.size(), DType::F64, root);
  EXPECT_EQ(buf, std::vector<double>(4, 3.25));
  comm.barrier();
}

TEST(Mpi, SameEverywhere) {
  Communicator &comm = world();
  checkSameEverywhere(comm, 0xfeedULL, "the plan");
  // Rank 1 differs: every rank throws the same message.
  uint64_t mine = comm.rank() == 1 ? 0xbad : 0xfeed;
  try {
    checkSameEverywhere(comm, mine, "the plan");
    ADD_FAILURE() << "rank " << comm.rank() << " did not throw";
  } catch (const CommError &error) {
    EXPECT_STREQ(error.what(), "ranks disagree on the plan: rank 0 has 0x000000000000feed, rank 1 "
                               "has 0x0000000000000bad (start every rank with the same plan)");
  }
  comm.barrier();
}

} // namespace
