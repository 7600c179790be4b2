//===- EmulatedLibrary.cpp - cuBLASLt and library kernels on the CPU ------===//

#include "EmulatedLibrary.h"

#include "embc/runtime/cpu/HalfFloat.h"
#include "embc/runtime/plan/ActivationMath.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

using namespace embc::runtime::cuda;
using namespace embc::runtime::cuda::emu;
using nlohmann::json;

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

void embc::runtime::cuda::emu::checkGemm(const GemmSpec &g) {
  gemmFromJson(gemmToJson(g)); // the same checks as a spec read from a plan
  if (g.epilogue == GemmEpilogue::BGradB && (g.transB || g.batch != 1))
    throw DeviceError("gemm: the bgradb epilogue sums the rows of an untransposed B of a single "
                      "GEMM (trans_b false, batch 1)");
}

bool embc::runtime::cuda::emu::gemmHasBias(const GemmSpec &g) {
  return hasBias(g.epilogue);
}

namespace {
/// rows x cols of 16-bit operand bits (row stride ld) as a dense f32 matrix.
void widen(embc::runtime::DType type, const uint16_t *src, int64_t rows, int64_t cols, int64_t ld,
           float *dst) {
  const bool bf16 = type == embc::runtime::DType::BF16;
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t *s = src + r * ld;
    float *d = dst + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      d[c] = bf16 ? embc::runtime::cpu::bf16ToFloat(s[c]) : embc::runtime::cpu::halfToFloat(s[c]);
  }
}
} // namespace

void embc::runtime::cuda::emu::runGemm(const GemmSpec &g, void *const *args,
                                       std::vector<float> &scratch) {
  const bool f32 = g.abType == DType::F32;
  const int64_t rowsA = g.transA ? g.k : g.m, colsA = g.transA ? g.m : g.k;
  const int64_t rowsB = g.transB ? g.n : g.k, colsB = g.transB ? g.k : g.n;
  if (!f32)
    scratch.resize(size_t(rowsA * colsA + rowsB * colsB));
  float *bias = gemmHasBias(g) ? static_cast<float *>(args[3]) : nullptr;

  for (int64_t b = 0; b < g.batch; ++b) {
    float *c = static_cast<float *>(args[2]) + b * g.strideC;
    const float *a, *bm;
    int64_t lda = g.lda, ldb = g.ldb;
    if (f32) {
      a = static_cast<const float *>(args[0]) + b * g.strideA;
      bm = static_cast<const float *>(args[1]) + b * g.strideB;
    } else {
      // Tensor cores read the 16-bit operands exactly and accumulate in f32:
      // widening first and running sgemm gives the same products.
      float *wa = scratch.data(), *wb = wa + rowsA * colsA;
      widen(g.abType, static_cast<const uint16_t *>(args[0]) + b * g.strideA, rowsA, colsA, g.lda,
            wa);
      widen(g.abType, static_cast<const uint16_t *>(args[1]) + b * g.strideB, rowsB, colsB, g.ldb,
            wb);
      a = wa, bm = wb, lda = colsA, ldb = colsB;
    }
    cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
                g.transB ? CblasTrans : CblasNoTrans, blasint(g.m), blasint(g.n), blasint(g.k),
                g.alpha, a, blasint(lda), bm, blasint(ldb), g.beta, c, blasint(g.ldc));

    const bool addBias = g.epilogue == GemmEpilogue::Bias || g.epilogue == GemmEpilogue::ReluBias;
    const bool relu = hasRelu(g.epilogue);
    if (addBias || relu)
      for (int64_t i = 0; i < g.m; ++i) {
        float *row = c + i * g.ldc;
        for (int64_t j = 0; j < g.n; ++j) {
          float v = addBias ? row[j] + bias[j] : row[j];
          row[j] = relu ? embc::runtime::ActivationMath<float>::relu(v) : v; // the CPU's relu
        }
      }
    if (g.epilogue == GemmEpilogue::BGradB) {
      // bias[j] = sum over the k rows of B, in row order (B is k x n here).
      std::fill(bias, bias + g.n, 0.0f);
      for (int64_t i = 0; i < g.k; ++i) {
        const float *row = bm + i * ldb;
        for (int64_t j = 0; j < g.n; ++j)
          bias[j] += row[j];
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Library kernels
//===----------------------------------------------------------------------===//

LibraryCall embc::runtime::cuda::emu::prepareLibraryCall(const std::string &name,
                                                         const json &params) {
  auto integer = [&](const char *key) {
    auto it = params.find(key);
    if (it == params.end() || !it->is_number_integer())
      throw DeviceError("library kernel '" + name + "': parameter '" + key +
                        "' is missing or not an integer");
    return it->get<int64_t>();
  };
  LibraryCall call{};
  if (name == "sort_pairs") {
    call.kind = LibraryCall::SortPairs;
    const int64_t bits = integer("key_bits");
    if (bits < 1 || bits > 64)
      throw DeviceError("library kernel 'sort_pairs': key_bits " + std::to_string(bits) +
                        " is not in [1, 64]");
    call.keyBits = int(bits);
  } else if (name == "exclusive_scan") {
    call.kind = LibraryCall::ExclusiveScan;
  } else {
    throw DeviceError("unknown library kernel '" + name + "' (known: sort_pairs, exclusive_scan)");
  }
  call.count = integer("count");
  if (call.count < 0)
    throw DeviceError("library kernel '" + name + "': count " + std::to_string(call.count) +
                      " is negative");
  return call;
}

void embc::runtime::cuda::emu::runLibraryCall(const LibraryCall &call, void *const *args) {
  const size_t n = size_t(call.count);
  if (call.kind == LibraryCall::ExclusiveScan) {
    const auto *in = static_cast<const int32_t *>(args[0]);
    auto *out = static_cast<int32_t *>(args[1]);
    int64_t sum = 0;
    for (size_t i = 0; i < n; ++i) { // in == out is fine: in[i] is read first
      const int32_t v = in[i];
      out[i] = int32_t(sum);
      sum += v;
    }
    *static_cast<int64_t *>(args[2]) = sum;
    return;
  }

  const auto *keysIn = static_cast<const int64_t *>(args[0]);
  const auto *valuesIn = static_cast<const int32_t *>(args[1]);
  auto *keysOut = static_cast<int64_t *>(args[2]);
  auto *valuesOut = static_cast<int32_t *>(args[3]);
  const int bits = call.keyBits;
  // Sorting (key, input position) pairs is the stable sort, and the copy
  // makes in == out safe.
  struct Entry {
    uint64_t key;
    int64_t pos;
    int32_t value;
  };
  std::vector<Entry> entries(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = uint64_t(keysIn[i]);
    if (bits < 64 && (key >> bits) != 0)
      // The GPU's radix sort would silently ignore the high bits; say so.
      throw DeviceError("library kernel 'sort_pairs': key " + std::to_string(keysIn[i]) +
                        " at index " + std::to_string(i) + " is not below 2^" +
                        std::to_string(bits));
    entries[i] = {key, int64_t(i), valuesIn[i]};
  }
  std::sort(entries.begin(), entries.end(), [](const Entry &x, const Entry &y) {
    return x.key != y.key ? x.key < y.key : x.pos < y.pos;
  });
  for (size_t i = 0; i < n; ++i) {
    keysOut[i] = int64_t(entries[i].key);
    valuesOut[i] = entries[i].value;
  }
}
