//===- PlanFuzz.cpp - libFuzzer target for the plan reader ----------------===//
//
// embrun trusts a plan that deserializePlan accepted: its executor indexes
// buffers, the arena and kernel operands with what the plan says. The input
// is read twice: as a whole file (header, checksum, body) and as a JSON body
// packed into a container with a valid checksum, which is how a hand-edited
// plan reaches the validator. Beyond the sanitizers' checks, an accepted plan
// must round-trip (serialise, read back, accepted again, same bytes) and lie
// inside its arena; a violation aborts, so libFuzzer records the input.
// Built by run-fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Plan.h"

#include <xxhash.h>

#include "FuzzSupport.h"

#include <string>

using namespace embc::runtime;

namespace {

[[noreturn]] void violated(const std::string &what) {
  embc::fuzz::violated("PlanFuzz", what);
}

void put(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char((value >> (8 * i)) & 0xff));
}

/// The 32-byte header of docs/plan-format.md around `body`.
std::string containerOf(const std::string &body) {
  std::string out = "EMBCPLAN";
  put(out, kPlanVersion, 4);
  put(out, 0, 4);
  put(out, body.size(), 8);
  put(out, XXH64(body.data(), body.size(), 0), 8);
  return out + body;
}

void checkAccepted(const Plan &plan) {
  for (const Buffer &b : plan.buffers)
    if (b.offset < 0 || b.bytes < 0 || b.offset + b.bytes > plan.arenaBytes)
      violated("an accepted buffer lies outside the arena");
  std::string bytes = serializePlan(plan), error;
  std::optional<Plan> again = deserializePlan(bytes, error);
  if (!again)
    violated("an accepted plan does not read back: " + error);
  if (serializePlan(*again) != bytes)
    violated("an accepted plan does not round-trip to the same bytes");
}

void readOne(const std::string &bytes) {
  std::string error;
  std::optional<Plan> plan = deserializePlan(bytes, error);
  if (plan)
    checkAccepted(*plan);
  else if (error.empty())
    violated("a refused plan has no message");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string input(reinterpret_cast<const char *>(data), size);
  readOne(input);
  readOne(containerOf(input));
  return 0;
}
