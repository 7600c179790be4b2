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
  transformer_layer (16) 2 micro-batches, 2 stages 1F1B at 4 and GPipe at 2
                         (an encoder layer split between two stages); its
                         weights within 1e-5 (CASES says why)

Usage: pipeline_equivalence.py --embc PATH --embrun PATH --examples DIR --work DIR
"""
import json
import os
import shutil
import sys

from e2e_common import floats, read_safetensors, run, tool_args, worst_tensor_differences

TOLERANCE = 1e-6
# Optimizer state: Adam's second moment of a layer norm's gamma (a sum over
# B x L rows whose terms cancel) differs by up to 1e-5 relative when its
# gradient is summed per micro-batch (transformer_layer, 4 micro-batches:
# 9.4e-6), while the weights it updates stay within 1e-6.
STATE_TOLERANCE = 2e-5
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
    # Adam turns rounding-level gradient differences (each micro-batch's
    # dense_grad_weight sums its own rows, then they are added) into
    # per-element steps: at 4 micro-batches wffn1 moves 4.4e-6 apart in 4
    # steps while the losses agree within 8e-7.
    ("transformer_layer.json", 16,
     [{"micro_batches": 2},
      {"micro_batches": 4, "pipeline_stages": 2, "schedule": "1f1b"},
      {"micro_batches": 2, "pipeline_stages": 2, "schedule": "gpipe"}], 1e-5),
    # The next-token loss is each sequence's mean, averaged over the batch:
    # a micro-batch's mean times its share of the batch is its part of the
    # whole, so the split changes only rounding. Two layers as two stages.
    ("gpt_mini.json", 8,
     [{"micro_batches": 2},
      {"micro_batches": 4, "pipeline_stages": 2, "schedule": "1f1b"}], 1e-5),
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


def main():
    p = tool_args(__doc__.splitlines()[0])
    p.add_argument("--models", default="", help="comma-separated: only these (default: all)")
    args = p.parse_args()
    ok = True
    for model, batch, plans, *weight_tolerance in CASES:
        if args.models and model not in args.models.split(","):
            continue
        weight_tolerance = weight_tolerance[0] if weight_tolerance else TOLERANCE
        base_loss, base = train(args, model, batch, None, "plain")
        for plan in plans:
            name = "-".join(f"{k}={v}" for k, v in plan.items())
            loss, ckpt = train(args, model, batch, plan, name)
            worst_loss = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(loss, base_loss))
            # Parameters and tables, then optimizer state (Adam's second
            # moment squares the gradient: twice its relative difference).
            worst, missing = worst_tensor_differences(base, ckpt)
            if missing:
                sys.exit(f"FAIL: {model} {name}: checkpoint tensor '{missing[0]}' missing or resized")
            good = (worst_loss <= TOLERANCE and worst["weights"][0] <= weight_tolerance and
                    worst["state"][0] <= STATE_TOLERANCE)
            ok &= good
            print(f"{'PASS' if good else 'FAIL'}: {model} batch {batch} {name}: loss max rel "
                  f"{worst_loss:.1e}, weights max rel {worst['weights'][0]:.1e} "
                  f"({worst['weights'][1]}), optimizer state max rel {worst['state'][0]:.1e} "
                  f"({worst['state'][1]})", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
