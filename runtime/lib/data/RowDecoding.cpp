//===- RowDecoding.cpp - a record's fields into a RowBlock ----------------===//

#include "RowDecoding.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace embc::runtime;
using namespace embc::runtime::data;

void RowBlock::append(const RowBlock &other, uint64_t from, uint64_t to) {
  if (from == to)
    return;
  const uint64_t begin = other.starts[from],
                 end = to == other.rows ? other.data.size() : other.starts[to];
  const uint64_t shift = data.size() - begin;
  data.insert(data.end(), other.data.begin() + begin, other.data.begin() + end);
  for (uint64_t r = from; r < to; ++r)
    starts.push_back(other.starts[r] + shift);
  rows += to - from;
}

void RowWriter::begin() {
  start_ = block_.data.size();
  bag_ = 0, bagIds_ = 0;
  weights_.clear();
  block_.data.resize(start_ + 4 * (layout_.labels + size_t(layout_.denseWidth) + layout_.bags),
                     0);
}

void RowWriter::closeBag() {
  if (!weights_.empty()) {
    const size_t at = block_.data.size();
    block_.data.resize(at + 4 * weights_.size());
    std::memcpy(block_.data.data() + at, weights_.data(), 4 * weights_.size());
    weights_.clear();
  }
  const uint32_t end = uint32_t(block_.data.size() - start_);
  std::memcpy(block_.data.data() + start_ +
                  4 * (layout_.labels + size_t(layout_.denseWidth) + bag_),
              &end, 4);
  ++bag_;
  bagIds_ = 0;
}

void RowWriter::commit() {
  advance(layout_.bags);
  block_.starts.push_back(start_);
  ++block_.rows;
}

namespace {

bool fail(LineProblem &problem, const SchemaColumn &column, const char *category,
          const std::string &what) {
  problem.category = category;
  problem.reason = columnWhere(column) + ": " + what;
  return false;
}

std::string quoted(std::string_view field) { return "'" + excerptOfLine(field) + "'"; }

/// A value as a person would write it: 2, 0.5, 1e+30.
std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

bool parseHex(std::string_view text, int64_t &id) {
  if (text.empty() || text.size() > 16)
    return false;
  uint64_t value = 0;
  for (char c : text) {
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
    if (digit < 0)
      return false;
    value = value * 16 + uint64_t(digit);
  }
  if (value > uint64_t(INT64_MAX))
    return false;
  id = int64_t(value);
  return true;
}

/// One id of a categorical field, by the column's encoding.
bool decodeId(const ColumnSlot &slot, std::string_view text, int64_t &id,
              LineProblem &problem) {
  const SchemaColumn &column = *slot.column;
  switch (column.encoding) {
  case IdEncoding::Int:
    if (!parseInt64(text, id) || id < 0)
      return fail(problem, column, "bad id", quoted(text) + " is not a non-negative integer id");
    break;
  case IdEncoding::Hex:
    if (!parseHex(text, id))
      return fail(problem, column, "bad hex id",
                  quoted(text) + " is not a hex id of 1 to 16 digits (below 2^63)");
    break;
  case IdEncoding::Hash:
    id = int64_t(XXH64(text.data(), text.size(), 0) >> 1);
    break;
  case IdEncoding::Vocab: {
    thread_local std::string key;
    key.assign(text);
    auto it = slot.vocabulary->find(key);
    id = it == slot.vocabulary->end() ? 0 : it->second;
    break;
  }
  }
  return idInRange(slot, id, problem);
}

/// A categorical field: one id, or the separator's ids; each "id:weight"
/// when the column is weighted. An empty field is an empty bag.
bool decodeBag(const ColumnSlot &slot, std::string_view field, RowWriter &row,
               LineProblem &problem) {
  const SchemaColumn &column = *slot.column;
  if (field.empty())
    return true;
  if (column.separator.empty() && !column.weighted) { // one id: the common case
    int64_t id;
    if (!decodeId(slot, field, id, problem))
      return false;
    row.id(slot.index, id);
    return true;
  }
  size_t pos = 0;
  while (true) {
    size_t end = column.separator.empty() ? std::string_view::npos
                                          : field.find(column.separator, pos);
    std::string_view item =
        field.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (item.empty())
      return fail(problem, column, "bad id", "an empty id between separators in " + quoted(field));
    std::string_view idText = item;
    double weight = 1;
    if (column.weighted) {
      const size_t colon = item.rfind(':');
      if (colon == std::string_view::npos || !parseDouble(item.substr(colon + 1), weight))
        return fail(problem, column, "bad weight",
                    quoted(item) + " is not id:weight with a finite weight");
      idText = item.substr(0, colon);
    }
    int64_t id;
    if (!decodeId(slot, idText, id, problem))
      return false;
    row.id(slot.index, id);
    if (column.weighted)
      row.weight(slot.index, float(weight));
    if (slot.hotness > 0 && int64_t(row.bagSize(slot.index)) > slot.hotness)
      return fail(problem, column, "too many ids",
                  "more than " + std::to_string(slot.hotness) + " ids for feature '" +
                      slot.feature + "' (its hotness) in " + quoted(field));
    if (end == std::string_view::npos)
      return true;
    pos = end + column.separator.size();
  }
}

} // namespace

bool embc::runtime::data::checkLabel(const ColumnSlot &slot, double value,
                                     LineProblem &problem) {
  const SchemaColumn &column = *slot.column;
  switch (column.labelKind) {
  case LabelKind::Binary:
    if (value != 0 && value != 1)
      return fail(problem, column, "bad label",
                  shortNumber(value) + " is not 0 or 1");
    break;
  case LabelKind::Real:
    if (!std::isfinite(value) || std::abs(value) > 3.4e38)
      return fail(problem, column, "bad label", "label is not a finite float");
    break;
  case LabelKind::Class:
    if (value != std::floor(value) || value < 0 || (slot.classes > 0 && value >= slot.classes))
      return fail(problem, column, "bad label",
                  "class " + shortNumber(value) + " is not an integer in [0, " +
                      std::to_string(slot.classes) + ")");
    break;
  }
  return true;
}

bool embc::runtime::data::decodeTextRecord(const RowLayout &layout, const LineFields &line,
                                           size_t fieldCount, RowWriter &row,
                                           LineProblem &problem) {
  const auto &fields = line.fields;
  for (const ColumnSlot &slot : layout.slots) {
    const SchemaColumn &column = *slot.column;
    const size_t last = size_t(slot.field + column.width);
    if (fieldCount == 0 && fields.size() < last) {
      problem.category = "wrong field count";
      problem.reason = columnWhere(column) + " reads field " + std::to_string(last - 1) +
                       " (from 0), but the line has " + std::to_string(fields.size()) +
                       " fields";
      return false;
    }
    switch (column.type) {
    case ColumnType::Label: {
      std::string_view field = fields[size_t(slot.field)];
      double value;
      if (field.empty())
        return fail(problem, column, "bad label", "the label is missing");
      if (!parseDouble(field, value))
        return fail(problem, column, "bad label", quoted(field) + " is not a number");
      if (!checkLabel(slot, value, problem))
        return false;
      row.label(slot.index, float(value));
      break;
    }
    case ColumnType::Dense:
      for (int64_t k = 0; k < column.width; ++k) {
        std::string_view field = fields[size_t(slot.field + k)];
        double value = column.missing;
        if (!field.empty() && !parseDouble(field, value))
          return fail(problem, column, "bad number",
                      "field " + std::to_string(slot.field + k) + " " + quoted(field) +
                          " is not a number");
        row.dense(slot.index + size_t(k), transformDense(column, value));
      }
      break;
    case ColumnType::Categorical:
      if (!decodeBag(slot, fields[size_t(slot.field)], row, problem))
        return false;
      break;
    }
  }
  return true;
}

bool embc::runtime::data::decodeBinaryRecord(const RowLayout &layout, const int32_t *record,
                                             RowWriter &row, LineProblem &problem) {
  for (const ColumnSlot &slot : layout.slots) {
    const SchemaColumn &column = *slot.column;
    switch (column.type) {
    case ColumnType::Label:
      if (!checkLabel(slot, record[slot.field], problem))
        return false;
      row.label(slot.index, float(record[slot.field]));
      break;
    case ColumnType::Dense:
      for (int64_t k = 0; k < column.width; ++k)
        row.dense(slot.index + size_t(k), transformDense(column, record[slot.field + k]));
      break;
    case ColumnType::Categorical: {
      const int64_t id = record[slot.field];
      if (id < 0)
        return fail(problem, column, "bad id", "id " + std::to_string(id) + " is negative");
      if (!idInRange(slot, id, problem))
        return false;
      row.id(slot.index, id);
      break;
    }
    }
  }
  return true;
}
