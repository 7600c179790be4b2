#!/usr/bin/env python3
"""CPU training throughput of every example model on the synthetic data.

Compiles each examples/*.json with embc, trains it with embrun for a fixed
number of steps after a warm-up, and prints one Markdown row per model:
samples/s, arena and peak memory (from embrun's --log summary record).
Models whose plan arena does not fit in this machine's memory are listed
with the reason instead of being run.

Usage: bench/cpu_examples.py [--build build] [--steps 50] [--threads 0]
"""
import argparse
import glob
import json
import os
import subprocess
import tempfile


def mem_total_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(root, "build"))
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--threads", type=int, default=0)
    args = p.parse_args()
    embc = os.path.join(args.build, "bin", "embc")
    embrun = os.path.join(args.build, "bin", "embrun")
    memory = mem_total_bytes()
    print(f"| model | batch | steps | samples/s | arena | peak RSS |")
    print(f"|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for model in sorted(glob.glob(os.path.join(root, "examples", "*.json"))):
            name = os.path.basename(model)[:-5]
            plan = os.path.join(tmp, name + ".plan")
            plan_json = json.loads(subprocess.run(
                [embc, model, "--emit=plan-json"], check=True,
                capture_output=True, text=True).stdout)
            arena = plan_json["arena_bytes"]
            batch = plan_json["config"]["batch_size"]
            if arena > memory // 2:
                print(f"| {name} | {batch} | - | not run: arena "
                      f"{arena / 2**30:.1f} GiB, machine {memory / 2**30:.1f} GiB "
                      f"| {arena / 2**30:.1f} GiB | - |", flush=True)
                continue
            subprocess.run([embc, model, "-o", plan], check=True,
                           capture_output=True)
            log = os.path.join(tmp, name + ".jsonl")
            subprocess.run([embrun, plan, "--steps", str(args.steps),
                            "--threads", str(args.threads), "--log", log,
                            "--report-every", str(args.steps)],
                           check=True, capture_output=True)
            summary = [json.loads(l) for l in open(log)][-1]
            print(f"| {name} | {batch} | {args.steps} | "
                  f"{summary['samples_per_s']:,.0f} | {arena / 2**20:.1f} MiB | "
                  f"{summary['peak_memory_bytes'] / 2**20:.1f} MiB |", flush=True)


if __name__ == "__main__":
    main()
