//===- ReporterTest.cpp - console formatting and the JSON-lines log -------===//
//
// Scripts depend on the log's exact JSON (parsed back here with nlohmann),
// people on the console text; both are checked, including how a terminal
// live line is rewritten and how non-finite values are written.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Metrics.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

using namespace embc::runtime;

namespace {

class ReporterTest : public ::testing::Test {
protected:
  void SetUp() override {
    logPath_ =
        (std::filesystem::temp_directory_path() /
         ("embc-reporter-" +
          std::string(
              ::testing::UnitTest::GetInstance()->current_test_info()->name()) +
          "-" + std::to_string(::getpid()) + ".jsonl"))
            .string();
  }
  void TearDown() override { std::filesystem::remove(logPath_); }

  std::vector<nlohmann::json> logLines() const {
    std::ifstream in(logPath_);
    std::vector<nlohmann::json> lines;
    for (std::string line; std::getline(in, line);)
      lines.push_back(nlohmann::json::parse(line));
    return lines;
  }

  std::string logPath_;
};

ReportRecord trainRecord(int64_t step, double loss) {
  return ReportRecord{
      "train",
      step,
      step / 100.0,
      {{"loss", loss}, {"samples_per_s", 1234567.0}, {"lr", 0.01}}};
}

TEST(MetricFormatTest, RatesBytesAndScores) {
  EXPECT_EQ(formatRate(950), "950.0");
  EXPECT_EQ(formatRate(12345), "12.3k");
  EXPECT_EQ(formatRate(1234567), "1.23M");
  EXPECT_EQ(formatRate(2.5e9), "2.50G");
  EXPECT_EQ(formatBytes(512.0 * 1024 * 1024), "512.0 MiB");
  EXPECT_EQ(formatBytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
  EXPECT_EQ(formatMetric("loss", 0.123456), "0.1235");
  EXPECT_EQ(formatMetric("eval_auc", 0.77), "0.7700");
  EXPECT_EQ(formatMetric("samples_per_s", 45600), "45.6k");
  EXPECT_EQ(formatMetric("peak_memory_bytes", 3.0 * 1024 * 1024), "3.0 MiB");
  EXPECT_EQ(formatMetric("lr", 0.001), "0.001");
  EXPECT_EQ(formatMetric("loss", NAN), "nan");
  EXPECT_EQ(formatMetric("loss", -INFINITY), "-inf");
}

TEST_F(ReporterTest, NonTtyPrintsOnePlainLinePerCall) {
  std::ostringstream console;
  Reporter reporter(console, /*consoleIsTty=*/false, "");
  reporter.progress(trainRecord(100, 0.5));
  reporter.progress(trainRecord(200, 0.25));
  EXPECT_EQ(
      console.str(),
      "train step 100 | epoch 1.00 | loss 0.5000 | samples/s 1.23M | lr 0.01\n"
      "train step 200 | epoch 2.00 | loss 0.2500 | samples/s 1.23M | lr "
      "0.01\n");
  EXPECT_EQ(console.str().find('\r'), std::string::npos);
}

TEST_F(ReporterTest, TtyRewritesOneLiveLine) {
  std::ostringstream console;
  {
    Reporter reporter(console, /*consoleIsTty=*/true, "");
    reporter.progress(
        ReportRecord{"train", 1, 0.5, {{"loss", 12.5}, {"extra", 1000}}});
    reporter.progress(ReportRecord{"train", 2, 0.5, {{"loss", 1}}});
    reporter.progress(ReportRecord{"eval", 2, 0.5, {{"auc", 0.75}}});
  }
  std::string first = "train step 1 | epoch 0.50 | loss 12.5000 | extra 1000";
  std::string second = "train step 2 | epoch 0.50 | loss 1.0000";
  // The second line is padded to erase what is left of the longer first one;
  // the eval line ends the live line and stays.
  EXPECT_EQ(console.str(), "\r" + first + "\r" + second +
                               std::string(first.size() - second.size(), ' ') +
                               "\neval step 2 | epoch 0.50 | auc 0.7500\n");
}

TEST_F(ReporterTest, DestructorEndsTheLiveLine) {
  std::ostringstream console;
  {
    Reporter reporter(console, true, "");
    reporter.progress(ReportRecord{"train", 1, 0, {}});
  }
  EXPECT_EQ(console.str(), "\rtrain step 1 | epoch 0.00\n");
}

TEST_F(ReporterTest, RecordsParseBackAsJsonLines) {
  std::ostringstream console;
  {
    Reporter reporter(console, false, logPath_);
    reporter.record(trainRecord(100, 0.5));
    reporter.record(
        ReportRecord{"eval", 100, 1.0, {{"auc", 0.75}, {"loss", 0.4}}});
  }
  EXPECT_EQ(console.str(), "");
  std::vector<nlohmann::json> lines = logLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            nlohmann::json::parse(
                R"({"event":"train","step":100,"epoch":1.0,"loss":0.5,)"
                R"("lr":0.01,"samples_per_s":1234567.0})"));
  EXPECT_EQ(lines[1]["event"], "eval");
  EXPECT_EQ(lines[1]["auc"], 0.75);
  EXPECT_EQ(lines[1]["step"].get<int64_t>(), 100);
  // Each line starts with the event, so `grep '"event":"eval"'` works.
  std::ifstream in(logPath_);
  std::string firstLine;
  std::getline(in, firstLine);
  EXPECT_EQ(firstLine.rfind("{\"event\":\"train\",\"step\":100,", 0), 0u)
      << firstLine;
}

TEST_F(ReporterTest, NonFiniteValuesAreWrittenAsNull) {
  std::ostringstream console;
  {
    Reporter reporter(console, false, logPath_);
    reporter.record(
        ReportRecord{"eval",
                     5,
                     NAN,
                     {{"auc", NAN}, {"loss", INFINITY}, {"rmse", -INFINITY}}});
  }
  std::vector<nlohmann::json> lines = logLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0]["auc"].is_null());
  EXPECT_TRUE(lines[0]["loss"].is_null());
  EXPECT_TRUE(lines[0]["rmse"].is_null());
  EXPECT_TRUE(lines[0]["epoch"].is_null());
  EXPECT_EQ(lines[0]["step"], 5);
}

TEST_F(ReporterTest, SummaryEndsLiveLinePrintsAndLogs) {
  std::ostringstream console;
  {
    Reporter reporter(console, true, logPath_);
    reporter.progress(ReportRecord{"train", 10, 1, {{"loss", 0.5}}});
    reporter.summary(
        ReportRecord{"train",
                     20,
                     2,
                     {{"loss", 0.25},
                      {"auc", 0.8125},
                      {"samples_per_s", 45600},
                      {"peak_memory_bytes", 1.5 * 1024 * 1024 * 1024}}});
  }
  EXPECT_EQ(console.str(), "\rtrain step 10 | epoch 1.00 | loss 0.5000\n"
                           "summary: step 20, epoch 2.00\n"
                           "  loss       0.2500\n"
                           "  auc        0.8125\n"
                           "  samples/s  45.6k\n"
                           "  peak mem   1.50 GiB\n");
  std::vector<nlohmann::json> lines = logLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["event"], "summary");
  EXPECT_EQ(lines[0]["step"], 20);
  EXPECT_EQ(lines[0]["peak_memory_bytes"], 1.5 * 1024 * 1024 * 1024);
}

TEST_F(ReporterTest, LogIsTruncatedWhenReopened) {
  std::ostringstream console;
  {
    Reporter reporter(console, false, logPath_);
    reporter.record(trainRecord(1, 1.0));
    reporter.record(trainRecord(2, 1.0));
  }
  {
    Reporter reporter(console, false, logPath_);
    reporter.record(trainRecord(3, 1.0));
  }
  std::vector<nlohmann::json> lines = logLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["step"], 3);
}

TEST_F(ReporterTest, UnopenableLogNamesThePath) {
  std::ostringstream console;
  std::string bad = "/nonexistent-embc-dir/metrics.jsonl";
  try {
    Reporter reporter(console, false, bad);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(
        std::string(e.what()).find("cannot open metrics log '" + bad + "'"),
        std::string::npos)
        << e.what();
  }
}

TEST_F(ReporterTest, ReservedValueNamesAreRefused) {
  std::ostringstream console;
  Reporter reporter(console, false, logPath_);
  EXPECT_THROW(reporter.record(ReportRecord{"train", 1, 0, {{"step", 3}}}),
               std::invalid_argument);
}

} // namespace
