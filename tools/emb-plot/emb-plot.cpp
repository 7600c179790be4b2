//===- emb-plot.cpp - training curves of embrun logs ----------------------===//
//
// emb-plot RUN.jsonl [RUN2.jsonl ...] -o curves.svg|curves.html
//
// Draws the loss, every evaluation metric and samples/s of each run against
// the step (runtime/include/embc/runtime/metrics/Plot.h). A run is named by
// its file name; NAME=PATH names it explicitly.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/metrics/Plot.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

using namespace embc::runtime;

int main(int argc, char **argv) {
  CLI::App app{"emb-plot: training curves (loss, evaluation metrics, samples/s) of embrun "
               "JSON-lines logs, as SVG or HTML"};
  std::vector<std::string> logs;
  std::string output;
  app.add_option("logs", logs, "embrun --log files, each a run (NAME=PATH names it)")
      ->required();
  app.add_option("-o,--output", output, "FILE.svg or FILE.html")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<PlotRun> runs;
    for (const std::string &arg : logs) {
      PlotRun run;
      std::string path = arg;
      // NAME=PATH (the last "=": names may hold one, as a --set does).
      if (size_t eq = arg.rfind('='); eq != std::string::npos && !std::filesystem::exists(arg)) {
        run.name = arg.substr(0, eq);
        path = arg.substr(eq + 1);
      } else {
        run.name = std::filesystem::path(arg).stem().string();
      }
      run.records = readLogFile(path);
      runs.push_back(std::move(run));
    }
    writePlot(output, runs);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "emb-plot: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
