"""A run killed (SIGKILL) while it writes a checkpoint resumes exactly.

mf_movielens with its user table placed on disk and made large (--rows, a
~65 MB checkpoint) so that each save takes a while, trains with
--save-every. Each round waits for a random number (1 or 2) of complete
saves, then for the next save to be under way (the atomic writer's
checkpoint.safetensors.tmp exists), and kills embrun with SIGKILL. The
directory must then hold a complete checkpoint of a later step than the
round started from; the next round resumes from it, the killed save's temp
file still beside it. A last run resumes and trains to the end: its final
checkpoint must be byte-identical to one uninterrupted run's (resuming is
bit-exact on the CPU), and no scratch table file may be left behind.
--seed repeats the kill times a failure printed.
"""
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time

from e2e_common import expect, run, tool_args

CHECKPOINT = "checkpoint.safetensors"


def saved_step(directory):
    """The `step` of directory's complete checkpoint, or None if it has none."""
    path = os.path.join(directory, CHECKPOINT)
    try:
        with open(path, "rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            return int(json.loads(f.read(length))["__metadata__"]["step"])
    except FileNotFoundError:
        return None


def kill_during_a_save(cmd, directory, saves, deadline, log):
    """Starts `cmd` (its output to `log`) and SIGKILLs it once `saves` more
    checkpoints are complete and the next one is being written; returns the
    step of the last complete save, or exits with a FAIL if the run was not
    caught in a save."""
    first = saved_step(directory)
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    tmp = os.path.join(directory, CHECKPOINT + ".tmp")
    seen = set()
    while proc.poll() is None and time.monotonic() < deadline:
        step = saved_step(directory)
        if step is not None and step != first:
            seen.add(step)
        if len(seen) >= saves and os.path.exists(tmp):
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return saved_step(directory)
        time.sleep(0.001)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    sys.exit(f"FAIL: {' '.join(cmd)} was not caught in a save (exit {proc.returncode}):\n"
             + open(log).read()[-2000:])


def main():
    p = tool_args(__doc__)
    p.add_argument("--steps", type=int, default=45)
    p.add_argument("--save-every", type=int, default=3)
    p.add_argument("--rows", type=int, default=250000, help="rows of the disk-placed user table")
    p.add_argument("--rounds", type=int, default=3, help="runs killed before the last one")
    p.add_argument("--seed", type=int, default=None, help="of the kill times (default: random)")
    args = p.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"kill times: --seed {seed}", flush=True)
    rng = random.Random(seed)
    os.makedirs(args.work, exist_ok=True)
    tables = os.path.join(args.work, "tables")
    os.makedirs(tables, exist_ok=True)

    plan = os.path.join(args.work, "mf.plan")
    run([args.embc, os.path.join(args.examples, "mf_movielens.json"), "-o", plan,
         "--set", "/embeddings/0/placement=disk",
         "--set", f"/embeddings/0/rows={args.rows}", "--set", f"/features/0/vocab={args.rows}",
         "--set", f"/features/2/vocab={args.rows}", "--set", f"/embeddings/2/rows={args.rows}"])
    common = ["--threads", "2", "--table-dir", tables]

    reference = os.path.join(args.work, "uninterrupted")
    r = run([args.embrun, plan, "--steps", str(args.steps), "--save", reference] + common)
    expect("embrun: tables on disk:" in r.stderr, "the user table is placed on disk")

    killed = os.path.join(args.work, "killed")
    shutil.rmtree(killed, ignore_errors=True)
    deadline = time.monotonic() + 60
    step = 0
    mid_save = 0
    for i in range(args.rounds):
        resume = ["--resume", killed] if step else []
        saves = rng.randint(1, 2)
        cmd = ([args.embrun, plan, "--steps", str(args.steps - step), "--save", killed,
                "--save-every", str(args.save_every)] + resume + common)
        before = step
        step = kill_during_a_save(cmd, killed, saves, deadline,
                                  os.path.join(args.work, f"round{i + 1}.log"))
        expect(step is not None and before < step < args.steps and step % args.save_every == 0,
               f"round {i + 1}: killed during the save after step {step} "
               f"(resumed from step {before}); the checkpoint of step {step} is complete")
        # Almost always: the rename can win the race with the signal.
        mid_save += os.path.exists(os.path.join(killed, CHECKPOINT + ".tmp"))
    expect(mid_save > 0, f"{mid_save} of {args.rounds} killed saves left their temp file")
    # The last complete checkpoint loads: the run resumes from it (its stale
    # temp file beside it) and finishes.
    r = run([args.embrun, plan, "--steps", str(args.steps - step), "--save", killed,
             "--resume", killed] + common)
    expect(f"summary: step {args.steps}" in r.stdout,
           f"resumed from step {step}, the run ends at step {args.steps}")
    expect(not os.path.exists(os.path.join(killed, CHECKPOINT + ".tmp")),
           "the finished run's saves replaced the stale temp file")
    final = open(os.path.join(killed, CHECKPOINT), "rb").read()
    expect(final == open(os.path.join(reference, CHECKPOINT), "rb").read(),
           f"after {args.rounds} kills during saves, the final checkpoint is byte-identical "
           f"to the uninterrupted run's ({len(final) >> 20} MiB)")
    expect(not os.listdir(tables), "no scratch table file is left behind, even by SIGKILL")


if __name__ == "__main__":
    main()
