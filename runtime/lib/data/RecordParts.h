//===- RecordParts.h - the records of a data set, read in ranges -*- C++ -*-===//
//
// A data set is one or more parts (text files, binary record files, or
// directories of .npy column files), read as one sequence of records. The
// reader never holds a part whole: parse() decodes the records from a cursor
// until it has the rows it was asked for, reading text in blocks of a few MB
// (parsed by several threads) and binary data through a memory map whose
// pages it releases behind it, so resident memory stays with the caller's
// blocks whatever the part's size.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_RECORDPARTS_H
#define EMBC_RUNTIME_LIB_DATA_RECORDPARTS_H

#include "RowBlock.h"

#include <memory>

namespace embc::runtime::data {

/// A place in the data set: the part, where in it (a byte offset for text,
/// a record index for binary data) and the records (lines) before it.
struct Cursor {
  size_t part = 0;
  uint64_t offset = 0;
  uint64_t record = 0;
};

struct PartProblem {
  size_t part;
  LineProblem problem; ///< problem.line: the line, or the record from 1
};

class RecordParts {
public:
  virtual ~RecordParts();
  /// Appends to `out` the valid records from `from` until `out` has `want`
  /// rows or the data ends, and returns the cursor after the last record it
  /// used. Malformed records before that go to `problems` in order; with
  /// `stopAtProblem` it returns at the first one (the caller fails).
  virtual Cursor parse(const Cursor &from, uint64_t want, RowBlock &out,
                       std::vector<PartProblem> &problems, bool stopAtProblem) const = 0;
  virtual size_t parts() const = 0;
  virtual const std::string &path(size_t part) const = 0;
  /// The data set's size in bytes (text) or records (binary), and how much
  /// of it lies before `at`: how far a read has come.
  virtual uint64_t totalUnits() const = 0;
  virtual uint64_t unitsBefore(const Cursor &at) const = 0;
  /// "line" or "record", for the stream's description.
  virtual const char *unit() const = 0;
};

/// The paths `pattern` names: itself, or the sorted matches of a glob (`*`,
/// `?`, `[...]`). Throws DataError when a glob matches nothing.
std::vector<std::string> expandDataPaths(const std::string &pattern);

/// Delimited text files (Csv, Tsv): resolves the header's field names into
/// `layout`'s slots and checks that every file has the first one's header.
std::unique_ptr<RecordParts> openTextParts(const DataSchema &schema,
                                           std::vector<std::string> paths, RowLayout &layout,
                                           int threads);
/// Binary record files (Binary) or directories of .npy files (Npy).
std::unique_ptr<RecordParts> openFixedParts(const DataSchema &schema,
                                            std::vector<std::string> paths,
                                            const RowLayout &layout, int threads);

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_RECORDPARTS_H
