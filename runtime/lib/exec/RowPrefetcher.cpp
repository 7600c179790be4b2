//===- RowPrefetcher.cpp - disk tables' rows read ahead of their step -----===//

#include "RowPrefetcher.h"

#include "embc/runtime/cpu/IdHash.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>

using namespace embc::runtime;

namespace {

/// How a lookup reaches its table from the data: the Ids input it reads
/// and the hashing on the way (none: buckets 0).
struct IdsSource {
  int32_t input = -1; ///< index into plan.inputs
  int64_t buckets = 0;
  uint64_t seed = 0;
};

/// The Ids input whose buffer is `buffer`, or -1.
int32_t idsInput(const Plan &plan, int32_t buffer) {
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    if (plan.inputs[i].buffer == buffer && plan.inputs[i].role == InputRole::Ids)
      return int32_t(i);
  return -1;
}

/// `ids` (a lookup's ids operand) traced back to the data: an Ids input,
/// or the output of a `hash` kernel of one.
IdsSource traceIds(const Plan &plan, int32_t ids) {
  if (const int32_t in = idsInput(plan, ids); in >= 0)
    return {in, 0, 0};
  for (const Kernel &k : plan.step)
    if (k.op == kernelName(KernelOp::Hash) && !k.outputs.empty() && k.outputs[0] == ids &&
        !k.inputs.empty()) {
      const int32_t in = idsInput(plan, k.inputs[0]);
      const int64_t buckets = k.attrs.value("buckets", int64_t(0));
      if (in >= 0 && buckets > 0)
        return {in, buckets, k.attrs.value("seed", uint64_t(0))};
    }
  return {};
}

bool sameFeature(const RowPrefetcher::Feature &a, const RowPrefetcher::Feature &b) {
  if (a.index != b.index || a.hashed != b.hashed || a.buckets != b.buckets ||
      a.seed != b.seed || a.rows != b.rows || a.firstRow != b.firstRow ||
      a.buffers.size() != b.buffers.size())
    return false;
  for (size_t i = 0; i < a.buffers.size(); ++i)
    if (a.buffers[i].offset != b.buffers[i].offset ||
        a.buffers[i].rowBytes != b.buffers[i].rowBytes)
      return false;
  return true;
}

} // namespace

RowPrefetcher::RowPrefetcher(const Plan &plan, const std::byte *arena,
                             const std::vector<data::FeatureSpec> &specs)
    // madvise takes a mutable address; the advice changes no byte.
    : arena_(const_cast<std::byte *>(arena)) {
  // Each table's buffers and first row: a batched table in its batch's.
  auto describe = [&](int64_t t, Feature &f) {
    if (t < 0 || t >= int64_t(plan.tables.size()))
      return false;
    const Table &table = plan.tables[size_t(t)];
    if (!table.shardRows.empty())
      return false; // sharded tables live on their ranks' devices
    int32_t buffer = table.buffer, qparams = table.qparams;
    const std::vector<int32_t> *state = &table.state;
    int64_t bufferRows = table.rows;
    Placement placement = table.placement;
    for (const TableBatch &batch : plan.tableBatches)
      for (size_t m = 0; m < batch.members.size() && m < batch.rowOffsets.size(); ++m)
        if (batch.members[m] == int32_t(t)) {
          buffer = batch.buffer, qparams = batch.qparams, state = &batch.state;
          bufferRows = batch.rows, placement = batch.placement;
          f.firstRow = batch.rowOffsets[m];
        }
    if (placement != Placement::Disk || table.rows <= 0 || bufferRows <= 0)
      return false;
    f.rows = table.rows;
    auto add = [&](int32_t b) {
      if (b < 0 || b >= int32_t(plan.buffers.size()))
        return;
      const Buffer &buf = plan.buffers[size_t(b)];
      // A per-row buffer: its leading dimension is the rows (a row-wise
      // Adagrad's accumulator has one value a row; a step count has none).
      if (buf.shape.empty() || buf.shape[0] != bufferRows || buf.bytes % bufferRows != 0)
        return;
      f.buffers.push_back({buf.offset, buf.bytes / bufferRows});
    };
    add(buffer), add(qparams);
    for (int32_t s : *state)
      add(s);
    return !f.buffers.empty();
  };
  auto found = [&](const IdsSource &source, int64_t table) {
    if (source.input < 0)
      return;
    const Input &in = plan.inputs[size_t(source.input)];
    Feature f;
    f.index = specs.size();
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == in.feature) {
        f.index = i;
        break;
      }
    if (f.index == specs.size())
      return;
    f.hashed = source.buckets > 0;
    f.buckets = source.buckets, f.seed = source.seed;
    if (!describe(table, f))
      return;
    if (std::none_of(features_.begin(), features_.end(),
                     [&](const Feature &g) { return sameFeature(f, g); }))
      features_.push_back(std::move(f));
  };

  for (const Kernel &k : plan.step) {
    if ((k.op == kernelName(KernelOp::Lookup) || k.op == kernelName(KernelOp::SequenceLookup) ||
         k.op == kernelName(KernelOp::Gather)) &&
        !k.inputs.empty() && k.attrs.contains("table"))
      found(traceIds(plan, k.inputs[0]), k.attrs.value("table", int64_t(-1)));
    for (const FusedLookupMember &m : fusedLookupMembers(k)) {
      const nlohmann::json &member = k.attrs["members"][m.index];
      IdsSource source = traceIds(plan, k.inputs[m.ids]);
      if (member.value("hash", false)) {
        // The member hashes the raw ids itself.
        source = {idsInput(plan, k.inputs[m.ids]), member.value("buckets", int64_t(0)),
                  member.value("seed", uint64_t(0))};
        if (source.buckets <= 0)
          source.input = -1;
      }
      found(source, member.value("table", int64_t(-1)));
    }
  }
  resident_.reset(new std::atomic<bool>[features_.size()]);
  for (size_t f = 0; f < features_.size(); ++f)
    resident_[f].store(false, std::memory_order_relaxed);
}

void RowPrefetcher::appendPages(const Feature &f, const data::Batch &piece,
                                std::vector<int64_t> &pages) const {
  constexpr int64_t kPage = kDiskPageBytes;
  if (f.index >= piece.features.size())
    return;
  const data::FeatureBatch &fb = piece.features[f.index];
  const int64_t rows = std::min<int64_t>(piece.size, int64_t(fb.offsets.size()) - 1);
  const int64_t end =
      rows > 0 ? std::min<int64_t>(fb.offsets[size_t(rows)], int64_t(fb.ids.size())) : 0;
  for (int64_t i = 0; i < end; ++i) {
    int64_t row = fb.ids[size_t(i)];
    if (f.hashed)
      row = int64_t(cpu::idHash(row, f.seed) % uint64_t(f.buckets));
    if (row < 0 || row >= f.rows)
      continue; // the lookup reports it as a data error
    row += f.firstRow;
    for (const RowBuffer &b : f.buffers) {
      const int64_t first = b.offset + row * b.rowBytes;
      const int64_t last = first + b.rowBytes - 1;
      for (int64_t p = first / kPage; p <= last / kPage; ++p)
        pages.push_back(p);
    }
  }
}

namespace {

/// Distinct pages, ascending, adjacent ones joined.
std::vector<RowPrefetcher::Range> coalesce(std::vector<int64_t> &pages) {
  constexpr int64_t kPage = kDiskPageBytes;
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  std::vector<RowPrefetcher::Range> out;
  for (int64_t p : pages) {
    if (!out.empty() && out.back().offset + out.back().bytes == p * kPage)
      out.back().bytes += kPage;
    else
      out.push_back({p * kPage, kPage});
  }
  return out;
}

} // namespace

std::vector<RowPrefetcher::Range> RowPrefetcher::ranges(const data::Batch &piece) const {
  std::vector<int64_t> pages;
  for (const Feature &f : features_)
    appendPages(f, piece, pages);
  return coalesce(pages);
}

namespace {

/// This process as a pidfd for process_madvise (-1: none; then one madvise
/// a range).
int selfPidfd() {
#if defined(SYS_pidfd_open) && defined(SYS_process_madvise)
  static const int fd = int(syscall(SYS_pidfd_open, getpid(), 0));
  return fd;
#else
  return -1;
#endif
}

} // namespace

void RowPrefetcher::prefetch(const data::Batch &piece) const {
  if (features_.empty())
    return;
  static const uintptr_t systemPage = uintptr_t(sysconf(_SC_PAGESIZE));
  // Advice that fails changes nothing: it is best effort throughout.
  static std::atomic<bool> vectored{selfPidfd() >= 0};
  const bool sample = parts_.fetch_add(1, std::memory_order_relaxed) % kSampleEvery == 0;
  std::vector<int64_t> pages;
  for (size_t f = 0; f < features_.size(); ++f) {
    if (!sample && resident_[f].load(std::memory_order_relaxed))
      continue;
    const size_t from = pages.size();
    appendPages(features_[f], piece, pages);
    if (!sample)
      continue;
    // How many of (a sample of) its distinct pages are out of the cache.
    std::vector<int64_t> mine(pages.begin() + std::ptrdiff_t(from), pages.end());
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    const size_t step = std::max<size_t>(1, mine.size() / kSamplePages);
    size_t checked = 0, out = 0;
    for (size_t i = 0; i < mine.size(); i += step) {
      const uintptr_t at = uintptr_t(arena_ + mine[i] * kDiskPageBytes);
      unsigned char in = 0;
      if (mincore(reinterpret_cast<void *>(at / systemPage * systemPage), 1, &in) != 0)
        continue;
      ++checked;
      out += (in & 1) == 0;
    }
    resident_[f].store(checked > 0 && out == 0, std::memory_order_relaxed);
  }
  const std::vector<Range> all = coalesce(pages);
  // Many ranges of one page each (rows scattered over large tables): one
  // process_madvise takes up to 1024 of them, where madvise takes one a
  // call (a resident page's advice costs less than the call).
  constexpr size_t kBatch = 1024; // UIO_MAXIOV
  iovec vec[kBatch];
  for (size_t at = 0; at < all.size(); at += kBatch) {
    const size_t n = std::min(kBatch, all.size() - at);
    for (size_t i = 0; i < n; ++i) {
      // The disk buffers start on the arena's page boundaries
      // (kDiskPageBytes); madvise wants the system's.
      const uintptr_t begin = uintptr_t(arena_ + all[at + i].offset);
      const uintptr_t start = begin / systemPage * systemPage;
      vec[i] = {reinterpret_cast<void *>(start),
                size_t(begin - start + uintptr_t(all[at + i].bytes))};
    }
#if defined(SYS_process_madvise)
    if (vectored.load(std::memory_order_relaxed)) {
      if (syscall(SYS_process_madvise, selfPidfd(), vec, n, MADV_WILLNEED, 0) >= 0 ||
          (errno != ENOSYS && errno != EPERM && errno != EINVAL && errno != EBADF))
        continue;
      vectored.store(false, std::memory_order_relaxed); // an older kernel: one at a time
    }
#endif
    for (size_t i = 0; i < n; ++i)
      (void)madvise(vec[i].iov_base, vec[i].iov_len, MADV_WILLNEED);
  }
}
