//===- SchemaReaderTest.cpp - data read through a schema ------------------===//
//
// The generic reader: CSV/TSV with quoting, headers, CRLF, missing values,
// transforms, multi-hot, weighted and hashed or vocabulary ids; .npy columns
// and binary records; Criteo through a schema written in JSON equal bit for
// bit to the built-in reader; streaming in small blocks and windows equal to
// the same order held in memory; several files as one data set; resuming
// mid-file.
//
//===----------------------------------------------------------------------===//

#include "DataTestUtil.h"

#include "embc/runtime/data/Schema.h"

#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

using namespace embc::runtime;
using namespace embc::runtime::data;
using namespace embc::runtime::data::testing;
namespace fs = std::filesystem;

namespace {

/// A fresh directory of files, removed with the object.
class TempDir {
public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "embc-schema-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data()))
      throw std::runtime_error("mkdtemp failed");
    dir_ = buffer.data();
  }
  ~TempDir() { fs::remove_all(dir_); }
  std::string write(const std::string &name, const std::string &bytes) const {
    const std::string path = dir_ + "/" + name;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  const std::string &path() const { return dir_; }

private:
  std::string dir_;
};

DataSchema schemaOf(const std::string &json) {
  return parseDataSchema(nlohmann::json::parse(json), "/data");
}

StreamOptions schemaOptions(const DataSchema &schema, const std::string &path, int64_t batch,
                            bool training, int threads = 1) {
  StreamOptions options = streamOptions("schema", path, batch, training, 7, threads);
  options.schema = std::make_shared<DataSchema>(schema);
  return options;
}

std::unique_ptr<BatchStream> openSchema(const DataSchema &schema, const std::string &path,
                                        const std::vector<FeatureSpec> &features,
                                        int64_t batch, bool training, uint64_t start = 0,
                                        int threads = 1) {
  return openStream(schemaOptions(schema, path, batch, training, threads), features, start);
}

const char *kClicksSchema = R"({
  "format": "csv", "header": true,
  "columns": [
    {"name": "clicked", "type": "label", "field": "clicked"},
    {"name": "price", "type": "dense", "field": "price", "clip": [0, null], "log1p": true,
     "missing": 3},
    {"name": "age", "type": "dense", "field": 2, "missing": -1},
    {"name": "tags", "type": "categorical", "field": "tags", "separator": "|"},
    {"name": "views", "type": "categorical", "field": "views", "separator": " ",
     "weighted": true},
    {"name": "city", "type": "categorical", "field": "city", "encoding": "hash"},
    {"name": "brand", "type": "categorical", "field": "brand", "encoding": "vocab",
     "vocab_file": "brands.txt"},
    {"name": "note", "type": "categorical", "field": "note", "encoding": "hash"}
  ]})";

std::vector<FeatureSpec> clicksFeatures() {
  FeatureSpec views = sparseFeature("views", 100, 4);
  views.weighted = true;
  return {labelFeature("clicked", "binary"), denseFeature("price", 1),
          denseFeature("age", 1),           sparseFeature("tags", 50, 3),
          views,                            sparseFeature("city", 0),
          sparseFeature("brand", 4)};
}

int64_t hashed(const std::string &text) { return int64_t(XXH64(text.data(), text.size(), 0) >> 1); }

} // namespace

TEST(SchemaReader, ReadsQuotedCsvWithEveryKindOfColumn) {
  TempDir dir;
  dir.write("brands.txt", "acme\nglobex\r\ninitech\n");
  const std::string path = dir.write(
      "clicks.csv",
      "clicked,price,age,tags,views,city,brand,note\r\n"
      "1,9,30,3|7|1,2:0.5 9:1.5,\"Paris, France\",globex,\"say \"\"hi\"\"\"\r\n"
      "0,,,,,,umbrella,\n"
      "1,-5,41.5,4,7:2,Oslo,acme,x");
  auto stream = openSchema(schemaOf(kClicksSchema), path, clicksFeatures(), 3, false);
  Batch b;
  ASSERT_TRUE(stream->next(b));
  EXPECT_EQ(b.features[0].label, (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(b.features[1].dense,
            (std::vector<float>{float(std::log1p(9.0)), float(std::log1p(3.0)), 0.0f}));
  EXPECT_EQ(b.features[2].dense, (std::vector<float>{30, -1, 41.5f}));
  EXPECT_EQ(b.features[3].ids, (std::vector<int64_t>{3, 7, 1, 4}));
  EXPECT_EQ(b.features[3].offsets, (std::vector<int64_t>{0, 3, 3, 4})); // an empty bag
  EXPECT_EQ(b.features[4].ids, (std::vector<int64_t>{2, 9, 7}));
  EXPECT_EQ(b.features[4].weights, (std::vector<float>{0.5f, 1.5f, 2.0f}));
  EXPECT_EQ(b.features[5].ids, (std::vector<int64_t>{hashed("Paris, France"), hashed("Oslo")}));
  EXPECT_EQ(b.features[5].offsets, (std::vector<int64_t>{0, 1, 1, 2}));
  EXPECT_EQ(b.features[6].ids, (std::vector<int64_t>{2, 0, 1})); // 0: not in the vocabulary
  EXPECT_FALSE(stream->next(b));
}

TEST(SchemaReader, MalformedLinesNameTheColumnAndTheLine) {
  TempDir dir;
  dir.write("brands.txt", "acme\n");
  const std::string header = "clicked,price,age,tags,views,city,brand,note\n";
  const std::string good = "1,9,30,3,2:1,a,acme,x\n";
  auto failure = [&](const std::string &line) {
    const std::string path = dir.write("bad.csv", header + good + line);
    std::string message = dataErrorOf(
        [&] { openSchema(schemaOf(kClicksSchema), path, clicksFeatures(), 2, true); });
    return message.substr(0, message.find(" (line:"));
  };
  const std::string at = dir.path() + "/bad.csv:3: ";
  EXPECT_EQ(failure("1,9,30,3,2:1,\"a,acme,x\n"), at + "a quoted field is not closed on its line");
  EXPECT_EQ(failure("1,9,30,3,2:1,\"a\"b,acme,x\n"),
            at + "text after a closing quote (a field's quotes must enclose all of it)");
  EXPECT_EQ(failure("1,9,30,3,2:1,a,acme\n"), at + "expected 8 fields separated by ',', got 7");
  EXPECT_EQ(failure("2,9,30,3,2:1,a,acme,x\n"), at + "/data/columns/0 (clicked): 2 is not 0 or 1");
  EXPECT_EQ(failure("1,cheap,30,3,2:1,a,acme,x\n"),
            at + "/data/columns/1 (price): field 1 'cheap' is not a number");
  EXPECT_EQ(failure("1,9,30,3|77,2:1,a,acme,x\n"),
            at + "/data/columns/3 (tags): id 77 out of range for feature 'tags' (vocab 50)");
  EXPECT_EQ(failure("1,9,30,1|2|3|4,2:1,a,acme,x\n"),
            at + "/data/columns/3 (tags): more than 3 ids for feature 'tags' (its hotness) in "
                 "'1|2|3|4'");
  EXPECT_EQ(failure("1,9,30,1||2,2:1,a,acme,x\n"),
            at + "/data/columns/3 (tags): an empty id between separators in '1||2'");
  EXPECT_EQ(failure("1,9,30,3,2,a,acme,x\n"),
            at + "/data/columns/4 (views): '2' is not id:weight with a finite weight");
}

TEST(SchemaReader, SkipsAndCountsMalformedLines) {
  TempDir dir;
  dir.write("brands.txt", "acme\n");
  const std::string path =
      dir.write("c.csv", "clicked,price,age,tags,views,city,brand,note\n"
                         "1,9,30,3,2:1,a,acme,x\n"
                         "1,9,30,3,2:1,\"a,acme,x\n"
                         "\n"
                         "7,9,30,3,2:1,a,acme,x\n"
                         "0,1,2,4,3:1,b,acme,y\n");
  StreamOptions options = schemaOptions(schemaOf(kClicksSchema), path, 4, true);
  options.onBadData = BadDataPolicy::Skip;
  auto stream = openStream(options, clicksFeatures());
  EXPECT_EQ(stream->stats().examples, 2);
  EXPECT_EQ(stream->stats().skippedByReason,
            (std::map<std::string, int64_t>{
                {"bad quoting", 1}, {"empty line", 1}, {"bad label", 1}}));
  EXPECT_EQ(stream->stats().firstProblem,
            path + ":3: a quoted field is not closed on its line");
}

TEST(SchemaReader, BindingAndOpeningErrors) {
  TempDir dir;
  const std::string path = dir.write("c.csv", "clicked,price\n1,2\n");
  const DataSchema schema = schemaOf(kClicksSchema);
  auto error = [&](const std::vector<FeatureSpec> &features) {
    return dataErrorOf([&] { openSchema(schema, path, features, 2, true); });
  };
  EXPECT_EQ(error({sparseFeature("city", 100)}),
            "feature 'city' cannot read column 'city' of the model's data schema " + path +
                ": column 'city' hashes strings into 63-bit ids: the feature needs \"hash\": "
                "true");
  EXPECT_EQ(error({sparseFeature("tags", 50, 3)}),
            "/data/columns/3 (tags) reads field 'tags', which the header of " + path +
                " does not have (\"clicked,price\")");
  EXPECT_EQ(error({sparseFeature("brand", 4)}),
            "/data/columns/6 (brand): cannot read its vocabulary file " + dir.path() +
                "/brands.txt");
  EXPECT_EQ(dataErrorOf([&] {
              openSchema(schema, dir.path() + "/none-*.csv", {denseFeature("price", 1)}, 2,
                         true);
            }),
            dir.path() + "/none-*.csv: no file matches this pattern");
}

TEST(SchemaReader, SchemaErrorsNameTheirPointer) {
  auto pointerOf = [](const std::string &json) -> std::string {
    try {
      schemaOf(json);
    } catch (const SchemaError &e) {
      return e.pointer + ": " + e.what();
    }
    return "";
  };
  EXPECT_EQ(pointerOf(R"({"format": "xml", "columns": []})"),
            "/data/format: 'format' must be csv, tsv, npy or binary, got 'xml'");
  EXPECT_EQ(pointerOf(R"({"format": "csv", "columns": [{"name": "a", "type": "dense",
                          "field": 0, "colour": 1}]})"),
            "/data/columns/0/colour: unknown field 'colour' (expected one of: name, type, "
            "field, file, column, width, clip, log1p, missing)");
  EXPECT_EQ(pointerOf(R"({"format": "csv", "columns": [{"name": "a", "type": "dense",
                          "field": "a"}]})"),
            "/data/columns/0/field: a field named by the header needs \"header\": true (it is "
            "'a')");
  EXPECT_EQ(pointerOf(R"({"format": "npy", "columns": [{"name": "a", "type": "dense"}]})"),
            "/data/columns/0: missing required field 'file'");
  EXPECT_EQ(pointerOf(R"({"format": "csv", "columns": [{"name": "a", "type": "dense",
                          "field": 0, "log1p": true}]})"),
            "/data/columns/0/log1p: log1p needs values above -1: clip them, as \"clip\": [0, "
            "null]");
  // The normal form reads back to itself.
  const DataSchema schema = schemaOf(kClicksSchema);
  EXPECT_EQ(dataSchemaToJson(parseDataSchema(dataSchemaToJson(schema), "/data")),
            dataSchemaToJson(schema));
}

namespace {

std::string criteoLines(int lines, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string text;
  for (int l = 0; l < lines; ++l) {
    text += std::to_string(rng() % 2);
    for (int i = 0; i < 13; ++i)
      text += "\t" + (rng() % 7 == 0 ? std::string() : std::to_string(int(rng() % 300) - 5));
    for (int c = 0; c < 26; ++c) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "%08x", unsigned(rng() % 1000));
      text += "\t" + (rng() % 9 == 0 ? std::string() : std::string(hex));
    }
    text += "\n";
  }
  return text;
}

std::vector<FeatureSpec> criteoLikeFeatures() {
  std::vector<FeatureSpec> features = {labelFeature("label", "binary"),
                                       denseFeature("dense", 13), denseFeature("I5", 1)};
  for (int c = 1; c <= 26; ++c)
    features.push_back(sparseFeature("C" + std::to_string(c), 0));
  return features;
}

/// Criteo as a user would write it in a model file.
std::string criteoSchemaJson() {
  std::string json = R"({"format": "tsv", "fields": 40, "columns": [
    {"name": "label", "type": "label", "field": 0},
    {"name": "dense", "type": "dense", "field": 1, "width": 13, "clip": [0, null], "log1p": true})";
  for (int i = 1; i <= 13; ++i)
    json += R"(, {"name": "I)" + std::to_string(i) + R"(", "type": "dense", "field": )" +
            std::to_string(i) + R"(, "clip": [0, null], "log1p": true})";
  for (int c = 1; c <= 26; ++c)
    json += R"(, {"name": "C)" + std::to_string(c) +
            R"(", "type": "categorical", "encoding": "hex", "field": )" +
            std::to_string(13 + c) + "}";
  return json + "]}";
}

} // namespace

TEST(SchemaReader, CriteoWrittenAsASchemaEqualsTheBuiltInReader) {
  TempDir dir;
  const std::string path = dir.write("day.tsv", criteoLines(700, 3));
  const auto features = criteoLikeFeatures();
  auto builtin = openStream(streamOptions("criteo", path, 64, true, 7, 2), features);
  auto written = openSchema(schemaOf(criteoSchemaJson()), path, features, 64, true, 0, 2);
  EXPECT_TRUE(sameBatches(takeBatches(*builtin, 25), takeBatches(*written, 25)));
}

TEST(SchemaReader, MlperfBinaryRecordsEqualTheSameCriteoText) {
  // The binary layout: label, 13 integers, 26 indices, int32 each. The same
  // values as text (ids as hex) read the same.
  TempDir dir;
  std::mt19937 rng(5);
  std::string text, binary;
  for (int r = 0; r < 300; ++r) {
    int32_t record[40];
    record[0] = int32_t(rng() % 2);
    for (int i = 1; i < 14; ++i)
      record[i] = int32_t(rng() % 1000);
    for (int c = 14; c < 40; ++c)
      record[c] = int32_t(rng() % 100000);
    binary.append(reinterpret_cast<const char *>(record), sizeof record);
    text += std::to_string(record[0]);
    for (int i = 1; i < 14; ++i)
      text += "\t" + std::to_string(record[i]);
    for (int c = 14; c < 40; ++c) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "%x", unsigned(record[c]));
      text += std::string("\t") + hex;
    }
    text += "\n";
  }
  const std::string bin = dir.write("day_0.bin", binary), tsv = dir.write("day_0.tsv", text);
  const auto features = criteoLikeFeatures();
  auto fromText = openStream(streamOptions("criteo", tsv, 32, true, 7, 2), features);
  auto fromBinary = openStream(streamOptions("mlperf_criteo", bin, 32, true, 7, 2), features);
  EXPECT_TRUE(sameBatches(takeBatches(*fromText, 20), takeBatches(*fromBinary, 20)));
  EXPECT_EQ(dataErrorOf([&] {
              openStream(streamOptions("mlperf_criteo", dir.write("cut.bin", binary.substr(0, 170)),
                                       32, true),
                         features);
            }),
            dir.path() + "/cut.bin: 170 bytes is not a whole number of records of 40 int32 "
                         "fields (160 bytes)");
}

namespace {

/// A .npy file (format 1.0) of `rows` x `cols` values of dtype `descr`.
template <class T>
std::string npy(const std::string &descr, const std::vector<T> &values, size_t rows,
                size_t cols) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + (cols ? ", " + std::to_string(cols) : ",") +
                       "), }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += char(1), bytes += char(0);
  bytes += char(header.size() & 0xff), bytes += char(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
  return bytes;
}

} // namespace

TEST(SchemaReader, NpyColumnsEqualTheSameCsv) {
  TempDir dir;
  const size_t rows = 90;
  std::vector<float> label(rows), dense(rows * 3);
  std::vector<int32_t> item(rows);
  std::vector<int64_t> tags(rows * 2);
  std::string csv;
  for (size_t r = 0; r < rows; ++r) {
    label[r] = float(r % 2);
    for (size_t k = 0; k < 3; ++k)
      dense[r * 3 + k] = float(r) * 0.25f + float(k);
    item[r] = int32_t(r * 7 % 40);
    tags[r * 2] = int64_t(r % 5);
    tags[r * 2 + 1] = r % 3 ? int64_t(r % 11) : -1; // -1: padding
    char line[200];
    std::snprintf(line, sizeof line, "%g,%.9g,%.9g,%.9g,%d,%lld%s\n", label[r], dense[r * 3],
                  dense[r * 3 + 1], dense[r * 3 + 2], item[r], (long long)tags[r * 2],
                  r % 3 ? ("|" + std::to_string(r % 11)).c_str() : "");
    csv += line;
  }
  dir.write("npy/label.npy", npy("<f4", label, rows, 0));
  dir.write("npy/dense.npy", npy("<f4", dense, rows, 3));
  dir.write("npy/item.npy", npy("<i4", item, rows, 0));
  dir.write("npy/tags.npy", npy("<i8", tags, rows, 2));
  const std::string csvPath = dir.write("same.csv", csv);
  const DataSchema fromNpy = schemaOf(R"({"format": "npy", "columns": [
      {"name": "label", "type": "label", "file": "label.npy"},
      {"name": "d", "type": "dense", "file": "dense.npy", "width": 3},
      {"name": "d2", "type": "dense", "file": "dense.npy", "column": 2},
      {"name": "item", "type": "categorical", "file": "item.npy"},
      {"name": "tags", "type": "categorical", "file": "tags.npy"}]})");
  const DataSchema fromCsv = schemaOf(R"({"format": "csv", "columns": [
      {"name": "label", "type": "label", "field": 0},
      {"name": "d", "type": "dense", "field": 1, "width": 3},
      {"name": "d2", "type": "dense", "field": 3},
      {"name": "item", "type": "categorical", "field": 4},
      {"name": "tags", "type": "categorical", "field": 5, "separator": "|"}]})");
  const std::vector<FeatureSpec> features = {labelFeature("label", "binary"),
                                             denseFeature("d", 3), denseFeature("d2", 1),
                                             sparseFeature("item", 40),
                                             sparseFeature("tags", 0, 2)};
  auto a = openSchema(fromNpy, dir.path() + "/npy", features, 16, true, 0, 2);
  auto b = openSchema(fromCsv, csvPath, features, 16, true, 0, 2);
  EXPECT_TRUE(sameBatches(takeBatches(*a, 12), takeBatches(*b, 12)));
  // A file of another length is refused with both.
  dir.write("npy/item.npy", npy("<i4", std::vector<int32_t>(5), 5, 0));
  EXPECT_EQ(dataErrorOf([&] { openSchema(fromNpy, dir.path() + "/npy", features, 16, true); }),
            "/data/columns/3 (item) reads " + dir.path() + "/npy/item.npy, which has 5 rows, but " +
                dir.path() + "/npy/label.npy has 90");
}

namespace {

/// Rows "label,id" over several files, a number per row.
std::string numberedRows(int first, int count) {
  std::string text;
  for (int r = first; r < first + count; ++r)
    text += std::to_string(r % 2) + "," + std::to_string(r) + "\n";
  return text;
}

const char *kNumbered = R"({"format": "csv", "columns": [
    {"name": "label", "type": "label", "field": 0},
    {"name": "row", "type": "categorical", "field": 1}]})";

std::vector<int64_t> rowIds(const std::vector<Batch> &batches) {
  std::vector<int64_t> ids;
  for (const Batch &b : batches)
    ids.insert(ids.end(), b.features[1].ids.begin(), b.features[1].ids.end());
  return ids;
}

} // namespace

TEST(SchemaReader, StreamedBlocksEqualTheDataHeldInMemory) {
  // Three files as one data set (a glob, read in name order), in blocks of
  // 37 rows with almost no memory to hold them: windows of 100 examples
  // come out exactly as from the data held whole, for any thread count and
  // from any resume position.
  TempDir dir;
  dir.write("part-0.csv", numberedRows(0, 400));
  dir.write("part-1.csv", numberedRows(400, 123));
  dir.write("part-2.csv", numberedRows(523, 300));
  const std::string glob = dir.path() + "/part-*.csv";
  const std::vector<FeatureSpec> features = {labelFeature("label", "binary"),
                                             sparseFeature("row", 0)};
  auto open = [&](bool streamed, uint64_t start, int threads, uint64_t window) {
    StreamOptions options = schemaOptions(schemaOf(kNumbered), glob, 50, true, threads);
    options.shuffleWindow = window;
    if (streamed) {
      options.readBlockRows = 37;
      options.residentBudget = 0;
    }
    return openStream(options, features, start);
  };
  const auto held = takeBatches(*open(false, 0, 1, 100), 60); // 3000 examples: 3.6 epochs
  const auto streamed = takeBatches(*open(true, 0, 2, 100), 60);
  EXPECT_TRUE(sameBatches(held, streamed));
  const auto resumed = takeBatches(*open(true, 1234, 3, 100), 30);
  std::vector<int64_t> all = rowIds(held), fromMiddle = rowIds(resumed);
  EXPECT_EQ(std::vector<int64_t>(all.begin() + 1234, all.begin() + 1234 + 1500), fromMiddle);
  // Each window of 100 is a permutation of its rows, and the epoch covers all.
  std::vector<int64_t> epoch(all.begin(), all.begin() + 823);
  for (size_t w = 0; w < 8; ++w) {
    std::vector<int64_t> window(epoch.begin() + w * 100, epoch.begin() + w * 100 + 100);
    std::sort(window.begin(), window.end());
    EXPECT_EQ(window.front(), int64_t(w * 100));
    EXPECT_EQ(window.back(), int64_t(w * 100 + 99));
  }
  // File order (evaluation) streams through the files in order.
  StreamOptions eval = schemaOptions(schemaOf(kNumbered), glob, 100, false, 2);
  eval.readBlockRows = 37;
  eval.residentBudget = 0;
  std::vector<int64_t> inOrder = rowIds(takeBatches(*openStream(eval, features), 100));
  ASSERT_EQ(inOrder.size(), 900u); // 823 and the last batch's padding
  for (int64_t r = 0; r < 823; ++r)
    ASSERT_EQ(inOrder[size_t(r)], r);
}

TEST(SchemaReader, PicksAWindowWhenTheDataDoesNotFit) {
  TempDir dir;
  const std::string path = dir.write("big.csv", numberedRows(0, 5000));
  StreamOptions options = schemaOptions(schemaOf(kNumbered), path, 64, true, 2);
  options.readBlockRows = 256;
  options.residentBudget = 20000;  // bytes: about 1000 of these rows
  options.windowBudget = 20 * 600; // 20 bytes a row (a label, an id, its bag end)
  auto stream = openStream(options, {labelFeature("label", "binary"), sparseFeature("row", 0)});
  EXPECT_NE(stream->stats().description.find("shuffled in windows of 600 examples"),
            std::string::npos)
      << stream->stats().description;
  std::vector<int64_t> ids = rowIds(takeBatches(*stream, 10));
  for (int64_t id : std::vector<int64_t>(ids.begin(), ids.begin() + 600))
    EXPECT_LT(id, 600);
}
