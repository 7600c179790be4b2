//===- RowPrefetcher.h - disk tables' rows read ahead of their step -*- C++ -*-===//
//
// A `disk` table's rows live in arena pages mapped from a scratch file
// (Executor::placeDiskTables); a lookup that touches a row whose page is not
// in the page cache stalls on a major fault. The ids of a batch are known
// as soon as the data loader fills it, batches ahead of the step that reads
// them: the prefetcher turns each filled part of a batch (PrefetchStream,
// StreamOptions::onPartFilled) into the pages its disk rows occupy, in every
// per-row buffer of the table (rows, int8/int4 scale/bias, each optimizer
// state with a value or row per table row), and asks the system to read
// them in (MADV_WILLNEED: asynchronous readahead, nothing waits), so the
// step finds them resident. 1024 ranges go in one process_madvise call
// where the kernel has it (else one madvise a range); a feature whose
// pages stay resident is only sampled (kSampleEvery). It only advises: the
// kernels read and write the same bytes as without it, so training is
// unchanged.
//
// It finds the features from the plan's step kernels: the ids input of a
// `lookup`, `sequence_lookup` or `gather` of a disk table (directly, or through a
// `hash` kernel: row = xxh64(id, seed) mod buckets, cpu::idHash) and of each
// `fused_lookup` member on one (with the member's own "hash"). A table in a
// TableBatch is addressed in the batch's buffers at its row offset.
// Sharded tables are never on disk; a plan without disk tables gives an
// empty prefetcher, which the trainer does not install.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_ROWPREFETCHER_H
#define EMBC_RUNTIME_EXEC_ROWPREFETCHER_H

#include "embc/runtime/Plan.h"
#include "embc/runtime/data/Data.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace embc::runtime {

class RowPrefetcher {
public:
  /// Pages of the arena: [offset, offset + bytes), both multiples of
  /// kDiskPageBytes, from the arena's start.
  struct Range {
    int64_t offset = 0, bytes = 0;
    bool operator==(const Range &o) const { return offset == o.offset && bytes == o.bytes; }
  };
  /// One per-row buffer of a disk table (or its batch): row r of the
  /// table lies at offset + (firstRow + r) * rowBytes.
  struct RowBuffer {
    int64_t offset = 0, rowBytes = 0;
  };
  /// A feature whose ids address rows of a disk table.
  struct Feature {
    size_t index = 0;     ///< in the batch's features (the specs' order)
    bool hashed = false;  ///< row = idHash(id, seed) % buckets
    int64_t buckets = 0;
    uint64_t seed = 0;
    int64_t rows = 0;     ///< the table's rows: ids outside [0, rows) are skipped
    int64_t firstRow = 0; ///< the table's first row in its buffers (TableBatch row offset)
    std::vector<RowBuffer> buffers;
  };

  /// `arena`: the host arena the CPU kernels use (Executor::hostArena());
  /// batches' FeatureBatch i is specs[i] (Executor::featureSpecs()).
  RowPrefetcher(const Plan &plan, const std::byte *arena,
                const std::vector<data::FeatureSpec> &specs);

  /// Nothing to prefetch: the plan reads no disk table from its data.
  bool empty() const { return features_.empty(); }
  const std::vector<Feature> &features() const { return features_; }

  /// The distinct pages the rows of `piece` occupy in the disk tables'
  /// buffers, ascending, adjacent pages joined into one range. All of the
  /// piece's rows count (a part's padding repeats a real example).
  std::vector<Range> ranges(const data::Batch &piece) const;
  /// madvise(MADV_WILLNEED) over ranges(piece), less the features found
  /// resident. Thread-safe: the loader's threads call it at once, each on
  /// its own part.
  void prefetch(const data::Batch &piece) const;

  /// Every kSampleEvery-th part prefetch() also asks whether (up to
  /// kSamplePages of) each feature's pages are resident (mincore): a
  /// feature whose sampled pages all are (its table stays in the page
  /// cache) is left out of the parts until the next sample. Advice costs
  /// ~0.6 us a page even when the page is resident: dlrm_small with every
  /// table on disk (and resident) trained at 80k samples/s with it on
  /// every part, 126k without any.
  static constexpr uint64_t kSampleEvery = 64;
  static constexpr size_t kSamplePages = 128;

private:
  /// Appends the pages of `f`'s rows in `piece` (arena offset / page).
  void appendPages(const Feature &f, const data::Batch &piece, std::vector<int64_t> &pages) const;

  std::vector<Feature> features_;
  std::byte *arena_ = nullptr;
  /// Per feature: resident at its last sample (prefetch() skips it).
  std::unique_ptr<std::atomic<bool>[]> resident_;
  mutable std::atomic<uint64_t> parts_{0}; ///< prefetch() calls so far
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_ROWPREFETCHER_H
