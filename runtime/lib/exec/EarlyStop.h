//===- EarlyStop.h - stopping on an evaluation metric -----------*- C++ -*-===//
//
// embrun --stop-at METRIC>=VALUE, --patience N and --monitor METRIC
// (docs/training.md, "Early stopping"): after each evaluation, whether it
// is the best so far by the monitored metric (the trainer then saves
// DIR/best) and whether training stops there.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_EARLYSTOP_H
#define EMBC_RUNTIME_EXEC_EARLYSTOP_H

#include "embc/runtime/RunOptions.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace embc::runtime {

/// Whether higher values of an evaluation metric are better (auc,
/// accuracy) or lower (loss, rmse, perplexity).
bool higherIsBetter(const std::string &metric);

class EarlyStop {
public:
  EarlyStop(std::optional<StopTarget> target, int64_t patience, std::string monitor)
      : target_(std::move(target)), patience_(patience), monitor_(std::move(monitor)),
        higher_(higherIsBetter(monitor_)) {}

  struct Verdict {
    bool best = false; ///< the best `monitor` so far (the first evaluation is)
    std::string stop;  ///< why training stops here ("": it goes on)
  };
  /// After the evaluation at `step`. Throws std::runtime_error naming the
  /// metrics the evaluation has when it lacks the monitored or target one.
  Verdict observe(int64_t step, const std::map<std::string, double> &eval);

  const std::string &monitor() const { return monitor_; }
  std::optional<int64_t> bestStep() const { return bestStep_; }
  double bestValue() const { return best_; }

private:
  double metric(const std::map<std::string, double> &eval, const std::string &name,
                const char *option) const;

  std::optional<StopTarget> target_;
  int64_t patience_;
  std::string monitor_;
  bool higher_;
  std::optional<int64_t> bestStep_;
  double best_ = 0;
  int64_t sinceBest_ = 0;
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_EARLYSTOP_H
