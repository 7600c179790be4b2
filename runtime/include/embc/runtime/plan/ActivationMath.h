//===- ActivationMath.h - the activations and their gradients, once -*- C++ -*-===//
//
// What the plan's Activation words (plan/Enums.h) compute, written once and
// used twice, as KernelAbi.h does for the kernel ABI:
//
//  - compiled for the host: ActivationMath<T> (float and double), which the
//    CPU kernels call (cpu/DenseKernels.cpp, cpu/FusedDenseKernels.cpp);
//  - as text in the generated CUDA: the CUDA codegen stringizes the same
//    EMB_ACT_* macros (activationSource below) and spells the tokens the
//    device way (passes/lib/cuda/DenseLowering.cpp).
//
// Each formula is a macro of its operands written with the tokens
//   EMB_0 EMB_1 EMB_HALF EMB_3   the constants 0, 1, 0.5, 3
//   EMB_GELU_C2 EMB_GELU_A       gelu's constants (the values below)
//   EMB_EXP EMB_TANH             exp and tanh
// which are ordinary names on the host (members of ActivationMath<T>:
// T(1), std::exp, ...) and become 1.0f, expf, ... in the CUDA text. So both
// backends evaluate the same operations in the same order, in f32 on the
// device and in the CPU kernel's T on the host (f32 in training). exp is
// vectorExp below on the CPU (within 2 ulp of expf; a libm call per element
// kept gelu from vectorising), expf on the emulated device and CUDA's on a
// GPU (within its documented ulp bounds; docs/cuda.md); tanh is the C
// library's tanhf on the CPU and the emulated device. The tokens are
// deliberately not macros: a macro would be expanded inside the stringized
// text.
//
// Operands are plain names or array elements (x[i]): the macros do not
// parenthesise them.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_PLAN_ACTIVATIONMATH_H
#define EMBC_RUNTIME_PLAN_ACTIVATIONMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

// gelu(x) = 0.5 x (1 + tanh(u)), u = c (x + a x^3) with c = sqrt(2 / pi),
// the tanh approximation, computed as x s with s = 1 / (1 + exp(-2u)), which
// is (1 + tanh u) / 2 exactly: one exp instead of a tanh (glibc's tanhf took
// a third of an encoder layer's CPU step, its expf is several times
// cheaper), and no cancellation in 1 + tanh u where u is very negative. The
// constants as doubles (C2 = 2c), rounded to the kernel's type where used.
#define EMB_ACT_GELU_C2_VALUE 1.5957691216057308 /* 2 sqrt(2 / pi) */
#define EMB_ACT_GELU_A_VALUE 0.044715

// --- Forward: y = f(x) ------------------------------------------------------------
#define EMB_ACT_RELU(x) x > EMB_0 ? x : EMB_0
#define EMB_ACT_SIGMOID(x) EMB_1 / (EMB_1 + EMB_EXP(-x))
#define EMB_ACT_TANH(x) EMB_TANH(x)
#define EMB_ACT_GELU(v) v / (EMB_1 + EMB_EXP(-EMB_GELU_C2 * (v + EMB_GELU_A * v * v * v)))

// --- Gradients: dy * f'(x) --------------------------------------------------------
// relu: the kink at 0 gets derivative 0 (the subgradient frameworks use); it
// reads the same from y = relu(x) as from x.
#define EMB_ACT_RELU_GRAD(dy, x) x > EMB_0 ? dy : EMB_0
// sigmoid from s = sigmoid(x): from the input, s is computed first; from the
// output, s is y itself (bit-identical when y came from EMB_ACT_SIGMOID).
#define EMB_ACT_SIGMOID_GRAD(dy, s) dy * s * (EMB_1 - s)
// tanh from t = tanh(x), likewise.
#define EMB_ACT_TANH_GRAD(dy, t) dy * (EMB_1 - t * t)
// gelu from its input only, in three steps: s, d(2u)/dv, the gradient
// dy (s + v s (1 - s) d(2u)/dv).
#define EMB_ACT_GELU_S(v) EMB_1 / (EMB_1 + EMB_EXP(-EMB_GELU_C2 * (v + EMB_GELU_A * v * v * v)))
#define EMB_ACT_GELU_DINNER(v) EMB_GELU_C2 * (EMB_1 + EMB_3 * EMB_GELU_A * v * v)
#define EMB_ACT_GELU_GRAD(dy, v, s, dInner) dy * (s + v * s * (EMB_1 - s) * dInner)

// A formula as text, its operands and tokens as written (EMB_ACT_STR(
// EMB_ACT_SIGMOID(x)) is "EMB_1 / (EMB_1 + EMB_EXP(-x))").
#define EMB_ACT_STR2(...) #__VA_ARGS__
#define EMB_ACT_STR(...) EMB_ACT_STR2(__VA_ARGS__)

namespace embc::runtime {

/// e^x for float in plain arithmetic, so that a loop over it vectorises
/// (a libm call does not): x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two
/// parts, Cody and Waite), Cephes's degree-6 polynomial for e^r, then 2^n
/// through the exponent bits. Within 2 ulp of expf for x in [-87.3, 88]
/// (the CPU kernel tests); x is clamped to that range first (e^88 = 1.7e38
/// instead of overflowing, 1.2e-38 instead of denormals, which would cost a
/// microcode assist per vector), NaN stays NaN. The clamp compares the
/// float's bits as integers: a float compare-and-select kept the loops
/// scalar or, with -fno-trapping-math, made GCC compute a clamped lane's
/// denormal quotients in every lane (10x slower).
inline float vectorExp(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  const uint32_t sign = b & 0x80000000u, magnitude = b & 0x7fffffffu;
  const uint32_t limit = sign ? 0x42aeac4fu /* 87.33654 */ : 0x42b00000u /* 88 */;
  const uint32_t clamped = magnitude < limit ? magnitude : limit;
  b = sign | (magnitude > 0x7f800000u ? magnitude : clamped); // NaN as it is
  std::memcpy(&x, &b, sizeof x);
  const float shift = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
  const float t = x * 1.44269504088896341f + shift;
  const float n = t - shift;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // t's low mantissa bits hold n + 2^22; 2^n is (n + 127) << 23.
  uint32_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  const uint32_t exponent = ((bits & 0x7fffffu) - 0x400000u + 127u) << 23;
  float scale;
  std::memcpy(&scale, &exponent, sizeof scale);
  return p * scale;
}

/// The host side: each activation and gradient on one value of type T.
template <class T> struct ActivationMath {
  // The tokens of the formulas (see the file comment).
  static constexpr T EMB_0 = T(0), EMB_1 = T(1), EMB_HALF = T(0.5), EMB_3 = T(3);
  static constexpr T EMB_GELU_C2 = T(EMB_ACT_GELU_C2_VALUE);
  static constexpr T EMB_GELU_A = T(EMB_ACT_GELU_A_VALUE);
  // float: vectorExp (the loops over gelu and sigmoid vectorise; glibc's
  // expf is a call per element); double, for the gradient checks: std::exp.
  static T EMB_EXP(T v) {
    if constexpr (std::is_same_v<T, float>)
      return vectorExp(v);
    else
      return std::exp(v);
  }
  static T EMB_TANH(T v) { return std::tanh(v); }

  static T relu(T x) { return EMB_ACT_RELU(x); }
  static T sigmoid(T x) { return EMB_ACT_SIGMOID(x); }
  static T tanh(T x) { return EMB_ACT_TANH(x); }
  static T gelu(T v) { return EMB_ACT_GELU(v); }

  /// dy * f'(x) from the activation's input x.
  static T reluGrad(T dy, T x) { return EMB_ACT_RELU_GRAD(dy, x); }
  static T sigmoidGrad(T dy, T x) {
    const T s = sigmoid(x);
    return EMB_ACT_SIGMOID_GRAD(dy, s);
  }
  static T tanhGrad(T dy, T x) {
    const T t = tanh(x);
    return EMB_ACT_TANH_GRAD(dy, t);
  }
  static T geluGrad(T dy, T v) {
    const T s = EMB_ACT_GELU_S(v);
    const T dInner = EMB_ACT_GELU_DINNER(v);
    return EMB_ACT_GELU_GRAD(dy, v, s, dInner);
  }

  /// dy * f'(x) from the activation's output y = f(x) (gelu has none).
  static T sigmoidGradFromOutput(T dy, T y) { return EMB_ACT_SIGMOID_GRAD(dy, y); }
  static T tanhGradFromOutput(T dy, T y) { return EMB_ACT_TANH_GRAD(dy, y); }
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_PLAN_ACTIVATIONMATH_H
