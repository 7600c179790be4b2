//===- DataFuzz.cpp - libFuzzer target for the data readers ---------------===//
//
// The Criteo, MovieLens, MLPerf binary and text readers, and a CSV schema
// with quoting, multi-hot, weighted and hashed columns, parse files users
// bring. The first input byte picks the reader (and the bad-data policy),
// the rest is the file; it is read in blocks of 3 rows with nothing held, so
// the streaming paths run too. Every failure must be a DataError with a message, whatever the
// bytes; a stream that opens must yield batches whose ids lie within their
// features' vocab and whose offsets are well formed. Built by run-fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/data/Data.h"
#include "embc/runtime/data/Schema.h"

#include "FuzzSupport.h"

#include <string>

using namespace embc::runtime::data;

namespace {

using embc::fuzz::scratchPath;

[[noreturn]] void violated(const std::string &what) {
  embc::fuzz::violated("DataFuzz", what);
}

FeatureSpec feature(const char *name, FeatureKind kind, int64_t width = 0,
                    int64_t vocab = 0) {
  FeatureSpec f;
  f.name = name;
  f.kind = kind;
  f.width = width;
  f.vocab = vocab;
  f.count = kind == FeatureKind::Negatives ? 2 : 0;
  return f;
}

std::vector<FeatureSpec> featuresOf(const std::string &kind) {
  using K = FeatureKind;
  if (kind == "criteo" || kind == "mlperf_criteo") {
    FeatureSpec label = feature("label", K::Label);
    label.labelKind = embc::runtime::LabelKind::Binary;
    return {label, feature("dense", K::Dense, 13), feature("C1", K::Sparse),
            feature("C2", K::Sparse, 0, 1000)};
  }
  if (kind == "schema") {
    FeatureSpec tags = feature("tags", K::Sparse, 0, 100);
    tags.hotness = 3;
    FeatureSpec views = feature("views", K::Sparse, 0, 0);
    views.hotness = 4;
    views.weighted = true;
    return {feature("clicked", K::Label), feature("price", K::Dense, 2), tags, views,
            feature("city", K::Sparse)};
  }
  if (kind == "movielens") {
    FeatureSpec rating = feature("rating", K::Label);
    rating.labelKind = embc::runtime::LabelKind::Real;
    return {rating, feature("user", K::Sparse, 0, 100),
            feature("item", K::Sparse), feature("timestamp", K::Dense, 1)};
  }
  return {feature("center", K::Sparse, 0, 50),
          feature("context", K::Sparse, 0, 50),
          feature("negatives", K::Negatives, 0, 50)};
}

void checkBatch(const Batch &batch, const std::vector<FeatureSpec> &specs) {
  for (size_t f = 0; f < specs.size(); ++f) {
    const FeatureSpec &spec = specs[f];
    const FeatureBatch &fb = batch.features[f];
    if (spec.kind == FeatureKind::Sparse) {
      if (fb.offsets.size() != size_t(batch.size) + 1 ||
          fb.offsets.front() != 0 ||
          fb.offsets.back() != int64_t(fb.ids.size()))
        violated("feature '" + spec.name + "' has malformed offsets");
      for (size_t i = 1; i < fb.offsets.size(); ++i)
        if (fb.offsets[i] < fb.offsets[i - 1])
          violated("feature '" + spec.name + "' has decreasing offsets");
    }
    const std::vector<int64_t> &ids =
        spec.kind == FeatureKind::Negatives ? fb.negatives : fb.ids;
    for (int64_t id : ids)
      if (id < 0 || (spec.vocab > 0 && id >= spec.vocab))
        violated("feature '" + spec.name + "' yields id " + std::to_string(id));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  static const char *kinds[] = {"criteo", "movielens", "text", "mlperf_criteo", "schema"};
  static const auto schema = std::make_shared<DataSchema>(parseDataSchema(
      nlohmann::json::parse(R"({"format": "csv", "columns": [
        {"name": "clicked", "type": "label", "field": 0},
        {"name": "price", "type": "dense", "field": 1, "width": 2, "clip": [0, 1e6],
         "log1p": true, "missing": 1},
        {"name": "tags", "type": "categorical", "field": 3, "separator": "|"},
        {"name": "views", "type": "categorical", "field": 4, "separator": " ",
         "weighted": true, "encoding": "hex"},
        {"name": "city", "type": "categorical", "field": 5, "encoding": "hash"}]})"),
      "/data"));
  StreamOptions options;
  options.kind = kinds[data[0] % 5];
  options.schema = schema;
  options.readBlockRows = 3;
  options.residentBudget = 0;
  options.onBadData =
      data[0] & 0x80 ? BadDataPolicy::Skip : BadDataPolicy::Fail;
  options.training = (data[0] & 0x40) != 0;
  options.path = scratchPath();
  options.batchSize = 4;
  options.threads = 1;
  options.prefetch = 0;
  embc::fuzz::writeScratch(data + 1, size - 1);

  std::vector<FeatureSpec> specs = featuresOf(options.kind);
  try {
    std::unique_ptr<BatchStream> stream = openStream(options, specs);
    Batch batch;
    for (int i = 0; i < 3 && stream->next(batch); ++i)
      checkBatch(batch, specs);
  } catch (const DataError &e) {
    if (std::string(e.what()).empty())
      violated("a DataError without a message");
  }
  return 0;
}
