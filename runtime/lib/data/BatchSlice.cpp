//===- BatchSlice.cpp - micro-batches of a batch ---------------------------===//

#include "embc/runtime/data/BatchSlice.h"

#include "embc/runtime/cpu/Parallel.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace embc::runtime::data;

namespace {

/// Rows [begin, begin + count) of a row-major array of `rows` rows.
template <class T>
void sliceRows(const std::vector<T> &in, int64_t rows, int64_t begin, int64_t count,
               std::vector<T> &out) {
  if (in.empty()) {
    out.clear();
    return;
  }
  int64_t width = int64_t(in.size()) / rows;
  out.assign(in.begin() + begin * width, in.begin() + (begin + count) * width);
}

} // namespace

void embc::runtime::data::sliceBatch(const Batch &batch, int64_t begin, int64_t count,
                                     Batch &out) {
  if (begin < 0 || count < 1 || begin + count > batch.size)
    throw DataError("rows [" + std::to_string(begin) + ", " + std::to_string(begin + count) +
                    ") are not inside a batch of " + std::to_string(batch.size));
  out.size = count;
  out.valid = std::clamp<int64_t>(batch.valid - begin, 0, count);
  out.position = batch.position;
  out.features.resize(batch.features.size());
  for (size_t f = 0; f < batch.features.size(); ++f) {
    const FeatureBatch &in = batch.features[f];
    FeatureBatch &o = out.features[f];
    sliceRows(in.dense, batch.size, begin, count, o.dense);
    sliceRows(in.negatives, batch.size, begin, count, o.negatives);
    sliceRows(in.label, batch.size, begin, count, o.label);
    if (in.offsets.empty()) {
      o.offsets.clear(), o.ids.clear(), o.weights.clear();
      continue;
    }
    if (int64_t(in.offsets.size()) != batch.size + 1)
      throw DataError("a sparse feature has " + std::to_string(in.offsets.size()) +
                      " offsets for a batch of " + std::to_string(batch.size));
    int64_t first = in.offsets[size_t(begin)], last = in.offsets[size_t(begin + count)];
    o.offsets.resize(size_t(count + 1));
    for (int64_t r = 0; r <= count; ++r)
      o.offsets[size_t(r)] = in.offsets[size_t(begin + r)] - first;
    o.ids.assign(in.ids.begin() + first, in.ids.begin() + last);
    if (in.weights.empty())
      o.weights.clear();
    else
      o.weights.assign(in.weights.begin() + first, in.weights.begin() + last);
  }
}

void embc::runtime::data::splitBatch(const Batch &batch, int64_t parts,
                                     std::vector<Batch> &out) {
  if (parts < 1 || batch.size % parts != 0)
    throw DataError(std::to_string(parts) + " micro-batches do not divide a batch of " +
                    std::to_string(batch.size));
  int64_t rows = batch.size / parts;
  out.resize(size_t(parts));
  for (int64_t i = 0; i < parts; ++i)
    sliceBatch(batch, i * rows, rows, out[size_t(i)]);
}

void embc::runtime::data::joinBatches(const std::vector<Batch> &parts, Batch &out) {
  std::vector<const Batch *> pointers;
  for (const Batch &part : parts)
    pointers.push_back(&part);
  joinBatches(pointers, out);
}

namespace {

/// Where one part's values start in each array of one joined feature.
struct PartStart {
  size_t dense = 0, negatives = 0, label = 0, ids = 0, weights = 0, rows = 0;
};

/// Copies `in` to `out` from element `at` (sized already).
template <class T> void place(const std::vector<T> &in, std::vector<T> &out, size_t at) {
  if (!in.empty())
    std::memcpy(out.data() + at, in.data(), in.size() * sizeof(T));
}

} // namespace

void embc::runtime::data::joinBatches(const std::vector<const Batch *> &parts, Batch &out) {
  const size_t features = parts.empty() ? 0 : parts.front()->features.size();
  const size_t count = parts.size();
  out.size = 0;
  out.features.resize(features);
  for (const Batch *part : parts) {
    if (part->features.size() != features)
      throw DataError("joinBatches: parts with " + std::to_string(part->features.size()) +
                      " and " + std::to_string(features) + " features");
    out.size += part->size;
  }
  // Sizes first, so that every (feature, part) copy can run on its own: the
  // trainer joins a whole batch while it waits for it (65536 examples of the
  // MLPerf DLRM: 31 MB, 5 ms on one thread).
  std::vector<PartStart> starts(features * count);
  size_t bytes = 0;
  for (size_t f = 0; f < features; ++f) {
    PartStart end;
    bool jagged = false;
    for (size_t p = 0; p < count; ++p) {
      const FeatureBatch &in = parts[p]->features[f];
      starts[f * count + p] = end;
      end.dense += in.dense.size(), end.negatives += in.negatives.size();
      end.label += in.label.size(), end.ids += in.ids.size(), end.weights += in.weights.size();
      if (!in.offsets.empty())
        jagged = true, end.rows += in.offsets.size() - 1;
    }
    FeatureBatch &o = out.features[f];
    // resize, not clear + resize: a batch of the last batch's sizes writes
    // no zeros first.
    o.dense.resize(end.dense), o.negatives.resize(end.negatives), o.label.resize(end.label);
    o.ids.resize(end.ids), o.weights.resize(end.weights);
    o.offsets.resize(jagged ? end.rows + 1 : 0);
    if (jagged)
      o.offsets[0] = 0;
    bytes += 4 * (end.dense + end.label + end.weights) + 8 * (end.negatives + end.ids + end.rows);
  }
  constexpr size_t kWorthTheTeam = size_t(1) << 20;
  cpu::parallelForDynamic(int64_t(features * count), 1, bytes >= kWorthTheTeam, [&](int64_t t) {
    const size_t f = size_t(t) / count, p = size_t(t) % count;
    const FeatureBatch &in = parts[p]->features[f];
    FeatureBatch &o = out.features[f];
    const PartStart &at = starts[size_t(t)];
    place(in.dense, o.dense, at.dense);
    place(in.negatives, o.negatives, at.negatives);
    place(in.label, o.label, at.label);
    place(in.ids, o.ids, at.ids);
    place(in.weights, o.weights, at.weights);
    const int64_t base = int64_t(at.ids);
    for (size_t r = 1; r < in.offsets.size(); ++r)
      o.offsets[at.rows + r] = base + in.offsets[r];
  });
}
