//===- Trainer.h - the training loop behind embrun ---------------*- C++ -*-===//
//
// Reads a plan, trains it on a data stream with the executor, evaluates,
// reports progress and metrics, and saves, resumes and exports checkpoints.
// Kept out of main() so tests can drive whole runs.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_TRAINER_H
#define EMBC_RUNTIME_EXEC_TRAINER_H

#include "embc/runtime/Plan.h"
#include "embc/runtime/RunOptions.h"

#include <map>
#include <memory>
#include <ostream>
#include <string>

namespace embc::runtime {

class Backend;
namespace comm {
class Communicator;
}

/// What a run reached, also written as the final {"event":"summary"} record.
struct TrainSummary {
  int64_t steps = 0;          ///< optimizer steps in total (including resumed ones)
  double trainLoss = 0;       ///< mean loss over the last report interval
  std::map<std::string, double> eval; ///< eval_loss, auc, rmse (when measured)
  double samplesPerSecond = 0;
  int64_t peakMemoryBytes = 0;
  int64_t skippedLines = 0;
};

/// Trains `plan` as `options` say on `backend` (createBackend, embrun
/// --device); progress goes to `console` (a live line when `tty`). Throws
/// std::runtime_error (DataError, CheckpointError, ...) with a message that
/// says what is wrong.
/// `comm`: the job's ranks for a data-parallel plan (plan.config.dataParallel
/// ranks; every rank calls train), null for a single process.
TrainSummary train(const Plan &plan, const RunOptions &options, std::unique_ptr<Backend> backend,
                   std::ostream &console, bool tty, comm::Communicator *comm = nullptr);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_TRAINER_H
