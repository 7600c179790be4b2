//===- AliasTable.h - O(1) draws from a discrete distribution ---*- C++ -*-===//
//
// Walker's alias method (Vose's construction): after an O(n) build, a draw
// costs one table read (a column's keep chance and alias side by side, one
// cache line) whatever the distribution, and it is exact, unlike word2vec's
// 1e8-entry unigram table. Skip-gram negatives use it.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_ALIASTABLE_H
#define EMBC_RUNTIME_LIB_DATA_ALIASTABLE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace embc::runtime::data {

class AliasTable {
public:
  /// `weights` must be non-negative with a positive sum.
  explicit AliasTable(const std::vector<double> &weights);

  /// The outcome for one 64-bit random word.
  uint32_t draw(uint64_t random) const;

  size_t size() const { return columns_.size(); }

private:
  struct Column {
    double keep = 1.0;  ///< chance of keeping the column's own outcome
    uint32_t alias = 0; ///< the outcome taken otherwise
  };
  std::vector<Column> columns_;
};

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_ALIASTABLE_H
