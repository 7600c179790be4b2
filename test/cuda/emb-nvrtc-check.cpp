//===- emb-nvrtc-check.cpp - compile plan programs with NVRTC, no GPU ----===//
//
// emb-nvrtc-check [--arch sm_90] [--keep DIR] FILE.cu...
//
// Compiles each generated CUDA program (`embc M.json --emit=cuda`) to a CUBIN
// exactly as the real device does (runtime/lib/cuda/NvrtcCompiler.cpp: same
// options, same NVRTC), which needs no driver and no GPU. Prints one line per
// file; a failure prints NVRTC's log (and, with --keep, where the failing
// source was copied) and makes the exit status 1.
//
//===----------------------------------------------------------------------===//

#include "NvrtcCompiler.h"

#include "embc/runtime/cuda/Device.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace embc::runtime::cuda;

int main(int argc, char **argv) {
  std::string arch = "sm_90", keep;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--arch" || a == "--keep") && i + 1 < argc)
      (a == "--arch" ? arch : keep) = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::printf("usage: emb-nvrtc-check [--arch sm_90] [--keep DIR] FILE.cu...\n");
      return 0;
    } else
      files.push_back(a);
  }
  if (files.empty()) {
    std::fprintf(stderr, "emb-nvrtc-check: no input (usage: emb-nvrtc-check FILE.cu...)\n");
    return 2;
  }
  std::printf("NVRTC %s, %s, options:", nvrtcVersionString().c_str(), arch.c_str());
  for (const std::string &o : nvrtcOptions(arch))
    std::printf(" %s", o.c_str());
  std::printf("\n");

  int failed = 0;
  for (const std::string &file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::printf("FAIL %s: cannot read it\n", file.c_str());
      ++failed;
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    auto start = std::chrono::steady_clock::now();
    try {
      std::string log;
      std::vector<char> cubin = compileCubin(text.str(), arch, file, &log, keep);
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("OK   %s: %zu bytes of CUBIN in %.1f s\n", file.c_str(), cubin.size(), seconds);
      if (!log.empty()) {
        // Warnings do not fail the test; show how many and the first few.
        size_t count = 0, at = 0, shown = std::string::npos;
        while ((at = log.find("warning", at)) != std::string::npos) {
          if (++count == 5)
            shown = log.rfind('\n', at);
          at += 7;
        }
        std::printf("     %zu NVRTC warnings%s:\n%s\n", count, count > 4 ? ", the first 4" : "",
                    log.substr(0, shown).c_str());
      }
    } catch (const DeviceError &e) {
      std::printf("FAIL %s: %s\n", file.c_str(), e.what());
      ++failed;
    }
    std::fflush(stdout);
  }
  std::printf("%zu compiled, %d failed\n", files.size() - size_t(failed), failed);
  return failed ? 1 : 0;
}
