//===- RunOptions.cpp - embrun command line -----------------------------===//

#include "embc/runtime/RunOptions.h"
#include "embc/runtime/WholeNumber.h"
#include "embc/runtime/data/Data.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace embc::runtime;

#ifndef EMBC_VERSION
#define EMBC_VERSION "unknown"
#endif

const char *embc::runtime::runtimeVersion() { return EMBC_VERSION; }

std::optional<std::string>
embc::runtime::parseDataSource(const std::string &text, DataSource &out) {
  static const char *kinds[] = {"synthetic", "criteo", "movielens", "mlperf_criteo", "text"};
  size_t colon = text.find(':');
  std::string kind = text.substr(0, colon);
  std::string path = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (std::find(std::begin(kinds), std::end(kinds), kind) == std::end(kinds)) {
    const bool looksLikeKind =
        colon != std::string::npos && colon > 0 &&
        std::all_of(kind.begin(), kind.end(), [](char c) { return std::islower(uint8_t(c)) || c == '_'; });
    if (text.empty() || looksLikeKind)
      return "unknown data kind '" + kind +
             "' (expected synthetic, criteo:PATH, movielens:PATH, mlperf_criteo:PATH, "
             "text:PATH, or a PATH read through the model's data schema; write a path with "
             "a colon as ./PATH)";
    // A file (or an npy directory, or a glob) that the plan's data schema
    // reads; the trainer checks that the plan has one.
    out = DataSource{"schema", text};
    return std::nullopt;
  }
  if (kind != "synthetic" && path.empty())
    return "data kind '" + kind + "' needs a path: " + kind + ":PATH";
  if (kind == "synthetic" && !path.empty())
    return "the synthetic generator takes no path";
  out = DataSource{kind, path};
  return std::nullopt;
}

ParseResult embc::runtime::parseRunOptions(const std::vector<std::string> &args,
                                           const std::vector<BackendInfo> &backends) {
  RunOptions o;
  if (const char *tmp = std::getenv("TMPDIR"); tmp && *tmp)
    o.tableDir = tmp;
  std::string data, eval, seed;
  int64_t steps = 0, epochs = 0;

  CLI::App app{"embrun: train a compiled embc plan on the CPU or a GPU",
               "embrun"};
  app.set_version_flag("--version", std::string("embrun ") + EMBC_VERSION);
  app.add_option("plan", o.planPath, "Plan file written by embc -o")
      ->required();
  auto *stepsOpt =
      app.add_option("--steps", steps,
                     "Training steps (0 with --save: write the initial checkpoint)")
          ->check(CLI::NonNegativeNumber);
  auto *epochsOpt = app.add_option("--epochs", epochs, "Passes over the data")
                        ->check(CLI::PositiveNumber);
  stepsOpt->excludes(epochsOpt);
  auto *dataOpt = app.add_option("--data", data,
                 "Training data: synthetic (default), criteo:PATH, movielens:PATH, "
                 "mlperf_criteo:PATH, text:PATH, or PATH (a file, an npy directory or a glob "
                 "of several) read through the model's data schema");
  auto *noShuffleOpt =
      app.add_flag("!--no-shuffle", o.shuffle,
                   "Training data from a file: visit the examples in file order every epoch "
                   "(as word2vec and gensim read text) instead of a fresh order each; "
                   "--shuffle none");
  std::string shuffle;
  auto *shuffleOpt = app.add_option(
      "--shuffle", shuffle,
      "Training data from a file: epoch (a fresh order of the whole file each epoch, the "
      "default for data that fits 1 GiB of parsed rows; larger data is then held whole), "
      "none (file order, for comparisons with another trainer) or buffer:N (each window of "
      "N consecutive examples shuffled on its own, as a streaming shuffle buffer of N; the "
      "default for larger data, with N about 64 MiB of rows)");
  shuffleOpt->excludes(noShuffleOpt);
  auto *windowOpt =
      app.add_option("--text-window", o.textWindow,
                     "Text data: the largest skip-gram window each side of a word")
          ->check(CLI::Range(1, 65535));
  auto *minCountOpt =
      app.add_option("--text-min-count", o.textMinCount,
                     "Text data: words seen fewer times leave the vocabulary")
          ->check(CLI::PositiveNumber);
  auto *sampleOpt =
      app.add_option("--text-sample", o.textSample,
                     "Text data: frequent-word subsampling threshold, as word2vec's "
                     "-sample (1e-3 to 1e-5; 0: off)")
          ->check(CLI::Range(0.0, 0.999999));
  auto *evalOpt =
      app.add_option("--eval", eval, "Evaluation data, KIND:PATH as --data");
  app.add_option("--eval-every", o.evalEvery, "Evaluate every N steps")
      ->check(CLI::NonNegativeNumber)
      ->needs(evalOpt);
  auto *seedOpt = app.add_option("--seed", seed,
                                 "Overrides the model's seed (0 to 2^64 - 1)");
  app.add_option("--report-every", o.reportEvery,
                 "Report training metrics every N steps (0: about 20 reports)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--log", o.logPath, "Write JSON-lines metrics to FILE");
  app.add_option("--plot", o.plotPath,
                 "At the end, draw the loss, evaluation metrics and samples/s against the step "
                 "into FILE.svg or FILE.html (emb-plot draws several runs' logs)")
      ->check([](const std::string &path) {
        for (const char *ext : {".svg", ".html", ".htm"})
          if (path.size() > std::strlen(ext) &&
              path.compare(path.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
            return std::string();
        return "'" + path + "' is not FILE.svg or FILE.html";
      });
  auto *saveOpt = app.add_option("--save", o.saveDir,
                 "Write a checkpoint to DIR at the end (and with --save-every)");
  app.add_option("--save-every", o.saveEvery, "Also checkpoint every N steps")
      ->check(CLI::NonNegativeNumber)
      ->needs(saveOpt);
  auto *resumeOpt =
      app.add_option("--resume", o.resumeDir, "Resume from the checkpoint in DIR");
  app.add_flag("!--no-verify", o.verifyCheckpoint,
               "Resume even when the checkpoint's checksum (of its header and data) is "
               "missing or does not match: its values are used unverified")
      ->needs(resumeOpt);
  app.add_option("--export-embeddings", o.exportEmbeddings,
                 "Write the trained tables to FILE.safetensors");
  app.add_option("--threads", o.threads,
                 "The most CPU threads (0: every CPU); the fastest team size up to it is "
                 "measured while training (at most 4096)")
      ->check(CLI::Range(0, 4096));
  std::vector<std::string> devices{"auto"};
  std::string deviceHelp = "auto (cuda when the plan has a CUDA program and a GPU is usable, "
                           "else cpu) or a backend:";
  for (const BackendInfo &b : backends) {
    devices.push_back(b.name);
    deviceHelp += std::string("\n  ") + b.name + ": " + b.summary;
  }
  app.add_option("--device", o.device, deviceHelp)->check(CLI::IsMember(devices));
  app.add_flag("!--no-graphs", o.cudaGraphs,
               "CUDA: launch each kernel eagerly instead of replaying captured graphs");
  app.add_option("--on-bad-data", o.onBadData,
                 "What a malformed data line does: fail or skip")
      ->check(CLI::IsMember({"fail", "skip"}));
  app.add_option("--padding", o.padding,
                 "Sequence features: batch (each batch padded to its longest sequence, "
                 "rounded up to a multiple of 8 on the CPU, to the next length of the plan's "
                 "CUDA program on a GPU) or max_len (every batch padded to max_len)")
      ->check(CLI::IsMember({"batch", "max_len"}));
  app.add_option("--table-dir", o.tableDir,
                 "Where tables placed on disk (placement disk in the model) get their scratch "
                 "files, deleted at exit (default /tmp; the TMPDIR environment variable when "
                 "set)");
  app.add_flag("!--no-prefetch-rows", o.prefetchRows,
               "Disk tables: do not read each batch's rows into the page cache ahead of its "
               "step (the data loader asks for them as it fills the batch)");
  app.add_option("--data-memory", o.dataMemoryMiB,
                 "MiB of parsed rows the data reader may hold: a file whose rows fit is held "
                 "whole and shuffled whole each epoch; a larger one is streamed and shuffled "
                 "in windows of a sixteenth of this (default 1024)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 30));
  app.add_option("--length-buckets", o.lengthBuckets,
                 "Training on a file with a sequence feature: sort each window of K batches "
                 "of the shuffled order by sequence length before cutting batches, so that "
                 "a batch's sequences are alike in length (with --padding batch it runs "
                 "short); 0: off")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 20));
  app.add_flag("--profile", o.profile,
               "Time every kernel; print a per-op table and log a profile record");
  app.add_flag("--hash-stats", o.hashStats,
               "Hashed features: count the distinct raw ids and the buckets they fill, and "
               "report each feature's collision rate in the summary (costs the trainer "
               "~100 ns an id)");
  std::string stopAt;
  auto *stopAtOpt = app.add_option(
      "--stop-at", stopAt,
      "Stop at the first evaluation whose METRIC meets the target, e.g. eval_auc>=0.8025 or "
      "eval_loss<=0.44 (needs --eval-every, or synthetic data's evaluations)");
  app.add_option("--patience", o.patience,
                 "Stop after N evaluations in a row without a better --monitor")
      ->check(CLI::PositiveNumber);
  auto *monitorOpt = app.add_option(
      "--monitor", o.monitor,
      "The evaluation metric --patience and the best checkpoint (DIR/best with --save) follow: "
      "eval_auc, eval_loss, eval_rmse, eval_accuracy, eval_perplexity, ... (default: "
      "--stop-at's metric, else eval_loss)");
  double lossScale = 0;
  auto *lossScaleOpt =
      app.add_option("--loss-scale", lossScale,
                     "fp16 plans: initial dynamic loss scale (default: the plan's)")
          ->check(CLI::PositiveNumber);

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp &) {
    return {std::nullopt, app.help(), 0};
  } catch (const CLI::CallForVersion &e) {
    return {std::nullopt, std::string(e.what()) + "\n", 0};
  } catch (const CLI::ParseError &e) {
    return {std::nullopt,
            "embrun: error: " + std::string(e.what()) +
                "\nRun with --help for usage.\n",
            2};
  }
  if (stepsOpt->count())
    o.steps = steps;
  // Zero steps only makes sense to hand the initial weights to someone else
  // (e.g. a PyTorch baseline); without --save it would do nothing at all.
  if (o.steps == int64_t(0) && !saveOpt->count())
    return {std::nullopt,
            "embrun: error: --steps 0 needs --save DIR (it writes the initial "
            "checkpoint and trains nothing)\nRun with --help for usage.\n",
            2};
  if (epochsOpt->count())
    o.epochs = epochs;
  if (seedOpt->count()) {
    // Digits only: CLI11 would wrap "-1" and saturate "1e23".
    std::optional<uint64_t> value = parseWholeNumber(seed);
    if (!value)
      return {std::nullopt,
              "embrun: error: --seed: '" + seed +
                  "' is not a whole number from 0 to 18446744073709551615\n",
              2};
    o.seed = *value;
  }
  if (lossScaleOpt->count())
    o.lossScale = lossScale;
  if (dataOpt->count())
    if (auto err = parseDataSource(data, o.data))
      return {std::nullopt, "embrun: error: --data: " + *err + "\n", 2};
  const bool textOption = windowOpt->count() || minCountOpt->count() || sampleOpt->count();
  if (textOption && o.data.kind != "text")
    return {std::nullopt,
            "embrun: error: --text-window, --text-min-count and --text-sample apply to "
            "text data (--data text:PATH), not to " + o.data.kind + "\n",
            2};
  if (shuffleOpt->count()) {
    std::optional<uint64_t> window;
    if (shuffle.rfind("buffer:", 0) == 0)
      window = parseWholeNumber(shuffle.substr(7));
    if (shuffle == "none") {
      o.shuffle = false;
    } else if (shuffle != "epoch" && (!window || *window < 2)) {
      return {std::nullopt,
              "embrun: error: --shuffle: '" + shuffle +
                  "' is not none, epoch or buffer:N with N >= 2 examples\n",
              2};
    } else if (window) {
      o.shuffleWindow = *window;
    } else {
      o.shuffleWindow = data::kWholeEpoch;
    }
  }
  if (stopAtOpt->count()) {
    const size_t op = stopAt.find_first_of("<>");
    StopTarget target;
    target.metric = stopAt.substr(0, op);
    const std::string relation = op == std::string::npos ? "" : stopAt.substr(op, 2);
    const std::string number = op == std::string::npos ? "" : stopAt.substr(op + 2);
    char *end = nullptr;
    target.value = std::strtod(number.c_str(), &end);
    if (target.metric.rfind("eval_", 0) != 0 || (relation != ">=" && relation != "<=") ||
        number.empty() || *end != '\0' || !std::isfinite(target.value))
      return {std::nullopt,
              "embrun: error: --stop-at: '" + stopAt +
                  "' is not METRIC>=VALUE or METRIC<=VALUE with an evaluation metric "
                  "(eval_auc>=0.8025, eval_loss<=0.44)\n",
              2};
    target.atLeast = relation == ">=";
    o.stopAt = target;
  }
  if (monitorOpt->count() && o.monitor.rfind("eval_", 0) != 0)
    return {std::nullopt,
            "embrun: error: --monitor: '" + o.monitor +
                "' is not an evaluation metric (eval_auc, eval_loss, eval_rmse, ...)\n",
            2};
  if (evalOpt->count()) {
    DataSource source;
    if (auto err = parseDataSource(eval, source))
      return {std::nullopt, "embrun: error: --eval: " + *err + "\n", 2};
    o.eval = source;
  }
  return {o, "", 0};
}
