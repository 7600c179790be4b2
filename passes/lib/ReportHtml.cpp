//===- ReportHtml.cpp - embc --report-html: the plan's memory as SVG -------===//
//
// One self-contained page (inline SVG and CSS, no script, nothing fetched)
// so it can be attached to a bug report or opened offline:
//  - the arena over the timeline: x is the kernel position, y the offset;
//    one rectangle per buffer (views are drawn by their parent), coloured
//    by role, with a hover title; whole-run buffers span the width. A
//    second chart zooms on the buffers that live for part of the step,
//    which are invisible next to the tables of a large model;
//  - the live bytes at each position, with the lower bound and the peak;
//  - the micro-batch schedule as a Gantt chart (a row per stage, forward
//    and backward boxes labelled with the micro-batch) when there is one.
//
//===----------------------------------------------------------------------===//

#include "embc/passes/MemoryReport.h"
#include "embc/runtime/XmlText.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace embc;
namespace rt = embc::runtime;

namespace {

constexpr double kWidth = 960, kHeight = 320, kLeft = 70, kTop = 20, kBottom = 30;

std::string mib(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.2f MiB", double(bytes) / (1024.0 * 1024.0));
  return s;
}

int64_t footprint(const rt::Buffer &b) { return b.bytes * std::max<int32_t>(b.slots, 1); }

/// Positions of the timeline; a plan without kernels still draws one.
int64_t positionsOf(const rt::Plan &plan) {
  return std::max<int64_t>(int64_t(plan.step.size() + plan.update.size()), 1);
}

/// The arena over the timeline, offsets [low, high) on the y axis; only
/// the buffers `keep` accepts are drawn.
template <class Keep>
void layoutSvg(const rt::Plan &plan, llvm::raw_ostream &os, int64_t low, int64_t high,
               const char *id, Keep keep) {
  const int64_t positions = positionsOf(plan);
  const double span = double(std::max<int64_t>(high - low, 1));
  const double xs = (kWidth - kLeft - 10) / double(positions);
  const double ys = (kHeight - kTop - kBottom) / span;
  os << "<svg id=\"" << id << "\" width=\"" << kWidth << "\" height=\"" << kHeight
     << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  os << "<rect class=\"frame\" x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\""
     << kWidth - kLeft - 10 << "\" height=\"" << kHeight - kTop - kBottom << "\"/>\n";
  for (const rt::Buffer &b : plan.buffers) {
    if (b.parent >= 0 || !keep(b))
      continue;
    int64_t first = b.firstUse < 0 ? 0 : b.firstUse;
    int64_t last = b.firstUse < 0 ? positions - 1 : b.lastUse;
    double x = kLeft + double(first) * xs, w = double(last - first + 1) * xs;
    // The arena grows upwards: offset 0 at the bottom.
    double top = double(b.offset + footprint(b) - low), h = double(footprint(b)) * ys;
    double y = kHeight - kBottom - top * ys;
    os << llvm::format("<rect class=\"buffer\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                       "height=\"%.2f\" fill=\"%s\">",
                       x, y, w, std::max(h, 0.5), roleColour(b.role))
       << "<title>" << rt::escapeXml(b.name) << " (" << rt::roleName(b.role) << ", "
       << rt::dtypeName(b.dtype) << "): " << footprint(b) << " bytes at offset " << b.offset
       << ", live "
       << (b.firstUse < 0 ? std::string("the whole run")
                          : "[" + std::to_string(b.firstUse) + ", " +
                                std::to_string(b.lastUse) + "]")
       << ", made by " << rt::escapeXml(b.origin.empty() ? "?" : b.origin) << "</title></rect>\n";
  }
  // Axes: the step / update boundary and the offsets at both ends.
  double boundary = kLeft + double(plan.step.size()) * xs;
  os << "<line class=\"mark\" x1=\"" << boundary << "\" y1=\"" << kTop << "\" x2=\"" << boundary
     << "\" y2=\"" << kHeight - kBottom << "\"/>\n";
  os << "<text x=\"" << kLeft - 4 << "\" y=\"" << kHeight - kBottom
     << "\" text-anchor=\"end\">" << mib(low) << "</text>\n";
  os << "<text x=\"" << kLeft - 4 << "\" y=\"" << kTop + 10 << "\" text-anchor=\"end\">"
     << mib(high) << "</text>\n";
  os << "<text x=\"" << kLeft << "\" y=\"" << kHeight - 8 << "\">step kernels 0.."
     << int64_t(plan.step.size()) - 1 << "</text>\n";
  if (!plan.update.empty())
    os << "<text x=\"" << boundary + 4 << "\" y=\"" << kHeight - 8 << "\">update</text>\n";
  os << "</svg>\n";
}

void liveSvg(const rt::Plan &plan, llvm::raw_ostream &os) {
  std::vector<int64_t> live = plan.liveBytes();
  const int64_t positions = positionsOf(plan);
  const int64_t top = std::max<int64_t>(plan.memory.peakBytes, 1);
  // The y axis starts a little below the least live bytes: whole-run
  // buffers would otherwise flatten the curve against the peak.
  int64_t least = live.empty() ? 0 : *std::min_element(live.begin(), live.end());
  const int64_t low = std::max<int64_t>(0, least - (top - least) / 10);
  const double xs = (kWidth - kLeft - 10) / double(positions);
  const double ys = (kHeight - kTop - kBottom) / double(std::max<int64_t>(top - low, 1));
  auto yOf = [&](int64_t bytes) { return kHeight - kBottom - double(bytes - low) * ys; };
  os << "<svg id=\"live\" width=\"" << kWidth << "\" height=\"" << kHeight
     << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  os << "<rect class=\"frame\" x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\""
     << kWidth - kLeft - 10 << "\" height=\"" << kHeight - kTop - kBottom << "\"/>\n";
  os << "<polyline class=\"live\" points=\"";
  for (int64_t p = 0; p < positions && p < int64_t(live.size()); ++p)
    os << llvm::format("%.2f,%.2f %.2f,%.2f ", kLeft + double(p) * xs, yOf(live[p]),
                       kLeft + double(p + 1) * xs, yOf(live[p]));
  os << "\"/>\n";
  // The peak's label above its line at the right, the bound's below at the
  // left: they are often a few bytes apart.
  auto level = [&](int64_t bytes, const char *cls, const std::string &label, bool above) {
    double y = yOf(bytes);
    os << llvm::format("<line class=\"%s\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>",
                       cls, kLeft, y, kWidth - 10, y)
       << llvm::format("<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\">",
                       above ? kWidth - 12 : kLeft + 4, above ? y - 3 : y + 12,
                       above ? "end" : "start")
       << rt::escapeXml(label) << "</text>\n";
  };
  level(plan.memory.peakBytes, "peak", "peak (the arena) " + mib(plan.memory.peakBytes), true);
  level(plan.memory.lowerBoundBytes, "bound",
        "lower bound (most bytes live at once) " + mib(plan.memory.lowerBoundBytes), false);
  double boundary = kLeft + double(plan.step.size()) * xs;
  os << "<line class=\"mark\" x1=\"" << boundary << "\" y1=\"" << kTop << "\" x2=\"" << boundary
     << "\" y2=\"" << kHeight - kBottom << "\"/>\n";
  os << "<text x=\"" << kLeft - 4 << "\" y=\"" << kHeight - kBottom
     << "\" text-anchor=\"end\">" << mib(low) << "</text>\n";
  os << "<text x=\"" << kLeft << "\" y=\"" << kHeight - 8
     << "\">kernel position (step, then update)</text>\n</svg>\n";
}

/// Start times of a schedule on a stage clock: forward 1 unit, backward 2;
/// an instruction waits for its stage and for the micro-batch's previous
/// stage (forward) or next stage (backward).
void scheduleSvg(const rt::Plan &plan, llvm::raw_ostream &os) {
  int32_t stages = 1;
  for (const rt::ScheduleOp &op : plan.schedule)
    stages = std::max(stages, op.stage + 1);
  std::vector<double> clock(size_t(stages), 0);
  std::map<std::pair<int32_t, int32_t>, double> forwardDone, backwardDone; // (stage, mb)
  struct Box {
    double start, length;
    int32_t stage, microBatch;
    bool forward;
  };
  std::vector<Box> boxes;
  double end = 1;
  for (const rt::ScheduleOp &op : plan.schedule) {
    bool forward = op.kind == "forward";
    if ((!forward && op.kind != "backward") || op.stage < 0)
      continue;
    double ready = clock[op.stage];
    if (forward && op.stage > 0)
      ready = std::max(ready, forwardDone[{op.stage - 1, op.microBatch}]);
    if (!forward)
      ready = std::max(ready, op.stage + 1 < stages ? backwardDone[{op.stage + 1, op.microBatch}]
                                                    : forwardDone[{op.stage, op.microBatch}]);
    double length = forward ? 1 : 2;
    boxes.push_back({ready, length, op.stage, op.microBatch, forward});
    clock[op.stage] = ready + length;
    (forward ? forwardDone : backwardDone)[{op.stage, op.microBatch}] = ready + length;
    end = std::max(end, ready + length);
  }
  const double row = 34, height = kTop + row * stages + kBottom;
  const double xs = (kWidth - kLeft - 10) / end;
  os << "<svg id=\"schedule\" width=\"" << kWidth << "\" height=\"" << height
     << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (int32_t s = 0; s < stages; ++s)
    os << "<text x=\"" << kLeft - 4 << "\" y=\"" << kTop + row * s + row / 2 + 4
       << "\" text-anchor=\"end\">stage " << s << "</text>\n";
  for (const Box &b : boxes) {
    double x = kLeft + b.start * xs, y = kTop + row * b.stage + 3, w = b.length * xs;
    std::string label = (b.forward ? "F" : "B") + std::to_string(b.microBatch);
    os << llvm::format("<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\">",
                       b.forward ? "fwd" : "bwd", x, y, w, row - 6)
       << "<title>" << (b.forward ? "forward" : "backward") << " of micro-batch "
       << b.microBatch << " on stage " << b.stage << "</title></rect>"
       << llvm::format("<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", x + w / 2,
                       y + row / 2)
       << label << "</text>\n";
  }
  os << "<text x=\"" << kLeft << "\" y=\"" << height - 8
     << "\">time (forward = 1 unit, backward = 2)</text>\n</svg>\n";
}

} // namespace

std::string embc::formatReportHtml(const rt::Plan &plan) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const rt::MemoryPlan &m = plan.memory;
  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>embc memory: "
     << rt::escapeXml(plan.model) << "</title>\n<style>\n"
     << "body{font-family:sans-serif;margin:1.5em} svg text{font-size:11px}\n"
     << ".frame{fill:none;stroke:#888} .buffer{stroke:#fff;stroke-width:0.3}\n"
     << ".mark{stroke:#444;stroke-dasharray:4 3} .live{fill:none;stroke:#f28e2b;stroke-width:1.5}\n"
     << ".peak{stroke:#c00} .bound{stroke:#333;stroke-dasharray:6 4}\n"
     << ".fwd{fill:#a0cbe8;stroke:#4e79a7} .bwd{fill:#ffbe7d;stroke:#f28e2b}\n"
     << ".key{display:inline-block;width:1em;height:1em;margin:0 .3em 0 1em;vertical-align:middle}\n"
     << "</style></head><body>\n";
  os << "<h1>Memory of '" << rt::escapeXml(plan.model) << "'</h1>\n<p>Strategy <b>"
     << rt::escapeXml(m.strategy) << "</b>: peak <b>" << mib(m.peakBytes) << "</b> (" << m.peakBytes
     << " bytes, the arena embrun allocates), lower bound " << mib(m.lowerBoundBytes) << " ("
     << m.lowerBoundBytes << " bytes live at once at most)"
     << llvm::format(", peak / lower bound = %.3f",
                     m.lowerBoundBytes ? double(m.peakBytes) / double(m.lowerBoundBytes) : 0.0)
     << ". " << plan.buffers.size() << " buffers; " << plan.step.size() << " step and "
     << plan.update.size() << " update kernels.</p>\n<p>";
  for (rt::BufferRole role : {rt::BufferRole::Table, rt::BufferRole::Param,
                              rt::BufferRole::OptimizerState, rt::BufferRole::Grad,
                              rt::BufferRole::Activation, rt::BufferRole::Input,
                              rt::BufferRole::Workspace})
    os << "<span class=\"key\" style=\"background:" << roleColour(role) << "\"></span>"
       << roleTitle(role);
  os << "</p>\n<h2>Arena layout over the timeline</h2>\n"
     << "<p>x: kernel position (step, then update); y: offset in the arena. Hover for "
        "each buffer.</p>\n";
  layoutSvg(plan, os, 0, std::max<int64_t>(plan.arenaBytes, 1), "layout",
            [](const rt::Buffer &) { return true; });
  // The buffers that live for part of the step, at their own scale.
  int64_t low = plan.arenaBytes, high = 0;
  for (const rt::Buffer &b : plan.buffers)
    if (b.parent < 0 && b.firstUse >= 0)
      low = std::min(low, b.offset), high = std::max(high, b.offset + footprint(b));
  if (high > low) {
    os << "<h2>Buffers live for part of the step (offsets " << low << ".." << high
       << ")</h2>\n";
    layoutSvg(plan, os, low, high, "transient",
              [](const rt::Buffer &b) { return b.firstUse >= 0; });
  }
  os << "<h2>Live bytes</h2>\n";
  liveSvg(plan, os);
  if (!plan.schedule.empty()) {
    os << "<h2>Pipeline schedule</h2>\n<p>" << plan.config.microBatches << " micro-batches, "
       << plan.config.pipelineStages << " stage(s), "
       << rt::escapeXml(embc::runtime::enumString(plan.config.schedule)) << ".</p>\n";
    scheduleSvg(plan, os);
  }
  os << "</body></html>\n";
  return s;
}
