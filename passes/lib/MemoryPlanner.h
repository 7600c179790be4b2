//===- MemoryPlanner.h - liveness and static offsets in one arena -*- C++ -*-===//
//
// The memory planner behind -emb-plan-memory, as plain C++ on the runtime's
// Plan (no MLIR types), so it can be unit-tested on made-up plans and on
// random interval sets.
//
// Timeline: the step kernels are positions 0..S-1 and the update kernels
// S..S+U-1 (Plan.h, Buffer::firstUse). A buffer is live from the first to
// the last position whose kernel names it. Buffers that carry a value from
// one step to the next (parameters, tables, gradients, optimizer state, and
// anything read before the step writes it) live for the whole run. Two
// buffers may share bytes when their lifetimes do not meet.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_MEMORYPLANNER_H
#define EMBC_PASSES_LIB_MEMORYPLANNER_H

#include "embc/runtime/Plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace embc::memory {

/// The module attribute -emb-plan-memory records its result in, and
/// -emb-to-plan lays the plan out by.
inline constexpr const char *kMemoryPlanAttrName = "emb.memory_plan";

/// Every offset of a buffer of its own is a multiple of this (the plan
/// format's rule, docs/plan-format.md).
inline constexpr int64_t kAlignment = 64;

/// GreedyBySize: largest first, each at the lowest offset free over its
/// lifetime; Sequential: one buffer after another, no reuse (the baseline).
using Strategy = runtime::MemoryStrategy;

const char *strategyName(Strategy strategy);
/// Nothing for a word that is not a strategy.
std::optional<Strategy> parseStrategy(const std::string &name);
/// "greedy_by_size or sequential", for messages.
std::string strategyNames();

/// Bytes for a reader: "12.3 KiB", "4.5 MiB", or GiB with `gibDecimals`
/// decimals (the report's tiers use 1, -emb-auto's notes 2).
std::string readableBytes(int64_t bytes, int gibDecimals);

/// One thing to place: `bytes` live over positions [first, last] (inclusive).
struct Block {
  int64_t bytes = 0;
  int64_t first = 0, last = 0;
  /// -1, or the one rank that uses the block (a table_wise table on its
  /// owner): blocks of two different ranks never meet.
  int32_t rank = -1;
  /// The block starts at a multiple of this and reserves its bytes rounded
  /// up to one (a multiple of kAlignment): kAlignment, or a page
  /// (runtime::kDiskPageBytes) for a disk table's buffers, so that no other
  /// block shares a page with it.
  int64_t align = kAlignment;

  /// The bytes the block keeps from others: bytes rounded up to `align`.
  int64_t reserved() const { return (bytes + align - 1) / align * align; }
};

/// Offsets for `blocks` (each aligned to its `align`, in input order) and
/// the arena they need (the highest reserved end, rounded up to 64).
struct Layout {
  std::vector<int64_t> offsets;
  int64_t arenaBytes = 0;
};

/// Places the blocks: no two whose lifetimes meet share a byte.
Layout layoutBlocks(const std::vector<Block> &blocks, Strategy strategy);

/// The most bytes live at one position on one rank: no layout can use less
/// arena.
int64_t liveBytesLowerBound(const std::vector<Block> &blocks);

/// The bytes live at each position 0..positions-1 (for the report's curve).
std::vector<int64_t> liveBytesPerPosition(const std::vector<Block> &blocks,
                                          int64_t positions);

/// The length of a plan's timeline: step kernels, then update kernels.
int64_t timelineLength(const runtime::Plan &plan);

/// Fills Buffer::firstUse / lastUse of every buffer from the plan's kernels
/// (-1/-1 for the whole run; a view gets its parent's lifetime).
void computeLifetimes(runtime::Plan &plan);

/// A buffer's bytes in the arena: its bytes times its micro-batch slots.
int64_t footprint(const runtime::Buffer &buffer);

/// The blocks of a plan whose lifetimes are filled: one per buffer that is
/// not a view (`index` says which), whole-run buffers over every position;
/// a disk table's buffers (Plan::bufferPlacements) page-aligned.
std::vector<Block> planBlocks(const runtime::Plan &plan, std::vector<int32_t> &index);

/// The arena's bytes by tier. `disk`: the pages of disk tables' buffers,
/// mapped from files (not resident memory); `host`: the bytes of host
/// tables' buffers; `device`: the rest of the arena. Views count in their
/// parent; a buffer counts bytes x slots (disk: rounded up to whole pages).
struct TierBytes {
  int64_t device = 0, host = 0, disk = 0;
  /// What needs memory (device or host): what a memory budget counts.
  int64_t resident() const { return device + host; }
};
TierBytes tierBytes(const runtime::Plan &plan);

/// Lifetimes, then offsets by `strategy` (views keep their place inside
/// their parent), Plan::arenaBytes and Plan::memory.
void planMemory(runtime::Plan &plan, Strategy strategy);

} // namespace embc::memory

#endif // EMBC_PASSES_LIB_MEMORYPLANNER_H
