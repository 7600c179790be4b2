//===- MemoryPlanner.cpp - liveness and static offsets in one arena --------===//
//
// Liveness comes from the kernels' operand lists alone: a buffer's value
// exists from the kernel that first names it to the one that last does.
// What the kernels cannot show is added by rule (why each rule exists is
// next to it): the executor writes the inputs before the step, the trainer
// reads the loss and predictions after it, and values that outlive a step
// live for the whole run. Placement is the classic greedy by size (as in
// TFLite's and XLA's heap simulators): biggest first, each at the lowest
// 64-byte aligned offset not used by a placed buffer whose lifetime meets
// its own. A disk table's buffers are placed on whole pages (Block::align):
// embrun maps a file over them, so they start on a page and no other buffer
// takes the rest of their last page.
//
//===----------------------------------------------------------------------===//

#include "MemoryPlanner.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>

using namespace embc;
using namespace embc::memory;
namespace rt = embc::runtime;

namespace {

int64_t alignUp(int64_t bytes, int64_t align = kAlignment) {
  return (bytes + align - 1) / align * align;
}

bool meet(const Block &a, const Block &b) {
  bool sameRank = a.rank < 0 || b.rank < 0 || a.rank == b.rank;
  return sameRank && a.first <= b.last && b.first <= a.last;
}

/// The placed blocks in offset order, in chunks that summarise their
/// members, so that finding the lowest gap for a block skips whole chunks:
/// one whose lifetimes all miss the block's, one that ends below the
/// candidate offset, and one whose members all meet the block but leave no
/// gap it fits in. Greedy by size then stays near linear in the number of
/// buffers (a model with 20k features has 100k) where a walk over every
/// placed block, or a sort of the ones met, is quadratic; the offsets are
/// the same.
class PlacedBlocks {
public:
  /// The lowest aligned offset for `block` that no placed block it meets
  /// overlaps: the walk of the placed blocks in offset order that moves the
  /// candidate past each one met and stops at the first placed block (met or
  /// not) that starts past the candidate's end.
  /// The candidate moves to multiples of the block's alignment, and the
  /// block keeps its reserved bytes (a page-aligned block's whole pages).
  int64_t lowestFit(const Block &block) const {
    const int64_t bytes = block.reserved();
    int64_t offset = 0;
    for (const Chunk &c : chunks_) {
      if (offset + bytes <= c.minAt)
        break;
      if (c.minFirst > block.last || c.maxLast < block.first || c.maxEnd <= offset)
        continue; // no member meets it, or none reaches past the candidate
      if (c.maxFirst <= block.last && c.minLast >= block.first && c.allMeet(block.rank) &&
          c.widestGap < bytes) {
        // Every member met, no gap fits.
        offset = alignUp(std::max(offset, c.maxEnd), block.align);
        continue;
      }
      for (const Entry &e : c.entries) {
        if (offset + bytes <= e.at)
          return offset;
        if (meet(block, e.block))
          offset = alignUp(std::max(offset, e.end), block.align);
      }
    }
    return offset;
  }

  void add(const Block &block, int64_t at) {
    Entry entry{at, alignUp(at + block.reserved()), block};
    if (chunks_.empty())
      chunks_.emplace_back();
    // The last chunk starting at or below `at` (or the first).
    auto next = std::upper_bound(chunks_.begin() + 1, chunks_.end(), at,
                                 [](int64_t value, const Chunk &k) { return value < k.minAt; });
    size_t c = size_t(next - chunks_.begin()) - 1;
    std::vector<Entry> &entries = chunks_[c].entries;
    auto after = std::upper_bound(entries.begin(), entries.end(), at,
                                  [](int64_t value, const Entry &e) { return value < e.at; });
    entries.insert(after, entry);
    if (entries.size() > 2 * kChunk) {
      Chunk upper;
      upper.entries.assign(entries.begin() + kChunk, entries.end());
      entries.resize(kChunk);
      chunks_.insert(chunks_.begin() + c + 1, std::move(upper));
      chunks_[c + 1].summarise();
    }
    chunks_[c].summarise();
  }

private:
  static constexpr size_t kChunk = 64;
  struct Entry {
    int64_t at, end; ///< offset, and the aligned end the walk moves past
    Block block;
  };
  struct Chunk {
    std::vector<Entry> entries; ///< by offset
    int64_t minAt = 0, maxEnd = 0;
    int64_t minFirst = 0, maxFirst = 0, minLast = 0, maxLast = 0;
    /// The widest gap between a member's start and the highest end of the
    /// members before it (none: below any size).
    int64_t widestGap = std::numeric_limits<int64_t>::min();
    /// The range of the members' ranks, leaving out those of every rank (-1).
    int32_t minRank = std::numeric_limits<int32_t>::max(), maxRank = -1;

    /// Whether every member's rank lets it meet a block of `rank`.
    bool allMeet(int32_t rank) const {
      return rank < 0 || maxRank < 0 || (minRank == rank && maxRank == rank);
    }
    void summarise() {
      const Entry &front = entries.front();
      minAt = front.at;
      maxEnd = front.end;
      minFirst = maxFirst = front.block.first;
      minLast = maxLast = front.block.last;
      widestGap = std::numeric_limits<int64_t>::min();
      minRank = std::numeric_limits<int32_t>::max();
      maxRank = -1;
      for (const Entry &e : entries) {
        if (&e != &front)
          widestGap = std::max(widestGap, e.at - maxEnd);
        maxEnd = std::max(maxEnd, e.end);
        minFirst = std::min(minFirst, e.block.first);
        maxFirst = std::max(maxFirst, e.block.first);
        minLast = std::min(minLast, e.block.last);
        maxLast = std::max(maxLast, e.block.last);
        if (e.block.rank >= 0) {
          minRank = std::min(minRank, e.block.rank);
          maxRank = std::max(maxRank, e.block.rank);
        }
      }
    }
  };
  std::vector<Chunk> chunks_;
};

/// Roles whose values are carried from one step to the next.
bool persistentRole(rt::BufferRole role) {
  return role == rt::BufferRole::Table || role == rt::BufferRole::Param ||
         role == rt::BufferRole::Grad || role == rt::BufferRole::OptimizerState;
}

/// How each buffer (views folded into their parent) is used by the kernels.
struct Uses {
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  int64_t first = -1, last = -1;
  int64_t firstRead = kNever, firstWrite = kNever;
  int64_t segment = -1;       ///< the one schedule segment that uses it, or -1
  bool manySegments = false;  ///< used by kernels of more than one segment
  bool writtenInUpdate = false;
};

} // namespace

const char *embc::memory::strategyName(Strategy strategy) {
  return rt::enumName(strategy).data(); // the spellings are literals: terminated
}

std::optional<Strategy> embc::memory::parseStrategy(const std::string &name) {
  return rt::parseEnum<Strategy>(name);
}

std::string embc::memory::strategyNames() { return rt::enumChoices<Strategy>(); }

std::string embc::memory::readableBytes(int64_t bytes, int gibDecimals) {
  const double b = double(bytes);
  char text[48];
  if (b < double(1 << 20))
    std::snprintf(text, sizeof text, "%.1f KiB", b / 1024.0);
  else if (b < double(int64_t(1) << 30))
    std::snprintf(text, sizeof text, "%.1f MiB", b / double(1 << 20));
  else
    std::snprintf(text, sizeof text, "%.*f GiB", gibDecimals, b / double(int64_t(1) << 30));
  return text;
}

int64_t embc::memory::footprint(const rt::Buffer &buffer) {
  return buffer.bytes * std::max<int64_t>(buffer.slots, 1);
}

int64_t embc::memory::timelineLength(const rt::Plan &plan) {
  return int64_t(plan.step.size() + plan.update.size());
}

void embc::memory::computeLifetimes(rt::Plan &plan) {
  const size_t n = plan.buffers.size();
  const int64_t steps = int64_t(plan.step.size());
  const int64_t end = timelineLength(plan) - 1;
  const bool scheduled = !plan.schedule.empty();
  auto owner = [&](int32_t b) {
    return plan.buffers[b].parent >= 0 ? plan.buffers[b].parent : b;
  };
  std::vector<Uses> uses(n);
  auto touch = [&](int32_t b, int64_t position, bool write, int64_t segment) {
    if (b < 0 || size_t(b) >= n)
      return;
    Uses &u = uses[owner(b)];
    if (u.first < 0)
      u.first = position;
    u.last = std::max(u.last, position);
    int64_t &when = write ? u.firstWrite : u.firstRead;
    when = std::min(when, position);
    if (u.segment >= 0 && u.segment != segment)
      u.manySegments = true;
    u.segment = segment;
    if (write && position >= steps)
      u.writtenInUpdate = true;
  };
  // A schedule runs each (stage, forward or backward) segment of the step as
  // its own instruction, interleaved with other micro-batches' instructions:
  // positions order kernels only within a segment.
  for (int64_t i = 0; i < steps; ++i) {
    const rt::Kernel &k = plan.step[i];
    int64_t segment = 2 * int64_t(k.stage) + (i >= plan.forwardKernels ? 1 : 0);
    for (int32_t b : k.inputs)
      touch(b, i, false, segment);
    for (int32_t b : k.outputs)
      touch(b, i, true, segment);
  }
  const int64_t updateSegment = std::numeric_limits<int64_t>::max();
  for (size_t j = 0; j < plan.update.size(); ++j) {
    for (int32_t b : plan.update[j].inputs)
      touch(b, steps + int64_t(j), false, updateSegment);
    for (int32_t b : plan.update[j].outputs)
      touch(b, steps + int64_t(j), true, updateSegment);
  }

  std::vector<bool> persistent(n, false);
  for (const rt::Table &t : plan.tables) // int8 scale/bias: part of the table
    if (t.qparams >= 0 && size_t(t.qparams) < n)
      persistent[owner(t.qparams)] = true;
  for (const rt::TableBatch &t : plan.tableBatches)
    if (t.qparams >= 0 && size_t(t.qparams) < n)
      persistent[owner(t.qparams)] = true;

  auto wholeStep = [&](rt::Buffer &b) {
    b.firstUse = 0;
    b.lastUse = std::max(b.lastUse, steps - 1);
  };
  for (size_t i = 0; i < n; ++i) {
    rt::Buffer &b = plan.buffers[i];
    if (b.parent >= 0)
      continue;
    const Uses &u = uses[i];
    bool input = b.role == rt::BufferRole::Input;
    // A value read before anything in the step writes it comes from an
    // earlier step (or from initialisation): it must survive between steps.
    bool carried = !input && u.firstRead != Uses::kNever && u.firstRead <= u.firstWrite;
    bool unused = u.first < 0 && !input && int32_t(i) != plan.lossBuffer &&
                  int32_t(i) != plan.predictionBuffer;
    if (persistentRole(b.role) || persistent[i] || carried || unused || end < 0) {
      b.firstUse = b.lastUse = -1;
      continue;
    }
    b.firstUse = u.first;
    b.lastUse = u.last;
    // The executor copies a batch into the inputs before the first kernel.
    if (input)
      b.firstUse = 0, b.lastUse = std::max<int64_t>(b.lastUse, 0);
    // The trainer reads the loss and the predictions after the step.
    if (int32_t(i) == plan.lossBuffer || int32_t(i) == plan.predictionBuffer) {
      b.firstUse = std::max<int64_t>(b.firstUse, 0);
      b.lastUse = std::max(b.lastUse, steps - 1);
    }
    // What the update writes may be read by the trainer once it returns.
    if (u.writtenInUpdate)
      b.lastUse = end;
    // One copy per micro-batch in flight: live while any micro-batch is.
    if (b.slots > 1)
      wholeStep(b);
    // Under a schedule, other micro-batches' instructions run between two
    // segments, and the inputs are loaded when the schedule says.
    if (scheduled && (input || u.manySegments))
      wholeStep(b);
  }
  for (rt::Buffer &b : plan.buffers)
    if (b.parent >= 0 && size_t(b.parent) < n) {
      b.firstUse = plan.buffers[b.parent].firstUse;
      b.lastUse = plan.buffers[b.parent].lastUse;
    }
}

std::vector<Block> embc::memory::planBlocks(const rt::Plan &plan,
                                            std::vector<int32_t> &index) {
  const int64_t end = std::max<int64_t>(timelineLength(plan) - 1, 0);
  const std::vector<rt::Placement> placement = plan.bufferPlacements();
  std::vector<Block> blocks;
  index.clear();
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const rt::Buffer &b = plan.buffers[i];
    if (b.parent >= 0)
      continue;
    Block block;
    block.bytes = footprint(b);
    bool whole = b.firstUse < 0;
    block.first = whole ? 0 : b.firstUse;
    block.last = whole ? end : b.lastUse;
    block.rank = b.rank;
    if (placement[i] == rt::Placement::Disk)
      block.align = rt::kDiskPageBytes;
    blocks.push_back(block);
    index.push_back(int32_t(i));
  }
  return blocks;
}

Layout embc::memory::layoutBlocks(const std::vector<Block> &blocks, Strategy strategy) {
  Layout layout;
  layout.offsets.assign(blocks.size(), 0);
  if (strategy == Strategy::Sequential) {
    int64_t offset = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
      offset = alignUp(offset, blocks[i].align);
      layout.offsets[i] = offset;
      offset += alignUp(blocks[i].reserved());
    }
    layout.arenaBytes = offset;
    return layout;
  }
  // Biggest first; among equals, the earlier and longer-lived first, then
  // input order, so the layout is deterministic.
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Block &x = blocks[a], &y = blocks[b];
    if (x.bytes != y.bytes)
      return x.bytes > y.bytes;
    if (x.first != y.first)
      return x.first < y.first;
    return x.last > y.last;
  });
  PlacedBlocks placed;
  for (size_t i : order) {
    int64_t offset = placed.lowestFit(blocks[i]);
    layout.offsets[i] = offset;
    layout.arenaBytes = std::max(layout.arenaBytes, alignUp(offset + blocks[i].reserved()));
    placed.add(blocks[i], offset);
  }
  return layout;
}

std::vector<int64_t> embc::memory::liveBytesPerPosition(const std::vector<Block> &blocks,
                                                        int64_t positions) {
  std::vector<int64_t> delta(size_t(std::max<int64_t>(positions, 0)) + 1, 0);
  for (const Block &b : blocks) {
    if (b.first >= positions || b.last < b.first)
      continue;
    delta[size_t(std::max<int64_t>(b.first, 0))] += b.bytes;
    delta[size_t(std::min(b.last + 1, positions))] -= b.bytes;
  }
  std::vector<int64_t> live(delta.size() - 1);
  int64_t sum = 0;
  for (size_t p = 0; p < live.size(); ++p)
    live[p] = sum += delta[p];
  return live;
}

int64_t embc::memory::liveBytesLowerBound(const std::vector<Block> &blocks) {
  int64_t positions = 0;
  int32_t ranks = 0;
  for (const Block &b : blocks) {
    positions = std::max(positions, b.last + 1);
    ranks = std::max(ranks, b.rank + 1);
  }
  // Each rank sees the blocks of every rank (-1) and its own.
  int64_t most = 0;
  for (int32_t rank = 0; rank < std::max(ranks, 1); ++rank) {
    std::vector<Block> mine;
    for (const Block &b : blocks)
      if (b.rank < 0 || b.rank == rank)
        mine.push_back(b);
    std::vector<int64_t> live = liveBytesPerPosition(mine, positions);
    if (!live.empty())
      most = std::max(most, *std::max_element(live.begin(), live.end()));
  }
  return most;
}

TierBytes embc::memory::tierBytes(const rt::Plan &plan) {
  const std::vector<rt::Placement> placement = plan.bufferPlacements();
  TierBytes tiers;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const rt::Buffer &b = plan.buffers[i];
    if (b.parent >= 0)
      continue;
    if (placement[i] == rt::Placement::Disk)
      tiers.disk += alignUp(footprint(b), rt::kDiskPageBytes);
    else if (placement[i] == rt::Placement::Host)
      tiers.host += footprint(b);
  }
  tiers.device = std::max<int64_t>(plan.arenaBytes - tiers.disk - tiers.host, 0);
  return tiers;
}

void embc::memory::planMemory(rt::Plan &plan, Strategy strategy) {
  computeLifetimes(plan);
  // A view keeps its place inside its parent: remember it before moving.
  std::vector<int64_t> relative(plan.buffers.size(), 0);
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].parent >= 0)
      relative[i] = plan.buffers[i].offset - plan.buffers[plan.buffers[i].parent].offset;
  std::vector<int32_t> index;
  std::vector<Block> blocks = planBlocks(plan, index);
  Layout layout = layoutBlocks(blocks, strategy);
  for (size_t i = 0; i < index.size(); ++i)
    plan.buffers[index[i]].offset = layout.offsets[i];
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].parent >= 0)
      plan.buffers[i].offset = plan.buffers[plan.buffers[i].parent].offset + relative[i];
  plan.arenaBytes = layout.arenaBytes;
  plan.memory.strategy = strategyName(strategy);
  plan.memory.peakBytes = layout.arenaBytes;
  plan.memory.lowerBoundBytes = liveBytesLowerBound(blocks);
}
