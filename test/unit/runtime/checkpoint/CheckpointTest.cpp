//===- CheckpointTest.cpp - checkpoint directories, restore, export -------===//
//
// What resume depends on: a saved checkpoint restores every tensor exactly,
// a mismatching one is refused with a message naming the tensor and both
// shapes, and a failed save never destroys the previous checkpoint.
//
//===----------------------------------------------------------------------===//

#include "ErrorText.h"
#include "TestFiles.h"

#include "embc/runtime/checkpoint/Checkpoint.h"
#include "embc/runtime/checkpoint/CheckpointRestore.h"

#include <cstdlib>
#include <filesystem>

#include <sys/wait.h>

using namespace embc::runtime::checkpoint;
using namespace embc::test;

namespace {

using CheckpointTest = ScratchDirTest;

/// A small model's worth of state: a dense param, a table and its
/// optimizer state, as the executor would hand them over.
struct ModelState {
  std::vector<float> topWeights = {0.5f, -0.25f, 1.0f, 2.0f, -3.0f, 0.125f};
  std::vector<double> table = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<int64_t> counters = {11, 12};

  CheckpointContent content(const std::string &step) const {
    return CheckpointContent{{{"model", "tiny"}, {"step", step}, {"seed", "7"}},
                             {{"param/top_w0",
                               "F32",
                               {2, 3},
                               topWeights.data(),
                               topWeights.size() * sizeof(float)},
                              {"table/t_C1",
                               "F64",
                               {4, 2},
                               table.data(),
                               table.size() * sizeof(double)},
                              {"state/t_C1/0",
                               "I64",
                               {2},
                               counters.data(),
                               counters.size() * sizeof(int64_t)}}};
  }
};

TEST_F(CheckpointTest, SaveLoadRestoreRoundTrip) {
  ModelState saved;
  std::string dir = path("nested/run/ckpt");
  saveCheckpoint(dir, saved.content("1200"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/checkpoint.safetensors"));

  SafetensorsFile file = loadCheckpoint(dir);
  EXPECT_EQ(file.metadata.at("format"), "embc.checkpoint/v1");
  EXPECT_EQ(file.metadata.at("step"), "1200");
  EXPECT_EQ(file.metadata.at("seed"), "7");

  std::vector<float> topWeights(6);
  std::vector<double> table(8);
  std::vector<int64_t> counters(2);
  restoreTensor(file, "param/top_w0", "F32", {2, 3}, topWeights.data(),
                topWeights.size() * sizeof(float));
  restoreTensor(file, "table/t_C1", "F64", {4, 2}, table.data(),
                table.size() * sizeof(double));
  restoreTensor(file, "state/t_C1/0", "I64", {2}, counters.data(),
                counters.size() * sizeof(int64_t));
  EXPECT_EQ(topWeights, saved.topWeights);
  EXPECT_EQ(table, saved.table);
  EXPECT_EQ(counters, saved.counters);
}

TEST_F(CheckpointTest, SavingAgainReplacesTheCheckpoint) {
  ModelState state;
  std::string dir = path("ckpt");
  saveCheckpoint(dir, state.content("100"));
  state.table[3] = -99;
  saveCheckpoint(dir, state.content("200"));

  SafetensorsFile file = loadCheckpoint(dir);
  EXPECT_EQ(file.metadata.at("step"), "200");
  std::vector<double> table(8);
  restoreTensor(file, "table/t_C1", "F64", {4, 2}, table.data(), 64);
  EXPECT_EQ(table[3], -99);
  EXPECT_FALSE(std::filesystem::exists(dir + "/checkpoint.safetensors.tmp"));
}

TEST_F(CheckpointTest, RestoreChecksShapeDtypePresenceAndSize) {
  ModelState state;
  std::string dir = path("ckpt");
  saveCheckpoint(dir, state.content("1"));
  SafetensorsFile file = loadCheckpoint(dir);
  std::vector<double> buffer(10000 * 16);

  EXPECT_EQ(checkpointErrorOf([&] {
              restoreTensor(file, "table/t_C1", "F64", {10000, 16},
                            buffer.data(), buffer.size() * sizeof(double));
            }),
            "checkpoint tensor 'table/t_C1' has shape [4, 2], the plan "
            "expects [10000, 16]");
  EXPECT_EQ(
      checkpointErrorOf([&] {
        restoreTensor(file, "table/t_C1", "F32", {4, 2}, buffer.data(), 32);
      }),
      "checkpoint tensor 'table/t_C1' has dtype F64, the plan expects F32");
  EXPECT_EQ(
      checkpointErrorOf([&] {
        restoreTensor(file, "table/t_C2", "F64", {4, 2}, buffer.data(), 64);
      }),
      "checkpoint has no tensor 'table/t_C2', which the plan expects");
  EXPECT_CONTAINS(
      checkpointErrorOf([&] {
        restoreTensor(file, "table/t_C1", "F64", {4, 2}, buffer.data(), 32);
      }),
      "holds 64 bytes, but the destination is 32 bytes");
}

TEST_F(CheckpointTest, RefusesSafetensorsThatAreNotCheckpoints) {
  std::string dir = path("foreign");
  std::filesystem::create_directories(dir);
  std::vector<float> values = {1, 2};
  std::string file = dir + "/checkpoint.safetensors";

  writeSafetensors(file, {{"w", "F32", {2}, values.data(), 8}}, {});
  EXPECT_EQ(checkpointErrorOf([&] { loadCheckpoint(dir); }),
            file + " is not an embc checkpoint (format '', expected "
                   "'embc.checkpoint/v1')");

  writeSafetensors(file, {{"w", "F32", {2}, values.data(), 8}},
                   {{"format", "embc.checkpoint/v0"}});
  EXPECT_CONTAINS(checkpointErrorOf([&] { loadCheckpoint(dir); }),
                  "(format 'embc.checkpoint/v0'");
}

TEST_F(CheckpointTest, RefusesToSaveUnderAnotherFormat) {
  ModelState state;
  CheckpointContent content = state.content("1");
  content.metadata["format"] = "something/else";
  std::string dir = path("ckpt");
  EXPECT_CONTAINS(checkpointErrorOf([&] { saveCheckpoint(dir, content); }),
                  "metadata format is 'something/else'");
  EXPECT_FALSE(std::filesystem::exists(dir + "/checkpoint.safetensors"));
}

TEST_F(CheckpointTest, MissingDirectoryOrFileIsNamed) {
  std::string missing = path("never-saved");
  EXPECT_EQ(checkpointErrorOf([&] { loadCheckpoint(missing); }),
            "checkpoint directory '" + missing +
                "' does not exist or is not a directory");
  std::string empty = path("empty");
  std::filesystem::create_directories(empty);
  EXPECT_CONTAINS(checkpointErrorOf([&] { loadCheckpoint(empty); }),
                  empty + "/checkpoint.safetensors does not exist");
}

TEST_F(CheckpointTest, CorruptCheckpointIsRefused) {
  ModelState state;
  std::string dir = path("ckpt");
  saveCheckpoint(dir, state.content("5"));
  std::string file = dir + "/checkpoint.safetensors";
  std::string bytes = readBytes(file);
  bytes[bytes.size() - 1] ^= 0x01;
  writeBytes(file, bytes);
  EXPECT_CONTAINS(checkpointErrorOf([&] { loadCheckpoint(dir); }),
                  "checksum mismatch: the file is corrupt");
}

TEST_F(CheckpointTest, FailedSaveKeepsThePreviousCheckpointLoadable) {
  ModelState state;
  std::string dir = path("ckpt");
  saveCheckpoint(dir, state.content("100"));
  std::filesystem::create_directory(dir + "/checkpoint.safetensors.tmp");

  state.table[0] = 1234;
  EXPECT_CONTAINS(
      checkpointErrorOf([&] { saveCheckpoint(dir, state.content("200")); }),
      "checkpoint.safetensors");

  SafetensorsFile file = loadCheckpoint(dir);
  EXPECT_EQ(file.metadata.at("step"), "100");
  std::vector<double> table(8);
  restoreTensor(file, "table/t_C1", "F64", {4, 2}, table.data(), 64);
  EXPECT_EQ(table[0], 1);
}

TEST_F(CheckpointTest, CannotCreateTheDirectoryUnderAFile) {
  writeBytes(path("plain-file"), "x");
  ModelState state;
  std::string dir = path("plain-file/ckpt");
  EXPECT_CONTAINS(
      checkpointErrorOf([&] { saveCheckpoint(dir, state.content("1")); }),
      "cannot create checkpoint directory '" + dir + "'");
}

TEST_F(CheckpointTest, ExportedEmbeddingsArePlainSafetensorsByTableName) {
  std::vector<float> users = {0, 1, 2, 3, 4, 5};
  std::vector<float> items = {-1, -2, -3, -4};
  std::string file = path("embeddings.safetensors");
  exportEmbeddings(file,
                   {{"t_user", "F32", {3, 2}, users.data(), 24},
                    {"t_item", "F32", {2, 2}, items.data(), 16}},
                   {{"model", "mf"}});
  SafetensorsFile read = readSafetensors(file);
  ASSERT_EQ(read.tensors.size(), 2u);
  EXPECT_EQ(read.tensors.at("t_user").shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(read.tensors.at("t_item").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(read.metadata.at("model"), "mf");
  EXPECT_EQ(read.metadata.count("format"), 0u);
}

/// The Python `safetensors` package (the reference implementation) must load
/// what exportEmbeddings writes. Skipped where the package is not installed.
TEST_F(CheckpointTest, PythonSafetensorsLoadsExportedEmbeddings) {
  std::vector<float> users = {0, 1, 2, 3, 4, 5};
  std::vector<double> items = {-1.5, 2.5};
  std::string file = path("embeddings.safetensors");
  exportEmbeddings(file,
                   {{"t_user", "F32", {3, 2}, users.data(), 24},
                    {"t_item", "F64", {2, 1}, items.data(), 16}},
                   {{"model", "mf"}});
  std::string script = EMBC_SOURCE_DIR
      "/test/unit/runtime/checkpoint/load_with_python_safetensors.py";
  std::string command = "python3 '" + script + "' '" + file + "'";
  int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  if (WEXITSTATUS(status) == 77)
    GTEST_SKIP() << "python3 or its safetensors package is not installed";
  EXPECT_EQ(WEXITSTATUS(status), 0) << command;
}

// A resume streams the checkpoint (CheckpointRestore): a chunk of a few KiB
// here, so a table of a few MiB crosses a thousand chunk boundaries.
constexpr size_t kSmallChunk = 4096 + 17;

/// ModelState with a table of 4096 x 256 floats (4 MiB) besides.
struct LargeModelState : ModelState {
  std::vector<float> big = std::vector<float>(4096 * 256);
  LargeModelState() {
    for (size_t i = 0; i < big.size(); ++i)
      big[i] = float(i) * 0.125f - float(i % 77);
  }
  CheckpointContent content(const std::string &step) const {
    CheckpointContent content = ModelState::content(step);
    content.tensors.insert(content.tensors.begin() + 1,
                           {"table/t_big", "F32", {4096, 256}, big.data(), big.size() * 4});
    return content;
  }
};

TEST_F(CheckpointTest, StreamedRestoreEqualsLoadAndRestore) {
  LargeModelState saved;
  std::string dir = path("ckpt");
  saveCheckpoint(dir, saved.content("300"));

  std::vector<float> topWeights(6), big(saved.big.size());
  std::vector<double> table(8);
  std::vector<int64_t> counters(2);
  CheckpointRestore restore(dir, Verify::Yes, kSmallChunk);
  EXPECT_EQ(restore.path(), checkpointFilePath(dir));
  restore.addTensor("param/top_w0", "F32", {2, 3}, topWeights.data(), 24);
  restore.addTensor("table/t_big", "F32", {4096, 256}, big.data(), big.size() * 4);
  restore.addTensor("table/t_C1", "F64", {4, 2}, table.data(), 64);
  restore.addTensor("state/t_C1/0", "I64", {2}, counters.data(), 16);
  std::map<std::string, std::string> metadata;
  restore.run([&](const std::map<std::string, std::string> &verified) { metadata = verified; });

  EXPECT_EQ(topWeights, saved.topWeights);
  EXPECT_EQ(big, saved.big);
  EXPECT_EQ(table, saved.table);
  EXPECT_EQ(counters, saved.counters);
  SafetensorsFile file = loadCheckpoint(dir);
  EXPECT_EQ(metadata, file.metadata);
  std::vector<float> loaded(big.size());
  restoreTensor(file, "table/t_big", "F32", {4096, 256}, loaded.data(), loaded.size() * 4);
  EXPECT_EQ(big, loaded);
}

// A rank's shard: rows of the whole table, many chunks long, start and end
// off the chunk boundaries.
TEST_F(CheckpointTest, StreamedRestoreOfRowsEqualsRestoreRows) {
  LargeModelState saved;
  std::string dir = path("ckpt");
  saveCheckpoint(dir, saved.content("1"));
  std::vector<float> rows(1365 * 256), loaded(rows.size()), none(1, 5.0f);
  CheckpointRestore restore(dir, Verify::Yes, kSmallChunk);
  restore.addRows("table/t_big", "F32", {4096, 256}, 1366, 1365, rows.data());
  restore.addRows("table/t_big", "F32", {4096, 256}, 4096, 0, none.data());
  restore.run();
  EXPECT_EQ(rows, std::vector<float>(saved.big.begin() + 1366 * 256,
                                     saved.big.begin() + 2731 * 256));
  EXPECT_EQ(none[0], 5.0f);
  restoreRows(loadCheckpoint(dir), "table/t_big", "F32", {4096, 256}, 1366, 1365, loaded.data());
  EXPECT_EQ(rows, loaded);
}

// One flipped byte in the middle of the large table: the error of
// loadCheckpoint, and the metadata is never handed over.
TEST_F(CheckpointTest, StreamedRestoreRefusesACorruptCheckpoint) {
  LargeModelState state;
  std::string dir = path("ckpt");
  saveCheckpoint(dir, state.content("5"));
  std::string file = checkpointFilePath(dir);
  std::string bytes = readBytes(file);
  bytes[bytes.size() / 2] ^= 0x01;
  writeBytes(file, bytes);
  std::string expected = checkpointErrorOf([&] { loadCheckpoint(dir); });
  EXPECT_CONTAINS(expected, file + ": checksum mismatch: the file is corrupt");

  std::vector<float> big(state.big.size());
  CheckpointRestore restore(dir, Verify::Yes, kSmallChunk);
  restore.addTensor("table/t_big", "F32", {4096, 256}, big.data(), big.size() * 4);
  bool checked = false;
  EXPECT_EQ(checkpointErrorOf([&] {
              restore.run([&](const std::map<std::string, std::string> &) { checked = true; });
            }),
            expected);
  EXPECT_FALSE(checked);
}

// The checks of loadCheckpoint and restoreTensor, with their messages, in
// their order: format, then the caller's metadata checks, then the first
// tensor that cannot be restored; a mismatched tensor is not copied.
TEST_F(CheckpointTest, StreamedRestoreChecksLikeLoadAndRestore) {
  ModelState state;
  std::string dir = path("ckpt");
  saveCheckpoint(dir, state.content("1"));
  std::vector<double> buffer(16, -1.0);
  auto restoreError = [&](auto ask, CheckpointRestore::MetadataCheck check = {}) {
    CheckpointRestore restore(dir, Verify::Yes, kSmallChunk);
    ask(restore);
    return checkpointErrorOf([&] { restore.run(check); });
  };
  EXPECT_EQ(restoreError([&](CheckpointRestore &r) {
              r.addTensor("table/t_C1", "F64", {8, 2}, buffer.data(), 128);
              r.addTensor("table/t_C2", "F64", {4, 2}, buffer.data(), 64);
            }),
            "checkpoint tensor 'table/t_C1' has shape [4, 2], the plan expects [8, 2]");
  EXPECT_EQ(buffer, std::vector<double>(16, -1.0));
  EXPECT_EQ(restoreError([&](CheckpointRestore &r) {
              r.addTensor("table/t_C1", "F32", {4, 2}, buffer.data(), 32);
            }),
            "checkpoint tensor 'table/t_C1' has dtype F64, the plan expects F32");
  EXPECT_EQ(restoreError([&](CheckpointRestore &r) {
              r.addTensor("table/t_C2", "F64", {4, 2}, buffer.data(), 64);
            }),
            "checkpoint has no tensor 'table/t_C2', which the plan expects");
  EXPECT_CONTAINS(restoreError([&](CheckpointRestore &r) {
                    r.addTensor("table/t_C1", "F64", {4, 2}, buffer.data(), 32);
                  }),
                  "holds 64 bytes, but the destination is 32 bytes");
  EXPECT_EQ(restoreError([&](CheckpointRestore &r) {
              r.addRows("table/t_C1", "F64", {4, 2}, 3, 2, buffer.data());
            }),
            "restoring rows [3, 5) of checkpoint tensor 'table/t_C1' of shape [4, 2]");
  EXPECT_EQ(buffer, std::vector<double>(16, -1.0));

  // The metadata check comes before the tensors' errors.
  EXPECT_EQ(restoreError(
                [&](CheckpointRestore &r) {
                  r.addTensor("table/t_C2", "F64", {4, 2}, buffer.data(), 64);
                },
                [](const std::map<std::string, std::string> &metadata) {
                  throw CheckpointError("of model '" + metadata.at("model") + "'");
                }),
            "of model 'tiny'");

  std::vector<float> values = {1, 2};
  writeSafetensors(checkpointFilePath(dir), {{"w", "F32", {2}, values.data(), 8}}, {});
  EXPECT_EQ(restoreError([](CheckpointRestore &) {},
                         [](const std::map<std::string, std::string> &) {
                           throw CheckpointError("not reached");
                         }),
            checkpointFilePath(dir) +
                " is not an embc checkpoint (format '', expected 'embc.checkpoint/v1')");

  std::string missing = path("never-saved");
  EXPECT_EQ(checkpointErrorOf([&] { CheckpointRestore restore(missing); }),
            "checkpoint directory '" + missing + "' does not exist or is not a directory");
}

} // namespace
