//===- ErrorText.h - capture and check error messages in tests ------------===//
//
// Error messages are part of the interface (they tell the user which file and
// tensor is wrong), so tests check their text, not only that something threw.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_TEST_UNIT_RUNTIME_CHECKPOINT_ERRORTEXT_H
#define EMBC_TEST_UNIT_RUNTIME_CHECKPOINT_ERRORTEXT_H

#include "embc/runtime/checkpoint/Safetensors.h"

#include <gtest/gtest.h>

#include <string>

namespace embc::test {

/// The message of the CheckpointError `action` throws; a test failure if it
/// throws nothing.
template <typename Action> std::string checkpointErrorOf(Action action) {
  try {
    action();
  } catch (const embc::runtime::checkpoint::CheckpointError &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a CheckpointError";
  return "";
}

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "message: " << (text) << "\nexpected to contain: " << (part)

} // namespace embc::test

#endif // EMBC_TEST_UNIT_RUNTIME_CHECKPOINT_ERRORTEXT_H
