//===- LengthBuckets.cpp - an epoch's order, bucketed by length -----------===//

#include "LengthBuckets.h"

#include "embc/runtime/data/CounterRandom.h"

#include <algorithm>
#include <utility>

using namespace embc::runtime::data;

namespace {
/// Keys the order of a window's batches apart from the epoch's order.
constexpr uint64_t kBucketTag = 0xB0C4'E7ED'0A7D'E501ull;
} // namespace

BucketedOrder::BucketedOrder(const ExampleSource &source, uint64_t batch,
                             uint64_t windowBatches, uint64_t seed, uint64_t epoch)
    : source_(source), order_(source.size(), seed, epoch), batch_(std::max<uint64_t>(batch, 1)),
      window_(batch_ * std::max<uint64_t>(windowBatches, 1)), seed_(seed), epoch_(epoch) {}

void BucketedOrder::load(uint64_t w) const {
  const uint64_t n = order_.size(), first = w * window_, size = std::min(window_, n - first);
  std::vector<std::pair<int64_t, uint64_t>> byLength(size); // (length, place)
  for (uint64_t i = 0; i < size; ++i)
    byLength[i] = {source_.length(order_(first + i)), i};
  std::sort(byLength.begin(), byLength.end());
  sorted_.resize(size);
  for (uint64_t i = 0; i < size; ++i)
    sorted_[i] = order_(first + byLength[i].second);
  // The whole batches of the window in a shuffled order; a last partial
  // one (the epoch's end) stays last.
  const uint64_t whole = size / batch_;
  if (whole > 0)
    batches_.emplace(whole, hashOf(seed_, kBucketTag, epoch_), w);
  else
    batches_.reset();
  loaded_ = w;
}

uint64_t BucketedOrder::operator()(uint64_t i) const {
  const uint64_t w = i / window_, place = i % window_;
  if (w != loaded_)
    load(w);
  const uint64_t b = place / batch_;
  if (!batches_ || b >= batches_->size())
    return sorted_[place];
  return sorted_[(*batches_)(b) * batch_ + place % batch_];
}
