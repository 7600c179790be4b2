//===- FusedEmbeddingKernelTest.cpp - fused_lookup and embedding_update ---===//
//
// Each fused embedding kernel against the chain of plain kernels it
// replaces, bit for bit (the fusion must not change a training run):
// fusedLookup == hashIds + lookupForward per member, and embeddingUpdate ==
// lookupGrad + append (ids + row offset) + coalesceRows + sparseUpdate, for
// every optimizer, lazy and global decay, several sources with overlapping
// ids, bag and rows sources, a table batch with members at row offsets, and
// sizes that take the serial and the parallel / radix-sort paths. Also: bad
// ids and inconsistent operands throw before anything is written, and the
// results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "embc/runtime/cpu/FusedEmbeddingKernels.h"
#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::cpu {
namespace {

using testing::randomVector;
using IVec = std::vector<int64_t>;

/// Bit-for-bit equality (EXPECT_EQ on floats would accept -0 == 0).
template <class T>
void expectBitEqual(const std::vector<T> &actual, const std::vector<T> &expected,
                    const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    if (std::memcmp(&actual[i], &expected[i], sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": first difference at " << i << ": " << actual[i] << " vs "
                    << expected[i];
      return;
    }
}

/// B bags of 0..maxBag ids; every fifth bag is empty.
IVec randomOffsets(int64_t B, int64_t maxBag, std::mt19937 &gen) {
  std::uniform_int_distribution<int64_t> size(1, maxBag);
  IVec offsets(B + 1, 0);
  for (int64_t b = 0; b < B; ++b)
    offsets[b + 1] = offsets[b] + (b % 5 == 3 ? 0 : size(gen));
  return offsets;
}

/// n ids in [0, rows): half from a few hot rows, so rows repeat within and
/// across bags and sources.
IVec randomIds(int64_t n, int64_t rows, std::mt19937 &gen) {
  std::uniform_int_distribution<int64_t> any(0, rows - 1), hot(0, std::min<int64_t>(rows, 8) - 1);
  IVec ids(n);
  for (int64_t i = 0; i < n; ++i)
    ids[i] = i % 2 ? any(gen) : hot(gen);
  return ids;
}

// --- fusedLookup ------------------------------------------------------------------

/// One member's operands, owned.
template <class T> struct MemberData {
  int64_t rows, D, B;
  std::vector<T> table, weights;
  IVec ids, offsets;
  Pooling pooling;
  bool hash;
  int64_t buckets;
  uint64_t seed;
  bool hashedOutput;
};

template <class T>
MemberData<T> makeMember(int64_t rows, int64_t D, int64_t B, int64_t maxBag, Pooling pooling,
                         bool weighted, bool hash, uint32_t seed) {
  std::mt19937 gen(seed);
  MemberData<T> m{rows,
                  D,
                  B,
                  randomVector<T>(size_t(rows * D), seed + 1),
                  {},
                  {},
                  {},
                  pooling,
                  hash,
                  rows,
                  1234567u + seed,
                  hash && seed % 2 == 0};
  m.offsets = randomOffsets(B, maxBag, gen);
  const int64_t n = m.offsets[B];
  if (hash) { // raw ids anywhere in int64, hashed into the table's rows
    std::uniform_int_distribution<int64_t> raw(-(int64_t(1) << 40), int64_t(1) << 40);
    m.ids.resize(size_t(n));
    for (auto &id : m.ids)
      id = raw(gen);
  } else {
    m.ids = randomIds(n, rows, gen);
  }
  if (weighted)
    m.weights = randomVector<T>(size_t(n), seed + 2, 0.1, 2.0);
  return m;
}

/// Runs fusedLookup over all members; returns (outputs, hashed ids).
template <class T>
std::pair<std::vector<std::vector<T>>, std::vector<IVec>> runFused(std::vector<MemberData<T>> &ms) {
  std::vector<std::vector<T>> ys;
  std::vector<IVec> hashed;
  for (auto &m : ms) {
    ys.emplace_back(size_t(m.B * m.D), T(-7)); // stale values the kernel must overwrite
    hashed.emplace_back(m.hashedOutput ? m.ids.size() : 0, -1);
  }
  std::vector<LookupMember<T>> lm(ms.size());
  for (size_t i = 0; i < ms.size(); ++i) {
    const MemberData<T> &m = ms[i];
    lm[i] = {m.table.data(),
             m.rows,
             m.D,
             m.ids.data(),
             int64_t(m.ids.size()),
             m.offsets.data(),
             m.B,
             m.weights.empty() ? nullptr : m.weights.data(),
             m.pooling,
             m.hash,
             m.buckets,
             m.seed,
             m.hashedOutput ? hashed[i].data() : nullptr,
             ys[i].data()};
  }
  fusedLookup(lm.data(), lm.size());
  return {ys, hashed};
}

/// The unfused chain: hashIds (when hashed) then lookupForward.
template <class T> void expectMatchesChain(std::vector<MemberData<T>> &ms) {
  auto [ys, hashed] = runFused(ms);
  for (size_t i = 0; i < ms.size(); ++i) {
    const MemberData<T> &m = ms[i];
    IVec ids = m.ids;
    if (m.hash)
      hashIds(m.ids.data(), ids.data(), int64_t(ids.size()), m.buckets, m.seed);
    std::vector<T> y(size_t(m.B * m.D));
    lookupForward(m.table.data(), m.D, ids.data(), m.offsets.data(),
                  m.weights.empty() ? nullptr : m.weights.data(), m.B, m.pooling, y.data());
    expectBitEqual(ys[i], y, "member " + std::to_string(i) + " output");
    if (m.hashedOutput) {
      EXPECT_EQ(hashed[i], ids) << "member " << i << " hashed ids";
    }
  }
}

/// Every pooling x weighted x hashed combination, with different dims and
/// batch sizes, in one call.
template <class T> std::vector<MemberData<T>> allMemberKinds(int64_t B, int64_t maxBag) {
  std::vector<MemberData<T>> ms;
  uint32_t seed = 10;
  for (Pooling pooling : {Pooling::Sum, Pooling::Mean, Pooling::Max})
    for (bool weighted : {false, true})
      for (bool hash : {false, true}) {
        const int64_t D = 3 + int64_t(seed % 4) * 5; // 3, 8, 13, 18
        ms.push_back(makeMember<T>(50 + seed * 7, D, B + int64_t(seed % 3), maxBag, pooling,
                                   weighted, hash, seed));
        ++seed;
      }
  return ms;
}

/// Runs `f`, which must throw IdOutOfRange naming `operand`, `position`
/// and `id`, and `rows` unless it is -1.
template <class F>
void expectIdOutOfRange(F f, size_t operand, int64_t position, int64_t id, int64_t rows = -1) {
  try {
    f();
    FAIL() << "expected IdOutOfRange";
  } catch (const IdOutOfRange &e) {
    EXPECT_EQ(e.operand, operand);
    EXPECT_EQ(e.position, position);
    EXPECT_EQ(e.id, id);
    if (rows != -1) {
      EXPECT_EQ(e.rows, rows);
    }
  }
}

TEST(FusedLookup, SmallBatchMatchesHashPlusLookupBitExactly) {
  auto ms = allMemberKinds<float>(5, 4);
  expectMatchesChain(ms);
}

TEST(FusedLookup, LargeBatchTakesTheParallelPathAndMatches) {
  auto ms = allMemberKinds<float>(700, 9);
  expectMatchesChain(ms);
}

TEST(FusedLookup, DoubleMatches) {
  auto ms = allMemberKinds<double>(100, 6);
  expectMatchesChain(ms);
}

TEST(FusedLookup, EmptyBatchAndAllEmptyBags) {
  std::vector<MemberData<float>> ms;
  ms.push_back(makeMember<float>(10, 4, 0, 3, Pooling::Sum, false, false, 1));
  MemberData<float> empty = makeMember<float>(10, 4, 6, 3, Pooling::Max, true, true, 2);
  empty.offsets.assign(7, 0);
  empty.ids.clear();
  empty.weights.clear();
  ms.push_back(empty);
  auto [ys, hashed] = runFused(ms);
  EXPECT_TRUE(ys[0].empty());
  EXPECT_EQ(ys[1], std::vector<float>(24, 0.0f)); // empty bags pool to zeros
}

TEST(FusedLookup, ResultDoesNotDependOnThreadCount) {
  auto ms = allMemberKinds<float>(400, 8);
  const int threads = teamSize();
  setTeamSize(1);
  auto one = runFused(ms);
  setTeamSize(3);
  auto three = runFused(ms);
  setTeamSize(threads);
  for (size_t i = 0; i < ms.size(); ++i)
    expectBitEqual(one.first[i], three.first[i], "member " + std::to_string(i));
}

TEST(FusedLookup, OutOfRangeIdThrowsNamingMemberAndPosition) {
  std::vector<MemberData<float>> ms;
  ms.push_back(makeMember<float>(20, 4, 30, 4, Pooling::Sum, false, false, 3));
  ms.push_back(makeMember<float>(20, 4, 30, 4, Pooling::Mean, true, false, 5));
  ms[1].ids[7] = 20; // one past the last row
  ms[1].ids[9] = -1;
  expectIdOutOfRange([&] { runFused(ms); }, 1, 7, 20, 20);
  // Hashing into more buckets than rows can leave the table too.
  ms[1] = makeMember<float>(20, 4, 30, 4, Pooling::Sum, false, true, 7);
  ms[1].buckets = 1000;
  EXPECT_THROW(runFused(ms), IdOutOfRange);
}

TEST(FusedLookup, BadOffsetsOrBucketsAreRefused) {
  std::vector<MemberData<float>> ms;
  ms.push_back(makeMember<float>(20, 4, 10, 4, Pooling::Sum, false, false, 3));
  ms[0].offsets[4] = ms[0].offsets[3] - 1; // a decreasing range
  EXPECT_THROW(runFused(ms), std::invalid_argument);
  ms[0] = makeMember<float>(20, 4, 10, 4, Pooling::Sum, false, false, 3);
  ms[0].offsets[10] = int64_t(ms[0].ids.size()) + 1; // past the ids
  EXPECT_THROW(runFused(ms), std::invalid_argument);
  ms[0] = makeMember<float>(20, 4, 10, 4, Pooling::Sum, false, true, 4);
  ms[0].buckets = 0;
  EXPECT_THROW(runFused(ms), std::invalid_argument);
}

// --- embeddingUpdate ----------------------------------------------------------------

/// One gradient source's operands, owned.
template <class T> struct SourceData {
  typename GradSource<T>::Kind kind = GradSource<T>::Kind::Bag;
  int64_t rowOffset = 0, rows = 0, B = 0;
  IVec ids, offsets;
  std::vector<T> weights, dy, values;
  Pooling pooling = Pooling::Sum;

  GradSource<T> view() const {
    GradSource<T> g;
    g.kind = kind;
    g.ids = ids.data();
    g.n = int64_t(ids.size());
    g.rowOffset = rowOffset;
    g.rows = rows;
    g.offsets = offsets.data();
    g.B = B;
    g.weights = weights.empty() ? nullptr : weights.data();
    g.pooling = pooling;
    g.dy = dy.data();
    g.values = values.data();
    return g;
  }
};

template <class T>
SourceData<T> bagSource(int64_t rowOffset, int64_t rows, int64_t B, int64_t maxBag, int64_t D,
                        Pooling pooling, bool weighted, uint32_t seed) {
  std::mt19937 gen(seed);
  SourceData<T> s;
  s.rowOffset = rowOffset;
  s.rows = rows;
  s.B = B;
  s.pooling = pooling;
  s.offsets = randomOffsets(B, maxBag, gen);
  s.ids = randomIds(s.offsets[B], rows, gen);
  if (weighted)
    s.weights = randomVector<T>(s.ids.size(), seed + 1, 0.1, 2.0);
  s.dy = randomVector<T>(size_t(B * D), seed + 2);
  return s;
}

template <class T>
SourceData<T> rowsSource(int64_t rowOffset, int64_t rows, int64_t n, int64_t D, uint32_t seed) {
  std::mt19937 gen(seed);
  SourceData<T> s;
  s.kind = GradSource<T>::Kind::Rows;
  s.rowOffset = rowOffset;
  s.rows = rows;
  s.ids = randomIds(n, rows, gen);
  s.values = randomVector<T>(size_t(n * D), seed + 1);
  return s;
}

/// A table (rows x D) and its optimizer state; the state is positive so
/// Adam's and Adagrad's square roots are defined.
template <class T> struct TableState { std::vector<T> w, s0, s1; };

template <class T>
TableState<T> makeTable(const OptimizerParams &p, int64_t rows, int64_t D, uint32_t seed) {
  TableState<T> t{randomVector<T>(size_t(rows * D), seed), {}, {}};
  const bool rowwise = p.kind == OptimizerKind::RowwiseAdagrad;
  const bool two = p.kind == OptimizerKind::Adam || p.kind == OptimizerKind::AdamW ||
                   p.kind == OptimizerKind::Lamb;
  const bool one = two || p.kind == OptimizerKind::Adagrad || rowwise ||
                   (p.kind == OptimizerKind::Sgd && p.momentum != 0);
  if (one)
    t.s0 = randomVector<T>(size_t(rowwise ? rows : rows * D), seed + 1, 0.01, 0.5);
  if (two)
    t.s1 = randomVector<T>(size_t(rows * D), seed + 2, 0.01, 0.5);
  return t;
}

template <class T> T *ptr(std::vector<T> &v) { return v.empty() ? nullptr : v.data(); }

constexpr double kLrScale = 0.75, kGradScale = 0.5;

/// The unfused chain: lookupGrad per bag source, append (ids + row offset,
/// rows) to one sparse gradient, coalesceRows, sparseUpdate.
template <class T>
void referenceUpdate(const OptimizerParams &p, int64_t step, TableState<T> &t, int64_t rows,
                     int64_t D, const std::vector<SourceData<T>> &sources) {
  IVec gradRows;
  std::vector<T> gradValues;
  for (const SourceData<T> &s : sources) {
    const int64_t n = int64_t(s.ids.size());
    std::vector<T> dvals = s.values;
    if (s.kind == GradSource<T>::Kind::Bag) {
      dvals.assign(size_t(n * D), T(0));
      lookupGrad(t.w.data() + s.rowOffset * D, D, s.ids.data(), s.offsets.data(),
                 s.weights.empty() ? nullptr : s.weights.data(), s.B, s.pooling, s.dy.data(),
                 dvals.data());
    }
    for (int64_t i = 0; i < n; ++i)
      gradRows.push_back(s.ids[i] + s.rowOffset);
    gradValues.insert(gradValues.end(), dvals.begin(), dvals.end());
  }
  const int64_t nnz = coalesceRows(gradRows.data(), gradValues.data(), int64_t(gradRows.size()), D);
  EXPECT_FALSE(sparseUpdate(p, step, kLrScale, kGradScale, t.w.data(), rows, D, gradRows.data(),
               gradValues.data(), nnz, ptr(t.s0), ptr(t.s1)));
}

template <class T>
void fusedUpdate(const OptimizerParams &p, int64_t step, TableState<T> &t, int64_t rows, int64_t D,
                 const std::vector<SourceData<T>> &sources) {
  std::vector<GradSource<T>> views;
  for (const auto &s : sources)
    views.push_back(s.view());
  EXPECT_EQ(embeddingUpdate(p, step, kLrScale, kGradScale, t.w.data(), rows, D, views.data(), views.size(),
                  ptr(t.s0), ptr(t.s1)), -1);
}

/// Three consecutive steps (so momentum and moments carry over) through
/// both paths, compared bit for bit after each.
template <class T>
void expectUpdateMatchesChain(const OptimizerParams &p, int64_t rows, int64_t D,
                              const std::vector<SourceData<T>> &sources, const std::string &what) {
  TableState<T> fused = makeTable<T>(p, rows, D, 99), chain = fused;
  for (int64_t step = 1; step <= 3; ++step) {
    referenceUpdate(p, step, chain, rows, D, sources);
    fusedUpdate(p, step, fused, rows, D, sources);
    const std::string at = what + ", step " + std::to_string(step);
    expectBitEqual(fused.w, chain.w, at + ": table");
    expectBitEqual(fused.s0, chain.s0, at + ": state0");
    expectBitEqual(fused.s1, chain.s1, at + ": state1");
  }
}

struct OptCase {
  std::string name;
  OptimizerParams params;
};

/// The six optimizers (sgd with and without momentum) with lazy weight decay.
std::vector<OptCase> allOptimizers(double weightDecay) {
  std::vector<OptCase> cases;
  auto add = [&](std::string name, OptimizerKind kind, double lr, double momentum = 0) {
    OptimizerParams p;
    p.kind = kind;
    p.lr = lr;
    p.momentum = momentum;
    p.weightDecay = weightDecay;
    p.globalDecay = false;
    cases.push_back({std::move(name), p});
  };
  add("sgd", OptimizerKind::Sgd, 0.1);
  add("sgd_momentum", OptimizerKind::Sgd, 0.1, 0.9);
  add("adagrad", OptimizerKind::Adagrad, 0.1);
  add("rowwise_adagrad", OptimizerKind::RowwiseAdagrad, 0.1);
  add("adam", OptimizerKind::Adam, 0.01);
  add("adamw", OptimizerKind::AdamW, 0.01);
  add("lamb", OptimizerKind::Lamb, 0.01);
  return cases;
}

/// Two bag sources (sum, and weighted mean) and a rows source into one
/// table, sharing hot rows.
template <class T>
std::vector<SourceData<T>> threeSources(int64_t rows, int64_t D, int64_t B, int64_t maxBag) {
  return {bagSource<T>(0, rows, B, maxBag, D, Pooling::Sum, false, 21),
          bagSource<T>(0, rows, B, maxBag, D, Pooling::Mean, true, 22),
          rowsSource<T>(0, rows, B, D, 23)};
}

TEST(EmbeddingUpdate, EveryOptimizerMatchesTheChainSmall) {
  const int64_t rows = 40, D = 5;
  const auto sources = threeSources<float>(rows, D, 6, 4); // std::sort path, serial
  for (const OptCase &c : allOptimizers(0.01))
    expectUpdateMatchesChain(c.params, rows, D, sources, c.name);
}

TEST(EmbeddingUpdate, EveryOptimizerMatchesTheChainLarge) {
  // ~5000 contributions over 5000 rows: radix sort (13 row bits, two
  // passes) and the parallel row loop.
  const int64_t rows = 5000, D = 16;
  const auto sources = threeSources<float>(rows, D, 800, 5);
  for (const OptCase &c : allOptimizers(0.01))
    expectUpdateMatchesChain(c.params, rows, D, sources, c.name);
}

TEST(EmbeddingUpdate, NoWeightDecayAndDouble) {
  const int64_t rows = 300, D = 7;
  const auto sources = threeSources<double>(rows, D, 200, 6);
  for (const OptCase &c : allOptimizers(0.0))
    expectUpdateMatchesChain(c.params, rows, D, sources, c.name);
}

TEST(EmbeddingUpdate, GlobalDecayDecaysEveryRowAsSparseUpdate) {
  for (int64_t B : {int64_t(5), int64_t(900)}) {
    const int64_t rows = 3000, D = 8;
    const auto sources = threeSources<float>(rows, D, B, 4);
    for (const OptCase &c : allOptimizers(0.05)) {
      if (c.name != "sgd" && c.name != "adamw")
        continue;
      OptimizerParams p = c.params;
      p.globalDecay = true;
      expectUpdateMatchesChain(p, rows, D, sources, c.name + " global, B " + std::to_string(B));
    }
  }
}

TEST(EmbeddingUpdate, NoIdsStillAppliesGlobalDecay) {
  OptimizerParams p;
  p.weightDecay = 0.1;
  p.globalDecay = true;
  SourceData<float> empty = bagSource<float>(0, 10, 3, 3, 2, Pooling::Sum, false, 5);
  empty.offsets.assign(4, 0);
  empty.ids.clear();
  expectUpdateMatchesChain<float>(p, 10, 2, {empty}, "empty bags");
  TableState<float> t = makeTable<float>(p, 10, 2, 1), before = t;
  fusedUpdate<float>(p, 1, t, 10, 2, {empty});
  EXPECT_FLOAT_EQ(t.w[3], before.w[3] * float(1 - 0.1 * 0.01 * kLrScale));
}

TEST(EmbeddingUpdate, TableBatchWithMembersAtRowOffsets) {
  // Member A: rows [0, 300); member B: rows [300, 5000) of one batch buffer.
  const int64_t rowsA = 300, rowsB = 4700, rows = rowsA + rowsB, D = 6;
  const std::vector<SourceData<float>> sources = {
      bagSource<float>(0, rowsA, 700, 4, D, Pooling::Sum, true, 31),
      bagSource<float>(rowsA, rowsB, 700, 6, D, Pooling::Mean, false, 32),
      rowsSource<float>(0, rowsA, 500, D, 33),
      bagSource<float>(rowsA, rowsB, 50, 3, D, Pooling::Sum, false, 34)};
  for (const OptCase &c : allOptimizers(0.01))
    expectUpdateMatchesChain(c.params, rows, D, sources, c.name + " batch");
}

TEST(EmbeddingUpdate, HugeTableUsesWideKeys) {
  // 2^60 rows leave too few bits for the contribution index in 64, so the
  // keys are 128-bit (small: std::sort; large: radix passes, most skipped).
  // Only the addressed rows (< 64) are touched, so a small buffer backs the
  // table (no global decay, which would visit every row).
  const int64_t rows = int64_t(1) << 60, used = 64, D = 4;
  for (int64_t B : {int64_t(10), int64_t(1500)}) {
    for (const OptCase &c : allOptimizers(0.01)) {
      if (c.name == "rowwise_adagrad")
        continue; // its state0 has one entry per row: 2^60 entries
      std::vector<SourceData<float>> sources = {
          bagSource<float>(0, used, B, 5, D, Pooling::Sum, false, 41),
          rowsSource<float>(0, used, B, D, 42)};
      for (auto &s : sources)
        s.rows = rows; // the ids' range check is against the whole table
      TableState<float> fused = makeTable<float>(c.params, used, D, 7), chain = fused;
      referenceUpdate(c.params, 1, chain, rows, D, sources);
      fusedUpdate(c.params, 1, fused, rows, D, sources);
      expectBitEqual(fused.w, chain.w, c.name + " wide keys, B " + std::to_string(B));
      expectBitEqual(fused.s0, chain.s0, c.name + " wide keys state0");
    }
  }
}

TEST(EmbeddingUpdate, ThreeRadixPassesOverALongTable) {
  // 2^22 + 5 rows: 23 row bits, three radix passes.
  const int64_t rows = (int64_t(1) << 22) + 5, D = 1;
  std::vector<SourceData<float>> sources = {
      bagSource<float>(0, rows, 2000, 4, D, Pooling::Sum, true, 51)};
  sources[0].ids.back() = rows - 1;
  OptimizerParams p;
  p.lr = 0.1;
  expectUpdateMatchesChain(p, rows, D, sources, "long table");
}

TEST(EmbeddingUpdate, ResultDoesNotDependOnThreadCount) {
  const int64_t rows = 2000, D = 16;
  const auto sources = threeSources<float>(rows, D, 900, 6);
  OptimizerParams p;
  p.kind = OptimizerKind::Lamb;
  p.lr = 0.01;
  const int threads = teamSize();
  TableState<float> one = makeTable<float>(p, rows, D, 3), three = one;
  setTeamSize(1);
  fusedUpdate(p, 1, one, rows, D, sources);
  setTeamSize(3);
  fusedUpdate(p, 1, three, rows, D, sources);
  setTeamSize(threads);
  expectBitEqual(one.w, three.w, "table");
  expectBitEqual(one.s0, three.s0, "state0");
  expectBitEqual(one.s1, three.s1, "state1");
}

TEST(EmbeddingUpdate, OutOfRangeIdThrowsBeforeWriting) {
  const int64_t rowsA = 30, rowsB = 50, D = 3;
  std::vector<SourceData<float>> sources = {
      bagSource<float>(0, rowsA, 20, 3, D, Pooling::Sum, false, 61),
      bagSource<float>(rowsA, rowsB, 20, 3, D, Pooling::Sum, false, 62)};
  // Row 30 exists in the batch but not in member A.
  sources[0].ids[4] = rowsA;
  sources[1].ids[2] = -3;
  OptimizerParams p;
  p.weightDecay = 0.1; // global decay must not have run either
  TableState<float> t = makeTable<float>(p, rowsA + rowsB, D, 5), before = t;
  auto update = [&] { fusedUpdate(p, 1, t, rowsA + rowsB, D, sources); };
  expectIdOutOfRange(update, 0, 4, rowsA, rowsA);
  expectBitEqual(t.w, before.w, "table after the error");

  sources[0].ids[4] = 0;
  expectIdOutOfRange(update, 1, 2, -3);
  expectBitEqual(t.w, before.w, "table after the second error");
}

TEST(EmbeddingUpdate, InconsistentOperandsAreRefused) {
  const int64_t rows = 20, D = 2;
  OptimizerParams p;
  TableState<float> t = makeTable<float>(p, rows, D, 1);
  auto refused = [&](std::vector<SourceData<float>> sources, const OptimizerParams &params) {
    TableState<float> state = makeTable<float>(params, rows, D, 1);
    EXPECT_THROW(fusedUpdate(params, 1, state, rows, D, sources), std::invalid_argument);
  };
  auto bag = [&] { return bagSource<float>(0, rows, 5, 3, D, Pooling::Sum, false, 71); };

  auto maxPool = bag();
  maxPool.pooling = Pooling::Max;
  refused({maxPool}, p);
  auto shortBags = bag(); // the bags leave the last id out
  shortBags.offsets.back() -= 1;
  refused({shortBags}, p);
  auto outside = bag(); // a source past the end of the table
  outside.rowOffset = 5;
  refused({outside}, p);
  OptimizerParams adam;
  adam.kind = OptimizerKind::Adam;
  adam.weightDecay = 0.1;
  adam.globalDecay = true; // only sgd without momentum and adamw decay globally
  refused({bag()}, adam);
  EXPECT_THROW(
      (void)embeddingUpdate<float>(adam, 1, 1.0, 1.0, t.w.data(), rows, D, nullptr, 0, nullptr, nullptr),
      std::invalid_argument); // adam without its moments
}

} // namespace
} // namespace embc::runtime::cpu
