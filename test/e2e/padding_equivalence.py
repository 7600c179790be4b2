#!/usr/bin/env python3
"""Dynamic padding equivalence: a batch run at its own longest sequence
(embrun --padding batch, the default) learns what the batch padded to
max_len learns (--padding max_len).

Each case trains on generated text whose lines are 2 to 30 words long
(max_len 64), so most batches run at 16, 24 or 32 positions. Both runs
must agree within 1e-6 relative: every step's loss, the final evaluation
(loss and, for token models, perplexity), and every tensor of the final
checkpoint (relative norm of the difference; optimizer state within 2e-5,
as pipeline_equivalence.py allows Adam's second moment; transformer_layer's
weights within 1e-5, see CASES). Dropout, attention
dropout and the masked-token choice draw the same masks at any length: they
number elements by max_len.

  gpt_mini          causal, next-token loss, fused residual norms, dropout
  gpt_mini unfused  --no-fuse: the plain kernels
  gpt_mini pipeline 2 micro-batches on 2 stages (1F1B): every micro-batch at
                    the step's longest sequence
  gpt_mini sampled  "sampled": 64 on the loss
  bert_mini_mlm     masked tokens, select_targets, the tied projection; and on
                    lines of 2 to 6 words (8 positions, fewer than the 10
                    targets a sequence keeps)
  text_classifier   mean and max pooling
  transformer_layer an encoder layer, attention-weight dropout, mean pooling
  *_emulated        the CUDA backend on the emulated device (embc --cuda): its
                    program's kernels at each shorter length (CudaLengthVariant)
                    against its max_len kernels

Every --padding batch run must have run shorter than max_len (the train
records' padded_len).

It also checks that embc's memory report says the buffers are sized for
max_len.

Usage: padding_equivalence.py --embc PATH --embrun PATH --examples DIR --work DIR
"""
import json
import os
import random
import shutil
import sys

from e2e_common import floats, read_safetensors, run, tool_args, worst_tensor_differences

TOLERANCE = 1e-6
STATE_TOLERANCE = 2e-5
STEPS = 4
MAX_LEN = 64  # the examples' max_len


def write_text(path, lines, labelled, seed, longest=30):
    """Lines of 2..longest words over 400 words, Zipf-like; labelled lines
    start with a class 0..6 and a tab."""
    r = random.Random(seed)
    words = [f"w{i}" for i in range(400)]
    weights = [1.0 / (i + 1) for i in range(400)]
    with open(path, "w") as f:
        for _ in range(lines):
            text = " ".join(r.choices(words, weights, k=r.randint(2, longest)))
            f.write((f"{r.randrange(7)}\t" if labelled else "") + text + "\n")


def edit_sampled(spec):
    spec["loss"]["sampled"] = 64


# (name, example, batch, data ("text", "labelled" or "short": lines of 2..6
#  words), model edit, plan settings, embc flags[, extras]); extras:
#  "weights" (the weights' tolerance), "device" (embrun --device).
CASES = [
    ("gpt_mini", "gpt_mini.json", 8, "text", None, None, []),
    ("gpt_mini_unfused", "gpt_mini.json", 8, "text", None, None, ["--no-fuse"]),
    ("gpt_mini_pipeline", "gpt_mini.json", 8, "text", None,
     {"micro_batches": 2, "pipeline_stages": 2, "schedule": "1f1b"}, []),
    ("gpt_mini_sampled", "gpt_mini.json", 8, "text", edit_sampled, None, []),
    ("bert_mini_mlm", "bert_mini_mlm.json", 8, "text", None, None, []),
    # Batches of 8 positions, fewer than the 10 targets select_targets keeps.
    ("bert_mini_mlm_short", "bert_mini_mlm.json", 8, "short", None, None, []),
    ("text_classifier", "text_classifier.json", 16, "labelled", None, None, []),
    # A layer norm's dbeta sums B x L rows, the dense gradients B x L rows
    # in the BLAS's blocking: fewer rows group the same (nonzero) terms
    # differently, and Adam turns such rounding-level gradient differences
    # into per-element steps (ln1's beta 2.3e-6 apart after 4 steps while
    # the losses agree within 1e-7), as pipeline_equivalence.py allows.
    ("transformer_layer", "transformer_layer.json", 8, "labelled", None, None, [],
     {"weights": 1e-5}),
    ("gpt_mini_emulated", "gpt_mini.json", 4, "text", None, None, ["--cuda"],
     {"device": "emulated"}),
    ("bert_mini_mlm_emulated", "bert_mini_mlm.json", 4, "text", None, None, ["--cuda"],
     {"device": "emulated"}),
    ("bert_mini_mlm_short_emulated", "bert_mini_mlm.json", 4, "short", None, None, ["--cuda"],
     {"device": "emulated"}),
    ("text_classifier_emulated", "text_classifier.json", 8, "labelled", None, None, ["--cuda"],
     {"device": "emulated"}),
    ("transformer_layer_emulated", "transformer_layer.json", 4, "labelled", None, None,
     ["--cuda"], {"device": "emulated", "weights": 1e-5}),
]


def compile_case(args, work, example, batch, edit, plan, flags):
    spec = json.load(open(os.path.join(args.examples, example)))
    spec["training"]["batch_size"] = batch
    if edit:
        edit(spec)
    if plan:
        spec["plan"] = plan
    model = os.path.join(work, "model.json")
    json.dump(spec, open(model, "w"))
    out = os.path.join(work, "model.plan")
    run([args.embc, model, "-o", out] + flags)
    report = run([args.embc, model, "--emit=report"] + flags).stdout
    return out, report


def train(args, work, plan, data, padding, device):
    log = os.path.join(work, f"{padding}.jsonl")
    ckpt = os.path.join(work, f"{padding}-ckpt")
    run([args.embrun, plan, "--data", f"text:{data[0]}", "--eval", f"text:{data[1]}",
         "--steps", str(STEPS), "--eval-every", str(STEPS), "--report-every", "1",
         "--threads", "2", "--padding", padding, "--log", log, "--save", ckpt,
         "--device", device])
    records = [json.loads(line) for line in open(log)]
    padded = [r["padded_len"] for r in records if r.get("event") == "train"]
    if padding == "batch" and not all(p < MAX_LEN for p in padded):
        sys.exit(f"FAIL: {work}: --padding batch ran at {padded} positions, not below "
                 f"max_len {MAX_LEN}")
    losses = [r["loss"] for r in records if r.get("event") == "train"]
    evals = [r for r in records if r.get("event") == "eval"]
    if len(losses) != STEPS or not evals:
        sys.exit(f"FAIL: {work}: {len(losses)} train and {len(evals)} eval records")
    final = [evals[-1][k] for k in ("eval_loss", "eval_perplexity") if k in evals[-1]]
    tensors = read_safetensors(os.path.join(ckpt, "checkpoint.safetensors"))
    return losses + final, {t: floats(raw, dtype) for t, (dtype, _, raw) in tensors.items()
                            if dtype == "F32"}


def main():
    p = tool_args(__doc__.splitlines()[0])
    p.add_argument("--cases", default="", help="comma-separated names (default: all)")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    data = {}
    for kind, labelled, longest in (("text", False, 30), ("labelled", True, 30),
                                    ("short", False, 6)):
        names = [os.path.join(args.work, f"{kind}_{s}.txt") for s in ("train", "eval")]
        write_text(names[0], 400, labelled, 1, longest)
        write_text(names[1], 40, labelled, 2, longest)
        data[kind] = names
    ok = True
    for name, example, batch, labelled, edit, plan, flags, *extras in CASES:
        extras = extras[0] if extras else {}
        weight_tolerance = extras.get("weights", TOLERANCE)
        device = extras.get("device", "cpu")
        if args.cases and name not in args.cases.split(","):
            continue
        work = os.path.join(args.work, name)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        plan_path, report = compile_case(args, work, example, batch, edit, plan, flags)
        if "sized for max_len 64 of 'tokens'" not in report:
            print(f"FAIL: {name}: the memory report does not say the sequence buffers are "
                  f"sized for max_len:\n{report}")
            ok = False
        base, base_tensors = train(args, work, plan_path, data[labelled], "max_len", device)
        got, tensors = train(args, work, plan_path, data[labelled], "batch", device)
        worst_loss = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(got, base))
        worst, missing = worst_tensor_differences(base_tensors, tensors)
        for tensor in missing:
            print(f"FAIL: {name}: tensor '{tensor}' is missing or of another size")
        passed = (not missing and worst_loss <= TOLERANCE and worst["weights"][0] <= weight_tolerance and
                  worst["state"][0] <= STATE_TOLERANCE)
        ok &= passed
        print(f"{'PASS' if passed else 'FAIL'}: {name}: losses and final evaluation within "
              f"{worst_loss:.2e}, weights {worst['weights'][0]:.2e} ({worst['weights'][1]}), "
              f"optimizer state {worst['state'][0]:.2e} ({worst['state'][1]})", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
