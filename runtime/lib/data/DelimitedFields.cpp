//===- DelimitedFields.cpp - one line of CSV/TSV into its fields ----------===//

#include "DelimitedFields.h"

#include <cstring>

using namespace embc::runtime::data;

std::string embc::runtime::data::splitDelimited(std::string_view line,
                                                std::string_view delimiter, char quote,
                                                LineFields &out) {
  out.fields.clear();
  out.used = 0;
  size_t pos = 0;
  while (true) {
    if (quote && pos < line.size() && line[pos] == quote) {
      // A quoted field: up to the quote not doubled.
      std::string *text = nullptr;
      size_t begin = pos + 1, cursor = begin;
      while (true) {
        size_t close = line.find(quote, cursor);
        if (close == std::string_view::npos)
          return "a quoted field is not closed on its line";
        if (close + 1 < line.size() && line[close + 1] == quote) { // "" is one quote
          if (!text) {
            if (out.used == out.unescaped.size())
              out.unescaped.emplace_back();
            text = &out.unescaped[out.used++];
            text->clear();
          }
          text->append(line.substr(begin, close + 1 - begin));
          begin = cursor = close + 2;
          continue;
        }
        if (text) {
          text->append(line.substr(begin, close - begin));
          out.fields.emplace_back(*text);
        } else {
          out.fields.push_back(line.substr(begin, close - begin));
        }
        pos = close + 1;
        break;
      }
      if (pos == line.size())
        return {};
      if (line.substr(pos, delimiter.size()) != delimiter)
        return "text after a closing quote (a field's quotes must enclose all of it)";
      pos += delimiter.size();
      continue;
    }
    size_t end;
    if (delimiter.size() == 1) { // (memchr: the common case, and much faster)
      const void *at = std::memchr(line.data() + pos, delimiter[0], line.size() - pos);
      end = at ? size_t(static_cast<const char *>(at) - line.data()) : std::string_view::npos;
    } else {
      end = line.find(delimiter, pos);
    }
    out.fields.push_back(line.substr(pos, end == std::string_view::npos ? end : end - pos));
    if (end == std::string_view::npos)
      return {};
    pos = end + delimiter.size();
  }
}
