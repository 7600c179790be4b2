#!/usr/bin/env python3
"""Fingerprints of what every example compiles to and trains to, for
refactors that must not change behaviour (issue 19: "every example trains to
the same numbers bit for bit before and after").

For each case (every example with the default pipeline, `--no-fuse` and
`--no-pack`, plus the plan variants below: quantised tables, bf16 compute,
micro-batches and stages, rematerialisation, per-example skip-gram updates,
and a 2-rank job with sharded tables when mpirun is installed) it records:

  plan   sha256 of `embc --emit=plan-json` (the whole CPU plan)
  cuda   sha256 of `embc --cuda --emit=plan-json` (the CUDA program too), or
         "refused" where the CUDA target refuses the plan
  loss   sha256 of the training losses of `--steps` steps, as logged
  ckpt   sha256 of the checkpoint written at the end (every file of --save)

Usage:
  golden_runs.py [--build DIR] --write FILE     record the fingerprints
  golden_runs.py [--build DIR] --compare FILE   fail if any differs

The losses and checkpoints depend on the machine's BLAS and vector ISA, so a
record is only comparable on the machine (kind) that wrote it: record with
the commit before the refactor, compare after each step. `plan` and `cuda`
fingerprints do not depend on the machine.
"""
import argparse
import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
# Compiled only: its arena (97.6 GiB) is far beyond any test machine.
COMPILE_ONLY = {"dlrm_mlperf"}


def cases():
    """(name, example, model-file edits, embc flags, ranks) of every case."""
    out = []
    for file in sorted(os.listdir(EXAMPLES)):
        if not file.endswith(".json"):
            continue
        example = file[:-len(".json")]
        for flags in ([], ["--no-fuse"], ["--no-pack"]):
            name = example + "".join(flags)
            out.append((name, example, {}, flags, 1))
    out += [
        ("dlrm_small+int8", "dlrm_small", {"plan": {"quantize": "int8"}}, [], 1),
        ("dlrm_small+fp16", "dlrm_small", {"plan": {"quantize": "fp16"}}, [], 1),
        ("dlrm_small+bf16-compute", "dlrm_small", {"training": {"precision": "bf16"}}, [], 1),
        ("dlrm_small+pipeline", "dlrm_small",
         {"plan": {"micro_batches": 4, "pipeline_stages": 2, "schedule": "1f1b"}}, [], 1),
        ("dlrm_small+accumulate+clip", "dlrm_small",
         {"training": {"grad_accumulation": 2, "grad_clip_norm": 1.0}}, [], 1),
        ("deep_mlp+remat", "deep_mlp", {"plan": {"remat": "all"}}, [], 1),
        ("skipgram+per_example", "skipgram",
         {"training": {"embedding_updates": "per_example"}}, [], 1),
        ("dlrm_small+dp2-sharded", "dlrm_small", {"plan": {"data_parallel": 2}}, [], 2),
        ("two_tower+dp2-sharded", "two_tower", {"plan": {"data_parallel": 2}}, [], 2),
    ]
    return out


def merge(spec, edits):
    for key, value in edits.items():
        if isinstance(value, dict):
            merge(spec.setdefault(key, {}), value)
        else:
            spec[key] = value


def sha(data):
    return hashlib.sha256(data).hexdigest()[:16]


def run(cmd, may_fail=False):
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode != 0 and may_fail:
        return None
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{r.stderr.decode(errors='replace')}")
    return r.stdout


def fingerprint(args, work, case):
    name, example, edits, flags, ranks = case
    spec = json.load(open(os.path.join(EXAMPLES, example + ".json")))
    merge(spec, edits)
    if ranks > 1:
        for i, table in enumerate(spec["embeddings"]):
            table["sharding"] = ("table_wise", "row_wise")[i % 2]
    model = os.path.join(work, name + ".json")
    json.dump(spec, open(model, "w"))
    embc = os.path.join(args.build, "bin", "embc")
    embrun = os.path.join(args.build, "bin", "embrun")
    # A plan the CUDA target refuses (skipgram_step has no lowering) records
    # "refused": that must not change either.
    cuda = run([embc, model, "--cuda", "--emit=plan-json"] + flags, may_fail=True)
    got = {"plan": sha(run([embc, model, "--emit=plan-json"] + flags)),
           "cuda": "refused" if cuda is None else sha(cuda)}
    if example in COMPILE_ONLY:
        return got
    if ranks > 1 and not shutil.which("mpirun"):
        got.update(loss="no-mpirun", ckpt="no-mpirun")
        return got
    plan = os.path.join(work, name + ".plan")
    run([embc, model, "-o", plan] + flags)
    save, log = os.path.join(work, name + ".ckpt"), os.path.join(work, name + ".jsonl")
    cmd = [embrun, plan, "--steps", str(args.steps), "--threads", "1", "--report-every", "1",
           "--log", log, "--save", save]
    if ranks > 1:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
               "-np", str(ranks)] + cmd
    run(cmd)
    losses = [r["loss"] for r in map(json.loads, open(log)) if r.get("event") == "train"]
    if len(losses) != args.steps:
        sys.exit(f"FAIL: {name}: {len(losses)} train records in {log}, expected {args.steps}")
    got["loss"] = sha(json.dumps(losses).encode())
    files = sorted(os.listdir(save))
    got["ckpt"] = sha(b"".join(f.encode() + open(os.path.join(save, f), "rb").read()
                               for f in files))
    return got


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--only", help="comma-separated case names")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="FILE")
    mode.add_argument("--compare", metavar="FILE")
    args = p.parse_args()

    chosen = cases()
    if args.only:
        keep = set(args.only.split(","))
        chosen = [c for c in chosen if c[0] in keep]
    want = {}
    if args.compare:
        record = json.load(open(args.compare))
        want, args.steps = record["cases"], record["steps"]
    results, differ = {}, []
    with tempfile.TemporaryDirectory(prefix="embc-golden-") as work:
        for case in chosen:
            got = fingerprint(args, work, case)
            results[case[0]] = got
            line = " ".join(f"{k} {v}" for k, v in got.items())
            if args.compare:
                old = want.get(case[0])
                # A case the baseline does not have (a new example) is
                # reported, not failed: there is nothing to compare it with.
                bad = [k for k in got if old is not None and old.get(k) != got[k]]
                if bad:
                    differ.append(case[0])
                line += "  " + ("DIFFERS: " + ", ".join(bad) if bad
                                else "new (not in the baseline)" if old is None else "same")
            print(f"{case[0]:32s} {line}", flush=True)
    if args.write:
        json.dump({"steps": args.steps, "cases": results}, open(args.write, "w"), indent=1)
        print(f"wrote {len(results)} cases to {args.write}")
    if differ:
        sys.exit(f"FAIL: {len(differ)} case(s) differ: {', '.join(differ)}")


if __name__ == "__main__":
    main()
