#!/usr/bin/env python3
"""Sharded tables' exchanges, one per table against one set per step.

Trains the same data-parallel model on 2 ranks (mpirun, one thread each)
three ways, compiled from one model file:

  replicated   no table sharded (each rank holds every table; rows gathered
               for the update),
  per table    tables sharded (table_wise and row_wise alternately), every
               table with its own exchanges (embc --no-batch-exchanges: five
               collectives per table a step),
  batched      the same sharding, exchanges merged by -emb-batch-exchanges
               (the default: at most seven collectives a step).

and prints samples/s (median of --repeats interleaved runs), the
collectives per step read from each plan, the batched/per-table ratio, and
whether the three runs' final losses agree (batched must equal per table
exactly on 2 ranks). With --busy, every run has one competing busy process
beside it, as users' machines do.

  python3 bench/sharded_exchanges.py [--build build] [--models dlrm_small:48,dlrm_small:2048]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import harness


def collectives_per_step(plan):
    """Communicator calls a step makes for its sharded tables, from the
    plan's step kernels (docs/plan-format.md, "Collectives")."""
    tables = plan["tables"]
    owner = lambda t: plan["buffers"][tables[t]["buffer"]]["rank"]
    calls = 0
    for k in plan["step"]:
        op, attrs = k["op"], k.get("attrs", {})
        if op == "shard_ids":
            calls += 3 if len(k["outputs"]) == 3 else 2
        elif op == "shard_ids_group":
            weights = any(w or m for w, m in zip(attrs["weighted"], attrs["per_bag_mean"]))
            calls += 3 if weights else 2
        elif op in ("shard_pool", "shard_pool_grad"):
            calls += 1
        elif op in ("shard_pool_group", "shard_pool_grad_group"):
            kinds = {owner(t) < 0 for t in attrs["tables"]}
            calls += len(kinds)
    return calls


def make_model(name, batch, sharded, workdir):
    _, spec = harness.load_model(name)
    spec["training"]["batch_size"] = batch
    spec.setdefault("plan", {})["data_parallel"] = 2
    for i, table in enumerate(spec["embeddings"]):
        table.pop("sharding", None)
        if sharded:
            table["sharding"] = ("table_wise", "row_wise")[i % 2]
    path = os.path.join(workdir, f"{name}-{batch}-{'sharded' if sharded else 'replicated'}.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def run_once(mpirun, embrun, plan, steps, workdir, tag):
    log = os.path.join(workdir, tag + ".jsonl")
    if os.path.exists(log):
        os.remove(log)
    harness.run(mpirun + [embrun, plan, "--steps", str(steps), "--threads", "1",
                          "--report-every", "10", "--log", log])
    with open(log) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(harness.ROOT, "build"))
    p.add_argument("--models", default="dlrm_small:48,dlrm_small:2048,two_tower:64",
                   help="MODEL:GLOBAL_BATCH,... (examples/MODEL.json)")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warm", type=int, default=50, help="steps left out of the timing")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--busy", action="store_true", help="one competing busy process beside each run")
    args = p.parse_args()
    embc, embrun = harness.binaries(args.build)
    launcher = shutil.which("mpirun")
    if not launcher:
        sys.exit("error: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)")
    mpirun = [launcher, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "2"]
    print(harness.load_note())
    print(f"2 ranks x 1 thread, {args.steps} steps (first {args.warm} not timed), "
          f"median of {args.repeats} interleaved runs" + (", beside one busy process" if args.busy else ""))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for item in args.models.split(","):
            name, batch = item.split(":")
            batch = int(batch)
            configs = {}
            for label, sharded, flags in (("replicated", False, []),
                                          ("per table", True, ["--no-batch-exchanges"]),
                                          ("batched", True, [])):
                model = make_model(name, batch, sharded, work)
                plan = os.path.join(work, f"{name}-{batch}-{label.replace(' ', '_')}.plan")
                plan_json = harness.compile_plan(embc, model, plan, flags)
                configs[label] = (plan, collectives_per_step(plan_json), [], None)
            for r in range(args.repeats):
                for label, (plan, calls, rates, _) in configs.items():
                    with harness.busy_competitor(args.busy):
                        records = run_once(mpirun, embrun, plan, args.steps, work, f"{label}-{r}")
                    rates.append(harness.embc_samples_per_s(records, args.warm, batch))
                    loss = next(x for x in records if x["event"] == "summary")["loss"]
                    configs[label] = (plan, calls, rates, loss)
            med = {label: statistics.median(c[2]) for label, c in configs.items()}
            same = configs["batched"][3] == configs["per table"][3]
            rows.append((name, batch, configs, med, same))
    print("\n| model | global batch | replicated | sharded, per table | sharded, batched "
          "| batched / per table | collectives a step (per table -> batched) | same loss |")
    print("|---|---|---|---|---|---|---|---|")
    for name, batch, configs, med, same in rows:
        print(f"| {name} | {batch} | {med['replicated']:,.0f} | {med['per table']:,.0f} "
              f"| {med['batched']:,.0f} | {med['batched'] / med['per table']:.2f} "
              f"| {configs['per table'][1]} -> {configs['batched'][1]} | {'yes' if same else 'NO'} |")
    if not all(r[4] for r in rows):
        sys.exit("error: batched and per-table exchanges trained to different losses")


if __name__ == "__main__":
    main()
