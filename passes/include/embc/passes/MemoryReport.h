//===- MemoryReport.h - the plan's memory, as text and as a picture -*- C++ -*-===//
//
// What -emb-plan-memory decided, for people: `embc --emit=report` prints
// the text form (totals per role, peak and lower bound, every buffer with
// its lifetime, offset and origin, a coarse timeline of live bytes), and
// `embc --report-html FILE` draws the arena over the step and the pipeline
// schedule as inline SVG in a self-contained page.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_MEMORYREPORT_H
#define EMBC_PASSES_MEMORYREPORT_H

#include "embc/runtime/Plan.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace embc {

/// The memory section of the plan report: peak, lower bound, strategy and
/// totals per role; with `everything`, also every buffer and the timeline.
void printMemoryReport(const runtime::Plan &plan, llvm::raw_ostream &os, bool everything);

/// A self-contained HTML page (no scripts, no external files): the arena
/// layout over the step, the live-bytes curve with the lower bound and the
/// peak, and the pipeline schedule as a Gantt chart when the plan has one.
std::string formatReportHtml(const runtime::Plan &plan);

/// The report's name for a role, plural ("parameters", "optimizer state").
const char *roleTitle(runtime::BufferRole role);
/// The colour of a role's boxes in the HTML report.
const char *roleColour(runtime::BufferRole role);

} // namespace embc

#endif // EMBC_PASSES_MEMORYREPORT_H
