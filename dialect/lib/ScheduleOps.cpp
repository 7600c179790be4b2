//===- ScheduleOps.cpp - emb.schedule and the schedule checker ------------===//
//
// The verifier of emb.schedule checks that a pipeline schedule can run:
// every stage's program (its instructions in listed order) is simulated with
// blocking receives, so a schedule that would hang on some device is
// rejected at compile time with the stages and instructions involved.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace embc::emb;

namespace {

enum class Kind { Load, Forward, Backward, Send, Recv, Reduce, Step };

/// One instruction, decoded: who runs it, for which micro-batch, with whom.
struct Instr {
  Operation *op = nullptr;
  Kind kind = Kind::Load;
  int64_t stage = 0, mb = -1, peer = -1;
  ArrayAttr types;
  size_t index = 0; ///< position in the listed order
};

Instr decode(Operation *op, size_t index) {
  Instr in;
  in.op = op;
  in.index = index;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](SchedLoadOp o) { in = {op, Kind::Load, int64_t(o.getStage()), int64_t(o.getMb())}; })
      .Case([&](SchedForwardOp o) { in = {op, Kind::Forward, int64_t(o.getStage()), int64_t(o.getMb())}; })
      .Case([&](SchedBackwardOp o) { in = {op, Kind::Backward, int64_t(o.getStage()), int64_t(o.getMb())}; })
      .Case([&](SchedSendOp o) {
        in = {op, Kind::Send, int64_t(o.getStage()), int64_t(o.getMb()), int64_t(o.getPeer()), o.getTypes()};
      })
      .Case([&](SchedRecvOp o) {
        in = {op, Kind::Recv, int64_t(o.getStage()), int64_t(o.getMb()), int64_t(o.getPeer()), o.getTypes()};
      })
      .Case([&](SchedReduceOp o) { in = {op, Kind::Reduce, int64_t(o.getStage())}; })
      .Case([&](SchedStepOp o) { in = {op, Kind::Step, int64_t(o.getStage())}; });
  in.index = index;
  return in;
}

/// (sender, receiver, micro-batch): what pairs a send with its recv.
using Link = std::tuple<int64_t, int64_t, int64_t>;

Link linkOf(const Instr &in) {
  return in.kind == Kind::Send ? Link{in.stage, in.peer, in.mb}
                               : Link{in.peer, in.stage, in.mb};
}

std::string describe(const Instr &in) {
  std::string s = in.op->getName().stripDialect().drop_front(6).str() + " of stage " +
                  std::to_string(in.stage);
  if (in.mb >= 0)
    s += ", micro-batch " + std::to_string(in.mb);
  if (in.kind == Kind::Send)
    s += ", to stage " + std::to_string(in.peer);
  if (in.kind == Kind::Recv)
    s += ", from stage " + std::to_string(in.peer);
  return s + " (instruction #" + std::to_string(in.index) + ")";
}

/// Checks the range of an instruction's stage, micro-batch and peer against
/// its schedule.
LogicalResult verifyPlacement(Operation *op, int64_t stage, int64_t mb,
                              int64_t peer) {
  auto sched = op->getParentOfType<ScheduleOp>();
  if (!sched)
    return success(); // HasParent reports it
  int64_t p = int64_t(sched.getStages()), m = int64_t(sched.getMicroBatches());
  if (stage >= p)
    return op->emitOpError("runs on stage ") << stage << " but the schedule has " << p
                                             << " stage(s)";
  if (mb >= m)
    return op->emitOpError("names micro-batch ")
           << mb << " but the schedule has " << m << " micro-batch(es)";
  if (peer >= p)
    return op->emitOpError("names peer stage ") << peer << " but the schedule has " << p
                                                << " stage(s)";
  if (peer == stage)
    return op->emitOpError("sends to or receives from its own stage ") << stage;
  return success();
}

} // namespace

LogicalResult SchedLoadOp::verify() { return verifyPlacement(*this, getStage(), getMb(), -1); }
LogicalResult SchedForwardOp::verify() { return verifyPlacement(*this, getStage(), getMb(), -1); }
LogicalResult SchedBackwardOp::verify() { return verifyPlacement(*this, getStage(), getMb(), -1); }
LogicalResult SchedSendOp::verify() { return verifyPlacement(*this, getStage(), getMb(), getPeer()); }
LogicalResult SchedRecvOp::verify() { return verifyPlacement(*this, getStage(), getMb(), getPeer()); }
LogicalResult SchedReduceOp::verify() { return verifyPlacement(*this, getStage(), -1, -1); }
LogicalResult SchedStepOp::verify() { return verifyPlacement(*this, getStage(), -1, -1); }

namespace {

/// The checks of one schedule; each returns failure after reporting.
class Checker {
public:
  explicit Checker(ScheduleOp sched)
      : sched(sched), p(int64_t(sched.getStages())),
        m(int64_t(sched.getMicroBatches())), programs(p) {
    for (Operation &op : sched.getBody().front()) {
      all.push_back(decode(&op, all.size()));
      programs[all.back().stage].push_back(all.size() - 1);
    }
  }

  LogicalResult run() {
    return success(succeeded(placement()) && succeeded(microBatches()) && succeeded(transfers()) &&
                   succeeded(stepsAndReduces()) && succeeded(deadlocks()) &&
                   succeeded(listedOrder()));
  }

private:
  ScheduleOp sched;
  int64_t p, m;
  SmallVector<Instr> all;
  SmallVector<SmallVector<size_t>> programs; ///< per stage: indices into `all`
  /// Per (kind, stage, mb): the instruction's index in `all`.
  DenseMap<std::tuple<int, int64_t, int64_t>, size_t> once;
  DenseMap<Link, size_t> sends, recvs;

  /// `ranks`: one per stage, 0 first, each the same as or one more than the
  /// previous (contiguous stages per rank, no rank without a stage).
  LogicalResult placement() {
    std::optional<ArrayRef<int64_t>> ranks = sched.getRanks();
    if (!ranks)
      return success();
    if (int64_t(ranks->size()) != p)
      return sched.emitOpError("places ")
             << ranks->size() << " stage(s) on ranks but has " << p << " stage(s)";
    for (int64_t s = 0; s < p; ++s) {
      int64_t previous = s == 0 ? 0 : (*ranks)[size_t(s - 1)];
      int64_t r = (*ranks)[size_t(s)];
      if (s == 0 ? r != 0 : r != previous && r != previous + 1)
        return sched.emitOpError("places stage ")
               << s << " on rank " << r << " after rank " << previous
               << ": ranks must start at 0 and take contiguous stages in order";
    }
    return success();
  }

  std::optional<size_t> find(Kind kind, int64_t stage, int64_t mb) const {
    auto it = once.find({int(kind), stage, mb});
    if (it == once.end())
      return std::nullopt;
    return it->second;
  }

  /// Forward and backward of every micro-batch exactly once per stage, the
  /// backward after the forward; loads once per micro-batch where a stage
  /// loads, stage 0 loading all, each before the forward it feeds.
  LogicalResult microBatches() {
    for (const Instr &in : all) {
      if (in.kind != Kind::Load && in.kind != Kind::Forward && in.kind != Kind::Backward)
        continue;
      auto [it, fresh] = once.try_emplace({int(in.kind), in.stage, in.mb}, in.index);
      if (!fresh)
        return in.op->emitOpError("repeats micro-batch ")
               << in.mb << " on stage " << in.stage << " (first at instruction #"
               << it->second << ")";
    }
    for (int64_t s = 0; s < p; ++s) {
      bool loads = s == 0;
      for (int64_t mb = 0; mb < m; ++mb)
        loads |= find(Kind::Load, s, mb).has_value();
      for (int64_t mb = 0; mb < m; ++mb) {
        auto f = find(Kind::Forward, s, mb), b = find(Kind::Backward, s, mb);
        auto l = find(Kind::Load, s, mb);
        if (!f)
          return sched.emitOpError("stage ")
                 << s << " never runs the forward of micro-batch " << mb;
        if (!b)
          return sched.emitOpError("stage ")
                 << s << " never runs the backward of micro-batch " << mb;
        if (*b < *f)
          return all[*b].op->emitOpError("runs the backward of micro-batch ")
                 << mb << " on stage " << s << " before its forward (instruction #" << *f
                 << ")";
        if (loads && !l)
          return sched.emitOpError("stage ")
                 << s << " never loads micro-batch " << mb;
        if (l && *l > *f)
          return all[*l].op->emitOpError("loads micro-batch ")
                 << mb << " on stage " << s << " after its forward (instruction #" << *f
                 << ")";
      }
    }
    return success();
  }

  /// Every send has exactly one recv of the same micro-batch with the stages
  /// swapped, both carrying the same types; a forward boundary is sent after
  /// the forward that computes it and received before the forward that
  /// reads it (gradients likewise with the backwards).
  LogicalResult transfers() {
    for (const Instr &in : all) {
      if (in.kind != Kind::Send && in.kind != Kind::Recv)
        continue;
      auto &map = in.kind == Kind::Send ? sends : recvs;
      auto [it, fresh] = map.try_emplace(linkOf(in), in.index);
      if (!fresh)
        return in.op->emitOpError("repeats the transfer of micro-batch ")
               << in.mb << " between stages " << std::get<0>(linkOf(in)) << " and "
               << std::get<1>(linkOf(in)) << " (first at instruction #" << it->second
               << ")";
      bool upward = std::get<0>(linkOf(in)) < std::get<1>(linkOf(in));
      Kind compute = upward ? Kind::Forward : Kind::Backward;
      std::optional<size_t> at = find(compute, in.stage, in.mb);
      if (in.kind == Kind::Send && at && *at > in.index)
        return in.op->emitOpError("sends micro-batch ")
               << in.mb << " before the " << (upward ? "forward" : "backward")
               << " of stage " << in.stage << " computes it (instruction #" << *at << ")";
      if (in.kind == Kind::Recv && at && *at < in.index)
        return in.op->emitOpError("receives micro-batch ")
               << in.mb << " after the " << (upward ? "forward" : "backward")
               << " of stage " << in.stage << " that reads it (instruction #" << *at << ")";
    }
    for (auto &[link, index] : sends)
      if (!recvs.count(link))
        return all[index].op->emitOpError("has no matching recv: stage ")
               << std::get<1>(link) << " never receives micro-batch " << std::get<2>(link)
               << " from stage " << std::get<0>(link);
    for (auto &[link, index] : recvs) {
      auto send = sends.find(link);
      if (send == sends.end())
        return all[index].op->emitOpError("has no matching send: stage ")
               << std::get<0>(link) << " never sends micro-batch " << std::get<2>(link)
               << " to stage " << std::get<1>(link);
      ArrayAttr sent = all[send->second].types, got = all[index].types;
      if (sent != got)
        return all[index].op->emitOpError("receives ")
               << got << " but the matching send (instruction #" << send->second
               << ") sends " << sent << ": boundary shapes and dtypes must agree";
    }
    return success();
  }

  /// One step per stage after all its backwards; at most one reduce, between
  /// the last backward and the step.
  LogicalResult stepsAndReduces() {
    for (int64_t s = 0; s < p; ++s) {
      std::optional<size_t> step, reduce;
      for (size_t i : programs[s]) {
        const Instr &in = all[i];
        if (in.kind != Kind::Step && in.kind != Kind::Reduce)
          continue;
        std::optional<size_t> &slot = in.kind == Kind::Step ? step : reduce;
        if (slot)
          return in.op->emitOpError("repeats the ")
                 << (in.kind == Kind::Step ? "step" : "reduce") << " of stage " << s
                 << " (first at instruction #" << *slot << ")";
        slot = i;
        for (int64_t mb = 0; mb < m; ++mb)
          if (*find(Kind::Backward, s, mb) > i)
            return in.op->emitOpError("comes before the backward of micro-batch ")
                   << mb << " on stage " << s << " (instruction #"
                   << *find(Kind::Backward, s, mb) << ")";
      }
      if (!step)
        return sched.emitOpError("stage ") << s << " has no step";
      if (reduce && *reduce > *step)
        return all[*reduce].op->emitOpError("comes after the step of stage ")
               << s << " (instruction #" << *step << ")";
    }
    return success();
  }

  /// Runs every stage's program in rounds: each stage runs its next
  /// instruction unless it is a recv whose send has not run yet. Sends never
  /// block (the receiver's slot holds the data). No progress with work left
  /// is a deadlock: each blocked stage waits on another blocked stage, so
  /// the waits form a cycle, which the error spells out.
  LogicalResult deadlocks() {
    SmallVector<size_t> head(p, 0);
    llvm::DenseSet<Link> sent;
    while (true) {
      bool progress = false, done = true;
      for (int64_t s = 0; s < p; ++s) {
        if (head[s] == programs[s].size())
          continue;
        done = false;
        const Instr &in = all[programs[s][head[s]]];
        if (in.kind == Kind::Recv && !sent.contains(linkOf(in)))
          continue;
        if (in.kind == Kind::Send)
          sent.insert(linkOf(in));
        ++head[s];
        progress = true;
      }
      if (done)
        return success();
      if (!progress)
        break;
    }
    // Follow the waits from the first blocked stage until a stage repeats.
    int64_t s = 0;
    while (head[s] == programs[s].size())
      ++s;
    SmallVector<int64_t> path;
    while (!llvm::is_contained(path, s)) {
      path.push_back(s);
      s = all[programs[s][head[s]]].peer;
    }
    auto cycleStart = llvm::find(path, s);
    InFlightDiagnostic diag = sched.emitOpError("deadlocks: circular wait: ");
    for (auto it = cycleStart; it != path.end(); ++it) {
      const Instr &in = all[programs[*it][head[*it]]];
      diag << (it == cycleStart ? "" : ", while ") << "stage " << in.stage
           << " waits in recv of micro-batch " << in.mb << " from stage " << in.peer
           << " (instruction #" << in.index << ")";
    }
    return diag;
  }

  /// One device runs the instructions in the listed order, so each recv
  /// must be listed after its send.
  LogicalResult listedOrder() {
    for (auto &[link, index] : recvs)
      if (sends.lookup(link) > index)
        return all[index].op->emitOpError("is listed before its matching send (")
               << describe(all[sends.lookup(link)])
               << "): one device runs the instructions in the listed order";
    return success();
  }
};

} // namespace

LogicalResult ScheduleOp::verifyRegions() { return Checker(*this).run(); }
