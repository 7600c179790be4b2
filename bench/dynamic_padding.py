#!/usr/bin/env python3
"""Dynamic padding and length bucketing on sentences, against padding to max_len.

Each model of --models (default gpt_mini, bert_mini_mlm) is compiled as
written (max_len 64) and trained on the Gutenberg books cut into sentences
(tools/scripts/text_passages.py --sentences: 1 to hundreds of words, median
13) three ways, in the same run, the R runs of each interleaved and the
median reported:

  max_len   embrun --padding max_len: every batch 64 positions (the baseline)
  batch     --padding batch (the default): each batch at its longest
            sentence, rounded up to a multiple of 8
  buckets   --padding batch --length-buckets K (default 64): batches of
            alike lengths from windows of K batches of the shuffled order

It prints training samples/s (after --warm steps), the speedup over
max_len, and the mean positions a batch ran at (the train records'
padded_len: the share of max_len's work left). With --epochs E each setting also trains E epochs from scratch
and reports its wall time and eval_perplexity on the held-out sentences:
bucketing changes which sentences share a batch, and this shows what that
does to learning. --busy runs a CPU-bound process beside the runs (the
figure must hold on a busy machine).

The first max_len and batch runs read the same batches, so their losses
must agree at every report (within 1e-5 relative: the CPU's BLAS and the
GPU's GEMMs block B x L rows differently at another L); a larger
difference fails the benchmark.

--device cuda compiles with embc --cuda and runs embrun --device cuda (on
the GPU the batch setting runs the program's length variants, docs/cuda.md
"Sequence lengths"); --plans DIR takes DIR/MODEL.plan compiled elsewhere
(bench/gpu/prepare.sh: a GPU machine has no embc).

Usage: python3 bench/dynamic_padding.py [--models M,...] [--steps N] [--repeats R]
                                        [--threads T] [--buckets K] [--epochs E]
                                        [--sentences DIR] [--busy]
                                        [--device cpu|cuda] [--plans DIR [--batch B]]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import harness

SETTINGS = ("max_len", "batch", "buckets")
LOSS_TOLERANCE = 1e-5


def flags(setting, buckets):
    if setting == "max_len":
        return ["--padding", "max_len"]
    if setting == "batch":
        return ["--padding", "batch"]
    return ["--padding", "batch", "--length-buckets", str(buckets)]


def padded_len(records, warm):
    """The mean positions the timed steps ran at (each train record's
    padded_len is its steps' mean)."""
    values = [r["padded_len"] for r in records
              if r["event"] == "train" and r["step"] > warm and "padded_len" in r]
    return statistics.mean(values) if values else float("nan")


def main():
    p = harness.bench_args(__doc__.splitlines()[0], "timed steps (default 60)",
                           "runs of each setting (default 3)")
    p.add_argument("--models", default="gpt_mini,bert_mini_mlm")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--warm", type=int, default=20)
    p.add_argument("--buckets", type=int, default=64)
    p.add_argument("--epochs", type=int, default=0)
    p.add_argument("--busy", action="store_true")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda", "emulated"])
    p.add_argument("--plans", default="", help="precompiled DIR/MODEL.plan (no embc needed)")
    p.add_argument("--batch", type=int, default=0,
                   help="the plans' batch size when --plans holds other than the examples'")
    p.add_argument("--sentences",
                   default=os.path.join(tempfile.gettempdir(), "embc-sentences"))
    a = p.parse_args()
    steps = a.steps or 60
    train = os.path.join(a.sentences, "train_text.txt")
    evaluation = os.path.join(a.sentences, "eval_text.txt")
    if not os.path.exists(train):
        sys.exit(f"no {train}: run tools/scripts/text_passages.py --sentences --out {a.sentences}")
    embc, embrun_bin = harness.binaries(a.build, a.embrun)
    device = ["--device", a.device]
    failed = []
    print(harness.load_note())
    busy = None
    if a.busy:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        print("a CPU-bound process runs beside the benchmark")
    work = tempfile.mkdtemp(prefix="embc-padding-")
    try:
        for name in a.models.split(","):
            path, model = harness.load_model(name)
            batch = a.batch or model["training"]["batch_size"]
            max_len = next(f for f in model["features"] if f["type"] == "sequence")["max_len"]
            if a.plans:
                plan = os.path.join(a.plans, name + ".plan")
            else:
                plan = os.path.join(work, name + ".plan")
                harness.compile_plan(embc, path, plan, ["--cuda"] if a.device != "cpu" else [])
            data = ["--data", f"text:{train}", "--report-every", str(harness.REPORT_STEPS)] + device
            rates = {s: [] for s in SETTINGS}
            used = {s: [] for s in SETTINGS}
            losses = {}
            for r in range(a.repeats):
                for s in SETTINGS:
                    records = harness.embrun(embrun_bin, plan, a.warm + steps, a.threads, work,
                                             f"{name}-{s}-{r}", data + flags(s, a.buckets))
                    rates[s].append(harness.embc_samples_per_s(records, a.warm, batch))
                    used[s].append(padded_len(records, a.warm))
                    losses.setdefault(s, [x["loss"] for x in records if x["event"] == "train"])
            worst = max(abs(x - y) / max(abs(y), 1e-30)
                        for x, y in zip(losses["batch"], losses["max_len"]))
            agree = worst <= LOSS_TOLERANCE and len(losses["batch"]) == len(losses["max_len"])
            if not agree:
                failed.append(name)
            base = statistics.median(rates["max_len"])
            print(f"\n{name} (batch {batch}, max_len {max_len}), {steps} timed steps, "
                  f"median of {a.repeats}, --device {a.device}, --threads {a.threads}:")
            print(f"  losses of batch vs max_len at each report: worst {worst:.2e} relative "
                  f"({'ok' if agree else 'FAIL'}, tolerance {LOSS_TOLERANCE:g})")
            print(f"  {'padding':<10} {'samples/s':>10} {'vs max_len':>11} {'positions':>10}")
            for s in SETTINGS:
                rate = statistics.median(rates[s])
                print(f"  {s:<10} {rate:10.1f} {rate / base:10.2f}x "
                      f"{statistics.mean(used[s]):10.1f}")
            if a.epochs:
                print(f"  {a.epochs} epoch(s) from scratch, eval on {evaluation}:")
                for s in SETTINGS:
                    start = time.time()
                    log = os.path.join(work, f"{name}-{s}-epochs.jsonl")
                    harness.run([embrun_bin, plan, "--epochs", str(a.epochs), "--threads",
                                 str(a.threads), "--data", f"text:{train}", "--eval",
                                 f"text:{evaluation}", "--log", log] + device +
                                flags(s, a.buckets))
                    records = [json.loads(line) for line in open(log) if line.strip()]
                    summary = next(x for x in records if x["event"] == "summary")
                    print(f"  {s:<10} {time.time() - start:8.1f} s  eval_perplexity "
                          f"{summary.get('eval_perplexity', float('nan')):.1f}")
    finally:
        if busy:
            busy.kill()
    if failed:
        sys.exit(f"FAIL: the losses of --padding batch and max_len differ on {', '.join(failed)}")


if __name__ == "__main__":
    main()
