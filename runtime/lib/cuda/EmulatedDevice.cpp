//===- EmulatedDevice.cpp - the CUDA device, emulated on the CPU ----------===//
//
// createEmulatedDevice(): the Device of Device.h on the CPU, so that CI
// without a GPU runs the plan's generated kernels and compares them with
// the CPU backend.
//
//  - loadProgram compiles "#include <Emulation.h's text>" + the program with
//    the host C++ compiler into a shared object, cached under
//    cacheDirectory()/cuda-emulated by a hash of everything that goes into
//    it, and dlopens a private copy of it (so two devices in one process do
//    not share `__shared__` statics or the hooks).
//  - launch runs the blocks one after another; the threads of a block are
//    fibers (Fibers.h) scheduled round-robin: each runs until it reaches a
//    barrier, a shuffle or its end; when none can run, the scheduler releases
//    the complete barrier or the warps whose shuffle is complete, or reports
//    the deadlock (a barrier in divergent code, a shuffle with an exited
//    lane) naming the kernel and block. Single OS thread: deterministic.
//  - gemm and library calls run on the CPU (EmulatedLibrary.cpp); graph
//    capture records closures and replay runs them.
//
//===----------------------------------------------------------------------===//

#include "EmulatedLibrary.h"
#include "Emulation.h"
#include "Fibers.h"

#include "embc/runtime/cuda/Device.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <unordered_map>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace embc::runtime::cuda;
using namespace embc::runtime::cuda::emu;
namespace fs = std::filesystem;

namespace {

//===----------------------------------------------------------------------===//
// Compiling and loading the program
//===----------------------------------------------------------------------===//

/// The flags every program is compiled with. -ffp-contract=off: no fused
/// multiply-adds the CPU backend would not have (compilers differ in their
/// default); -fno-strict-aliasing: CUDA code reinterprets pointers freely
/// and nvcc does not punish it.
constexpr const char *kCompileFlags =
    "-std=c++17 -O2 -shared -fPIC -ffp-contract=off -fno-strict-aliasing -w";

std::string hostCompiler() {
  const char *cxx = std::getenv("EMBC_HOST_CXX");
  return cxx && *cxx ? cxx : "c++";
}

/// 128-bit FNV-1a (two 64-bit lanes with different bases): a cache key, not
/// a defence against adversarial collisions.
std::string hashHex(const std::initializer_list<std::string_view> parts) {
  uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  auto mix = [&](unsigned char c) {
    h1 = (h1 ^ c) * 0x100000001b3ull;
    h2 = (h2 ^ c ^ 0x5a) * 0x100000001b3ull;
  };
  for (std::string_view p : parts) {
    for (unsigned char c : p)
      mix(c);
    mix(0); // separator: ("ab","c") != ("a","bc")
  }
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
  return buf;
}

void writeFile(const fs::path &path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), std::streamsize(text.size()));
  if (!out.flush())
    throw DeviceError("emulated device: cannot write " + path.string());
}

/// The first `maxLines` lines of a compiler log, then only its "error:"
/// lines (notes on overload candidates can hide the second error).
std::string readLog(const fs::path &path, int maxLines) {
  std::ifstream in(path);
  std::string line, text;
  int lines = 0, skipped = 0;
  while (std::getline(in, line)) {
    if (lines++ < maxLines || (line.find("error:") != std::string::npos && lines < 4 * maxLines))
      text += line + "\n";
    else
      ++skipped;
  }
  if (skipped)
    text += "... (" + std::to_string(skipped) + " more lines)\n";
  return text;
}

std::string shellQuote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// A process-unique suffix for temporary names (concurrent test processes
/// and devices share the cache directory).
std::string uniqueSuffix() {
  static std::atomic<unsigned> counter{0};
  return std::to_string(getpid()) + "-" + std::to_string(counter++);
}

/// The cached shared object of `source`, compiled now when missing. Builds
/// in a private directory and renames the result into place, so concurrent
/// processes never see a half-written object.
fs::path compileProgram(const std::string &source) {
  const std::string cxx = hostCompiler();
  const std::string key = hashHex({kEmulationHeader, cxx, kCompileFlags, source});
  const fs::path dir = fs::path(cacheDirectory()) / "cuda-emulated";
  const fs::path object = dir / ("program-" + key + ".so");
  std::error_code ec;
  if (fs::exists(object, ec))
    return object;
  fs::create_directories(dir, ec);
  if (ec)
    throw DeviceError("emulated device: cannot create " + dir.string() + ": " + ec.message());

  const fs::path work = dir / ("build-" + key + "-" + uniqueSuffix());
  fs::create_directories(work, ec);
  if (ec)
    throw DeviceError("emulated device: cannot create " + work.string() + ": " + ec.message());
  writeFile(work / "embc_cuda_emulation.h", kEmulationHeader);
  // The program in a file of its own: the compiler's messages name
  // program.cu with its own line numbers.
  writeFile(work / "program.cu", source);
  writeFile(work / "program.cpp", "#include \"embc_cuda_emulation.h\"\n#include \"program.cu\"\n");
  const std::string command = "cd " + shellQuote(work.string()) + " && " + cxx + " " +
                              kCompileFlags + " -o program.so program.cpp > compile.log 2>&1";
  const int status = std::system(command.c_str());
  if (status != 0 || !fs::exists(work / "program.so", ec)) {
    const std::string log = readLog(work / "compile.log", 40);
    // Keep the failed sources for inspection, one directory per program.
    const fs::path kept = dir / ("failed-" + key);
    fs::remove_all(kept, ec);
    fs::rename(work, kept, ec);
    if (ec)
      fs::remove_all(work, ec);
    std::string why = WIFEXITED(status) && WEXITSTATUS(status) == 127
                          ? "the host compiler '" + cxx + "' was not found (set EMBC_HOST_CXX)"
                          : "the host compiler '" + cxx + "' failed";
    throw DeviceError("emulated device: compiling the CUDA program: " + why + " (sources in " +
                      kept.string() + "):\n" + log);
  }
  fs::rename(work / "program.so", object, ec);
  if (ec && !fs::exists(object))
    throw DeviceError("emulated device: cannot store " + object.string() + ": " + ec.message());
  fs::remove_all(work, ec);
  return object;
}

//===----------------------------------------------------------------------===//
// The block scheduler
//===----------------------------------------------------------------------===//

using KernelFn = void (*)(EmbArgs);

/// Runs the blocks of one launch. The hooks' `scheduler` points here while
/// the launch runs; the hook functions are entered on a thread's fiber.
class BlockRun {
public:
  BlockRun(FiberGroup &fibers, EmbEmuHooks &hooks, KernelFn fn, const EmbArgs &args)
      : fibers_(fibers), hooks_(hooks), fn_(fn), args_(args) {}

  /// Runs the whole grid; returns an empty string, or what went wrong.
  std::string run(const int64_t grid[3], int threads);

private:
  enum class State : uint8_t { Running, Barrier, Shuffle, Done };
  struct Thread {
    State state;
    int srcLane;
    unsigned mask;
    uint64_t value, result;
  };

  static void threadMain(void *self, int) {
    auto *run = static_cast<BlockRun *>(self);
    run->fn_(run->args_);
  }
  static void hookSync(void *self) {
    auto *run = static_cast<BlockRun *>(self);
    run->threads_[size_t(run->current_)].state = State::Barrier;
    run->fibers_.yield();
  }
  static unsigned long long hookShuffle(void *self, unsigned mask, unsigned long long value,
                                        int srcLane) {
    auto *run = static_cast<BlockRun *>(self);
    Thread &t = run->threads_[size_t(run->current_)];
    t.state = State::Shuffle;
    t.mask = mask;
    t.value = value;
    t.srcLane = srcLane;
    run->fibers_.yield();
    return t.result;
  }
  static void hookMisaligned(void *self, const void *address, unsigned bytes, int store) {
    auto *run = static_cast<BlockRun *>(self);
    if (!run->fault_.empty())
      return; // the first one is reported
    char text[160];
    std::snprintf(text, sizeof text,
                  "thread %d: a %u-byte vector %s at %p, which is not %u-byte aligned (a GPU "
                  "faults: misaligned address)",
                  run->current_, bytes, store ? "store" : "load", address, bytes);
    run->fault_ = text;
  }

  std::string runBlock();
  bool releaseShuffles();
  std::string describeDeadlock() const;

  FiberGroup &fibers_;
  EmbEmuHooks &hooks_;
  KernelFn fn_;
  const EmbArgs &args_;
  std::vector<Thread> threads_;
  int current_ = -1;
  std::string fault_; ///< the first misaligned vector access of the launch
};

std::string BlockRun::run(const int64_t grid[3], int threads) {
  threads_.resize(size_t(threads));
  hooks_.scheduler = this;
  hooks_.syncthreads = &BlockRun::hookSync;
  hooks_.shuffle = &BlockRun::hookShuffle;
  hooks_.misaligned = &BlockRun::hookMisaligned;
  fault_.clear();
  hooks_.blockDim = {unsigned(threads), 1, 1};
  hooks_.gridDim = {unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2])};
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        hooks_.blockIdx = {unsigned(x), unsigned(y), unsigned(z)};
        std::string error = runBlock();
        if (!error.empty())
          return "block (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                 std::to_string(z) + "): " + error;
      }
  return {};
}

std::string BlockRun::runBlock() {
  const int n = int(threads_.size());
  fibers_.start(n, &BlockRun::threadMain, this);
  for (Thread &t : threads_)
    t.state = State::Running;
  for (;;) {
    // One round: every runnable thread runs to its next barrier, shuffle or end.
    for (int i = 0; i < n; ++i) {
      if (threads_[size_t(i)].state != State::Running)
        continue;
      current_ = i;
      hooks_.threadIdx = {unsigned(i), 0, 0};
      hooks_.lane = unsigned(i % 32);
      if (fibers_.resume(i))
        threads_[size_t(i)].state = State::Done;
    }
    current_ = -1;
    int done = 0, barrier = 0;
    for (const Thread &t : threads_)
      done += t.state == State::Done, barrier += t.state == State::Barrier;
    if (done == n)
      return fault_;
    if (releaseShuffles())
      continue;
    if (barrier == n) { // the whole block is at the barrier
      for (Thread &t : threads_)
        t.state = State::Running;
      continue;
    }
    return describeDeadlock();
  }
}

/// Releases every group of lanes whose shuffle all its lanes have reached:
/// the lanes of the caller's warp in its `mask` (those the block has).
bool BlockRun::releaseShuffles() {
  const int n = int(threads_.size());
  bool released = false;
  for (int i = 0; i < n; ++i) {
    const Thread &t = threads_[size_t(i)];
    if (t.state != State::Shuffle)
      continue;
    const int base = i / 32 * 32, end = std::min(n, base + 32);
    const unsigned mask = t.mask | (1u << (i - base)); // the caller takes part regardless
    bool complete = true;
    for (int l = base; l < end && complete; ++l)
      if (mask >> (l - base) & 1u)
        complete =
            threads_[size_t(l)].state == State::Shuffle && threads_[size_t(l)].mask == t.mask;
    if (!complete)
      continue;
    // All results first: a lane reads its source's value of this shuffle.
    for (int l = base; l < end; ++l) {
      if (!(mask >> (l - base) & 1u))
        continue;
      Thread &u = threads_[size_t(l)];
      const int src = u.srcLane < 0 || u.srcLane >= end - base ? -1 : base + u.srcLane;
      u.result = src >= 0 && (mask >> (src - base) & 1u) ? threads_[size_t(src)].value : u.value;
    }
    for (int l = base; l < end; ++l)
      if (mask >> (l - base) & 1u)
        threads_[size_t(l)].state = State::Running;
    released = true;
  }
  return released;
}

std::string BlockRun::describeDeadlock() const {
  int count[4] = {0, 0, 0, 0}, first[4] = {-1, -1, -1, -1};
  for (int i = 0; i < int(threads_.size()); ++i) {
    const int s = int(threads_[size_t(i)].state);
    if (count[s]++ == 0)
      first[s] = i;
  }
  std::ostringstream os;
  os << "deadlock among its " << threads_.size() << " threads:";
  const char *what[4] = {"running", "wait at __syncthreads", "wait at a warp shuffle",
                         "have exited"};
  for (int s = 1; s < 4; ++s)
    if (count[s])
      os << " " << count[s] << " " << what[s] << " (the first: thread " << first[s] << ");";
  if (count[int(State::Barrier)] && count[int(State::Done)])
    os << " a __syncthreads that not every thread of the block reaches (divergent code)";
  else if (count[int(State::Shuffle)])
    os << " a warp shuffle that not every lane in its mask reaches, or lanes that wait for each "
          "other at different shuffles or barriers";
  else
    os << " threads wait at barriers the others never reach";
  return os.str();
}

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

class EmulatedDevice final : public Device {
public:
  ~EmulatedDevice() override {
    if (library_)
      dlclose(library_);
  }

  std::string description() const override { return "emulated CUDA (CPU)"; }
  std::string arch() const override { return "sm_90"; }

  void loadProgram(const std::string &source) override {
    if (library_)
      throw DeviceError("emulated device: a program is already loaded");
    const fs::path object = compileProgram(source);
    // dlopen shares a library opened twice by the same name or file; a
    // private copy gives this device its own statics (shared memory) and
    // hooks. The copy is unlinked once mapped.
    const fs::path copy = object.parent_path() / ("load-" + uniqueSuffix() + ".so");
    std::error_code ec;
    fs::copy_file(object, copy, fs::copy_options::overwrite_existing, ec);
    if (ec)
      throw DeviceError("emulated device: cannot copy " + object.string() + ": " + ec.message());
    library_ = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    const char *why = library_ ? nullptr : dlerror();
    fs::remove(copy, ec);
    if (!library_)
      throw DeviceError("emulated device: cannot load " + object.string() + ": " +
                        (why ? why : "unknown error"));
    auto hooks = reinterpret_cast<EmbEmuHooks *(*)()>(dlsym(library_, kHooksSymbol));
    if (!hooks)
      throw DeviceError("emulated device: " + object.string() + " lacks " + kHooksSymbol);
    hooks_ = hooks();
  }

  KernelHandle kernel(const std::string &entry) override {
    if (!library_)
      throw DeviceError("emulated device: kernel '" + entry + "' requested before loadProgram");
    if (auto it = kernelIds_.find(entry); it != kernelIds_.end())
      return it->second;
    void *fn = dlsym(library_, entry.c_str());
    if (!fn)
      throw DeviceError("emulated device: the program has no kernel '" + entry + "'");
    kernels_.push_back({reinterpret_cast<KernelFn>(fn), entry});
    return kernelIds_[entry] = KernelHandle(kernels_.size() - 1);
  }

  PreparedHandle prepareGemm(const GemmSpec &spec) override {
    checkGemm(spec);
    prepared_.push_back(Prepared{true, spec, {}});
    return PreparedHandle(prepared_.size() - 1);
  }

  PreparedHandle prepareLibrary(const std::string &name, const nlohmann::json &params) override {
    prepared_.push_back(Prepared{false, {}, prepareLibraryCall(name, params)});
    return PreparedHandle(prepared_.size() - 1);
  }

  std::byte *allocate(size_t bytes) override {
    // 256-byte aligned like cudaMalloc; a zero-byte buffer still gets a
    // distinct address.
    const size_t size = std::max<size_t>(256, (bytes + 255) / 256 * 256);
    void *p = std::aligned_alloc(256, size);
    if (!p)
      throw DeviceError("emulated device: out of memory allocating " + std::to_string(bytes) +
                        " bytes");
    std::memset(p, 0, size);
    memory_.emplace_back(static_cast<std::byte *>(p));
    return memory_.back().get();
  }
  std::byte *allocateHost(size_t bytes) override { return allocate(bytes); }

  // Copies and launches go through enqueue(): run now, or recorded while a
  // graph is being captured (CUDA stream capture runs nothing either). A
  // recorded copy keeps its pointers, not the bytes, as a graph node does.
  void toDevice(std::byte *dst, const void *src, size_t bytes) override {
    enqueue([=] { std::memcpy(dst, src, bytes); });
  }
  void toHost(void *dst, const std::byte *src, size_t bytes) override {
    enqueue([=] { std::memcpy(dst, src, bytes); });
  }
  void zero(std::byte *dst, size_t bytes) override {
    enqueue([=] { std::memset(dst, 0, bytes); });
  }
  void copy(std::byte *dst, const std::byte *src, size_t bytes) override {
    enqueue([=] { std::memmove(dst, src, bytes); });
  }
  void *nativeStream() override { return nullptr; }

  void launch(KernelHandle kernel, const int64_t grid[3], int64_t block, int64_t shared,
              const EmbArgs &args, const char *name) override {
    if (kernel < 0 || size_t(kernel) >= kernels_.size())
      throw DeviceError(std::string("emulated device: launch of ") + name + ": bad kernel handle " +
                        std::to_string(kernel));
    const std::string label =
        std::string(name) + " (kernel " + kernels_[size_t(kernel)].entry + ")";
    // The limits a GPU enforces at launch (sm_90), so a bad configuration
    // fails here as it would there.
    if (block < 1 || block > 1024 || grid[0] < 1 || grid[0] > 0x7fffffff || grid[1] < 1 ||
        grid[1] > 65535 || grid[2] < 1 || grid[2] > 65535 || shared < 0 || shared > 232448)
      throw DeviceError("emulated device: launch of " + label + ": invalid configuration: grid (" +
                        std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
                        std::to_string(grid[2]) + "), block " + std::to_string(block) +
                        ", shared " + std::to_string(shared) + " bytes");
    const int64_t g[3] = {grid[0], grid[1], grid[2]};
    const KernelFn fn = kernels_[size_t(kernel)].fn;
    enqueue([this, fn, g, block, args, label] {
      BlockRun run(fibers_, *hooks_, fn, args);
      const std::string error = run.run(g, int(block));
      if (!error.empty())
        throw DeviceError("emulated device: launch of " + label + ": " + error);
    });
  }

  void gemm(PreparedHandle gemm, void *const *args, const char *name) override {
    const Prepared &p = prepared(gemm, true, name);
    const int nargs = gemmHasBias(p.gemm) ? 4 : 3;
    std::array<void *, 4> a{};
    std::copy(args, args + nargs, a.begin());
    enqueue([this, spec = p.gemm, a] { runGemm(spec, a.data(), gemmScratch_); });
  }

  void library(PreparedHandle call, void *const *args, const char *name) override {
    const Prepared &p = prepared(call, false, name);
    const int nargs = p.library.kind == LibraryCall::SortPairs ? 4 : 3;
    std::array<void *, 4> a{};
    std::copy(args, args + nargs, a.begin());
    enqueue([lib = p.library, a] { runLibraryCall(lib, a.data()); });
  }

  void synchronize() override {
    if (capturing_)
      throw DeviceError("emulated device: synchronize during graph capture (a GPU stream "
                        "refuses it too)");
  }

  // The upload stream: copies wait in `uploads_` until an event recorded
  // after them is waited on, so a backend that forgets to order its compute
  // after its uploads reads stale inputs here too, as a GPU would.
  void uploadAsync(std::byte *dst, const std::byte *src, size_t bytes) override {
    if (capturing_)
      throw DeviceError("emulated device: uploadAsync during graph capture");
    uploads_.push_back([=] { std::memcpy(dst, src, bytes); });
  }
  int32_t createEvent() override {
    eventUploads_.push_back(0);
    eventTimes_.emplace_back();
    return int32_t(eventUploads_.size() - 1);
  }
  int32_t createTimingEvent() override { return createEvent(); }
  // Compute has run by the time a call returns: an event fires when it is
  // recorded, and the time between two is the host's.
  double secondsBetween(int32_t start, int32_t end) override {
    eventAt(start), eventAt(end);
    return std::chrono::duration<double>(eventTimes_[size_t(end)] - eventTimes_[size_t(start)])
        .count();
  }
  void recordCompute(int32_t event) override {
    eventAt(event) = 0;
    eventTimes_[size_t(event)] = std::chrono::steady_clock::now();
  }
  void recordUploads(int32_t event) override { eventAt(event) = uploadsQueued(); }
  void computeWaits(int32_t event) override { runUploads(eventAt(event)); }
  void uploadsWait(int32_t event) override { eventAt(event); } // compute is never behind
  void hostWaits(int32_t event) override { runUploads(eventAt(event)); }

  void beginCapture() override {
    if (capturing_)
      throw DeviceError("emulated device: beginCapture while already capturing");
    capturing_ = true;
    capture_.clear();
  }
  int32_t endCapture() override {
    if (!capturing_)
      throw DeviceError("emulated device: endCapture without beginCapture");
    capturing_ = false;
    graphs_.push_back(std::move(capture_));
    capture_.clear();
    return int32_t(graphs_.size() - 1);
  }
  void replay(int32_t graph) override {
    if (capturing_)
      throw DeviceError("emulated device: replay during graph capture");
    if (graph < 0 || size_t(graph) >= graphs_.size())
      throw DeviceError("emulated device: no graph " + std::to_string(graph));
    for (const auto &work : graphs_[size_t(graph)])
      work();
  }

private:
  int64_t &eventAt(int32_t event) {
    if (event < 0 || size_t(event) >= eventUploads_.size())
      throw DeviceError("emulated device: no event " + std::to_string(event));
    return eventUploads_[size_t(event)];
  }
  int64_t uploadsQueued() const { return uploadsDone_ + int64_t(uploads_.size()); }
  /// Runs the queued uploads up to the `upTo`-th ever queued.
  void runUploads(int64_t upTo) {
    while (uploadsDone_ < upTo && !uploads_.empty()) {
      uploads_.front()();
      uploads_.pop_front();
      ++uploadsDone_;
    }
  }

  struct Kernel {
    KernelFn fn;
    std::string entry;
  };
  struct Prepared {
    bool isGemm;
    GemmSpec gemm;
    LibraryCall library;
  };
  struct Free {
    void operator()(std::byte *p) const { std::free(p); }
  };

  const Prepared &prepared(PreparedHandle h, bool gemm, const char *name) const {
    if (h < 0 || size_t(h) >= prepared_.size() || prepared_[size_t(h)].isGemm != gemm)
      throw DeviceError(std::string("emulated device: ") + name + ": bad " +
                        (gemm ? "gemm" : "library") + " handle " + std::to_string(h));
    return prepared_[size_t(h)];
  }

  void enqueue(std::function<void()> work) {
    if (capturing_)
      capture_.push_back(std::move(work));
    else
      work();
  }

  void *library_ = nullptr;
  EmbEmuHooks *hooks_ = nullptr;
  std::vector<Kernel> kernels_;
  std::unordered_map<std::string, KernelHandle> kernelIds_;
  std::vector<Prepared> prepared_;
  std::vector<std::unique_ptr<std::byte, Free>> memory_;
  std::vector<float> gemmScratch_;
  FiberGroup fibers_;
  bool capturing_ = false;
  std::vector<std::function<void()>> capture_;
  std::vector<std::vector<std::function<void()>>> graphs_;
  std::deque<std::function<void()>> uploads_; ///< queued, not yet run
  int64_t uploadsDone_ = 0;
  std::vector<int64_t> eventUploads_; ///< per event: uploads queued at its record
  std::vector<std::chrono::steady_clock::time_point> eventTimes_; ///< when recorded (compute)
};

} // namespace

std::unique_ptr<Device> embc::runtime::cuda::createEmulatedDevice() {
  return std::make_unique<EmulatedDevice>();
}
