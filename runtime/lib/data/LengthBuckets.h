//===- LengthBuckets.h - an epoch's order, bucketed by length ---*- C++ -*-===//
//
// With dynamic padding a batch runs at its longest sequence, so a batch of
// short sequences is cheap only if its sequences are alike in length: a
// random batch of 32 sentences almost always holds a long one. Length
// bucketing (StreamOptions::lengthBuckets, embrun --length-buckets K) takes
// the epoch's shuffled order (EpochPermutation) window by window, K batches
// a window, sorts each window by sequence length (ties by their place in
// the order) and visits the window's K batches in a shuffled order of their
// own. Every example is still visited once an epoch, batches stay random
// in which examples they hold, and only which examples share a batch
// changes, as fairseq's and torchtext's bucket iterators do.
//
// It is a pure function of (n, batch, K, seed, epoch) like the permutation
// it starts from, so a resumed stream continues it exactly; a window is
// computed when first needed (K x batch lookups and a sort) and cached per
// thread.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_LENGTHBUCKETS_H
#define EMBC_RUNTIME_LIB_DATA_LENGTHBUCKETS_H

#include "ExampleSource.h"

#include "embc/runtime/data/Permutation.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace embc::runtime::data {

class BucketedOrder {
public:
  /// `source` must outlive the order and give every example's length
  /// (ExampleSource::length >= 0). `windowBatches` >= 1.
  BucketedOrder(const ExampleSource &source, uint64_t batch, uint64_t windowBatches,
                uint64_t seed, uint64_t epoch);

  /// The example visited at place `i` (< n) of the epoch.
  uint64_t operator()(uint64_t i) const;

private:
  /// Sorts window `w` into sorted_ and sets up its batches' order.
  void load(uint64_t w) const;

  const ExampleSource &source_;
  EpochPermutation order_;
  uint64_t batch_, window_, seed_, epoch_;
  mutable uint64_t loaded_ = ~uint64_t(0);
  mutable std::vector<uint64_t> sorted_;
  mutable std::optional<EpochPermutation> batches_; ///< of the window's whole batches
};

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_LENGTHBUCKETS_H
