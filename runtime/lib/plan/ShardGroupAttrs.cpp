//===- ShardGroupAttrs.cpp - a shard exchange group's attributes ----------===//

#include "embc/runtime/ShardGroupAttrs.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <algorithm>
#include <stdexcept>

using namespace embc::runtime;

size_t ShardGroupAttrs::weights() const {
  return size_t(std::count(weighted.begin(), weighted.end(), true));
}

size_t ShardGroupAttrs::localWeights() const {
  size_t n = 0;
  for (size_t i = 0; i < weighted.size(); ++i)
    n += weightsOut(i);
  return n;
}

namespace {

std::vector<bool> memberFlags(const Kernel &k, const char *key, size_t members) {
  auto it = k.attrs.find(key);
  if (it == k.attrs.end() || !it->is_array() || it->size() != members)
    throw std::invalid_argument(std::string("needs '") + key + "', one boolean per table (" +
                                std::to_string(members) + ")");
  std::vector<bool> flags;
  for (const nlohmann::json &f : *it) {
    if (!f.is_boolean())
      throw std::invalid_argument(std::string("'") + key + "' holds " + f.dump() +
                                  ", not a boolean");
    flags.push_back(f.get<bool>());
  }
  return flags;
}

} // namespace

ShardGroupAttrs embc::runtime::readShardGroupAttrs(const Plan &plan, const Kernel &k) {
  ShardGroupAttrs a;
  auto it = k.attrs.find("tables");
  if (it == k.attrs.end() || !it->is_array() || it->empty())
    throw std::invalid_argument("needs 'tables', a non-empty array of table indices");
  for (const nlohmann::json &t : *it) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
        t.get<int64_t>() >= int64_t(plan.tables.size()))
      throw std::invalid_argument("'tables' holds " + t.dump() + ", not a table index below " +
                                  std::to_string(plan.tables.size()));
    const Table &table = plan.tables[size_t(t.get<int64_t>())];
    if (table.shardRows.size() < 2)
      throw std::invalid_argument("table '" + table.name + "' is not sharded (no shard_rows)");
    if (!a.tables.empty() && table.shardRows.size() != a.tables.front()->shardRows.size())
      throw std::invalid_argument("table '" + table.name + "' has " +
                                  std::to_string(table.shardRows.size() - 1) +
                                  " shards, table '" + a.tables.front()->name + "' " +
                                  std::to_string(a.ranks()));
    a.tables.push_back(&table);
  }
  if (k.op == kernelName(KernelOp::ShardIdsGroup)) {
    a.weighted = memberFlags(k, "weighted", a.tables.size());
    a.perBagMean = memberFlags(k, "per_bag_mean", a.tables.size());
  }
  return a;
}
