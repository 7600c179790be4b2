#!/usr/bin/env python3
"""-emb-quantize end to end: examples/dlrm_small.json trained on the
synthetic data with its tables stored as f32, fp16, bf16, int8 and int4
(plan.quantize; int8/int4 row-wise with an fp16 scale and bias), the same
steps and seed each:

  - every run learns (eval AUC well above 0.5);
  - fp16 and bf16 reach the f32 eval AUC within 0.01, int8 within 0.02 (the
    issue's bounds); int4 has no bound in the issue: it must learn, and its
    AUC is printed next to f32's;
  - checkpoint resume of a bf16, an int8 and an int4 model continues
    bit-identically: 2N steps in one run give the same checkpoint bytes as N
    steps, save, resume, N steps (the stochastic rounding is keyed on the
    step, not on a generator's position); int8/int4 checkpoints hold the
    codes as U8 (int4: two per byte) and the scale/bias as F16;
  - --export-embeddings writes an int4 table dequantised, f32 rows x dim.

Usage: quantize_learning.py --embc PATH --embrun PATH --examples DIR --work DIR
       [--steps N] [--batch B]
Prints one line per storage with its AUC and table bytes (docs/memory.md).
"""
import json
import os

from e2e_common import compile_model, expect, learning_args, train_log

TOLERANCE = {"f32": 0.0, "fp16": 0.01, "bf16": 0.01, "int8": 0.02}
STORAGES = ["f32", "fp16", "bf16", "int8", "int4"]
# "Learns": f32 reaches ~0.72 in these 150 steps of 1024 (0.80 takes 400 of
# 2048, e2e.synthetic_dlrm); an untrained model is at 0.5.
MIN_AUC = 0.68


def compile_variant(args, quantize):
    """dlrm_small with plan.quantize = `quantize` (and the test's batch size)."""
    model = json.load(open(os.path.join(args.examples, "dlrm_small.json")))
    model.setdefault("plan", {})["quantize"] = "none" if quantize == "f32" else quantize
    model["training"]["batch_size"] = args.batch
    work = os.path.join(args.work, quantize)
    plan, report = compile_model(args.embc, model, work)
    table_bytes = sum(b["bytes"] for b in report["buffers"]
                      if b["role"] == "table" and b["parent"] == -1)
    return work, plan, table_bytes


def train(args, plan, log, extra):
    return train_log(args.embrun, plan, log, extra)[1]


def learning(args):
    auc = {}
    for quantize in STORAGES:
        work, plan, table_bytes = compile_variant(args, quantize)
        s = train(args, plan, os.path.join(work, "log.jsonl"),
                  ["--steps", str(args.steps), "--report-every", str(args.steps)])
        auc[quantize] = s["eval_auc"]
        print(f"{quantize:5s} eval_auc {s['eval_auc']:.4f}  table bytes {table_bytes}",
              flush=True)
    for quantize, tolerance in TOLERANCE.items():
        expect(auc[quantize] >= MIN_AUC,
               f"{quantize} tables learn: eval AUC {auc[quantize]:.4f} >= {MIN_AUC}")
        if quantize != "f32":
            expect(abs(auc[quantize] - auc["f32"]) <= tolerance,
                   f"{quantize} eval AUC {auc[quantize]:.4f} within {tolerance} of f32 "
                   f"{auc['f32']:.4f}")
    expect(auc["int4"] >= MIN_AUC,
           f"int4 tables learn: eval AUC {auc['int4']:.4f} >= {MIN_AUC} "
           f"(f32 {auc['f32']:.4f}, difference {auc['int4'] - auc['f32']:+.4f})")


def safetensors_header(path):
    raw = open(path, "rb").read()
    return raw, json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])


def resume(args):
    for quantize in ["bf16", "int8", "int4"]:
        work, plan, _ = compile_variant(args, quantize)
        n = ["--steps", "4"]
        full, half = os.path.join(work, "full"), os.path.join(work, "half")
        train(args, plan, os.path.join(work, "full.jsonl"), ["--steps", "8", "--save", full])
        train(args, plan, os.path.join(work, "h1.jsonl"), n + ["--save", half])
        train(args, plan, os.path.join(work, "h2.jsonl"),
              n + ["--resume", half, "--save", half])
        a, header = safetensors_header(os.path.join(full, "checkpoint.safetensors"))
        b = open(os.path.join(half, "checkpoint.safetensors"), "rb").read()
        expect(a == b, f"{quantize}: checkpoint after 8 steps == after 4 + resume + 4 "
                       "(byte-identical)")
        want = {"bf16": ("BF16", [10000, 16]), "int8": ("U8", [10000, 16]),
                "int4": ("U8", [10000, 8])}[quantize]
        got = (header["table/t_C1"]["dtype"], header["table/t_C1"]["shape"])
        expect(got == want, f"{quantize}: the checkpoint stores table/t_C1 as "
                            f"{want[0]} {want[1]} (got {got[0]} {got[1]})")
        if quantize in ("int8", "int4"):
            q = header.get("qparams/t_C1", {})
            expect(q.get("dtype") == "F16" and q.get("shape") == [10000, 2],
                   f"{quantize}: the checkpoint stores qparams/t_C1 as F16 [10000, 2] "
                   "(fp16 scale, bias per row)")
        if quantize == "int4":
            export = os.path.join(work, "embeddings.safetensors")
            train(args, plan, os.path.join(work, "export.jsonl"),
                  ["--steps", "1", "--export-embeddings", export])
            _, exported = safetensors_header(export)
            t = exported.get("t_C1", {})
            expect(t.get("dtype") == "F32" and t.get("shape") == [10000, 16],
                   f"int4: --export-embeddings writes t_C1 dequantised as F32 [10000, 16] "
                   f"(got {t.get('dtype')} {t.get('shape')})")


def main():
    args = learning_args(150)
    resume(args)
    learning(args)


if __name__ == "__main__":
    main()
