//===- embc.cpp - the embc compiler driver ---------------------------------===//
//
// embc model.json -o model.plan [--emit=plan|plan-json|report|train-ir|ir|summary]
//      [--no-select-targets] [--no-pack] [--no-fuse] [--no-batch-exchanges] [--no-plan-memory] [--report-html FILE]
//
// Reads and checks a model file, builds its emb IR, runs the training
// pipeline (-emb-autodiff, -emb-pack-params, -emb-fuse, then -emb-to-plan;
// --no-pack / --no-fuse leave out the middle two) and writes what --emit asks
// for: by default the executable plan, with its report on stdout. A bad
// model file gets one error naming its JSON pointer and exit code 1; embc
// never crashes on input.
//
//===----------------------------------------------------------------------===//

#include "embc/frontend/Model.h"
#include "embc/frontend/ModelImporter.h"
#include "embc/passes/InitAll.h"
#include "embc/passes/MemoryReport.h"
#include "embc/passes/Passes.h"
#include "embc/passes/Pipeline.h"
#include "embc/passes/ToPlan.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>

#include <unistd.h>

#ifndef EMBC_VERSION
#define EMBC_VERSION "unknown"
#endif

using namespace llvm;

namespace {
enum class Emit { Plan, PlanJson, Report, TrainIR, IR, Summary, Cuda };

cl::OptionCategory embcCategory("embc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.json>"),
                               cl::Required, cl::cat(embcCategory));
cl::opt<std::string> outputFile("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(embcCategory));
cl::opt<Emit> emitKind(
    "emit", cl::desc("What to produce"), cl::init(Emit::Plan),
    cl::values(
        clEnumValN(Emit::Plan, "plan",
                   "the executable plan for embrun (default; report on stdout)"),
        clEnumValN(Emit::PlanJson, "plan-json", "the plan as indented JSON"),
        clEnumValN(Emit::Report, "report",
                   "the plan report: memory by role, kernels, notes"),
        clEnumValN(Emit::TrainIR, "train-ir",
                   "the training IR after the pipeline (@train_step, @update)"),
        clEnumValN(Emit::IR, "ir", "the verified emb IR of the model"),
        clEnumValN(Emit::Cuda, "cuda",
                   "the plan's generated CUDA C++ (one translation unit)"),
        clEnumValN(Emit::Summary, "summary",
                   "the model summary: tables, parameters, FLOPs")),
    cl::cat(embcCategory));
cl::opt<bool> noSelectTargets(
    "no-select-targets",
    cl::desc("Do not run -emb-select-targets (a masked-token loss's logits at every position)"),
    cl::cat(embcCategory));
cl::opt<bool> noPack("no-pack",
                     cl::desc("Do not run -emb-pack-params (one buffer and "
                              "update per parameter and table)"),
                     cl::cat(embcCategory));
cl::opt<bool> noFuse("no-fuse",
                     cl::desc("Do not run -emb-fuse (one kernel per op)"),
                     cl::cat(embcCategory));
cl::opt<bool> noBatchExchanges(
    "no-batch-exchanges",
    cl::desc("Do not run -emb-batch-exchanges (sharded tables exchange one by one)"),
    cl::cat(embcCategory));
/// Where the plan may run: every plan runs on the CPU backend; a target
/// adds its program (embc::planTargets(), ToPlan.h: cpu, cuda).
const std::string &targetHelp() {
  static const std::string help = [] {
    std::string s = "The backends the plan is compiled for:";
    for (const embc::PlanTarget &t : embc::planTargets())
      s += std::string("\n  ") + t.name + ": " + t.description;
    return s;
  }();
  return help;
}
cl::opt<std::string> targetName("target", cl::desc(targetHelp()), cl::init("cpu"),
                                cl::value_desc("target"), cl::cat(embcCategory));
cl::opt<bool> withCuda("cuda", cl::desc("Same as --target=cuda"), cl::cat(embcCategory));
cl::list<std::string> overrides(
    "set",
    cl::desc("Put VALUE at the model's JSON pointer before reading it (repeatable; "
             "a value of the type the model has there; JSON, or a bare word as a string): "
             "--set /optimizer/dense/lr=0.05 --set /embeddings/0/dim=32. The plan "
             "records them"),
    cl::value_desc("/pointer=VALUE"), cl::cat(embcCategory));
cl::opt<bool> noPlanMemory("no-plan-memory",
                           cl::desc("Do not run -emb-plan-memory (buffers one "
                                    "after another, no reuse)"),
                           cl::cat(embcCategory));
cl::opt<std::string> reportHtml(
    "report-html",
    cl::desc("Also write the memory report as an HTML page with SVG charts "
             "(arena layout, live bytes, pipeline schedule)"),
    cl::value_desc("file"), cl::cat(embcCategory));
} // namespace

/// The most bytes a model file may hold; a model with 200k features is
/// about 20 MB. Reading stops there, so /dev/zero is refused, not swallowed.
constexpr size_t kMaxModelBytes = size_t(256) << 20;

/// Reads the model file (or stdin for "-"; a pipe such as bash's <(...)
/// works too) up to kMaxModelBytes.
static bool readModelText(StringRef path, std::string &text, std::string &why) {
  int fd = 0;
  if (path != "-") {
    if (std::error_code ec = sys::fs::openFileForRead(path, fd)) {
      why = ec.message();
      return false;
    }
  }
  sys::fs::file_status status;
  if (!sys::fs::status(fd, status) && status.type() == sys::fs::file_type::directory_file) {
    why = "it is a directory";
    if (fd != 0)
      ::close(fd);
    return false;
  }
  char chunk[1 << 16];
  bool ok = true;
  for (;;) {
    ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      why = std::strerror(errno);
      ok = false;
      break;
    }
    if (got == 0)
      break;
    if (text.size() + size_t(got) > kMaxModelBytes) {
      why = "larger than " + std::to_string(kMaxModelBytes >> 20) +
            " MiB, which no model file is (is it the right file?)";
      ok = false;
      break;
    }
    text.append(chunk, size_t(got));
  }
  if (fd != 0)
    ::close(fd);
  return ok;
}

/// The JSON pointer a location carries: ModelImporter gives every op a
/// NameLoc("/layers/2", file:1:1); passes may add detail (/plan/memory_budget).
static std::optional<std::string> pointerOf(mlir::Location loc) {
  if (auto name = dyn_cast<mlir::NameLoc>(loc)) {
    StringRef text = name.getName().getValue();
    return text.starts_with("/") ? std::optional(text.str()) : pointerOf(name.getChildLoc());
  }
  if (auto fused = dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location part : fused.getLocations())
      if (std::optional<std::string> pointer = pointerOf(part))
        return pointer;
  if (auto site = dyn_cast<mlir::CallSiteLoc>(loc))
    return pointerOf(site.getCallee());
  return std::nullopt;
}

/// "model.json: error at /plan/memory_budget: ...", the format of model
/// errors (frontend ModelError), with the diagnostic's notes below it.
static void printModelDiagnostic(StringRef file, mlir::Diagnostic &diag) {
  auto severity = [](mlir::DiagnosticSeverity s) {
    switch (s) {
    case mlir::DiagnosticSeverity::Error:
      return "error";
    case mlir::DiagnosticSeverity::Warning:
      return "warning";
    case mlir::DiagnosticSeverity::Note:
      return "note";
    case mlir::DiagnosticSeverity::Remark:
      return "remark";
    }
    return "error";
  };
  std::optional<std::string> pointer = pointerOf(diag.getLocation());
  errs() << file << ": " << severity(diag.getSeverity());
  if (pointer && *pointer != "/")
    errs() << " at " << *pointer;
  errs() << ": " << diag.str() << "\n";
  for (mlir::Diagnostic &note : diag.getNotes())
    errs() << file << ": note: " << note.str() << "\n";
}

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
      "  embc model.json -o model.plan    compile; train with embrun model.plan\n"
      "  embc model.json --emit=report    memory by role, kernels, notes\n"
      "  embc model.json --emit=cuda      print the generated CUDA C++\n"
      "  embc model.json --emit=ir        print the verified emb IR\n"
      "  embc model.json --emit=summary   print tables, parameters, FLOPs\n");
  const embc::PlanTarget *target =
      embc::findPlanTarget(withCuda || emitKind == Emit::Cuda ? std::string("cuda") : targetName);
  if (!target) {
    std::string names;
    for (const embc::PlanTarget &t : embc::planTargets())
      names += (names.empty() ? "" : ", ") + std::string(t.name);
    errs() << "embc: error: unknown --target '" << targetName << "' (expected " << names << ")\n";
    return 1;
  }

  std::string text, why;
  if (!readModelText(inputFile, text, why)) {
    errs() << "embc: error: cannot read '" << inputFile << "': " << why << "\n";
    return 1;
  }
  for (const std::string &out : {std::string(outputFile), std::string(reportHtml)})
    if (!out.empty() && out != "-" && inputFile != "-" && sys::fs::equivalent(inputFile, out)) {
      errs() << "embc: error: '" << out << "' is the model file itself; "
             << "choose another output (-o FILE.plan)\n";
      return 1;
    }

  embc::frontend::ModelError error;
  const std::vector<std::string> sets(overrides.begin(), overrides.end());
  std::optional<embc::frontend::Model> model = embc::frontend::parseModel(text, error, sets);
  if (!model) {
    errs() << error.format(inputFile) << "\n";
    return 1;
  }

  mlir::DialectRegistry registry;
  embc::registerAllEmbDialects(registry);
  mlir::MLIRContext context(registry);
  // A pass's diagnostic names the model file and the JSON pointer its op
  // came from, as a model error does; never the IR.
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler diagHandler(&context, [&](mlir::Diagnostic &diag) {
    printModelDiagnostic(inputFile, diag);
    return success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      embc::frontend::importModel(*model, context, inputFile);
  if (!module) {
    errs() << "embc: internal error: the IR built for '" << inputFile
           << "' does not verify (please report this with the model file)\n";
    return 2;
  }

  if (!sets.empty()) // recorded in the plan (-emb-to-plan)
    (*module)->setAttr(embc::kOverridesAttrName,
                       mlir::Builder(&context).getStrArrayAttr(
                           std::vector<llvm::StringRef>(sets.begin(), sets.end())));

  if (emitKind == Emit::Summary)
    return failed(printSummary(*module, outputFile)) ? 1 : 0;

  std::string message;
  if (emitKind == Emit::Plan && outputFile == "-" &&
      sys::Process::StandardOutIsDisplayed()) {
    errs() << "embc: error: refusing to write a binary plan to a terminal; "
              "use -o FILE.plan (or --emit=plan-json)\n";
    return 1;
  }
  std::unique_ptr<ToolOutputFile> out =
      mlir::openOutputFile(outputFile, &message);
  if (!out) {
    errs() << "embc: error: " << message << "\n";
    return 1;
  }
  // --emit=ir and --emit=train-ir: the module as it is at that point.
  auto emitModule = [&] {
    module->print(out->os());
    out->os() << "\n";
    out->keep();
    return 0;
  };
  if (emitKind == Emit::IR)
    return emitModule();

  embc::TrainingPipelineOptions pipeline;
  pipeline.selectTargets = !noSelectTargets;
  pipeline.pack = !noPack;
  pipeline.fuse = !noFuse;
  pipeline.batchExchanges = !noBatchExchanges;
  pipeline.planMemory = !noPlanMemory;
  // Disk tables run on the CPU backend only: a plan for a GPU keeps them off.
  pipeline.diskTables = target->generate == nullptr;
  if (failed(embc::runTrainingPipeline(*module, pipeline)))
    return 1;
  if (emitKind == Emit::TrainIR)
    return emitModule();
  FailureOr<embc::runtime::Plan> plan =
      embc::buildPlan(*module, *target);
  if (failed(plan))
    return 1;
  // embrun will validate the plan; a plan it would refuse is a compiler bug.
  // (Serialised once: the bytes checked are the bytes written.)
  std::string planError, planBytes = embc::runtime::serializePlan(*plan);
  if (!embc::runtime::deserializePlan(planBytes, planError)) {
    errs() << "embc: internal error: the plan built for '" << inputFile
           << "' is invalid: " << planError << "\n";
    return 2;
  }
  if (!reportHtml.empty()) {
    std::unique_ptr<ToolOutputFile> html = mlir::openOutputFile(reportHtml, &message);
    if (!html) {
      errs() << "embc: error: --report-html: " << message << "\n";
      return 1;
    }
    html->os() << embc::formatReportHtml(*plan);
    html->keep();
  }
  switch (emitKind) {
  case Emit::PlanJson:
    out->os() << embc::runtime::planToJson(*plan).dump(2) << "\n";
    break;
  case Emit::Report:
    out->os() << embc::formatPlanReport(*plan);
    break;
  case Emit::Cuda:
    out->os() << plan->cuda.source;
    break;
  default:
    out->os() << planBytes;
    // The report goes where it does not mix with a plan written to stdout.
    (outputFile == "-" ? errs() : outs())
        << "embc: wrote " << (outputFile == "-" ? std::string("<stdout>") : std::string(outputFile))
        << "\n" << embc::formatPlanReport(*plan, /*everything=*/false);
    break;
  }
  out->keep();
  return 0;
}
