//===- BatchSlice.h - micro-batches of a batch ------------------*- C++ -*-===//
//
// A plan compiled with micro-batches (-emb-pipeline) runs its step on B/m
// examples at a time while the data stream still hands out batches of B:
// the trainer cuts each batch into m micro-batches with these helpers. The
// stream joins the parts of a batch it assembled on several threads.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_DATA_BATCHSLICE_H
#define EMBC_RUNTIME_DATA_BATCHSLICE_H

#include "embc/runtime/data/Data.h"

namespace embc::runtime::data {

/// Rows [begin, begin + count) of `batch` as a batch of `count` examples:
/// dense values, labels and negatives by rows, jagged ids (and weights) by
/// the offsets, rebased to start at 0. `valid` counts the real examples among
/// the rows (0 when all are padding); `position` is the batch's. Reuses
/// `out`'s storage. Throws DataError for a range outside the batch.
void sliceBatch(const Batch &batch, int64_t begin, int64_t count, Batch &out);

/// Splits `batch` into `parts` micro-batches of batch.size / parts examples
/// (DataError unless parts divides the size), in order, into `out`.
void splitBatch(const Batch &batch, int64_t parts, std::vector<Batch> &out);

/// The inverse of splitting: `parts` (same features, any sizes) one after
/// the other as one batch in `out`, jagged offsets rebased. `out.size` is
/// the sum of the sizes; `valid` and `position` are left to the caller.
/// Reuses `out`'s storage.
void joinBatches(const std::vector<Batch> &parts, Batch &out);
/// The same, for parts held elsewhere (in order).
void joinBatches(const std::vector<const Batch *> &parts, Batch &out);

} // namespace embc::runtime::data

#endif // EMBC_RUNTIME_DATA_BATCHSLICE_H
