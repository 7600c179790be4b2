//===- JsonNode.h - typed, pointer-aware access to model JSON ---*- C++ -*-===//
//
// A JSON value together with its JSON pointer. Every accessor checks the type
// and range of what it reads and throws SchemaError naming the pointer, so the
// model parser reads like the format description and cannot forget a check.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_FRONTEND_JSONNODE_H
#define EMBC_FRONTEND_JSONNODE_H

#include "embc/runtime/plan/Enums.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::frontend {

using Json = nlohmann::ordered_json;

/// A schema violation at a JSON pointer.
struct SchemaError : std::runtime_error {
  SchemaError(std::string pointer, const std::string &message)
      : std::runtime_error(message), pointer(std::move(pointer)) {}
  std::string pointer;
};

/// Escapes one reference token of a JSON pointer (RFC 6901).
std::string escapePointerToken(const std::string &token);

/// Describes a JSON value's type for messages: "a string", "an array", ...
std::string describeType(const Json &value);

class JsonNode {
public:
  JsonNode(const Json &value, std::string pointer)
      : value_(&value), pointer_(std::move(pointer)) {}

  const Json &json() const { return *value_; }
  const std::string &pointer() const { return pointer_; }
  std::string childPointer(const std::string &key) const {
    return pointer_ + "/" + escapePointerToken(key);
  }
  std::string childPointer(size_t index) const {
    return pointer_ + "/" + std::to_string(index);
  }

  [[noreturn]] void fail(const std::string &message) const {
    throw SchemaError(pointer_, message);
  }
  [[noreturn]] void failAt(const std::string &key,
                           const std::string &message) const {
    throw SchemaError(childPointer(key), message);
  }

  /// Checks that this is an object whose keys are all in `allowed`.
  void expectObject(const std::string &what,
                    std::initializer_list<const char *> allowed) const;
  /// Checks that this is an array; returns its elements as nodes.
  std::vector<JsonNode> elements(const std::string &what) const;

  bool has(const std::string &key) const;
  /// The child `key`; fails with "missing required field" if absent.
  JsonNode child(const std::string &key) const;

  std::string getString(const std::string &key) const;
  std::string getString(const std::string &key, const std::string &dflt) const;
  /// A string that must be one of `choices`.
  std::string getEnum(const std::string &key,
                      std::initializer_list<const char *> choices,
                      std::optional<std::string> dflt = std::nullopt) const;
  std::string getEnum(const std::string &key, std::vector<std::string_view> choices,
                      std::optional<std::string> dflt = std::nullopt) const;
  /// A word of the plan's enumeration E (runtime/include/embc/runtime/plan/
  /// Enums.h, which spells the words once for the whole project).
  template <class E> E getWord(const std::string &key, std::optional<E> dflt = std::nullopt) const {
    const auto &names = runtime::EnumTraits<E>::names;
    std::string word = getEnum(key, std::vector<std::string_view>(std::begin(names), std::end(names)),
                               dflt ? std::optional<std::string>(runtime::enumString(*dflt))
                                    : std::nullopt);
    return *runtime::parseEnum<E>(word);
  }
  /// The same, where only the words of `allowed` apply here.
  template <class E>
  E getWord(const std::string &key, std::initializer_list<E> allowed,
            std::optional<E> dflt = std::nullopt) const {
    std::vector<std::string_view> words;
    for (E e : allowed)
      words.push_back(runtime::enumName(e));
    std::string word = getEnum(key, words,
                               dflt ? std::optional<std::string>(runtime::enumString(*dflt))
                                    : std::nullopt);
    return *runtime::parseEnum<E>(word);
  }
  /// An identifier ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters).
  std::string getIdentifier(const std::string &key) const;
  int64_t getInt(const std::string &key, int64_t min, int64_t max,
                 std::optional<int64_t> dflt = std::nullopt) const;
  double getDouble(const std::string &key, double dflt) const;
  double getDouble(const std::string &key) const;
  bool getBool(const std::string &key, bool dflt) const;
  /// A non-empty list of identifiers.
  std::vector<std::string> getIdentifierList(const std::string &key,
                                             size_t minSize) const;
  /// A non-empty list of integers in [min, max].
  std::vector<int64_t> getIntList(const std::string &key, int64_t min,
                                  int64_t max) const;

private:
  const Json *value_;
  std::string pointer_;
};

} // namespace embc::frontend

#endif // EMBC_FRONTEND_JSONNODE_H
