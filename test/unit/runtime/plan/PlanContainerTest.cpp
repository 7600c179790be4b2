//===- PlanContainerTest.cpp - the binary header refuses damaged files ----===//
//
// Each header check with its exact message, then the two exhaustive-ish
// sweeps: every truncation of a valid plan and random single-byte flips
// anywhere in it are refused, each by the check that guards the damaged
// bytes. No byte of a plan file is ignored.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <random>

using namespace embc::runtime;
using namespace embc::runtime::testing;

namespace {

std::string validBytes() { return serializePlan(samplePlan()); }

bool startsWith(const std::string &text, const std::string &prefix) {
  return text.rfind(prefix, 0) == 0;
}

} // namespace

TEST(PlanContainer, WrongMagic) {
  std::string bytes = validBytes();
  bytes[3] = 'X';
  EXPECT_EQ(errorFor(bytes), "not an embc plan: bad magic");
  EXPECT_EQ(errorFor(std::string("{\"format\": \"embc.plan\"}")), "not an embc plan: bad magic");
  // A short file of another kind is foreign, not truncated.
  EXPECT_EQ(errorFor(std::string("EMBX")), "not an embc plan: bad magic");
}

TEST(PlanContainer, OtherFormatVersion) {
  Plan plan = samplePlan();
  plan.version = 13; // header and body both say 13, checksum valid
  EXPECT_EQ(errorFor(serializePlan(plan)),
            "plan format version 13, this embrun reads version 12: recompile the model with a "
            "matching embc");
  // A header that says 12 over a body that says 13 is refused by the body.
  EXPECT_EQ(errorFor(containerWith(planToJson(plan).dump(), 12)),
            "version: plan format version 13, this embrun reads version 12: recompile the model "
            "with a matching embc");
  // An older plan (version 11, before tables' placement) and a zeroed header
  // as well.
  EXPECT_EQ(errorFor(containerWith(planToJson(samplePlan()).dump(), 11)),
            "plan format version 11, this embrun reads version 12: recompile the model with a "
            "matching embc");
  EXPECT_EQ(errorFor(containerWith(planToJson(samplePlan()).dump(), 0)),
            "plan format version 0, this embrun reads version 12: recompile the model with a "
            "matching embc");
}

TEST(PlanContainer, NonZeroFlags) {
  std::string bytes = validBytes();
  bytes[13] = 0x01; // flags = 0x100
  EXPECT_EQ(errorFor(bytes),
            "unknown header flags 0x0000000000000100: this embrun reads plans with flags 0");
}

TEST(PlanContainer, Truncated) {
  std::string bytes = validBytes();
  size_t body = bytes.size() - 32;
  EXPECT_EQ(errorFor(std::string()), "truncated: expected a 32-byte header, file has 0 bytes");
  EXPECT_EQ(errorFor(bytes.substr(0, 5)), "truncated: expected a 32-byte header, file has 5 bytes");
  EXPECT_EQ(errorFor(bytes.substr(0, 8)), "truncated: expected a 32-byte header, file has 8 bytes");
  EXPECT_EQ(errorFor(bytes.substr(0, 20)),
            "truncated: expected a 32-byte header, file has 20 bytes");
  EXPECT_EQ(errorFor(bytes.substr(0, 31)),
            "truncated: expected a 32-byte header, file has 31 bytes");
  EXPECT_EQ(errorFor(bytes.substr(0, 32)),
            "truncated: expected " + std::to_string(body) + " body bytes, file has 0");
  EXPECT_EQ(errorFor(bytes.substr(0, 32 + body / 2)),
            "truncated: expected " + std::to_string(body) + " body bytes, file has " +
                std::to_string(body / 2));
  EXPECT_EQ(errorFor(bytes.substr(0, bytes.size() - 1)),
            "truncated: expected " + std::to_string(body) + " body bytes, file has " +
                std::to_string(body - 1));
}

TEST(PlanContainer, FlippedBodyByte) {
  std::string bytes = validBytes();
  bytes[bytes.size() / 2] ^= 0x01;
  EXPECT_TRUE(startsWith(errorFor(bytes), "checksum mismatch: the plan is corrupt (header says 0x"))
      << errorFor(bytes);
}

TEST(PlanContainer, FlippedChecksumByte) {
  std::string bytes = validBytes();
  bytes[24] ^= 0x80;
  EXPECT_TRUE(startsWith(errorFor(bytes), "checksum mismatch: the plan is corrupt"));
}

TEST(PlanContainer, TrailingBytes) {
  std::string bytes = validBytes();
  size_t body = bytes.size() - 32;
  EXPECT_EQ(errorFor(bytes + '\0'),
            "trailing bytes: 1 bytes after the " + std::to_string(body) + "-byte body");
  EXPECT_EQ(errorFor(bytes + bytes),
            "trailing bytes: " + std::to_string(bytes.size()) + " bytes after the " +
                std::to_string(body) + "-byte body");
}

TEST(PlanContainer, InvalidJsonBody) {
  std::string error = errorFor(containerWith("{\"format\": \"embc.plan\", "));
  EXPECT_TRUE(startsWith(error, "invalid JSON body: [json.exception.parse_error.101]")) << error;
  EXPECT_EQ(errorFor(containerWith("[1, 2]")), "the body: expected an object, got array");
  EXPECT_TRUE(startsWith(errorFor(containerWith("")), "invalid JSON body: "));
  // Not UTF-8 inside a string.
  EXPECT_TRUE(startsWith(errorFor(containerWith("{\"model\": \"\xff\"}")), "invalid JSON body: "));
  // A number no double holds: nlohmann's out_of_range, refused the same way.
  EXPECT_TRUE(startsWith(errorFor(containerWith("{\"arena_bytes\": 1e999}")), "invalid JSON body: "));
}

TEST(PlanContainer, EveryTruncationIsRefused) {
  std::string bytes = validBytes();
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::string error = errorFor(bytes.substr(0, length));
    ASSERT_TRUE(startsWith(error, "truncated: ")) << "length " << length << ": " << error;
  }
}

TEST(PlanContainer, RandomByteFlipsAreRefusedByTheirOwnCheck) {
  const std::string bytes = validBytes();
  std::mt19937 random(20240601);
  // Every header byte once, then 200 flips anywhere (mostly the body).
  for (int trial = 0; trial < 32 + 200; ++trial) {
    std::string damaged = bytes;
    size_t at = trial < 32 ? trial : random() % damaged.size();
    damaged[at] = static_cast<char>(damaged[at] ^ (1 + random() % 255));
    std::string error = errorFor(damaged);
    SCOPED_TRACE("flip at byte " + std::to_string(at) + ": " + error);
    if (at < 8)
      EXPECT_EQ(error, "not an embc plan: bad magic");
    else if (at < 12)
      EXPECT_TRUE(startsWith(error, "plan format version "));
    else if (at < 16)
      EXPECT_TRUE(startsWith(error, "unknown header flags "));
    else if (at < 24)
      EXPECT_TRUE(startsWith(error, "truncated: ") || startsWith(error, "trailing bytes: "));
    else
      EXPECT_TRUE(startsWith(error, "checksum mismatch: the plan is corrupt"));
  }
}
