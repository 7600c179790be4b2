// What -emb-batch-exchanges refuses: a module -emb-plan-memory has already
// planned (merging exchanges afterwards would change the buffers it
// placed). Malformed groups are refused by the ops' verifiers
// (test/Dialect/comm-ops-invalid.mlir).
// RUN: emb-opt %s -emb-batch-exchanges -verify-diagnostics

// expected-error @+1 {{-emb-batch-exchanges runs before -emb-plan-memory, which has already planned this module (emb.memory_plan = {buffers = 3 : i64, lower_bound = 128 : i64, peak = 192 : i64, sequential = 192 : i64, strategy = "greedy_by_size"})}}
module attributes {emb.memory_plan = {buffers = 3 : i64, lower_bound = 128 : i64, peak = 192 : i64, sequential = 192 : i64, strategy = "greedy_by_size"},
                   emb.training = #emb.training<batch_size = 4, dense_optimizer = <kind = sgd, lr = 0.1>>} {
  func.func @train_step() {
    return
  }
  func.func @update() {
    return
  }
}
