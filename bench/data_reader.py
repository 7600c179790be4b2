"""The data reader: how fast embrun reads a Criteo TSV, against pandas, and
what streaming a file larger than --data-memory costs the training.

1. Read rate: embrun's first read of a generated Criteo file (every line
   parsed and checked; embrun's "read in X s (Y MB/s)"), at 1 and 2 threads,
   against pandas.read_csv of the same file (C engine, one thread; only the
   read, not the hex ids' conversion, so pandas' figure is a lower bound of
   its work) and against reading the bytes from the page cache (the
   ceiling: how fast the file can be had at all).
2. Streaming: dlrm_small's training samples/s on that file held in memory
   (the default) and streamed in shuffle windows (--data-memory 16: windows
   of 1 MiB of rows), steady state.

    python3 bench/data_reader.py              # a 200 MB file
    python3 bench/data_reader.py --mb 50 --busy
"""
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

import harness


def criteo_file(path, mb):
    rng = random.Random(1)
    lines = []
    for _ in range(20000):
        f = [str(rng.randint(0, 1))]
        f += ["" if rng.random() < 0.15 else str(rng.randint(0, 500)) for _ in range(13)]
        f += ["" if rng.random() < 0.1 else "%08x" % rng.getrandbits(32) for _ in range(26)]
        lines.append("\t".join(f))
    block = ("\n".join(lines) + "\n").encode()
    with open(path, "wb") as out:
        for _ in range(max(1, mb * 1000000 // len(block))):
            out.write(block)
    return os.path.getsize(path)


def embrun_read_s(embrun, plan, data, threads):
    """embrun's first read of `data` (its data line's "read in X s")."""
    r = subprocess.run([embrun, plan, "--data", f"criteo:{data}", "--steps", "1",
                        "--threads", str(threads)], capture_output=True, text=True)
    m = re.search(r"read in ([0-9.]+) s", r.stderr + r.stdout)
    if r.returncode != 0 or not m:
        sys.exit(f"error: embrun failed or printed no read time:\n{r.stderr[-2000:]}")
    return float(m.group(1))


def page_cache_s(path):
    start = time.perf_counter()
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass
    return time.perf_counter() - start


def pandas_s(pd, path):
    start = time.perf_counter()
    pd.read_csv(path, sep="\t", header=None,
                dtype={c: str for c in range(14, 40)}, engine="c")
    return time.perf_counter() - start


def main():
    p = harness.bench_args(__doc__, "timed training steps (default 200)",
                           "runs of each measurement (median)")
    p.add_argument("--mb", type=int, default=200, help="size of the generated file")
    p.add_argument("--busy", action="store_true", help="one competing busy process beside each run")
    args = p.parse_args()
    embc, embrun = harness.binaries(args.build, args.embrun)
    pd = harness.require("pandas", [["pandas"]])
    print(harness.load_note())
    work = tempfile.mkdtemp(prefix="embc-reader-")
    data = os.path.join(work, "criteo.tsv")
    size = criteo_file(data, args.mb)
    plan = os.path.join(work, "dlrm_small.plan")
    harness.run([embc, os.path.join(harness.ROOT, "examples", "dlrm_small.json"), "-o", plan])
    busy = " beside one busy process" if args.busy else ""
    print(f"== read rate: a {size / 1e6:.0f} MB Criteo TSV, median of {args.repeats}{busy}")
    with harness.busy_competitor(args.busy):
        cache = statistics.median(page_cache_s(data) for _ in range(args.repeats))
        peer = statistics.median(pandas_s(pd, data) for _ in range(args.repeats))
        ours = {t: statistics.median(embrun_read_s(embrun, plan, data, t)
                                     for _ in range(args.repeats)) for t in (1, 2)}
    print(f"page cache (the ceiling)     {size / 1e6 / cache:8.0f} MB/s")
    print(f"pandas.read_csv (1 thread)   {size / 1e6 / peer:8.0f} MB/s")
    for t, s in ours.items():
        print(f"embrun, {t} thread(s)          {size / 1e6 / s:8.0f} MB/s   "
              f"{peer / s:5.1f}x pandas   {cache / s:6.1%} of the page cache's rate")

    steps = args.steps or 200
    print(f"== dlrm_small training on it, {steps} steps after 40 warm-up, --threads 2{busy}")
    rates = {}
    with harness.busy_competitor(args.busy):
        for tag, extra in [("held", []), ("streamed", ["--data-memory", "16"])]:
            runs = []
            for r in range(args.repeats):
                records = harness.embrun(embrun, plan, 40 + steps, 2, work, f"{tag}{r}",
                                         ["--data", f"criteo:{data}", "--report-every", "10",
                                          *extra])
                runs.append(harness.embc_samples_per_s(records, 40, 2048))
            rates[tag] = statistics.median(runs)
    print(f"held in memory               {rates['held'] / 1e3:8.1f}k samples/s")
    print(f"streamed (1 MiB windows)     {rates['streamed'] / 1e3:8.1f}k samples/s   "
          f"{rates['streamed'] / rates['held']:.2f}x held")
    os.remove(data)


if __name__ == "__main__":
    main()
