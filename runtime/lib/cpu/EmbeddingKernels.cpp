//===- EmbeddingKernels.cpp - hashing, pooled lookups, sparse gradients ---===//
//
// The table side of the kernel catalogue: feature hashing (XXH64, so ids
// hash the same on every machine and in the compiler's tests), pooled and
// plain lookups, their per-id gradient rows, and the coalescing of those rows
// into one summed row per distinct table row before the sparse optimizer
// update. Bags are independent, so lookups are parallel over the batch.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/Kernels.h"

#include "KernelSupport.h"

#include "embc/runtime/cpu/IdHash.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

namespace embc::runtime::cpu {

using detail::checkOffsets;
using detail::kParallelWork;

// --- Hashing ------------------------------------------------------------------

void hashIds(const int64_t *ids, int64_t *out, int64_t n, int64_t buckets, uint64_t seed) {
  if (buckets <= 0)
    throw std::invalid_argument("hashIds: bucket count " + std::to_string(buckets) +
                                " must be positive");
  parallelFor(n, n > kParallelWork / 16, [&](int64_t iBegin, int64_t iEnd) {
    for (int64_t i = iBegin; i < iEnd; ++i)
      out[i] = static_cast<int64_t>(idHash(ids[i], seed) % static_cast<uint64_t>(buckets));
  });
}

// --- Pooled lookup ------------------------------------------------------------

namespace {

/// The weight of the i-th id (1 when the lookup is unweighted).
template <class T> inline T weightOf(const T *weights, int64_t i) {
  return weights ? weights[i] : T(1);
}

} // namespace

template <class T>
void lookupForward(const T *table, int64_t D, const int64_t *ids, const int64_t *offsets,
                   const T *weights, int64_t B, Pooling pooling, T *y) {
  checkOffsets(offsets, B, "lookupForward");
  const int64_t nnz = B > 0 ? offsets[B] - offsets[0] : 0;
  parallelFor(B, (nnz + B) * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t begin = offsets[b], end = offsets[b + 1];
      T *__restrict out = y + b * D;
      detail::fillZero(out, D);
      if (begin == end)
        continue; // an empty bag pools to zeros
      if (pooling == Pooling::Max) {
        // Start from the first id; later ids win only when strictly larger,
        // so ties keep the first id (the one lookupGrad credits).
        const T w0 = weightOf(weights, begin);
        const T *__restrict first = table + ids[begin] * D;
        for (int64_t j = 0; j < D; ++j)
          out[j] = w0 * first[j];
        for (int64_t i = begin + 1; i < end; ++i) {
          const T w = weightOf(weights, i);
          const T *__restrict row = table + ids[i] * D;
          for (int64_t j = 0; j < D; ++j) {
            const T v = w * row[j];
            out[j] = v > out[j] ? v : out[j];
          }
        }
        continue;
      }
      for (int64_t i = begin; i < end; ++i)
        detail::axpy(weightOf(weights, i), table + ids[i] * D, out, D);
      if (pooling == Pooling::Mean) {
        const T inv = T(1) / T(end - begin);
        for (int64_t j = 0; j < D; ++j)
          out[j] *= inv;
      }
    }
  });
}

template <class T>
void lookupGrad(const T *table, int64_t D, const int64_t *ids, const int64_t *offsets,
                const T *weights, int64_t B, Pooling pooling, const T *dy, T *dvals) {
  checkOffsets(offsets, B, "lookupGrad");
  const int64_t nnz = B > 0 ? offsets[B] - offsets[0] : 0;
  parallelFor(B, (nnz + B) * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t begin = offsets[b], end = offsets[b + 1];
      const T *__restrict g = dy + b * D;
      if (pooling != Pooling::Max) {
        const T scale = pooling == Pooling::Mean && end > begin ? T(1) / T(end - begin) : T(1);
        for (int64_t i = begin; i < end; ++i) {
          const T s = scale * weightOf(weights, i);
          T *__restrict out = dvals + i * D;
          for (int64_t j = 0; j < D; ++j)
            out[j] = s * g[j];
        }
        continue;
      }
      for (int64_t i = begin; i < end; ++i)
        detail::fillZero(dvals + i * D, D);
      if (begin == end)
        continue;
      // Per column, the first id whose weighted value is the maximum gets
      // weight * dy; the others get nothing (same tie rule as the forward).
      for (int64_t j = 0; j < D; ++j) {
        int64_t arg = begin;
        T best = weightOf(weights, begin) * table[ids[begin] * D + j];
        for (int64_t i = begin + 1; i < end; ++i) {
          const T v = weightOf(weights, i) * table[ids[i] * D + j];
          if (v > best) {
            best = v;
            arg = i;
          }
        }
        dvals[arg * D + j] = weightOf(weights, arg) * g[j];
      }
    }
  });
}

template <class T> void gatherForward(const T *table, int64_t D, const int64_t *ids, int64_t n, T *y) {
  parallelFor(n, n * D > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
    for (int64_t i = iBegin; i < iEnd; ++i)
      std::memcpy(y + i * D, table + ids[i] * D, sizeof(T) * size_t(D));
  });
}

// --- Coalescing -----------------------------------------------------------------

template <class T> int64_t coalesceRows(int64_t *rows, T *vals, int64_t n, int64_t D) {
  if (n <= 0)
    return 0;
  // Scratch kept per thread and reused across calls: the update runs every
  // step, and a fresh multi-megabyte allocation each time costs page faults.
  thread_local std::vector<int64_t> order, segmentStart, distinctRows;
  thread_local std::vector<T> summed;

  // Sorting positions by (row, position) is a stable sort by row.
  order.resize(size_t(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::sort(order.begin(), order.end(), [rows](int64_t a, int64_t b) {
    return rows[a] != rows[b] ? rows[a] < rows[b] : a < b;
  });
  segmentStart.clear();
  distinctRows.clear();
  for (int64_t k = 0; k < n; ++k)
    if (k == 0 || rows[order[k]] != rows[order[k - 1]]) {
      segmentStart.push_back(k);
      distinctRows.push_back(rows[order[k]]);
    }
  const int64_t distinct = int64_t(segmentStart.size());
  segmentStart.push_back(n);

  // Each distinct row sums its values in their original order.
  summed.resize(size_t(distinct * D));
  const int64_t *start = segmentStart.data();
  const int64_t *perm = order.data();
  T *out = summed.data();
  parallelFor(distinct, n * D > kParallelWork, [&](int64_t sBegin, int64_t sEnd) {
    for (int64_t s = sBegin; s < sEnd; ++s) {
      T *__restrict acc = out + s * D;
      std::memcpy(acc, vals + perm[start[s]] * D, sizeof(T) * size_t(D));
      for (int64_t k = start[s] + 1; k < start[s + 1]; ++k)
        detail::axpy(T(1), vals + perm[k] * D, acc, D);
    }
  });
  std::memcpy(rows, distinctRows.data(), sizeof(int64_t) * size_t(distinct));
  std::memcpy(vals, out, sizeof(T) * size_t(distinct * D));
  return distinct;
}

// --- Explicit instantiations ------------------------------------------------

#define EMBC_INSTANTIATE_EMBEDDING(T)                                                              \
  template void lookupForward<T>(const T *, int64_t, const int64_t *, const int64_t *, const T *, \
                                 int64_t, Pooling, T *);                                           \
  template void lookupGrad<T>(const T *, int64_t, const int64_t *, const int64_t *, const T *,    \
                              int64_t, Pooling, const T *, T *);                                   \
  template void gatherForward<T>(const T *, int64_t, const int64_t *, int64_t, T *);              \
  template int64_t coalesceRows<T>(int64_t *, T *, int64_t, int64_t);

EMBC_INSTANTIATE_EMBEDDING(float)
EMBC_INSTANTIATE_EMBEDDING(double)

#undef EMBC_INSTANTIATE_EMBEDDING

} // namespace embc::runtime::cpu
