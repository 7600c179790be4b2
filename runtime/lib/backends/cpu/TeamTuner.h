//===- TeamTuner.h - the CPU team size, chosen by measuring steps -*- C++ -*-===//
//
// `--threads N` is the most threads the CPU backend may use (0: every CPU it
// may run on). Which team size trains fastest depends on the model and on
// the machine's load: small steps (matrix factorisation at batch 256, 80 us
// a step) lose more to waking a second thread than they gain from it, and a
// process competing for the cores can make a smaller team faster. So the
// backend measures instead of guessing: after a few warm-up steps it times
// each candidate size (N, N/2, ..., 1) in turn, twice round (so a drift in
// the machine's load hits every candidate alike), each turn a few settling
// steps and then at least kStepsPerTurn steps and kSecondsPerTurn, keeps
// the size with the fastest
// mean step, and measures again every kRetuneSeconds, so a neighbour that
// starts or stops is noticed. The team size never changes results
// (Parallel.h), only speed. EMBC_CPU_TUNE=0 keeps the team at N.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_EXEC_TEAMTUNER_H
#define EMBC_RUNTIME_LIB_EXEC_TEAMTUNER_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace embc::runtime {

class TeamTuner {
public:
  /// Candidates N, N/2, ..., 1 (without repeats); `enabled` false: the
  /// team stays at N.
  TeamTuner(int maxThreads, bool enabled);

  /// The wall time of the step that just ended and its work (1: a full
  /// step; a dynamically padded batch's share of max_len's positions): the
  /// trials compare seconds per unit of work, the clocks count seconds.
  /// Returns the team size the next step must use when it differs from the
  /// current one.
  std::optional<int> stepTimed(double seconds, double work = 1.0);

  int current() const { return current_; }
  /// The last decision, for the log ("" before the first).
  const std::string &decision() const { return decision_; }
  /// The last trial: (team size, mean step seconds) per candidate.
  const std::vector<std::pair<int, double>> &lastTrial() const { return lastTrial_; }
  /// Trials finished so far.
  int64_t trials() const { return trials_; }

  static constexpr int kWarmSteps = 5;         ///< steps before the first trial
  static constexpr int kRounds = 2;            ///< turns per candidate in a trial
  /// Steps at the start of a turn that are not counted: a team size change
  /// shifts the balance between the team and the data threads, and the
  /// prefetched batches take a few steps to settle to it.
  static constexpr int kSettleSteps = 3;
  static constexpr int kStepsPerTurn = 8;     ///< counted, at least, per turn
  static constexpr double kSecondsPerTurn = 0.1; ///< counted, at least, per turn
  static constexpr double kRetuneSeconds = 20;
  /// A smaller team must be this much faster to be chosen over a larger one
  /// (noise must not make the choice flap).
  static constexpr double kMargin = 0.03;

private:
  void startTrial();
  std::optional<int> move(int size);

  std::vector<int> candidates_;
  bool enabled_;
  int current_;
  int64_t warmLeft_ = kWarmSteps;
  size_t turn_ = 0;                ///< position in the trial: round * candidates + candidate
  bool trying_ = false;
  int turnSteps_ = 0;
  double turnSeconds_ = 0;
  std::vector<std::vector<double>> times_; ///< per candidate, its counted step times
  double sinceTrial_ = 0;          ///< seconds trained since the last trial
  std::string decision_;
  std::vector<std::pair<int, double>> lastTrial_;
  int64_t trials_ = 0;
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_LIB_EXEC_TEAMTUNER_H
