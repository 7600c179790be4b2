#!/usr/bin/env python3
"""Sampled softmax against the full softmax, the same model in the same run.

For each model of --models (default gpt_mini, bert_mini_mlm) it compiles
the example as written (the full softmax: the baseline plan) and with the
loss's "sampled": S for each S of --sampled (default 512), then:

1. speed: embrun's training samples/s on the synthetic data (the steady
   state after warm-up and the team-size trial, harness.embrun_rate), the
   R runs of each plan interleaved and the median reported, and
   sampled / full;
2. the output projection's share: its GEMM FLOPs a step, full (3 x 2 N D V)
   against sampled (3 x 2 N D (S + 1)), N the rows the head computes;
3. with --epochs E and the Gutenberg passages (tools/scripts/text_passages.py
   writes embc-passages in the system's temporary folder): each plan trained E epochs, its wall time and
   eval_perplexity (the full softmax's: evaluation never samples), against
   the unigram model's perplexity of the same evaluation file.

Usage: python3 bench/sampled_softmax.py [--models M,...] [--sampled 512,...]
                                        [--steps N] [--repeats R] [--threads T]
                                        [--epochs E] [--passages DIR]
"""
import collections
import json
import math
import os
import statistics
import sys
import tempfile
import time

import harness


def unigram_perplexity(train, evaluation, masked):
    """exp of the mean cross-entropy of the training file's word frequencies
    (add-one) over the evaluation file's predicted tokens: every token but
    each line's first (next-token) or every token (masked: a sample)."""
    counts = collections.Counter()
    with open(train) as f:
        for line in f:
            counts.update(line.split())
    total = sum(counts.values()) + len(counts) + 1
    nll, n = 0.0, 0
    with open(evaluation) as f:
        for line in f:
            words = line.split()
            for w in (words if masked else words[1:]):
                nll -= math.log((counts.get(w, 0) + 1) / total)
                n += 1
    return math.exp(nll / n)


def head_rows(model, plan_json):
    """N: the rows the output projection computes a step (B x L, or B x P
    behind -emb-select-targets), from the plan's loss input shape."""
    loss = next(k for k in plan_json["step"] if k["op"] == "loss")
    shape = plan_json["buffers"][loss["inputs"][0]]["shape"]
    return shape[0] * shape[1]


def main():
    p = harness.bench_args(__doc__.splitlines()[0], "timed steps (default 40)",
                           "runs of each plan (default 3)")
    p.add_argument("--models", default="gpt_mini,bert_mini_mlm")
    p.add_argument("--sampled", default="512")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--epochs", type=int, default=0)
    p.add_argument("--passages", default=os.path.join(tempfile.gettempdir(), "embc-passages"))
    a = p.parse_args()
    steps = a.steps or 40
    embc, embrun_bin = harness.binaries(a.build, a.embrun)
    print(harness.load_note())
    work = tempfile.mkdtemp(prefix="embc-sampled-")
    for name in a.models.split(","):
        path, model = harness.load_model(name)
        batch = model["training"]["batch_size"]
        d_model = next(l for l in model["layers"] if l["type"] == "encoder")["d_model"]
        plans = {}
        for s in [0] + [int(x) for x in a.sampled.split(",")]:
            m = json.loads(json.dumps(model))
            if s:
                m["loss"]["sampled"] = s
            src = os.path.join(work, f"{name}_{s}.json")
            with open(src, "w") as f:
                json.dump(m, f)
            plan = os.path.join(work, f"{name}_{s}.plan")
            plans[s] = (plan, harness.compile_plan(embc, src, plan))
        rates = {s: [] for s in plans}
        for r in range(a.repeats):
            for s, (plan, _) in plans.items():
                rates[s].append(harness.embrun_rate(embrun_bin, plan, batch, 20, steps,
                                                    a.threads, work, f"{name}_{s}_{r}"))
        full = statistics.median(rates[0])
        vocab = model["features"][0]["vocab"]
        n = head_rows(model, plans[0][1])
        print(f"\n{name}: batch {batch}, head rows {n} x d_model {d_model}, vocab {vocab}")
        print(f"  full softmax     {full:8.1f} samples/s   head GEMMs "
              f"{3 * 2 * n * d_model * vocab / 1e9:.2f} GFLOP/step")
        for s in plans:
            if s:
                rate = statistics.median(rates[s])
                print(f"  sampled {s:<8d} {rate:8.1f} samples/s   head GEMMs "
                      f"{3 * 2 * n * d_model * (s + 1) / 1e9:.2f} GFLOP/step   "
                      f"sampled / full {rate / full:.2f}x")
        if not a.epochs:
            continue
        train = os.path.join(a.passages, "train_text.txt")
        evaluation = os.path.join(a.passages, "eval_text.txt")
        if not os.path.exists(train):
            print(f"  (no {train}: run tools/scripts/text_passages.py for the perplexities)")
            continue
        masked = model["loss"]["type"] == "masked_token"
        print(f"  unigram perplexity of {evaluation}: "
              f"{unigram_perplexity(train, evaluation, masked):.1f}")
        for s, (plan, _) in plans.items():
            start = time.time()
            log = os.path.join(work, f"{name}_{s}_epochs.jsonl")
            harness.run([embrun_bin, plan, "--epochs", str(a.epochs), "--threads", str(a.threads),
                         "--data", "text:" + train, "--eval", "text:" + evaluation,
                         "--log", log])
            seconds = time.time() - start
            with open(log) as f:
                summary = [json.loads(l) for l in f if '"summary"' in l][-1]
            label = "full softmax" if s == 0 else f"sampled {s}"
            print(f"  {label:<16s} {a.epochs} epoch(s) in {seconds:6.1f} s: "
                  f"eval_perplexity {summary['eval_perplexity']:.1f}")


if __name__ == "__main__":
    sys.exit(main())
