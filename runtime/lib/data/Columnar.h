//===- Columnar.h - line-per-example files held by column -------*- C++ -*-===//
//
// The Criteo and MovieLens readers share everything but their line format:
// a file is parsed in parallel chunks into one row per valid line, stored by
// column (a label, a matrix of dense floats, a matrix of single ids), and
// features bind to named columns that are views of that storage (criteo's
// `I3` is column 2 of the dense matrix, `dense` is all 13). A reader is a
// ColumnarLayout plus a LineParser.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_COLUMNAR_H
#define EMBC_RUNTIME_LIB_DATA_COLUMNAR_H

#include "ExampleSource.h"
#include "FileInput.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace embc::runtime::data {

/// A named view of the stored rows that a feature can read.
struct ColumnInfo {
  enum class Kind { Label, Dense, Ids };
  std::string name;
  Kind kind = Kind::Dense;
  int64_t offset = 0; ///< Dense: first float in the row; Ids: index of the id in the row
  int64_t width = 1;  ///< Dense: floats
  std::vector<LabelKind> labelKinds;   ///< Label: the kinds this column can serve
};

/// The columns of one reader and the shape of its stored rows.
struct ColumnarLayout {
  std::string reader;      ///< "criteo", for messages
  int64_t denseWidth = 0;  ///< floats per row
  int64_t idColumns = 0;   ///< ids per row; -1 marks a missing id (an empty bag)
  std::vector<ColumnInfo> columns;
  std::string columnList;  ///< for messages: "label, dense, I1..I13, C1..C26"
  /// Lines at the top of the file that are its header, not examples (they
  /// keep their numbers in messages).
  int64_t headerLines = 0;
};

/// One line's values before they are stored.
struct ParsedRow {
  float label = 0;
  std::vector<float> dense;  ///< denseWidth
  std::vector<int64_t> ids;  ///< idColumns; -1: missing
};

/// Parses one non-empty line (without its line ending) into `row`. Returns
/// false with problem.category and problem.reason set when it is malformed.
using LineParser =
    std::function<bool(std::string_view line, ParsedRow &row, LineProblem &problem)>;

/// Parses the file `options.path` in parallel, binds `features` to the
/// layout's columns and returns the bound source. Throws DataError for a
/// binding error (before reading), an unreadable file, the first malformed
/// line under BadDataPolicy::Fail, and a file without valid examples.
std::shared_ptr<const ExampleSource>
openColumnarSource(const StreamOptions &options, const std::vector<FeatureSpec> &features,
                   const ColumnarLayout &layout, const LineParser &parseLine);

/// Splits `line` at `separator` into `fields`; returns the number of fields
/// (which may exceed fields.size(): the rest are not stored).
size_t splitFields(std::string_view line, std::string_view separator,
                   std::vector<std::string_view> &fields);

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_COLUMNAR_H
