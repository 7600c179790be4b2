#!/usr/bin/env python3
"""embc's CPU backend against PyTorch eager on the CPU, same machine and threads.

For each model of --models (default: every model issue 18 sets a target for,
dlrm_small, dcn, wide_deep, two_tower, and mf_movielens):

1. compile the model with embc and write its initial weights with
   `embrun --steps 0 --save DIR`; build the same model in PyTorch (the twins
   of bench/torch_models.py: F.embedding_bag per feature, nn.Linear layers,
   the model's interaction / cross / towers, its optimizers) and load those
   weights into it;
2. check that both compute the same thing: two training steps on the same
   data with embrun and with PyTorch, losses compared (`check:` line). The
   data is one batch written as a file when a reader has the model's columns
   (Criteo TSV, MovieLens), else embrun's own synthetic batches 0 and 1,
   regenerated in Python (the line says which and why);
3. time training: embrun on its synthetic data, PyTorch on a pool of
   pre-generated batches of the same shapes (multi-hot bags of 1..hotness
   ids, ids uniform in range; generating them is not timed), both after a
   warm-up, same batch size, optimizers and hyper-parameters. --repeats R
   interleaves R embrun runs with R PyTorch runs and reports the median of
   each, embc / PyTorch, and issue 18's target (dlrm_small 3x; dcn,
   wide_deep, two_tower 2x) met or missed;
4. from embc alone (`embrun --profile`): update time packed vs unpacked and
   step time fused vs unfused (`embc --no-pack` / `--no-fuse`; while embc has
   no such flag the variant is the default plan and says so), and the
   fraction of the hardware limit: the kernels' achieved GB/s against a
   measured STREAM-like triad, and the dense layers' GEMM FLOP/s against a
   large sgemm.

Usage: python3 bench/cpu_vs_pytorch.py [--models M,...] [--steps N] [--repeats R]
                                       [--threads T] [--quick] [--build DIR]
                                       [--embrun PATH]
Installs numpy, torch (CPU wheel) and xxhash with pip when they are missing.
Exits with status 1 when a check line says MISMATCH.
"""
import argparse
import copy
import json
import math
import os
import statistics
import sys
import tempfile
import time

import harness

# Issue 18: embc samples/s at least this many times PyTorch eager's.
TARGETS = {"dlrm_small": 3.0, "dcn": 2.0, "wide_deep": 2.0, "two_tower": 2.0}
DEFAULT_MODELS = "dlrm_small,dcn,wide_deep,two_tower,mf_movielens"
# Two steps in f32 through different BLAS and summation orders: 1e-8 .. 1e-6 apart.
CHECK_TOLERANCE = 1e-5


def target_words(name, ratio):
    """(target, met / missed) of a model for the table; '-' without a target."""
    target = TARGETS.get(name)
    if target is None:
        return "none", "-"
    return f"{target:g}x", "met" if ratio >= target else "missed"


# --- Hardware limits ----------------------------------------------------------

def measure_hardware(torch, np, threads, quick):
    """Memory bandwidth (best of a few STREAM triads a = b + s c over three
    arrays far larger than the caches, torch on `threads` threads: 2 reads +
    1 write counted; and a single-threaded numpy copy, read + write) and
    the sgemm rate (best of a few 2048^3 torch.mm)."""
    n = (16 if quick else 32) * 2**20
    a, b, c = (torch.ones(n) for _ in range(3))
    best = float("inf")
    for _ in range(6):
        t0 = time.perf_counter()
        torch.add(b, c, alpha=3.0, out=a)
        best = min(best, time.perf_counter() - t0)
    triad = 3 * 4 * n / best / 1e9
    x, y = np.ones(n, np.float32), np.empty(n, np.float32)
    best = float("inf")
    for _ in range(6):
        t0 = time.perf_counter()
        np.copyto(y, x)
        best = min(best, time.perf_counter() - t0)
    copy = 2 * 4 * n / best / 1e9
    del a, b, c, x, y
    m = 2048
    p, q = torch.randn(m, m), torch.randn(m, m)
    torch.mm(p, q)
    best = float("inf")
    for _ in range(3 if quick else 5):
        t0 = time.perf_counter()
        torch.mm(p, q)
        best = min(best, time.perf_counter() - t0)
    return {"triad_gbs": triad, "copy_gbs": copy, "sgemm_gflops": 2 * m**3 / best / 1e9}


def gemm_flops_per_step(plan):
    """FLOPs per step of the dense-layer GEMMs, by op, from the plan's buffer
    shapes (docs/plan-format.md): dense and dense_act y = x w (x: B x K,
    w: K x N), dense_grad_input dx = dy w^T, dense_grad_weight dw = x^T dy,
    2 B K N each; dense_act_grad (fused) does dw and, with input_grad, dx."""
    shape = lambda buf: plan["buffers"][buf]["shape"]
    # A layer's input and output are rows x columns: B, or B x L positions.
    matrix = lambda buf: (math.prod(shape(buf)[:-1]), shape(buf)[-1])
    flops = {}
    for k in plan["step"]:
        op, ins = k["op"], k["inputs"]
        if op in ("dense", "dense_act"):
            (bsz, n_in), n_out = matrix(ins[0]), shape(ins[1])[1]
            gemms = 1
        elif op == "dense_grad_input":
            (bsz, n_out), n_in = matrix(ins[0]), shape(ins[1])[0]
            gemms = 1
        elif op == "dense_grad_weight":
            (bsz, n_in), n_out = matrix(ins[0]), shape(ins[1])[-1]
            gemms = 1
        elif op == "dense_act_grad":
            bsz = matrix(ins[0])[0]
            n_in, n_out = shape(ins[-1])
            gemms = 2 if k["attrs"].get("input_grad", True) else 1
        else:
            continue
        flops[op] = flops.get(op, 0) + 2 * bsz * n_in * n_out * gemms
    return flops


def profile_of(records):
    return next(r for r in records if r.get("type") == "profile")


# --- Per model ------------------------------------------------------------------

def without_dropout(model):
    """`model` with every dropout rate 0, or None when it has none: the two
    sides draw different masks, so the agreement check runs without them
    (the timed runs keep them on both sides)."""
    stripped = copy.deepcopy(model)
    found = False
    for layer in stripped["layers"]:
        key = {"encoder": "dropout", "dropout": "rate"}.get(layer["type"])
        if key and layer.get(key, 0):
            layer[key] = 0
            found = True
    return stripped if found else None


def check(tm, name, model, plan, plan_path, ckpt, ctx):
    """Two training steps with embrun and with the PyTorch twin on the same
    data (torch_models.check_data); prints the `check:` line, returns True
    when the losses agree within CHECK_TOLERANCE (relative). A model with
    dropout is checked with its rates at 0 (without_dropout)."""
    stripped = without_dropout(model)
    if stripped is not None:
        model = stripped
        model_path = os.path.join(ctx.tmp, name + "-nodropout.json")
        with open(model_path, "w") as f:
            json.dump(model, f)
        plan_path = os.path.join(ctx.tmp, name + "-nodropout.plan")
        plan = harness.compile_plan(ctx.embc, model_path, plan_path)
        ckpt = harness.initial_checkpoint(ctx.embrun, plan_path,
                                          os.path.join(ctx.tmp, name + "-nodropout-init"), tm.np)
    batch = plan["config"]["batch_size"]
    data, batches, what = tm.check_data(model, plan, batch, ctx.tmp, seed=1)
    recs = harness.embrun(ctx.embrun, plan_path, 2, ctx.threads, ctx.tmp, name + "-check",
                          [*data, "--report-every", "1"])
    embc_losses = [r["loss"] for r in recs if r["event"] == "train"]
    net, opts = tm.twin(name, model, ckpt)
    torch_losses = [tm.train_step(net, opts, b) for b in batches]
    diff = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(embc_losses, torch_losses))
    ok = diff < CHECK_TOLERANCE
    what += ", dropout off on both sides" if stripped is not None else ""
    print(f"check ({what}): losses embc {embc_losses[0]:.6f} {embc_losses[1]:.6f}, PyTorch "
          f"{torch_losses[0]:.6f} {torch_losses[1]:.6f} (max rel diff {diff:.1e}: "
          f"{'ok' if ok else 'MISMATCH'})", flush=True)
    return ok


def throughput(tm, name, model, plan, plan_path, ckpt, ctx):
    """Median samples/s of embrun and of the twin over ctx.repeats runs each,
    interleaved (embrun, PyTorch, embrun, ...) so that a slow spell of a
    shared machine hits both. Each run has its own warm-up; PyTorch's
    continues training the same twin (its speed does not depend on the
    weights)."""
    batch = plan["config"]["batch_size"]
    net, opts = tm.twin(name, model, ckpt)
    pool = tm.random_batches(model, batch, 8, tm.torch.Generator().manual_seed(1))
    embc_runs, torch_runs = [], []
    for r in range(ctx.repeats):
        embc_runs.append(harness.embrun_rate(ctx.embrun, plan_path, batch, ctx.warm,
                                             ctx.steps, ctx.threads, ctx.tmp, f"{name}-time{r}"))
        torch_runs.append(tm.samples_per_s(net, opts, pool, ctx.warm, ctx.steps))
    e, t = statistics.median(embc_runs), statistics.median(torch_runs)
    target, result = target_words(name, e / t)
    runs = lambda xs: " ".join(f"{x:,.0f}" for x in xs)
    print(f"samples/s (median of {ctx.repeats}): embc {e:,.0f} ({runs(embc_runs)}), "
          f"PyTorch {t:,.0f} ({runs(torch_runs)}), embc/PyTorch {e / t:.2f} "
          f"(target {target}{'' if result == '-' else ', ' + result})", flush=True)
    return e, t


def profile(name, model_path, plan, plan_path, hw, ctx):
    """embc alone with --profile: packed vs --no-pack update, fused vs
    --no-fuse whole step (a fused plan updates its tables inside the
    backward, an unfused one in the update phase, so only the sum of the
    phases compares them), achieved GB/s and GEMM GFLOP/s."""
    prof_steps = max(10, ctx.steps // 2)
    variants = {"default": []}
    for flag in ("--no-pack", "--no-fuse"):
        if flag in ctx.flags:
            variants[flag] = [flag]
    profiles, plans = {}, {"default": plan}
    for tag, vflags in variants.items():
        path = plan_path
        if vflags:
            path = os.path.join(ctx.tmp, f"{name}{vflags[0]}.plan")
            plans[tag] = harness.compile_plan(ctx.embc, model_path, path, vflags)
        profiles[tag] = profile_of(harness.embrun(ctx.embrun, path, prof_steps + 1, ctx.threads,
                                                  ctx.tmp, f"{name}-prof{tag}", ["--profile"]))
    d = profiles["default"]
    for flag, what, key, done in (
            ("--no-pack", "update (optimizer step)", "update_ms", "packed"),
            ("--no-fuse", "step (forward+backward+update)", "step_ms", "fused")):
        ms = lambda pr: pr[key]
        if flag in profiles:
            print(f"{what}: default {ms(d):.4g} ms/step, {flag} "
                  f"{ms(profiles[flag]):.4g} ms/step, speed-up "
                  f"{ms(profiles[flag]) / ms(d):.2f}x", flush=True)
        else:
            print(f"{what}: {ms(d):.4g} ms/step; embc has no {flag} yet, so the "
                  f"{done} and un{done} plans are the same plan", flush=True)
    fused_update = {tag: sum(o["ms_per_step"] for o in pr["ops"] if o["op"] == "embedding_update")
                    for tag, pr in profiles.items()}
    if any(fused_update.values()):
        # Fused plans update the tables inside the backward pass.
        print("  tables are updated in the step by embedding_update: " + ", ".join(
            f"{tag} {v:.4g} ms/step" for tag, v in fused_update.items()))
    print(f"step in kernels: {d['step_ms']:.4g} ms (forward {d['forward_ms']:.4g}, "
          f"backward {d['backward_ms']:.4g}, update {d['update_ms']:.4g})")

    # Fraction of the hardware limit.
    known = [o for o in d["ops"] if o["gb_per_s"] > 0]
    if known:
        moved = sum(o["bytes_per_step"] for o in known)
        ms = sum(o["ms_per_step"] for o in known)
        gbs = moved / (ms / 1e3) / 1e9
        print(f"memory: kernels with a byte estimate move {moved / 1e6:.1f} MB/step at "
              f"{gbs:.2f} GB/s = {gbs / hw['triad_gbs']:.1%} of the triad bandwidth; per op:")
        for o in sorted(known, key=lambda o: -o["ms_per_step"]):
            print(f"  {o['phase']:6} {o['op']:24} {o['gb_per_s']:8.2f} GB/s "
                  f"{o['gb_per_s'] / hw['triad_gbs']:7.1%}")
    else:
        print("memory: the plan has no byte estimates (Kernel::bytes is 0), so no achieved GB/s")
    for tag, pr in profiles.items():
        flops = gemm_flops_per_step(plans[tag])
        gemm_ms = sum(o["ms_per_step"] for o in pr["ops"] if o["op"] in flops)
        if not flops or gemm_ms <= 0:
            print(f"GEMM ({tag} plan): no dense layers")
            continue
        gf = sum(flops.values()) / (gemm_ms / 1e3) / 1e9
        print(f"GEMM ({tag} plan): {sum(flops.values()) / 1e9:.3f} GFLOP/step in "
              f"{', '.join(sorted(flops))}, {gemm_ms:.3f} ms/step = {gf:.1f} GFLOP/s "
              f"= {gf / hw['sgemm_gflops']:.1%} of sgemm", flush=True)


# --- Main -----------------------------------------------------------------------

def main():
    p = harness.bench_args(
        __doc__.split("\n")[0], "timed steps per run (default 200; --quick 30)",
        "timed runs of each side per model, interleaved; the median is reported")
    p.add_argument("--threads", type=int, default=os.cpu_count(),
                   help="threads for embrun and PyTorch (default: all cores)")
    p.add_argument("--quick", action="store_true", help="fewer steps, smaller arrays")
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help=f"examples/NAME.json to run, comma-separated (default {DEFAULT_MODELS})")
    args = p.parse_args()
    import torch_models as tm  # after parsing: installs and imports torch
    torch, np = tm.torch, tm.np
    names = args.models.split(",")
    unknown = [n for n in names if n not in tm.MODELS]
    if unknown:
        sys.exit(f"error: no PyTorch twin for {', '.join(unknown)} (have: {', '.join(tm.MODELS)})")

    ctx = argparse.Namespace(steps=args.steps or (30 if args.quick else 200),
                             warm=5 if args.quick else 20, threads=args.threads,
                             repeats=max(1, args.repeats))
    ctx.embc, ctx.embrun = harness.binaries(args.build, args.embrun)
    ctx.flags = harness.embc_flags(ctx.embc)
    torch.set_num_threads(ctx.threads)

    print(f"machine: {os.cpu_count()} cores; threads {ctx.threads}; torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); warm-up {ctx.warm} steps, timed {ctx.steps} "
          f"steps, {ctx.repeats} runs of each side; {harness.load_note()}", flush=True)
    hw = measure_hardware(torch, np, ctx.threads, args.quick)
    print(f"hardware: triad {hw['triad_gbs']:.1f} GB/s ({ctx.threads} threads), numpy copy "
          f"{hw['copy_gbs']:.1f} GB/s (1 thread), sgemm {hw['sgemm_gflops']:.1f} GFLOP/s "
          f"(2048^3, {ctx.threads} threads)\n", flush=True)

    rows, mismatches = [], []
    with tempfile.TemporaryDirectory(prefix="embc-bench-") as tmp:
        ctx.tmp = tmp
        for name in names:
            model_path, model = harness.load_model(name)
            plan_path = os.path.join(tmp, name + ".plan")
            plan = harness.compile_plan(ctx.embc, model_path, plan_path)
            batch = plan["config"]["batch_size"]
            print(f"== {name} (batch {batch}) ==", flush=True)
            # Same initial weights: embrun writes them, PyTorch loads them.
            ckpt = harness.initial_checkpoint(ctx.embrun, plan_path,
                                              os.path.join(tmp, name + "-init"), np)
            if not check(tm, name, model, plan, plan_path, ckpt, ctx):
                mismatches.append(name)
            e, t = throughput(tm, name, model, plan, plan_path, ckpt, ctx)
            profile(name, model_path, plan, plan_path, hw, ctx)
            print(flush=True)
            rows.append((name, batch, e, t))

    print(f"samples/s: medians of {ctx.repeats} interleaved runs each, {ctx.steps} timed steps; "
          "target: issue 18's embc/PyTorch")
    print("| model | batch | threads | embc samples/s | PyTorch samples/s | embc/PyTorch | target | result |")
    print("|---|---|---|---|---|---|---|---|")
    for name, batch, e, t in rows:
        target, result = target_words(name, e / t)
        print(f"| {name} | {batch} | {ctx.threads} | {e:,.0f} | {t:,.0f} | {e / t:.2f} | "
              f"{target} | {result} |")
    if mismatches:
        sys.exit(f"error: embc and PyTorch disagree on {', '.join(mismatches)} (check lines above)")


if __name__ == "__main__":
    main()
