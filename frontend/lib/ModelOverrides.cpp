//===- ModelOverrides.cpp - embc --set on a model's JSON ------------------===//

#include "ModelOverrides.h"

#include <vector>

using namespace embc::frontend;

namespace {

/// The reference tokens of `pointer` ("/a/b~1c" -> {"a", "b/c"}).
std::vector<std::string> pointerTokens(const std::string &pointer, const std::string &setting) {
  std::vector<std::string> tokens;
  for (size_t at = 0; at < pointer.size();) {
    size_t next = pointer.find('/', at + 1);
    if (next == std::string::npos)
      next = pointer.size();
    std::string token;
    for (size_t i = at + 1; i < next; ++i) {
      if (pointer[i] != '~') {
        token += pointer[i];
        continue;
      }
      const char escaped = i + 1 < next ? pointer[i + 1] : '\0';
      if (escaped != '0' && escaped != '1')
        throw SchemaError(pointer, "--set '" + setting +
                                       "': '~' in a JSON pointer must be '~0' or '~1'");
      token += escaped == '0' ? '~' : '/';
      ++i;
    }
    tokens.push_back(token);
    at = next;
  }
  return tokens;
}

/// The index `token` names in an array of `size` values, or throws.
size_t arrayIndex(const std::string &token, size_t size, const std::string &at,
                  const std::string &setting) {
  const bool digits = !token.empty() && token.size() <= 9 &&
                      token.find_first_not_of("0123456789") == std::string::npos &&
                      (token == "0" || token[0] != '0');
  if (!digits || std::stoul(token) >= size)
    throw SchemaError(at, "--set '" + setting + "': the array here has " + std::to_string(size) +
                              " values, no index '" + token + "'");
  return std::stoul(token);
}

/// Whether `value` may replace `old`: the same JSON type, an integer where
/// an integer is, and a whole or fractional number where a fraction is.
bool sameType(const Json &old, const Json &value) {
  if (old.is_number_float())
    return value.is_number();
  if (old.is_number_integer())
    return value.is_number_integer();
  return old.type() == value.type();
}

} // namespace

void embc::frontend::applyOverride(Json &root, const std::string &setting) {
  const size_t equals = setting.find('=');
  if (equals == std::string::npos || equals == 0 || setting[0] != '/')
    throw SchemaError("", "--set '" + setting +
                              "': expected /json/pointer=VALUE (e.g. /optimizer/dense/lr=0.05)");
  const std::string pointer = setting.substr(0, equals), text = setting.substr(equals + 1);
  Json value;
  try {
    value = Json::parse(text);
  } catch (const Json::exception &) {
    value = text; // a bare word: the string
  }
  const std::vector<std::string> tokens = pointerTokens(pointer, setting);
  Json *node = &root;
  std::string at;
  for (size_t t = 0; t + 1 < tokens.size(); ++t) {
    const std::string &token = tokens[t];
    const std::string parent = at.empty() ? "/" : at;
    at += "/" + escapePointerToken(token);
    if (node->is_object()) {
      auto it = node->find(token);
      if (it == node->end())
        throw SchemaError(at, "--set '" + setting + "': the model has nothing here");
      node = &*it;
    } else if (node->is_array()) {
      node = &(*node)[arrayIndex(token, node->size(), at, setting)];
    } else {
      throw SchemaError(parent, "--set '" + setting + "': " + describeType(*node) +
                                    " here has no '" + token + "'");
    }
  }
  const std::string &last = tokens.back();
  const std::string target = at + "/" + escapePointerToken(last);
  Json *old = nullptr;
  if (node->is_object()) {
    auto it = node->find(last);
    if (it == node->end()) {
      (*node)[last] = value; // a new key: the model reader checks it
      return;
    }
    old = &*it;
  } else if (node->is_array()) {
    old = &(*node)[arrayIndex(last, node->size(), target, setting)];
  } else {
    throw SchemaError(at.empty() ? "/" : at, "--set '" + setting + "': " +
                                                 describeType(*node) + " here has no '" + last +
                                                 "'");
  }
  if (!sameType(*old, value))
    throw SchemaError(target, "--set '" + setting + "': the model has " + describeType(*old) +
                                  " here, the value is " + describeType(value));
  *old = value;
}
