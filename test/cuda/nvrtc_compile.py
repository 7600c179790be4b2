#!/usr/bin/env python3
"""Every example model's CUDA program compiles with NVRTC for sm_80 and sm_90,
as the real device compiles it (no GPU needed), and every kernel passes the
resource check (emb-nvrtc-check --resources: no spills, no local memory,
registers within its launch bounds): each examples/*.json as written, and
dlrm_small in the variants that change the generated code most (tables
stored fp16/bf16/int8/int4, bf16 and fp16 dense compute, --no-fuse,
--no-pack), the token models with a sampled softmax and an int8 token
table, plus the GPU benchmark's DLRM (fp16 tables, bf16 MLPs).

For each: `embc M.json --emit=cuda -o M.cu`, then `emb-nvrtc-check M.cu...`
(one process for all files). A failure prints NVRTC's log; the failing
sources are kept under WORK/failed/.

Usage: nvrtc_compile.py --embc PATH --check PATH --examples DIR --work DIR
       [--bench-model PATH] [--arch sm_80,sm_90] [--partial]
--partial sets EMBC_CUDA_PARTIAL=1 (ops without a lowering become empty
kernels): a development aid while lowerings are written, never in ctest.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

# (name, base example, model edits, embc flags)
VARIANTS = [
    ("dlrm_small.quant_fp16", "dlrm_small", {"plan": {"quantize": "fp16"}}, []),
    ("dlrm_small.quant_bf16", "dlrm_small", {"plan": {"quantize": "bf16"}}, []),
    ("dlrm_small.quant_int8", "dlrm_small", {"plan": {"quantize": "int8"}}, []),
    ("dlrm_small.quant_int4", "dlrm_small", {"plan": {"quantize": "int4"}}, []),
    ("dlrm_small.precision_bf16", "dlrm_small", {"training": {"precision": "bf16"}}, []),
    ("dlrm_small.precision_fp16", "dlrm_small", {"training": {"precision": "fp16"}}, []),
    ("dlrm_small.no_fuse", "dlrm_small", {}, ["--no-fuse"]),
    ("dlrm_small.no_pack", "dlrm_small", {}, ["--no-pack"]),
    ("wide_deep.no_fuse_no_pack", "wide_deep", {}, ["--no-fuse", "--no-pack"]),
    # Sinusoidal positions and one attention head of 64 columns (two column
    # chunks a thread) over the 64-token passages.
    ("text_classifier.attention", "text_classifier",
     {"features": [{"name": "tokens", "type": "sequence", "table": "words", "vocab": 30000,
                    "max_len": 64, "positions": "sinusoidal"},
                   {"name": "label", "type": "label", "kind": "class"}],
      "layers": [{"name": "mixed", "type": "self_attention", "input": "tokens", "heads": 1},
                 {"name": "mean", "type": "sequence_pool", "input": "mixed"},
                 {"name": "logits", "type": "mlp", "input": "mean", "sizes": [128, 7],
                  "final_activation": "none"}]}, []),
    # Sampled softmax (sampled_logits and its gradient): a dense head with a
    # bias, and a tied head behind the masked-token selection.
    ("gpt_mini.sampled", "gpt_mini",
     {"loss": {"sampled": 512}}, []),
    ("bert_mini_mlm.sampled", "bert_mini_mlm",
     {"loss": {"sampled": 512}}, []),
    # A quantised token table: sequence_lookup's dequantising row loads.
    ("gpt_mini.int8_tokens", "gpt_mini",
     {"embeddings": [{"name": "words", "rows": 8000, "dim": 128, "dtype": "int8",
                      "init": {"kind": "normal", "std": 0.05}}]}, []),
]


def merge(model, edits):
    for key, value in edits.items():
        if isinstance(value, dict):
            merge(model.setdefault(key, {}), value)
        else:
            model[key] = value
    return model


def emit(embc, model_path, flags, out, env):
    r = subprocess.run([embc, model_path, "--emit=cuda", "-o", out] + flags,
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return f"embc {' '.join([model_path] + flags)} --emit=cuda exited {r.returncode}:\n" \
               f"{r.stdout}{r.stderr}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--embc", required=True)
    ap.add_argument("--check", required=True, help="the emb-nvrtc-check tool")
    ap.add_argument("--examples", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--bench-model", help="bench/gpu/dlrm_mlperf_gpu.json")
    ap.add_argument("--arch", default="sm_80,sm_90",
                    help="comma-separated: the A100 and Hopper by default")
    ap.add_argument("--partial", action="store_true")
    args = ap.parse_args()

    env = dict(os.environ)
    env.pop("EMBC_CUDA_PARTIAL", None)
    if args.partial:
        env["EMBC_CUDA_PARTIAL"] = "1"
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    jobs = []  # (name, model path, flags)
    for path in sorted(glob.glob(os.path.join(args.examples, "*.json"))):
        jobs.append((os.path.splitext(os.path.basename(path))[0], path, []))
    for name, base, edits, flags in VARIANTS:
        model = merge(json.load(open(os.path.join(args.examples, base + ".json"))), edits)
        path = os.path.join(args.work, name + ".json")
        json.dump(model, open(path, "w"), indent=1)
        jobs.append((name, path, flags))
    if args.bench_model:
        jobs.append(("bench_dlrm_mlperf_gpu", args.bench_model, []))

    sources, failures = [], []
    for name, path, flags in jobs:
        out = os.path.join(args.work, name + ".cu")
        error = emit(args.embc, path, flags, out, env)
        if error:
            failures.append(name)
            print(f"FAIL: {name}: {error}", flush=True)
        else:
            sources.append(out)
    print(f"generated {len(sources)} of {len(jobs)} programs", flush=True)
    # Each arch as the device compiles it, with ptxas's per-kernel report:
    # no spills, no local memory, registers within the launch bounds.
    for arch in args.arch.split(","):
        if not sources:
            break
        r = subprocess.run([args.check, "--arch", arch, "--resources",
                            "--keep", os.path.join(args.work, "failed")] + sources)
        if r.returncode != 0:
            failures.append(f"NVRTC {arch}")
    if failures:
        print("FAIL: " + ", ".join(failures))
        return 1
    print(f"PASS: {len(sources)} CUDA programs compile with NVRTC for {args.arch}, every kernel "
          "without spills or local memory and within its launch bounds' registers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
