#!/usr/bin/env python3
"""Memory planning end to end (-emb-plan-memory), on every example model:

  1. the planned peak is within 5% of the lower bound (the most bytes live
     at one kernel), and never above the sequential layout's
     (the plans' JSON bodies, with and without --no-plan-memory);
  2. the report's peak is what embrun allocates: the report embc prints
     with the plan gives the peak in bytes, embrun's summary record logs the
     arena it allocated;
  3. training with the planned layout is bit-identical to the sequential
     one (--no-plan-memory): the same loss at every step and the same bytes
     in the checkpoint (parameters, tables, optimizer state).

Parts 2 and 3 skip the MLPerf-size DLRM, whose tables need ~100 GiB: it is
compiled only.

Usage: memory_plan.py --embc PATH --embrun PATH --examples DIR --work DIR
       [--steps N] [--models a.json,b.json]
"""
import json
import os
import re
import shutil
import sys

from e2e_common import check_models_main, report, run

TOLERANCE = 0.05
COMPILE_ONLY = {"dlrm_mlperf.json"}


def compile_plan(args, model, variant, flags):
    """Compiles to a plan file; returns its path, its JSON body (after the
    32-byte header, docs/plan-format.md) and the peak the report printed."""
    work = os.path.join(args.work, os.path.splitext(model)[0], variant)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    path = os.path.join(work, "model.plan")
    report = run([args.embc, os.path.join(args.examples, model), "-o", path] + flags).stdout
    with open(path, "rb") as f:
        body = json.loads(f.read()[32:])
    m = re.search(r"peak [0-9.]+ MiB = the arena embrun allocates \(([0-9]+) bytes\)", report)
    if not m:
        sys.exit(f"FAIL: {model}: no peak in the report:\n{report[:2000]}")
    return path, body, int(m.group(1))


def train(args, plan):
    """Trains a plan; returns (losses, checkpoint bytes, arena logged)."""
    work = os.path.dirname(plan)
    log, ckpt = os.path.join(work, "log.jsonl"), os.path.join(work, "ckpt")
    run([args.embrun, plan, "--steps", str(args.steps), "--report-every", "1",
         "--threads", "2", "--log", log, "--save", ckpt])
    records = [json.loads(line) for line in open(log)]
    losses = [r["loss"] for r in records if r.get("event") == "train"]
    summary = [r for r in records if r.get("event") == "summary"]
    if len(losses) != args.steps or len(summary) != 1:
        sys.exit(f"FAIL: {plan}: {len(losses)} train records and {len(summary)} "
                 f"summaries, expected {args.steps} and 1")
    with open(os.path.join(ckpt, "checkpoint.safetensors"), "rb") as f:
        return losses, f.read(), summary[0]["arena_bytes"]


def check_model(args, model):
    failures = []
    planned_path, planned, peak = compile_plan(args, model, "planned", [])
    seq_path, sequential, _ = compile_plan(args, model, "sequential", ["--no-plan-memory"])
    mem, seq = planned["memory"], sequential["memory"]
    ratio = mem["peak_bytes"] / mem["lower_bound_bytes"]
    if mem["strategy"] != "greedy_by_size" or seq["strategy"] != "sequential":
        failures.append(f"strategies {mem['strategy']} / {seq['strategy']}")
    if ratio > 1 + TOLERANCE:
        failures.append(f"peak {mem['peak_bytes']} is {ratio:.3f} x the lower bound "
                        f"{mem['lower_bound_bytes']} (more than {TOLERANCE:.0%} above)")
    if ratio < 1 or mem["peak_bytes"] > seq["peak_bytes"]:
        failures.append(f"peak {mem['peak_bytes']} below the lower bound or above the "
                        f"sequential {seq['peak_bytes']}")
    if mem["lower_bound_bytes"] != seq["lower_bound_bytes"]:
        failures.append("the lower bound depends on the layout")
    shared = {}
    for b in planned["buffers"]:
        if b["parent"] < 0 and b["first_use"] >= 0:
            shared.setdefault(b["offset"], []).append(b["name"])
    reused = sum(len(v) - 1 for v in shared.values())
    line = (f"{model}: peak {mem['peak_bytes']} / lower bound {mem['lower_bound_bytes']} = "
            f"{ratio:.4f} (sequential {seq['peak_bytes']}), {reused} buffers reuse an offset")

    if model not in COMPILE_ONLY:
        planned_loss, planned_ckpt, arena = train(args, planned_path)
        seq_loss, seq_ckpt, _ = train(args, seq_path)
        if arena != peak or peak != mem["peak_bytes"]:
            failures.append(f"embrun allocated {arena} bytes, the report says {peak}, "
                            f"the plan {mem['peak_bytes']}")
        if planned_loss != seq_loss:
            failures.append(f"losses differ: {planned_loss} vs {seq_loss}")
        if planned_ckpt != seq_ckpt:
            failures.append("checkpoints differ")
        line += f"; embrun allocated {int(arena)}, training bit-identical={not failures}"
    return report(failures, line)


def main():
    check_models_main(__doc__.splitlines()[0], check_model)


if __name__ == "__main__":
    main()
