//===- FileInput.h - reading data files in parallel chunks ------*- C++ -*-===//
//
// Shared by the file readers: load a whole file, cut it into chunks at line
// (or word) boundaries for parallel parsing, and describe a malformed line
// the same way everywhere: "PATH:LINE: reason (line: "content...")".
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_FILEINPUT_H
#define EMBC_RUNTIME_LIB_DATA_FILEINPUT_H

#include "embc/runtime/data/Data.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace embc::runtime::data {

/// The bytes of `path`. Throws DataError naming the path and the system's
/// reason when it cannot be read, and "file is empty" for an empty file.
std::string readWholeFile(const std::string &path);

/// [begin, end) byte ranges that cover `text` in order, at most `chunks` of
/// them, each (but the last) ending just after a character for which
/// `isBoundary` holds, so no line (or word) is split between two chunks.
std::vector<std::pair<size_t, size_t>>
splitIntoChunks(std::string_view text, int chunks, bool (*isBoundary)(char));

inline bool isNewline(char c) { return c == '\n'; }

/// Runs body(0) .. body(count - 1) on `count` threads and joins them; the
/// first exception thrown (by lowest index) is rethrown.
void runInParallel(int count, const std::function<void(int)> &body);

/// A malformed line: where, why, and a short category for DataStats.
struct LineProblem {
  uint64_t line = 0; ///< 1-based
  std::string category; ///< e.g. "wrong field count"
  std::string reason;   ///< e.g. "expected 40 tab-separated fields, got 39"
  std::string content;  ///< the line, truncated, tabs shown as \t
};

/// The line as shown in messages: at most 80 characters, tabs as "\t".
std::string excerptOfLine(std::string_view line);

/// "PATH:LINE: reason (line: "content")".
std::string describeProblem(const std::string &path, const LineProblem &problem);

/// Adds dropped lines (in file order) to `stats`.
void recordSkipped(const std::string &path, const std::vector<LineProblem> &problems,
                   DataStats &stats);

/// Parses a number the way the readers accept it: the whole field, finite.
bool parseDouble(std::string_view field, double &value);
/// Parses a base-10 integer, the whole field (an optional '-' sign).
bool parseInt64(std::string_view field, int64_t &value);

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_FILEINPUT_H
