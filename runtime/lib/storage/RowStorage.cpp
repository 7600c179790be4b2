//===- RowStorage.cpp - one row between f32 and its storage ---------------===//
//
// See RowStorage.h. Moved from cpu/QuantizedKernels.cpp unchanged (and
// built with the CPU kernels' flags), so every conversion rounds as before.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/storage/RowStorage.h"

#include "embc/runtime/cpu/HalfFloat.h"
#include "embc/runtime/data/CounterRandom.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace embc::runtime::storage {

using namespace embc::runtime::cpu; // floatToHalf, halfToFloat, floatToBf16, bf16ToFloat
namespace data = embc::runtime::data;

int64_t storageRowBytes(Storage storage, int64_t D) {
  switch (storage) {
  case Storage::F32:
    return 4 * D;
  case Storage::F16:
  case Storage::BF16:
    return 2 * D;
  case Storage::Int8:
    return D;
  case Storage::Int4:
    if (D % 2 != 0)
      throw std::invalid_argument("int4 storage packs two values per byte; a row of " +
                                  std::to_string(D) + " values is odd");
    return D / 2;
  }
  return 0;
}

// --- One value -----------------------------------------------------------------

namespace {

/// A uniform draw in [0, 1) from a random word.
inline double unitDraw(uint64_t bits) { return data::uniform01(bits); }

/// The neighbouring bit pattern towards +inf / -inf of a sign-magnitude
/// 16-bit float (fp16 and bf16 alike); `signBit` is 0x8000 for both.
inline uint16_t nextUp(uint16_t h) {
  if (h & 0x8000u)
    return h == 0x8000u ? uint16_t(0x0001u) : uint16_t(h - 1u);
  return uint16_t(h + 1u);
}
inline uint16_t nextDown(uint16_t h) {
  if (h & 0x8000u)
    return uint16_t(h + 1u);
  return h == 0 ? uint16_t(0x8001u) : uint16_t(h - 1u);
}

/// Stochastic rounding between x's nearest value r and the neighbour on
/// the other side of x: unbiased, since lo + P(hi) (hi - lo) = x.
template <class Encode, class Decode>
inline uint16_t stochastic16(float x, uint64_t bits, Encode encode, Decode decode) {
  const uint16_t r = encode(x);
  if (!std::isfinite(x))
    return r;
  const float fr = decode(r);
  if (fr == x || !std::isfinite(fr)) // exact, or beyond the largest finite value
    return r;
  const uint16_t other = fr < x ? nextUp(r) : nextDown(r);
  const float fo = decode(other);
  const uint16_t lo = fr < x ? r : other, hi = fr < x ? other : r;
  const double flo = fr < x ? fr : fo, fhi = fr < x ? fo : fr;
  if (!std::isfinite(fhi) || !std::isfinite(flo))
    return r;
  const double pUp = (double(x) - flo) / (fhi - flo);
  return unitDraw(bits) < pUp ? hi : lo;
}

} // namespace

uint16_t floatToHalfStochastic(float x, uint64_t bits) {
  return stochastic16(x, bits, floatToHalf, halfToFloat);
}

uint16_t floatToBf16Stochastic(float x, uint64_t bits) {
  return stochastic16(x, bits, floatToBf16, bf16ToFloat);
}

uint8_t quantizeCode(float x, float scale, float bias, uint64_t bits, bool nearest,
                     int maxCode) {
  if (!(scale > 0))
    return 0; // a constant row: every value is the bias
  const double q = (double(x) - double(bias)) / double(scale);
  double code = nearest ? std::nearbyint(q) : std::floor(q);
  if (!nearest && unitDraw(bits) < q - code)
    code += 1;
  return uint8_t(std::clamp(code, 0.0, double(maxCode)));
}

RowParams rowwiseParams(float lo, float hi, int maxCode) {
  constexpr float kHalfMax = 65504.0f; // the largest finite fp16
  lo = std::clamp(lo, -kHalfMax, kHalfMax);
  hi = std::clamp(hi, lo, kHalfMax);
  // Round outwards so the codes' range covers [lo, hi]: no value is clamped,
  // and stochastic rounding stays unbiased at the row's ends.
  uint16_t bias = floatToHalf(lo);
  if (halfToFloat(bias) > lo)
    bias = nextDown(bias);
  const double span = (double(hi) - double(halfToFloat(bias))) / double(maxCode);
  uint16_t scale = floatToHalf(float(span));
  if (double(halfToFloat(scale)) < span)
    scale = nextUp(scale);
  return {scale, bias};
}

uint64_t elementBits(uint64_t rowKey, int64_t j) {
  return data::mix64(rowKey + uint64_t(j)); // splitmix64's stream from the row key
}

uint64_t rowKey(uint64_t seed, uint64_t tableKey, int64_t row, int64_t step) {
  return data::hashOf(seed, tableKey, uint64_t(row), uint64_t(step));
}

// --- Rows ----------------------------------------------------------------------

void dequantizeRow(const QuantizedTable &t, int64_t r, float *out) {
  const int64_t D = t.D;
  switch (t.storage) {
  case Storage::F32:
    std::memcpy(out, static_cast<const float *>(t.data) + r * D, sizeof(float) * size_t(D));
    return;
  case Storage::F16: {
    const uint16_t *row = static_cast<const uint16_t *>(t.data) + r * D;
    for (int64_t j = 0; j < D; ++j)
      out[j] = halfToFloat(row[j]);
    return;
  }
  case Storage::BF16: {
    const uint16_t *row = static_cast<const uint16_t *>(t.data) + r * D;
    for (int64_t j = 0; j < D; ++j)
      out[j] = bf16ToFloat(row[j]);
    return;
  }
  case Storage::Int8: {
    const uint8_t *row = static_cast<const uint8_t *>(t.data) + r * D;
    const float scale = halfToFloat(t.qparams[2 * r]), bias = halfToFloat(t.qparams[2 * r + 1]);
    for (int64_t j = 0; j < D; ++j)
      out[j] = scale * float(row[j]) + bias;
    return;
  }
  case Storage::Int4: {
    const uint8_t *row = static_cast<const uint8_t *>(t.data) + r * (D / 2);
    const float scale = halfToFloat(t.qparams[2 * r]), bias = halfToFloat(t.qparams[2 * r + 1]);
    for (int64_t k = 0; k < D / 2; ++k) {
      out[2 * k] = scale * float(row[k] & 0x0fu) + bias;
      out[2 * k + 1] = scale * float(row[k] >> 4) + bias;
    }
    return;
  }
  }
}

namespace {

/// Whether no 16-bit value of the row has the all-ones exponent `exponent`
/// (NaN or infinity in fp16: 0x7c00, in bf16: 0x7f80).
bool finite16(const uint16_t *row, int64_t D, uint16_t exponent) {
  uint16_t bad = 0;
  for (int64_t j = 0; j < D; ++j)
    bad |= uint16_t((row[j] & exponent) == exponent);
  return bad == 0;
}

} // namespace

bool quantizeRow(QuantizedTable &t, int64_t r, const float *v, bool nearest, uint64_t key) {
  const int64_t D = t.D;
  switch (t.storage) {
  case Storage::F32: {
    std::memcpy(static_cast<float *>(t.data) + r * D, v, sizeof(float) * size_t(D));
    bool finite = true;
    for (int64_t j = 0; j < D; ++j)
      finite = finite && std::isfinite(v[j]);
    return finite;
  }
  case Storage::F16: {
    uint16_t *row = static_cast<uint16_t *>(t.data) + r * D;
    for (int64_t j = 0; j < D; ++j)
      row[j] = nearest ? floatToHalf(v[j]) : floatToHalfStochastic(v[j], elementBits(key, j));
    return finite16(row, D, 0x7c00);
  }
  case Storage::BF16: {
    uint16_t *row = static_cast<uint16_t *>(t.data) + r * D;
    for (int64_t j = 0; j < D; ++j)
      row[j] = nearest ? floatToBf16(v[j]) : floatToBf16Stochastic(v[j], elementBits(key, j));
    return finite16(row, D, 0x7f80);
  }
  case Storage::Int8:
  case Storage::Int4: {
    if (D == 0)
      return true;
    float lo = v[0], hi = v[0];
    bool finite = true;
    for (int64_t j = 0; j < D; ++j) {
      finite = finite && std::isfinite(v[j]);
      lo = std::min(lo, v[j]);
      hi = std::max(hi, v[j]);
    }
    const bool int4 = t.storage == Storage::Int4;
    if (!finite)
      throw std::domain_error("quantizeRow: row " + std::to_string(r) +
                              " holds a non-finite value; " + (int4 ? "int4" : "int8") +
                              " storage cannot represent it");
    const int maxCode = int4 ? 15 : 255;
    const RowParams params = rowwiseParams(lo, hi, maxCode);
    t.qparams[2 * r] = params.scale;
    t.qparams[2 * r + 1] = params.bias;
    // Codes from the fp16 values dequantisation will use.
    const float scale = halfToFloat(params.scale), bias = halfToFloat(params.bias);
    auto code = [&](int64_t j) {
      return quantizeCode(v[j], scale, bias, elementBits(key, j), nearest, maxCode);
    };
    if (!int4) {
      uint8_t *row = static_cast<uint8_t *>(t.data) + r * D;
      for (int64_t j = 0; j < D; ++j)
        row[j] = code(j);
      return true;
    }
    uint8_t *row = static_cast<uint8_t *>(t.data) + r * (D / 2);
    for (int64_t k = 0; k < D / 2; ++k)
      row[k] = uint8_t(code(2 * k) | (code(2 * k + 1) << 4));
    return true;
  }
  }
  return false;
}

} // namespace embc::runtime::storage
