//===- Schema.h - how a data file's columns become a model's inputs -*- C++ -*-===//
//
// A data schema names the columns a feature can read (its `source`) and says
// how each is made from the file: which field or .npy file, parsed how,
// transformed how. The model file's optional `data` object is one
// (docs/model-format.md, "Data schema"); embc checks it and copies it into the
// plan, and embrun reads files through it. The Criteo, MovieLens and MLPerf
// binary readers are built-in schemas over the same generic reader.
//
// One parser serves both sides: parseDataSchema() checks every field and
// throws SchemaError with the JSON pointer of what is wrong, so the compiler
// and the runtime refuse the same schemas with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_DATA_SCHEMA_H
#define EMBC_RUNTIME_DATA_SCHEMA_H

#include "embc/runtime/data/Data.h"
#include "embc/runtime/plan/Enums.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::data {

/// What is wrong with a schema, and where (a JSON pointer such as
/// "/data/columns/3/encoding").
struct SchemaError : std::runtime_error {
  SchemaError(std::string pointer, const std::string &message)
      : std::runtime_error(message), pointer(std::move(pointer)) {}
  std::string pointer;
};

using runtime::ColumnType;
using runtime::DataFormat;
/// How a categorical field's text becomes ids:
///   int    a non-negative decimal integer
///   hex    1 to 16 hex digits, an unsigned id (Criteo's 8-digit hashes)
///   hash   any string: xxh64 of its bytes (seed 0), top bit cleared; read by
///          features with `hash`, whose table's hash op buckets it
///   vocab  the line number (from 1) of the string in a vocabulary file; 0
///          for a string it does not have (the unknown bucket)
using runtime::IdEncoding;
using runtime::LabelKind;

struct SchemaColumn {
  std::string name;    ///< what features name in `source`
  std::string pointer; ///< where it was declared ("/data/columns/3"), for messages
  ColumnType type = ColumnType::Dense;

  // Where its values come from.
  int64_t field = -1;   ///< delimited text and binary: first field, from 0
  std::string header;   ///< delimited text with a header: the field's name instead
  int64_t width = 1;    ///< dense: consecutive fields (text) or floats per row
  std::string file;     ///< npy: the column's file, relative to the data path
  int64_t npyColumn = -1; ///< npy: one column of a 2-D array (-1: all of it)

  // Label.
  LabelKind labelKind = LabelKind::Binary;

  // Dense: clip to [clipLow, clipHigh], then log(1 + x); an empty field is
  // `missing` (before the transforms).
  std::optional<double> clipLow, clipHigh;
  bool log1p = false;
  double missing = 0;

  // Categorical.
  IdEncoding encoding = IdEncoding::Int;
  std::string vocabFile;   ///< Vocab: one string a line, relative to the data path
  std::string separator;   ///< multi-hot: ids inside the field (empty: one id)
  bool weighted = false;   ///< each id is "id:weight"
};

struct DataSchema {
  DataFormat format = DataFormat::Csv;
  std::string delimiter = ","; ///< delimited text: between fields
  char quote = '"';            ///< delimited text: 0 for none
  bool header = false;         ///< delimited text: each file's first line names its fields
  /// Delimited text: the fields every line has (0: the header's count, or
  /// without a header at least the highest field a column reads + 1).
  int64_t fieldCount = 0;
  int64_t recordFields = 0;    ///< binary: int32 fields a record (40 for MLPerf Criteo)
  std::vector<SchemaColumn> columns;
  /// For messages: "the schema's" or "criteo's"; and the column list.
  std::string origin = "the model's data schema";
  std::string columnListing; ///< a short columnList() ("I1..I13"); empty: every name

  const SchemaColumn *find(const std::string &name) const;
  std::string columnList() const;
};

/// Checks and reads a schema (the model file's `data` object, or the plan's
/// copy of it). `pointer` is where it sits ("/data"). Throws SchemaError.
DataSchema parseDataSchema(const nlohmann::json &json, const std::string &pointer);

/// The schema in the form parseDataSchema reads (what the plan stores).
nlohmann::json dataSchemaToJson(const DataSchema &schema);

/// Why feature `feature` cannot read `column` (a kind, width, label kind,
/// weighting or id range that does not match), or nothing when it can. The
/// compiler asks this of every feature of a model with a schema, the reader
/// of every feature it binds.
std::optional<std::string> bindingProblem(const SchemaColumn &column, const FeatureSpec &feature);

/// The built-in readers as schemas (BuiltinSchemas.cpp).
DataSchema criteoSchema();
/// MovieLens ratings: `separator` "\t" (u.data), "::" (ratings.dat) or ","
/// (ratings.csv, `header` true).
DataSchema movieLensSchema(const std::string &separator, bool header);
/// The MLPerf DLRM reference's binary Criteo: 40 int32 a record.
DataSchema mlperfCriteoSchema();

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_DATA_SCHEMA_H
