//===- RowBlock.h - parsed examples of a schema, held by column -*- C++ -*-===//
//
// What the schema reader keeps of a file: blocks of consecutive valid
// records, each stored by column (labels, a matrix of dense floats, one
// jagged bag of ids per categorical column). Only the columns some feature
// reads have a slot; the others are never decoded.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_ROWBLOCK_H
#define EMBC_RUNTIME_LIB_DATA_ROWBLOCK_H

#include "FileInput.h"

#include "embc/runtime/data/Schema.h"

#include <cstring>
#include <unordered_map>

namespace embc::runtime::data {

/// Where a bound column's values go in a RowBlock, and what they must obey
/// (the strictest of the features reading it).
struct ColumnSlot {
  const SchemaColumn *column = nullptr;
  int64_t field = -1; ///< text and binary: the first field (a header name resolved)
  size_t index = 0;   ///< label: its label; dense: first float; categorical: its bag
  int64_t vocab = 0;  ///< ids < vocab (0: any non-negative id)
  int64_t hotness = 0; ///< ids a bag at most (0: any)
  int64_t classes = 0; ///< class labels < classes
  std::string feature; ///< the feature whose vocab or hotness binds, for messages
  /// Vocab encoding: the vocabulary file's strings and their ids.
  std::shared_ptr<const std::unordered_map<std::string, int64_t>> vocabulary;
};

/// The bound columns of one schema.
struct RowLayout {
  std::vector<ColumnSlot> slots;
  size_t labels = 0, bags = 0;
  int64_t denseWidth = 0;
};

/// Rows stored one after the other, each whole in `data` (a batch draws
/// rows at random: a row's values sit together, in a few cache lines):
///   labels (f32 each) | dense (f32 each) | each bag's end (u32, bytes from
///   the row's start) | bag 0's ids (i64 each), then its weights (f32 each,
///   weighted bags) | bag 1's ... All unaligned: read with memcpy.
struct RowBlock {
  uint64_t rows = 0;
  std::vector<uint8_t> data;
  std::vector<uint64_t> starts; ///< where each row begins in `data`

  void reset() {
    rows = 0;
    data.clear();
    starts.clear();
  }
  /// The bytes its rows take (by size, not capacity: the same for the same
  /// rows however they were parsed, so decisions made from it are too).
  size_t bytes() const { return data.size() + starts.size() * sizeof(uint64_t); }
  const uint8_t *row(uint64_t r) const { return data.data() + starts[r]; }
  /// Appends rows [from, to) of `other`.
  void append(const RowBlock &other, uint64_t from, uint64_t to);
};

/// Reading one row of a block.
class RowView {
public:
  RowView(const RowLayout &layout, const uint8_t *row) : layout_(layout), row_(row) {}
  float label(size_t index) const { return floatAt(4 * index); }
  void dense(size_t offset, int64_t width, float *out) const {
    std::memcpy(out, row_ + 4 * (layout_.labels + offset), size_t(width) * 4);
  }
  /// Bag `b`: its ids (and weights after them) as [begin, end) byte offsets.
  std::pair<uint32_t, uint32_t> bag(size_t b) const {
    const size_t ends = 4 * (layout_.labels + size_t(layout_.denseWidth));
    uint32_t begin = uint32_t(ends + 4 * layout_.bags), end;
    if (b > 0)
      std::memcpy(&begin, row_ + ends + 4 * (b - 1), 4);
    std::memcpy(&end, row_ + ends + 4 * b, 4);
    return {begin, end};
  }
  const uint8_t *bytes(uint32_t offset) const { return row_ + offset; }

private:
  float floatAt(size_t offset) const {
    float v;
    std::memcpy(&v, row_ + offset, 4);
    return v;
  }
  const RowLayout &layout_;
  const uint8_t *row_;
};

/// Appends one record's values to a block; undo() drops a half-written one.
/// Bags are written in order (a bag's ids before a later bag's).
class RowWriter {
public:
  RowWriter(const RowLayout &layout, RowBlock &block) : layout_(layout), block_(block) {}
  /// Starts a record: labels and dense values are 0 until set.
  void begin();
  void label(size_t index, float value) { put(start_ + 4 * index, value); }
  void dense(size_t offset, float value) { put(start_ + 4 * (layout_.labels + offset), value); }
  void id(size_t bag, int64_t id) {
    advance(bag);
    const size_t at = block_.data.size();
    block_.data.resize(at + 8);
    std::memcpy(block_.data.data() + at, &id, 8);
    ++bagIds_;
  }
  void weight(size_t bag, float w) {
    advance(bag);
    weights_.push_back(w);
  }
  /// Ids of `bag` in the record so far.
  uint64_t bagSize(size_t bag) {
    advance(bag);
    return bagIds_;
  }
  void commit();
  void undo() { block_.data.resize(start_); }

private:
  void put(size_t at, float value) { std::memcpy(block_.data.data() + at, &value, 4); }
  /// Closes the bags before `bag`.
  void advance(size_t bag) {
    while (bag_ < bag)
      closeBag();
  }
  void closeBag();

  const RowLayout &layout_;
  RowBlock &block_;
  size_t start_ = 0, bag_ = 0;
  uint64_t bagIds_ = 0;
  std::vector<float> weights_;
};

/// "/data/columns/3 (C1)" for a model's schema, "C1" for a built-in one.
inline std::string columnWhere(const SchemaColumn &column) {
  return column.pointer.empty() ? column.name : column.pointer + " (" + column.name + ")";
}

/// Checks an id of a categorical column against its slot's vocab.
inline bool idInRange(const ColumnSlot &slot, int64_t id, LineProblem &problem) {
  if (slot.vocab <= 0 || id < slot.vocab)
    return true;
  problem.category = "id out of range";
  problem.reason = columnWhere(*slot.column) + ": id " +
                   std::to_string(id) + " out of range for feature '" + slot.feature +
                   "' (vocab " + std::to_string(slot.vocab) + ")";
  return false;
}

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_ROWBLOCK_H
