//===- ModelFuzz.cpp - libFuzzer target for the model parser --------------===//
//
// parseModel promises never to throw or abort, whatever the input. Beyond the
// sanitizers' checks this target asserts what a successful parse guarantees
// (every layer reads features or earlier layers, every width is in
// [1, 2^20], references resolve) and that a failure always carries a message; a
// violation aborts, so libFuzzer records the input. Built by run-fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "embc/frontend/Model.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

using namespace embc::frontend;

namespace {

[[noreturn]] void violated(const char *what, const std::string &detail) {
  std::fprintf(stderr, "ModelFuzz: invariant violated: %s%s%s\n", what,
               detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

#define FUZZ_CHECK(cond, detail)                                               \
  do {                                                                         \
    if (!(cond))                                                               \
      violated(#cond, detail);                                                 \
  } while (0)

constexpr int64_t kMaxDim = 65536;
constexpr int64_t kMaxRows = int64_t(1) << 40;
constexpr int64_t kMaxWidth = int64_t(1) << 20;

void checkError(const ModelError &error) {
  FUZZ_CHECK(!error.message.empty(), "failure without a message");
  if (error.line > 0) {
    // A JSON syntax error: a position, no pointer.
    FUZZ_CHECK(error.column > 0, error.message);
    FUZZ_CHECK(error.pointer.empty(), error.pointer);
  } else {
    FUZZ_CHECK(error.column == 0, error.message);
    FUZZ_CHECK(error.pointer.empty() || error.pointer[0] == '/',
               error.pointer);
  }
  std::string text = error.format("fuzz.json");
  FUZZ_CHECK(text.size() > error.message.size(), text);
}

void checkModel(const Model &m) {
  FUZZ_CHECK(!m.name.empty(), "");
  FUZZ_CHECK(!m.features.empty(), "");
  FUZZ_CHECK(!m.layers.empty(), "");

  std::set<std::string> tables;
  for (const Table &t : m.tables) {
    FUZZ_CHECK(tables.insert(t.name).second, t.name);
    FUZZ_CHECK(t.rows >= 1 && t.rows <= kMaxRows, t.name);
    FUZZ_CHECK(t.dim >= 1 && t.dim <= kMaxDim, t.name);
    FUZZ_CHECK(t.rows <= kMaxRows / t.dim, t.name);
  }

  // Features and layers share one namespace; a layer may read a feature or a
  // layer that comes before it.
  std::set<std::string> defined;
  for (const Feature &f : m.features) {
    FUZZ_CHECK(defined.insert(f.name).second, f.name);
    if (f.kind == FeatureKind::Sparse || f.kind == FeatureKind::Negatives)
      FUZZ_CHECK(tables.count(f.table), f.name + " -> " + f.table);
    if (f.kind == FeatureKind::Dense)
      FUZZ_CHECK(f.dim >= 1 && f.dim <= kMaxDim, f.name);
    if (f.kind == FeatureKind::Negatives)
      FUZZ_CHECK(f.count >= 1, f.name);
    FUZZ_CHECK(m.shapeOf(f.name).width > 0, f.name);
  }
  for (const Layer &l : m.layers) {
    FUZZ_CHECK(!l.inputs.empty(), l.name);
    for (const std::string &in : l.inputs) {
      FUZZ_CHECK(defined.count(in), "layer " + l.name + " reads " + in +
                                        " before it is defined");
      const Feature *f = m.findFeature(in);
      FUZZ_CHECK(!f || f->kind != FeatureKind::Label, l.name + " <- " + in);
    }
    FUZZ_CHECK(defined.insert(l.name).second, l.name);
    FUZZ_CHECK(l.width > 0 && l.width <= kMaxWidth,
               l.name + " width " + std::to_string(l.width));
    FUZZ_CHECK(m.shapeOf(l.name).width == l.width, l.name);
    if (l.type == "mlp" || l.type == "dense") {
      FUZZ_CHECK(!l.sizes.empty(), l.name);
      for (int64_t s : l.sizes)
        FUZZ_CHECK(s > 0, l.name + " size " + std::to_string(s));
      FUZZ_CHECK(l.width == l.sizes.back(), l.name);
    }
  }

  FUZZ_CHECK(m.shapeOf(m.loss.input).width > 0, m.loss.input);
  FUZZ_CHECK(m.shapeOf(m.loss.label).width > 0, m.loss.label);
  FUZZ_CHECK(m.training.batchSize >= 1, "");
  FUZZ_CHECK(m.plan.microBatches >= 1, "");
  FUZZ_CHECK(m.training.batchSize % m.plan.microBatches == 0, "");
  FUZZ_CHECK(m.plan.memoryBudget >= 0, "");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  ModelError error;
  std::optional<Model> model = parseModel(text, error);
  if (model)
    checkModel(*model);
  else
    checkError(error);
  return 0;
}
