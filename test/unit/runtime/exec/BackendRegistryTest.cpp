//===- BackendRegistryTest.cpp - backends by name ------------------------===//
//
// backends/Registry.h: the table names every backend, an unknown name is
// refused with the known ones, and a backend comes back under its name.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/backends/Registry.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace embc::runtime;

TEST(BackendRegistry, ListsEveryBackend) {
  std::vector<std::string> names;
  for (const BackendInfo &b : knownBackends()) {
    names.push_back(b.name);
    EXPECT_STRNE(b.summary, "") << b.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"cpu", "cuda", "emulated"}));
  EXPECT_EQ(knownBackendNames(), "cpu, cuda, emulated");
}

TEST(BackendRegistry, UnknownNameListsTheKnownOnes) {
  try {
    createBackend("tpu", {});
    FAIL() << "an unknown backend was created";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "unknown backend 'tpu' (known: cpu, cuda, emulated)");
  }
  std::string why;
  EXPECT_THROW(backendAvailable("tpu", why), std::invalid_argument);
}

TEST(BackendRegistry, CreatesByName) {
  BackendOptions options;
  options.threads = 1;
  std::unique_ptr<Backend> cpu = createBackend("cpu", options);
  ASSERT_TRUE(cpu);
  EXPECT_STREQ(cpu->name(), "cpu");
  std::string why;
  EXPECT_TRUE(backendAvailable("cpu", why));
  EXPECT_TRUE(backendAvailable("emulated", why));
}
