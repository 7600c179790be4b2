//===- CriteoReader.cpp - the Criteo Kaggle TSV ---------------------------===//
//
// Each line: label \t I1..I13 \t C1..C26 (40 fields; an empty field is a
// missing value). Integer features become log(1 + max(x, 0)) as in DLRM's
// preprocessing (missing: 0); categorical features are 8 hex digits parsed as
// an unsigned 32-bit id (missing: an empty bag). A line is malformed when it
// has another field count, a label other than 0 or 1, an I field that is not
// a number, or a C field that is not 1..8 hex digits.
//
//===----------------------------------------------------------------------===//

#include "Columnar.h"

#include <cmath>

using namespace embc::runtime::data;

namespace {

constexpr int kIntegerFeatures = 13, kCategoricalFeatures = 26;
constexpr int kFields = 1 + kIntegerFeatures + kCategoricalFeatures;

ColumnarLayout criteoLayout() {
  ColumnarLayout layout;
  layout.reader = "criteo";
  layout.denseWidth = kIntegerFeatures;
  layout.idColumns = kCategoricalFeatures;
  layout.columnList = "label, dense, I1..I13, C1..C26";
  layout.columns.push_back({"label", ColumnInfo::Kind::Label, 0, 1, {LabelKind::Binary}});
  layout.columns.push_back({"dense", ColumnInfo::Kind::Dense, 0, kIntegerFeatures, {}});
  for (int i = 0; i < kIntegerFeatures; ++i)
    layout.columns.push_back({"I" + std::to_string(i + 1), ColumnInfo::Kind::Dense, i, 1, {}});
  for (int c = 0; c < kCategoricalFeatures; ++c)
    layout.columns.push_back({"C" + std::to_string(c + 1), ColumnInfo::Kind::Ids, c, 1, {}});
  return layout;
}

bool parseHexId(std::string_view field, int64_t &id) {
  if (field.empty() || field.size() > 8)
    return false;
  uint64_t value = 0;
  for (char c : field) {
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0)
      return false;
    value = value * 16 + digit;
  }
  id = static_cast<int64_t>(value);
  return true;
}

bool parseCriteoLine(std::string_view line, ParsedRow &row, LineProblem &problem) {
  thread_local std::vector<std::string_view> fields(kFields);
  size_t count = splitFields(line, "\t", fields);
  if (count != kFields) {
    problem.category = "wrong field count";
    problem.reason = "expected " + std::to_string(kFields) + " tab-separated fields, got " +
                     std::to_string(count);
    return false;
  }
  if (fields[0] != "0" && fields[0] != "1") {
    problem.category = "bad label";
    problem.reason = "label '" + excerptOfLine(fields[0]) + "' is not 0 or 1";
    return false;
  }
  row.label = fields[0] == "1" ? 1.0f : 0.0f;
  for (int i = 0; i < kIntegerFeatures; ++i) {
    std::string_view field = fields[1 + i];
    if (field.empty())
      continue; // missing: 0, as prepareBatch left it
    double value;
    if (!parseDouble(field, value)) {
      problem.category = "bad number";
      problem.reason = "I" + std::to_string(i + 1) + " '" + excerptOfLine(field) +
                       "' is not a number";
      return false;
    }
    row.dense[i] = static_cast<float>(std::log1p(std::max(value, 0.0)));
  }
  for (int c = 0; c < kCategoricalFeatures; ++c) {
    std::string_view field = fields[1 + kIntegerFeatures + c];
    if (field.empty())
      continue; // missing: -1, an empty bag
    if (!parseHexId(field, row.ids[c])) {
      problem.category = "bad hex id";
      problem.reason = "C" + std::to_string(c + 1) + " '" + excerptOfLine(field) +
                       "' is not a hex id of 1 to 8 digits";
      return false;
    }
  }
  return true;
}

} // namespace

std::shared_ptr<const ExampleSource>
embc::runtime::data::openCriteoSource(const StreamOptions &options,
                                      const std::vector<FeatureSpec> &features) {
  static const ColumnarLayout layout = criteoLayout();
  return openColumnarSource(options, features, layout, parseCriteoLine);
}
