//===- PrintSummary.cpp - -emb-print-summary ---------------------------------===//
//
// Prints the model summary (tables, parameters, memory, forward cost) without
// changing the IR. embc prints it after compiling, and it is the quickest way
// to see what a model file turned into.
//
//===----------------------------------------------------------------------===//

#include "embc/passes/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"

#define DEBUG_TYPE "emb-print-summary"

namespace embc {
#define GEN_PASS_DEF_EMBPRINTSUMMARYPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// `value` divided by `base` while it is at least `base`, at most `most`
/// times; `steps` says how many (the unit prefix to print).
double scaleDown(double value, double base, int most, int &steps) {
  steps = 0;
  while (value >= base && steps < most) {
    value /= base;
    ++steps;
  }
  return value;
}

/// Formats a byte count with a binary unit: "241.4 KiB".
std::string formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u;
  const double v = scaleDown(double(bytes), 1024.0, 4, u);
  std::string s;
  llvm::raw_string_ostream os(s);
  if (u == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.1f %s", v, units[u]);
  return s;
}

/// Formats a count with a decimal unit: "1.2 M".
std::string formatCount(int64_t n, StringRef unit) {
  const char *prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p;
  const double v = scaleDown(double(n), 1000.0, 5, p);
  std::string s;
  llvm::raw_string_ostream os(s);
  if (p == 0)
    os << n << (unit.empty() ? "" : " ") << unit;
  else
    os << llvm::format("%.1f %s", v, prefixes[p]) << unit;
  return s;
}

std::string describeOptimizer(OptimizerAttr opt) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << stringifyOptimizerKind(opt.getKind())
     << llvm::format(" lr=%g", double(opt.getLr()));
  return s;
}

struct EmbPrintSummaryPass
    : embc::impl::EmbPrintSummaryPassBase<EmbPrintSummaryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(kForwardFuncName);
    if (!forward) {
      module.emitError("emb-print-summary needs a 'func.func @")
          << kForwardFuncName << "' in the module";
      return signalPassFailure();
    }

    std::string errorMessage;
    std::unique_ptr<llvm::ToolOutputFile> out =
        openOutputFile(outputFile.getValue(), &errorMessage);
    if (!out) {
      module.emitError("cannot open summary output: ") << errorMessage;
      return signalPassFailure();
    }
    print(module, forward, out->os());
    out->keep();
  }

  void print(ModuleOp module, func::FuncOp forward, raw_ostream &os) {
    auto tables = llvm::to_vector(module.getOps<TableOp>());
    auto params = llvm::to_vector(module.getOps<ParamOp>());
    numTables = tables.size();
    numParams = params.size();

    StringRef name = module.getSymName() ? *module.getSymName() : "model";
    os << "model '" << name << "': " << tables.size()
       << (tables.size() == 1 ? " table, " : " tables, ") << params.size()
       << (params.size() == 1 ? " dense parameter\n" : " dense parameters\n");
    if (auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName))
      os << "  batch " << training.getBatchSize() << ", precision "
         << stringifyPrecision(training.getPrecision()) << ", dense optimizer "
         << describeOptimizer(training.getDenseOptimizer()) << "\n";

    int64_t tableBytes = 0, tableRows = 0;
    for (TableOp table : tables) {
      tableBytes += table.getStorageBytes();
      tableRows += table.getRows();
      os << llvm::format("  table @%-20s ", table.getSymName().str().c_str())
         << llvm::format("[%lld x %lld] ", (long long)table.getRows(),
                         (long long)table.getDim())
         << stringifyStorageType(table.getStorage()) << "  "
         << formatBytes(table.getStorageBytes()) << "  "
         << describeOptimizer(table.getOptimizer());
      if (table.getPlacement() != Placement::device)
        os << "  placement " << stringifyPlacement(table.getPlacement());
      os << "\n";
    }

    int64_t paramElements = 0, paramBytes = 0;
    for (ParamOp param : params) {
      auto type = cast<RankedTensorType>(param.getType());
      paramElements += type.getNumElements();
      paramBytes += type.getNumElements() *
                    type.getElementType().getIntOrFloatBitWidth() / 8;
    }

    int64_t flops = 0, bytes = 0, numOps = 0;
    forward.walk([&](CostOpInterface op) {
      flops += op.getForwardFlops();
      bytes += op.getForwardBytes();
      ++numOps;
    });

    os << "  embeddings: " << formatCount(tableRows, "rows") << ", "
       << formatBytes(tableBytes) << "\n";
    os << "  dense parameters: " << formatCount(paramElements, "") << " ("
       << formatBytes(paramBytes) << ")\n";
    os << "  forward per batch: " << formatCount(flops, "FLOP") << ", "
       << formatBytes(bytes) << " moved, " << numOps << " ops\n";
  }
};

} // namespace
