//===- HalfFloat.h - f32 <-> bf16/fp16 conversion with RNE ------*- C++ -*-===//
//
// The CPU has no half-precision arithmetic we rely on, so the runtime keeps
// 16-bit values as raw bit patterns (uint16_t) and converts with these
// helpers. Rounding is round-to-nearest-even, as the GPU's cvt.rn and the
// tensor cores' operand conversion do, so a CPU run with emulated bf16/fp16
// rounding matches the GPU path's numerics (issue 5/6). Used by the dense
// compute rounding (precision) and by half-precision table storage (quant).
//
// Conventions:
//  - NaN stays NaN (quiet bit set, sign kept); inf stays inf.
//  - fp16: values beyond the largest finite half (65504) round to inf as
//    RNE prescribes (>= 65520 goes to inf); subnormal halves are produced and
//    read exactly (no flush to zero).
//  - bf16: the upper 16 bits of the f32 with RNE on the lower 16; f32
//    subnormals keep their (truncated-to-7-bit) subnormal bf16 form.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_HALFFLOAT_H
#define EMBC_RUNTIME_CPU_HALFFLOAT_H

#include "embc/runtime/plan/Enums.h"

#include <cstdint>
#include <cstring>

namespace embc::runtime::cpu {

/// The bits of a float, and back (memcpy: no aliasing UB, compiles to a move).
inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// f32 -> bf16 bits, round-to-nearest-even.
inline uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)          // NaN: keep sign, force quiet
    return uint16_t((u >> 16) | 0x0040u);
  // Add 0x7fff plus the lowest kept bit: ties go to the even neighbour.
  // Overflow of the exponent carries into inf, which is the RNE result.
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

/// bf16 bits -> f32 (exact).
inline float bf16ToFloat(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

/// f32 -> fp16 (IEEE binary16) bits, round-to-nearest-even.
inline uint16_t floatToHalf(float f) {
  const uint32_t u = floatBits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)                           // NaN
    return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u)                          // >= 65520 (or inf): inf
    return uint16_t(sign | 0x7c00u);
  if (a < 0x38800000u) {                         // below 2^-14: subnormal half (or 0)
    if (a < 0x33000000u)                         // below 2^-25: rounds to 0 (2^-25 itself ties to 0 below)
      return sign;
    // Value = m * 2^(e-150) with the implicit bit; in units of the half
    // subnormal step 2^-24 that is m * 2^(e-126): shift right by 126 - e.
    const uint32_t e = a >> 23;                  // biased f32 exponent, 102..112
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;             // 14..24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
      ++q;                                       // may carry into the smallest normal: correct
    return uint16_t(sign | q);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits.
  uint32_t r = a - 0x38000000u;                  // (127-15) << 23
  r += 0xfffu + ((r >> 13) & 1u);
  return uint16_t(sign | (r >> 13));             // a carry into exponent 31 gives inf: RNE
}

/// fp16 bits -> f32 (exact, subnormals included).
inline float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t m = h & 0x3ffu;
  if (e == 0x1fu)                                // inf / NaN
    return bitsFloat(sign | 0x7f800000u | (m << 13));
  if (e != 0)                                    // normal
    return bitsFloat(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0)
    return bitsFloat(sign);
  // Subnormal: m * 2^-24, exact in f32.
  const float v = float(m) * (1.0f / 16777216.0f);
  return sign ? -v : v;
}

/// The compute precision of a dense kernel: F32 leaves operands unchanged.
/// (plan/Enums.h: the plan's `compute` words fp32, bf16, fp16.)
using ::embc::runtime::ComputeType;

/// f32 rounded to the nearest value representable in `type` (RNE), as f32.
inline float roundTo(ComputeType type, float f) {
  switch (type) {
  case ComputeType::BF16:
    return bf16ToFloat(floatToBf16(f));
  case ComputeType::F16:
    return halfToFloat(floatToHalf(f));
  case ComputeType::F32:
    break;
  }
  return f;
}

/// A double is first narrowed to f32 then rounded, so the float64 gradient
/// checks of the rounded kernels see the same operand values as a float run.
inline double roundTo(ComputeType type, double d) {
  return type == ComputeType::F32 ? d : double(roundTo(type, float(d)));
}

/// Round n values in place (or from src to dst; src == dst is allowed).
template <class T> inline void roundArray(ComputeType type, const T *src, T *dst, int64_t n) {
  if (type == ComputeType::F32) {
    if (src != dst)
      std::memcpy(dst, src, size_t(n) * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    dst[i] = roundTo(type, src[i]);
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_HALFFLOAT_H
