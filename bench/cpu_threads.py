#!/usr/bin/env python3
"""embc and PyTorch eager samples/s at every thread count, idle and with one
competing busy process.

Issue 18 asks that every example train at least as fast with `--threads 2` as
with `--threads 1`, and stay ahead of PyTorch eager with one competing busy
process on the machine. An OpenMP runtime that spins in barriers, or a
thread count that oversubscribes the cores, can make more threads slower,
and a busy neighbour is where that shows; so for each example model (default:
dlrm_small, dcn, wide_deep, two_tower, mf_movielens, skipgram) this script
measures, at `--threads 1 .. nproc`:

- embrun's training samples/s on its synthetic data (from its --log
  records, warm-up excluded: harness.embc_samples_per_s);
- PyTorch eager's, for the models bench/torch_models.py has a twin of
  (torch.set_num_threads(t), the same pre-generated batches and timing as
  cpu_vs_pytorch.py; not skipgram);

each (a) on an idle machine and (b) with one competitor started by this
script: a child `python3 -c 'while True: pass'`, killed when the block ends,
also on an error or Ctrl-C (and, through PR_SET_PDEATHSIG, if this script is
killed outright). --repeats R interleaves R runs of each side per thread
count and reports the median.

It prints one table (model | threads | embc idle | embc busy | PyTorch idle
| PyTorch busy | embc/PyTorch idle | busy) and per model whether "more
threads are never slower than fewer" holds for embc, idle and busy (the
worst ratio over every pair of thread counts).

Usage: python3 bench/cpu_threads.py [--models M,...] [--steps N] [--repeats R]
                                    [--quick] [--build DIR] [--embrun PATH]
The machine should be otherwise idle: the idle figures assume it.
"""
import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import harness

DEFAULT_MODELS = "dlrm_small,dcn,wide_deep,two_tower,mf_movielens,skipgram"
# The competitor: a pure-Python spin loop (one core) that asks the kernel to
# kill it when its parent dies (PR_SET_PDEATHSIG = 1), and exits at once if
# the parent is already gone (argv[1] is the parent's pid).
BUSY_LOOP = """import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGKILL)
if os.getppid() != int(sys.argv[1]):
    sys.exit()
while True: pass
"""


@contextlib.contextmanager
def busy_competitor():
    """One competing busy process for the duration of the block; killed on
    the way out, whatever ends the block."""
    proc = subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(os.getpid())])
    try:
        time.sleep(0.5)  # let it start spinning before anything is timed
        if proc.poll() is not None:
            sys.exit(f"error: the competing busy process exited ({proc.returncode})")
        yield
    finally:
        proc.kill()
        proc.wait()


def never_slower(rates):
    """Over every pair of thread counts fewer < more, the smallest
    rates[more] / rates[fewer]: (ratio, fewer, more), or None for one count.
    "More threads are never slower than fewer" holds when ratio >= 1."""
    pairs = [(a, b) for a in rates for b in rates if a < b]
    if not pairs:
        return None
    a, b = min(pairs, key=lambda p: rates[p[1]] / rates[p[0]])
    return rates[b] / rates[a], a, b


def measure(name, ctx):
    """{(condition, side, threads): median samples/s} of one model; side
    'torch' only when it has a PyTorch twin."""
    model_path, model = harness.load_model(name)
    plan_path = os.path.join(ctx.tmp, name + ".plan")
    plan = harness.compile_plan(ctx.embc, model_path, plan_path)
    batch = plan["config"]["batch_size"]
    tm = ctx.tm
    twin = None
    if name in tm.MODELS:
        ckpt = harness.initial_checkpoint(ctx.embrun, plan_path,
                                          os.path.join(ctx.tmp, name + "-init"), tm.np)
        net, opts = tm.twin(name, model, ckpt)
        pool = tm.random_batches(model, batch, 8, tm.torch.Generator().manual_seed(1))
        twin = (net, opts, pool)
    print(f"== {name} (batch {batch}{'' if twin else '; no PyTorch twin'}) ==", flush=True)

    runs = {}
    for cond in ("idle", "busy"):
        with busy_competitor() if cond == "busy" else contextlib.nullcontext():
            for r in range(ctx.repeats):
                for t in ctx.thread_counts:
                    e = harness.embrun_rate(ctx.embrun, plan_path, batch, ctx.warm, ctx.steps,
                                            t, ctx.tmp, f"{name}-{cond}-{t}")
                    runs.setdefault((cond, "embc", t), []).append(e)
                    line = f"  {cond} threads {t} run {r + 1}/{ctx.repeats}: embc {e:,.0f}"
                    if twin:
                        tm.torch.set_num_threads(t)
                        p = tm.samples_per_s(*twin, ctx.warm, ctx.steps)
                        runs.setdefault((cond, "torch", t), []).append(p)
                        line += f", PyTorch {p:,.0f}"
                    print(line + " samples/s", flush=True)
    return {key: statistics.median(v) for key, v in runs.items()}


def main():
    p = harness.bench_args(
        __doc__.split("\n")[0], "timed steps per run (default 100; --quick 20)",
        "runs of each side per thread count and condition; the median is reported")
    p.add_argument("--quick", action="store_true", help="fewer steps")
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help=f"examples/NAME.json to run, comma-separated (default {DEFAULT_MODELS})")
    args = p.parse_args()
    # SIGTERM unwinds like Ctrl-C, so the competitor's `finally` runs.
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    import torch_models as tm  # after parsing: installs and imports torch

    ctx = argparse.Namespace(tm=tm, steps=args.steps or (20 if args.quick else 100),
                             warm=5 if args.quick else 20, repeats=max(1, args.repeats),
                             thread_counts=list(range(1, len(os.sched_getaffinity(0)) + 1)))
    ctx.embc, ctx.embrun = harness.binaries(args.build, args.embrun)
    names = args.models.split(",")
    print(f"machine: {os.cpu_count()} cores; threads {ctx.thread_counts[0]}..{ctx.thread_counts[-1]}; "
          f"torch {tm.torch.__version__}; warm-up {ctx.warm} steps, timed {ctx.steps} steps, "
          f"median of {ctx.repeats} runs; busy = one competing `while True: pass` process; "
          f"{harness.load_note()}", flush=True)

    results = {}
    with tempfile.TemporaryDirectory(prefix="embc-threads-") as tmp:
        ctx.tmp = tmp
        for name in names:
            results[name] = measure(name, ctx)

    num = lambda v: f"{v:,.0f}" if v is not None else "-"
    ratio = lambda e, t: f"{e / t:.2f}" if t else "-"
    print("\n| model | threads | embc idle | embc busy | PyTorch idle | PyTorch busy "
          "| embc/PyTorch idle | busy |")
    print("|---|---|---|---|---|---|---|---|")
    for name, m in results.items():
        for t in ctx.thread_counts:
            ei, eb = m[("idle", "embc", t)], m[("busy", "embc", t)]
            ti, tb = m.get(("idle", "torch", t)), m.get(("busy", "torch", t))
            print(f"| {name} | {t} | {num(ei)} | {num(eb)} | {num(ti)} | {num(tb)} "
                  f"| {ratio(ei, ti)} | {ratio(eb, tb)} |")
    print()
    for name, m in results.items():
        words = []
        for cond in ("idle", "busy"):
            w = never_slower({t: m[(cond, "embc", t)] for t in ctx.thread_counts})
            words.append(f"{cond} n/a (one thread count)" if w is None else
                         f"{cond} {'yes' if w[0] >= 1 else 'NO'} (worst: {w[2]} vs {w[1]} "
                         f"threads {w[0]:.2f}x)")
        print(f"{name}: more threads are never slower than fewer (embc): " + ", ".join(words))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the competitor is gone already (busy_competitor)
        sys.exit(130)
