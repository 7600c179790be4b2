//===- MetricFormat.cpp - how metric values read on the console -----------===//
//
// Humans compare runs by eye, so each kind of value has one fixed format:
// losses and scores with 4 decimals, throughput with k/M suffixes, memory in
// MiB/GiB. The JSON-lines log always holds the raw numbers.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Metrics.h"

#include <cmath>
#include <cstdio>

namespace {

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string printf1(const char *format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string nonFinite(double value) {
  if (std::isnan(value))
    return "nan";
  return value > 0 ? "inf" : "-inf";
}

/// Losses and [0, 1] scores, also with a prefix such as "eval_loss".
bool isFourDecimalMetric(const std::string &key) {
  for (const char *name : {"loss", "auc", "accuracy", "rmse"})
    if (key == name || endsWith(key, std::string("_") + name))
      return true;
  return false;
}

} // namespace

std::string embc::runtime::formatRate(double perSecond) {
  if (!std::isfinite(perSecond))
    return nonFinite(perSecond);
  double magnitude = std::fabs(perSecond);
  if (magnitude < 1e3)
    return printf1("%.1f", perSecond);
  if (magnitude < 1e6)
    return printf1("%.1fk", perSecond / 1e3);
  if (magnitude < 1e9)
    return printf1("%.2fM", perSecond / 1e6);
  return printf1("%.2fG", perSecond / 1e9);
}

std::string embc::runtime::formatBytes(double bytes) {
  if (!std::isfinite(bytes))
    return nonFinite(bytes);
  constexpr double kMiB = 1024.0 * 1024.0, kGiB = kMiB * 1024.0;
  if (std::fabs(bytes) < kGiB)
    return printf1("%.1f MiB", bytes / kMiB);
  return printf1("%.2f GiB", bytes / kGiB);
}

std::string embc::runtime::formatMetric(const std::string &key, double value) {
  if (!std::isfinite(value))
    return nonFinite(value);
  if (isFourDecimalMetric(key))
    return printf1("%.4f", value);
  if (endsWith(key, "_per_s"))
    return formatRate(value);
  if (endsWith(key, "_bytes"))
    return formatBytes(value);
  return printf1("%g", value);
}
