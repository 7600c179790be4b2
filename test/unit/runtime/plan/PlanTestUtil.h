//===- PlanTestUtil.h - a complete sample plan and container helpers -------===//
//
// Shared by the plan tests: one small but complete plan (a DLRM-like model
// with a table, a dense parameter, four inputs and both schedules) that uses
// every field with a non-default value, so a round trip that drops or
// confuses a field shows up; and helpers to take a serialised plan apart and
// put it back together with a valid checksum, so tests can reach the checks
// that sit behind the checksum.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_TEST_UNIT_RUNTIME_PLAN_PLANTESTUTIL_H
#define EMBC_TEST_UNIT_RUNTIME_PLAN_PLANTESTUTIL_H

#include "embc/runtime/Plan.h"

#include <string>

namespace embc::runtime::testing {

/// Indices of the sample plan's buffers, for tests that break one of them.
enum SampleBuffer : int32_t {
  kTable, kTableGradRows, kTableGradValues, kTableAccumulator,
  kWeight, kWeightGrad, kWeightMoment1, kWeightMoment2,
  kDenseInput, kIdsInput, kOffsetsInput, kLabelInput,
  kPooled, kConcat, kLogits, kLoss, kLogitsGrad, kScratch, kPooledGrad,
  kSampleBufferCount
};

/// A valid plan with every field set (see the file comment).
Plan samplePlan();

/// The 32-byte header and the JSON body of a serialised plan, with a correct
/// checksum and length; `version` goes into the header only.
std::string containerWith(const std::string &body, uint32_t version = kPlanVersion);

/// The JSON body of a serialised plan (asserts nothing: it must be one).
nlohmann::json bodyOf(const std::string &bytes);

/// The sample plan's JSON body changed by `edit`, packed into a container
/// with a valid checksum.
template <class F> std::string sampleWithBodyEdit(F edit) {
  nlohmann::json body = planToJson(samplePlan());
  edit(body);
  return containerWith(body.dump());
}

/// The error deserializePlan reports, or "<accepted>" if it accepted the bytes.
std::string errorFor(const std::string &bytes);
/// The error for a plan that serializePlan writes as is (no validation).
std::string errorFor(const Plan &plan);

/// Field-by-field equality with a readable failure for the first difference.
void expectSamePlan(const Plan &expected, const Plan &actual);

} // namespace embc::runtime::testing

#endif // EMBC_TEST_UNIT_RUNTIME_PLAN_PLANTESTUTIL_H
