//===- embrun.cpp - run a compiled embc plan -------------------------------===//
//
// embrun PLAN [--steps N | --epochs E] [--data KIND:PATH] ...
//
// Links the runtime only (no LLVM/MLIR), so it runs where the compiler is not
// installed.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/RunOptions.h"

#include <fstream>
#include <iostream>

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  embc::runtime::ParseResult parsed = embc::runtime::parseRunOptions(args);
  if (!parsed.options) {
    (parsed.exitCode == 0 ? std::cout : std::cerr) << parsed.message;
    return parsed.exitCode;
  }
  const embc::runtime::RunOptions &options = *parsed.options;
  std::ifstream plan(options.planPath, std::ios::binary);
  if (!plan) {
    std::cerr << "embrun: error: cannot open plan '" << options.planPath
              << "'\n";
    return 1;
  }
  // The plan format and the executor come with the training pipeline; until
  // then embrun refuses every plan rather than pretending to train.
  std::cerr << "embrun: error: '" << options.planPath
            << "': this embrun cannot execute plans yet (the plan format is "
               "not implemented)\n";
  return 1;
}
