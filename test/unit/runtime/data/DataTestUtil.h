//===- DataTestUtil.h - helpers for the data tests --------------*- C++ -*-===//
//
// Temporary files the tests write their small inputs to, feature-spec
// builders, batch comparison, and the path of the shared real datasets.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_TEST_UNIT_RUNTIME_DATA_DATATESTUTIL_H
#define EMBC_TEST_UNIT_RUNTIME_DATA_DATATESTUTIL_H

#include "embc/runtime/data/Data.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace embc::runtime::data::testing {

/// A file with the given content in a fresh temporary directory, removed
/// with the object.
class TempFile {
public:
  explicit TempFile(const std::string &content, const std::string &name = "data.txt") {
    std::string pattern = ::testing::TempDir() + "embc-data-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data()))
      throw std::runtime_error("mkdtemp failed");
    dir_ = buffer.data();
    path_ = dir_ + "/" + name;
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string &path() const { return path_; }

private:
  std::string dir_, path_;
};

/// The part every feature kind shares: its name, kind and data column.
inline FeatureSpec feature(const std::string &name, FeatureKind kind, const std::string &source) {
  FeatureSpec spec;
  spec.name = name;
  spec.source = source;
  spec.kind = kind;
  return spec;
}

inline FeatureSpec denseFeature(const std::string &name, int64_t width,
                                const std::string &source = "") {
  FeatureSpec spec = feature(name, FeatureKind::Dense, source);
  spec.width = width;
  return spec;
}

inline FeatureSpec sparseFeature(const std::string &name, int64_t vocab, int64_t hotness = 1,
                                 const std::string &source = "") {
  FeatureSpec spec = feature(name, FeatureKind::Sparse, source);
  spec.vocab = vocab;
  spec.hotness = hotness;
  return spec;
}

inline FeatureSpec negativesFeature(const std::string &name, int64_t count, int64_t vocab = 0,
                                    const std::string &source = "") {
  FeatureSpec spec = feature(name, FeatureKind::Negatives, source);
  spec.count = count;
  spec.vocab = vocab;
  return spec;
}

inline FeatureSpec labelFeature(const std::string &name, const std::string &kind,
                                const std::string &source = "") {
  FeatureSpec spec = feature(name, FeatureKind::Label, source);
  spec.labelKind = kind.empty() ? LabelKind::Binary : parseEnum<LabelKind>(kind).value();
  return spec;
}

inline StreamOptions streamOptions(const std::string &kind, const std::string &path,
                                   int64_t batchSize, bool training, uint64_t seed = 7,
                                   int threads = 1) {
  StreamOptions options;
  options.kind = kind;
  options.path = path;
  options.batchSize = batchSize;
  options.training = training;
  options.seed = seed;
  options.threads = threads;
  return options;
}

/// The next `count` batches (fewer if the stream ends).
inline std::vector<Batch> takeBatches(BatchStream &stream, size_t count) {
  std::vector<Batch> batches;
  Batch batch;
  while (batches.size() < count && stream.next(batch))
    batches.push_back(batch);
  return batches;
}

inline bool sameBatch(const Batch &a, const Batch &b) {
  if (a.size != b.size || a.valid != b.valid || a.position != b.position ||
      a.features.size() != b.features.size())
    return false;
  for (size_t f = 0; f < a.features.size(); ++f) {
    const FeatureBatch &x = a.features[f], &y = b.features[f];
    if (x.dense != y.dense || x.ids != y.ids || x.offsets != y.offsets ||
        x.weights != y.weights || x.negatives != y.negatives || x.label != y.label)
      return false;
  }
  return true;
}

inline bool sameBatches(const std::vector<Batch> &a, const std::vector<Batch> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameBatch(a[i], b[i]))
      return false;
  return true;
}

/// A file of the shared datasets (../shared/data next to the repository),
/// or "" when it is absent.
inline std::string sharedData(const std::string &relative) {
  std::string path = std::string(EMBC_SOURCE_DIR) + "/../shared/data/" + relative;
  return std::ifstream(path).good() ? path : "";
}

/// The message of the DataError `body` throws ("" if it throws none).
template <class Body> std::string dataErrorOf(Body &&body) {
  try {
    body();
  } catch (const DataError &error) {
    return error.what();
  }
  return "";
}

/// The DataError of opening a `kind` stream of `path` with the one feature
/// `spec` ("" when it opens): what the readers' binding tests ask.
inline std::string bindingErrorOf(const std::string &kind, const std::string &path,
                                  const FeatureSpec &spec) {
  return dataErrorOf([&] { openStream(streamOptions(kind, path, 8, true), {spec}); });
}

} // namespace embc::runtime::data::testing

#endif // EMBC_TEST_UNIT_RUNTIME_DATA_DATATESTUTIL_H
