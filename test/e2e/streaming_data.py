"""Data larger than the reader's memory, end to end (docs/training.md,
"Your own data").

1. A 2 GB Criteo-format file (generated: a block of random lines repeated)
   trains dlrm_small with embrun's defaults, and reading it adds less than
   300 MB to embrun's peak resident memory: the reader streams it in
   shuffle windows instead of holding it. (What reading adds: the peak with
   the 2 GB file less the peak with its first 4 MB, held whole; embrun
   itself, its libraries and dlrm_small take about 250 MB either way.)
2. A CSV read through the model's own data schema, split over three files
   (a glob) and streamed with --data-memory 1: 2N steps in one run equal N
   steps, a checkpoint and N more (byte-identical), so the data position
   resumes mid-file exactly.
"""
import json
import os
import random
import sys

from e2e_common import expect, run, tool_args

GB = 1 << 30


def criteo_block(lines, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        fields = [str(rng.randint(0, 1))]
        fields += ["" if rng.random() < 0.15 else str(rng.randint(0, 500)) for _ in range(13)]
        fields += ["" if rng.random() < 0.1 else "%08x" % rng.getrandbits(32) for _ in range(26)]
        out.append("\t".join(fields))
    return ("\n".join(out) + "\n").encode()


MEASURE = """
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    rc = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_rss_mb(cmd, log):
    """Runs `cmd` (from a fresh process, so that nothing else is counted) and
    returns its peak resident memory in MB."""
    r = run([sys.executable, "-c", MEASURE, log] + cmd)
    rc, kb = r.stdout.split()
    if rc != "0":
        sys.exit(f"FAIL: {' '.join(cmd)} exited {rc}:\n{open(log).read()[-3000:]}")
    return int(kb) / 1024


def large_file(args, size):
    data = os.path.join(args.work, "large.tsv")
    block = criteo_block(20000, 1)
    with open(data, "wb") as f:
        for _ in range(size // len(block) + 1):
            f.write(block)
    plan = os.path.join(args.work, "dlrm_small.plan")
    run([args.embc, os.path.join(args.examples, "dlrm_small.json"), "-o", plan])
    small = os.path.join(args.work, "small.tsv")
    with open(data, "rb") as f, open(small, "wb") as out:
        out.write(f.read(4 << 20).rsplit(b"\n", 1)[0] + b"\n")
    log = os.path.join(args.work, "large.log")
    # 200 steps of 2048: 410k examples, more than two shuffle windows.
    steps = ["--steps", "200", "--threads", "2"]
    peak = peak_rss_mb([args.embrun, plan, "--data", f"criteo:{data}"] + steps, log)
    text = open(log).read()
    os.remove(data)
    base = peak_rss_mb([args.embrun, plan, "--data", f"criteo:{small}"] + steps,
                       os.path.join(args.work, "small.log"))
    expect("streamed, shuffled in windows of" in text,
           "a %.1f GB file is streamed in shuffle windows" % (size / GB))
    expect(peak - base < 300, "reading it adds %.0f MB < 300 MB to embrun's peak resident "
           "memory (%.0f MB; %.0f MB with 4 MB of it)" % (peak - base, peak, base))


def schema_resume(args):
    rng = random.Random(3)
    rows = []
    for r in range(40000):
        tags = "|".join(str(rng.randint(0, 99)) for _ in range(rng.randint(0, 3)))
        city = rng.choice(["Paris", "Oslo", "Lima, Peru", "Kyiv", "Quito"])
        x = rng.random()
        rows.append(f'{int(x + rng.random() > 1)},{x * 40:.3f},{tags},"{city}"')
    for part, (a, b) in enumerate([(0, 2500), (2500, 2600), (2600, 40000)]):
        with open(os.path.join(args.work, f"clicks-{part}.csv"), "w") as f:
            f.write("clicked,price,tags,city\n" + "\n".join(rows[a:b]) + "\n")
    model = {
        "format": "embc.model/v1", "name": "clicks",
        "data": {"format": "csv", "header": True, "columns": [
            {"name": "clicked", "type": "label", "field": "clicked"},
            {"name": "price", "type": "dense", "field": "price", "clip": [0, None],
             "log1p": True},
            {"name": "tags", "type": "categorical", "field": "tags", "separator": "|"},
            {"name": "city", "type": "categorical", "field": "city", "encoding": "hash"}]},
        "features": [
            {"name": "clicked", "type": "label"},
            {"name": "price", "type": "dense", "dim": 1},
            {"name": "tags", "type": "sparse", "table": "t_tags", "vocab": 100, "hotness": 3},
            {"name": "city", "type": "sparse", "table": "t_city", "vocab": 1000, "hash": True}],
        "embeddings": [{"name": "t_tags", "rows": 100, "dim": 8},
                       {"name": "t_city", "rows": 64, "dim": 8}],
        "layers": [{"name": "x", "type": "concat", "inputs": ["price", "tags", "city"]},
                   {"name": "logit", "type": "mlp", "input": "x", "sizes": [16, 1],
                    "final_activation": "none"}],
        "loss": {"type": "bce_with_logits", "input": "logit", "label": "clicked"},
        "optimizer": {"dense": {"type": "adam", "lr": 0.01},
                      "embedding": {"type": "sgd", "lr": 0.05}},
        "training": {"batch_size": 64, "seed": 5},
    }
    path = os.path.join(args.work, "clicks.json")
    json.dump(model, open(path, "w"))
    plan = os.path.join(args.work, "clicks.plan")
    run([args.embc, path, "-o", plan])
    data = ["--data", os.path.join(args.work, "clicks-*.csv"), "--data-memory", "1",
            "--shuffle", "buffer:700", "--threads", "2"]
    full, half = os.path.join(args.work, "full"), os.path.join(args.work, "half")
    # 150 steps of 64: 9600 examples, across the files' ends and many windows.
    r = run([args.embrun, plan, "--steps", "150", "--save", full] + data)
    out = r.stdout + r.stderr
    expect("streamed, shuffled in windows of 700 examples" in out,
           "the schema's CSV files are streamed in windows of 700")
    run([args.embrun, plan, "--steps", "75", "--save", half] + data)
    run([args.embrun, plan, "--steps", "75", "--resume", half, "--save", half] + data)
    a = open(os.path.join(full, "checkpoint.safetensors"), "rb").read()
    b = open(os.path.join(half, "checkpoint.safetensors"), "rb").read()
    expect(a == b, "streamed schema data: 150 steps == 75 + resume (mid-file) + 75, "
                   "byte-identical checkpoints")


def main():
    p = tool_args(__doc__)
    p.add_argument("--gigabytes", type=float, default=2.0)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    large_file(args, int(args.gigabytes * GB))
    schema_resume(args)


if __name__ == "__main__":
    main()
