//===- SequenceKernels.h - sequence_lookup, sequence_pool -------*- C++ -*-===//
//
// The CPU kernels of the sequence ops (emb.sequence_lookup, emb.positions,
// emb.sequence_pool and their gradients, emb.next_token_targets). A batch of sequences is a sparse feature's jagged
// ids: sequence b is ids[offsets[b] .. offsets[b+1]), n_b of them, laid out
// as B x L x D with zeros after position n_b. Templates in a header so the
// float kernels the backend binds and the double ones the finite-difference
// checks use are the same code.
//
// Every kernel owns whole sequences (rows b), or whole positions for the
// learned positions' gradient (summed over b in order), so the results do
// not depend on the thread count. Lengths are clamped to [0, L] here; the binding has
// already refused a sequence longer than L with a data error.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_SEQUENCEKERNELS_H
#define EMBC_RUNTIME_CPU_SEQUENCEKERNELS_H

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/plan/Enums.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace embc::runtime::cpu {

namespace sequence {
/// Below this many elements a loop runs on the caller (as kParallelWork).
inline constexpr int64_t kParallelWork = int64_t(1) << 15;

/// n_b, clamped to [0, L].
inline int64_t length(const int64_t *offsets, int64_t b, int64_t L) {
  return std::clamp<int64_t>(offsets[b + 1] - offsets[b], 0, L);
}
} // namespace sequence

/// y[b, l] = table[ids[offsets[b] + l]] for l < n_b, zeros after.
template <class T>
void sequenceLookupForward(const T *table, int64_t D, const int64_t *ids, const int64_t *offsets,
                           int64_t B, int64_t L, T *y) {
  parallelFor(B, B * L * D > sequence::kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t n = sequence::length(offsets, b, L);
      T *yb = y + b * L * D;
      for (int64_t l = 0; l < n; ++l)
        std::memcpy(yb + l * D, table + ids[offsets[b] + l] * D, sizeof(T) * size_t(D));
      std::fill(yb + n * D, yb + L * D, T(0));
    }
  });
}

/// rows[i] = dy[b, i - offsets[b]] for the ids i of sequence b (one row per
/// id, `idCount` in all); rows of ids outside every sequence are zeros.
template <class T>
void sequenceLookupBackward(const T *dy, const int64_t *offsets, int64_t B, int64_t L, int64_t D,
                            int64_t idCount, T *rows) {
  const int64_t lo = B > 0 ? std::clamp<int64_t>(offsets[0], 0, idCount) : idCount;
  const int64_t hi = B > 0 ? std::clamp<int64_t>(offsets[B], lo, idCount) : idCount;
  std::fill(rows, rows + lo * D, T(0));
  std::fill(rows + hi * D, rows + idCount * D, T(0));
  parallelFor(B, B * L * D > sequence::kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t n = sequence::length(offsets, b, L);
      std::memcpy(rows + offsets[b] * D, dy + b * L * D, sizeof(T) * size_t(n * D));
    }
  });
}

/// Column j of the sinusoidal embedding of position l (D columns): the sine
/// (j even) or cosine (j odd) of l / 10000^(2 (j / 2) / D), in double.
inline double sinusoid(int64_t l, int64_t j, int64_t D) {
  const double angle = double(l) / std::pow(10000.0, double(2 * (j / 2)) / double(D));
  return j % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

/// The L x D sinusoids as T: what `positionsForward` adds for sinusoidal
/// positions (computed once when the kernel is bound).
template <class T> std::vector<T> sinusoidTable(int64_t L, int64_t D) {
  std::vector<T> table(size_t(L * D));
  for (int64_t l = 0; l < L; ++l)
    for (int64_t j = 0; j < D; ++j)
      table[size_t(l * D + j)] = T(sinusoid(l, j, D));
  return table;
}

/// y[b, l] = x[b, l] + table[l] for l < n_b, zeros after. `table` holds at
/// least L rows of D: the learned positions, or sinusoidTable(L, D).
template <class T>
void positionsForward(const T *x, const int64_t *offsets, const T *table, int64_t B, int64_t L,
                      int64_t D, T *y) {
  parallelFor(B, B * L * D > sequence::kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t n = sequence::length(offsets, b, L);
      const T *xb = x + b * L * D;
      T *yb = y + b * L * D;
      for (int64_t i = 0; i < n * D; ++i)
        yb[i] = xb[i] + table[i];
      std::fill(yb + n * D, yb + L * D, T(0));
    }
  });
}

/// dx = dy on each sequence's valid positions, 0 after; with `dtable`
/// (learned positions, `tableRows` >= L rows), dtable[l] = the sum of dy[b, l]
/// over the sequences with l < n_b in b order, and 0 for rows past L.
template <class T>
void positionsBackward(const T *dy, const int64_t *offsets, int64_t B, int64_t L, int64_t D,
                       T *dx, T *dtable, int64_t tableRows) {
  parallelFor(B, B * L * D > sequence::kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t n = sequence::length(offsets, b, L);
      std::copy(dy + b * L * D, dy + (b * L + n) * D, dx + b * L * D);
      std::fill(dx + (b * L + n) * D, dx + (b + 1) * L * D, T(0));
    }
  });
  if (!dtable)
    return;
  std::fill(dtable + L * D, dtable + tableRows * D, T(0));
  parallelFor(L, B * L * D > sequence::kParallelWork, [&](int64_t lBegin, int64_t lEnd) {
    for (int64_t l = lBegin; l < lEnd; ++l) {
      T *row = dtable + l * D;
      std::fill(row, row + D, T(0));
      for (int64_t b = 0; b < B; ++b)
        if (l < sequence::length(offsets, b, L))
          for (int64_t j = 0; j < D; ++j)
            row[j] += dy[(b * L + l) * D + j];
    }
  });
}

/// y[b] = the sum, mean or max of x[b, 0 .. n_b), or x[b, 0] (first); zeros
/// for an empty sequence.
template <class T>
void sequencePoolForward(const T *x, const int64_t *offsets, int64_t B, int64_t L, int64_t D,
                         SequencePooling mode, T *y) {
  parallelFor(B, B * L * D > sequence::kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t n = sequence::length(offsets, b, L);
      const T *xb = x + b * L * D;
      T *yb = y + b * D;
      if (n == 0) {
        std::fill(yb, yb + D, T(0));
        continue;
      }
      if (mode == SequencePooling::First) {
        std::copy(xb, xb + D, yb);
        continue;
      }
      std::copy(xb, xb + D, yb);
      for (int64_t l = 1; l < n; ++l)
        for (int64_t j = 0; j < D; ++j)
          yb[j] = mode == SequencePooling::Max ? std::max(yb[j], xb[l * D + j])
                                               : yb[j] + xb[l * D + j];
      if (mode == SequencePooling::Mean)
        for (int64_t j = 0; j < D; ++j)
          yb[j] /= T(n);
    }
  });
}

/// dx of sequencePoolForward: dy[b] on every valid position (sum), divided
/// by n_b (mean), on position 0 (first) or on the first position holding
/// the maximum (max, which reads x); zeros on the padded positions.
template <class T>
void sequencePoolBackward(const T *dy, const int64_t *offsets, const T *x, int64_t B, int64_t L,
                          int64_t D, SequencePooling mode, T *dx) {
  parallelFor(B, B * L * D > sequence::kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t n = sequence::length(offsets, b, L);
      const T *dyb = dy + b * D;
      T *dxb = dx + b * L * D;
      std::fill(dxb, dxb + L * D, T(0));
      if (n == 0)
        continue;
      switch (mode) {
      case SequencePooling::Sum:
      case SequencePooling::Mean:
        for (int64_t l = 0; l < n; ++l)
          for (int64_t j = 0; j < D; ++j)
            dxb[l * D + j] = mode == SequencePooling::Mean ? dyb[j] / T(n) : dyb[j];
        break;
      case SequencePooling::First:
        std::copy(dyb, dyb + D, dxb);
        break;
      case SequencePooling::Max: {
        const T *xb = x + b * L * D;
        for (int64_t j = 0; j < D; ++j) {
          int64_t arg = 0;
          for (int64_t l = 1; l < n; ++l)
            if (xb[l * D + j] > xb[arg * D + j])
              arg = l;
          dxb[arg * D + j] = dyb[j];
        }
        break;
      }
      }
    }
  });
}

/// The targets of next-token prediction: out[b, l] = ids[offsets[b] + l + 1]
/// (a class index) for l < n_b - 1, and -1 (no target) elsewhere.
template <class T>
void nextTokenTargets(const int64_t *ids, const int64_t *offsets, int64_t B, int64_t L, T *out) {
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = sequence::length(offsets, b, L);
    const int64_t *next = ids + offsets[b] + 1;
    T *row = out + b * L;
    for (int64_t l = 0; l < L; ++l)
      row[l] = l + 1 < n ? T(next[l]) : T(-1);
  }
}

/// rows[b, p] = x[b, l_p] and selected[b, p] = targets[b, l_p], l_p the
/// p-th position of sequence b whose target is not -1 (zeros and -1 past
/// its count). Returns the first sequence with more than P targets, or -1
/// (its first P are selected).
template <class T>
int64_t selectTargets(const T *x, const T *targets, int64_t B, int64_t L, int64_t D, int64_t P,
                      T *rows, T *selected) {
  int64_t over = -1;
  for (int64_t b = 0; b < B; ++b) {
    int64_t p = 0;
    for (int64_t l = 0; l < L; ++l) {
      const T t = targets[b * L + l];
      if (t == T(-1))
        continue;
      if (p == P) {
        over = over < 0 ? b : over;
        break;
      }
      std::memcpy(rows + (b * P + p) * D, x + (b * L + l) * D, sizeof(T) * size_t(D));
      selected[b * P + p] = t;
      ++p;
    }
    std::fill(rows + (b * P + p) * D, rows + (b + 1) * P * D, T(0));
    std::fill(selected + b * P + p, selected + (b + 1) * P, T(-1));
  }
  return over;
}

/// dx of selectTargets: dy[b, p] at position l_p, zeros elsewhere.
template <class T>
void selectTargetsBackward(const T *dy, const T *targets, int64_t B, int64_t L, int64_t D,
                           int64_t P, T *dx) {
  for (int64_t b = 0; b < B; ++b) {
    int64_t p = 0;
    for (int64_t l = 0; l < L; ++l) {
      T *out = dx + (b * L + l) * D;
      if (targets[b * L + l] == T(-1) || p == P) {
        std::fill(out, out + D, T(0));
        continue;
      }
      std::memcpy(out, dy + (b * P + p) * D, sizeof(T) * size_t(D));
      ++p;
    }
  }
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_SEQUENCEKERNELS_H
