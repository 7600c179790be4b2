//===- Kernels.h - CPU kernels of the plan's kernel catalogue ---*- C++ -*-===//
//
// One function per plan kernel, templated on the element type so the same
// code runs in float (training) and double (finite-difference gradient
// checks). All tensors are dense row-major; B is the batch. Outputs are
// overwritten unless the comment says "accumulates". Loops are parallelised
// on the team (Parallel.h); GEMMs go to Gemm.h (libxsmm kernels on fixed row
// blocks, else BLAS). No function allocates per call
// except where noted (coalesceRows sorts in a scratch vector).
//
// Dense compute precision: the GEMM-based kernels (dense layers, the
// interaction and the cross layer) take a trailing ComputeType (HalfFloat.h).
// F32, the default, is the plain f32 kernel, bit for bit. BF16/F16 round the
// operands of every product to that type (round-to-nearest-even, into
// thread-local scratch that only grows) and accumulate in T: the numerics of
// a tensor core with f32 accumulation, emulated. Elementwise parts (bias,
// activations, the cross layer's gating) stay in T.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_KERNELS_H
#define EMBC_RUNTIME_CPU_KERNELS_H

#include "embc/runtime/cpu/HalfFloat.h"
#include "embc/runtime/plan/Enums.h"

#include <cstdint>
#include <vector>

namespace embc::runtime::cpu {

// The plan's enumerations (plan/Enums.h), under the names the kernels use.
using ::embc::runtime::Activation;
using ::embc::runtime::LossKind;
using ::embc::runtime::OptimizerKind;
using ::embc::runtime::Pooling;

// --- Dense layers -----------------------------------------------------------

/// y[B,N] = x[B,K] * w[K,N] (+ b[N] broadcast over rows; b may be null).
template <class T>
void denseForward(const T *x, const T *w, const T *b, T *y, int64_t B, int64_t K, int64_t N,
                  ComputeType compute = ComputeType::F32);
/// dx[B,K] = dy[B,N] * w^T.
template <class T>
void denseGradInput(const T *dy, const T *w, T *dx, int64_t B, int64_t K, int64_t N,
                    ComputeType compute = ComputeType::F32);
/// dw[K,N] = x^T * dy.
template <class T>
void denseGradWeight(const T *x, const T *dy, T *dw, int64_t B, int64_t K, int64_t N,
                     ComputeType compute = ComputeType::F32);
/// db[N] = sum over rows of dy[B,N].
template <class T> void biasGrad(const T *dy, T *db, int64_t B, int64_t N);

/// y = f(x) elementwise; gelu is the tanh approximation.
template <class T> void activationForward(Activation f, const T *x, T *y, int64_t n);
/// dx = dy * f'(x).
template <class T>
void activationGrad(Activation f, const T *dy, const T *x, T *dx, int64_t n);

/// y[B, sum widths] = [x_0 | x_1 | ...], x_i is B x widths[i].
template <class T>
void concatForward(const std::vector<const T *> &xs, const std::vector<int64_t> &widths,
                   T *y, int64_t B);
/// y[B,width] = columns [offset, offset+width) of x[B,N].
template <class T>
void sliceColumns(const T *x, T *y, int64_t B, int64_t N, int64_t offset, int64_t width);

/// y[B,N] = sum_i x_i (+ bias[N]; bias may be null).
template <class T>
void addForward(const std::vector<const T *> &xs, const T *bias, T *y, int64_t B, int64_t N);
/// y = a + b elementwise (sums gradient contributions of a value used twice).
template <class T> void addTwo(const T *a, const T *b, T *y, int64_t n);

// --- Interactions -----------------------------------------------------------

/// F = xs.size() inputs, each B x D. y[B, P] holds <x_i, x_j> for pairs i < j
/// (i <= j with `self`), row-major upper triangle: (0,1), (0,2), ..., (1,2), ...
template <class T>
void interactionForward(const std::vector<const T *> &xs, T *y, int64_t B, int64_t D, bool self,
                        ComputeType compute = ComputeType::F32);
/// Rounded compute rounds dy and the xs (the operands of dX = (dZ + dZ^T) X).
template <class T>
void interactionGrad(const T *dy, const std::vector<const T *> &xs, const std::vector<T *> &dxs,
                     int64_t B, int64_t D, bool self, ComputeType compute = ComputeType::F32);

/// DCN-v2: y[B,D] = x0 * (xl * w[D,D] + b[D]) + xl. With `linear`
/// (B x D), the product xl * w is also written there, for crossGrad.
template <class T>
void crossForward(const T *x0, const T *xl, const T *w, const T *b, T *y, int64_t B, int64_t D,
                  ComputeType compute = ComputeType::F32, T *linear = nullptr);
/// All four gradients; each output overwritten. dx0 and dxl may alias
/// neither each other nor inputs. With `linear` (crossForward's xl * w) the
/// product is read instead of computed again: two GEMMs instead of three,
/// and the same numbers bit for bit.
template <class T>
void crossGrad(const T *dy, const T *x0, const T *xl, const T *w, const T *b, T *dx0, T *dxl,
               T *dw, T *db, int64_t B, int64_t D, ComputeType compute = ComputeType::F32,
               const T *linear = nullptr);

/// K == 0: lhs, rhs are B x D and y is B x 1. K > 0: rhs is B x K x D and
/// y[b,k] = <lhs[b], rhs[b,k]>.
template <class T>
void dotForward(const T *lhs, const T *rhs, T *y, int64_t B, int64_t K, int64_t D);
template <class T>
void dotGrad(const T *dy, const T *lhs, const T *rhs, T *dlhs, T *drhs, int64_t B, int64_t K,
             int64_t D);

// --- Loss -------------------------------------------------------------------

/// Mean over the batch. C is the input width: 1 for bce/mse; the number of
/// classes for softmax_ce (target holds the class index as a float); for
/// neg_sampling the input is B x 1 positive scores and the target B x C
/// negative scores: loss = -log s(pos) - sum_k log s(-neg_k).
template <class T>
T lossForward(LossKind kind, const T *input, const T *target, int64_t B, int64_t C);
/// d(loss)/d(input) into dinput; for neg_sampling also d/d(target) into
/// dtarget (null otherwise). Includes the 1/B of the mean.
template <class T>
void lossGrad(LossKind kind, const T *input, const T *target, T *dinput, T *dtarget, int64_t B,
              int64_t C);
/// sequence_softmax_ce: input B x L x C logits, target B x L class indices
/// (-1: no target at that position). Each sequence's loss is the mean
/// softmax cross-entropy over its positions with a target (0 when it has
/// none); the result is the mean over the B sequences.
template <class T>
T sequenceLossForward(const T *input, const T *target, int64_t B, int64_t L, int64_t C);
/// The sum of the cross-entropies sequenceLossForward averages (over every
/// position with a target, unweighted), and in `targets` their count: the
/// token-level loss a perplexity is exp(sum / targets) of.
template <class T>
double sequenceTokenLossSum(const T *input, const T *target, int64_t B, int64_t L, int64_t C,
                            int64_t &targets);
/// d(sequenceLossForward)/d(input) into dinput (zeros where there is no
/// target).
template <class T>
void sequenceLossGrad(const T *input, const T *target, T *dinput, int64_t B, int64_t L,
                      int64_t C);

// --- Embeddings -------------------------------------------------------------

/// Maps raw ids to xxh64(id as 8 little-endian bytes, seed) mod buckets.
void hashIds(const int64_t *ids, int64_t *out, int64_t n, int64_t buckets, uint64_t seed);

/// Pooled lookup of B jagged bags: bag b is ids[offsets[b] .. offsets[b+1]).
/// weights (per id) may be null. An empty bag pools to zeros. Ids must be in
/// [0, rows): the executor checks them before the call.
template <class T>
void lookupForward(const T *table, int64_t D, const int64_t *ids, const int64_t *offsets,
                   const T *weights, int64_t B, Pooling pooling, T *y);
/// Per-id gradient rows: dvals[i, :] = d(loss)/d(table[ids[i]]) from bag b's
/// dy[b, :] (times weight, / bag size for mean, only at the argmax position
/// for max, which is why the table is read).
template <class T>
void lookupGrad(const T *table, int64_t D, const int64_t *ids, const int64_t *offsets,
                const T *weights, int64_t B, Pooling pooling, const T *dy, T *dvals);
/// y[n, D] = table[ids[i]] (unpooled; n = number of ids).
template <class T> void gatherForward(const T *table, int64_t D, const int64_t *ids, int64_t n, T *y);

/// Sorts (rows, vals) by row and sums the values of duplicate rows, in
/// place; returns the number of distinct rows. Deterministic: ascending rows,
/// duplicates summed in their original order.
template <class T> int64_t coalesceRows(int64_t *rows, T *vals, int64_t n, int64_t D);

// --- Optimizers -------------------------------------------------------------

/// Hyper-parameters. With g = gradScale * accumulated gradient, lr = lr * lrScale
/// and t the 1-based optimizer step:
///   coupled weight decay (all but adamw, lamb):   g += wd * w
///   sgd:      momentum == 0: w -= lr g;  else  m = momentum m + g;  w -= lr m
///   adagrad:  a += g^2;  w -= lr g / (sqrt(a) + eps)          (a starts at initialAccumulator)
///   rowwise_adagrad: per row r of length D: a_r += mean_j(g_rj^2);  w_r -= lr g_r / (sqrt(a_r) + eps)
///   adam:     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  mh = m/(1-b1^t);  vh = v/(1-b2^t)
///             w -= lr mh / (sqrt(vh) + eps)
///   adamw:    w *= (1 - lr wd), then adam without coupled decay
///   lamb:     m, v, mh, vh as adam;  r = mh/(sqrt(vh)+eps) + wd w;
///             trust = |w| / |r| (1 when either norm is 0);  w -= lr trust r
///             (norms over the whole parameter; per row for a table)
struct OptimizerParams {
  OptimizerKind kind = OptimizerKind::Sgd;
  double lr = 0.01, momentum = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0;
  bool globalDecay = true; ///< tables: decay every row each step (sgd, adamw only)
};

/// Dense update of n values; `rowLength` is the row length for
/// rowwise_adagrad (state0 then has n / rowLength entries). state0/state1
/// may be null when the optimizer needs fewer states.
///
/// Every update checks what it wrote (docs/training.md, "Non-finite
/// values"): returns the lowest index whose value or state is NaN or
/// infinite after the step, or -1 when all are finite. The whole update is
/// applied either way; the caller stops the run.
template <class T>
[[nodiscard]] int64_t denseUpdate(const OptimizerParams &p, int64_t step, double lrScale,
                                  double gradScale, T *w, const T *g, T *state0, T *state1,
                                  int64_t n, int64_t rowLength);

/// The first table row an update left not finite: the row, and its entry in
/// the update's (rows, vals) when it had one (-1 when the global decay did
/// it). row -1: every updated row is finite.
struct SparseNonFinite {
  int64_t row = -1, entry = -1;
  explicit operator bool() const { return row >= 0; }
};

/// Sparse update of a table (rows x D) from coalesced (rows, vals), nnz
/// distinct rows. Lazy: only those rows and their state change. With
/// globalDecay and weightDecay > 0 (sgd without momentum, adamw), every row
/// is first scaled by (1 - lr wd). rowwise_adagrad's state0 has `rows`
/// entries. Returns the first updated row (lowest entry) left not finite.
template <class T>
[[nodiscard]] SparseNonFinite sparseUpdate(const OptimizerParams &p, int64_t step, double lrScale,
                                           double gradScale, T *table, int64_t rows, int64_t D,
                                           const int64_t *uniqueRows, const T *vals, int64_t nnz,
                                           T *state0, T *state1);

/// Sum of squares of n values (for clipping by the global norm).
template <class T> double sumSquares(const T *x, int64_t n);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_KERNELS_H
