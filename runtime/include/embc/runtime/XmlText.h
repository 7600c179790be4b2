//===- XmlText.h - text inside SVG and HTML --------------------*- C++ -*-===//
//
// The reports that write SVG or HTML (the compiler's memory report, the
// training curves) escape names the user chose the same way.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_XMLTEXT_H
#define EMBC_RUNTIME_XMLTEXT_H

#include <string>

namespace embc::runtime {

/// `text` with &, <, > and " escaped, for element text and attribute values.
inline std::string escapeXml(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

} // namespace embc::runtime

#endif // EMBC_RUNTIME_XMLTEXT_H
