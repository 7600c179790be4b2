//===- KernelCatalogueDocTest.cpp - docs/plan-format.md against the catalogue -===//
//
// The kernel tables of docs/plan-format.md ("Kernel catalogue" and the
// sections after it) document what KernelCatalogue.cpp declares: one row per
// kernel, no row for a kernel that does not exist, and every attribute of a
// kernel named in its row's attrs column.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/plan/KernelCatalogue.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace embc::runtime;

namespace {

struct Row {
  std::string attrs; ///< the attrs column
  int line = 0;
};

/// The kernel rows of the doc's catalogue tables, by op. A table's header
/// says which column holds the attributes.
std::map<std::string, std::vector<Row>> kernelRows(const std::string &path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::map<std::string, std::vector<Row>> rows;
  std::string line;
  bool inCatalogue = false;
  int attrsColumn = -1, number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("## ", 0) == 0)
      inCatalogue = line == "## Kernel catalogue";
    if (!inCatalogue || line.rfind("|", 0) != 0)
      continue;
    std::vector<std::string> cells;
    std::stringstream cellsIn(line.substr(1));
    for (std::string cell; std::getline(cellsIn, cell, '|');)
      cells.push_back(cell);
    if (cells.empty())
      continue;
    auto trimmed = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    if (trimmed(cells[0]) == "op") { // a table's header
      attrsColumn = -1;
      for (size_t i = 0; i < cells.size(); ++i)
        if (trimmed(cells[i]) == "attrs")
          attrsColumn = int(i);
      continue;
    }
    std::smatch op;
    std::string first = trimmed(cells[0]);
    if (!std::regex_match(first, op, std::regex("`([a-z_0-9]+)`")) || attrsColumn < 0 ||
        attrsColumn >= int(cells.size()))
      continue;
    rows[op[1]].push_back({cells[size_t(attrsColumn)], number});
  }
  return rows;
}

TEST(KernelCatalogueDoc, OneRowPerKernelNamingEveryAttribute) {
  const std::string path = std::string(EMBC_SOURCE_DIR) + "/docs/plan-format.md";
  std::map<std::string, std::vector<Row>> rows = kernelRows(path);
  for (const KernelSpec &spec : kernelCatalogue()) {
    auto it = rows.find(std::string(spec.name));
    if (it == rows.end()) {
      ADD_FAILURE() << "kernel '" << spec.name << "' has no row in " << path;
      continue;
    }
    ASSERT_EQ(it->second.size(), 1u) << "kernel '" << spec.name << "' has "
                                     << it->second.size() << " rows";
    const Row &row = it->second.front();
    for (const AttrSpec &attr : spec.attrs) {
      const std::string quoted = "`" + std::string(attr.name) + "`";
      EXPECT_NE(row.attrs.find(quoted), std::string::npos)
          << path << ":" << row.line << ": the row of '" << spec.name
          << "' does not name its attribute " << quoted;
    }
  }
  for (const auto &[op, list] : rows)
    EXPECT_NE(findKernel(op), nullptr)
        << path << ":" << list.front().line << ": '" << op << "' is not a kernel of the catalogue";
}

} // namespace
