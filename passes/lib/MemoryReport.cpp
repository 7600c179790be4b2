//===- MemoryReport.cpp - the memory section of `embc --emit=report` ------===//
//
// Figures come from the plan alone (lifetimes, offsets, Plan::memory), so
// the report shows what embrun will allocate: the peak is the arena.
//
//===----------------------------------------------------------------------===//

#include "MemoryPlanner.h"

#include "embc/passes/MemoryReport.h"
#include "embc/passes/ToPlan.h"
#include "embc/runtime/plan/SequenceLayout.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace embc;
namespace rt = embc::runtime;

namespace {

/// Roles in report order: what the model is, then what training adds.
constexpr rt::BufferRole kRoles[] = {
    rt::BufferRole::Table,      rt::BufferRole::Param, rt::BufferRole::OptimizerState,
    rt::BufferRole::Grad,       rt::BufferRole::Activation, rt::BufferRole::Input,
    rt::BufferRole::Workspace};

double mib(int64_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

/// Bytes for the tiers line (GiB with one decimal).
std::string sized(int64_t bytes) { return embc::memory::readableBytes(bytes, 1); }

/// The arena by tier, when a table is off the device (Table::placement):
/// disk pages are inside the arena's address range (the peak counts them)
/// but mapped from files, so they need no memory.
void printTiers(const rt::Plan &plan, llvm::raw_ostream &os) {
  const memory::TierBytes tiers = memory::tierBytes(plan);
  if (tiers.host == 0 && tiers.disk == 0)
    return;
  os << "  tiers: device " << sized(tiers.device);
  if (tiers.host > 0)
    os << ", host " << sized(tiers.host);
  if (tiers.disk > 0)
    os << ", disk " << sized(tiers.disk) << " (file-backed, not resident)";
  os << "\n";
}

int64_t footprint(const rt::Buffer &b) { return b.bytes * std::max<int32_t>(b.slots, 1); }

std::string lifetime(const rt::Buffer &b) {
  if (b.firstUse < 0)
    return "whole run";
  return "[" + std::to_string(b.firstUse) + ", " + std::to_string(b.lastUse) + "]";
}

/// The kernel at a timeline position, for the timeline's labels.
std::string kernelAt(const rt::Plan &plan, int64_t position) {
  int64_t steps = int64_t(plan.step.size());
  if (position < steps)
    return (position < plan.forwardKernels ? "fwd " : "bwd ") + plan.step[position].op;
  return "upd " + plan.update[position - steps].op;
}

/// Live bytes in at most `rows` bars, each the maximum over its positions.
void printTimeline(const rt::Plan &plan, llvm::raw_ostream &os) {
  std::vector<int64_t> live = plan.liveBytes();
  int64_t positions = int64_t(plan.step.size() + plan.update.size());
  if (positions == 0)
    return;
  int64_t top = std::max<int64_t>(*std::max_element(live.begin(), live.end()), 1);
  constexpr int64_t kRows = 24, kWidth = 40;
  int64_t per = (positions + kRows - 1) / kRows;
  os << "  live bytes over the timeline (step 0.." << plan.step.size() - 1;
  if (!plan.update.empty())
    os << ", update " << plan.step.size() << ".." << positions - 1;
  os << "; '#' = " << llvm::format("%.2f", mib(top) / kWidth) << " MiB):\n";
  for (int64_t p0 = 0; p0 < positions; p0 += per) {
    int64_t p1 = std::min(positions, p0 + per), best = p0;
    for (int64_t p = p0; p < p1; ++p)
      if (live[p] > live[best])
        best = p;
    int64_t bar = (live[best] * kWidth + top - 1) / top;
    std::string range = std::to_string(p0) + (p1 - 1 > p0 ? ".." + std::to_string(p1 - 1) : "");
    os << llvm::format("    %-9s %-40s %9.2f MiB  %s%s\n", range.c_str(),
                       std::string(size_t(bar), '#').c_str(), mib(live[best]),
                       kernelAt(plan, best).c_str(),
                       live[best] == plan.memory.lowerBoundBytes ? "  <- max live" : "");
  }
}

/// How the reports show a role: its title and its colour in the HTML one.
struct RoleLook {
  const char *title, *colour;
};

RoleLook lookOf(rt::BufferRole role) {
  switch (role) {
  case rt::BufferRole::Table:
    return {"tables", "#4e79a7"};
  case rt::BufferRole::Param:
    return {"parameters", "#59a14f"};
  case rt::BufferRole::Grad:
    return {"gradients", "#e15759"};
  case rt::BufferRole::OptimizerState:
    return {"optimizer state", "#b07aa1"};
  case rt::BufferRole::Input:
    return {"inputs", "#9c755f"};
  case rt::BufferRole::Activation:
    return {"activations", "#f28e2b"};
  case rt::BufferRole::Workspace:
    return {"workspace", "#76b7b2"};
  }
  return {"?", "#bab0ac"};
}

/// Dynamic padding: the buffers sized for a sequence feature's max_len,
/// of which a batch uses its own longest sequence's part.
void printSequenceBuffers(const rt::Plan &plan, llvm::raw_ostream &os) {
  const rt::SequenceLayout layout = rt::findSequenceLayout(plan);
  for (size_t s = 0; s < layout.sequences.size(); ++s) {
    const rt::SequenceLayout::Sequence &sq = layout.sequences[s];
    int64_t bytes = 0, count = 0;
    for (size_t b = 0; b < layout.of.size(); ++b)
      if (layout.of[b] == int32_t(s) && plan.buffers[b].parent < 0)
        bytes += footprint(plan.buffers[b]), ++count;
    const std::string feature = sq.input >= 0 ? plan.inputs[size_t(sq.input)].feature : "?";
    os << llvm::format("    sequences        %10.2f MiB in %lld buffer(s) sized for max_len %lld "
                       "of '%s'\n",
                       mib(bytes), (long long)count, (long long)sq.maxLen, feature.c_str());
  }
  if (layout.empty())
    return;
  if (layout.unsupported.empty()) {
    os << "      each batch runs at its longest sequence (rounded up to a multiple of 8) in "
          "them: embrun --padding batch, the default\n";
    if (!plan.cuda.source.empty() && plan.cuda.lengths.empty())
      os << "      the CUDA program pads every batch to max_len (no length variants for "
            "several sequence features)\n";
    else if (!plan.cuda.lengths.empty()) {
      os << "      the CUDA program rounds up to one of";
      for (const rt::CudaLengthVariant &v : plan.cuda.lengths)
        os << " " << v.length;
      os << " or max_len\n";
    }
  }
  else
    os << "      every batch runs at max_len: " << layout.unsupported << "\n";
}

} // namespace

const char *embc::roleTitle(rt::BufferRole role) { return lookOf(role).title; }

const char *embc::roleColour(rt::BufferRole role) { return lookOf(role).colour; }

void embc::printMemoryReport(const rt::Plan &plan, llvm::raw_ostream &os, bool everything) {
  const rt::MemoryPlan &m = plan.memory;
  double ratio = m.lowerBoundBytes > 0 ? double(m.peakBytes) / double(m.lowerBoundBytes) : 0;
  os << llvm::format("  memory (%s): peak %.2f MiB = the arena embrun allocates (%lld bytes)\n",
                     m.strategy.c_str(), mib(m.peakBytes), (long long)plan.arenaBytes);
  os << llvm::format("    lower bound %.2f MiB (%lld bytes live at once at most), "
                     "peak / lower bound = %.3f\n",
                     mib(m.lowerBoundBytes), (long long)m.lowerBoundBytes, ratio);
  // Totals per role count every buffer in full (views once, in their
  // parent; slots times): with reuse they add up to more than the peak.
  int64_t all = 0;
  for (const rt::Buffer &b : plan.buffers)
    if (b.parent < 0)
      all += footprint(b);
  for (rt::BufferRole role : kRoles) {
    int64_t bytes = 0, count = 0;
    for (const rt::Buffer &b : plan.buffers)
      if (b.role == role && b.parent < 0)
        bytes += footprint(b), ++count;
    os << llvm::format("    %-16s %10.2f MiB %5.1f%%  %lld buffer(s)\n", roleTitle(role),
                       mib(bytes), all ? 100.0 * double(bytes) / double(all) : 0.0,
                       (long long)count);
  }
  os << llvm::format("    %-16s %10.2f MiB, %.1f%% of it at the peak (reuse saves %.2f MiB)\n",
                     "all buffers", mib(all), all ? 100.0 * double(m.peakBytes) / double(all) : 0,
                     mib(std::max<int64_t>(all - m.peakBytes, 0)));
  printSequenceBuffers(plan, os);
  printTiers(plan, os);
  if (!everything) {
    os << "    (embc --emit=report lists every buffer; --report-html FILE draws the arena)\n";
    return;
  }
  os << "  buffers (offsets and bytes in bytes; lifetime in kernel positions):\n";
  os << llvm::format("    %-36s %-15s %-5s %12s %-12s %12s  %s\n", "name", "role", "dtype", "bytes",
                     "lifetime", "offset", "origin");
  for (const rt::Buffer &b : plan.buffers) {
    std::string bytes = std::to_string(b.bytes) + (b.slots > 1 ? "x" + std::to_string(b.slots) : "");
    std::string view = b.parent >= 0 ? "  (view into " + plan.buffers[b.parent].name + ")" : "";
    os << llvm::format("    %-36s %-15s %-5s %12s %-12s %12lld  %s%s\n", b.name.c_str(),
                       rt::roleName(b.role), rt::dtypeName(b.dtype), bytes.c_str(),
                       lifetime(b).c_str(), (long long)b.offset,
                       b.origin.empty() ? "-" : b.origin.c_str(), view.c_str());
  }
  printTimeline(plan, os);
}

std::string embc::formatPlanReport(const rt::Plan &plan, bool everything) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto mib = [](int64_t bytes) { return double(bytes) / (1024.0 * 1024.0); };
  os << "plan for '" << plan.model << "': " << plan.buffers.size()
     << " buffers, " << plan.step.size() << " step kernels ("
     << plan.forwardKernels << " forward), " << plan.update.size()
     << " update kernels\n";
  if (!plan.overrides.empty()) {
    os << "  overrides (embc --set):";
    for (const std::string &o : plan.overrides)
      os << " " << o;
    os << "\n";
  }
  if (const auto &schema = plan.dataSchema) {
    os << "  data: " << rt::enumName(schema->format) << ", " << schema->columns.size()
       << (schema->columns.size() == 1 ? " column" : " columns");
    if (schema->format == rt::DataFormat::Csv || schema->format == rt::DataFormat::Tsv)
      os << " (header: " << (schema->header ? "yes" : "no") << ")";
    else if (schema->format == rt::DataFormat::Binary)
      os << " (" << schema->recordFields << " int32 fields a record)";
    os << "\n";
  }
  printMemoryReport(plan, os, everything);
  // Kernels by op, in first-launch order: what fusion and packing changed.
  for (auto [title, kernels] : {std::pair<const char *, const std::vector<rt::Kernel> *>{
                                    "step", &plan.step},
                                {"update", &plan.update}}) {
    llvm::MapVector<llvm::StringRef, std::pair<int64_t, int64_t>> byOp; // launches, bytes
    int64_t total = 0;
    for (const rt::Kernel &k : *kernels) {
      auto &[launches, bytes] = byOp[k.op];
      ++launches;
      bytes += k.bytes;
      total += k.bytes;
    }
    os << "  " << title << " kernels: " << kernels->size() << ", ~"
       << llvm::format("%.2f", mib(total)) << " MiB moved per launch of all\n";
    for (auto &[op, counts] : byOp)
      os << llvm::format("    %-24s x%-4lld ~%9.3f MiB\n", op.str().c_str(),
                         (long long)counts.first, mib(counts.second));
  }
  for (const std::string &note : plan.notes)
    os << "  note: " << note << "\n";
  return s;
}
