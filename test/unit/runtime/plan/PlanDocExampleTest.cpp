//===- PlanDocExampleTest.cpp - the documented example is a valid plan ----===//
//
// docs/plan-format.md shows one complete body. Reading it here keeps the
// documentation honest: if the format changes and the example does not, this
// test fails instead of a reader copying a stale example.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace embc::runtime;
using namespace embc::runtime::testing;
using nlohmann::json;

namespace {

/// The first ```json block after the "## Example" heading, or "".
std::string documentedExample() {
  std::ifstream in(EMBC_SOURCE_DIR "/docs/plan-format.md");
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  size_t section = doc.find("\n## Example\n");
  if (section == std::string::npos)
    return "";
  size_t open = doc.find("```json\n", section);
  if (open == std::string::npos)
    return "";
  open += 8;
  size_t close = doc.find("\n```", open);
  return close == std::string::npos ? "" : doc.substr(open, close - open);
}

} // namespace

TEST(PlanDocExample, IsAValidPlanThatRoundTrips) {
  std::string example = documentedExample();
  ASSERT_FALSE(example.empty()) << "no ```json block under '## Example' in docs/plan-format.md";
  json body = json::parse(example);
  std::string error;
  // As indented in the doc, and as the writer would write it.
  std::optional<Plan> plan = deserializePlan(containerWith(example), error);
  ASSERT_TRUE(plan) << error;
  EXPECT_EQ(planToJson(*plan), body);
  EXPECT_EQ(serializePlan(*plan), containerWith(body.dump()));
  EXPECT_EQ(plan->tables.size(), 1u);
  EXPECT_EQ(plan->arenaBytes, 1024);
}
