#!/usr/bin/env python3
"""Dense compute precision end to end (-emb-quantize's dense half):
examples/dlrm_small.json trained on the synthetic data with
training.precision fp32, bf16 and fp16, the same steps and seed each:

  - bf16 and fp16 (emulated on the CPU: product operands rounded to the
    compute type, f32 accumulation, f32 master weights) reach the fp32
    eval AUC within 0.01;
  - an fp16 run started with a huge loss scale (embrun --loss-scale 2^40)
    overflows, skips those updates (the log's skipped_steps > 0, the scale
    halved each time) and still learns (AUC within 0.02 of fp32);
  - checkpoint resume across skipped steps is exact: 8 steps in one run give
    the same checkpoint bytes as 4 steps, save, resume, 4 steps (the loss
    scale and its counts are in the checkpoint).

Usage: precision_learning.py --embc PATH --embrun PATH --examples DIR --work DIR
       [--steps N] [--batch B]
Prints one line per precision with its AUC (docs/memory.md).
"""
import json
import os
import time

from e2e_common import compile_model, expect, learning_args, train_log

TOLERANCE = 0.01        # bf16 / fp16 vs fp32 eval AUC
SKIP_TOLERANCE = 0.02   # the fp16 run that skipped its first updates
MIN_AUC = 0.68          # "learns": fp32 reaches ~0.71 in 120 steps (0.5 is chance)
HUGE_SCALE = 2.0 ** 40  # dy * 2^40 overflows fp16 (max 65504) in the first steps


def compile_variant(args, precision):
    """dlrm_small with training.precision = `precision` (and the test's batch)."""
    model = json.load(open(os.path.join(args.examples, "dlrm_small.json")))
    model["training"]["precision"] = precision
    model["training"]["batch_size"] = args.batch
    work = os.path.join(args.work, precision)
    plan, plan_json = compile_model(args.embc, model, work)
    return work, plan, plan_json


def train(args, plan, log, extra):
    return train_log(args.embrun, plan, log, extra)


def learning(args):
    auc = {}
    steps = ["--steps", str(args.steps), "--report-every", str(max(1, args.steps // 10))]
    for precision in ["fp32", "bf16", "fp16"]:
        work, plan, plan_json = compile_variant(args, precision)
        kernels = plan_json["step"] + plan_json["update"]
        computes = {k["attrs"].get("compute") for k in kernels}
        if precision == "fp32":
            expect(computes == {None}, "fp32 plan: no kernel has a compute attribute")
        else:
            expect(precision in computes, f"{precision} plan: dense kernels compute in {precision}")
        scaled = plan_json["config"]["loss_scaling"]["enabled"]
        expect(scaled == (precision == "fp16"),
               f"{precision} plan: loss scaling {'on' if scaled else 'off'}")
        t0 = time.time()
        _, s = train(args, plan, os.path.join(work, "log.jsonl"), steps)
        auc[precision] = s["eval_auc"]
        extra = ""
        if precision == "fp16":
            extra = f"  loss_scale {s['loss_scale']:g}  skipped_steps {s['skipped_steps']:g}"
        print(f"{precision:5s} eval_auc {s['eval_auc']:.4f}  {time.time() - t0:.1f} s{extra}",
              flush=True)
    expect(auc["fp32"] >= MIN_AUC, f"fp32 learns: eval AUC {auc['fp32']:.4f} >= {MIN_AUC}")
    for precision in ["bf16", "fp16"]:
        expect(abs(auc[precision] - auc["fp32"]) <= TOLERANCE,
               f"{precision} eval AUC {auc[precision]:.4f} within {TOLERANCE} of fp32 "
               f"{auc['fp32']:.4f}")

    # A huge initial loss scale: the first updates overflow and are skipped.
    work, plan, _ = compile_variant(args, "fp16")
    records, s = train(args, plan, os.path.join(work, "huge.jsonl"),
                       steps + ["--loss-scale", str(HUGE_SCALE)])
    train_records = [r for r in records if r.get("event") == "train"]
    skipped = s["skipped_steps"]
    print(f"fp16 --loss-scale 2^40: eval_auc {s['eval_auc']:.4f}  skipped_steps {skipped:g}  "
          f"final loss_scale {s['loss_scale']:g}", flush=True)
    expect(skipped > 0 and all("skipped_steps" in r for r in train_records),
           f"the log reports skipped steps ({skipped:g})")
    expect(s["loss_scale"] == HUGE_SCALE * 0.5 ** skipped,
           "the scale halved once per skipped step (no growth within the interval)")
    expect(abs(s["eval_auc"] - auc["fp32"]) <= SKIP_TOLERANCE,
           f"it still learns: eval AUC {s['eval_auc']:.4f} within {SKIP_TOLERANCE} of fp32")


def resume(args):
    work, plan, _ = compile_variant(args, "fp16")
    # 2^32 overflows for the first 6 steps or so: the resume point falls
    # among the skips, and the last steps apply updates.
    scale = ["--loss-scale", str(2.0 ** 32)]
    full, half = os.path.join(work, "full"), os.path.join(work, "half")
    _, s = train(args, plan, os.path.join(work, "full.jsonl"),
                 ["--steps", "8", "--save", full] + scale)
    train(args, plan, os.path.join(work, "h1.jsonl"), ["--steps", "4", "--save", half] + scale)
    _, s2 = train(args, plan, os.path.join(work, "h2.jsonl"),
                  ["--steps", "4", "--resume", half, "--save", half])
    a = open(os.path.join(full, "checkpoint.safetensors"), "rb").read()
    b = open(os.path.join(half, "checkpoint.safetensors"), "rb").read()
    expect(s["skipped_steps"] > 0, f"the 8-step run skipped {s['skipped_steps']:g} steps")
    expect(s2["skipped_steps"] == s["skipped_steps"] and s2["loss_scale"] == s["loss_scale"],
           "the resumed run ends with the same loss scale and skipped-step count")
    expect(a == b, "fp16: checkpoint after 8 steps == after 4 + resume + 4 (byte-identical)")


def main():
    args = learning_args(120)
    resume(args)
    learning(args)


if __name__ == "__main__":
    main()
