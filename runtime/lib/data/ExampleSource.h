//===- ExampleSource.h - examples a stream draws from -----------*- C++ -*-===//
//
// A reader or generator, already bound to the features: it knows how many
// examples one pass holds and writes any of them into a batch on request.
// PrefetchStream decides which example goes in which row (the epoch order,
// resume, padding); sources never keep per-stream state, so several threads
// fill batches from one source at once.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_EXAMPLESOURCE_H
#define EMBC_RUNTIME_LIB_DATA_EXAMPLESOURCE_H

#include "embc/runtime/data/Data.h"
#include "embc/runtime/data/Schema.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace embc::runtime::data {

class ExampleSource {
public:
  virtual ~ExampleSource();

  /// Examples in one pass (synthetic training data: a nominal epoch).
  virtual uint64_t size() const = 0;

  /// True for data held in memory, whose training epochs visit [0, size) in
  /// a fresh order each; false for generated data, where the example of
  /// stream position p is simply p (every index is a new example).
  virtual bool shufflesEpochs() const = 0;

  /// Writes rows [0, examples.size()) of `out`: row r holds example
  /// examples[r], drawn at stream position positions[r] (sampled negatives
  /// depend on it). `out` is prepared by prepareBatch().
  virtual void fill(const std::vector<uint64_t> &examples,
                    const std::vector<uint64_t> &positions, Batch &out) const = 0;

  virtual const DataStats &stats() const = 0;

  /// The length of example `example`'s sequence (the ids its sequence
  /// feature gets), for length bucketing (LengthBuckets.h); -1 for a source
  /// without sequences.
  virtual int64_t length(uint64_t example) const {
    (void)example;
    return -1;
  }

  /// The words of a text source in id order; null for other sources.
  virtual const std::vector<std::string> *vocabulary() const { return nullptr; }

  /// The shuffle window training epochs use, given the one asked for
  /// (StreamOptions::shuffleWindow): 0 or >= size() shuffles the whole
  /// epoch. A source held in memory grants any; a streamed one
  /// (SchemaSource.cpp) picks its window when asked for none.
  virtual uint64_t shuffleWindow(uint64_t requested) const { return requested; }
};

/// Sizes `out` for `rows` examples of `features`: dense, negatives and label
/// vectors at their final size, sparse bags empty with offsets = {0}.
void prepareBatch(const std::vector<FeatureSpec> &features, int64_t rows, Batch &out);

/// Appends the end of row's bag to a sparse feature (offsets gets ids.size()).
inline void closeBag(FeatureBatch &feature) {
  feature.offsets.push_back(static_cast<int64_t>(feature.ids.size()));
}

/// The source of each reader; each throws DataError for unreadable or
/// malformed data and for features it cannot bind.
std::shared_ptr<const ExampleSource>
openSyntheticSource(const StreamOptions &options, const std::vector<FeatureSpec> &features);
/// Any data set through a schema: options.path is a file, a directory (npy)
/// or a glob of several, read as one data set in sorted order.
std::shared_ptr<const ExampleSource> openSchemaSource(const StreamOptions &options,
                                                      const std::vector<FeatureSpec> &features,
                                                      const DataSchema &schema);
/// The built-in readers' schemas for `kind` (criteo, movielens,
/// mlperf_criteo) and `path`, or nothing for another kind.
std::optional<DataSchema> builtinSchema(const std::string &kind, const std::string &path);
/// Text: skip-gram pairs (columns center, context, negatives), or one
/// example per line when a feature reads `tokens` or `label`.
std::shared_ptr<const ExampleSource>
openTextSource(const StreamOptions &options, const std::vector<FeatureSpec> &features);
std::shared_ptr<const ExampleSource>
openTextLinesSource(const StreamOptions &options, const std::vector<FeatureSpec> &features);
/// Whether `features` read text lines (a `tokens` or `label` column).
bool readsTextLines(const std::vector<FeatureSpec> &features);

/// The number of worker threads `threads` asks for (0: all cores; >= 1).
int resolveThreads(int threads);

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_EXAMPLESOURCE_H
