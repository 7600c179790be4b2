#!/usr/bin/env python3
"""The CUDA backend against the CPU backend, on a CUDA device or its CPU
emulation (--device emulated, which runs the generated kernels on the CPU:
how CI checks the codegen without a GPU).

For every example model (batch shrunk to --batch so the emulation is quick;
not the MLPerf-size DLRM) and the variants that exercise the other lowerings
(unfused and unpacked plans, quantised tables, bf16/fp16 dense compute with
loss scaling, gradient clipping, Adam/LAMB/Adagrad optimizers):

  1. per kernel: emb-parity runs every kernel of 2 training steps on both
     backends from the same state; fp32 outputs within 1e-5 relative,
     integers and quantised codes exact (emb-parity's own rules), the
     stated looser bound for 16-bit compute (--tolerance16);
  2. whole steps: embrun trains --steps steps on each backend; the losses
     agree within 1e-4 relative (per-op differences compound over steps);
  3. graphs: the CUDA run with --no-graphs (eager launches) gives exactly
     the losses of the default run (captured graphs replayed).

With --device cuda it exits 77 (skipped) when no GPU is usable.

A machine with no embc (a lent GPU) runs plans compiled elsewhere: first
--compile-only --plans DIR where embc is, then --plans DIR there.

Usage: cuda_parity.py --embc PATH --embrun PATH --parity PATH --examples DIR
       --work DIR [--device emulated|cuda] [--models a.json,...] [--steps N]
       [--plans DIR [--compile-only]] [--jobs N]
"""
import argparse
import concurrent.futures
import copy
import json
import os
import shutil
import subprocess
import sys

from e2e_common import run

SKIPPED = {"dlrm_mlperf.json"}  # its tables need ~100 GiB
# Cases whose emulation is slow at --batch: the B x 64 x 8000 logits of the
# token models and their gradient.
SMALL_BATCH = {"gpt_mini": 8, "bert_mini_mlm": 8}


def hot_rows(examples):
    """mf_movielens with one user: each step's 100000 samples all update user
    row 0 (and its bias), the items ~60 times each on average: the fused
    update's long runs (a block per row) beside its short ones."""
    with open(os.path.join(examples, "mf_movielens.json")) as f:
        m = json.load(f)
    for feature in m["features"]:
        if feature["name"] in ("user", "user_bias"):
            feature["vocab"] = 1
    for table in m["embeddings"]:
        if table["name"] in ("users", "user_bias"):
            table["rows"] = 1
    m["training"]["batch_size"] = HOT_BATCH
    return m


HOT_BATCH = 100000


def interaction_variant(model, features=None, dim=None, self_pairs=False):
    """dlrm_small with the interaction's first `features` inputs (the bottom
    MLP and features - 1 tables), tables and bottom output `dim` wide, and
    self pairs."""
    m = copy.deepcopy(model)
    inter = next(l for l in m["layers"] if l["type"] == "dot_interaction")
    if features:
        dropped = set(inter["inputs"][features:])
        inter["inputs"] = inter["inputs"][:features]
        tables = {f["table"] for f in m["features"] if f["name"] in dropped}
        m["features"] = [f for f in m["features"] if f["name"] not in dropped]
        m["embeddings"] = [t for t in m["embeddings"] if t["name"] not in tables]
    if dim:
        for t in m["embeddings"]:
            t["dim"] = dim
        bottom = next(l for l in m["layers"] if l["name"] == inter["inputs"][0])
        bottom["sizes"][-1] = dim
    inter["self_interaction"] = self_pairs
    return m


def variants(examples, models):
    """(name, model dict, embc flags, float tolerance) for every case."""
    if "mf_movielens.json" in models:
        # The bias gradient sums 100000 values of both signs, in another
        # order on the device: 1e-4 (the embedding rows stay bit-identical).
        yield "mf_movielens-hot-rows", hot_rows(examples), [], 1e-4
    for name in models:
        with open(os.path.join(examples, name)) as f:
            model = json.load(f)
        stem = os.path.splitext(name)[0]
        yield stem, model, [], 1e-5
        if stem == "dcn":  # the cross layer's 16-bit GEMMs (zero-padded reductions)
            m = copy.deepcopy(model)
            m["training"]["precision"] = "bf16"
            yield stem + "-compute-bf16", m, [], 1e-2
        if stem == "wide_deep":
            yield stem + "-nofuse", model, ["--no-fuse"], 1e-5
        if stem != "dlrm_small":
            continue
        yield stem + "-nofuse", model, ["--no-fuse"], 1e-5
        yield stem + "-nopack", model, ["--no-pack", "--no-fuse"], 1e-5
        for dtype in ("f16", "bf16", "int8", "int4"):
            m = copy.deepcopy(model)
            m.setdefault("plan", {})["quantize"] = {"f16": "fp16"}.get(dtype, dtype)
            yield f"{stem}-table-{dtype}", m, [], 1e-5
        for precision in ("bf16", "fp16"):
            m = copy.deepcopy(model)
            m["training"]["precision"] = precision
            yield f"{stem}-compute-{precision}", m, [], 1e-2
        m = copy.deepcopy(model)
        m["training"]["grad_clip_norm"] = 0.5
        yield stem + "-clip", m, [], 1e-5
        # The interaction's other forms: self pairs on 24 features (F a
        # multiple of 4 in the tiled gradient), and rows of 6 (D % 4 != 0:
        # the scalar kernels).
        yield stem + "-f24-self", interaction_variant(model, features=24, self_pairs=True), [], 1e-5
        yield stem + "-d6", interaction_variant(model, dim=6), [], 1e-5
        # The runtime's input prefetch and deferred update across batches of
        # one step, micro-batch schedules and a learning rate that moves.
        m = copy.deepcopy(model)
        m["training"].update(grad_accumulation=2, warmup_steps=5, lr_schedule="cosine",
                             decay_steps=10)
        yield stem + "-accumulate-warmup", m, [], 1e-5
        m = copy.deepcopy(model)
        m.setdefault("plan", {}).update(micro_batches=4, pipeline_stages=2)
        yield stem + "-pipeline", m, [], 1e-5
        for opt in ("adam", "adagrad", "lamb"):
            m = copy.deepcopy(model)
            m["optimizer"]["dense"] = {"type": opt, "lr": 0.001}
            m["optimizer"]["embedding"] = {"type": "adam" if opt == "lamb" else opt, "lr": 0.01}
            yield f"{stem}-{opt}", m, [], 1e-5


def losses(args, plan, work, extra, tag):
    log = os.path.join(work, tag + ".jsonl")
    if os.path.exists(log):
        os.remove(log)
    run([args.embrun, plan, "--steps", str(args.steps), "--report-every", "1",
         "--threads", "2", "--log", log] + extra)
    return [r["loss"] for r in map(json.loads, open(log)) if r.get("event") == "train"]


def per_kernel(args, plan, model, tolerance):
    """emb-parity over 2 steps; a micro-batch schedule, which emb-parity does
    not step kernel by kernel, is checked by the whole runs alone."""
    if model.get("plan", {}).get("micro_batches", 1) > 1:
        return subprocess.CompletedProcess([], 0, "per-kernel: skipped (a schedule)\n", "")
    return subprocess.run([args.parity, plan, "--device", args.device, "--steps", "2",
                           "--threads", "2", "--tolerance", str(tolerance)],
                          capture_output=True, text=True)


def relative(a, b):
    scale = max(max((abs(x) for x in b), default=0.0), 1e-30)
    return max((abs(x - y) for x, y in zip(a, b)), default=0.0) / scale


def gpu_available():
    """Whether the NVIDIA driver sees a GPU."""
    smi = shutil.which("nvidia-smi")
    return smi is not None and subprocess.run([smi], capture_output=True).returncode == 0


def prepare_case(args, name, model, flags):
    """The case's work directory with model.json and model.plan: compiled by
    embc, or (--plans without --compile-only) the plan compiled earlier."""
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plan = os.path.join(work, "model.plan")
    if args.plans and not args.compile_only:
        shutil.copy(os.path.join(args.plans, name, "model.plan"), plan)
        return work, plan
    model = copy.deepcopy(model)
    if not name.endswith("-hot-rows"):  # its batch is the point
        batch = min(args.batch, SMALL_BATCH.get(name, args.batch))
        model["training"]["batch_size"] = min(model["training"]["batch_size"], batch)
    path = os.path.join(work, "model.json")
    with open(path, "w") as f:
        json.dump(model, f)
    run([args.embc, path, "--cuda", "-o", plan] + flags)
    return work, plan


def check_case(args, name, model, flags, tolerance):
    """(report lines, failures) of one case."""
    try:
        work, plan = prepare_case(args, name, model, flags)
    except SystemExit as e:  # e2e_common.run's FAIL
        return [], [f"{name}: {e}"]
    if args.compile_only:
        return [f"{name}: compiled"], []
    lines, failures = [], []
    # 1. Per kernel.
    parity = per_kernel(args, plan, model, tolerance)
    with open(os.path.join(work, "parity.txt"), "w") as f:
        f.write(parity.stdout + parity.stderr)
    summary = (parity.stdout.strip().splitlines() or ["(no output)"])[-1]
    lines.append(f"{name}: {summary}")
    if parity.returncode != 0:
        bad = [l for l in parity.stdout.splitlines() if l.endswith("FAIL")][:5]
        failures.append(f"{name}: per-kernel parity failed: {parity.stderr.strip()[-2000:]} "
                        + " | ".join(bad))
        return lines, failures
    # 2. Whole steps, 3. graphs.
    try:
        cpu = losses(args, plan, work, ["--device", "cpu"], "cpu")
        dev = losses(args, plan, work, ["--device", args.device], "dev")
        eager = losses(args, plan, work, ["--device", args.device, "--no-graphs"], "eager")
    except SystemExit as e:
        return lines, failures + [f"{name}: {e}"]
    r = relative(dev, cpu)
    lines.append(f"{name}: {len(cpu)} steps, losses {args.device} vs cpu rel {r:.2e}; "
                 f"graphs vs eager {'identical' if eager == dev else 'DIFFER'}")
    if len(dev) != args.steps or not r <= max(1e-4, 10 * tolerance):
        failures.append(f"{name}: {args.device} losses {dev} vs cpu {cpu} (rel {r:.2e})")
    if eager != dev:
        failures.append(f"{name}: graph replay {dev} != eager {eager}")
    return lines, failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--examples", required=True)
    for flag in ("--embrun", "--parity", "--work"):
        p.add_argument(flag, help="needed unless --compile-only")
    p.add_argument("--embc", help="needed unless --plans holds the compiled cases")
    p.add_argument("--plans", default="",
                   help="with --compile-only: write each case's plan under DIR/<case>/; "
                        "without: run the plans found there (a machine with no embc)")
    p.add_argument("--compile-only", action="store_true")
    p.add_argument("--device", default="emulated", choices=["emulated", "cuda"])
    p.add_argument("--models", default="")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--jobs", type=int, default=1, help="cases checked at once")
    args = p.parse_args()
    if args.compile_only:
        if not args.plans or not args.embc:
            p.error("--compile-only needs --plans and --embc")
        args.work = args.plans
    elif not args.plans and not args.embc:
        p.error("--embc or --plans is needed")
    elif not (args.embrun and args.parity and args.work):
        p.error("--embrun, --parity and --work are needed")
    if args.device == "cuda" and not args.compile_only and not gpu_available():
        print("SKIP: no usable CUDA device (nvidia-smi fails or is absent)")
        sys.exit(77)
    models = args.models.split(",") if args.models else sorted(
        m for m in os.listdir(args.examples) if m.endswith(".json") and m not in SKIPPED)
    cases = list(variants(args.examples, models))
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max(args.jobs, 1)) as pool:
        futures = [pool.submit(check_case, args, *case) for case in cases]
        for f in futures:  # in case order, so the report reads the same each time
            lines, bad = f.result()
            for line in lines:
                print(line, flush=True)
            failures += bad
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("OK: " + ("compiled every case" if args.compile_only else
                    "the CUDA backend matches the CPU backend on every case"))


if __name__ == "__main__":
    main()
