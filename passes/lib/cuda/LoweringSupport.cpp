//===- LoweringSupport.cpp - operand checks and literals every family uses ===//

#include "Emitter.h"

#include <algorithm>
#include <cstdio>

using namespace embc;
using namespace embc::codegen;

int64_t codegen::numel(const rt::Buffer &b) {
  int64_t n = 1;
  for (int64_t d : b.shape)
    n *= d;
  return n;
}

static std::string shapeText(const rt::Buffer &b) {
  std::string s = "[";
  for (size_t i = 0; i < b.shape.size(); ++i)
    s += (i ? " x " : "") + std::to_string(b.shape[i]);
  return s + "]";
}

const rt::Buffer &codegen::f32Buffer(const CudaEmitter &em, int32_t id, const std::string &what) {
  if (id < 0 || size_t(id) >= em.plan().buffers.size())
    throw CodegenError(what + ": buffer " + std::to_string(id) + " is not in the plan");
  const rt::Buffer &b = em.buffer(id);
  if (b.dtype != rt::DType::F32)
    throw CodegenError(what + " '" + b.name + "' is " + rt::dtypeName(b.dtype) +
                       ", expected f32");
  return b;
}

const rt::Buffer &codegen::f32Matrix(const CudaEmitter &em, int32_t id, int64_t rows, int64_t cols,
                                     const std::string &what) {
  const rt::Buffer &b = f32Buffer(em, id, what);
  if (b.shape.size() != 2 || (rows >= 0 && b.shape[0] != rows) || (cols >= 0 && b.shape[1] != cols))
    throw CodegenError(what + " '" + b.name + "' is " + shapeText(b) + ", expected " +
                       (rows >= 0 ? std::to_string(rows) : "B") + " x " +
                       (cols >= 0 ? std::to_string(cols) : "N"));
  if (b.shape[0] < 1 || b.shape[1] < 1)
    throw CodegenError(what + " '" + b.name + "' is empty " + shapeText(b));
  return b;
}

codegen::RowMatrix codegen::f32Rows(const CudaEmitter &em, int32_t id, int64_t rows,
                                    int64_t cols, const std::string &what) {
  const rt::Buffer &b = f32Buffer(em, id, what);
  RowMatrix m;
  if (b.shape.size() >= 2) {
    m.cols = b.shape.back();
    m.rows = m.cols > 0 ? numel(b) / m.cols : 0;
  }
  if (b.shape.size() < 2 || (rows >= 0 && m.rows != rows) || (cols >= 0 && m.cols != cols))
    throw CodegenError(what + " '" + b.name + "' is " + shapeText(b) + ", expected " +
                       (rows >= 0 ? std::to_string(rows) : "B") + " rows of " +
                       (cols >= 0 ? std::to_string(cols) : "N"));
  if (m.rows < 1 || m.cols < 1)
    throw CodegenError(what + " '" + b.name + "' is empty " + shapeText(b));
  return m;
}

const rt::Buffer &codegen::expectNumel(const CudaEmitter &em, int32_t id, int64_t n,
                                       const std::string &what) {
  const rt::Buffer &b = f32Buffer(em, id, what);
  if (numel(b) != n)
    throw CodegenError(what + " '" + b.name + "' has " + std::to_string(numel(b)) +
                       " elements, expected " + std::to_string(n));
  return b;
}

const rt::Buffer &codegen::expectOffsets(const CudaEmitter &em, int32_t id, int64_t B) {
  const rt::Buffer &b = em.buffer(id);
  if (b.dtype != rt::DType::I64 || numel(b) != B + 1)
    throw CodegenError("offsets '" + b.name + "' must be B + 1 = " + std::to_string(B + 1) +
                       " i64 values, got " + shapeText(b));
  return b;
}

void codegen::expectCounts(const rt::Kernel &k, size_t ins, size_t outs) {
  if (k.inputs.size() != ins || k.outputs.size() != outs)
    throw CodegenError("expected " + std::to_string(ins) + " inputs and " + std::to_string(outs) +
                       " outputs, got " + std::to_string(k.inputs.size()) + " and " +
                       std::to_string(k.outputs.size()));
}

std::vector<rt::CudaArg> codegen::operandArgs(const rt::Kernel &k) {
  std::vector<rt::CudaArg> args;
  for (int32_t i : k.inputs)
    args.push_back(CudaEmitter::buf(i));
  for (int32_t o : k.outputs)
    args.push_back(CudaEmitter::buf(o));
  return args;
}

int64_t codegen::alignmentOf(const CudaEmitter &em, const rt::CudaArg &arg) {
  // The largest power of two up to 16 dividing every value of `v`.
  auto of = [](std::initializer_list<int64_t> values) {
    int64_t a = 16;
    for (int64_t v : values)
      while (a > 1 && v % a != 0)
        a /= 2;
    return a;
  };
  if (arg.buffer < 0)
    return arg.scratch >= 0 ? of({arg.scratch}) : 1;
  // Every slot (micro-batch copy) must keep the alignment, and so must the
  // parent of a view (its offset is absolute in the arena either way). The
  // arena itself starts 256-aligned on a GPU, 64-aligned when emulated.
  auto keeps = [&](const rt::Buffer &b) {
    return b.slots == 1 ? of({b.offset}) : of({b.offset, b.bytes});
  };
  const rt::Buffer &b = em.buffer(arg.buffer);
  return b.parent < 0 ? keeps(b) : std::min(keeps(b), keeps(em.buffer(b.parent)));
}

bool codegen::aligned16(const CudaEmitter &em, const rt::CudaArg &arg) {
  return alignmentOf(em, arg) >= 16;
}

rt::DType codegen::computeTypeOf(const rt::Kernel &k) {
  auto it = k.attrs.find("compute");
  if (it == k.attrs.end())
    return rt::DType::F32;
  if (!it->is_string())
    throw CodegenError("attribute 'compute' is not a string");
  switch (wordOf<rt::ComputeType>(it->get<std::string>(), "attribute 'compute'")) {
  case rt::ComputeType::F32:
    return rt::DType::F32;
  case rt::ComputeType::BF16:
    return rt::DType::BF16;
  case rt::ComputeType::F16:
    return rt::DType::F16;
  }
  throw CodegenError("unknown compute type");
}

int64_t codegen::gridFor(int64_t count, int64_t block) {
  // Enough blocks to fill an H200 (132 SMs x 2048 threads) twice over; a
  // grid-stride loop covers the rest.
  constexpr int64_t kMaxBlocks = 2048;
  return std::clamp<int64_t>((count + block - 1) / block, 1, kMaxBlocks);
}

std::string codegen::doubleLiteral(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", v);
  std::string s = text;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}
