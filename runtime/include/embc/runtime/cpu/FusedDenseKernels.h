//===- FusedDenseKernels.h - CPU kernels that -emb-fuse produces -*- C++ -*-===//
//
// The fused dense kernels of the plan's kernel catalogue: a dense layer with
// its bias and activation in one pass, its whole backward in one kernel,
// chains of elementwise ops that never write their intermediate values, and
// DLRM's interaction written straight into the concat that follows it. Each
// computes what the composition of the plain kernels in Kernels.h computes
// (the unit tests check that); what changes is how often memory is touched.
// Templated on the element type like Kernels.h (float for training, double
// for finite-difference checks). Outputs are overwritten unless the comment
// says "accumulates". No function allocates per call but the dense_multi
// pair (a list of one GEMM call per layer): the elementwise chain keeps its
// block temporaries in thread-local scratch that only grows.
// The trailing ComputeType of the GEMM and interaction kernels is Kernels.h's
// (F32: the f32 kernel bit for bit; BF16/F16: operands rounded, f32 sums).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_FUSEDDENSEKERNELS_H
#define EMBC_RUNTIME_CPU_FUSEDDENSEKERNELS_H

#include "embc/runtime/cpu/Kernels.h"

#include <cstdint>
#include <vector>

namespace embc::runtime::cpu {

// --- Activations from their output --------------------------------------------

/// dx = dy * f'(z), with f'(z) computed from y = f(z): relu y > 0, sigmoid
/// y (1 - y), tanh 1 - y^2, none 1. Gelu cannot be inverted: throws
/// std::invalid_argument. dx may alias dy.
template <class T>
void activationGradFromOutput(Activation f, const T *dy, const T *y, T *dx, int64_t n);

/// True when f'(z) can be computed from f(z) (every activation but gelu).
bool hasDerivativeFromOutput(Activation f);

// --- Dense layer with bias and activation ---------------------------------------

/// y[B,N] = f(x[B,K] w[K,N] + b[N]); b may be null. When z is not null it
/// also receives the pre-activation x w + b. The GEMM is denseForward's
/// (bit-identical to the plain chain); the activation follows in place, in
/// parallel blocks. y and z must not alias x or w.
template <class T>
void denseActForward(Activation f, const T *x, const T *w, const T *b, T *y, T *z, int64_t B,
                     int64_t K, int64_t N, ComputeType compute = ComputeType::F32);

/// The whole backward of y = f(x w + b):
///   dz = dy * f'(a)      (a = y when fromOutput, else z = x w + b)
///   dw += x^T dz         (accumulates: one GEMM with beta = 1)
///   db += column sums of dz   (accumulates; db may be null)
///   dx  = dz w^T         (overwritten; dx may be null)
/// With f == None, a and dz may be null and dy is used as dz. dz is a
/// workspace of B x N when f != None. db is summed over rows in row order,
/// so it equals biasGrad(dz) bit for bit.
template <class T>
void denseActGrad(Activation f, bool fromOutput, const T *dy, const T *a, const T *x, const T *w,
                  T *dz, T *dw, T *db, T *dx, int64_t B, int64_t K, int64_t N,
                  ComputeType compute = ComputeType::F32);

// --- Dense layers sharing their input (Q, K and V) ------------------------------

/// One layer of dense_multi: y (B x N) = x w + b, w K x N, b N values or null.
template <class T> struct SharedInputLayer {
  const T *w, *b;
  T *y;
  int64_t N;
};

/// Every layer on x (B x K): each block of x's rows goes through every
/// layer's GEMM while in cache, in one parallel region. Each y is
/// denseForward's bit for bit (the same GEMM blocks, the bias seeding the
/// accumulator).
template <class T>
void denseMultiForward(const T *x, int64_t B, int64_t K,
                       const std::vector<SharedInputLayer<T>> &layers,
                       ComputeType compute = ComputeType::F32);

/// One layer of dense_multi_grad: its output gradient dy (B x N), weight w
/// (K x N), weight gradient dw and bias gradient db (null: no bias), both
/// accumulated.
template <class T> struct SharedInputLayerGrad {
  const T *dy, *w;
  T *dw, *db;
  int64_t N;
};

/// The backward of denseMultiForward's layers: for each, dw += x^T dy and
/// db += column sums of dy (denseActGrad's, bit for bit), and the input
/// gradient dx = ((dy_0 w_0^T + dy_1 w_1^T) + ...) (overwritten), summed in
/// layer order a block of rows at a time so that no layer's term is written
/// to memory: the plain dense_grad_input kernels and the adds that sum
/// them, bit for bit.
template <class T>
void denseMultiGrad(const T *x, T *dx, int64_t B, int64_t K,
                    const std::vector<SharedInputLayerGrad<T>> &layers,
                    ComputeType compute = ComputeType::F32);

// --- Elementwise chains ---------------------------------------------------------

/// One step of an elementwise chain. Arguments are references: 0 .. m-1 are
/// the chain's m inputs, m + j the value of step j (only earlier steps).
struct ElementwiseStep {
  using Op = ElementwiseOp; // plan/Enums.h: add, activation, activation_grad
  Op op = Op::Add;
  Activation kind = Activation::None; ///< Activation, ActivationGrad
  bool fromOutput = false;            ///< ActivationGrad: args[1] is f's output, not its input
  bool bias = false; ///< Add: the last argument is an input of `width` values broadcast over rows
  std::vector<int32_t> args;
};

/// A chain over full operands of n elements (rows of `width`): the value
/// each output receives is `results[o]`, a reference as in ElementwiseStep.
struct ElementwiseChain {
  int64_t width = 1;
  int32_t inputs = 0; ///< m
  std::vector<ElementwiseStep> steps;
  std::vector<int32_t> results;
};

/// Throws std::invalid_argument when the chain is malformed: a reference out
/// of range or to a later step, a wrong argument count, a bias that is not
/// an input, gelu differentiated from its output, width < 1.
void checkElementwiseChain(const ElementwiseChain &chain);

/// Runs the chain over n elements (n % width == 0): ins[i] has n elements
/// (or `width` for a bias), outs[o] n elements. Blocks of whole rows run in
/// parallel, every step into a thread-local block temporary, and each output
/// is written once per block after the block's steps, so an output may be
/// the same memory as an input.
template <class T>
void elementwiseForward(const ElementwiseChain &chain, const T *const *ins, T *const *outs,
                        int64_t n);

// --- Interaction written into a concat ----------------------------------------

/// y[B,W] = concat(copy_0 .. copy_{p-1}, interaction(xs), copy_p .. copy_{C-1})
/// with copy_j B x copyWidths[j], xs F >= 2 inputs of B x D, and the
/// interaction's P columns as interactionForward computes them.
template <class T>
void interactionConcatForward(const std::vector<const T *> &copies,
                              const std::vector<int64_t> &copyWidths, int64_t position,
                              const std::vector<const T *> &xs, T *y, int64_t B, int64_t D,
                              bool self, ComputeType compute = ComputeType::F32);

/// Gradient of interactionConcatForward from dy[B,W]: dxs[i] = interaction
/// gradient of x_i plus dy's columns of every copy j with copyInto[j] == i
/// (that copy is x_i itself, so its width must be D). dcopies[j] receives
/// dy's columns of copy j when copyInto[j] == -1 (it is ignored, and may be
/// null, otherwise). Everything is overwritten.
template <class T>
void interactionConcatGrad(const T *dy, const std::vector<int64_t> &copyWidths, int64_t position,
                           const std::vector<int32_t> &copyInto, const std::vector<const T *> &xs,
                           const std::vector<T *> &dxs, const std::vector<T *> &dcopies, int64_t B,
                           int64_t D, bool self, ComputeType compute = ComputeType::F32);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_FUSEDDENSEKERNELS_H
