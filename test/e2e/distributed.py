#!/usr/bin/env python3
"""Distributed training under mpirun on the CPU (issue 7).

Equivalence: a data-parallel run on N ranks trains on the same global batches
as a single process and must match it: the loss of every step and the final
evaluation loss within 1e-6 relative, every tensor of the final checkpoint
within 1e-5 in relative norm (TENSOR_TOLERANCE says why the two differ).

  dlrm_small (batch 48)   2 and 3 ranks; 2 ranks with grad_accumulation 2;
                          2 ranks unfused and unpacked (--no-fuse --no-pack)
  mf_movielens (32)       2 ranks
  two_tower (32)          2 ranks
  gpt_mini, bert_mini_mlm 2 ranks (batch 8): the next- and masked-token
                          losses and masks split over ranks

Sharded tables against the same single process with whole tables:

  dlrm_small              2 and 3 ranks, tables alternately table_wise and
                          row_wise; 2 ranks with 2 micro-batches
  two_tower (mean bags)   2 ranks row_wise, 3 ranks table_wise
  mf_movielens            2 ranks with grad_accumulation 2, row_wise
  dlrm_small              2 ranks, sharding chosen by -emb-auto to fit a
                          12 MiB budget (the replicated plan needs 17.5 MiB)

Pipeline stages on ranks (pipeline_ranks) against the same pipeline on one
process (the gradients of parameters a rank does not read are zero there, so
the sums are exact):

  dlrm_small (batch 48)   2 stages on 2 ranks, 2 micro-batches, gpipe;
                          4 micro-batches, 1f1b; 4 stages on 2 ranks;
                          2 stages with grad_clip_norm (tables replicated)
  two_tower (32)          3 stages on 3 ranks
  mf_movielens (32)       2 stages on 2 ranks with grad_accumulation 2

The CUDA backend's collectives (compiled with --cuda, run with --device
emulated: the generated kernels on the CPU, the collectives over MPI on
their memory), against one emulated process:

  dlrm_small (batch 48)   2 ranks; 3 ranks mixed sharding; 2 ranks with
                          2 micro-batches and table_wise sharding
  two_tower (32)          2 ranks row_wise (mean bags: weights travel)
  mf_movielens (32)       2 ranks with grad_accumulation 2
  dlrm_small (batch 48)   2 pipeline stages on 2 ranks, 1F1B
  two_tower (32)          3 pipeline stages on 3 ranks

Resharding: 2 steps on 2 ranks saved, resumed on 3 ranks for 2 more, equal
to 4 uninterrupted single-process steps; the same saved from 2 ranks with
sharded tables and resumed on 3 ranks with another sharding, and saved on 3
sharded ranks and resumed in one process.

Failures (EMBC_COMM_TIMEOUT=10): one rank killed (SIGKILL) mid-training, and
one rank frozen (SIGSTOP, a hang): the job must end with a non-zero exit and
a clear message within the timeout plus a margin, never hang.

Exits 77 (skipped) when mpirun is absent or embrun was built without MPI.

Usage: distributed.py --embc PATH --embrun PATH --examples DIR --work DIR [--mpirun PATH]
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from e2e_common import floats, read_safetensors, relative_norm, report, run, tool_args

TOLERANCE = 1e-6
# Tensors get a looser bound than losses. The dense gradients of N ranks are
# sums of N partial GEMMs, so they round differently from one process's, and
# Adam's first steps move each weight by about lr * g / |g| whatever |g| is:
# a gradient component that nearly cancels keeps its rounding error at full
# size in the weight. two_tower's user_tower_b0 on 3 ranks shows it: 7e-7 with
# OpenBLAS GEMMs, 2.3e-6 with libxsmm's (the same arithmetic in another
# order). A real fault (a dropped contribution, a wrong shard) is 1e-3 or more.
TENSOR_TOLERANCE = 1e-5
STEPS = 4
TIMEOUT = 10  # EMBC_COMM_TIMEOUT for the failure cases, seconds

# (model, global batch, ranks, training overrides, embc flags, sharding of
# the distributed run: None, "table_wise", "row_wise" or "mixed", plan
# overrides)
CASES = [
    ("dlrm_small.json", 48, 2, {}, [], None, {}),
    ("dlrm_small.json", 48, 3, {}, [], None, {}),
    ("dlrm_small.json", 48, 2, {"grad_accumulation": 2}, [], None, {}),
    ("dlrm_small.json", 48, 2, {}, ["--no-fuse", "--no-pack"], None, {}),
    ("mf_movielens.json", 32, 2, {}, [], None, {}),
    ("two_tower.json", 32, 2, {}, [], None, {}),
    ("dlrm_small.json", 48, 2, {}, [], "mixed", {}),
    ("dlrm_small.json", 48, 3, {}, [], "mixed", {}),
    ("dlrm_small.json", 48, 2, {}, [], "mixed", {"micro_batches": 2}),
    ("two_tower.json", 32, 2, {}, [], "row_wise", {}),
    ("two_tower.json", 48, 3, {}, [], "table_wise", {}),
    ("mf_movielens.json", 32, 2, {"grad_accumulation": 2}, [], "row_wise", {}),
    ("dlrm_small.json", 48, 2, {}, [], "auto:12MiB", {}),
    # Token losses: each sequence's mean, masks keyed by the global position.
    ("gpt_mini.json", 8, 2, {}, [], None, {}),
    ("bert_mini_mlm.json", 8, 2, {}, [], None, {}),
]

# As CASES, on the CUDA backend's emulated device (both runs).
DEVICE_CASES = [
    ("dlrm_small.json", 48, 2, {}, [], None, {}),
    ("dlrm_small.json", 48, 3, {}, [], "mixed", {}),
    ("dlrm_small.json", 48, 2, {}, [], "table_wise", {"micro_batches": 2}),
    ("two_tower.json", 32, 2, {}, [], "row_wise", {}),
    ("mf_movielens.json", 32, 2, {"grad_accumulation": 2}, [], None, {}),
]

# As PIPELINE_CASES, on the CUDA backend's emulated device (both runs).
DEVICE_PIPELINE_CASES = [
    ("dlrm_small.json", 48, 2, {},
     {"pipeline_stages": 2, "micro_batches": 4, "schedule": "1f1b"}),
    ("two_tower.json", 32, 3, {}, {"pipeline_stages": 3, "micro_batches": 2}),
]

# (model, global batch, pipeline ranks, training overrides, plan overrides of
# both runs): the same pipeline on one process and on the ranks.
PIPELINE_CASES = [
    ("dlrm_small.json", 48, 2, {}, {"pipeline_stages": 2, "micro_batches": 2}),
    ("dlrm_small.json", 48, 2, {},
     {"pipeline_stages": 2, "micro_batches": 4, "schedule": "1f1b"}),
    ("dlrm_small.json", 48, 2, {}, {"pipeline_stages": 4, "micro_batches": 2}),
    ("dlrm_small.json", 48, 2, {"grad_clip_norm": 1.0},
     {"pipeline_stages": 2, "micro_batches": 2}),
    ("two_tower.json", 32, 3, {}, {"pipeline_stages": 3, "micro_batches": 2}),
    ("mf_movielens.json", 32, 2, {"grad_accumulation": 2},
     {"pipeline_stages": 2, "micro_batches": 2}),
]


def mpirun_cmd(args, ranks):
    return [args.mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
            "-np", str(ranks)]


def compile_plan(args, work, model, batch, ranks, training, flags, sharding=None, plan={}):
    spec = json.load(open(os.path.join(args.examples, model)))
    spec["training"]["batch_size"] = batch
    spec["training"].update(training)
    spec.setdefault("plan", {})["data_parallel"] = ranks
    spec["plan"].update(plan)
    if sharding and sharding.startswith("auto:"):
        # -emb-auto chooses: the budget only fits with sharded tables.
        spec["plan"]["memory_budget"] = sharding[len("auto:"):]
        sharding = None
    for i, table in enumerate(spec["embeddings"]):
        if sharding == "mixed":
            table["sharding"] = ("table_wise", "row_wise")[i % 2]
        elif sharding:
            table["sharding"] = sharding
    tag = f"dp{ranks}" + (f"-pr{plan['pipeline_ranks']}" if "pipeline_ranks" in plan else "") + (
        f"-{sharding}" if sharding else "") + (
        "-auto" if "memory_budget" in spec["plan"] else "")
    path = os.path.join(work, f"model-{tag}.json")
    json.dump(spec, open(path, "w"))
    plan = os.path.join(work, f"model-{tag}.plan")
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
    good = worst_loss <= TOLERANCE and worst <= TENSOR_TOLERANCE
    print(f"{'PASS' if good else 'FAIL'}: {label}: loss max rel {worst_loss:.1e}, "
          f"tensors max rel {worst:.1e} ({worst_name})", flush=True)
    return good


def against_one_process(args, name, label, ranks, make_plans, device):
    """Trains the plans make_plans(work) returns (one process's, the ranks')
    for STEPS steps, both on the CUDA backend's `device` when given; prints
    and returns compare()'s verdict."""
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    single, spread = make_plans(work)
    extra = ["--steps", str(STEPS)] + (["--device", device] if device else [])
    base_loss, base = train(args, work, single, 1, "single", extra)
    loss, ckpt = train(args, work, spread, ranks, "ranks", extra)
    return compare(label + (f" on {device}" if device else ""), loss, ckpt, base_loss, base)


def equivalence(args, cases=CASES, device=None):
    """Each case on one process and on its ranks; with `device`, both on the
    CUDA backend's `device` (the plans compiled with --cuda)."""
    ok = True
    for model, batch, ranks, training, flags, sharding, plan in cases:
        if device:
            flags = flags + ["--cuda"]
        name = f"{os.path.splitext(model)[0]}-dp{ranks}" + "".join(
            f"-{k}{v}" for k, v in {**training, **plan}.items()) + "".join(flags) + (
                f"-{sharding}" if sharding else "")
        label = (f"{model} batch {batch} on {ranks} ranks {training or ''}{plan or ''}"
                 f"{flags or ''}{' ' + sharding + ' sharded' if sharding else ''}")
        ok &= against_one_process(
            args, name, label, ranks,
            lambda work: (compile_plan(args, work, model, batch, 1, training, flags, None, plan),
                          compile_plan(args, work, model, batch, ranks, training, flags,
                                       sharding, plan)),
            device)
    return ok


def pipelines(args, cases=PIPELINE_CASES, device=None):
    ok = True
    flags = ["--cuda"] if device else []
    for model, batch, ranks, training, plan in cases:
        name = f"{os.path.splitext(model)[0]}-pr{ranks}" + "".join(
            f"-{k}{v}" for k, v in {**training, **plan}.items()) + (f"-{device}" if device else "")
        label = (f"{model} batch {batch}, {plan['pipeline_stages']} stages on {ranks} "
                 f"ranks {training or ''}{plan}")
        ok &= against_one_process(
            args, name, label, ranks,
            lambda work: (compile_plan(args, work, model, batch, 1, training, flags, None, plan),
                          compile_plan(args, work, model, batch, 1, training, flags, None,
                                       {**plan, "pipeline_ranks": ranks})),
            device)
    return ok


def resharding(args):
    """Saves after half the steps in one layout, resumes in another."""
    work = os.path.join(args.work, "reshard")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    one = compile_plan(args, work, "dlrm_small.json", 48, 1, {}, [])
    base_loss, base = train(args, work, one, 1, "single", ["--steps", str(STEPS)])
    ok = True
    # (ranks, sharding) saved -> (ranks, sharding) resumed
    # A 2-stage pipeline on 2 ranks ("pipeline") runs the same steps as one
    # process without micro-batches, up to rounding.
    stages = {"pipeline_stages": 2, "micro_batches": 2, "pipeline_ranks": 2}
    for before, after in [((2, None), (3, None)), ((2, "mixed"), (3, "row_wise")),
                          ((3, "table_wise"), (1, None)), ((2, "pipeline"), (3, "mixed")),
                          ((1, None), (2, "pipeline"))]:
        plans = [compile_plan(args, work, "dlrm_small.json", 48, 1, {}, [], None, stages)
                 if s == "pipeline" else
                 compile_plan(args, work, "dlrm_small.json", 48, n, {}, [], s)
                 for n, s in (before, after)]
        first, _ = train(args, work, plans[0], before[0], "first", ["--steps", str(STEPS // 2)])
        loss, ckpt = train(args, work, plans[1], after[0], "second",
                           ["--steps", str(STEPS - STEPS // 2), "--resume",
                            os.path.join(work, "first-ckpt")])
        # first: its steps and an eval; second: the remaining steps and an eval.
        losses = first[:-1] + loss
        shape = lambda n, s: f"{n} rank(s)" + (
            " as 2 pipeline stages" if s == "pipeline" else f" {s} sharded" if s else "")
        ok &= compare(f"dlrm_small saved on {shape(*before)}, resumed on {shape(*after)}",
                      losses, ckpt, base_loss, base)
    return ok


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


def own_plan_copies(args):
    """Each rank may read its own copy of the plan (a node-local path): the
    ranks agree on the plan as read, not on its path; a copy that differs is
    still refused."""
    work = os.path.join(args.work, "copies")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plan = compile_plan(args, work, "mf_movielens.json", 64, 2, {}, [])
    for rank in (0, 1):
        shutil.copy(plan, os.path.join(work, f"plan-rank{rank}.plan"))
    per_rank = ["sh", "-c", 'exec "$1" "$2/plan-rank$OMPI_COMM_WORLD_RANK.plan" --steps 2 '
                '--threads 1', "sh", args.embrun, work]
    same = subprocess.run(mpirun_cmd(args, 2) + per_rank, capture_output=True, text=True)
    ok = same.returncode == 0
    report([] if ok else [(same.stdout + same.stderr)[-800:]],
           "copies of one plan at two paths train")
    spec = json.load(open(os.path.join(args.examples, "mf_movielens.json")))
    spec["training"]["batch_size"] = 64
    spec.setdefault("plan", {})["data_parallel"] = 2
    spec["optimizer"]["embedding"]["lr"] *= 2
    other = os.path.join(work, "other.json")
    json.dump(spec, open(other, "w"))
    run([args.embc, other, "-o", os.path.join(work, "plan-rank1.plan")])
    differ = subprocess.run(mpirun_cmd(args, 2) + per_rank, capture_output=True, text=True)
    refused = differ.returncode != 0 and "ranks disagree" in differ.stdout + differ.stderr
    report([] if refused else [(differ.stdout + differ.stderr)[-800:]],
           "a different plan on one rank is refused")
    return ok and refused


def main():
    p = tool_args(__doc__.splitlines()[0])
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
    ok &= equivalence(args, DEVICE_CASES, "emulated")
    ok &= pipelines(args, DEVICE_PIPELINE_CASES, "emulated")
    ok &= pipelines(args)
    ok &= resharding(args)
    ok &= own_plan_copies(args)
    for how in ("kill", "hang"):
        ok &= failure(args, how)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
