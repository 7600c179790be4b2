//===- DelimitedFields.h - one line of CSV/TSV into its fields --*- C++ -*-===//
//
// RFC 4180 quoting on one line: a field that starts with the quote character
// runs to the matching quote, "" inside it is one quote, and the delimiter
// may appear in it. A quoted field must be followed by the delimiter or the
// end of the line; a quote that is not closed on its line is malformed (a
// record that spans lines is not read: click logs have none, and splitting
// files into chunks at newlines stays correct).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_DELIMITEDFIELDS_H
#define EMBC_RUNTIME_LIB_DATA_DELIMITEDFIELDS_H

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace embc::runtime::data {

/// Reused per thread: the fields of the last line split, and storage for the
/// quoted fields that had to be unescaped.
struct LineFields {
  std::vector<std::string_view> fields;
  std::deque<std::string> unescaped; ///< a deque: growing keeps views valid
  size_t used = 0;
};

/// Splits `line` into out.fields. Returns an empty string, or why the line
/// is malformed (an unclosed quote, text after a closing quote).
std::string splitDelimited(std::string_view line, std::string_view delimiter, char quote,
                           LineFields &out);

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_DELIMITEDFIELDS_H
