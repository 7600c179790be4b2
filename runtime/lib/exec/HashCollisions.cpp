//===- HashCollisions.cpp - how many raw ids share a hashed bucket --------===//

#include "HashCollisions.h"

#include "embc/runtime/cpu/IdHash.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <algorithm>
#include <cmath>

using namespace embc::runtime;

std::vector<HashedFeature> embc::runtime::hashedFeatures(const Plan &plan) {
  std::vector<HashedFeature> found;
  auto add = [&](int32_t idsBuffer, int64_t buckets, uint64_t seed) {
    for (const Input &in : plan.inputs)
      if (in.buffer == idsBuffer && in.role == InputRole::Ids &&
          std::none_of(found.begin(), found.end(),
                       [&](const HashedFeature &f) { return f.feature == in.feature; }))
        found.push_back({in.feature, buckets, seed});
  };
  for (const Kernel &k : plan.step) {
    if (k.op == kernelName(KernelOp::Hash) && !k.inputs.empty())
      add(k.inputs[0], k.attrs.value("buckets", int64_t(0)), k.attrs.value("seed", uint64_t(0)));
    for (const FusedLookupMember &m : fusedLookupMembers(k)) {
      const nlohmann::json &member = k.attrs["members"][m.index];
      if (member.value("hash", false))
        add(k.inputs[m.ids], member.value("buckets", int64_t(0)), member.value("seed", uint64_t(0)));
    }
  }
  found.erase(std::remove_if(found.begin(), found.end(),
                             [](const HashedFeature &f) { return f.buckets <= 0; }),
              found.end());
  return found;
}

HashCollisions::HashCollisions(std::vector<HashedFeature> features,
                               const std::vector<data::FeatureSpec> &specs) {
  for (HashedFeature &f : features)
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == f.feature) {
        tracked_.push_back({f, i, std::vector<uint8_t>(size_t(1) << kPrecision, 0),
                            std::vector<uint64_t>(size_t(f.buckets + 63) / 64, 0)});
        break;
      }
}

void HashCollisions::add(const data::Batch &batch) {
  for (Tracked &t : tracked_) {
    if (t.index >= batch.features.size())
      continue;
    const data::FeatureBatch &fb = batch.features[t.index];
    const int64_t rows = std::min<int64_t>(batch.valid, int64_t(fb.offsets.size()) - 1);
    const int64_t end = rows > 0 ? fb.offsets[size_t(rows)] : 0;
    for (int64_t i = 0; i < end && i < int64_t(fb.ids.size()); ++i) {
      const int64_t id = fb.ids[size_t(i)];
      // The hash op's hash: the bucket is it mod the bucket count; its top
      // bits pick the HyperLogLog register (independent of the bucket while
      // buckets << 2^50), so one hash serves both.
      const uint64_t h = cpu::idHash(id, t.feature.seed);
      const uint64_t bucket = h % uint64_t(t.feature.buckets);
      t.occupied[bucket / 64] |= uint64_t(1) << (bucket % 64);
      const size_t reg = size_t(h >> (64 - kPrecision));
      const uint64_t rest = h << kPrecision;
      const uint8_t rank =
          uint8_t(rest == 0 ? 64 - kPrecision + 1 : __builtin_clzll(rest) + 1);
      t.registers[reg] = std::max(t.registers[reg], rank);
    }
  }
}

double HashCollisions::estimate(const std::vector<uint8_t> &registers) {
  const double m = double(registers.size());
  double sum = 0;
  int64_t zeros = 0;
  for (uint8_t r : registers) {
    sum += std::ldexp(1.0, -int(r));
    zeros += r == 0;
  }
  const double alpha = 0.7213 / (1.0 + 1.079 / m);
  const double raw = alpha * m * m / sum;
  // Small ranges: linear counting over the empty registers.
  if (raw <= 2.5 * m && zeros > 0)
    return m * std::log(m / double(zeros));
  return raw;
}

std::map<std::string, double> HashCollisions::rates() const {
  std::map<std::string, double> out;
  for (const Tracked &t : tracked_) {
    int64_t occupied = 0;
    for (uint64_t word : t.occupied)
      occupied += __builtin_popcountll(word);
    const double distinct = estimate(t.registers);
    out[t.feature.feature] =
        distinct > 0 ? std::max(0.0, 1.0 - double(occupied) / distinct) : 0.0;
  }
  return out;
}
