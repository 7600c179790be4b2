//===- embrun.cpp - run a compiled embc plan -------------------------------===//
//
// embrun PLAN [--steps N | --epochs E] [--data KIND:PATH] [--eval KIND:PATH]
//             [--eval-every N] [--seed S] [--log FILE.jsonl] [--save DIR]
//             [--resume DIR] [--export-embeddings FILE] [--threads N]
//
// Validates the plan, then trains it on the CPU backend. Links the runtime
// only (no LLVM/MLIR), so it runs where the compiler is not installed. Every
// failure (a bad plan, data or checkpoint) is one clear line and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/Plan.h"
#include "embc/runtime/RunOptions.h"
#include "embc/runtime/exec/Trainer.h"

#include <unistd.h>

#include <exception>
#include <iostream>

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  embc::runtime::ParseResult parsed = embc::runtime::parseRunOptions(args);
  if (!parsed.options) {
    (parsed.exitCode == 0 ? std::cout : std::cerr) << parsed.message;
    return parsed.exitCode;
  }
  const embc::runtime::RunOptions &options = *parsed.options;
  if (options.device == "cuda") {
    std::cerr << "embrun: error: --device cuda: this embrun was built without "
                 "the CUDA backend; use --device cpu\n";
    return 1;
  }
  std::string error;
  std::optional<embc::runtime::Plan> plan =
      embc::runtime::readPlanFile(options.planPath, error);
  if (!plan) {
    std::cerr << "embrun: error: " << error << "\n";
    return 1;
  }
  try {
    embc::runtime::train(*plan, options, std::cout, isatty(STDOUT_FILENO));
  } catch (const std::exception &e) {
    std::cout.flush();
    std::cerr << "\nembrun: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
