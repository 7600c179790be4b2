//===- emb-nvrtc-check.cpp - compile plan programs with NVRTC, no GPU ----===//
//
// emb-nvrtc-check [--arch sm_90] [--keep DIR] [--resources] FILE.cu...
//
// Compiles each generated CUDA program (`embc M.json --emit=cuda`) to a CUBIN
// exactly as the real device does (runtime/lib/cuda/NvrtcCompiler.cpp: same
// options, same NVRTC), which needs no driver and no GPU. Prints one line per
// file; a failure prints NVRTC's log (and, with --keep, where the failing
// source was copied) and makes the exit status 1.
//
// --resources also asks ptxas for each kernel's resources and prints them,
// one line per kernel, failing the file when a kernel spills, has a stack
// frame (local memory), or needs more registers than its __launch_bounds__
// block can have (65536 per block).
//
//===----------------------------------------------------------------------===//

#include "NvrtcCompiler.h"

#include "embc/runtime/cuda/Device.h"

#include <chrono>
#include <map>
#include <regex>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace embc::runtime::cuda;

namespace {

struct Resources {
  long registers = -1, stack = 0, spillStores = 0, spillLoads = 0;
};

/// Per kernel, from ptxas's --verbose report in the NVRTC log.
std::map<std::string, Resources> parseResources(const std::string &log) {
  std::map<std::string, Resources> out;
  static const std::regex entry(R"(Compiling entry function '([A-Za-z0-9_]+)')");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  std::string current;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      current = m[1];
      out[current];
    } else if (!current.empty() && std::regex_search(line, m, frame)) {
      out[current].stack = std::stol(m[1]);
      out[current].spillStores = std::stol(m[2]);
      out[current].spillLoads = std::stol(m[3]);
    } else if (!current.empty() && std::regex_search(line, m, used)) {
      out[current].registers = std::stol(m[1]);
    }
  }
  return out;
}

/// Each kernel's __launch_bounds__ block, from the source.
std::map<std::string, long> launchBounds(const std::string &source) {
  std::map<std::string, long> out;
  static const std::regex bound(R"(__launch_bounds__\((\d+)(?:, *\d+)?\) ([A-Za-z0-9_]+)\()");
  for (std::sregex_iterator it(source.begin(), source.end(), bound), end; it != end; ++it)
    out[(*it)[2]] = std::stol((*it)[1]);
  return out;
}

/// Prints each kernel's line; returns how many break the rules.
int reportResources(const std::string &log, const std::string &source) {
  const std::map<std::string, Resources> kernels = parseResources(log);
  const std::map<std::string, long> bounds = launchBounds(source);
  int bad = 0;
  for (const auto &[name, r] : kernels) {
    auto b = bounds.find(name);
    const long block = b == bounds.end() ? 0 : b->second;
    std::string why;
    if (r.registers < 0)
      why = "no register count in the ptxas report";
    else if (r.spillStores || r.spillLoads)
      why = "spills";
    else if (r.stack)
      why = "uses local memory (a stack frame)";
    else if (block && r.registers * block > 65536)
      why = "needs more registers than a block of " + std::to_string(block) + " can have";
    std::printf("     %-4s %-58s %3ld regs  block %4ld  stack %ld  spill %ld/%ld%s%s\n",
                why.empty() ? "ok" : "BAD", name.c_str(), r.registers, block, r.stack,
                r.spillStores, r.spillLoads, why.empty() ? "" : ": ", why.c_str());
    bad += !why.empty();
  }
  if (kernels.empty()) {
    std::printf("     BAD  ptxas reported no kernel (is --ptxas-options honoured?)\n");
    ++bad;
  }
  return bad;
}

} // namespace

int main(int argc, char **argv) {
  std::string arch = "sm_90", keep;
  bool resources = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--resources")
      resources = true;
    else if ((a == "--arch" || a == "--keep") && i + 1 < argc)
      (a == "--arch" ? arch : keep) = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::printf("usage: emb-nvrtc-check [--arch sm_90] [--keep DIR] [--resources] FILE.cu...\n");
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
      std::vector<char> cubin =
          compileCubin(text.str(), arch, file, &log, keep,
                       resources ? std::vector<std::string>{"--ptxas-options=--verbose"}
                                 : std::vector<std::string>{});
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("OK   %s: %zu bytes of CUBIN in %.1f s\n", file.c_str(), cubin.size(), seconds);
      if (resources) {
        if (int bad = reportResources(log, text.str())) {
          std::printf("FAIL %s: %d kernel(s) break the resource rules (above)\n", file.c_str(),
                      bad);
          ++failed;
        }
        log.clear(); // the report is not a warning
      }
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
