//===- PrefetchStream.h - batches assembled ahead, in order -----*- C++ -*-===//
//
// The BatchStream of every source. Batch n of a stream opened at position p
// holds the examples at positions p + n*B .. p + n*B + B - 1: in training,
// position q is example perm_e(q mod N) of epoch e = q / N (or q itself for
// generated data); in evaluation it is example q, and the stream ends at N
// with the last batch padded by repeating its last example. A batch is thus a
// pure function of its number, and so is every part of it: a batch is filled
// in parts of consecutive rows that any thread may fill and that are joined in
// order, so the batches do not depend on the thread count or on who filled
// which part.
//
// Worker threads claim parts up to max(prefetch, threads) batches ahead of
// the consumer, below the trainer's priority. The trainer never waits long for
// a worker: next() fills the batch's unclaimed parts itself on the CPU team,
// waits a short grace for parts a worker is filling, and then fills those
// again itself (a worker starved by other processes on the machine must not
// stall training; PrefetchStream.cpp says why the workers run that low).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_DATA_PREFETCHSTREAM_H
#define EMBC_RUNTIME_LIB_DATA_PREFETCHSTREAM_H

#include "ExampleSource.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace embc::runtime::data {

class BucketedOrder;

class PrefetchStream final : public BatchStream {
public:
  PrefetchStream(std::shared_ptr<const ExampleSource> source, std::vector<FeatureSpec> features,
                 const StreamOptions &options, uint64_t startPosition);
  ~PrefetchStream() override;

  bool next(Batch &out) override;
  uint64_t examplesPerEpoch() const override { return source_->size(); }
  const DataStats &stats() const override { return source_->stats(); }
  const std::vector<std::string> *vocabulary() const override { return source_->vocabulary(); }

  /// How many parts the trainer has filled again because the worker that
  /// claimed them had not finished within the grace (for tests and logs).
  uint64_t partsRefilled() const { return refilled_.load(std::memory_order_relaxed); }
  Fill fill() const override;

private:
  /// One batch in the making: its rows in parts, each part filled once into
  /// `pieces` by whoever claimed it, or again into `refills` by the trainer.
  struct Build;
  enum PartState : int { kFree, kClaimed, kFilled, kRefilled };

  /// A new Build of batch `number` (mutex held; cheap: no rows yet).
  std::shared_ptr<Build> startBuild(uint64_t number);
  /// The bucketed order of `epoch` (lengthBuckets_ > 1), cached per thread.
  const BucketedOrder &bucketedOrder(uint64_t epoch) const;
  /// Fills part `p` of `build` into `into`, recording an error in `error`.
  void fillPart(const Build &build, int64_t p, Batch &into, std::exception_ptr &error) const;
  /// Claims (free -> claimed) and fills part `p`; false if it was taken.
  bool claimAndFill(Build &build, int64_t p);
  /// A worker thread: runs below the trainer's priority (PrefetchStream.cpp).
  void work();
  /// The trainer's side of next(): completes `build` and joins it into `out`.
  void complete(Build &build, Batch &out);

  /// Rows per part: enough to pay for claiming a task.
  static constexpr int64_t kMinRowsPerPart = 64;

  std::shared_ptr<const ExampleSource> source_;
  std::vector<FeatureSpec> features_;
  uint64_t batchSize_, seed_, start_;
  bool training_;
  bool shuffle_; ///< training epochs of a file in a fresh order (StreamOptions::shuffle)
  uint64_t shuffleWindow_ = 0; ///< StreamOptions::shuffleWindow
  uint64_t lengthBuckets_ = 0; ///< StreamOptions::lengthBuckets, where it applies
  uint64_t id_ = 0;            ///< this stream among all (the bucketed order's cache)
  std::function<void(const Batch &)> onPartFilled_; ///< StreamOptions::onPartFilled
  uint64_t capacity_;
  int64_t partsPerBatch_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t nextToClaim_ = 0, nextToDeliver_ = 0;
  bool stopping_ = false;
  bool lastClaimed_ = false;  ///< a batch lies past the end: claim no more
  std::exception_ptr failed_; ///< kept: later calls fail the same way
  bool ended_ = false;
  std::map<uint64_t, std::shared_ptr<Build>> building_;
  std::vector<std::shared_ptr<Build>> spareBuilds_; ///< reused for their buffers
  mutable std::atomic<int64_t> partNanos_{0};      ///< running mean fill time of a part
  mutable std::atomic<uint64_t> rowsFilled_{0}, fillNanos_{0}; ///< Fill::rows, seconds
  std::atomic<uint64_t> refilled_{0};
  std::vector<std::thread> workers_;
};

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_LIB_DATA_PREFETCHSTREAM_H
