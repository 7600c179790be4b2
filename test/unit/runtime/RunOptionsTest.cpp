//===- RunOptionsTest.cpp - embrun command-line parsing ---------------------===//

#include "embc/runtime/RunOptions.h"
#include "embc/runtime/backends/Registry.h"

#include <gtest/gtest.h>

using namespace embc::runtime;

/// embrun's parse: --device takes the registry's backends.
static ParseResult parse(const std::vector<std::string> &args) {
  return parseRunOptions(args, knownBackends());
}

TEST(RunOptions, DefaultsToSyntheticData) {
  ParseResult r = parse({"model.plan"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->planPath, "model.plan");
  EXPECT_EQ(r.options->data.kind, "synthetic");
  EXPECT_FALSE(r.options->steps);
  EXPECT_EQ(r.options->device, "auto");
  EXPECT_EQ(r.options->onBadData, "fail");
  EXPECT_EQ(r.options->padding, "batch");
  EXPECT_EQ(r.options->lengthBuckets, 0);
}

TEST(RunOptions, PaddingAndLengthBuckets) {
  ParseResult r = parse({"m.plan", "--padding", "max_len", "--length-buckets", "64"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->padding, "max_len");
  EXPECT_EQ(r.options->lengthBuckets, 64);
  for (std::vector<std::string> bad : {std::vector<std::string>{"m.plan", "--padding", "none"},
                                       {"m.plan", "--length-buckets", "-1"}}) {
    ParseResult e = parse(bad);
    EXPECT_FALSE(e.options) << bad[1];
    EXPECT_EQ(e.exitCode, 2);
  }
}

TEST(RunOptions, ParsesTrainingFlags) {
  ParseResult r = parse(
      {"m.plan", "--steps", "200", "--data", "criteo:train.tsv", "--eval",
       "criteo:test.tsv", "--eval-every", "50", "--seed", "7", "--log",
       "run.jsonl", "--threads", "2", "--device", "cpu"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(*r.options->steps, 200);
  EXPECT_EQ(r.options->data.kind, "criteo");
  EXPECT_EQ(r.options->data.path, "train.tsv");
  ASSERT_TRUE(r.options->eval);
  EXPECT_EQ(r.options->eval->path, "test.tsv");
  EXPECT_EQ(r.options->evalEvery, 50);
  EXPECT_EQ(*r.options->seed, 7u);
  EXPECT_EQ(r.options->logPath, "run.jsonl");
  EXPECT_EQ(r.options->threads, 2);
  EXPECT_EQ(r.options->device, "cpu");
}

TEST(RunOptions, StepsAndEpochsExcludeEachOther) {
  ParseResult r = parse({"m.plan", "--steps", "5", "--epochs", "1"});
  EXPECT_FALSE(r.options);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.message.find("excludes"), std::string::npos) << r.message;
}

TEST(RunOptions, RejectsBadValues) {
  EXPECT_FALSE(parse({"m.plan", "--steps", "0"}).options);
  EXPECT_FALSE(parse({"m.plan", "--steps", "ten"}).options);
  EXPECT_FALSE(parse({"m.plan", "--device", "tpu"}).options);
  EXPECT_FALSE(parse({"m.plan", "--eval-every", "5"}).options)
      << "--eval-every needs --eval";
  EXPECT_FALSE(parse({}).options) << "the plan is required";
}

// Each of these once meant something other than what was typed: -1 wrapped
// to 2^64 - 1, 1e23 saturated, '' was synthetic data, --save-every without
// --save saved nothing.
TEST(RunOptions, RejectsWhatWouldBeMisread) {
  for (const char *seed : {"-1", "1e23", "18446744073709551616", "", " 7", "0x10"}) {
    ParseResult r = parse({"m.plan", "--seed", seed});
    EXPECT_FALSE(r.options) << "--seed '" << seed << "'";
    EXPECT_EQ(r.message, std::string("embrun: error: --seed: '") + seed +
                             "' is not a whole number from 0 to 18446744073709551615\n");
  }
  ParseResult largest = parse({"m.plan", "--seed", "18446744073709551615"});
  ASSERT_TRUE(largest.options) << largest.message;
  EXPECT_EQ(*largest.options->seed, UINT64_MAX);
  ParseResult empty = parse({"m.plan", "--data", ""});
  EXPECT_FALSE(empty.options);
  EXPECT_NE(empty.message.find("--data: unknown data kind ''"), std::string::npos)
      << empty.message;
  EXPECT_FALSE(parse({"m.plan", "--eval", ""}).options);
  ParseResult saveEvery = parse({"m.plan", "--save-every", "10"});
  EXPECT_FALSE(saveEvery.options);
  EXPECT_NE(saveEvery.message.find("--save-every requires --save"), std::string::npos)
      << saveEvery.message;
  EXPECT_TRUE(parse({"m.plan", "--save-every", "10", "--save", "d"}).options);
  EXPECT_FALSE(parse({"m.plan", "--threads", "5000"}).options);
  EXPECT_FALSE(parse({"m.plan", "--no-verify"}).options) << "--no-verify needs --resume";
  ParseResult unverified = parse({"m.plan", "--resume", "d", "--no-verify"});
  ASSERT_TRUE(unverified.options) << unverified.message;
  EXPECT_FALSE(unverified.options->verifyCheckpoint);
  EXPECT_TRUE(parse({"m.plan", "--resume", "d"}).options->verifyCheckpoint);
}

TEST(RunOptions, TextFlagsNeedTextData) {
  ParseResult r = parse({"m.plan", "--data", "text:c.txt", "--text-window", "8",
                                   "--text-min-count", "5", "--text-sample", "1e-4"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->textWindow, 8);
  EXPECT_EQ(r.options->textMinCount, 5);
  EXPECT_DOUBLE_EQ(r.options->textSample, 1e-4);
  ParseResult criteo = parse({"m.plan", "--data", "criteo:t.tsv", "--text-sample", "1e-3"});
  EXPECT_FALSE(criteo.options);
  EXPECT_EQ(criteo.message, "embrun: error: --text-window, --text-min-count and --text-sample "
                            "apply to text data (--data text:PATH), not to criteo\n");
  EXPECT_FALSE(parse({"m.plan", "--data", "text:c", "--text-sample", "1"}).options);
  EXPECT_FALSE(parse({"m.plan", "--data", "text:c", "--text-window", "0"}).options);
  EXPECT_FALSE(parse({"m.plan", "--data", "text:c", "--text-min-count", "0"}).options);
}

TEST(RunOptions, HelpAndVersionExitZero) {
  ParseResult help = parse({"--help"});
  EXPECT_FALSE(help.options);
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.message.find("--steps"), std::string::npos);
  for (const BackendInfo &b : knownBackends()) // --device lists the registry's backends
    EXPECT_NE(help.message.find(std::string(b.name) + ": " + b.summary), std::string::npos)
        << b.name;
  ParseResult version = parse({"--version"});
  EXPECT_EQ(version.exitCode, 0);
  EXPECT_NE(version.message.find("embrun"), std::string::npos);
}

TEST(DataSource, ParsesKinds) {
  DataSource s;
  EXPECT_FALSE(parseDataSource("movielens:u1.base", s));
  EXPECT_EQ(s.kind, "movielens");
  EXPECT_EQ(s.path, "u1.base");
  EXPECT_FALSE(parseDataSource("synthetic", s));
  EXPECT_EQ(s.kind, "synthetic");
  EXPECT_TRUE(parseDataSource("parquet:x", s)) << "an unknown kind";
  EXPECT_FALSE(parseDataSource("clicks/day-*.csv", s)); // read through the plan's schema
  EXPECT_EQ(s.kind, "schema");
  EXPECT_EQ(s.path, "clicks/day-*.csv");
  EXPECT_FALSE(parseDataSource("./odd:name.csv", s));
  EXPECT_EQ(s.path, "./odd:name.csv");
  EXPECT_FALSE(parseDataSource("mlperf_criteo:day_0.bin", s));
  EXPECT_EQ(s.kind, "mlperf_criteo");
  EXPECT_TRUE(parseDataSource("criteo", s)) << "criteo needs a path";
  EXPECT_TRUE(parseDataSource("synthetic:x", s));
}

TEST(RunOptions, EarlyStopping) {
  ParseResult r = parse({"m.plan", "--stop-at", "eval_auc>=0.8025", "--patience", "3"});
  ASSERT_TRUE(r.options) << r.message;
  ASSERT_TRUE(r.options->stopAt);
  EXPECT_EQ(r.options->stopAt->metric, "eval_auc");
  EXPECT_TRUE(r.options->stopAt->atLeast);
  EXPECT_EQ(r.options->stopAt->value, 0.8025);
  EXPECT_EQ(r.options->patience, 3);
  EXPECT_EQ(r.options->monitor, ""); // the trainer follows the target's metric
  r = parse({"m.plan", "--stop-at", "eval_loss<=0.44", "--monitor", "eval_rmse"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_FALSE(r.options->stopAt->atLeast);
  EXPECT_EQ(r.options->monitor, "eval_rmse");
  for (const char *bad : {"eval_auc>0.8", "auc>=0.8", "eval_auc>=", "eval_auc>=x", "eval_auc>=inf"})
    EXPECT_EQ(parse({"m.plan", "--stop-at", bad}).exitCode, 2) << bad;
  EXPECT_EQ(parse({"m.plan", "--monitor", "loss"}).exitCode, 2);
  EXPECT_EQ(parse({"m.plan", "--patience", "0"}).exitCode, 2);
}

TEST(RunOptions, ShuffleModes) {
  ParseResult r = parse({"m.plan", "--shuffle", "buffer:4096"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_TRUE(r.options->shuffle);
  EXPECT_EQ(r.options->shuffleWindow, 4096u);
  r = parse({"m.plan", "--shuffle", "none"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_FALSE(r.options->shuffle);
  r = parse({"m.plan"}); // the reader picks: the whole epoch when the data fits
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_TRUE(r.options->shuffle);
  EXPECT_EQ(r.options->shuffleWindow, 0u);
  r = parse({"m.plan", "--shuffle", "epoch"}); // the whole epoch, however large
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_TRUE(r.options->shuffle);
  EXPECT_EQ(r.options->shuffleWindow, embc::runtime::data::kWholeEpoch);
  for (const char *bad : {"buffer:1", "buffer:", "buffer:-3", "all", "buffer:1e3"})
    EXPECT_EQ(parse({"m.plan", "--shuffle", bad}).exitCode, 2) << bad;
  EXPECT_EQ(parse({"m.plan", "--shuffle", "none", "--no-shuffle"}).exitCode, 2);
}
