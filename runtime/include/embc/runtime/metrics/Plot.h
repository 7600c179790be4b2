//===- Plot.h - training curves from JSON-lines logs ------------*- C++ -*-===//
//
// `emb-plot a.jsonl b.jsonl -o curves.svg` and `embrun --plot curves.svg`:
// the metrics of one or more runs against the step, one panel per metric
// (the loss, each evaluation metric, samples/s), train records solid and
// eval records dashed, one colour per run. Plain SVG (or an HTML page
// holding it): no library, opens in any browser.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_METRICS_PLOT_H
#define EMBC_RUNTIME_METRICS_PLOT_H

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime {

/// One record of embrun's JSON-lines log (docs/training.md, "Metrics and
/// logs"): its event, step and numeric values (null values are left out).
struct LogRecord {
  std::string event;
  double step = 0;
  std::map<std::string, double> values;
};

/// A run to plot: its name in the legend and its records.
struct PlotRun {
  std::string name;
  std::vector<LogRecord> records;
};

class PlotError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The records of a log file; PlotError names the file and line of one that
/// is not a JSON object with an "event".
std::vector<LogRecord> readLogFile(const std::string &path);

/// One panel of a plot: a metric and the series that draw it.
struct PlotPanel {
  std::string title;        ///< "loss", "auc", "samples/s"
  std::string trainKey;     ///< the train records' value ("" if none)
  std::string evalKey;      ///< the eval records' value ("" if none)
};

/// The panels `runs` have data for: loss first, then each evaluation metric
/// (with the train records' value of the same name, if any), samples/s last.
std::vector<PlotPanel> plotPanels(const std::vector<PlotRun> &runs);

/// The SVG document; PlotError when no run has a point to draw.
std::string plotSvg(const std::vector<PlotRun> &runs);
/// An HTML page holding plotSvg's drawing and the runs' final values.
std::string plotHtml(const std::vector<PlotRun> &runs);

/// Writes plotSvg or plotHtml (by `path`'s extension, .svg or .html) to
/// `path`; PlotError for another extension or a file that cannot be written.
void writePlot(const std::string &path, const std::vector<PlotRun> &runs);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_METRICS_PLOT_H
