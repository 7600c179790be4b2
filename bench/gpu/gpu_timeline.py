#!/usr/bin/env python3
"""Where a training step leaves the GPU idle: embrun under Nsight Systems,
then, over the steady state (the middle of the run), how much of the wall
time the GPU was running something (kernels, copies, memsets: their union
over all streams) and the longest idle gaps with the operations on either
side of each.

Usage: gpu_timeline.py --embrun PATH --plan PLAN --work DIR [--steps N]
Prints the summary and writes DIR/timeline_summary.txt. Exit 0 also when
the machine has no nsys (it says so): the other stages need not fail.
"""
import argparse
import csv
import glob
import os
import shutil
import subprocess
import sys


def find_nsys():
    found = shutil.which("nsys")
    if found:
        return found
    for pattern in ("/usr/local/cuda*/bin/nsys", "/opt/nvidia/nsight-systems*/bin/nsys",
                    "/usr/local/cuda*/nsight-systems*/bin/nsys"):
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


def read_trace(path):
    """[(start_ns, end_ns, name)] from `nsys stats -r cuda_gpu_trace -f csv`."""
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip()]
    # nsys prints a title line or two before the CSV header on some versions.
    first = next(i for i, line in enumerate(lines) if "Start" in line and "Duration" in line)
    rows = list(csv.DictReader(lines[first:]))
    start_key = next(k for k in rows[0] if k.startswith("Start"))
    dur_key = next(k for k in rows[0] if k.startswith("Duration"))
    name_key = next(k for k in rows[0] if k.strip() == "Name")
    ops = []
    for r in rows:
        try:
            s, d = float(r[start_key]), float(r[dur_key])
        except (TypeError, ValueError):
            continue
        ops.append((s, s + d, r[name_key]))
    ops.sort()
    return ops


def analyse(ops, steps, lo=0.4, hi=0.9):
    """Busy fraction and the idle gaps over [lo, hi] of the trace's span."""
    t0, t1 = ops[0][0], max(e for _, e, _ in ops)
    w0, w1 = t0 + lo * (t1 - t0), t0 + hi * (t1 - t0)
    busy, gaps = 0.0, []
    cur_s, cur_e, cur_name = None, None, None
    for s, e, name in ops:
        if e <= w0 or s >= w1:
            continue
        s, e = max(s, w0), min(e, w1)
        if cur_e is None:
            cur_s, cur_e, cur_name = s, e, name
            continue
        if s > cur_e:
            busy += cur_e - cur_s
            gaps.append((s - cur_e, cur_name, name))
            cur_s, cur_e, cur_name = s, e, name
        elif e > cur_e:
            cur_e, cur_name = e, name
    if cur_e is not None:
        busy += cur_e - cur_s
    span = w1 - w0
    gaps.sort(reverse=True)
    window_steps = steps * (hi - lo)
    lines = [f"steady state: {span / 1e6:.1f} ms (~{window_steps:.0f} steps); GPU busy "
             f"{busy / span:.1%} ({busy / 1e6 / window_steps:.2f} ms a step), idle "
             f"{(span - busy) / 1e6 / window_steps:.2f} ms a step "
             f"in {len(gaps)} gaps ({sum(1 for g in gaps if g[0] > 50e3)} over 50 us)",
             "idle by neighbours (us a step, count a step, mean us: after -> before):"]
    by_pair = {}
    for g, after, before in gaps:
        total, count = by_pair.get((after, before), (0.0, 0))
        by_pair[(after, before)] = (total + g, count + 1)
    for (after, before), (total, count) in sorted(by_pair.items(), key=lambda kv: -kv[1][0])[:12]:
        lines.append(f"  {total / 1e3 / window_steps:8.1f} {count / window_steps:5.1f} "
                     f"{total / 1e3 / count:8.1f}  {after[:56]}  ->  {before[:56]}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--embrun", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    out = os.path.join(args.work, "timeline_summary.txt")
    nsys = find_nsys()
    if not nsys:
        text = "timeline: no nsys on this machine (skipped)"
        print(text)
        open(out, "w").write(text + "\n")
        return 0
    rep = os.path.join(args.work, "embrun")
    cmd = [nsys, "profile", "-t", "cuda", "-o", rep, "--force-overwrite", "true",
           args.embrun, args.plan, "--device", "cuda", "--steps", str(args.steps),
           "--report-every", str(max(args.steps // 3, 1))]
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    if r.returncode != 0:
        print(r.stdout[-3000:] + r.stderr[-3000:])
        return 1
    stats = [nsys, "stats", "-r", "cuda_gpu_trace", "-f", "csv", "-o", rep, "--force-export",
             "true", rep + ".nsys-rep"]
    print("$ " + " ".join(stats), flush=True)
    r = subprocess.run(stats, capture_output=True, text=True, timeout=300)
    csvs = glob.glob(rep + "*cuda_gpu_trace*.csv")
    if r.returncode != 0 or not csvs:
        print(r.stdout[-3000:] + r.stderr[-3000:])
        return 1
    text = "timeline (nsys, embrun --steps %d):\n" % args.steps + analyse(read_trace(csvs[0]),
                                                                       args.steps)
    print(text)
    open(out, "w").write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
