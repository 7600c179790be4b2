//===- NvrtcCompiler.cpp - plan programs to CUBIN with NVRTC -------------===//

#include "NvrtcCompiler.h"

#include "CudaCheck.h"
#include "embc/runtime/FreshFile.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace embc::runtime::cuda;
namespace fs = std::filesystem;

std::string embc::runtime::cuda::smArch(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::vector<std::string> embc::runtime::cuda::nvrtcOptions(const std::string &arch) {
  return {
      "--gpu-architecture=" + arch, // SASS for this GPU: no driver JIT at load
      "-std=c++17",
      "-default-device",
      "-lineinfo", // source lines in Nsight Compute / compute-sanitizer reports
      // NVRTC contracts a * b + c into one FMA by default; the CPU backend
      // rounds the product first. Lookups and the fused embedding backward +
      // update must be bit-identical to it, so no contraction anywhere.
      "--fmad=false",
      // Spelled out although they are NVRTC's defaults: IEEE division and
      // square root, denormals kept (what --use_fast_math would change).
      "--prec-div=true",
      "--prec-sqrt=true",
      "--ftz=false",
      // The optimizer's passes on every core: a program with the sequence
      // kernels' length variants compiles several times faster.
      "--split-compile=0",
  };
}

std::string embc::runtime::cuda::nvrtcVersionString() {
  int major = 0, minor = 0;
  EMB_NVRTC_CHECK(nvrtcVersion(&major, &minor), "asking NVRTC its version");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> embc::runtime::cuda::nvrtcSupportedArchs() {
  int count = 0;
  EMB_NVRTC_CHECK(nvrtcGetNumSupportedArchs(&count), "listing NVRTC's architectures");
  std::vector<int> archs(size_t(count > 0 ? count : 0));
  if (count > 0)
    EMB_NVRTC_CHECK(nvrtcGetSupportedArchs(archs.data()), "listing NVRTC's architectures");
  std::vector<std::string> out;
  for (int a : archs)
    out.push_back("sm_" + std::to_string(a));
  return out;
}

namespace {

/// Owns an nvrtcProgram (destroyed on every path, exceptions included).
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p)
      nvrtcDestroyProgram(&p);
  }
};

std::string programLog(nvrtcProgram p) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size <= 1)
    return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS)
    return "";
  log.resize(size - 1); // the terminating NUL
  return log;
}

std::string hashKey(const std::string &source, const std::string &arch) {
  // Everything that changes the CUBIN: the source, the options (which name
  // the architecture) and the compiler.
  std::string material = source;
  for (const std::string &o : nvrtcOptions(arch))
    material += '\0' + o;
  material += '\0' + nvrtcVersionString();
  XXH128_hash_t h = XXH3_128bits(material.data(), material.size());
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

bool readFile(const fs::path &path, std::vector<char> &bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return in.good() || in.eof();
}

} // namespace

std::vector<char> embc::runtime::cuda::compileCubin(const std::string &source,
                                                    const std::string &arch,
                                                    const std::string &programName,
                                                    std::string *log,
                                                    const std::string &keepFailed,
                                                    const std::vector<std::string> &extraOptions) {
  const std::string what = "compiling " + programName + " for " + arch;
  Program prog;
  EMB_NVRTC_CHECK(nvrtcCreateProgram(&prog.p, source.c_str(), programName.c_str(), 0, nullptr,
                                     nullptr),
                  what);
  std::vector<std::string> options = nvrtcOptions(arch);
  options.insert(options.end(), extraOptions.begin(), extraOptions.end());
  std::vector<const char *> argv;
  for (const std::string &o : options)
    argv.push_back(o.c_str());
  nvrtcResult res = nvrtcCompileProgram(prog.p, int(argv.size()), argv.data());
  std::string text = programLog(prog.p);
  if (res != NVRTC_SUCCESS) {
    std::string message = "NVRTC could not compile " + programName + " for " + arch + ": " +
                          nvrtcGetErrorString(res);
    if (!keepFailed.empty()) {
      // The log's line numbers refer to this file.
      std::error_code ec;
      fs::create_directories(keepFailed, ec);
      fs::path copy = fs::path(keepFailed) / ("failed-" + hashKey(source, arch) + ".cu");
      std::ofstream out(copy, std::ios::binary);
      out << source;
      if (out)
        message += " (source kept in " + copy.string() + ")";
    }
    std::string options;
    for (const std::string &o : nvrtcOptions(arch))
      options += " " + o;
    message += "\noptions:" + options + "\n" + (text.empty() ? "(no log)" : text);
    throw DeviceError(message);
  }
  if (log)
    *log = text;
  size_t size = 0;
  EMB_NVRTC_CHECK(nvrtcGetCUBINSize(prog.p, &size), what);
  std::vector<char> cubin(size);
  EMB_NVRTC_CHECK(nvrtcGetCUBIN(prog.p, cubin.data()), what);
  if (cubin.empty())
    throw DeviceError("NVRTC returned an empty CUBIN while " + what);
  return cubin;
}

std::vector<char> embc::runtime::cuda::cachedCubin(const std::string &source,
                                                   const std::string &arch, bool &hit,
                                                   std::string &cachedPath) {
  fs::path dir = fs::path(cacheDirectory()) / "nvrtc";
  fs::path path = dir / (hashKey(source, arch) + "-" + arch + ".cubin");
  cachedPath = path.string();
  std::vector<char> cubin;
  if (readFile(path, cubin) && !cubin.empty()) {
    hit = true;
    return cubin;
  }
  hit = false;
  std::string warnings;
  cubin = compileCubin(source, arch, "embc_plan.cu", &warnings, dir.string());
  if (!warnings.empty())
    std::fprintf(stderr, "embc: NVRTC warnings for the plan program:\n%s\n", warnings.c_str());
  // Written to a private name and renamed into place, so concurrent runs
  // (several ranks on one machine) never read a half-written file.
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  if (int fd = createFresh(tmp.string()); fd < 0) { // never through a planted link
    ec = std::make_error_code(std::errc::io_error);
  } else {
    if (!writeAll(fd, cubin.data(), cubin.size()))
      ec = std::make_error_code(std::errc::io_error);
    if (::close(fd) != 0)
      ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec)
    fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    std::fprintf(stderr, "embc: warning: could not cache the compiled program in %s\n",
                 path.string().c_str());
  }
  return cubin;
}

void embc::runtime::cuda::forgetCachedCubin(const std::string &cachedPath) {
  std::error_code ec;
  fs::remove(cachedPath, ec);
}
