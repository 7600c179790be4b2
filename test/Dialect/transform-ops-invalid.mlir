// Verifier errors of the packing and fusion ops (TransformOps.cpp), with
// their symbol checks, and of emb.activation_grad with `from_output`.
// RUN: emb-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// emb.param_pack
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'emb.param_pack' op element type must be a scalar type, got 'index'}}
emb.param_pack @p : index[64] members [] offsets [] buckets [0, 64]

// -----

emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @b : tensor<4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op has 2 members but 1 offsets}}
emb.param_pack @p : f32[32] members [@b, @w] offsets [0] buckets [0, 32]

// -----

emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
// expected-error @+1 {{'emb.param_pack' op has 1 members but 2 offsets}}
emb.param_pack @p : f32[32] members [@w] offsets [0, 16] buckets [0, 32]

// -----

// The buckets must start at 0 ...
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
// expected-error @+1 {{'emb.param_pack' op buckets must run from 0 to the pack size 16}}
emb.param_pack @p : f32[16] members [@w] offsets [0] buckets [8, 16]

// -----

// ... end at the pack size ...
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
// expected-error @+1 {{'emb.param_pack' op buckets must run from 0 to the pack size 16}}
emb.param_pack @p : f32[16] members [@w] offsets [0] buckets [0, 12]

// -----

// ... and have both ends.
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
// expected-error @+1 {{'emb.param_pack' op buckets must run from 0 to the pack size 16}}
emb.param_pack @p : f32[16] members [@w] offsets [0] buckets [16]

// -----

emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @b : tensor<4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op bucket boundaries must rise strictly, got 16 then 16}}
emb.param_pack @p : f32[32] members [@b, @w] offsets [0, 16] buckets [0, 16, 16, 32]

// -----

emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @b : tensor<4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op bucket boundaries must rise strictly, got 24 then 16}}
emb.param_pack @p : f32[32] members [@b, @w] offsets [0, 16] buckets [0, 24, 16, 32]

// -----

// f32: offsets are multiples of 16 elements (64 bytes).
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @b : tensor<4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op offset 4 of @w is not a non-negative multiple of 16 elements (64 bytes)}}
emb.param_pack @p : f32[32] members [@b, @w] offsets [0, 4] buckets [0, 32]

// -----

// bf16: multiples of 32 elements; 16 is not enough.
emb.param @h : tensor<8xbf16> init<kind = zeros>
emb.param @g : tensor<8xbf16> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op offset 16 of @g is not a non-negative multiple of 32 elements (64 bytes)}}
emb.param_pack @p : bf16[64] members [@h, @g] offsets [0, 16] buckets [0, 64]

// -----

emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
// expected-error @+1 {{'emb.param_pack' op offset -16 of @w is not a non-negative multiple of 16 elements (64 bytes)}}
emb.param_pack @p : f32[32] members [@w] offsets [-16] buckets [0, 32]

// -----

// expected-error @+1 {{'emb.param_pack' op attribute 'size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
emb.param_pack @p : f32[0] members [] offsets [] buckets [0, 0]

// -----

// A member is a dense parameter: not a table ...
emb.table @t [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
// expected-error @+1 {{'emb.param_pack' op member @t is not an emb.param}}
emb.param_pack @p : f32[48] members [@t] offsets [0] buckets [0, 48]

// -----

// ... nor a missing symbol.
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
// expected-error @+1 {{'emb.param_pack' op member @nope is not an emb.param}}
emb.param_pack @p : f32[32] members [@w, @nope] offsets [0, 16] buckets [0, 32]

// -----

emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @h : tensor<4xbf16> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op member @h has element type 'bf16', the pack 'f32'}}
emb.param_pack @p : f32[32] members [@w, @h] offsets [0, 16] buckets [0, 32]

// -----

// @w (12 elements at 0) and @v (4 elements at 0) share elements.
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @v : tensor<4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op members @w and @v overlap}}
emb.param_pack @p : f32[32] members [@w, @v] offsets [0, 0] buckets [0, 32]

// -----

// Overlap is found whatever the order of the members: @big (20 elements at
// 0) runs into @b at 16.
emb.param @big : tensor<20xf32> init<kind = zeros>
emb.param @b : tensor<4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op members @big and @b overlap}}
emb.param_pack @p : f32[48] members [@b, @big] offsets [16, 0] buckets [0, 48]

// -----

// 16 + 12 = 28 > 16.
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @b : tensor<4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op member @w ends at element 28, past the pack size 16}}
emb.param_pack @p : f32[16] members [@b, @w] offsets [0, 16] buckets [0, 16]

// -----

// A parameter lives in one pack.
emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
emb.param @b : tensor<4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.param_pack' op member @w is also in pack @p2}}
emb.param_pack @p1 : f32[32] members [@b, @w] offsets [0, 16] buckets [0, 32]
emb.param_pack @p2 : f32[16] members [@w] offsets [0] buckets [0, 16]

//===----------------------------------------------------------------------===//
// emb.table_batch
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'emb.table_batch' op needs at least one member table}}
emb.table_batch @b []

// -----

emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @t1 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
// expected-error @+1 {{'emb.table_batch' op lists @t0 twice}}
emb.table_batch @b [@t0, @t1, @t0]

// -----

emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
emb.param @w : tensor<10x4xf32> init<kind = zeros>
// expected-error @+1 {{'emb.table_batch' op 'w' does not name an emb.table in this module}}
emb.table_batch @b [@t0, @w]

// -----

emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
// expected-error @+1 {{'emb.table_batch' op 'missing' does not name an emb.table in this module}}
emb.table_batch @b [@t0, @missing]

// -----

// One row width ...
emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @t1 [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
// expected-error @+1 {{'emb.table_batch' op member @t1 differs from @t0 in dim, storage or optimizer; a batch shares all three}}
emb.table_batch @b [@t0, @t1]

// -----

// ... one storage ...
emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @t1 [20 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @t2 [10 x 4] bf16 init<kind = zeros> optimizer<kind = sgd>
// expected-error @+1 {{'emb.table_batch' op member @t2 differs from @t0 in dim, storage or optimizer; a batch shares all three}}
emb.table_batch @b [@t0, @t1, @t2]

// -----

// ... one placement (one buffer lives in one tier) ...
emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd> placement disk
emb.table @t1 [20 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
// expected-error @+1 {{'emb.table_batch' op member @t1 has placement device, @t0 disk; a batch's buffers live in one place}}
emb.table_batch @b [@t0, @t1]

// -----

// ... and one optimizer: the kind ...
emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = adagrad>
emb.table @t1 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
// expected-error @+1 {{'emb.table_batch' op member @t1 differs from @t0 in dim, storage or optimizer; a batch shares all three}}
emb.table_batch @b [@t0, @t1]

// -----

// ... and its hyper-parameters (one step with one learning rate). The
// initializer and row count may differ.
emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.1>
emb.table @t1 [30 x 4] f32 init<kind = constant, value = 1.0> optimizer<kind = sgd, lr = 0.1>
emb.table @t2 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd, lr = 0.2>
// expected-error @+1 {{'emb.table_batch' op member @t2 differs from @t0 in dim, storage or optimizer; a batch shares all three}}
emb.table_batch @b [@t0, @t1, @t2]

// -----

// A table lives in one batch.
emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @t1 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
emb.table @t2 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
// expected-error @+1 {{'emb.table_batch' op member @t1 is also in batch @b2}}
emb.table_batch @b1 [@t0, @t1]
emb.table_batch @b2 [@t1, @t2]

//===----------------------------------------------------------------------===//
// emb.fused and emb.yield
//===----------------------------------------------------------------------===//

// -----

func.func @yield_type(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'emb.fused' op yields 'tensor<8x4xf32>' but its results are 'tensor<8x4xf16>'}}
  %y = emb.fused elementwise -> tensor<8x4xf16> {
    %a = emb.activation relu %x : tensor<8x4xf32>
    emb.yield %a : tensor<8x4xf32>
  }
  return %x : tensor<8x4xf32>
}

// -----

func.func @yield_count(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'emb.fused' op yields 'tensor<8x4xf32>', 'tensor<8x4xf32>' but its results are 'tensor<8x4xf32>'}}
  %y = emb.fused elementwise -> tensor<8x4xf32> {
    %a = emb.activation relu %x : tensor<8x4xf32>
    %b = emb.activation tanh %a : tensor<8x4xf32>
    emb.yield %a, %b : tensor<8x4xf32>, tensor<8x4xf32>
  }
  return %y : tensor<8x4xf32>
}

// -----

func.func @yield_nothing(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'emb.fused' op yields  but its results are 'tensor<8x4xf32>'}}
  %y = emb.fused elementwise -> tensor<8x4xf32> {
    %a = emb.activation relu %x : tensor<8x4xf32>
    %b = emb.activation tanh %a : tensor<8x4xf32>
    emb.yield
  }
  return %y : tensor<8x4xf32>
}

// -----

func.func @empty_body(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'emb.fused' op has an empty body}}
  emb.fused elementwise {
    emb.yield
  }
  return
}

// -----

func.func @no_block(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'emb.fused' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
  emb.fused elementwise {
  }
  return
}

// -----

func.func @other_terminator(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'emb.fused' op body must end with emb.yield}}
  emb.fused elementwise {
    %a = emb.activation relu %x : tensor<8x4xf32>
    func.return
  }
  return
}

// -----

func.func @no_terminator(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'emb.fused' op body must end with emb.yield}}
  emb.fused elementwise {
    %a = emb.activation relu %x : tensor<8x4xf32>
  }
  return
}

// -----

func.func @block_arguments(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'emb.fused' op body takes no block arguments (it reads values from outside directly)}}
  emb.fused elementwise {
  ^bb0(%y: tensor<8x4xf32>):
    %a = emb.activation relu %y : tensor<8x4xf32>
    emb.yield
  }
  return
}

// -----

func.func @yield_outside(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'emb.yield' op expects parent op 'emb.fused'}}
  emb.yield
}

// -----

// Each kind holds only the ops its kernel runs.
emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @not_in_lookup(%ids: tensor<?xi64>, %offs: tensor<5xi64>) -> tensor<4x4xf32> {
  %e = emb.fused lookup -> tensor<4x4xf32> {
    %l = emb.lookup @t0[%ids, %offs] sum : tensor<?xi64>, tensor<5xi64> -> tensor<4x4xf32>
    // expected-error @+1 {{'emb.activation' op cannot be part of a 'lookup' fusion group}}
    %a = emb.activation relu %l : tensor<4x4xf32>
    emb.yield %a : tensor<4x4xf32>
  }
  return %e : tensor<4x4xf32>
}

// -----

emb.param @w : tensor<3x4xf32> init<kind = xavier_uniform>
func.func @not_in_dense_act(%x: tensor<8x3xf32>) -> tensor<8x4xf32> {
  %y = emb.fused dense_act -> tensor<8x4xf32> {
    // expected-error @+1 {{'emb.get' op cannot be part of a 'dense_act' fusion group}}
    %w = emb.get @w : tensor<3x4xf32>
    %z = emb.dense %x, %w : tensor<8x3xf32>, tensor<3x4xf32> -> tensor<8x4xf32>
    %a = emb.activation relu %z : tensor<8x4xf32>
    emb.yield %a : tensor<8x4xf32>
  }
  return %y : tensor<8x4xf32>
}

// -----

func.func @not_in_dense_act_grad(%dy: tensor<8x4xf32>, %z: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %d = emb.fused dense_act_grad -> tensor<8x4xf32> {
    %g = emb.activation_grad relu %dy, %z : tensor<8x4xf32>
    // expected-error @+1 {{'emb.add' op cannot be part of a 'dense_act_grad' fusion group}}
    %s = emb.add %g, %dy : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
    emb.yield %s : tensor<8x4xf32>
  }
  return %d : tensor<8x4xf32>
}

// -----

emb.param @w : tensor<4x4xf32> init<kind = xavier_uniform>
func.func @not_in_elementwise(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %y = emb.fused elementwise -> tensor<8x4xf32> {
    // expected-error @+1 {{'emb.dense' op cannot be part of a 'elementwise' fusion group}}
    %z = emb.dense %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %a = emb.activation relu %z : tensor<8x4xf32>
    emb.yield %a : tensor<8x4xf32>
  }
  return %y : tensor<8x4xf32>
}

// -----

func.func @not_in_interaction_concat(%x: tensor<8x4xf32>, %e: tensor<8x4xf32>) -> tensor<8x5xf32> {
  %c = emb.fused interaction_concat -> tensor<8x5xf32> {
    %i = emb.interaction %x, %e : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x1xf32>
    // expected-error @+1 {{'emb.activation' op cannot be part of a 'interaction_concat' fusion group}}
    %r = emb.activation relu %i : tensor<8x1xf32>
    %cat = emb.concat %x, %r : tensor<8x4xf32>, tensor<8x1xf32> -> tensor<8x5xf32>
    emb.yield %cat : tensor<8x5xf32>
  }
  return %c : tensor<8x5xf32>
}

// -----

func.func @not_in_interaction_concat_grad(%dc: tensor<8x5xf32>, %x: tensor<8x4xf32>) -> tensor<8x5xf32> {
  %g = emb.fused interaction_concat_grad -> tensor<8x5xf32> {
    // expected-error @+1 {{'emb.concat' op cannot be part of a 'interaction_concat_grad' fusion group}}
    %c = emb.concat %x, %dc : tensor<8x4xf32>, tensor<8x5xf32> -> tensor<8x9xf32>
    %s = emb.slice %c[4] : tensor<8x9xf32> -> tensor<8x5xf32>
    emb.yield %s : tensor<8x5xf32>
  }
  return %g : tensor<8x5xf32>
}

// -----

emb.table @t0 [10 x 4] f32 init<kind = zeros> optimizer<kind = sgd>
func.func @not_in_embedding_update(%ids: tensor<?xi64>, %offs: tensor<5xi64>, %dy: tensor<4x4xf32>) {
  emb.fused embedding_update {
    %g = emb.lookup_grad @t0[%ids, %offs] sum %dy : tensor<?xi64>, tensor<5xi64>, tensor<4x4xf32> -> tensor<?x4xf32>
    emb.accumulate_rows @t0[%ids], %g : tensor<?xi64>, tensor<?x4xf32>
    emb.coalesce_rows @t0
    // expected-error @+1 {{'emb.clip_grad_norm' op cannot be part of a 'embedding_update' fusion group}}
    %s = emb.clip_grad_norm max_norm(1.0) : tensor<f32>
    emb.update @t0 scale %s : tensor<f32>
    emb.yield
  }
  return
}

// -----

// A nested group is not one kernel either.
func.func @nested(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = emb.fused elementwise -> tensor<8x4xf32> {
    // expected-error @+1 {{'emb.fused' op cannot be part of a 'elementwise' fusion group}}
    %a = emb.fused elementwise -> tensor<8x4xf32> {
      %r = emb.activation relu %x : tensor<8x4xf32>
      emb.yield %r : tensor<8x4xf32>
    }
    %t = emb.activation tanh %a : tensor<8x4xf32>
    emb.yield %t : tensor<8x4xf32>
  }
  return %y : tensor<8x4xf32>
}

//===----------------------------------------------------------------------===//
// emb.activation_grad from_output
//===----------------------------------------------------------------------===//

// -----

func.func @gelu_from_output(%dy: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'emb.activation_grad' op gelu's derivative cannot be computed from its output; 'from_output' needs relu, sigmoid or tanh}}
  %0 = emb.activation_grad gelu %dy, %y from_output : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
