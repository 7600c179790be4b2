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
  EXPECT_TRUE(parseDataSource("parquet:x", s));
  EXPECT_TRUE(parseDataSource("criteo", s)) << "criteo needs a path";
  EXPECT_TRUE(parseDataSource("synthetic:x", s));
}
