//===- CudaCodegen.cpp - the driver of the CUDA target -------------------===//
//
// Looks up each plan kernel's lowering by op name and collects the launches,
// the source and the scratch size into Plan::cuda. The lowerings live in
// one file per family (Emitter.h lists them).
//
//===----------------------------------------------------------------------===//

#include "embc/passes/CudaCodegen.h"

#include "Emitter.h"

#include "embc/runtime/cuda/KernelAbi.h"
#include "embc/runtime/plan/SequenceLayout.h"

#include <algorithm>
#include <map>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace embc;
using namespace embc::codegen;

std::string CudaEmitter::entryName(const std::string &hint) {
  std::string clean;
  for (char c : hint)
    clean += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return "emb_" + std::to_string(next_++) + "_" + clean;
}

void CudaEmitter::appendOnce(const std::string &key, const std::string &code) {
  if (once_.insert(key).second)
    append(code);
}

int64_t CudaEmitter::scratch(int64_t bytes) {
  int64_t at = scratchUsed_;
  scratchUsed_ += (std::max<int64_t>(bytes, 1) + 255) / 256 * 256;
  scratchMax_ = std::max(scratchMax_, scratchUsed_);
  return at;
}

int CudaEmitter::errorCode(const std::string &message) {
  for (size_t i = 0; i < errors_.size(); ++i)
    if (errors_[i] == message)
      return int(i) + 1;
  errors_.push_back(message);
  return int(errors_.size());
}

int CudaEmitter::nonFiniteCode(const std::string &message) {
  const int code = errorCode(message);
  if (std::find(nonFinite_.begin(), nonFinite_.end(), code) == nonFinite_.end())
    nonFinite_.push_back(code);
  return code;
}

rt::CudaLaunch CudaEmitter::kernelLaunch(const std::string &entry,
                                         std::vector<rt::CudaArg> args, int64_t gridX,
                                         int64_t block, int64_t shared) {
  if (args.size() > EMB_MAX_ARGS)
    throw CodegenError("a launch of " + entry + " has " + std::to_string(args.size()) +
                       " args; at most " + std::to_string(EMB_MAX_ARGS) + " fit EmbArgs");
  rt::CudaLaunch l;
  l.kind = "kernel";
  l.entry = entry;
  l.args = std::move(args);
  l.grid[0] = std::max<int64_t>(gridX, 1);
  l.block = block;
  l.shared = shared;
  return l;
}

int64_t codegen::intAttr(const rt::Kernel &k, const char *name) {
  auto it = k.attrs.find(name);
  if (it == k.attrs.end() || !it->is_number_integer())
    throw CodegenError(std::string("missing integer attribute '") + name + "'");
  return it->get<int64_t>();
}

bool codegen::boolAttr(const rt::Kernel &k, const char *name, bool absent) {
  auto it = k.attrs.find(name);
  if (it == k.attrs.end())
    return absent;
  if (!it->is_boolean())
    throw CodegenError(std::string("attribute '") + name + "' is not a boolean");
  return it->get<bool>();
}

std::string codegen::stringAttr(const rt::Kernel &k, const char *name) {
  auto it = k.attrs.find(name);
  if (it == k.attrs.end() || !it->is_string())
    throw CodegenError(std::string("missing string attribute '") + name + "'");
  return it->get<std::string>();
}

std::string codegen::floatLiteral(double value) {
  float f = float(value);
  if (std::isinf(f))
    return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char text[64];
  std::snprintf(text, sizeof text, "%.9ef", double(f));
  return text;
}

namespace {

/// `source` with `__launch_bounds__(B, M)` on every launched kernel, B the
/// largest block of its launches. The launches are the one statement of a
/// kernel's block size; the bounds make NVRTC keep each kernel within the
/// registers that block may use (without them a kernel past 65536 / B
/// registers per thread compiles but is refused at launch). M resident
/// blocks: by default 1024 / B (at least 1), half an SM's threads, 64
/// registers a thread; a lowering whose kernel needs more asks for fewer
/// (CudaEmitter::setMinBlocks). `(B)` alone let ptxas cap registers for
/// occupancy on its own (the fused update kernel at 48, spilling); `(B, 1)`
/// everywhere let it take 102 for the interaction gradient (a quarter of
/// the warps).
std::string withLaunchBounds(std::string source, const rt::CudaProgram &program,
                             const CudaEmitter &em) {
  std::map<std::string, int64_t> block;
  std::vector<const std::vector<rt::CudaKernel> *> lists = {&program.step, &program.update};
  for (const rt::CudaLengthVariant &v : program.lengths)
    lists.push_back(&v.step);
  for (const auto *list : lists)
    for (const rt::CudaKernel &k : *list)
      for (const rt::CudaLaunch &l : k.launches)
        if (l.kind == "kernel")
          block[l.entry] = std::max(block[l.entry], l.block);
  for (const auto &[entry, threads] : block) {
    const std::string head = "extern \"C\" __global__ void " + entry + "(";
    const size_t at = source.find(head);
    if (at == std::string::npos || source.find(head, at + 1) != std::string::npos)
      throw CodegenError("the launched kernel " + entry +
                         " is not defined exactly once as `extern \"C\" __global__ void " +
                         entry + "(EmbArgs a)`");
    if (threads < 1 || threads > 1024)
      throw CodegenError("kernel " + entry + " is launched with " + std::to_string(threads) +
                         " threads per block; a block holds 1 to 1024");
    source.replace(at, head.size(),
                   "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads) +
                       ", " + std::to_string(em.minBlocks(entry, threads)) + ") " + entry + "(");
  }
  return source;
}

} // namespace

// The kernels the catalogue keeps off the GPU (cuda = false): no lowering.
EMBC_CUDA_LOWERING(SkipgramStep, nullptr)

void codegen::LoweringTable::add(rt::KernelOp op, Lowering lowering) {
  if (byOp_[size_t(op)])
    throw std::logic_error("two CUDA lowerings of '" +
                           std::string(rt::kernelSpec(op).name) + "'");
  byOp_[size_t(op)] = lowering;
}

const LoweringTable &codegen::cudaLowerings() {
  static const LoweringTable table = [] {
    LoweringTable t;
#define EMBC_KERNEL(op, ...)                                                                   \
  if (Lowering lowering = loweringOf<rt::KernelOp::op>())                                   \
    t.add(rt::KernelOp::op, lowering);
#include "embc/runtime/plan/KernelCatalogue.def"
#undef EMBC_KERNEL
    return t;
  }();
  return table;
}

bool codegen::cudaLowers(rt::KernelOp op) { return cudaLowerings().find(op) != nullptr; }

std::vector<int64_t> codegen::cudaVariantLengths(int64_t maxLen) {
  const int64_t granule = std::max<int64_t>(8, (maxLen / 8 + 7) / 8 * 8);
  std::vector<int64_t> lengths;
  for (int64_t length = granule; length < maxLen; length += granule)
    lengths.push_back(length);
  return lengths;
}

bool codegen::generateCuda(rt::Plan &plan, std::string &error,
                           const CudaCodegenOptions &options) {
  const LoweringTable &table = cudaLowerings();

  // A development aid while lowerings are written: EMBC_CUDA_PARTIAL=1
  // lowers an op without a lowering to one launch of an empty kernel marked
  // {"missing": true}; the backend refuses it, and emb-parity runs that
  // kernel on the CPU only. Never set by embc itself.
  const char *partialEnv = std::getenv("EMBC_CUDA_PARTIAL");
  const bool partial = partialEnv && std::string(partialEnv) == "1";

  CudaEmitter em(plan);
  em.append(cudaPrelude());
  rt::CudaProgram program;
  // Kernel `i` of `kernels` into `out`; `where` names it in errors.
  auto lowerOne = [&](const rt::Kernel &k, const std::string &where,
                      std::vector<rt::CudaKernel> &out) {
    const rt::KernelSpec *spec = rt::findKernel(k.op);
    Lowering lowering = spec ? table.find(spec->op) : nullptr;
    rt::CudaKernel lowered;
    if (!lowering && partial) {
      em.appendOnce("emb_missing", "extern \"C\" __global__ void emb_missing(EmbArgs a) {}\n");
      lowered.launches.push_back(CudaEmitter::kernelLaunch("emb_missing", {}, 1, 1));
      lowered.launches.back().params["missing"] = true;
      out.push_back(std::move(lowered));
      return true;
    }
    if (!lowering) {
      error = "CUDA codegen: " + where + " has no CUDA lowering";
      return false;
    }
    em.beginKernel();
    try {
      lowering(em, k, lowered);
    } catch (const std::exception &e) {
      error = "CUDA codegen: " + where + ": " + e.what();
      return false;
    }
    if (lowered.launches.empty()) {
      error = "CUDA codegen: " + where + " lowered to no launch";
      return false;
    }
    out.push_back(std::move(lowered));
    return true;
  };
  auto lowerAll = [&](const std::vector<rt::Kernel> &kernels, const char *schedule,
                      std::vector<rt::CudaKernel> &out) {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (!lowerOne(kernels[i],
                    std::string(schedule) + " kernel " + std::to_string(i) + " '" +
                        kernels[i].op + "'",
                    out))
        return false;
    return true;
  };
  if (!lowerAll(plan.step, "step", program.step) ||
      !lowerAll(plan.update, "update", program.update))
    return false;
  // Dynamic padding: the sequence kernels again at each shorter length.
  const rt::SequenceLayout layout = rt::findSequenceLayout(plan);
  if (options.lengthVariants && layout.sequences.size() == 1 && layout.unsupported.empty() &&
      !partial) {
    for (int64_t length : cudaVariantLengths(layout.sequences[0].maxLen)) {
      const rt::Plan shorter = rt::specialiseLengths(plan, layout, {length});
      em.setPlan(shorter);
      rt::CudaLengthVariant variant;
      variant.length = length;
      for (size_t i : layout.kernels)
        if (!lowerOne(shorter.step[i],
                      "step kernel " + std::to_string(i) + " '" + shorter.step[i].op +
                          "' at sequence length " + std::to_string(length),
                      variant.step))
          return false;
      em.setPlan(plan);
      program.lengths.push_back(std::move(variant));
    }
    if (!program.lengths.empty())
      program.lengthKernels.assign(layout.kernels.begin(), layout.kernels.end());
  }
  try {
    program.source = withLaunchBounds(em.source(), program, em);
  } catch (const CodegenError &e) {
    error = std::string("CUDA codegen: ") + e.what();
    return false;
  }
  program.scratchBytes = em.scratchBytes();
  program.errors = em.errors();
  program.nonFiniteErrors = em.nonFiniteErrors();
  plan.cuda = std::move(program);
  return true;
}
