//===- Plot.cpp - training curves from JSON-lines logs --------------------===//

#include "embc/runtime/metrics/Plot.h"
#include "embc/runtime/XmlText.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

using namespace embc::runtime;

namespace {

// The drawing's geometry, in SVG user units.
constexpr double kWidth = 900, kPanelHeight = 230, kLeft = 78, kRight = 24, kTop = 34,
                 kBottom = 34, kLegendHeight = 46;
// Distinct on white and for the common colour-vision deficiencies (Okabe-Ito).
const char *const kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                "#E69F00", "#56B4E9", "#000000", "#F0E442"};

std::string number(double v, const char *format = "%.4g") {
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

/// Ticks at 1, 2 or 5 times a power of ten, about `count` of them over
/// [lo, hi].
std::vector<double> niceTicks(double lo, double hi, int count) {
  const double raw = (hi - lo) / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

struct Series {
  size_t run;
  bool eval;
  std::string key;
  std::vector<std::pair<double, double>> points;
};

std::vector<Series> seriesOf(const std::vector<PlotRun> &runs, const PlotPanel &panel) {
  std::vector<Series> all;
  for (size_t r = 0; r < runs.size(); ++r)
    for (bool eval : {false, true}) {
      const std::string &key = eval ? panel.evalKey : panel.trainKey;
      if (key.empty())
        continue;
      Series s{r, eval, key, {}};
      for (const LogRecord &rec : runs[r].records)
        if (rec.event == (eval ? "eval" : "train"))
          if (auto it = rec.values.find(key); it != rec.values.end() && std::isfinite(it->second))
            s.points.push_back({rec.step, it->second});
      if (!s.points.empty())
        all.push_back(std::move(s));
    }
  return all;
}

} // namespace

std::vector<LogRecord> embc::runtime::readLogFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw PlotError(path + ": cannot read the log");
  std::vector<LogRecord> records;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("event") || !j["event"].is_string())
      throw PlotError(path + ":" + std::to_string(number) +
                      ": not a record of an embrun log (a JSON object with an \"event\")");
    LogRecord r;
    r.event = j["event"].get<std::string>();
    if (j.contains("step") && j["step"].is_number())
      r.step = j["step"].get<double>();
    for (const auto &[key, value] : j.items())
      if (key != "event" && key != "step" && value.is_number())
        r.values[key] = value.get<double>();
    records.push_back(std::move(r));
  }
  return records;
}

std::vector<PlotPanel> embc::runtime::plotPanels(const std::vector<PlotRun> &runs) {
  std::set<std::string> trainKeys, evalKeys;
  for (const PlotRun &run : runs)
    for (const LogRecord &r : run.records)
      for (const auto &[key, value] : r.values) {
        if (r.event == "train")
          trainKeys.insert(key);
        if (r.event == "eval" && key.rfind("eval_", 0) == 0)
          evalKeys.insert(key);
      }
  std::vector<PlotPanel> panels;
  auto add = [&](const std::string &title, const std::string &train, const std::string &eval) {
    PlotPanel p{title, trainKeys.count(train) ? train : "", evalKeys.count(eval) ? eval : ""};
    if (!p.trainKey.empty() || !p.evalKey.empty())
      panels.push_back(p);
  };
  add("loss", "loss", "eval_loss");
  for (const std::string &key : evalKeys)
    if (key != "eval_loss")
      add(key.substr(5), key.substr(5), key);
  // Train-only quality metrics (a run without evaluations).
  for (const char *key : {"auc", "accuracy", "rmse"})
    if (!evalKeys.count(std::string("eval_") + key))
      add(key, key, "");
  add("samples/s", "samples_per_s", "");
  return panels;
}

namespace {

std::string svgOf(const std::vector<PlotRun> &runs, const std::vector<PlotPanel> &panels) {
  if (panels.empty())
    throw PlotError("nothing to plot: the logs have no train or eval records with values");
  double xLo = std::numeric_limits<double>::infinity(), xHi = -xLo;
  std::vector<std::vector<Series>> seriesByPanel;
  for (const PlotPanel &p : panels) {
    seriesByPanel.push_back(seriesOf(runs, p));
    for (const Series &s : seriesByPanel.back())
      for (auto [x, y] : s.points)
        xLo = std::min(xLo, x), xHi = std::max(xHi, x);
  }
  if (xHi <= xLo)
    xHi = xLo + 1;
  const double height = kLegendHeight + kPanelHeight * double(panels.size());
  const double plotWidth = kWidth - kLeft - kRight;
  auto xPos = [&](double x) { return kLeft + (x - xLo) / (xHi - xLo) * plotWidth; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\""
      << height << "\" viewBox=\"0 0 " << kWidth << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // Legend: a colour per run, then the line styles.
  double lx = kLeft;
  for (size_t r = 0; r < runs.size(); ++r) {
    const char *colour = kColours[r % std::size(kColours)];
    svg << "<g class=\"legend\"><line x1=\"" << lx << "\" y1=\"18\" x2=\"" << lx + 22
        << "\" y2=\"18\" stroke=\"" << colour << "\" stroke-width=\"3\"/><text x=\"" << lx + 27
        << "\" y=\"22\">" << escapeXml(runs[r].name) << "</text></g>\n";
    lx += 40 + 7.0 * double(runs[r].name.size());
  }
  svg << "<text x=\"" << kLeft << "\" y=\"40\" fill=\"#555\">solid: training records, "
      << "dashed with dots: evaluations</text>\n";

  for (size_t p = 0; p < panels.size(); ++p) {
    const std::vector<Series> &series = seriesByPanel[p];
    const double top = kLegendHeight + kPanelHeight * double(p) + kTop;
    const double bottom = kLegendHeight + kPanelHeight * double(p + 1) - kBottom;
    double yLo = std::numeric_limits<double>::infinity(), yHi = -yLo;
    for (const Series &s : series)
      for (auto [x, y] : s.points)
        yLo = std::min(yLo, y), yHi = std::max(yHi, y);
    if (series.empty())
      yLo = 0, yHi = 1;
    if (yHi <= yLo) {
      const double pad = std::max(std::abs(yLo) * 0.05, 1e-6);
      yLo -= pad, yHi += pad;
    } else {
      const double pad = (yHi - yLo) * 0.05;
      yLo -= pad, yHi += pad;
    }
    auto yPos = [&](double y) { return bottom - (y - yLo) / (yHi - yLo) * (bottom - top); };
    svg << "<g class=\"panel\" data-title=\"" << escapeXml(panels[p].title) << "\">\n"
        << "<text x=\"" << kLeft << "\" y=\"" << top - 8 << "\" font-weight=\"bold\">"
        << escapeXml(panels[p].title) << "</text>\n"
        << "<rect x=\"" << kLeft << "\" y=\"" << top << "\" width=\"" << plotWidth
        << "\" height=\"" << bottom - top << "\" fill=\"none\" stroke=\"#999\"/>\n";
    for (double t : niceTicks(yLo, yHi, 4))
      svg << "<line x1=\"" << kLeft << "\" y1=\"" << yPos(t) << "\" x2=\"" << kLeft + plotWidth
          << "\" y2=\"" << yPos(t) << "\" stroke=\"#eee\"/><text x=\"" << kLeft - 6
          << "\" y=\"" << yPos(t) + 4 << "\" text-anchor=\"end\">" << number(t, "%.6g") << "</text>\n";
    for (double t : niceTicks(xLo, xHi, 6))
      svg << "<text x=\"" << xPos(t) << "\" y=\"" << bottom + 16
          << "\" text-anchor=\"middle\">" << number(t, "%.6g") << "</text>\n";
    for (const Series &s : series) {
      const char *colour = kColours[s.run % std::size(kColours)];
      svg << "<path class=\"series\" data-run=\"" << escapeXml(runs[s.run].name)
          << "\" data-metric=\"" << escapeXml(s.key) << "\" fill=\"none\" stroke=\"" << colour
          << "\" stroke-width=\"" << (s.eval ? 2 : 1.5) << "\""
          << (s.eval ? " stroke-dasharray=\"6 4\"" : "") << " d=\"";
      for (size_t i = 0; i < s.points.size(); ++i)
        svg << (i ? " L" : "M") << number(xPos(s.points[i].first), "%.2f") << " "
            << number(yPos(s.points[i].second), "%.2f");
      svg << "\"/>\n";
      if (s.eval || s.points.size() == 1)
        for (auto [x, y] : s.points)
          svg << "<circle cx=\"" << number(xPos(x), "%.2f") << "\" cy=\""
              << number(yPos(y), "%.2f") << "\" r=\"2.5\" fill=\"" << colour << "\"/>\n";
    }
    svg << "</g>\n";
  }
  svg << "<text x=\"" << kLeft + plotWidth / 2 << "\" y=\"" << height - 4
      << "\" text-anchor=\"middle\" fill=\"#555\">step</text>\n</svg>\n";
  return svg.str();
}

} // namespace

std::string embc::runtime::plotSvg(const std::vector<PlotRun> &runs) {
  return svgOf(runs, plotPanels(runs));
}

std::string embc::runtime::plotHtml(const std::vector<PlotRun> &runs) {
  const std::vector<PlotPanel> panels = plotPanels(runs);
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>embc training "
          "curves</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
          "collapse}td,th{padding:.2em .8em;border-bottom:1px solid #ddd;text-align:right}"
          "th:first-child,td:first-child{text-align:left}</style></head><body>\n"
       << "<h1>Training curves</h1>\n"
       << svgOf(runs, panels) << "<h2>Last values</h2>\n<table><tr><th>run</th><th>step</th>";
  for (const PlotPanel &p : panels)
    html << "<th>" << escapeXml(p.evalKey.empty() ? p.trainKey : p.evalKey) << "</th>";
  html << "</tr>\n";
  for (const PlotRun &run : runs) {
    double lastStep = 0;
    std::map<std::string, double> last;
    for (const LogRecord &r : run.records)
      if (r.event == "train" || r.event == "eval") {
        lastStep = std::max(lastStep, r.step);
        for (const auto &[k, v] : r.values)
          last[(r.event == "eval" ? "" : "train:") + k] = v;
      }
    html << "<tr><td>" << escapeXml(run.name) << "</td><td>" << number(lastStep, "%.6g")
         << "</td>";
    for (const PlotPanel &p : panels) {
      auto it = p.evalKey.empty() ? last.find("train:" + p.trainKey) : last.find(p.evalKey);
      html << "<td>" << (it == last.end() ? std::string("") : number(it->second, "%.6g")) << "</td>";
    }
    html << "</tr>\n";
  }
  html << "</table>\n</body></html>\n";
  return html.str();
}

void embc::runtime::writePlot(const std::string &path, const std::vector<PlotRun> &runs) {
  auto endsWith = [&](const char *suffix) {
    const std::string s(suffix);
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  std::string text;
  if (endsWith(".svg"))
    text = plotSvg(runs);
  else if (endsWith(".html") || endsWith(".htm"))
    text = plotHtml(runs);
  else
    throw PlotError(path + ": a plot is FILE.svg or FILE.html");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out)
    throw PlotError(path + ": cannot write the plot");
}
