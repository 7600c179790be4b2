//===- Schema.cpp - reading and writing data schemas ----------------------===//

#include "embc/runtime/data/Schema.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace embc::runtime;
using namespace embc::runtime::data;
using nlohmann::json;

namespace {

std::string describe(const json &value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "a number";
  }
}

/// An object and its pointer: typed, checked access with the pointer in
/// every error (as the model parser's JsonNode, without the frontend).
class Node {
public:
  Node(const json &value, std::string pointer) : value_(value), pointer_(std::move(pointer)) {
    if (!value_.is_object())
      fail("expected an object, got " + describe(value_));
  }
  const std::string &pointer() const { return pointer_; }
  std::string at(const std::string &key) const { return pointer_ + "/" + key; }
  [[noreturn]] void fail(const std::string &message) const {
    throw SchemaError(pointer_, message);
  }
  [[noreturn]] void failAt(const std::string &key, const std::string &message) const {
    throw SchemaError(at(key), message);
  }
  bool has(const std::string &key) const { return value_.contains(key); }
  const json &get(const std::string &key) const { return value_.at(key); }

  /// Refuses keys not in `allowed` (a typo must not be ignored).
  void onlyKeys(std::initializer_list<const char *> allowed) const {
    for (auto it = value_.begin(); it != value_.end(); ++it) {
      // Not a structured binding: clang before 16 (the fuzzers') cannot
      // capture one in a lambda.
      const std::string &key = it.key();
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char *a) { return key == a; })) {
        std::string list;
        for (const char *a : allowed)
          list += (list.empty() ? "" : ", ") + std::string(a);
        failAt(key, "unknown field '" + key + "' (expected one of: " + list + ")");
      }
    }
  }
  std::string string(const std::string &key, std::optional<std::string> fallback) const {
    if (!has(key)) {
      if (!fallback)
        fail("missing required field '" + key + "'");
      return *fallback;
    }
    if (!get(key).is_string())
      failAt(key, "'" + key + "' must be a string, got " + describe(get(key)));
    return get(key).get<std::string>();
  }
  bool boolean(const std::string &key, bool fallback) const {
    if (!has(key))
      return fallback;
    if (!get(key).is_boolean())
      failAt(key, "'" + key + "' must be true or false, got " + describe(get(key)));
    return get(key).get<bool>();
  }
  int64_t integer(const std::string &key, int64_t low, int64_t high, int64_t fallback) const {
    if (!has(key))
      return fallback;
    const json &v = get(key);
    if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > high)
      failAt(key, "'" + key + "' must be an integer in [" + std::to_string(low) + ", " +
                      std::to_string(high) + "], got " + v.dump());
    return v.get<int64_t>();
  }
  double number(const std::string &key, double fallback) const {
    if (!has(key))
      return fallback;
    const json &v = get(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      failAt(key, "'" + key + "' must be a finite number, got " + v.dump());
    return v.get<double>();
  }
  template <class E> E word(const std::string &key, E fallback) const {
    if (!has(key))
      return fallback;
    std::string text = string(key, std::nullopt);
    std::optional<E> e = parseEnum<E>(text);
    if (!e)
      failAt(key, "'" + key + "' must be " + enumChoices<E>() + ", got '" + text + "'");
    return *e;
  }

private:
  const json &value_;
  std::string pointer_;
};

bool isIdentifier(const std::string &name) {
  if (name.empty() || !(std::isalpha(uint8_t(name[0])) || name[0] == '_'))
    return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(uint8_t(c)) || c == '_'; });
}

bool isText(DataFormat f) { return f == DataFormat::Csv || f == DataFormat::Tsv; }

/// The location keys: `field` (text, binary) or `file`/`column` (npy).
void readLocation(const Node &c, const DataSchema &schema, SchemaColumn &column) {
  if (schema.format == DataFormat::Npy) {
    if (c.has("field"))
      c.failAt("field", "an npy schema's columns name their 'file', not a 'field'");
    column.file = c.string("file", std::nullopt);
    if (column.file.empty())
      c.failAt("file", "'file' must not be empty");
    column.npyColumn = c.integer("column", 0, int64_t(1) << 20, -1);
    return;
  }
  if (c.has("file") || c.has("column"))
    c.failAt(c.has("file") ? "file" : "column",
             "only an npy schema's columns name a 'file' (this one is " +
                 enumString(schema.format) + ")");
  if (!c.has("field"))
    c.fail("missing required field 'field' (the field's index from 0" +
           std::string(schema.header ? ", or its name in the header)" : ")"));
  const json &field = c.get("field");
  if (field.is_string()) {
    if (!isText(schema.format) || !schema.header)
      c.failAt("field", "a field named by the header needs \"header\": true (it is '" +
                            field.get<std::string>() + "')");
    column.header = field.get<std::string>();
    if (column.header.empty())
      c.failAt("field", "the field's name must not be empty");
    return;
  }
  column.field = c.integer("field", 0, 1 << 20, -1);
  if (schema.fieldCount > 0 && column.field + column.width > schema.fieldCount)
    c.failAt("field", "fields " + std::to_string(column.field) + ".." +
                          std::to_string(column.field + column.width - 1) +
                          " lie beyond the schema's " + std::to_string(schema.fieldCount) +
                          " fields");
  if (schema.format == DataFormat::Binary && column.field + column.width > schema.recordFields)
    c.failAt("field", "fields " + std::to_string(column.field) + ".." +
                          std::to_string(column.field + column.width - 1) +
                          " lie beyond a record of " + std::to_string(schema.recordFields) +
                          " fields");
}

SchemaColumn readColumn(const Node &c, const DataSchema &schema) {
  SchemaColumn column;
  column.pointer = c.pointer();
  column.type = c.word<ColumnType>("type", ColumnType::Dense);
  if (!c.has("type"))
    c.fail("missing required field 'type' (" + enumChoices<ColumnType>() + ")");
  switch (column.type) {
  case ColumnType::Label:
    c.onlyKeys({"name", "type", "field", "file", "column", "kind"});
    column.labelKind = c.word<LabelKind>("kind", LabelKind::Binary);
    break;
  case ColumnType::Dense: {
    c.onlyKeys({"name", "type", "field", "file", "column", "width", "clip", "log1p", "missing"});
    column.width = c.integer("width", 1, 65536, 1);
    if (c.has("clip")) {
      const json &clip = c.get("clip");
      auto bound = [&](size_t i) -> std::optional<double> {
        const json &b = clip[i];
        if (b.is_null())
          return std::nullopt;
        if (!b.is_number() || !std::isfinite(b.get<double>()))
          throw SchemaError(c.at("clip") + "/" + std::to_string(i),
                            "a clip bound must be a finite number or null, got " + b.dump());
        return b.get<double>();
      };
      if (!clip.is_array() || clip.size() != 2)
        c.failAt("clip", "'clip' must be [low, high] (either may be null), got " + clip.dump());
      column.clipLow = bound(0), column.clipHigh = bound(1);
      if (column.clipLow && column.clipHigh && *column.clipLow > *column.clipHigh)
        c.failAt("clip", "the low bound exceeds the high one: " + clip.dump());
    }
    column.log1p = c.boolean("log1p", false);
    if (column.log1p && !(column.clipLow && *column.clipLow > -1))
      c.failAt("log1p", "log1p needs values above -1: clip them, as \"clip\": [0, null]");
    column.missing = c.number("missing", 0);
    break;
  }
  case ColumnType::Categorical:
    c.onlyKeys({"name", "type", "field", "file", "column", "encoding", "vocab_file",
                "separator", "weighted"});
    column.encoding = c.word<IdEncoding>("encoding", IdEncoding::Int);
    if (column.encoding == IdEncoding::Vocab)
      column.vocabFile = c.string("vocab_file", std::nullopt);
    else if (c.has("vocab_file"))
      c.failAt("vocab_file", "a vocabulary file needs \"encoding\": \"vocab\"");
    column.separator = c.string("separator", "");
    column.weighted = c.boolean("weighted", false);
    if (!isText(schema.format)) {
      for (const char *key : {"encoding", "separator", "weighted"})
        if (c.has(key))
          c.failAt(key, "'" + std::string(key) + "' applies to text fields; " +
                            enumString(schema.format) + " data holds integer ids");
    } else if (column.separator == schema.delimiter) {
      c.failAt("separator", "the id separator must differ from the field delimiter");
    } else if (column.weighted && column.separator == ":") {
      c.failAt("separator", "weighted ids are \"id:weight\": the separator cannot be ':'");
    }
    break;
  }
  readLocation(c, schema, column);
  return column;
}

} // namespace

const SchemaColumn *DataSchema::find(const std::string &name) const {
  for (const SchemaColumn &c : columns)
    if (c.name == name)
      return &c;
  return nullptr;
}

std::string DataSchema::columnList() const {
  if (!columnListing.empty())
    return columnListing;
  std::string list;
  for (const SchemaColumn &c : columns)
    list += (list.empty() ? "" : ", ") + c.name;
  return list;
}

DataSchema embc::runtime::data::parseDataSchema(const json &value, const std::string &pointer) {
  Node s(value, pointer);
  s.onlyKeys({"format", "delimiter", "quote", "header", "fields", "record_fields", "columns"});
  DataSchema schema;
  if (!s.has("format"))
    s.fail("missing required field 'format' (" + enumChoices<DataFormat>() + ")");
  schema.format = s.word<DataFormat>("format", DataFormat::Csv);
  const bool text = isText(schema.format);
  for (const char *key : {"delimiter", "quote", "header", "fields"})
    if (!text && s.has(key))
      s.failAt(key, "'" + std::string(key) + "' applies to csv and tsv data, not " +
                        enumString(schema.format));
  if (schema.format == DataFormat::Binary)
    schema.recordFields = s.integer("record_fields", 1, 4096, 0);
  else if (s.has("record_fields"))
    s.failAt("record_fields", "'record_fields' applies to binary data");
  if (schema.format == DataFormat::Binary && schema.recordFields == 0)
    s.fail("missing required field 'record_fields' (int32 fields a record)");
  if (text) {
    const bool csv = schema.format == DataFormat::Csv;
    schema.delimiter = s.string("delimiter", csv ? "," : "\t");
    if (schema.delimiter.empty() || schema.delimiter.find_first_of("\r\n") != std::string::npos)
      s.failAt("delimiter", "the delimiter must be non-empty and without line breaks");
    std::string quote = s.string("quote", csv ? "\"" : "");
    if (quote.size() > 1 || quote == "\n" || quote == "\r" ||
        (quote.size() == 1 && schema.delimiter.find(quote[0]) != std::string::npos))
      s.failAt("quote", "the quote must be one character (not a line break or part of the "
                        "delimiter) or \"\" for none, got '" + quote + "'");
    schema.quote = quote.empty() ? 0 : quote[0];
    schema.header = s.boolean("header", false);
    schema.fieldCount = s.integer("fields", 1, 1 << 20, 0);
  }
  if (!s.has("columns") || !s.get("columns").is_array() || s.get("columns").empty())
    s.failAt("columns", "'columns' must be a non-empty array of columns");
  std::set<std::string> names;
  const json &columns = s.get("columns");
  for (size_t i = 0; i < columns.size(); ++i) {
    Node c(columns[i], s.at("columns") + "/" + std::to_string(i));
    SchemaColumn column = readColumn(c, schema);
    column.name = c.string("name", std::nullopt);
    if (!isIdentifier(column.name))
      c.failAt("name", "a column name must be an identifier, got '" + column.name + "'");
    if (!names.insert(column.name).second)
      c.failAt("name", "column '" + column.name + "' is declared twice");
    schema.columns.push_back(std::move(column));
  }
  return schema;
}

json embc::runtime::data::dataSchemaToJson(const DataSchema &schema) {
  json out = {{"format", enumString(schema.format)}};
  const bool text = isText(schema.format);
  if (text) {
    out["delimiter"] = schema.delimiter;
    out["quote"] = schema.quote ? std::string(1, schema.quote) : std::string();
    out["header"] = schema.header;
    if (schema.fieldCount > 0)
      out["fields"] = schema.fieldCount;
  }
  if (schema.format == DataFormat::Binary)
    out["record_fields"] = schema.recordFields;
  json columns = json::array();
  for (const SchemaColumn &c : schema.columns) {
    json column = {{"name", c.name}, {"type", enumString(c.type)}};
    if (schema.format == DataFormat::Npy) {
      column["file"] = c.file;
      if (c.npyColumn >= 0)
        column["column"] = c.npyColumn;
    } else if (!c.header.empty()) {
      column["field"] = c.header;
    } else {
      column["field"] = c.field;
    }
    switch (c.type) {
    case ColumnType::Label:
      column["kind"] = enumString(c.labelKind);
      break;
    case ColumnType::Dense:
      column["width"] = c.width;
      if (c.clipLow || c.clipHigh)
        column["clip"] = {c.clipLow ? json(*c.clipLow) : json(nullptr),
                          c.clipHigh ? json(*c.clipHigh) : json(nullptr)};
      column["log1p"] = c.log1p;
      column["missing"] = c.missing;
      break;
    case ColumnType::Categorical:
      if (text) {
        column["encoding"] = enumString(c.encoding);
        if (c.encoding == IdEncoding::Vocab)
          column["vocab_file"] = c.vocabFile;
        if (!c.separator.empty())
          column["separator"] = c.separator;
        column["weighted"] = c.weighted;
      }
      break;
    }
    columns.push_back(std::move(column));
  }
  out["columns"] = std::move(columns);
  return out;
}

std::optional<std::string> embc::runtime::data::bindingProblem(const SchemaColumn &column,
                                                              const FeatureSpec &feature) {
  const std::string is = "column '" + column.name + "' is " + enumString(column.type);
  switch (feature.kind) {
  case FeatureKind::Negatives:
    return std::string("negatives are drawn by the text reader; a data schema has none");
  case FeatureKind::Label:
    if (column.type != ColumnType::Label)
      return "a label feature reads a label column, but " + is;
    if (column.labelKind != feature.labelKind)
      return "the feature is a " + enumString(feature.labelKind) + " label, but column '" +
             column.name + "' holds " + enumString(column.labelKind) + " labels";
    return std::nullopt;
  case FeatureKind::Dense:
    if (column.type != ColumnType::Dense)
      return "a dense feature reads a dense column, but " + is;
    if (column.width != feature.width)
      return "the feature has width " + std::to_string(feature.width) + ", column '" +
             column.name + "' " + std::to_string(column.width);
    return std::nullopt;
  case FeatureKind::Sparse:
    if (column.type != ColumnType::Categorical)
      return "a sparse or sequence feature reads a categorical column, but " + is;
    if (column.weighted != feature.weighted)
      return column.weighted ? "column '" + column.name +
                                   "' has a weight per id (id:weight): the feature must be "
                                   "\"weighted\""
                             : "the feature is weighted, but column '" + column.name +
                                   "' has no weights (\"weighted\": true reads id:weight)";
    if (column.encoding == IdEncoding::Hash && feature.vocab > 0)
      return "column '" + column.name +
             "' hashes strings into 63-bit ids: the feature needs \"hash\": true";
    return std::nullopt;
  }
  return std::nullopt;
}
