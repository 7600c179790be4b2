//===- HashCollisions.h - how many raw ids share a hashed bucket -*- C++ -*-===//
//
// A hashed feature (`"hash": true`: xxh64 of the raw id mod the table's
// rows, cpu::hashIds) maps distinct raw values onto fewer rows; the share
// of distinct raw values that landed in a bucket another one had is the
// collision rate embrun reports at the end (summary value
// hash_collisions_<feature>). Distinct raw values are counted with a
// HyperLogLog of 2^14 registers (about 0.8% relative error, exact-ish by
// linear counting while small); occupied buckets exactly, in a bitset. Only
// the training batches' valid rows count. embrun --hash-stats turns it on:
// the bitsets of large tables miss the caches: 6-8 ms for 26 x 2048
// distinct ids into 1M buckets each (~100-150 ns an id) on the trainer's
// thread, measured on a loaded 2-core VM.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_HASHCOLLISIONS_H
#define EMBC_RUNTIME_EXEC_HASHCOLLISIONS_H

#include "embc/runtime/Plan.h"
#include "embc/runtime/data/Data.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace embc::runtime {

/// A feature whose ids a step kernel hashes (a `hash` kernel, or a member
/// of a `fused_lookup` with "hash") straight from the data.
struct HashedFeature {
  std::string feature;
  int64_t buckets = 0;
  uint64_t seed = 0;
};

/// The plan's hashed features, each once, in plan order.
std::vector<HashedFeature> hashedFeatures(const Plan &plan);

class HashCollisions {
public:
  /// `features` (hashedFeatures), read from batches whose FeatureBatch i
  /// is specs[i].
  HashCollisions(std::vector<HashedFeature> features,
                 const std::vector<data::FeatureSpec> &specs);

  bool empty() const { return tracked_.empty(); }
  /// Counts the ids of `batch`'s valid rows.
  void add(const data::Batch &batch);
  /// Per feature: 1 - occupied buckets / distinct raw ids (0 for none seen).
  std::map<std::string, double> rates() const;

  /// The HyperLogLog estimate of distinct values (for tests).
  static double estimate(const std::vector<uint8_t> &registers);
  static constexpr int kPrecision = 14;

private:
  struct Tracked {
    HashedFeature feature;
    size_t index; ///< in the batch's features
    std::vector<uint8_t> registers;  ///< 2^kPrecision
    std::vector<uint64_t> occupied;  ///< a bit per bucket
  };
  std::vector<Tracked> tracked_;
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_HASHCOLLISIONS_H
