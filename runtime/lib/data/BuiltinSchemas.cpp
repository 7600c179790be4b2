//===- BuiltinSchemas.cpp - the Criteo, MovieLens and MLPerf readers ------===//
//
// The built-in readers are schemas over the generic reader, written here as
// a user would write them in a model file (docs/model-format.md shows the
// Criteo one in JSON; a test reads Criteo both ways and compares batches).
//
//   criteo         label \t I1..I13 \t C1..C26: integers become
//                  log(1 + max(x, 0)) as in DLRM's preprocessing (missing: 0),
//                  categories 8 hex digits as an unsigned id (missing: an
//                  empty bag); `dense` is I1..I13 together.
//   movielens      user, item, rating, timestamp separated by tabs (ML-100K's
//                  u.data), "::" (ratings.dat of ML-1M, ML-10M) or commas
//                  after the header userId,movieId,rating,timestamp
//                  (ratings.csv of ML-20M, ML-25M, ml-latest); the separator
//                  is the first line's.
//   mlperf_criteo  the MLPerf DLRM reference's preprocessed binary Criteo:
//                  40 little-endian int32 a record (label, 13 integer
//                  features, 26 category indices), the same columns as criteo.
//
//===----------------------------------------------------------------------===//

#include "ExampleSource.h"
#include "RecordParts.h"

#include <fstream>

using namespace embc::runtime;
using namespace embc::runtime::data;

namespace {

SchemaColumn column(std::string name, ColumnType type, int64_t field) {
  SchemaColumn c;
  c.name = std::move(name);
  c.type = type;
  c.field = field;
  return c;
}

/// Criteo's columns over fields 0..39 (text or binary records alike).
void addCriteoColumns(DataSchema &schema, IdEncoding ids) {
  schema.columns.push_back(column("label", ColumnType::Label, 0));
  auto dense = [](std::string name, int64_t field, int64_t width) {
    SchemaColumn c = column(std::move(name), ColumnType::Dense, field);
    c.width = width;
    c.clipLow = 0.0;
    c.log1p = true;
    return c;
  };
  schema.columns.push_back(dense("dense", 1, 13));
  for (int i = 0; i < 13; ++i)
    schema.columns.push_back(dense("I" + std::to_string(i + 1), 1 + i, 1));
  for (int c = 0; c < 26; ++c) {
    SchemaColumn id = column("C" + std::to_string(c + 1), ColumnType::Categorical, 14 + c);
    id.encoding = ids;
    schema.columns.push_back(id);
  }
}

} // namespace

DataSchema embc::runtime::data::criteoSchema() {
  DataSchema schema;
  schema.format = DataFormat::Tsv;
  schema.delimiter = "\t";
  schema.quote = 0;
  schema.fieldCount = 40;
  schema.origin = "criteo data";
  schema.columnListing = "label, dense, I1..I13, C1..C26";
  addCriteoColumns(schema, IdEncoding::Hex);
  return schema;
}

DataSchema embc::runtime::data::mlperfCriteoSchema() {
  DataSchema schema;
  schema.format = DataFormat::Binary;
  schema.recordFields = 40;
  schema.origin = "mlperf_criteo data";
  schema.columnListing = "label, dense, I1..I13, C1..C26";
  addCriteoColumns(schema, IdEncoding::Int);
  return schema;
}

DataSchema embc::runtime::data::movieLensSchema(const std::string &separator, bool header) {
  DataSchema schema;
  schema.format = separator == "," ? DataFormat::Csv : DataFormat::Tsv;
  schema.delimiter = separator;
  schema.quote = 0;
  schema.header = header;
  schema.fieldCount = 4;
  schema.origin = "movielens data";
  schema.columns.push_back(column("user", ColumnType::Categorical, 0));
  schema.columns.push_back(column("item", ColumnType::Categorical, 1));
  SchemaColumn rating = column("rating", ColumnType::Label, 2);
  rating.labelKind = LabelKind::Real;
  schema.columns.push_back(rating);
  schema.columns.push_back(column("timestamp", ColumnType::Dense, 3));
  return schema;
}

std::optional<DataSchema> embc::runtime::data::builtinSchema(const std::string &kind,
                                                             const std::string &path) {
  if (kind == "criteo")
    return criteoSchema();
  if (kind == "mlperf_criteo")
    return mlperfCriteoSchema();
  if (kind != "movielens")
    return std::nullopt;
  // The separator of the first file's first line. (A file that cannot be
  // read gets a tab here and its error when it is opened.)
  std::ifstream file(expandDataPaths(path).front());
  std::string first;
  std::getline(file, first);
  if (!first.empty() && first.back() == '\r')
    first.pop_back();
  if (first.find("::") != std::string::npos)
    return movieLensSchema("::", false);
  if (first == "userId,movieId,rating,timestamp")
    return movieLensSchema(",", true);
  if (first.find(',') != std::string::npos && first.find('\t') == std::string::npos)
    return movieLensSchema(",", false);
  return movieLensSchema("\t", false);
}
