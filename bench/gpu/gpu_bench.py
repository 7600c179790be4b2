#!/usr/bin/env python3
"""The GPU benchmarks of bench/gpu/run.sh, each part on its own so that one
failing part reports and the next still runs:

 (a) DLRM samples/s: embrun --device cuda on the prepared plan of
     bench/gpu/dlrm_mlperf_gpu.json against PyTorch eager and torch.compile
     (bench/gpu/dlrm_torch.py), same model, batch and optimizers;
 (b) bandwidth of the embedding lookup and of the fused embedding backward +
     update (embrun --profile: per-op time and the plan's byte estimates) as
     a fraction of a device-to-device copy measured in the same run;
 (c) the packed optimizer: update_packed's GB/s as a fraction of the copy,
     and the update time packed vs embc --no-pack (one kernel per param);
 (d) dynamic padding of the token models (bench/dynamic_padding.py on
     DIR/sequence: gpt_mini and bert_mini_mlm, --padding max_len vs batch vs
     length buckets on sentences, losses of max_len and batch compared).

Usage: gpu_bench.py --embrun PATH --plans DIR [--out DIR] [--steps N] [--quick]
                    [--skip busy,uniform,profile,nopack,nofuse,eager,compile,padding]  (or EMBC_GPU_BENCH_SKIP)
Prints a summary table last and writes DIR/gpu_bench.json (DIR: --out, else
$OUT, else the current directory).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, timeout):
    print("$ " + " ".join(cmd), flush=True)
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    print(f"  ({time.perf_counter() - t:.1f} s, exit {r.returncode})", flush=True)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {r.returncode}:\n{r.stdout[-4000:]}{r.stderr[-4000:]}")
    return r


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def embrun_samples_per_s(recs, warm, batch):
    """Throughput between the first train record at or after step `warm` and
    the last one (samples_per_s is cumulative: time to step s is
    s * batch / samples_per_s), so start-up and warm-up are left out."""
    train = [r for r in recs if r.get("event") == "train" and r.get("samples_per_s")]
    if not train:
        summary = [r for r in recs if r.get("event") == "summary"]
        if summary:
            return summary[-1]["samples_per_s"]
        raise RuntimeError("embrun logged no train or summary record")
    first = next((r for r in train if r["step"] >= warm), train[0])
    last = train[-1]
    if last["step"] == first["step"]:
        return last["samples_per_s"]
    t0 = first["step"] * batch / first["samples_per_s"]
    t1 = last["step"] * batch / last["samples_per_s"]
    return (last["step"] - first["step"]) * batch / (t1 - t0)


def profile(recs):
    p = [r for r in recs if r.get("event") == "profile"]
    if not p:
        raise RuntimeError("embrun --profile logged no profile record")
    return p[-1]


def op_rows(prof, names):
    return [o for o in prof["ops"] if o["op"] in names]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--embrun", required=True)
    ap.add_argument("--plans", required=True)
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    ap.add_argument("--skip", default=os.environ.get("EMBC_GPU_BENCH_SKIP", ""),
                    help="comma-separated parts to leave out: busy, uniform, profile, nopack, nofuse, "
                         "eager, compile")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--device", default="cuda", choices=["cuda", "emulated"],
                    help="emulated: run.sh --rehearse (small plans, no GPU)")
    ap.add_argument("--logs", default=os.path.join(tempfile.gettempdir(), "embc-gpu-bench-logs"),
                    help="where each run's log goes (outside --out: $OUT brings back few files)")
    args = ap.parse_args()
    steps = 40 if args.quick else args.steps
    warm = max(steps // 5, 5)
    os.makedirs(args.out, exist_ok=True)
    work = args.logs
    os.makedirs(work, exist_ok=True)
    # The model the plans were compiled from (prepare.sh copies it there).
    model_path = os.path.join(args.plans, "model.json")
    model = json.load(open(model_path))
    has_torch = subprocess.run([args.python, "-c", "import torch; assert torch.cuda.is_available()"],
                               capture_output=True).returncode == 0
    batch = model["training"]["batch_size"]
    plan = os.path.join(args.plans, "dlrm.plan")
    results, failures = {"batch": batch, "steps": steps}, []

    skip = {p for p in args.skip.split(",") if p}

    def part(name, fn, needs_torch=False, key=None):
        print(f"\n=== {name}", flush=True)
        if key in skip:
            results.setdefault("skipped", []).append(name)
            print(f"skipped: {name}: --skip {key}", flush=True)
            return
        if needs_torch and not has_torch:
            # The rehearsal (no GPU) and machines without PyTorch.
            results.setdefault("skipped", []).append(name)
            print(f"skipped: {name}: no PyTorch with a CUDA device here", flush=True)
            return
        try:
            fn()
        except Exception as e:  # report and go on with the next part
            failures.append(name)
            results.setdefault("errors", {})[name] = str(e)
            print(f"FAILED: {name}: {e}", flush=True)
            traceback.print_exc()
        # What is known so far, in case the stage's time limit ends the rest.
        with open(os.path.join(args.out, "gpu_bench.json"), "w") as f:
            json.dump(results, f, indent=1)

    def embrun(tag, plan_path, n, extra=()):
        log = os.path.join(work, tag + ".jsonl")
        r = run([args.embrun, plan_path, "--device", args.device, "--steps", str(n),
                 "--report-every", str(max(n // 10, 1)), "--log", log, *extra], timeout=540)
        with open(os.path.join(work, tag + ".txt"), "w") as f:
            f.write(r.stdout + r.stderr)
        return records(log), r.stdout + r.stderr

    def torch_run(mode, tables="concat", ids="synthetic"):
        r = run([args.python, os.path.join(HERE, "dlrm_torch.py"), "--model",
                 model_path, "--mode", mode, "--tables", tables, "--ids", ids,
                 "--steps", str(max(steps // 4, 10)), "--warmup", "10" if mode == "eager" else "15"],
                timeout=540)
        return json.loads(r.stdout.strip().splitlines()[-1])

    # --- copy bandwidth first: (b) and (c) are fractions of it -------------
    def copy():
        r = run([args.python, os.path.join(HERE, "dlrm_torch.py"), "--copy"], timeout=120)
        results["copy"] = json.loads(r.stdout.strip().splitlines()[-1])
    part("device-to-device copy (PyTorch)", copy, needs_torch=True)
    copy_gbs = results.get("copy", {}).get("copy_gb_per_s")

    # --- (a) ----------------------------------------------------------------
    def a_embrun():
        recs, _ = embrun("a_embrun", plan, steps)
        results["embrun_samples_per_s"] = embrun_samples_per_s(recs, warm, batch)
        # Where the host's time per step went (the next batch is read and
        # loaded while the kernels run: the wait is what was left over).
        host = [r for r in recs if r.get("event") == "host"]
        if host:
            results["embrun_host_ms_per_step"] = {
                k.replace("_ms_per_step", ""): v for k, v in host[-1].items()
                if k.endswith("_ms_per_step")}
    part("(a) embrun --device cuda", a_embrun)
    def a_busy():
        # The same run with another process keeping half the cores busy: the
        # figure users see on a shared machine (data threads included).
        n = max(1, (os.cpu_count() or 2) // 2)
        hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]
        try:
            recs, _ = embrun("a_busy", plan, steps)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        results["embrun_busy_samples_per_s"] = embrun_samples_per_s(recs, warm, batch)
        results["embrun_busy_threads"] = n
    part("(a) embrun beside a busy process", a_busy, key="busy")

    def a_torch(mode):
        results[f"torch_{mode}"] = torch_run(mode)
    part("(a) PyTorch eager", lambda: a_torch("eager"), needs_torch=True, key="eager")

    def a_uniform():
        results["torch_eager_uniform_ids"] = torch_run("eager", ids="uniform")
    part("(a) PyTorch eager, uniform ids (the easier update)", a_uniform, needs_torch=True,
         key="uniform")

    # --- (b) and (c): profiles ----------------------------------------------
    n_prof = max(steps // 4, 10)

    def b_profile():
        recs, text = embrun("b_profile", plan, n_prof, ["--profile"])
        prof = profile(recs)
        results["profile"] = prof
        for key, names in (("lookup", {"lookup", "fused_lookup"}),
                           ("embedding_backward_update", {"embedding_update"}),
                           ("update_packed", {"update_packed"})):
            rows = op_rows(prof, names)
            if not rows:
                results[key] = {"missing": f"no {'/'.join(sorted(names))} op in the profile"}
                continue
            ms = sum(o["ms_per_step"] for o in rows)
            moved = sum(o["bytes_per_step"] for o in rows)
            gbs = moved / (ms / 1e3) / 1e9 if ms > 0 and moved > 0 else 0.0
            results[key] = {"ms_per_step": ms, "bytes_per_step": moved, "gb_per_s": gbs,
                            "fraction_of_copy": gbs / copy_gbs if copy_gbs and gbs else None}
        results["update_ms_packed"] = prof.get("update_ms")
    part("(b) embrun --profile (lookup, fused backward + update, packed update)", b_profile,
         key="profile")

    def c_nopack():
        recs, _ = embrun("c_nopack", os.path.join(args.plans, "dlrm_nopack.plan"), n_prof,
                         ["--profile"])
        prof = profile(recs)
        results["update_ms_unpacked"] = prof.get("update_ms")
        rows = op_rows(prof, {"update_param"})
        results["update_param_unpacked"] = {
            "ms_per_step": sum(o["ms_per_step"] for o in rows),
            "launches_per_step": sum(o["launches_per_step"] for o in rows)}
        if results.get("update_ms_packed") and results["update_ms_unpacked"]:
            results["update_speedup_packed"] = (results["update_ms_unpacked"] /
                                                results["update_ms_packed"])
    part("(c) embrun --profile on the --no-pack plan", c_nopack, key="nopack")

    def fused_vs_unfused():
        recs, _ = embrun("d_nofuse", os.path.join(args.plans, "dlrm_nofuse.plan"), steps)
        results["embrun_nofuse_samples_per_s"] = embrun_samples_per_s(recs, warm, batch)
    part("embrun on the --no-fuse plan", fused_vs_unfused, key="nofuse")

    def d_padding():
        seq = os.path.join(args.plans, "sequence")
        if not os.path.exists(os.path.join(seq, "gpt_mini.plan")):
            raise RuntimeError(f"no {seq}/gpt_mini.plan: run bench/gpu/prepare.sh again")
        cmd = [sys.executable, os.path.join(HERE, "..", "dynamic_padding.py"),
               "--embrun", args.embrun, "--device", args.device, "--plans", seq,
               "--sentences", seq, "--threads", "0"]
        # The emulated device (the rehearsal) runs prepare.sh's batch-4 plans.
        small = args.quick or args.device == "emulated"
        cmd += (["--models", "gpt_mini", "--batch", "4", "--steps", "10", "--warm", "10",
                 "--repeats", "1"] if small else
                ["--steps", "60", "--warm", "20", "--repeats", "1"])
        r = run(cmd, timeout=900)
        print(r.stdout[-3000:], flush=True)
        results["padding"] = r.stdout[r.stdout.find("\n\n") + 2:].strip()
    part("(d) dynamic padding of the token models", d_padding, key="padding")

    # torch.compile last: its compile time is the least predictable.
    part("(a) PyTorch compile", lambda: a_torch("compile"), needs_torch=True, key="compile")
    ours = results.get("embrun_samples_per_s")
    for mode in ("eager", "compile"):
        theirs = results.get(f"torch_{mode}", {}).get("samples_per_s")
        if ours and theirs:
            results[f"speedup_vs_torch_{mode}"] = ours / theirs

    # --- summary --------------------------------------------------------------
    out_path = os.path.join(args.out, "gpu_bench.json")
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)

    def fmt(v, spec="{:.3g}"):
        return spec.format(v) if isinstance(v, (int, float)) else "n/a"

    lines = ["", "=== GPU benchmark summary (batch %d)" % batch]
    if results.get("copy"):
        lines.append(f"device-to-device copy          {fmt(copy_gbs, '{:.0f}')} GB/s (read + write)")
    lines.append(f"(a) embrun --device cuda        {fmt(ours, '{:,.0f}')} samples/s")
    if results.get("embrun_busy_samples_per_s"):
        lines.append(f"    beside {results['embrun_busy_threads']} busy threads   "
                     f"{fmt(results['embrun_busy_samples_per_s'], '{:,.0f}')} samples/s")
    if results.get("embrun_host_ms_per_step"):
        lines.append("    host ms/step: " + ", ".join(
            f"{k} {v:.2f}" for k, v in sorted(results["embrun_host_ms_per_step"].items())))
    prof = results.get("profile") or {}
    if prof.get("step_ms") and ours:
        lines.append(f"    kernels {prof['step_ms']:.2f} ms/step (--profile) of a "
                     f"{batch / ours * 1e3:.2f} ms step")
    for mode in ("eager", "compile"):
        t = results.get(f"torch_{mode}", {})
        lines.append(f"    PyTorch {mode:<8}            {fmt(t.get('samples_per_s'), '{:,.0f}')} "
                     f"samples/s; embc / PyTorch = {fmt(results.get(f'speedup_vs_torch_{mode}'), '{:.2f}')}x")
    if results.get("torch_eager_uniform_ids"):
        lines.append(f"    PyTorch eager, uniform ids   "
                     f"{fmt(results['torch_eager_uniform_ids'].get('samples_per_s'), '{:,.0f}')} "
                     "samples/s (the rows above: embrun's id distribution)")
    if results.get("embrun_nofuse_samples_per_s"):
        lines.append(f"    embrun --no-fuse plan        {fmt(results['embrun_nofuse_samples_per_s'], '{:,.0f}')} samples/s")
    for key, label in (("lookup", "(b) embedding lookup         "),
                       ("embedding_backward_update", "    fused backward + update  "),
                       ("update_packed", "(c) packed optimizer update  ")):
        r = results.get(key, {})
        if "missing" in r:
            lines.append(f"{label}  n/a ({r['missing']})")
        elif r:
            lines.append(f"{label}  {fmt(r.get('gb_per_s'), '{:.0f}')} GB/s = "
                         f"{fmt(r.get('fraction_of_copy'), '{:.2f}')} of the copy, "
                         f"{fmt(r.get('ms_per_step'), '{:.3f}')} ms/step")
    lines.append(f"    update ms/step packed {fmt(results.get('update_ms_packed'), '{:.3f}')} vs "
                 f"--no-pack {fmt(results.get('update_ms_unpacked'), '{:.3f}')} "
                 f"({fmt(results.get('update_speedup_packed'), '{:.2f}')}x)")
    if results.get("padding"):
        lines.append("(d) dynamic padding (samples/s; positions: the mean a batch ran at)")
        lines += ["    " + line for line in results["padding"].splitlines()]
    if failures:
        lines.append("FAILED parts: " + "; ".join(failures) + " (errors in gpu_bench.json)")
    if results.get("skipped"):
        lines.append("skipped parts: " + "; ".join(results["skipped"]))
    lines.append(f"results: {out_path} (logs in {work})")
    text = "\n".join(lines)
    print(text, flush=True)
    with open(os.path.join(args.out, "gpu_bench_summary.txt"), "w") as f:
        f.write(text + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
