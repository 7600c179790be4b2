//===- MovieLensReader.cpp - MovieLens ratings ----------------------------===//
//
// Each line: user, item, rating, timestamp, separated by tabs (ML-100K's
// u.data and its u1.base/u1.test splits), by "::" (ratings.dat of ML-1M and
// ML-10M) or by commas after the header `userId,movieId,rating,timestamp`
// (ratings.csv of ML-20M, ML-25M and ml-latest); the separator is the first
// line's, and every line must use it.
// user and item are non-negative integer ids, rating a number (kept as the
// real label; ML-10M has half stars), timestamp integer seconds (a dense
// width-1 column holding the raw value).
//
//===----------------------------------------------------------------------===//

#include "Columnar.h"

#include <cmath>
#include <fstream>

using namespace embc::runtime::data;

namespace {

constexpr int kFields = 4;
/// The largest rating magnitude read (see parseRow).
constexpr double kMaxRating = 1e6;

ColumnarLayout movieLensLayout() {
  ColumnarLayout layout;
  layout.reader = "movielens";
  layout.denseWidth = 1;
  layout.idColumns = 2;
  layout.columnList = "user, item, rating, timestamp";
  layout.columns.push_back({"user", ColumnInfo::Kind::Ids, 0, 1, {}});
  layout.columns.push_back({"item", ColumnInfo::Kind::Ids, 1, 1, {}});
  layout.columns.push_back({"rating", ColumnInfo::Kind::Label, 0, 1, {LabelKind::Real}});
  layout.columns.push_back({"timestamp", ColumnInfo::Kind::Dense, 0, 1, {}});
  return layout;
}

bool parseId(std::string_view field, const char *name, int64_t &id, LineProblem &problem) {
  if (parseInt64(field, id) && id >= 0)
    return true;
  problem.category = "bad id";
  problem.reason = std::string(name) + " '" + excerptOfLine(field) +
                   "' is not a non-negative integer";
  return false;
}

bool parseRatingLine(std::string_view separator, std::string_view line, ParsedRow &row,
                     LineProblem &problem) {
  thread_local std::vector<std::string_view> fields(kFields);
  size_t count = splitFields(line, separator, fields);
  if (count != kFields) {
    problem.category = "wrong field count";
    problem.reason = "expected 4 fields (user, item, rating, timestamp) separated by '" +
                     excerptOfLine(separator) + "', got " + std::to_string(count);
    return false;
  }
  if (!parseId(fields[0], "user", row.ids[0], problem) ||
      !parseId(fields[1], "item", row.ids[1], problem))
    return false;
  double rating;
  if (!parseDouble(fields[2], rating)) {
    problem.category = "bad number";
    problem.reason = "rating '" + excerptOfLine(fields[2]) + "' is not a number";
    return false;
  }
  // Ratings are small numbers; one like 1e30 would only surface later, as
  // an infinite squared error blamed on the learning rate.
  if (std::abs(rating) > kMaxRating) {
    problem.category = "bad number";
    problem.reason = "rating '" + excerptOfLine(fields[2]) + "' is out of range (at most " +
                     "1e6 in magnitude)";
    return false;
  }
  int64_t timestamp;
  if (!parseInt64(fields[3], timestamp)) {
    problem.category = "bad number";
    problem.reason = "timestamp '" + excerptOfLine(fields[3]) + "' is not an integer";
    return false;
  }
  row.label = static_cast<float>(rating);
  row.dense[0] = static_cast<float>(timestamp);
  return true;
}

/// The separator ("::" when the file's first line has it, "," after the
/// ratings.csv header, else a tab) and whether the first line is that
/// header. (A file that cannot be read gets a tab here and its error when
/// it is parsed.)
struct RatingsFormat {
  std::string_view separator = "\t";
  bool header = false;
};
RatingsFormat detectFormat(const std::string &path) {
  std::ifstream file(path);
  std::string firstLine;
  std::getline(file, firstLine);
  if (!firstLine.empty() && firstLine.back() == '\r')
    firstLine.pop_back();
  if (firstLine.find("::") != std::string::npos)
    return {"::", false};
  if (firstLine == "userId,movieId,rating,timestamp")
    return {",", true};
  // Comma-separated without the header (a ratings.csv cut by hand).
  if (firstLine.find(',') != std::string::npos && firstLine.find('\t') == std::string::npos)
    return {",", false};
  return {"\t", false};
}

} // namespace

std::shared_ptr<const ExampleSource>
embc::runtime::data::openMovieLensSource(const StreamOptions &options,
                                         const std::vector<FeatureSpec> &features) {
  const RatingsFormat format = detectFormat(options.path);
  ColumnarLayout layout = movieLensLayout();
  layout.headerLines = format.header ? 1 : 0;
  const std::string_view separator = format.separator;
  return openColumnarSource(
      options, features, layout,
      [separator](std::string_view line, ParsedRow &row, LineProblem &problem) {
        return parseRatingLine(separator, line, row, problem);
      });
}
