//===- PlanInternal.h - shared pieces of the plan reader/writer -*- C++ -*-===//
//
// Private to EmbPlan. Reading a plan happens in three stages, one per file:
// the container (PlanFile.cpp: magic, version, checksum), the JSON structure
// (PlanFromJson.cpp: every field present, of the right type, no unknown
// field) and the semantics (PlanValidate.cpp: indices in range, roles, the
// layout fits the arena). Each stage reports the first problem by throwing
// PlanFormatError, whose message starts with the JSON path of the offending
// value; deserializePlan turns it into the `error` string of the public API.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_PLAN_PLANINTERNAL_H
#define EMBC_RUNTIME_LIB_PLAN_PLANINTERNAL_H

#include "embc/runtime/Plan.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace embc::runtime {

// The JSON spellings of BufferRole, which Plan.h declares outside
// plan/Enums.h, so that the plan library reads and writes it with enumName()
// / parseEnum() / enumChoices() like every other enum of the plan (DType's
// are beside it in Plan.h: the CUDA GEMM specs read them too).
EMBC_PLAN_ENUM(BufferRole, Workspace, "role", "table", "param", "grad", "optimizer_state", "input",
               "activation", "workspace");

} // namespace embc::runtime

namespace embc::runtime::detail {

/// What is wrong with a plan, as a complete message ("buffers[3].offset: ...").
struct PlanFormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws PlanFormatError("<path>: <what>").
[[noreturn]] void failAt(const std::string &path, const std::string &what);

/// The JSON path of a member or an element: childPath("buffers", 3) is
/// "buffers[3]", childPath("buffers[3]", "offset") is "buffers[3].offset".
std::string childPath(const std::string &parent, const std::string &key);
std::string childPath(const std::string &parent, size_t index);

/// The spellings used in the JSON body; nothing for an unknown word.
std::optional<DType> parseDType(const std::string &name);
std::optional<BufferRole> parseRole(const std::string &name);
/// Every role, in declaration order (for messages and the memory report).
const std::vector<BufferRole> &allRoles();
/// "a, b or c", for "expected ..." in messages.
std::string joinAlternatives(const std::vector<std::string> &words);

/// The body's `format` value.
inline constexpr const char *kPlanFormatName = "embc.plan";

/// The derived `memory` object of the body: bytes per role, the arena (=
/// the peak), the planner's strategy and the lower bound.
nlohmann::json memoryReportJson(const Plan &plan);

/// The most bytes live at one position (Plan::liveBytes): what the memory
/// report calls the lower bound.
int64_t liveLowerBound(const Plan &plan);

/// Reads the JSON body into a Plan, checking its structure only. The
/// `memory` object is returned separately: it is derived data, checked
/// against the buffers by checkMemoryReport once they are known to be valid.
Plan planFromJson(const nlohmann::json &body, nlohmann::json &memoryReport);

/// The semantic checks of docs/plan-format.md ("Validation").
void validatePlan(const Plan &plan);

/// The micro-batch settings, Kernel.stage and Plan.schedule
/// (PlanSchedule.cpp); called by validatePlan.
void validateSchedule(const Plan &plan);

/// Checks that a plan's `memory` object says what its (valid) buffers say.
void checkMemoryReport(const nlohmann::json &reported, const Plan &plan);

} // namespace embc::runtime::detail

#endif // EMBC_RUNTIME_LIB_PLAN_PLANINTERNAL_H
