#!/usr/bin/env python3
"""Compile time grows linearly with the number of features.

A wide model (N sparse features, each with its own table, concatenated with
a dense feature into one output layer: about 5 buffers and a backward slice
per feature) is compiled at N = 2,000 and N = 20,000. Passes when the larger
takes at most 15 times the smaller's CPU time (linear: 10; the quadratic
memory layout it replaced: over 30) and under 60 s of CPU time. CPU time, not
wall time, so a busy machine does not fail it; the ratio makes it hold on a
slower one.

Usage: compile_scaling.py --embc PATH --embrun PATH --examples DIR --work DIR
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys

SMALL, LARGE = 2000, 20000
MAX_RATIO, MAX_SECONDS = 15.0, 60.0


def wide_model(n):
    features = [{"name": "d", "type": "dense", "dim": 4}, {"name": "y", "type": "label"}]
    tables = []
    for i in range(n):
        features.append({"name": f"s{i}", "type": "sparse", "table": f"t{i}", "vocab": 100})
        tables.append({"name": f"t{i}", "rows": 100, "dim": 4})
    return {
        "format": "embc.model/v1", "name": f"wide{n}", "features": features,
        "embeddings": tables,
        "layers": [
            {"name": "cat", "type": "concat", "inputs": ["d"] + [f"s{i}" for i in range(n)]},
            {"name": "top", "type": "mlp", "input": "cat", "sizes": [1],
             "final_activation": "none"}],
        "loss": {"type": "bce_with_logits", "input": "top", "label": "y"},
        "optimizer": {"dense": {"type": "sgd", "lr": 0.1},
                      "embedding": {"type": "sgd", "lr": 0.1}},
        "training": {"batch_size": 8},
    }


def cpu_seconds_of(command):
    """CPU time (user + system) of one child process run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {done.returncode}: {done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    p = argparse.ArgumentParser()
    for flag in ("--embc", "--embrun", "--examples", "--work"):
        p.add_argument(flag, required=True)
    args = p.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    seconds = {}
    for n in (SMALL, LARGE):
        model = os.path.join(args.work, f"wide{n}.json")
        with open(model, "w") as f:
            json.dump(wide_model(n), f)
        seconds[n] = cpu_seconds_of([args.embc, model, "-o", os.path.join(args.work, f"wide{n}.plan")])
        print(f"{n:6d} features: {seconds[n]:.2f} s of CPU")
    ratio = seconds[LARGE] / max(seconds[SMALL], 1e-3)
    print(f"ratio {ratio:.1f} for {LARGE // SMALL}x the features (at most {MAX_RATIO})")
    failures = []
    if ratio > MAX_RATIO:
        failures.append(f"compile time grew {ratio:.1f}x for {LARGE // SMALL}x the features")
    if seconds[LARGE] > MAX_SECONDS:
        failures.append(f"{LARGE} features took {seconds[LARGE]:.1f} s (at most {MAX_SECONDS})")
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
