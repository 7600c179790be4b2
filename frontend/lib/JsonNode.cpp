//===- JsonNode.cpp - typed, pointer-aware access to model JSON -----------===//

#include "JsonNode.h"

#include <cmath>
#include <sstream>

using namespace embc::frontend;

std::string embc::frontend::escapePointerToken(const std::string &token) {
  std::string out;
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string embc::frontend::describeType(const Json &value) {
  switch (value.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::object:
    return "an object";
  case Json::value_t::array:
    return "an array";
  case Json::value_t::string:
    return "a string";
  case Json::value_t::boolean:
    return "a boolean";
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    return "an integer";
  case Json::value_t::number_float:
    return "a number";
  default:
    return "an unsupported value";
  }
}

/// Quotes a short rendering of a JSON value for messages.
static std::string show(const Json &value) {
  // Only scalars are rendered: dumping a deeply nested value would recurse.
  if (value.is_structured())
    return describeType(value);
  std::string text = value.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

template <class Words> static std::string joinChoices(const Words &choices) {
  std::string out;
  for (std::string_view c : choices) {
    if (!out.empty())
      out += ", ";
    out += "'";
    out += c;
    out += "'";
  }
  return out;
}

void JsonNode::expectObject(const std::string &what,
                            std::initializer_list<const char *> allowed) const {
  if (!value_->is_object())
    fail(what + " must be an object, got " + describeType(*value_));
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    bool known = false;
    for (const char *a : allowed)
      known |= it.key() == a;
    if (!known)
      failAt(it.key(), "unknown field '" + it.key() + "' in " + what +
                           " (allowed: " + joinChoices(allowed) + ")");
  }
}

std::vector<JsonNode> JsonNode::elements(const std::string &what) const {
  if (!value_->is_array())
    fail(what + " must be an array, got " + describeType(*value_));
  std::vector<JsonNode> out;
  for (size_t i = 0; i < value_->size(); ++i)
    out.emplace_back((*value_)[i], childPointer(i));
  return out;
}

bool JsonNode::has(const std::string &key) const {
  return value_->is_object() && value_->contains(key);
}

JsonNode JsonNode::child(const std::string &key) const {
  if (!has(key))
    fail("missing required field '" + key + "'");
  return JsonNode((*value_)[key], childPointer(key));
}

std::string JsonNode::getString(const std::string &key) const {
  JsonNode c = child(key);
  if (!c.json().is_string())
    c.fail("'" + key + "' must be a string, got " + describeType(c.json()));
  return c.json().get<std::string>();
}

std::string JsonNode::getString(const std::string &key,
                                const std::string &dflt) const {
  return has(key) ? getString(key) : dflt;
}

template <class Words>
static std::string oneOf(const JsonNode &node, const std::string &key, const Words &choices,
                         const std::optional<std::string> &dflt) {
  if (!node.has(key) && dflt)
    return *dflt;
  std::string value = node.getString(key);
  for (std::string_view c : choices)
    if (value == c)
      return value;
  node.failAt(key, "'" + key + "' must be one of " + joinChoices(choices) + ", got '" + value +
                       "'");
}

std::string JsonNode::getEnum(const std::string &key,
                              std::initializer_list<const char *> choices,
                              std::optional<std::string> dflt) const {
  return oneOf(*this, key, choices, dflt);
}

std::string JsonNode::getEnum(const std::string &key, std::vector<std::string_view> choices,
                              std::optional<std::string> dflt) const {
  return oneOf(*this, key, choices, dflt);
}

std::string JsonNode::getIdentifier(const std::string &key) const {
  std::string value = getString(key);
  bool ok = !value.empty() && value.size() <= 128 &&
            (std::isalpha((unsigned char)value[0]) || value[0] == '_');
  for (char c : value)
    ok &= std::isalnum((unsigned char)c) || c == '_';
  if (!ok)
    failAt(key, "'" + key + "' must be an identifier ([A-Za-z_][A-Za-z0-9_]*, "
                            "at most 128 characters), got " +
                    show(child(key).json()));
  return value;
}

int64_t JsonNode::getInt(const std::string &key, int64_t min, int64_t max,
                         std::optional<int64_t> dflt) const {
  if (!has(key) && dflt)
    return *dflt;
  JsonNode c = child(key);
  const Json &v = c.json();
  std::string range =
      "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (v.is_number_unsigned()) {
    // nlohmann stores every non-negative integer as unsigned: check both ends.
    uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(max) || (min > 0 && u < uint64_t(min)))
      c.fail("'" + key + "' must be an integer in " + range + ", got " +
             show(v));
    return int64_t(u);
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < min || i > max)
      c.fail("'" + key + "' must be an integer in " + range + ", got " +
             show(v));
    return i;
  }
  c.fail("'" + key + "' must be an integer in " + range + ", got " +
         describeType(v) + " " + show(v));
}

double JsonNode::getDouble(const std::string &key) const {
  JsonNode c = child(key);
  if (!c.json().is_number())
    c.fail("'" + key + "' must be a number, got " + describeType(c.json()));
  double d = c.json().get<double>();
  if (!std::isfinite(d))
    c.fail("'" + key + "' must be finite");
  return d;
}

double JsonNode::getDouble(const std::string &key, double dflt) const {
  return has(key) ? getDouble(key) : dflt;
}

bool JsonNode::getBool(const std::string &key, bool dflt) const {
  if (!has(key))
    return dflt;
  JsonNode c = child(key);
  if (!c.json().is_boolean())
    c.fail("'" + key + "' must be true or false, got " +
           describeType(c.json()));
  return c.json().get<bool>();
}

std::vector<std::string>
JsonNode::getIdentifierList(const std::string &key, size_t minSize) const {
  JsonNode list = child(key);
  std::vector<JsonNode> items = list.elements("'" + key + "'");
  if (items.size() < minSize)
    list.fail("'" + key + "' needs at least " + std::to_string(minSize) +
              " entries, got " + std::to_string(items.size()));
  std::vector<std::string> out;
  for (const JsonNode &item : items) {
    if (!item.json().is_string())
      item.fail("entries of '" + key + "' must be names (strings), got " +
                describeType(item.json()));
    out.push_back(item.json().get<std::string>());
  }
  return out;
}

std::vector<int64_t> JsonNode::getIntList(const std::string &key, int64_t min,
                                          int64_t max) const {
  JsonNode list = child(key);
  std::vector<JsonNode> items = list.elements("'" + key + "'");
  if (items.empty())
    list.fail("'" + key + "' must not be empty");
  std::vector<int64_t> out;
  for (const JsonNode &item : items) {
    const Json &v = item.json();
    bool ok = v.is_number_integer() &&
              (v.is_number_unsigned()
                   ? v.get<uint64_t>() <= uint64_t(max) &&
                         (min <= 0 || v.get<uint64_t>() >= uint64_t(min))
                   : v.get<int64_t>() >= min && v.get<int64_t>() <= max);
    if (!ok)
      item.fail("entries of '" + key + "' must be integers in [" +
                std::to_string(min) + ", " + std::to_string(max) + "], got " +
                show(v));
    out.push_back(v.get<int64_t>());
  }
  return out;
}
