//===- Data.h - batch streams for training and evaluation -------*- C++ -*-===//
//
// What the executor reads its inputs from: a BatchStream that hands out fixed
// size batches of the plan's features, from the built-in synthetic generator
// or from a Criteo TSV, MovieLens ratings or plain text file.
//
// Every stream is a pure function of (kind, file, features, seed, batch size):
// the same arguments give the same batches bit for bit, whatever the thread
// count, and openStream(..., startPosition) resumes exactly where an
// uninterrupted stream would be after `startPosition` examples. Training
// streams are infinite (epoch after epoch, each in a fresh order); evaluation
// streams make one pass in file order.
//
// Readers and their columns (a feature reads the column named by `source`):
//   criteo     label (binary), I1..I13 (dense 1: log(1 + max(x, 0))),
//              dense (dense 13: all of I1..I13), C1..C26 (sparse, 0 or 1 id)
//   movielens  user, item (sparse, 1 id), rating (label: real),
//              timestamp (dense 1: raw seconds)
//   text       center, context (sparse, 1 id: word ids by frequency rank),
//              negatives (ids drawn from unigram^power); the vocabulary is
//              capped at the smallest nonzero vocab of those features and
//              other words are dropped (lib/data/TextReader.cpp)
//   synthetic  any column name, any kind (a planted signal; see Synthetic.h)
//
// Malformed lines (a wrong field count, a bad number, label or id, an id >=
// the feature's vocab, an empty line) stop openStream with a DataError under
// BadDataPolicy::Fail, or are dropped and counted in DataStats under Skip.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_DATA_DATA_H
#define EMBC_RUNTIME_DATA_DATA_H

#include "embc/runtime/plan/Enums.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::data {

/// What a label's values mean: the plan's word (plan/Enums.h).
using runtime::LabelKind;

enum class FeatureKind { Dense, Sparse, Negatives, Label };
const char *featureKindName(FeatureKind kind);

/// One model feature, as the plan describes it.
struct FeatureSpec {
  std::string name;   ///< feature name
  std::string source; ///< column of the data source to read (empty: `name`)
  FeatureKind kind = FeatureKind::Dense;
  int64_t width = 0;   ///< Dense: floats per example
  int64_t vocab = 0;   ///< Sparse/Negatives: ids must be < vocab; 0 = unbounded (the model hashes them)
  int64_t hotness = 1; ///< Sparse: max ids per example (a bag with more ids is malformed)
  bool weighted = false; ///< Sparse: the batch carries one weight per id
  int64_t count = 0;   ///< Negatives: ids per example
  double power = 0.75; ///< Negatives: sampling distribution is unigram^power
  LabelKind labelKind = LabelKind::Binary; ///< Label: what its values mean
  int64_t classes = 0;   ///< Label of kind class: number of classes (0: 10)

  /// The column this feature reads: `source`, or `name` when that is empty.
  const std::string &column() const { return source.empty() ? name : source; }
};

/// One feature of a batch; only the fields of its kind are filled.
struct FeatureBatch {
  std::vector<float> dense;            ///< Dense: B * width, row-major
  std::vector<int64_t> ids, offsets;   ///< Sparse: jagged bags; offsets has B+1 entries, offsets[0] = 0
  std::vector<float> weights;          ///< weighted Sparse: one weight per id (aligned with ids)
  std::vector<int64_t> negatives;      ///< Negatives: B * count
  std::vector<float> label;            ///< Label: B (0/1, a real value, or a class index)
};

/// B examples of every feature.
struct Batch {
  int64_t size = 0;  ///< B: always the requested batch size
  int64_t valid = 0; ///< rows holding real examples; < size only for the last
                     ///< evaluation batch, padded by repeating its last example
  std::vector<FeatureBatch> features; ///< index-aligned with the FeatureSpecs
  uint64_t position = 0; ///< examples consumed from the stream after this batch
};

enum class BadDataPolicy { Fail, Skip };

/// What a source holds and what it had to drop.
struct DataStats {
  int64_t examples = 0; ///< examples in one pass (synthetic: the nominal epoch)
  int64_t skipped = 0;  ///< malformed lines dropped (BadDataPolicy::Skip)
  std::map<std::string, int64_t> skippedByReason; ///< e.g. "wrong field count" -> 3
  std::string firstProblem; ///< "file:line: reason" of the first dropped line
  std::string description;  ///< one line for logs: what was read and how
};

/// A problem with the data or its binding to the features. Messages about a
/// line read "PATH:LINE: what is wrong (line: "...")".
class DataError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct DataSchema;

/// StreamOptions::shuffleWindow asking for the whole epoch, however large.
constexpr uint64_t kWholeEpoch = UINT64_MAX;

struct StreamOptions {
  /// synthetic, criteo, movielens, mlperf_criteo, text, or schema (`schema`)
  std::string kind = "synthetic";
  std::string path; ///< the file, directory or glob (not for synthetic)
  /// kind "schema": the plan's data schema.
  std::shared_ptr<const DataSchema> schema;
  int64_t batchSize = 0;          ///< B, >= 1
  uint64_t seed = 0;
  /// Training: infinite stream over epochs, reshuffled each epoch.
  /// Evaluation: one pass in file order, the last batch padded.
  bool training = true;
  BadDataPolicy onBadData = BadDataPolicy::Fail;
  int threads = 0;  ///< parsing and batch assembly threads; 0 = all cores
  /// Batches assembled ahead of next(), >= 1; raised to `threads` so that
  /// every assembly thread has a batch to work on. 0: no prefetch threads,
  /// next() builds every batch itself (on the CPU compute team).
  int prefetch = 4;
  /// Synthetic evaluation: examples in the one pass (0: 16 * batchSize).
  int64_t evalExamples = 0;
  /// Training on a file: visit its examples in a fresh order each epoch
  /// (true), or in file order every epoch (false: as word2vec and gensim read
  /// text; consecutive examples then share rows, which the caches like).
  bool shuffle = true;
  /// With shuffle: N > 0 shuffles each window of N consecutive examples of
  /// the file on its own (--shuffle buffer:N, as a streaming shuffle buffer
  /// of N does: an example moves less than N places, and neighbouring rows
  /// stay near in memory); kWholeEpoch the whole epoch (--shuffle epoch);
  /// 0 lets the source choose: the whole epoch for data held in memory, a
  /// window of windowBudget bytes of rows for data read in a stream.
  uint64_t shuffleWindow = 0;
  /// Schema data: held whole when its parsed rows fit this many bytes, else
  /// streamed (SchemaSource.cpp).
  uint64_t residentBudget = uint64_t(1) << 30;
  /// Schema data streamed with shuffleWindow 0: the window's bytes of rows.
  uint64_t windowBudget = uint64_t(64) << 20;
  /// Schema data: rows a block is parsed in (0: about 8 MB of rows; tests
  /// set small blocks).
  int64_t readBlockRows = 0;
  /// Training on a shuffled file with a sequence feature: sort each window
  /// of this many batches of the epoch's order by sequence length, so that
  /// a batch's sequences are alike and dynamic padding runs it short
  /// (LengthBuckets.h). 0 or 1: off.
  int64_t lengthBuckets = 0;
  /// Text: the largest skip-gram window on each side of the centre word.
  int textWindow = 5;
  /// Text: words seen fewer times leave the vocabulary (word2vec's min_count).
  int64_t textMinCount = 1;
  /// Text: frequent-word subsampling threshold (word2vec's -sample; 0: off).
  double textSample = 0;
  /// Text: a vocabulary to use instead of ranking this file's words (the
  /// training stream's, so that an evaluation's ids address the trained
  /// rows, or a resumed checkpoint's); its words keep their ids, other words are dropped, and the
  /// minimum count and the features' vocab cap do not apply.
  std::shared_ptr<const std::vector<std::string>> textVocabulary;
  /// Whose textVocabulary is, for the stream's description.
  std::string textVocabularyFrom = "the training data's";
  /// Called with each part of a batch once it is filled (a Batch of the
  /// part's rows; its `valid` is not set), on whichever thread filled it,
  /// often batches ahead of next(): several threads may call it at once.
  /// The trainer reads the disk tables' rows ahead with it (RowPrefetcher).
  std::function<void(const Batch &)> onPartFilled;
};

/// Batches of one data source. next() is called from one thread.
class BatchStream {
public:
  virtual ~BatchStream();
  /// Fills `out` with the next batch; false at the end (evaluation only).
  /// Throws DataError.
  virtual bool next(Batch &out) = 0;
  /// Examples in one pass. Synthetic training data has a nominal epoch of
  /// 1,000,000 examples (every example is new; the epoch only paces logs).
  virtual uint64_t examplesPerEpoch() const = 0;
  virtual const DataStats &stats() const = 0;
  /// The words of a text source in id order; null for other sources.
  virtual const std::vector<std::string> *vocabulary() const { return nullptr; }

  /// How the reader keeps up (the train records' reader_* values): batches
  /// complete ahead of the consumer and how many it may build ahead; rows
  /// filled so far and the thread-seconds spent filling them.
  struct Fill {
    uint64_t ready = 0, capacity = 0;
    uint64_t rows = 0;
    double seconds = 0;
  };
  virtual Fill fill() const { return {}; }
};

/// Opens a stream of `options.kind` for `features`. `startPosition` resumes:
/// the stream yields exactly the batches an uninterrupted stream would yield
/// after `startPosition` examples. Throws DataError for unreadable or
/// malformed data (BadDataPolicy::Fail) and for binding errors: a feature
/// whose column the reader does not have, a width mismatch, a label kind the
/// data cannot provide.
std::unique_ptr<BatchStream> openStream(const StreamOptions &options,
                                        const std::vector<FeatureSpec> &features,
                                        uint64_t startPosition = 0);

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_DATA_DATA_H
