"""Helpers the end-to-end scripts share: their command line, running a tool,
compiling and training a model, reporting a check, and reading a safetensors
checkpoint without numpy."""
import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys


def run(cmd):
    """Runs `cmd`; exits with a FAIL line and its output when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def tool_args(description=None):
    """An argument parser with the options every script takes: --embc, --embrun,
    --examples and --work (all required); the caller adds its own."""
    p = argparse.ArgumentParser(description=description)
    for flag in ("--embc", "--embrun", "--examples", "--work"):
        p.add_argument(flag, required=True)
    return p


def check_models_main(description, check_model, skipped=()):
    """The main of a script that checks example models one by one: --steps
    (default 6) and --models (default: every examples/*.json not in `skipped`);
    exits 1 unless each check_model(args, name) returns True."""
    p = tool_args(description)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--models", default="")
    args = p.parse_args()
    models = (args.models.split(",") if args.models else
              sorted(m for m in os.listdir(args.examples)
                     if m.endswith(".json") and m not in skipped))
    ok = all([check_model(args, m) for m in models])
    sys.exit(0 if ok else 1)


def learning_args(steps):
    """The arguments of a dlrm_small learning test: the common ones, --steps
    (default `steps`) and --batch (default 1024); creates --work."""
    p = tool_args()
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--batch", type=int, default=1024)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    return args


def compile_model(embc, model, work):
    """Writes `model` (a dict) to a fresh `work`/model.json and compiles it;
    returns the plan's path and its --emit=plan-json report."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    path = os.path.join(work, "model.json")
    json.dump(model, open(path, "w"))
    plan = os.path.join(work, "model.plan")
    run([embc, path, "-o", plan])
    return plan, json.loads(run([embc, path, "--emit=plan-json"]).stdout)


def train_log(embrun, plan, log, extra):
    """Trains `plan` on 2 threads, logging to `log`; returns the log's records
    and its one summary record."""
    run([embrun, plan, "--threads", "2", "--log", log] + extra)
    records = [json.loads(line) for line in open(log)]
    summary = [r for r in records if r.get("event") == "summary"]
    if len(summary) != 1:
        sys.exit(f"FAIL: expected one summary record in {log}, got {len(summary)}")
    return records, summary[0]


def report(failures, line):
    """Prints `line` as PASS or FAIL with each failure under it; True when none."""
    print(f"{'FAIL' if failures else 'PASS'}: {line}", flush=True)
    for f in failures:
        print(f"  {f}", flush=True)
    return not failures


def expect(cond, message):
    print(("PASS: " if cond else "FAIL: ") + message, flush=True)
    if not cond:
        sys.exit(1)


def read_safetensors(path):
    """name -> (dtype, shape, raw bytes) of a safetensors file."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], data[begin:end])
    return tensors


def floats(raw, dtype):
    """The values of a tensor's raw bytes (F32, F64, F16 or I64)."""
    code = {"F32": "f", "F64": "d", "I64": "q", "F16": "e"}[dtype]
    return struct.unpack(f"<{len(raw) // struct.calcsize(code)}{code}", raw)


def relative_norm(a, b):
    """|a - b| / |b| of two tensors' values (Euclidean norms)."""
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    return diff / max(math.sqrt(sum(y * y for y in b)), 1e-30)


def worst_tensor_differences(base, got):
    """Checkpoint `got` against `base` ({name: values}): for the weights
    (parameters and tables) and the optimizer state ("state/..."), the
    largest relative_norm as (difference, tensor name); and the names of
    base's tensors that got lacks or has at another size."""
    worst = {"weights": (0.0, ""), "state": (0.0, "")}
    missing = []
    for tensor, values in base.items():
        if tensor not in got or len(got[tensor]) != len(values):
            missing.append(tensor)
            continue
        kind = "state" if tensor.startswith("state/") else "weights"
        d = relative_norm(got[tensor], values)
        if d >= worst[kind][0]:
            worst[kind] = (d, tensor)
    return worst, missing
