//===- AliasTable.h - O(1) draws from a discrete distribution ---*- C++ -*-===//
//
// Walker's alias method (Vose's construction): after an O(n) build, a draw
// costs two table reads whatever the distribution, and it is exact, unlike
// word2vec's 1e8-entry unigram table. Skip-gram negatives use it.
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

  size_t size() const { return alias_.size(); }

private:
  std::vector<double> keep_;    ///< chance of keeping column i
  std::vector<uint32_t> alias_; ///< the outcome taken otherwise
};

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_ALIASTABLE_H
