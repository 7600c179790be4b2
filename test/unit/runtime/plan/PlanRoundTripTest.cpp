//===- PlanRoundTripTest.cpp - plans survive serialisation exactly --------===//
//
// A plan written and read back is the same plan, field by field, and writing
// it again gives the same bytes (plans are compared and cached by content).
// Also the small vocabulary functions, the JSON schema's key names (the
// contract with embc --emit=plan-json and docs/plan-format.md) and the file
// helpers.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <unistd.h>

using namespace embc::runtime;
using namespace embc::runtime::testing;
using nlohmann::json;

TEST(PlanVocabulary, DTypeNamesAndSizes) {
  EXPECT_STREQ(dtypeName(DType::F32), "f32");
  EXPECT_STREQ(dtypeName(DType::F64), "f64");
  EXPECT_STREQ(dtypeName(DType::I64), "i64");
  EXPECT_EQ(dtypeBytes(DType::F32), 4);
  EXPECT_EQ(dtypeBytes(DType::F64), 8);
  EXPECT_EQ(dtypeBytes(DType::I64), 8);
}

TEST(PlanVocabulary, RoleNames) {
  EXPECT_STREQ(roleName(BufferRole::Table), "table");
  EXPECT_STREQ(roleName(BufferRole::Param), "param");
  EXPECT_STREQ(roleName(BufferRole::Grad), "grad");
  EXPECT_STREQ(roleName(BufferRole::OptimizerState), "optimizer_state");
  EXPECT_STREQ(roleName(BufferRole::Input), "input");
  EXPECT_STREQ(roleName(BufferRole::Activation), "activation");
  EXPECT_STREQ(roleName(BufferRole::Workspace), "workspace");
}

TEST(PlanVocabulary, OutOfRangeEnumValuesThrow) {
  EXPECT_THROW(dtypeName(static_cast<DType>(7)), std::invalid_argument);
  EXPECT_THROW(dtypeBytes(static_cast<DType>(7)), std::invalid_argument);
  EXPECT_THROW(roleName(static_cast<BufferRole>(42)), std::invalid_argument);
}

TEST(PlanMemory, BytesWithRoleSumsEachRole) {
  Plan plan = samplePlan();
  // Table 10x8 f32; grads: 8 i64 rows + 8x8 f32 values + 9 f32; states: 10 + 9 + 9 f32.
  EXPECT_EQ(plan.bytesWithRole(BufferRole::Table), 320);
  EXPECT_EQ(plan.bytesWithRole(BufferRole::Grad), 64 + 256 + 36);
  EXPECT_EQ(plan.bytesWithRole(BufferRole::OptimizerState), 40 + 36 + 36);
  EXPECT_EQ(plan.bytesWithRole(BufferRole::Param), 36);
  EXPECT_EQ(plan.bytesWithRole(BufferRole::Input), 16 + 64 + 40 + 16);
  EXPECT_EQ(plan.bytesWithRole(BufferRole::Activation), 128 + 144 + 16 + 8 + 16 + 128);
  EXPECT_EQ(plan.bytesWithRole(BufferRole::Workspace), 256);
  EXPECT_EQ(Plan().bytesWithRole(BufferRole::Table), 0);
}

TEST(PlanJson, UsesTheDocumentedSnakeCaseSchema) {
  json body = planToJson(samplePlan());
  EXPECT_EQ(body["format"], "embc.plan");
  EXPECT_EQ(body["version"], kPlanVersion);
  EXPECT_EQ(body["model"], "tiny_dlrm");
  EXPECT_EQ(body["config"]["batch_size"], 4);
  EXPECT_EQ(body["config"]["grad_accumulation"], 2);
  EXPECT_EQ(body["config"]["lr_schedule"], "cosine");
  EXPECT_EQ(body["config"]["seed"], (uint64_t(1) << 63) + 5);
  EXPECT_EQ(body["buffers"][kTable]["role"], "table");
  EXPECT_EQ(body["buffers"][kTableAccumulator]["role"], "optimizer_state");
  EXPECT_EQ(body["buffers"][kIdsInput]["dtype"], "i64");
  EXPECT_EQ(body["buffers"][kIdsInput]["dynamic"], true);
  EXPECT_EQ(body["buffers"][kLoss]["shape"], json::array());
  EXPECT_EQ(body["params"][0]["optimizer"]["weight_decay_mode"], "global");
  EXPECT_EQ(body["params"][0]["optimizer"]["initial_accumulator"], 0.2);
  EXPECT_EQ(body["tables"][0]["grad_rows"], kTableGradRows);
  EXPECT_EQ(body["tables"][0]["grad_values"], kTableGradValues);
  EXPECT_EQ(body["inputs"][3]["label_kind"], "binary");
  EXPECT_EQ(body["step"][2]["attrs"]["compute"], "bf16");
  EXPECT_EQ(body["forward_kernels"], 3);
  EXPECT_EQ(body["loss_buffer"], kLoss);
  EXPECT_EQ(body["prediction_buffer"], kLogits);
  EXPECT_EQ(body["memory"]["arena_bytes"], body["arena_bytes"]);
  EXPECT_EQ(body["memory"]["by_role"]["table"], 320);
  EXPECT_EQ(body["memory"]["by_role"]["workspace"], 256);
  EXPECT_EQ(body["memory"]["by_role"].size(), 7u);
  std::vector<std::string> keys;
  for (auto it = body.begin(); it != body.end(); ++it)
    keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "arena_bytes", "buffers", "compiler", "config", "format",
                      "forward_kernels", "inputs", "loss_buffer", "memory", "model", "notes",
                      "packs", "params", "prediction_buffer", "schedule", "step", "table_batches", "tables",
                      "update", "version"}));
}

TEST(PlanJson, RefusesNonFiniteNumbersNamingTheField) {
  Plan plan = samplePlan();
  plan.tables[0].optimizer.lr = std::numeric_limits<double>::quiet_NaN();
  try {
    planToJson(plan);
    FAIL() << "a NaN learning rate was serialised";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("tables[0].optimizer.lr: "), std::string::npos)
        << e.what();
  }
  plan = samplePlan();
  plan.config.gradClipNorm = INFINITY;
  EXPECT_THROW(serializePlan(plan), std::invalid_argument);
}

TEST(PlanRoundTrip, EveryFieldSurvives) {
  Plan plan = samplePlan();
  std::string bytes = serializePlan(plan);
  std::string error;
  std::optional<Plan> back = deserializePlan(bytes, error);
  ASSERT_TRUE(back) << error;
  EXPECT_TRUE(error.empty());
  expectSamePlan(plan, *back);
  EXPECT_EQ(serializePlan(*back), bytes) << "re-serialising changed the bytes";
}

// The model's data schema (format v11): written in the normal form of
// data::dataSchemaToJson, read back by the one schema parser, whose errors
// become plan paths.
TEST(PlanRoundTrip, TheDataSchemaSurvives) {
  const json written = json::parse(R"({
    "format": "csv", "header": true,
    "columns": [
      {"name": "label", "type": "label", "field": 0},
      {"name": "price", "type": "dense", "field": "price", "clip": [0, null], "log1p": true,
       "missing": -1},
      {"name": "shop", "type": "categorical", "field": 2, "encoding": "hex"},
      {"name": "tags", "type": "categorical", "field": 3, "encoding": "vocab",
       "vocab_file": "tags.txt", "separator": "|"},
      {"name": "bag", "type": "categorical", "field": 4, "separator": ";", "weighted": true}
    ]})");
  Plan plan = samplePlan();
  plan.dataSchema = data::parseDataSchema(written, "/data");
  const json normal = data::dataSchemaToJson(*plan.dataSchema);
  EXPECT_EQ(normal["delimiter"], ",");
  EXPECT_EQ(normal["columns"][1]["clip"], json::parse("[0.0, null]"));
  EXPECT_EQ(normal["columns"][1]["field"], "price");
  EXPECT_EQ(planToJson(plan)["data"], normal);

  std::string bytes = serializePlan(plan);
  std::string error;
  std::optional<Plan> back = deserializePlan(bytes, error);
  ASSERT_TRUE(back) << error;
  expectSamePlan(plan, *back);
  ASSERT_TRUE(back->dataSchema);
  EXPECT_EQ(data::dataSchemaToJson(*back->dataSchema), normal);
  EXPECT_EQ(back->dataSchema->columns[3].vocabFile, "tags.txt");
  EXPECT_TRUE(back->dataSchema->columns[4].weighted);
  EXPECT_EQ(serializePlan(*back), bytes) << "re-serialising changed the bytes";
  // Without a schema there is no `data` (UsesTheDocumentedSnakeCaseSchema).
  EXPECT_FALSE(planToJson(samplePlan()).contains("data"));

  // What the schema parser refuses, the plan reader refuses at the same place.
  json body = planToJson(plan);
  body["data"]["columns"][2]["encoding"] = "base64";
  EXPECT_FALSE(deserializePlan(containerWith(body.dump()), error));
  EXPECT_EQ(error, "data.columns[2].encoding: 'encoding' must be int, hex, hash or vocab, got "
                   "'base64'");
  body = planToJson(plan);
  body["data"]["columns"][1]["clip"][0] = "zero";
  EXPECT_FALSE(deserializePlan(containerWith(body.dump()), error));
  EXPECT_EQ(error.rfind("data.columns[1].clip[0]: a clip bound must be", 0), 0u) << error;
  body = planToJson(plan);
  body["data"]["rows"] = 3;
  EXPECT_FALSE(deserializePlan(containerWith(body.dump()), error));
  EXPECT_EQ(error.rfind("data.rows: unknown field 'rows'", 0), 0u) << error;
  body["data"] = "csv";
  EXPECT_FALSE(deserializePlan(containerWith(body.dump()), error));
  EXPECT_EQ(error, "data: expected an object, got a string");

  // The compiler's passes (no exceptions) read it through parseDataSchemaText.
  EXPECT_TRUE(parseDataSchemaText(normal.dump(), error));
  EXPECT_FALSE(parseDataSchemaText("{\"format\": \"xml\"}", error));
  EXPECT_EQ(error.rfind("at /data/format: 'format' must be csv, tsv, npy or binary", 0), 0u)
      << error;
  EXPECT_FALSE(parseDataSchemaText("{", error));
  EXPECT_EQ(error, "not JSON");
}

TEST(PlanRoundTrip, SerialisationIsDeterministic) {
  EXPECT_EQ(serializePlan(samplePlan()), serializePlan(samplePlan()));
  // The attrs' key order as built does not matter either.
  Plan a = samplePlan(), b = samplePlan();
  a.step[0].attrs = json::object();
  a.step[0].attrs["z"] = 1;
  a.step[0].attrs["a"] = 2;
  b.step[0].attrs = json::object();
  b.step[0].attrs["a"] = 2;
  b.step[0].attrs["z"] = 1;
  EXPECT_EQ(serializePlan(a), serializePlan(b));
}

TEST(PlanRoundTrip, HeaderLayoutIsLittleEndian) {
  std::string bytes = serializePlan(samplePlan());
  ASSERT_GT(bytes.size(), 32u);
  EXPECT_EQ(bytes.substr(0, 8), "EMBCPLAN");
  EXPECT_EQ(bytes.substr(8, 8), std::string("\x0c\0\0\0\0\0\0\0", 8)); // version 12, flags 0
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= uint64_t(static_cast<unsigned char>(bytes[16 + i])) << (8 * i);
  EXPECT_EQ(length, bytes.size() - 32);
  EXPECT_EQ(bytes[32], '{');
  EXPECT_EQ(bytes.back(), '}');
  EXPECT_EQ(bodyOf(bytes), planToJson(samplePlan()));
}

TEST(PlanRoundTrip, ADefaultPlanWithTheMinimumIsValid) {
  // Only what validation requires: a config, a label input, the loss of
  // the label against itself (a plan reads something and runs something).
  Plan plan;
  plan.config.batchSize = 1;
  plan.config.loss = embc::runtime::LossKind::Mse;
  Buffer loss;
  loss.name = "loss";
  loss.shape = {1};
  loss.bytes = 4;
  plan.buffers.push_back(loss);
  Buffer label = loss;
  label.name = "label";
  label.role = BufferRole::Input;
  label.offset = 64;
  plan.buffers.push_back(label);
  Input input;
  input.feature = "y";
  input.role = InputRole::Label;
  input.buffer = 1;
  input.labelKind = LabelKind::Real;
  plan.inputs.push_back(input);
  Kernel k;
  k.op = "loss";
  k.inputs = {1, 1};
  k.outputs = {0};
  k.attrs = {{"kind", "mse"}};
  plan.step.push_back(k);
  plan.lossBuffer = plan.predictionBuffer = 0;
  plan.arenaBytes = 128;
  std::string error;
  std::optional<Plan> back = deserializePlan(serializePlan(plan), error);
  ASSERT_TRUE(back) << error;
  expectSamePlan(plan, *back);
}

namespace {

/// A fresh directory under the system temp dir, removed afterwards.
class PlanFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("embc-plan-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
};

} // namespace

TEST_F(PlanFileTest, WritesAndReadsBack) {
  std::string path = (dir / "model.plan").string();
  std::string error;
  ASSERT_TRUE(writePlanFile(path, samplePlan(), error)) << error;
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::ifstream in(path, std::ios::binary);
  std::string onDisk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(onDisk, serializePlan(samplePlan()));

  std::optional<Plan> back = readPlanFile(path, error);
  ASSERT_TRUE(back) << error;
  expectSamePlan(samplePlan(), *back);
}

TEST_F(PlanFileTest, WriteReplacesAnExistingFile) {
  std::string path = (dir / "model.plan").string();
  std::ofstream(path) << "an older, longer file that must not survive in part";
  std::string error;
  ASSERT_TRUE(writePlanFile(path, samplePlan(), error)) << error;
  ASSERT_TRUE(readPlanFile(path, error)) << error;
}

// embc -o writes PATH.tmp then renames it: a link planted there is
// replaced, never written through.
TEST_F(PlanFileTest, WriteDoesNotFollowALinkAtItsTempPath) {
  const std::string path = (dir / "model.plan").string();
  const std::string victim = (dir / "victim.txt").string();
  std::ofstream(victim) << "must survive";
  std::filesystem::create_symlink(victim, path + ".tmp");
  std::string error;
  ASSERT_TRUE(writePlanFile(path, samplePlan(), error)) << error;
  std::ifstream in(victim);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "must survive");
  ASSERT_TRUE(readPlanFile(path, error)) << error;
}

// Reading never blocks on a FIFO, never reads a device without end and
// never allocates for a file larger than any plan.
TEST_F(PlanFileTest, ReadRefusesWhatIsNotARegularFileOfPlanSize) {
  std::string error;
  EXPECT_FALSE(readPlanFile("/dev/zero", error));
  EXPECT_EQ(error, "/dev/zero: is not a regular file (a device, FIFO or socket), not a plan file");
  const std::string fifo = (dir / "fifo.plan").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(readPlanFile(fifo, error)); // would block in open() if it tried
  EXPECT_NE(error.find("is not a regular file"), std::string::npos) << error;
  const std::string huge = (dir / "huge.plan").string();
  std::ofstream(huge).close();
  std::filesystem::resize_file(huge, kMaxPlanFileBytes + 1); // sparse: costs no disk
  EXPECT_FALSE(readPlanFile(huge, error));
  EXPECT_EQ(error, huge + ": " + std::to_string(kMaxPlanFileBytes + 1) +
                       " bytes, more than any plan (256 MiB)");
}

TEST_F(PlanFileTest, RefusesToWriteAnInvalidPlan) {
  std::string path = (dir / "bad.plan").string();
  Plan plan = samplePlan();
  plan.buffers[kPooled].offset += 8;
  std::string error;
  EXPECT_FALSE(writePlanFile(path, plan, error));
  EXPECT_EQ(error, path + ": refusing to write an invalid plan: buffers[12].offset: " +
                       std::to_string(plan.buffers[kPooled].offset) +
                       " is not a multiple of 64");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(PlanFileTest, WriteErrorsNameThePath) {
  std::string path = (dir / "no-such-dir" / "x.plan").string();
  std::string error;
  EXPECT_FALSE(writePlanFile(path, samplePlan(), error));
  EXPECT_EQ(error.rfind(path + ".tmp: cannot create: ", 0), 0u) << error;
}

TEST_F(PlanFileTest, ReadErrorsNameThePath) {
  std::string missing = (dir / "missing.plan").string();
  std::string error;
  EXPECT_FALSE(readPlanFile(missing, error));
  EXPECT_EQ(error, missing + ": cannot open: No such file or directory");

  EXPECT_FALSE(readPlanFile(dir.string(), error));
  EXPECT_EQ(error, dir.string() + ": is a directory, not a plan file");

  std::string corrupt = (dir / "corrupt.plan").string();
  std::string bytes = serializePlan(samplePlan());
  bytes[40] ^= 0x20;
  std::ofstream(corrupt, std::ios::binary) << bytes;
  EXPECT_FALSE(readPlanFile(corrupt, error));
  EXPECT_EQ(error.rfind(corrupt + ": checksum mismatch: the plan is corrupt", 0), 0u) << error;

  std::string empty = (dir / "empty.plan").string();
  std::ofstream(empty, std::ios::binary).flush();
  EXPECT_FALSE(readPlanFile(empty, error));
  EXPECT_EQ(error, empty + ": truncated: expected a 32-byte header, file has 0 bytes");
}

TEST(PlanRoundTrip, BodyMutationsWithAValidChecksumNeverCrash) {
  // Past the checksum, the JSON reader and the validator see whatever bytes
  // a buggy writer could produce. Flip bytes of the body, re-checksum, and
  // require either a message or a plan that round-trips (a flip inside a
  // name or a note can leave a valid plan).
  std::string body = serializePlan(samplePlan()).substr(32);
  std::mt19937 random(1234);
  int rejected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string mutated = body;
    size_t at = random() % mutated.size();
    mutated[at] = static_cast<char>(mutated[at] ^ (1 + random() % 255));
    std::string error;
    std::optional<Plan> plan = deserializePlan(containerWith(mutated), error);
    if (!plan) {
      EXPECT_FALSE(error.empty()) << "trial " << trial;
      ++rejected;
      continue;
    }
    std::string again;
    EXPECT_TRUE(deserializePlan(serializePlan(*plan), again)) << again;
  }
  EXPECT_GT(rejected, 200) << "most body flips should break JSON, a type or a check";
}
