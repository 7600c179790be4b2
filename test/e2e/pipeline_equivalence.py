#!/usr/bin/env python3
"""Pipeline equivalence: -emb-pipeline must not change what a model learns.

Each model is trained on the synthetic data once as compiled (one
micro-batch, one stage) and once per pipeline setting; every run must match
the plain one within 1e-6 relative: the loss of every step, the final
evaluation loss, and every tensor of the final checkpoint (parameters,
tables, optimizer state; relative norm of the difference).

  dlrm_small (batch 48)  every micro-batch count that divides the batch:
                         2, 3, 4, 6, 8, 12, 16, 24, 48; and 2 stages with
                         GPipe and 1F1B at 4 micro-batches
  mf_movielens (32)      2 and 4 micro-batches, 2 stages 1F1B at 4
  two_tower (32)         2 and 8 micro-batches, 2 stages GPipe at 2
  text_classifier (32)   2 micro-batches, 2 stages 1F1B at 4 (sequences:
                         each micro-batch's offsets slice the jagged ids)

Usage: pipeline_equivalence.py --embc PATH --embrun PATH --examples DIR --work DIR
"""
import json
import math
import os
import shutil
import sys

from e2e_common import floats, read_safetensors, run, tool_args

TOLERANCE = 1e-6
STEPS = 4

CASES = [
    ("dlrm_small.json", 48,
     [{"micro_batches": m} for m in (2, 3, 4, 6, 8, 12, 16, 24, 48)] +
     [{"micro_batches": 4, "pipeline_stages": 2, "schedule": s} for s in ("gpipe", "1f1b")]),
    ("mf_movielens.json", 32,
     [{"micro_batches": 2}, {"micro_batches": 4},
      {"micro_batches": 4, "pipeline_stages": 2, "schedule": "1f1b"}]),
    ("two_tower.json", 32,
     [{"micro_batches": 2}, {"micro_batches": 8},
      {"micro_batches": 2, "pipeline_stages": 2, "schedule": "gpipe"}]),
    ("text_classifier.json", 32,
     [{"micro_batches": 2},
      {"micro_batches": 4, "pipeline_stages": 2, "schedule": "1f1b"}]),
]


def train(args, model, batch, plan, name):
    work = os.path.join(args.work, os.path.splitext(model)[0], name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    spec = json.load(open(os.path.join(args.examples, model)))
    spec["training"]["batch_size"] = batch
    if plan:
        spec["plan"] = plan
    model_path = os.path.join(work, "model.json")
    json.dump(spec, open(model_path, "w"))
    plan_path = os.path.join(work, "model.plan")
    run([args.embc, model_path, "-o", plan_path])
    log = os.path.join(work, "log.jsonl")
    ckpt = os.path.join(work, "ckpt")
    run([args.embrun, plan_path, "--steps", str(STEPS), "--report-every", "1",
         "--threads", "2", "--log", log, "--save", ckpt])
    records = [json.loads(line) for line in open(log)]
    losses = [r["loss"] for r in records if r.get("event") == "train"]
    evals = [r["eval_loss"] for r in records if r.get("event") == "eval"]
    if len(losses) != STEPS or not evals:
        sys.exit(f"FAIL: {model} {name}: {len(losses)} train and {len(evals)} eval records")
    tensors = read_safetensors(os.path.join(ckpt, "checkpoint.safetensors"))
    for tensor, (dtype, _, _) in tensors.items():
        if dtype != "F32":
            sys.exit(f"FAIL: {model} {name}: tensor '{tensor}' is {dtype}, expected F32")
    return losses + evals[-1:], {t: floats(raw, "F32") for t, (_, _, raw) in tensors.items()}


def relative_norm(a, b):
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    return diff / max(math.sqrt(sum(y * y for y in b)), 1e-30)


def main():
    p = tool_args(__doc__.splitlines()[0])
    args = p.parse_args()
    ok = True
    for model, batch, plans in CASES:
        base_loss, base = train(args, model, batch, None, "plain")
        for plan in plans:
            name = "-".join(f"{k}={v}" for k, v in plan.items())
            loss, ckpt = train(args, model, batch, plan, name)
            worst_loss = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(loss, base_loss))
            worst, worst_name = 0.0, ""
            for tensor, values in base.items():
                if tensor not in ckpt or len(ckpt[tensor]) != len(values):
                    sys.exit(f"FAIL: {model} {name}: checkpoint tensor '{tensor}' missing or resized")
                rel = relative_norm(ckpt[tensor], values)
                if rel > worst:
                    worst, worst_name = rel, tensor
            good = worst_loss <= TOLERANCE and worst <= TOLERANCE
            ok &= good
            print(f"{'PASS' if good else 'FAIL'}: {model} batch {batch} {name}: loss max rel "
                  f"{worst_loss:.1e}, tensors max rel {worst:.1e} ({worst_name})", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
