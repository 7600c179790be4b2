//===- OpenStream.cpp - checking the request and picking the reader -------===//
//
// openStream checks what does not depend on the reader (batch size, feature
// parameters), hands the features to the reader named by `kind` to bind and
// load, and wraps the resulting source in a PrefetchStream.
//
//===----------------------------------------------------------------------===//

#include "PrefetchStream.h"

#include <cmath>
#include <thread>

using namespace embc::runtime::data;

BatchStream::~BatchStream() = default;
ExampleSource::~ExampleSource() = default;

const char *embc::runtime::data::featureKindName(FeatureKind kind) {
  switch (kind) {
  case FeatureKind::Dense:
    return "dense";
  case FeatureKind::Sparse:
    return "sparse";
  case FeatureKind::Negatives:
    return "negatives";
  case FeatureKind::Label:
    return "label";
  }
  return "unknown";
}

int embc::runtime::data::resolveThreads(int threads) {
  if (threads > 0)
    return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

void embc::runtime::data::prepareBatch(const std::vector<FeatureSpec> &features,
                                       int64_t rows, Batch &out) {
  out.size = rows;
  out.features.resize(features.size());
  for (size_t f = 0; f < features.size(); ++f) {
    const FeatureSpec &spec = features[f];
    FeatureBatch &batch = out.features[f];
    // clear() keeps the capacity of a reused batch: no allocation per step.
    batch.dense.clear();
    batch.ids.clear();
    batch.offsets.clear();
    batch.weights.clear();
    batch.negatives.clear();
    batch.label.clear();
    switch (spec.kind) {
    case FeatureKind::Dense:
      batch.dense.resize(rows * spec.width, 0.0f);
      break;
    case FeatureKind::Sparse:
      batch.offsets.reserve(rows + 1);
      batch.offsets.push_back(0);
      batch.ids.reserve(rows * spec.hotness);
      break;
    case FeatureKind::Negatives:
      batch.negatives.resize(rows * spec.count, 0);
      break;
    case FeatureKind::Label:
      batch.label.resize(rows, 0.0f);
      break;
    }
  }
}

namespace {

void checkOptions(const StreamOptions &options) {
  // Throws "data: <what>, got <value>" unless `ok`.
  auto check = [](bool ok, const char *what, auto value) {
    if (!ok)
      throw DataError(std::string("data: ") + what + ", got " + std::to_string(value));
  };
  check(options.batchSize >= 1, "batch size must be at least 1", options.batchSize);
  check(options.prefetch >= 0, "prefetch must be 0 (no prefetch threads) or more batches",
        options.prefetch);
  check(options.threads >= 0, "threads must be 0 (all cores) or more", options.threads);
  check(options.evalExamples >= 0, "evalExamples must be 0 (16 batches) or more",
        options.evalExamples);
  check(options.textWindow >= 1 && options.textWindow <= 65535,
        "the text window must be in [1, 65535]", options.textWindow);
  check(options.textMinCount >= 1, "the text minimum count must be at least 1",
        options.textMinCount);
  check(options.textSample >= 0 && options.textSample < 1,
        "the text subsampling threshold must be in [0, 1)", options.textSample);
  if (options.kind != "synthetic" && options.path.empty())
    throw DataError("data: kind '" + options.kind + "' needs a file path");
}

void checkFeature(const FeatureSpec &spec) {
  std::string feature = "feature '" + spec.name + "'";
  auto fail = [&](const std::string &what) { throw DataError(feature + ": " + what); };
  auto checkVocab = [&] {
    if (spec.vocab < 0)
      fail("vocab must be 0 (unbounded) or more, got " + std::to_string(spec.vocab));
  };
  if (spec.name.empty())
    throw DataError("a feature has an empty name");
  switch (spec.kind) {
  case FeatureKind::Dense:
    if (spec.width < 1)
      fail("dense width must be at least 1, got " + std::to_string(spec.width));
    break;
  case FeatureKind::Sparse:
    if (spec.hotness < 1)
      fail("hotness must be at least 1, got " + std::to_string(spec.hotness));
    checkVocab();
    break;
  case FeatureKind::Negatives:
    if (spec.count < 1)
      fail("negatives count must be at least 1, got " + std::to_string(spec.count));
    checkVocab();
    if (!std::isfinite(spec.power) || spec.power < 0)
      fail("power must be a finite number >= 0, got " + std::to_string(spec.power));
    break;
  case FeatureKind::Label:
    if (spec.classes < 0 || spec.classes == 1)
      fail("a class label needs 0 (the default, 10) or at least 2 classes, got " +
           std::to_string(spec.classes));
    break;
  }
}

} // namespace

std::unique_ptr<BatchStream>
embc::runtime::data::openStream(const StreamOptions &options,
                                const std::vector<FeatureSpec> &features,
                                uint64_t startPosition) {
  checkOptions(options);
  for (const FeatureSpec &spec : features)
    checkFeature(spec);
  std::shared_ptr<const ExampleSource> source;
  if (options.kind == "synthetic")
    source = openSyntheticSource(options, features);
  else if (options.kind == "text")
    source = openTextSource(options, features);
  else if (options.kind == "schema" && options.schema)
    source = openSchemaSource(options, features, *options.schema);
  else if (std::optional<DataSchema> schema = builtinSchema(options.kind, options.path))
    source = openSchemaSource(options, features, *schema);
  else
    throw DataError("data: unknown kind '" + options.kind +
                    "' (expected synthetic, criteo, movielens, mlperf_criteo, text, or a "
                    "file read through the plan's data schema)");
  return std::make_unique<PrefetchStream>(std::move(source), features, options, startPosition);
}
