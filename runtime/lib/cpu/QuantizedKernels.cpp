//===- QuantizedKernels.cpp - lookups and updates of quantised tables -----===//
//
// See QuantizedKernels.h. The lookups decode a row into a small per-thread
// f32 buffer and then do exactly what lookupForward does with an f32 row;
// the update reuses OptimizerRow.h's tableRowStep on a decoded row (state
// pointers offset to the row, row index 0), so the f32 arithmetic is the
// plain sparse update's.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/QuantizedKernels.h"

#include "embc/runtime/cpu/HalfFloat.h"
#include "embc/runtime/data/CounterRandom.h"

#include "KernelSupport.h"
#include "OptimizerRow.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace embc::runtime::cpu {

using detail::checkOffsets;
using detail::kParallelWork;
namespace data = embc::runtime::data;

// --- Lookups --------------------------------------------------------------------

namespace {

/// Per-thread scratch for decoded rows (one or a bag's worth).
float *scratch(size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats)
    buffer.resize(floats);
  return buffer.data();
}

inline float weightOf(const float *weights, int64_t i) { return weights ? weights[i] : 1.0f; }

} // namespace

void quantizedLookup(const QuantizedTable &t, const int64_t *ids, const int64_t *offsets,
                     const float *weights, int64_t B, Pooling pooling, float *y) {
  checkOffsets(offsets, B, "quantizedLookup");
  const int64_t D = t.D, nnz = B > 0 ? offsets[B] - offsets[0] : 0;
  parallelFor(B, (nnz + B) * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t begin = offsets[b], end = offsets[b + 1];
      float *__restrict out = y + b * D;
      float *row = scratch(size_t(D));
      detail::fillZero(out, D);
      if (begin == end)
        continue;
      // lookupForward's arithmetic on each decoded row (ties keep the first id).
      if (pooling == Pooling::Max) {
        dequantizeRow(t, ids[begin], row);
        const float w0 = weightOf(weights, begin);
        for (int64_t j = 0; j < D; ++j)
          out[j] = w0 * row[j];
        for (int64_t i = begin + 1; i < end; ++i) {
          dequantizeRow(t, ids[i], row);
          const float w = weightOf(weights, i);
          for (int64_t j = 0; j < D; ++j) {
            const float v = w * row[j];
            out[j] = v > out[j] ? v : out[j];
          }
        }
        continue;
      }
      for (int64_t i = begin; i < end; ++i) {
        dequantizeRow(t, ids[i], row);
        detail::axpy(weightOf(weights, i), row, out, D);
      }
      if (pooling == Pooling::Mean) {
        const float inv = 1.0f / float(end - begin);
        for (int64_t j = 0; j < D; ++j)
          out[j] *= inv;
      }
    }
  });
}

void quantizedGather(const QuantizedTable &t, const int64_t *ids, int64_t n, float *y) {
  parallelFor(n, n * t.D > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
    for (int64_t i = iBegin; i < iEnd; ++i)
      dequantizeRow(t, ids[i], y + i * t.D);
  });
}

void quantizedSequenceLookup(const QuantizedTable &t, const int64_t *ids, const int64_t *offsets,
                             int64_t B, int64_t L, float *y) {
  const int64_t D = t.D;
  parallelFor(B, B * L * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t n = std::clamp<int64_t>(offsets[b + 1] - offsets[b], 0, L);
      float *yb = y + b * L * D;
      for (int64_t l = 0; l < n; ++l)
        dequantizeRow(t, ids[offsets[b] + l], yb + l * D);
      std::fill(yb + n * D, yb + L * D, 0.0f);
    }
  });
}

void quantizedLookupGrad(const QuantizedTable &t, const int64_t *ids, const int64_t *offsets,
                         const float *weights, int64_t B, Pooling pooling, const float *dy,
                         float *dvals) {
  if (pooling != Pooling::Max) { // sum and mean never read the table
    lookupGrad<float>(nullptr, t.D, ids, offsets, weights, B, pooling, dy, dvals);
    return;
  }
  checkOffsets(offsets, B, "quantizedLookupGrad");
  const int64_t D = t.D, nnz = B > 0 ? offsets[B] - offsets[0] : 0;
  parallelFor(B, (nnz + B) * D > kParallelWork, [&](int64_t bBegin, int64_t bEnd) {
    for (int64_t b = bBegin; b < bEnd; ++b) {
      const int64_t begin = offsets[b], end = offsets[b + 1];
      for (int64_t i = begin; i < end; ++i)
        detail::fillZero(dvals + i * D, D);
      if (begin == end)
        continue;
      // The bag's rows decoded once; then lookupGrad's per-column argmax.
      float *rows = scratch(size_t((end - begin) * D));
      for (int64_t i = begin; i < end; ++i)
        dequantizeRow(t, ids[i], rows + (i - begin) * D);
      for (int64_t j = 0; j < D; ++j) {
        int64_t arg = begin;
        float best = weightOf(weights, begin) * rows[j];
        for (int64_t i = begin + 1; i < end; ++i) {
          const float v = weightOf(weights, i) * rows[(i - begin) * D + j];
          if (v > best) {
            best = v;
            arg = i;
          }
        }
        dvals[arg * D + j] = weightOf(weights, arg) * dy[b * D + j];
      }
    }
  });
}

// --- Update --------------------------------------------------------------------

SparseNonFinite quantizedSparseUpdate(const OptimizerParams &p, int64_t step, double lrScale,
                                      double gradScale, QuantizedTable &t, const int64_t *uniqueRows,
                           const float *vals, int64_t nnz, float *state0, float *state1,
                           uint64_t seed, const std::vector<RowSegment> &segments) {
  detail::Hyper<float> h =
      detail::makeHyper<float>(p, step, lrScale, gradScale, "quantizedSparseUpdate");
  detail::checkStates(p, state0, state1, "quantizedSparseUpdate");
  if (p.globalDecay && p.weightDecay > 0)
    throw std::invalid_argument("quantizedSparseUpdate: global weight decay would requantise "
                                "every row every step; quantised tables take lazy decay");
  if (segments.empty() || segments.front().firstRow != 0)
    throw std::invalid_argument("quantizedSparseUpdate: the row segments must start at row 0");
  for (int64_t k = 0; k < nnz; ++k) {
    if (uniqueRows[k] < 0 || uniqueRows[k] >= t.rows)
      throw std::out_of_range("quantizedSparseUpdate: row " + std::to_string(uniqueRows[k]) +
                              " (entry " + std::to_string(k) + ") is outside the table's " +
                              std::to_string(t.rows) + " rows");
    if (k > 0 && uniqueRows[k] <= uniqueRows[k - 1])
      throw std::invalid_argument("quantizedSparseUpdate: rows are not coalesced (entry " +
                                  std::to_string(k) + ")");
  }
  const bool rowwise = p.kind == OptimizerKind::RowwiseAdagrad;
  const int64_t D = t.D;
  detail::LowestIndex bad;
  parallelFor(nnz, nnz * D > kParallelWork / 4, [&](int64_t kBegin, int64_t kEnd) {
    for (int64_t k = kBegin; k < kEnd; ++k) {
      const int64_t r = uniqueRows[k];
      auto seg = std::upper_bound(segments.begin(), segments.end(), r,
                                  [](int64_t row, const RowSegment &s) { return row < s.firstRow; }) -
                 1;
      float *row = scratch(size_t(D));
      dequantizeRow(t, r, row);
      // Row index 0 of a one-row "table" whose state starts at row r.
      // A row whose step is not finite is not stored (int8/int4 could not
      // hold it), and the run stops at it.
      if (!detail::tableRowStep(p.kind, h, row, 0, D, vals + k * D,
                                state0 ? state0 + (rowwise ? r : r * D) : nullptr,
                                state1 ? state1 + r * D : nullptr)) {
        bad.report(k);
        continue;
      }
      if (!quantizeRow(t, r, row, /*nearest=*/false,
                       rowKey(seed, seg->tableKey, r - seg->firstRow, step)))
        bad.report(k);
    }
  });
  const int64_t k = bad.get();
  return k < 0 ? SparseNonFinite{} : SparseNonFinite{uniqueRows[k], k};
}

} // namespace embc::runtime::cpu
