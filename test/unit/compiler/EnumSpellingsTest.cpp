//===- EnumSpellingsTest.cpp - the dialect's enums spell the plan's words -===//
//
// The plan's enums (runtime/include/embc/runtime/plan/Enums.h) spell each
// word once for the model file and the plan; the dialect's enums
// (EmbEnums.td) must spell the same words, since the importer and the plan
// lowering convert between the two by name. Storage is the one set the
// dialect spells otherwise (int8_rowwise), and is converted by a switch;
// the schedules (one_f_one_b for 1f1b) convert by position.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/runtime/plan/Enums.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

namespace emb = embc::emb;
namespace rt = embc::runtime;

/// Every plan word but `planOnly` is a dialect word and every dialect word
/// a plan word.
template <class PlanE, class DialectE>
void expectSameWords(unsigned dialectMax, std::set<std::string> planOnly = {}) {
  for (size_t i = 0; i < rt::enumCount<PlanE>(); ++i) {
    const std::string word = rt::enumString(PlanE(i));
    if (planOnly.count(word))
      continue;
    auto d = emb::symbolizeEnum<DialectE>(word);
    ASSERT_TRUE(d.has_value()) << "the dialect has no '" << word << "' " << rt::EnumTraits<PlanE>::what;
    EXPECT_EQ(emb::stringifyEnum(*d).str(), word);
  }
  for (unsigned v = 0; v <= dialectMax; ++v) {
    auto d = emb::symbolizeEnum<DialectE>(emb::stringifyEnum(DialectE(v)));
    ASSERT_TRUE(d.has_value());
    const std::string word = emb::stringifyEnum(*d).str();
    EXPECT_TRUE(rt::parseEnum<PlanE>(word).has_value())
        << "the plan has no '" << word << "' " << rt::EnumTraits<PlanE>::what;
  }
}

TEST(EnumSpellings, TheDialectSpellsThePlansWords) {
  expectSameWords<rt::Pooling, emb::Pooling>(emb::getMaxEnumValForPooling());
  expectSameWords<rt::SequencePooling, emb::SequencePooling>(
      emb::getMaxEnumValForSequencePooling());
  expectSameWords<rt::PositionKind, emb::PositionKind>(emb::getMaxEnumValForPositionKind());
  // The dialect's activations are ops' kinds; "none" is a model file's and
  // a fused layer's absence of one.
  expectSameWords<rt::Activation, emb::Activation>(emb::getMaxEnumValForActivation(), {"none"});
  expectSameWords<rt::LossKind, emb::LossKind>(emb::getMaxEnumValForLossKind());
  expectSameWords<rt::InitKind, emb::InitKind>(emb::getMaxEnumValForInitKind());
  expectSameWords<rt::OptimizerKind, emb::OptimizerKind>(emb::getMaxEnumValForOptimizerKind());
  expectSameWords<rt::WeightDecayMode, emb::WeightDecayMode>(
      emb::getMaxEnumValForWeightDecayMode());
  expectSameWords<rt::LrSchedule, emb::LrSchedule>(emb::getMaxEnumValForLrSchedule());
  expectSameWords<rt::ComputeType, emb::Precision>(emb::getMaxEnumValForPrecision());
  expectSameWords<rt::Placement, emb::Placement>(emb::getMaxEnumValForPlacement());
}

// The one set the dialect spells otherwise converts by position.
TEST(EnumSpellings, SchedulesCorrespondByPosition) {
  ASSERT_EQ(size_t(emb::getMaxEnumValForPipelineSchedule()) + 1, rt::enumCount<rt::ScheduleKind>());
  EXPECT_EQ(emb::toDialectSchedule(rt::ScheduleKind::GPipe), emb::PipelineSchedule::gpipe);
  EXPECT_EQ(emb::toDialectSchedule(rt::ScheduleKind::OneFOneB), emb::PipelineSchedule::one_f_one_b);
  for (size_t i = 0; i < rt::enumCount<rt::ScheduleKind>(); ++i)
    EXPECT_EQ(emb::toPlanSchedule(emb::toDialectSchedule(rt::ScheduleKind(i))),
              rt::ScheduleKind(i));
}

} // namespace
