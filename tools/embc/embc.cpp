//===- embc.cpp - the embc compiler driver ---------------------------------===//
//
// embc model.json [-o FILE] [--emit=ir|summary]
//
// Reads and checks a model file, builds its emb IR and prints what --emit
// asks for. A bad model file gets one error naming its JSON pointer and exit
// code 1; embc never crashes on input.
//
//===----------------------------------------------------------------------===//

#include "embc/frontend/Model.h"
#include "embc/frontend/ModelImporter.h"
#include "embc/passes/InitAll.h"
#include "embc/passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#ifndef EMBC_VERSION
#define EMBC_VERSION "unknown"
#endif

using namespace llvm;

namespace {
enum class Emit { IR, Summary };

cl::OptionCategory embcCategory("embc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.json>"),
                               cl::Required, cl::cat(embcCategory));
cl::opt<std::string> outputFile("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(embcCategory));
cl::opt<Emit> emitKind(
    "emit", cl::desc("What to produce"), cl::init(Emit::IR),
    cl::values(clEnumValN(Emit::IR, "ir", "the verified emb IR"),
               clEnumValN(Emit::Summary, "summary",
                          "the model summary: tables, parameters, FLOPs")),
    cl::cat(embcCategory));
} // namespace

/// Prints the model summary of `module` to `os` through -emb-print-summary.
static LogicalResult printSummary(mlir::ModuleOp module, StringRef output) {
  mlir::PassManager pm(module.getContext());
  embc::EmbPrintSummaryPassOptions options;
  options.outputFile = output.str();
  pm.addPass(embc::createEmbPrintSummaryPass(options));
  return pm.run(module);
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "embc " << EMBC_VERSION << " (model format "
       << embc::frontend::kModelFormat << ", MLIR " << LLVM_VERSION_STRING
       << ")\n";
  });
  cl::HideUnrelatedOptions(embcCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "embc: compile an embedding model (model.json) for training\n\n"
      "  embc model.json --emit=ir        print the verified emb IR\n"
      "  embc model.json --emit=summary   print tables, parameters, FLOPs\n");

  auto buffer = MemoryBuffer::getFileOrSTDIN(inputFile);
  if (std::error_code ec = buffer.getError()) {
    errs() << "embc: error: cannot read '" << inputFile << "': "
           << ec.message() << "\n";
    return 1;
  }

  embc::frontend::ModelError error;
  std::optional<embc::frontend::Model> model =
      embc::frontend::parseModel((*buffer)->getBuffer(), error);
  if (!model) {
    errs() << error.format(inputFile) << "\n";
    return 1;
  }

  mlir::DialectRegistry registry;
  embc::registerAllEmbDialects(registry);
  mlir::MLIRContext context(registry);
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      embc::frontend::importModel(*model, context, inputFile);
  if (!module) {
    errs() << "embc: internal error: the IR built for '" << inputFile
           << "' does not verify (please report this with the model file)\n";
    return 2;
  }

  if (emitKind == Emit::Summary)
    return failed(printSummary(*module, outputFile)) ? 1 : 0;

  std::string message;
  std::unique_ptr<ToolOutputFile> out =
      mlir::openOutputFile(outputFile, &message);
  if (!out) {
    errs() << "embc: error: " << message << "\n";
    return 1;
  }
  module->print(out->os());
  out->os() << "\n";
  out->keep();
  return 0;
}
