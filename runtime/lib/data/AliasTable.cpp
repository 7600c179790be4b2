//===- AliasTable.cpp - O(1) draws from a discrete distribution -----------===//

#include "AliasTable.h"

#include "embc/runtime/data/CounterRandom.h"

#include <numeric>

using namespace embc::runtime::data;

AliasTable::AliasTable(const std::vector<double> &weights)
    : columns_(weights.size()) {
  size_t n = weights.size();
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> scaled(n);
  std::vector<uint32_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = weights[i] * static_cast<double>(n) / total;
    columns_[i].alias = static_cast<uint32_t>(i);
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    uint32_t less = small.back(), more = large.back();
    small.pop_back();
    columns_[less].keep = scaled[less];
    columns_[less].alias = more;
    scaled[more] -= 1.0 - scaled[less];
    if (scaled[more] < 1.0) {
      large.pop_back();
      small.push_back(more);
    }
  }
  // What is left is 1 up to rounding: keep it (keep is already 1).
}

uint32_t AliasTable::draw(uint64_t random) const {
  uint64_t column = static_cast<uint64_t>(uniform01(random) * static_cast<double>(columns_.size()));
  if (column >= columns_.size())
    column = columns_.size() - 1;
  const Column &c = columns_[column];
  return uniform01(mix64(random)) < c.keep ? static_cast<uint32_t>(column) : c.alias;
}
