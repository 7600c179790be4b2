#!/usr/bin/env python3
"""Distributed training under mpirun on the CPU (issue 7).

Equivalence: a data-parallel run on N ranks trains on the same global batches
as a single process and must match it within 1e-6 relative: the loss of every
step, the final evaluation loss, and every tensor of the final checkpoint.

  dlrm_small (batch 48)   2 and 3 ranks; 2 ranks with grad_accumulation 2;
                          2 ranks unfused and unpacked (--no-fuse --no-pack)
  mf_movielens (32)       2 ranks
  two_tower (32)          2 ranks

Resharding: 2 steps on 2 ranks saved, resumed on 3 ranks for 2 more, equal
to 4 uninterrupted single-process steps.

Failures (EMBC_COMM_TIMEOUT=10): one rank killed (SIGKILL) mid-training, and
one rank frozen (SIGSTOP, a hang): the job must end with a non-zero exit and
a clear message within the timeout plus a margin, never hang.

Exits 77 (skipped) when mpirun is absent or embrun was built without MPI.

Usage: distributed.py --embc PATH --embrun PATH --examples DIR --work DIR [--mpirun PATH]
"""
import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time

from e2e_common import floats, read_safetensors, run

TOLERANCE = 1e-6
STEPS = 4
TIMEOUT = 10  # EMBC_COMM_TIMEOUT for the failure cases, seconds

CASES = [
    ("dlrm_small.json", 48, 2, {}, []),
    ("dlrm_small.json", 48, 3, {}, []),
    ("dlrm_small.json", 48, 2, {"grad_accumulation": 2}, []),
    ("dlrm_small.json", 48, 2, {}, ["--no-fuse", "--no-pack"]),
    ("mf_movielens.json", 32, 2, {}, []),
    ("two_tower.json", 32, 2, {}, []),
]


def mpirun_cmd(args, ranks):
    return [args.mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
            "-np", str(ranks)]


def compile_plan(args, work, model, batch, ranks, training, flags):
    spec = json.load(open(os.path.join(args.examples, model)))
    spec["training"]["batch_size"] = batch
    spec["training"].update(training)
    spec.setdefault("plan", {})["data_parallel"] = ranks
    path = os.path.join(work, f"model-dp{ranks}.json")
    json.dump(spec, open(path, "w"))
    plan = os.path.join(work, f"model-dp{ranks}.plan")
    run([args.embc, path, "-o", plan] + flags)
    return plan


def train(args, work, plan, ranks, name, extra):
    """Trains; returns (losses + [final eval loss], checkpoint tensors)."""
    log = os.path.join(work, f"{name}.jsonl")
    ckpt = os.path.join(work, f"{name}-ckpt")
    shutil.rmtree(ckpt, ignore_errors=True)
    if os.path.exists(log):
        os.remove(log)
    cmd = [args.embrun, plan, "--report-every", "1", "--threads", "1", "--log", log,
           "--save", ckpt] + extra
    run((mpirun_cmd(args, ranks) if ranks > 1 else []) + cmd)
    records = [json.loads(line) for line in open(log)]
    losses = [r["loss"] for r in records if r.get("event") == "train"]
    evals = [r["eval_loss"] for r in records if r.get("event") == "eval"]
    tensors = read_safetensors(os.path.join(ckpt, "checkpoint.safetensors"))
    return losses + evals[-1:], {t: floats(raw, dtype) for t, (dtype, _, raw) in tensors.items()}


def relative_norm(a, b):
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    return diff / max(math.sqrt(sum(y * y for y in b)), 1e-30)


def compare(label, loss, ckpt, base_loss, base):
    """Prints PASS/FAIL; returns whether within TOLERANCE."""
    if len(loss) != len(base_loss):
        print(f"FAIL: {label}: {len(loss)} loss records, expected {len(base_loss)}")
        return False
    worst_loss = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(loss, base_loss))
    worst, worst_name = 0.0, ""
    for tensor, values in base.items():
        if tensor not in ckpt or len(ckpt[tensor]) != len(values):
            print(f"FAIL: {label}: checkpoint tensor '{tensor}' missing or resized")
            return False
        rel = relative_norm(ckpt[tensor], values)
        if rel > worst:
            worst, worst_name = rel, tensor
    good = worst_loss <= TOLERANCE and worst <= TOLERANCE
    print(f"{'PASS' if good else 'FAIL'}: {label}: loss max rel {worst_loss:.1e}, "
          f"tensors max rel {worst:.1e} ({worst_name})", flush=True)
    return good


def equivalence(args):
    ok = True
    for model, batch, ranks, training, flags in CASES:
        name = f"{os.path.splitext(model)[0]}-dp{ranks}" + "".join(
            f"-{k}{v}" for k, v in training.items()) + "".join(flags)
        work = os.path.join(args.work, name)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        single = compile_plan(args, work, model, batch, 1, training, flags)
        spread = compile_plan(args, work, model, batch, ranks, training, flags)
        base_loss, base = train(args, work, single, 1, "single", ["--steps", str(STEPS)])
        loss, ckpt = train(args, work, spread, ranks, "ranks", ["--steps", str(STEPS)])
        ok &= compare(f"{model} batch {batch} on {ranks} ranks {training or ''}{flags or ''}",
                      loss, ckpt, base_loss, base)
    return ok


def resharding(args):
    work = os.path.join(args.work, "reshard")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    one = compile_plan(args, work, "dlrm_small.json", 48, 1, {}, [])
    two = compile_plan(args, work, "dlrm_small.json", 48, 2, {}, [])
    three = compile_plan(args, work, "dlrm_small.json", 48, 3, {}, [])
    base_loss, base = train(args, work, one, 1, "single", ["--steps", str(STEPS)])
    first, _ = train(args, work, two, 2, "first", ["--steps", str(STEPS // 2)])
    loss, ckpt = train(args, work, three, 3, "second",
                       ["--steps", str(STEPS - STEPS // 2), "--resume",
                        os.path.join(work, "first-ckpt")])
    # first: its steps and an eval; second: the remaining steps and an eval.
    losses = first[:-1] + loss
    return compare("dlrm_small saved on 2 ranks, resumed on 3", losses, ckpt, base_loss, base)


def rank_pid(mpirun_pid, rank):
    """The pid of embrun rank `rank` started by mpirun `mpirun_pid`, or None."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if parent == mpirun_pid and f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return int(entry)
    return None


def failure(args, how):
    """Starts a long run on 2 ranks, breaks rank 1 once training runs, and
    checks that the job ends with an error within the timeout."""
    work = os.path.join(args.work, f"failure-{how}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plan = compile_plan(args, work, "dlrm_small.json", 48, 2, {}, [])
    log = os.path.join(work, "log.jsonl")
    env = dict(os.environ, EMBC_COMM_TIMEOUT=str(TIMEOUT))
    job = subprocess.Popen(mpirun_cmd(args, 2) + [args.embrun, plan, "--steps", "1000000",
                                                  "--report-every", "1", "--threads", "1",
                                                  "--log", log],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env=env)
    deadline = time.time() + 60
    while time.time() < deadline and job.poll() is None:
        if os.path.exists(log) and sum(1 for _ in open(log)) >= 3:
            break
        time.sleep(0.2)
    victim = rank_pid(job.pid, 1)
    if job.poll() is not None or victim is None:
        job.kill()
        print(f"FAIL: {how}: the job did not start training ({job.poll()}, rank 1 {victim})")
        return False
    os.kill(victim, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
    broken = time.time()
    try:
        _, err = job.communicate(timeout=TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        job.kill()
        os.kill(victim, signal.SIGKILL)
        print(f"FAIL: {how}: the job still ran {TIMEOUT + 30} s after rank 1 was broken")
        return False
    took = time.time() - broken
    expected = "waited" if how == "hang" else ""
    good = job.returncode != 0 and took <= TIMEOUT + 15 and expected in err
    print(f"{'PASS' if good else 'FAIL'}: rank 1 {'killed' if how == 'kill' else 'frozen'}: "
          f"the job ended with exit {job.returncode} after {took:.1f} s", flush=True)
    if not good:
        print(err[-2000:])
    return good


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--embc", required=True)
    p.add_argument("--embrun", required=True)
    p.add_argument("--examples", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--mpirun", default=shutil.which("mpirun") or "")
    args = p.parse_args()
    if not args.mpirun:
        print("SKIP: no mpirun")
        sys.exit(77)
    probe = subprocess.run(mpirun_cmd(args, 1) + [args.embrun, "--help"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP: mpirun cannot start embrun: {probe.stderr.strip()[-500:]}")
        sys.exit(77)
    ok = equivalence(args)
    ok &= resharding(args)
    for how in ("kill", "hang"):
        ok &= failure(args, how)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
