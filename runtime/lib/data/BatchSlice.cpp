//===- BatchSlice.cpp - micro-batches of a batch ---------------------------===//

#include "embc/runtime/data/BatchSlice.h"

#include <algorithm>
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

namespace {

/// Appends `part`'s rows of a row-major array to `out`.
template <class T> void appendRows(const std::vector<T> &part, std::vector<T> &out) {
  out.insert(out.end(), part.begin(), part.end());
}

} // namespace

void embc::runtime::data::joinBatches(const std::vector<Batch> &parts, Batch &out) {
  std::vector<const Batch *> pointers;
  for (const Batch &part : parts)
    pointers.push_back(&part);
  joinBatches(pointers, out);
}

void embc::runtime::data::joinBatches(const std::vector<const Batch *> &parts, Batch &out) {
  out.size = 0;
  out.features.resize(parts.empty() ? 0 : parts.front()->features.size());
  for (FeatureBatch &o : out.features) {
    o.dense.clear(), o.negatives.clear(), o.label.clear();
    o.ids.clear(), o.weights.clear(), o.offsets.clear();
  }
  for (const Batch *partPointer : parts) {
    const Batch &part = *partPointer;
    if (part.features.size() != out.features.size())
      throw DataError("joinBatches: parts with " + std::to_string(part.features.size()) +
                      " and " + std::to_string(out.features.size()) + " features");
    for (size_t f = 0; f < out.features.size(); ++f) {
      const FeatureBatch &in = part.features[f];
      FeatureBatch &o = out.features[f];
      appendRows(in.dense, o.dense);
      appendRows(in.negatives, o.negatives);
      appendRows(in.label, o.label);
      if (in.offsets.empty())
        continue;
      if (o.offsets.empty())
        o.offsets.push_back(0);
      const int64_t base = int64_t(o.ids.size());
      for (size_t r = 1; r < in.offsets.size(); ++r)
        o.offsets.push_back(base + in.offsets[r]);
      appendRows(in.ids, o.ids);
      appendRows(in.weights, o.weights);
    }
    out.size += part.size;
  }
}
