//===- PrefetchStream.h - batches assembled ahead, in order -----*- C++ -*-===//
//
// The BatchStream of every source. Batch n of a stream opened at position p
// holds the examples at positions p + n*B .. p + n*B + B - 1: in training,
// position q is example perm_e(q mod N) of epoch e = q / N (or q itself for
// generated data); in evaluation it is example q, and the stream ends at N
// with the last batch padded by repeating its last example. A batch is thus a
// pure function of its number, so worker threads build batches
// independently, up to max(prefetch, threads) ahead of the consumer, and
// next() hands
// them out in order: the batches do not depend on the thread count. The
// workers run at a lower priority than the trainer and the trainer builds a
// batch itself when no worker has started it (PrefetchStream.cpp says why).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_PREFETCHSTREAM_H
#define EMBC_RUNTIME_LIB_DATA_PREFETCHSTREAM_H

#include "ExampleSource.h"

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace embc::runtime::data {

class PrefetchStream final : public BatchStream {
public:
  PrefetchStream(std::shared_ptr<const ExampleSource> source, std::vector<FeatureSpec> features,
                 const StreamOptions &options, uint64_t startPosition);
  ~PrefetchStream() override;

  bool next(Batch &out) override;
  uint64_t examplesPerEpoch() const override { return source_->size(); }
  const DataStats &stats() const override { return source_->stats(); }
  const std::vector<std::string> *vocabulary() const override { return source_->vocabulary(); }

private:
  /// Builds batch `number`; false when it lies past the end (evaluation).
  /// `onTeam`: the rows are filled in parts on the CPU compute team (the
  /// trainer's thread only: the team is idle while it waits for the batch).
  bool assemble(uint64_t number, Batch &out, bool onTeam) const;
  void fillOnTeam(const std::vector<uint64_t> &rows, const std::vector<uint64_t> &positions,
                  Batch &out) const;
  /// Builds batch `number` (already claimed) with `lock` released, then
  /// files it under `lock`.
  void produce(uint64_t number, std::unique_lock<std::mutex> &lock, bool onTeam);
  /// Rows per part of a batch filled on the team: enough to pay for a task.
  static constexpr int64_t kMinRowsPerPart = 64;
  /// A worker thread: runs below the trainer's priority (PrefetchStream.cpp).
  void work();

  struct Slot {
    Batch batch;
    bool end = false;
    std::exception_ptr error;
  };

  std::shared_ptr<const ExampleSource> source_;
  std::vector<FeatureSpec> features_;
  uint64_t batchSize_, seed_, start_;
  bool training_;
  uint64_t capacity_;

  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t nextToClaim_ = 0, nextToDeliver_ = 0;
  bool stopping_ = false;
  bool lastClaimed_ = false;  ///< a batch came back past the end or failed
  std::map<uint64_t, Slot> ready_;
  std::vector<Batch> spare_;  ///< batches handed back by next(), reused
  std::vector<std::thread> workers_;
};

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_PREFETCHSTREAM_H
