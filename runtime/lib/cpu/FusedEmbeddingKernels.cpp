//===- FusedEmbeddingKernels.cpp - fused lookup and backward+update -------===//
//
// fusedLookup runs the bags of every member table in one parallel region
// (one fork/join per step instead of one per table) with lookupForward's
// per-bag arithmetic, hashing ids on the fly.
//
// embeddingUpdate is the embedding backward fused with the sparse optimizer
// step. Instead of writing one gradient row per id and then sorting those
// rows (lookupGrad + accumulate_rows + coalesceRows), it sorts 8- or 16-byte
// keys: (row, contribution index) packed into one integer. A stable LSD radix
// sort on the row bits keeps contributions of a row in (source, position)
// order, so each distinct row can rebuild its gradient from dy (or the
// values) in exactly coalesceRows' order and arithmetic and take
// sparseUpdate's step (OptimizerRow.h) while the row is in cache. Distinct
// rows are independent, so they run in parallel and the result does not
// depend on the thread count. All scratch is per thread and reused.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/FusedEmbeddingKernels.h"
#include "embc/runtime/cpu/Parallel.h"

#include "KernelSupport.h"
#include "OptimizerRow.h"

#include "embc/runtime/cpu/IdHash.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

namespace embc::runtime::cpu {

using detail::kParallelWork;

IdOutOfRange::IdOutOfRange(size_t operand, int64_t position, int64_t id, int64_t rows)
    : std::out_of_range("id " + std::to_string(id) + " (operand " + std::to_string(operand) +
                        ", position " + std::to_string(position) + ") is outside [0, " +
                        std::to_string(rows) + ")"),
      operand(operand), position(position), id(id), rows(rows) {}

namespace {

/// hashIds for one id (IdHash.h).
inline int64_t hashId(int64_t id, uint64_t buckets, uint64_t seed) {
  return static_cast<int64_t>(idHash(id, seed) % buckets);
}

/// Throws std::invalid_argument unless bags [offsets[b], offsets[b+1]) are
/// valid ranges inside the n ids.
void checkBags(const int64_t *offsets, int64_t B, int64_t n, const char *where, size_t operand) {
  const std::string at = std::string(where) + ": operand " + std::to_string(operand);
  if (B < 0 || n < 0)
    throw std::invalid_argument(at + " has " + std::to_string(B) + " bags and " +
                                std::to_string(n) + " ids");
  for (int64_t b = 0; b < B; ++b)
    if (offsets[b] < 0 || offsets[b + 1] < offsets[b])
      throw std::invalid_argument(at + ": bag " + std::to_string(b) + " has offsets [" +
                                  std::to_string(offsets[b]) + ", " +
                                  std::to_string(offsets[b + 1]) + "), not a valid range");
  if (B > 0 && offsets[B] > n)
    throw std::invalid_argument(at + ": the bags end at id " + std::to_string(offsets[B]) +
                                " but there are only " + std::to_string(n) + " ids");
}

/// The first bad id in (operand, position) order among those recorded.
struct FirstBad {
  size_t operand = std::numeric_limits<size_t>::max();
  int64_t position = 0;
  bool found() const { return operand != std::numeric_limits<size_t>::max(); }
  void record(size_t op, int64_t pos) {
    if (!found() || op < operand || (op == operand && pos < position)) {
      operand = op;
      position = pos;
    }
  }
};

// --- fusedLookup ------------------------------------------------------------------

/// Bags per work item: enough to amortise the dynamic schedule, few enough
/// that a member with a small batch still spreads over threads.
constexpr int64_t kBagBlock = 32;
/// Element operations below which a fused embedding kernel runs on one
/// thread. Higher than the plain kernels' kParallelWork: a fused kernel
/// gathers the work of many small ones, and a fork/join costs tens of
/// microseconds when a core is shared with the data-loading thread (measured
/// on the MF example, batch 256: two threads were 3x slower than one).
constexpr int64_t kFusedParallelWork = 8 * kParallelWork;

template <class T> inline int64_t resolveId(const LookupMember<T> &m, int64_t i) {
  return m.hash ? hashId(m.ids[i], uint64_t(m.buckets), m.seed) : m.ids[i];
}

/// How many ids ahead of the one being pooled the pooling loops prefetch
/// table rows: a row costs a cache miss (the tables of dlrm_small are 16 MB,
/// its ids random), and ~8 misses in flight hide most of the latency.
constexpr int64_t kPrefetchAhead = 8;
/// Tables smaller than this stay in L2: prefetching their rows only costs
/// instructions (two_tower's lookup ran twice as slow with it).
constexpr int64_t kPrefetchTableBytes = int64_t(1) << 20;

/// Asks for table row `id` (D values) to be brought into cache.
template <class T> inline void prefetchRow(const T *table, int64_t D, int64_t id) {
  const char *row = reinterpret_cast<const char *>(table + id * D);
  for (int64_t at = 0; at < D * int64_t(sizeof(T)); at += 64)
    __builtin_prefetch(row + at, 0, 1);
}

/// One bag, as lookupForward computes it. `bagIds` are the resolved (hashed)
/// ids of the bag, all in range. `ahead(i)` is called before id i is read
/// (the caller prefetches the rows of later ids there).
template <class T, class Ahead>
inline void poolBag(const LookupMember<T> &m, const int64_t *__restrict bagIds, int64_t begin,
                    int64_t end, T *__restrict out, Ahead &&ahead) {
  const int64_t D = m.D;
  auto weightOf = [&](int64_t i) { return m.weights ? m.weights[i] : T(1); };
  if (m.pooling == Pooling::Max) {
    // Ties keep the first id (lookupForward's rule, credited by lookupGrad).
    ahead(begin);
    const T w0 = weightOf(begin);
    const T *__restrict first = m.table + bagIds[0] * D;
    for (int64_t j = 0; j < D; ++j)
      out[j] = w0 * first[j];
    for (int64_t i = begin + 1; i < end; ++i) {
      ahead(i);
      const T w = weightOf(i);
      const T *__restrict row = m.table + bagIds[i - begin] * D;
      for (int64_t j = 0; j < D; ++j) {
        const T v = w * row[j];
        out[j] = v > out[j] ? v : out[j];
      }
    }
    return;
  }
  for (int64_t i = begin; i < end; ++i) {
    ahead(i);
    detail::axpy(weightOf(i), m.table + bagIds[i - begin] * D, out, D);
  }
  if (m.pooling == Pooling::Mean) {
    const T inv = T(1) / T(end - begin);
    for (int64_t j = 0; j < D; ++j)
      out[j] *= inv;
  }
}

} // namespace

template <class T> void fusedLookup(const LookupMember<T> *members, size_t count) {
  // Work item w of member m covers bags [kBagBlock * (w - firstItem[m]), ...).
  thread_local std::vector<int64_t> firstItem;
  firstItem.assign(count + 1, 0);
  int64_t work = 0;
  FirstBad bad;
  for (size_t m = 0; m < count; ++m) {
    const LookupMember<T> &mb = members[m];
    if (mb.hash && mb.buckets <= 0)
      throw std::invalid_argument("fusedLookup: member " + std::to_string(m) + " hashes into " +
                                  std::to_string(mb.buckets) + " buckets (must be positive)");
    checkBags(mb.offsets, mb.B, mb.n, "fusedLookup", m);
    firstItem[m + 1] = firstItem[m] + (mb.B + kBagBlock - 1) / kBagBlock;
    work += (mb.n + mb.B) * mb.D;
    // Ids outside every bag (normally none) still get hashed and checked,
    // as hash + lookup would.
    auto outsideBags = [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t id = resolveId(mb, i);
        if (mb.hash && mb.hashedIds)
          mb.hashedIds[i] = id;
        if (id < 0 || id >= mb.rows)
          bad.record(m, i);
      }
    };
    outsideBags(0, mb.B > 0 ? mb.offsets[0] : mb.n);
    outsideBags(mb.B > 0 ? mb.offsets[mb.B] : mb.n, mb.n);
  }

  const int64_t items = firstItem[count];
  const int64_t *first = firstItem.data();
  std::mutex badMutex;
  parallelForDynamic(items, 1, work > kFusedParallelWork, [&](int64_t item) {
    const size_t m = size_t(std::upper_bound(first, first + count + 1, item) - first - 1);
    const LookupMember<T> &mb = members[m];
    const int64_t b0 = (item - first[m]) * kBagBlock, b1 = std::min(mb.B, b0 + kBagBlock);
    // The block's ids, resolved (hashed) first so their rows can be
    // prefetched while earlier bags are pooled.
    const int64_t i0 = mb.offsets[b0], i1 = mb.offsets[b1];
    const int64_t *ids = mb.ids;
    if (mb.hash) {
      thread_local std::vector<int64_t> hashed; // when the member keeps no hashed ids
      int64_t *dst = mb.hashedIds;
      if (!dst) {
        if (int64_t(hashed.size()) < i1 - i0)
          hashed.resize(size_t(i1 - i0));
        dst = hashed.data() - i0;
      }
      for (int64_t i = i0; i < i1; ++i)
        dst[i] = hashId(mb.ids[i], uint64_t(mb.buckets), mb.seed);
      ids = dst;
    }
    auto inRange = [&](int64_t id) { return id >= 0 && id < mb.rows; };
    const bool prefetch = mb.rows * mb.D * int64_t(sizeof(T)) > kPrefetchTableBytes;
    if (prefetch)
      for (int64_t i = i0; i < std::min(i1, i0 + kPrefetchAhead); ++i)
        if (inRange(ids[i]))
          prefetchRow(mb.table, mb.D, ids[i]);
    auto ahead = [&](int64_t i) {
      if (prefetch && i + kPrefetchAhead < i1 && inRange(ids[i + kPrefetchAhead]))
        prefetchRow(mb.table, mb.D, ids[i + kPrefetchAhead]);
    };
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t begin = mb.offsets[b], end = mb.offsets[b + 1];
      T *__restrict out = mb.y + b * mb.D;
      detail::fillZero(out, mb.D);
      if (begin == end)
        continue; // an empty bag pools to zeros
      int64_t badAt = -1;
      for (int64_t i = begin; i < end; ++i)
        if (!inRange(ids[i])) {
          badAt = i;
          break;
        }
      if (badAt >= 0) {
        // Never read outside the table: the bag stays zero and the call
        // throws once the region is done.
        std::lock_guard<std::mutex> hold(badMutex);
        bad.record(m, badAt);
        continue;
      }
      poolBag(mb, ids + begin, begin, end, out, ahead);
    }
  });
  if (bad.found()) {
    const LookupMember<T> &mb = members[bad.operand];
    throw IdOutOfRange(bad.operand, bad.position, resolveId(mb, bad.position), mb.rows);
  }
}

// --- embeddingUpdate ------------------------------------------------------------------

namespace {

/// Number of bits needed to write x (0 for 0).
inline int bitWidth(uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }

__extension__ typedef unsigned __int128 Key128;

/// Radix digits of at most this many bits: a 2^11-entry histogram per chunk
/// stays in L1, and tables up to 4M rows sort in two passes.
constexpr int kMaxDigitBits = 11;
/// Keys per chunk of the parallel radix passes and the segment scan.
constexpr int64_t kSortChunk = 16384;
/// Gradient rows (dy and rows sources) up to this many bytes are read in
/// row order in one pass: they stay in L2. Above it embedding_update builds
/// the row sums in a second pass in contribution order (dy read in order).
constexpr int64_t kCachedGradientBytes = int64_t(512) << 10;
/// Below this many keys std::sort on the whole key (distinct, since the
/// contribution index is in it) is faster than radix passes.
constexpr int64_t kRadixMin = 4096;

/// Per-thread scratch, reused across calls so a step does not allocate.
template <class Key> struct Scratch {
  std::vector<Key> keys, tmp;
  std::vector<uint32_t> bagOf;  ///< per contribution of a bag source: its bag
  std::vector<uint32_t> srcOf;  ///< per contribution: its source
  std::vector<uint32_t> slotOf; ///< per contribution: its distinct row
  std::vector<int64_t> hist;    ///< radix histograms, chunk-major
  std::vector<int64_t> segment; ///< first sorted key of each distinct row, then N
  std::vector<int64_t> chunkCount;
};
template <class Key> Scratch<Key> &scratch() {
  thread_local Scratch<Key> s;
  return s;
}

inline int chunksFor(int64_t n) {
  return int(std::clamp<int64_t>(n / kSortChunk, 1, teamSize()));
}

/// Stable LSD radix sort of N keys on bits [shift, shift + bits). Returns
/// the buffer holding the result (keys or tmp). Stability keeps the order of
/// the low (contribution) bits within equal rows. A chunk's keys of digit d
/// go after the smaller digits and after earlier chunks' keys of digit d, so
/// the output is the unique stable order whatever the chunk count.
template <class Key>
Key *radixSort(Key *keys, Key *tmp, int64_t N, int shift, int bits, std::vector<int64_t> &hist) {
  if (bits == 0)
    return keys;
  const int passes = (bits + kMaxDigitBits - 1) / kMaxDigitBits;
  const int digitBits = (bits + passes - 1) / passes;
  const int64_t radix = int64_t(1) << digitBits;
  const uint64_t mask = uint64_t(radix - 1);
  const int chunks = chunksFor(N);
  hist.resize(size_t(chunks * radix));
  int64_t *h = hist.data();
  for (int pass = 0; pass < passes; ++pass) {
    const int at = shift + pass * digitBits;
    parallelRegion(chunks, [&](int c, int) {
      int64_t *hc = h + c * radix;
      std::fill(hc, hc + radix, int64_t(0));
      for (int64_t i = N * c / chunks, end = N * (c + 1) / chunks; i < end; ++i)
        ++hc[uint64_t(keys[i] >> at) & mask];
    });
    int64_t total = 0;
    bool oneDigit = false;
    for (int64_t d = 0; d < radix; ++d) {
      int64_t digitCount = 0;
      for (int c = 0; c < chunks; ++c) {
        const int64_t k = h[c * radix + d];
        h[c * radix + d] = total;
        total += k;
        digitCount += k;
      }
      oneDigit = oneDigit || digitCount == N;
    }
    if (oneDigit)
      continue; // every key has this digit: the pass would move nothing
    parallelRegion(chunks, [&](int c, int) {
      int64_t *hc = h + c * radix;
      for (int64_t i = N * c / chunks, end = N * (c + 1) / chunks; i < end; ++i)
        tmp[hc[uint64_t(keys[i] >> at) & mask]++] = keys[i];
    });
    std::swap(keys, tmp);
  }
  return keys;
}

/// Where each run of equal rows starts in the sorted keys: fills `segment`
/// with the run starts and N; returns the number of distinct rows.
template <class Key>
int64_t findSegments(const Key *sorted, int64_t N, int idxBits, Scratch<Key> &s) {
  auto newRow = [&](int64_t i) {
    return i == 0 || (sorted[i] >> idxBits) != (sorted[i - 1] >> idxBits);
  };
  const int chunks = chunksFor(N);
  s.chunkCount.assign(size_t(chunks) + 1, 0);
  int64_t *count = s.chunkCount.data();
  parallelRegion(chunks, [&](int c, int) {
    int64_t k = 0;
    for (int64_t i = N * c / chunks, end = N * (c + 1) / chunks; i < end; ++i)
      k += newRow(i);
    count[c + 1] = k;
  });
  for (int c = 0; c < chunks; ++c)
    count[c + 1] += count[c];
  const int64_t distinct = count[chunks];
  s.segment.resize(size_t(distinct) + 1);
  int64_t *segment = s.segment.data();
  parallelRegion(chunks, [&](int c, int) {
    int64_t at = count[c];
    for (int64_t i = N * c / chunks, end = N * (c + 1) / chunks; i < end; ++i)
      if (newRow(i))
        segment[at++] = i;
  });
  segment[distinct] = N;
  return distinct;
}

/// acc = s * g (a copy when s is 1: the same bits), a row's first
/// contribution.
template <class T> inline void setScaled(T *__restrict acc, T s, const T *__restrict g, int64_t D) {
  if (s == T(1)) {
    std::memcpy(acc, g, sizeof(T) * size_t(D));
    return;
  }
  for (int64_t j = 0; j < D; ++j)
    acc[j] = s * g[j];
}

/// acc += round(s * g), rounding the product to T as lookupGrad does when it
/// stores the per-id row. The product goes through `tmp` so the compiler
/// cannot contract the two operations into one fused multiply-add (which
/// would round once and break bit-identity with the unfused chain).
template <class T>
inline void addScaled(T *__restrict acc, T s, const T *__restrict g, T *__restrict tmp, int64_t D) {
  if (s == T(1)) { // sum pooling without weights, or a rows source: no product
    for (int64_t j = 0; j < D; ++j)
      acc[j] += g[j];
    return;
  }
  for (int64_t j = 0; j < D; ++j)
    tmp[j] = s * g[j];
  for (int64_t j = 0; j < D; ++j)
    acc[j] += tmp[j];
}

/// The sort, the per-row sums and the optimizer step, with keys of type Key
/// (uint64_t when row and contribution bits fit in 64, else 128 bits).
/// Returns the first row left not finite (embeddingUpdate), or -1.
template <class Key, class T>
int64_t sortedUpdate(const OptimizerParams &p, detail::Hyper<T> h, T *table, int64_t rows, int64_t D,
                  const GradSource<T> *sources, size_t count, const int64_t *sourceStart, T *state0,
                  T *state1) {
  const int64_t N = sourceStart[count];
  const int idxBits = bitWidth(uint64_t(N - 1));
  const int rowBits = bitWidth(uint64_t(std::max<int64_t>(rows, 1) - 1));
  const Key idxMask = (Key(1) << idxBits) - 1;
  Scratch<Key> &s = scratch<Key>();
  s.keys.resize(size_t(N));
  s.tmp.resize(size_t(N));
  Key *keys = s.keys.data();
  bool anyBag = false;
  for (size_t k = 0; k < count; ++k)
    anyBag = anyBag || sources[k].kind == GradSource<T>::Kind::Bag;
  if (anyBag)
    s.bagOf.resize(size_t(N));
  uint32_t *bagOf = s.bagOf.data();
  s.srcOf.resize(size_t(N));
  uint32_t *srcOf = s.srcOf.data();

  // Keys (row + offset, contribution) in contribution order; bad ids are
  // found here, before anything is written.
  // Each thread records the first bad contribution of its range; the
  // smallest over threads is the first overall.
  std::vector<int64_t> badOf(size_t(teamSize()), N);
  for (size_t k = 0; k < count; ++k) {
    const GradSource<T> &src = sources[k];
    const int64_t base = sourceStart[k], limit = src.rows, offset = src.rowOffset;
    const int64_t *ids = src.ids;
    auto key = [&](int64_t i) {
      return (Key(uint64_t(ids[i] + offset)) << idxBits) | Key(uint64_t(base + i));
    };
    if (src.kind == GradSource<T>::Kind::Bag) {
      const int64_t *offsets = src.offsets;
      parallelRegion(src.n > kParallelWork ? teamSize() : 1, [&](int t, int threads) {
        const int64_t chunk = (src.B + threads - 1) / threads;
        for (int64_t b = t * chunk, bEnd = std::min(src.B, b + chunk); b < bEnd; ++b)
          for (int64_t i = offsets[b]; i < offsets[b + 1]; ++i) {
            if (ids[i] < 0 || ids[i] >= limit) {
              badOf[size_t(t)] = std::min(badOf[size_t(t)], base + i);
              continue;
            }
            keys[base + i] = key(i);
            bagOf[base + i] = uint32_t(b);
            srcOf[base + i] = uint32_t(k);
          }
      });
    } else {
      parallelRegion(src.n > kParallelWork ? teamSize() : 1, [&](int t, int threads) {
        const int64_t chunk = (src.n + threads - 1) / threads;
        for (int64_t i = t * chunk, iEnd = std::min(src.n, i + chunk); i < iEnd; ++i) {
          if (ids[i] < 0 || ids[i] >= limit) {
            badOf[size_t(t)] = std::min(badOf[size_t(t)], base + i);
            continue;
          }
          keys[base + i] = key(i);
          srcOf[base + i] = uint32_t(k);
        }
      });
    }
  }
  const int64_t firstBad = *std::min_element(badOf.begin(), badOf.end());
  if (firstBad < N) {
    size_t k = 0;
    while (firstBad >= sourceStart[k + 1])
      ++k;
    const int64_t i = firstBad - sourceStart[k];
    throw IdOutOfRange(k, i, sources[k].ids[i], sources[k].rows);
  }

  // Ascending rows, (source, position) order within a row.
  const Key *sorted;
  if (N < kRadixMin) {
    std::sort(keys, keys + N);
    sorted = keys;
  } else {
    sorted = radixSort(keys, s.tmp.data(), N, idxBits, rowBits, s.hist);
  }
  const int64_t distinct = findSegments(sorted, N, idxBits, s);
  const int64_t *segment = s.segment.data();
  // The table row of distinct row r (-1 stays -1).
  auto rowOf = [&](int64_t r) {
    return r < 0 ? r : int64_t(uint64_t(sorted[segment[r]] >> idxBits));
  };

  const int64_t decayed = detail::applyGlobalDecay(p, h, table, rows, D, "embeddingUpdate");
  if (decayed >= 0)
    return decayed;
  detail::LowestIndex bad; // the distinct row's index r: rows ascend with r

  // Where contribution c's gradient row starts, and its scale.
  auto gradientOf = [&](int64_t c, T &scale) -> const T * {
    const GradSource<T> &src = sources[srcOf[c]];
    const int64_t i = c - sourceStart[srcOf[c]];
    if (src.kind == GradSource<T>::Kind::Rows) {
      scale = T(1);
      return src.values + i * D;
    }
    // lookupGrad's per-id row: dy[b] * (weight / bag size for mean).
    const int64_t b = bagOf[c], size = src.offsets[b + 1] - src.offsets[b];
    const T mean = src.pooling == Pooling::Mean && size > 0 ? T(1) / T(size) : T(1);
    scale = mean * (src.weights ? src.weights[i] : T(1));
    return src.dy + b * D;
  };
  // The gradient rows the contributions read: dy (B x D per bag source) or
  // the rows themselves. When they fit in the cache, one walk in row order
  // is the cheapest (each distinct row summed and stepped while in cache);
  // when they do not, that walk's reads of dy are cache misses and the row
  // sums are built in two passes instead (twoPassUpdate). Both add the same
  // values in the same order.
  int64_t gradientBytes = 0;
  for (size_t k = 0; k < count; ++k)
    gradientBytes += (sources[k].kind == GradSource<T>::Kind::Bag ? sources[k].B : sources[k].n) *
                     D * int64_t(sizeof(T));
  const bool parallel = N * D > kFusedParallelWork;
  if (gradientBytes <= kCachedGradientBytes || N >= (int64_t(1) << 31)) {
    parallelForDynamic(distinct, 64, parallel, [&](int64_t r) {
      thread_local std::vector<T> rowScratch;
      if (rowScratch.size() < size_t(2 * D))
        rowScratch.resize(size_t(2 * D));
      T *acc = rowScratch.data(), *tmp = acc + D;
      for (int64_t q = segment[r]; q < segment[r + 1]; ++q) {
        T sc;
        const T *g = gradientOf(int64_t(uint64_t(sorted[q] & idxMask)), sc);
        if (q == segment[r])
          setScaled(acc, sc, g, D);
        else
          addScaled(acc, sc, g, tmp, D);
      }
      const int64_t row = int64_t(uint64_t(sorted[segment[r]] >> idxBits));
      if (!detail::tableRowStep(p.kind, h, table, row, D, acc, state0, state1))
        bad.report(r);
    });
    return rowOf(bad.get());
  }

  // Two passes over the distinct rows, each thread owning a range of them:
  //  1. the row sums, built in contribution order: each thread walks the
  //     contributions as the sources hold them (their gradient rows are then
  //     read in order, not at random as a walk in row order would) and adds
  //     those of its rows into a compact buffer. Contribution order within a
  //     row is the sorted order (the sort is stable), so the sums are
  //     coalesceRows' bit for bit;
  //  2. the optimizer step of each row from its sum, rows in ascending
  //     order with the rows ahead prefetched.
  // slotOf[c] is c's distinct row, with the top bit set on a row's first
  // contribution.
  constexpr uint32_t kFirst = uint32_t(1) << 31;
  s.slotOf.resize(size_t(N));
  uint32_t *slotOf = s.slotOf.data();
  thread_local std::vector<T> sumsBuffer;
  if (sumsBuffer.size() < size_t(distinct * D + D))
    sumsBuffer.resize(size_t(distinct * D + D));
  T *sums = sumsBuffer.data();
  parallelFor(distinct, parallel, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t q = segment[r]; q < segment[r + 1]; ++q)
        slotOf[uint64_t(sorted[q] & idxMask)] = uint32_t(r) | (q == segment[r] ? kFirst : 0);
  });
  parallelFor(distinct, parallel, [&](int64_t r0, int64_t r1) {
    thread_local std::vector<T> tmpScratch;
    if (tmpScratch.size() < size_t(D))
      tmpScratch.resize(size_t(D));
    T *tmp = tmpScratch.data();
    const bool all = r0 == 0 && r1 == distinct;
    for (int64_t c = 0; c < N; ++c) {
      const int64_t r = slotOf[c] & ~kFirst;
      if (!all && (r < r0 || r >= r1))
        continue;
      T sc;
      const T *g = gradientOf(c, sc);
      if (slotOf[c] & kFirst)
        setScaled(sums + r * D, sc, g, D);
      else
        addScaled(sums + r * D, sc, g, tmp, D);
    }
  });
  const bool rowwise = p.kind == OptimizerKind::RowwiseAdagrad;
  constexpr int64_t kRowsAhead = 8;
  parallelFor(distinct, parallel, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (r + kRowsAhead < r1) {
        const int64_t ahead = int64_t(uint64_t(sorted[segment[r + kRowsAhead]] >> idxBits));
        prefetchRow(table, D, ahead);
        if (state0)
          rowwise ? __builtin_prefetch(state0 + ahead, 1, 1) : prefetchRow(state0, D, ahead);
        if (state1)
          prefetchRow(state1, D, ahead);
      }
      const int64_t row = int64_t(uint64_t(sorted[segment[r]] >> idxBits));
      if (!detail::tableRowStep(p.kind, h, table, row, D, sums + r * D, state0, state1))
        bad.report(r);
    }
  });
  return rowOf(bad.get());
}

} // namespace

template <class T>
int64_t embeddingUpdate(const OptimizerParams &p, int64_t step, double lrScale, double gradScale,
                        T *table, int64_t rows, int64_t D, const GradSource<T> *sources,
                        size_t count, T *state0, T *state1) {
  detail::Hyper<T> h = detail::makeHyper<T>(p, step, lrScale, gradScale, "embeddingUpdate");
  detail::checkStates(p, state0, state1, "embeddingUpdate");
  if (rows < 0 || D <= 0)
    throw std::invalid_argument("embeddingUpdate: table of " + std::to_string(rows) + " rows x " +
                                std::to_string(D));

  thread_local std::vector<int64_t> sourceStart;
  sourceStart.assign(count + 1, 0);
  for (size_t k = 0; k < count; ++k) {
    const GradSource<T> &src = sources[k];
    const std::string at = "embeddingUpdate: source " + std::to_string(k);
    if (src.rowOffset < 0 || src.rows < 0 || src.rowOffset + src.rows > rows)
      throw std::invalid_argument(at + " addresses rows [" + std::to_string(src.rowOffset) + ", " +
                                  std::to_string(src.rowOffset + src.rows) + ") of a table of " +
                                  std::to_string(rows) + " rows");
    if (src.kind == GradSource<T>::Kind::Bag) {
      if (src.pooling == Pooling::Max)
        throw std::invalid_argument(at + ": max pooling is not supported (its gradient "
                                         "reads the table, which the update changes)");
      if (src.B > int64_t(std::numeric_limits<uint32_t>::max()))
        throw std::invalid_argument(at + " has " + std::to_string(src.B) + " bags");
      checkBags(src.offsets, src.B, src.n, "embeddingUpdate", k);
      // Ids outside every bag would have no gradient row (the unfused chain
      // appends stale values for them), so a plan must not produce them.
      const int64_t lo = src.B > 0 ? src.offsets[0] : 0, hi = src.B > 0 ? src.offsets[src.B] : 0;
      if (lo != 0 || hi != src.n)
        throw std::invalid_argument(at + ": the bags cover ids [" + std::to_string(lo) + ", " +
                                    std::to_string(hi) + ") but there are " +
                                    std::to_string(src.n) + " ids");
    } else if (src.n < 0) {
      throw std::invalid_argument(at + " has " + std::to_string(src.n) + " ids");
    }
    sourceStart[k + 1] = sourceStart[k] + src.n;
  }

  const int64_t N = sourceStart[count];
  if (N == 0) { // no gradient: only the global decay, as sparseUpdate with no rows
    return detail::applyGlobalDecay(p, h, table, rows, D, "embeddingUpdate");
  }
  const int bits = bitWidth(uint64_t(N - 1)) + bitWidth(uint64_t(std::max<int64_t>(rows, 1) - 1));
  if (bits <= 64)
    return sortedUpdate<uint64_t>(p, h, table, rows, D, sources, count, sourceStart.data(), state0,
                           state1);
  return sortedUpdate<Key128>(p, h, table, rows, D, sources, count, sourceStart.data(), state0, state1);
}

// --- Explicit instantiations ------------------------------------------------

#define EMBC_INSTANTIATE_FUSED_EMBEDDING(T)                                                        \
  template void fusedLookup<T>(const LookupMember<T> *, size_t);                                   \
  template int64_t embeddingUpdate<T>(const OptimizerParams &, int64_t, double, double, T *,      \
                                      int64_t, int64_t, const GradSource<T> *, size_t, T *, T *);

EMBC_INSTANTIATE_FUSED_EMBEDDING(float)
EMBC_INSTANTIATE_FUSED_EMBEDDING(double)

#undef EMBC_INSTANTIATE_FUSED_EMBEDDING

} // namespace embc::runtime::cpu
