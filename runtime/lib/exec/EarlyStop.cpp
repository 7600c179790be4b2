//===- EarlyStop.cpp - stopping on an evaluation metric -------------------===//

#include "EarlyStop.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

using namespace embc::runtime;

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

} // namespace

bool embc::runtime::higherIsBetter(const std::string &metric) {
  for (const char *up : {"auc", "accuracy", "recall", "precision", "ndcg", "hit"})
    if (metric.find(up) != std::string::npos)
      return true;
  return false; // loss, rmse, mae, perplexity
}

double EarlyStop::metric(const std::map<std::string, double> &eval, const std::string &name,
                         const char *option) const {
  auto it = eval.find(name);
  if (it != eval.end())
    return it->second;
  std::string have;
  for (const auto &[key, value] : eval)
    if (key.rfind("eval_", 0) == 0)
      have += (have.empty() ? "" : ", ") + key;
  throw std::runtime_error(std::string(option) + " " + name + ": the evaluation reports " +
                           (have.empty() ? std::string("no metrics") : have));
}

EarlyStop::Verdict EarlyStop::observe(int64_t step, const std::map<std::string, double> &eval) {
  Verdict v;
  const double value = metric(eval, monitor_, "--monitor");
  // NaN is never better; a metric that ties the best is not an improvement.
  if (!std::isnan(value) &&
      (!bestStep_ || (higher_ ? value > best_ : value < best_))) {
    bestStep_ = step;
    best_ = value;
    sinceBest_ = 0;
    v.best = true;
  } else {
    ++sinceBest_;
  }
  if (target_) {
    const double reached = metric(eval, target_->metric, "--stop-at");
    if (target_->atLeast ? reached >= target_->value : reached <= target_->value) {
      v.stop = target_->metric + " " + number(reached) + (target_->atLeast ? " >= " : " <= ") +
               number(target_->value);
      return v;
    }
  }
  if (patience_ > 0 && sinceBest_ >= patience_)
    v.stop = std::to_string(sinceBest_) + " evaluations without a better " + monitor_ +
             " (best " + number(best_) + " at step " + std::to_string(*bestStep_) + ")";
  return v;
}
