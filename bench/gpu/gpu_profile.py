#!/usr/bin/env python3
"""Nsight Compute on the slowest kernels of a plan (bench/gpu/run.sh profile).

Two ncu runs of `embrun PLAN --device cuda --steps S --no-graphs`:
  1. one metric (gpu__time_duration.sum, a single pass) for every launch:
     the kernels ranked by their total time;
  2. the speed-of-light, memory, occupancy, launch and warp-state sections of
     the --top slowest (their last launch within the first few matches).
Prints the ranking and each profiled kernel's key lines; the full reports go
to --work.

Usage: gpu_profile.py --embrun PATH --plan PATH --work DIR [--steps 3] [--top 3]
"""
import argparse
import csv
import io
import os
import re
import subprocess
import sys
import time

KEY_LINES = re.compile(
    r"^\s*(Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|"
    r"Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|"
    r"L1/TEX Hit Rate|L2 Hit Rate|Mem Busy|Max Bandwidth|Warp Cycles Per Issued Instruction|"
    r"Local Memory Spilling|Static Shared Memory Per Block|Dynamic Shared Memory Per Block)\b")


def ncu(args, extra, log_name):
    cmd = ["ncu", "--target-processes", "all", *extra, args.embrun, args.plan, "--device",
           "cuda", "--steps", str(args.steps), "--no-graphs", "--report-every", "1000"]
    print("$ " + " ".join(cmd), flush=True)
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    with open(os.path.join(args.work, log_name), "w") as f:
        f.write(r.stdout + r.stderr)
    print(f"  ({time.perf_counter() - t:.1f} s, exit {r.returncode})", flush=True)
    if r.returncode != 0:
        raise RuntimeError(f"ncu exited {r.returncode}: {(r.stdout + r.stderr)[-3000:]}")
    return r.stdout


def ranking(text):
    """[(kernel, total ns, launches)] from ncu --csv output, slowest first."""
    start = text.find('"ID"')
    if start < 0:
        raise RuntimeError("ncu printed no CSV table (no kernel was profiled?)")
    totals = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "ns")
        scale = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}
        ns = value * scale.get(unit, 1)
        name = row["Kernel Name"]
        t, n = totals.get(name, (0.0, 0))
        totals[name] = (t + ns, n + 1)
    return sorted(((k, t, n) for k, (t, n) in totals.items()), key=lambda x: -x[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--embrun", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=200)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    text = ncu(args, ["--metrics", "gpu__time_duration.sum", "--csv", "--print-units", "base"],
               "ncu_times.csv")
    ranked = ranking(text)
    total = sum(t for _, t, _ in ranked) or 1.0
    print(f"kernels by total time over {args.steps} steps ({len(ranked)} distinct):")
    for name, t, n in ranked[:12]:
        print(f"  {t / 1e6:9.3f} ms {100 * t / total:5.1f}%  {n:4d} launches  {name[:90]}")
    top = [name for name, _, _ in ranked[:args.top]]
    if not top:
        raise SystemExit("no kernels to profile")
    # The mangled-free names the codegen emits are plain identifiers; library
    # kernels (cuBLASLt, CUB) have long demangled names: match their start.
    pattern = "|".join(re.escape(n.split("(")[0].split("<")[0]) for n in top)
    sections = []
    for s in ("SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats",
              "WarpStateStats"):
        sections += ["--section", s]
    details = ncu(args, ["--kernel-name-base", "function", "--kernel-name", f"regex:^({pattern})",
                         "--launch-skip", str(len(top)), "--launch-count", str(len(top)),
                         *sections], "ncu_top.txt")
    print(f"\nthe {len(top)} slowest, in detail (full report: ncu_top.txt):")
    for line in details.splitlines():
        if re.match(r"^\s{0,4}\S.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line) or KEY_LINES.match(line):
            print(line.rstrip())
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 - report any failure as the stage's
        print(f"FAILED: {e}")
        sys.exit(1)
