#!/usr/bin/env python3
"""examples/hpo/sweep.py end to end: three Optuna trials on mf_movielens
(synthetic data, a few steps each) through embc --set and embrun's summary;
the best trial's printed embc command compiles a plan that records its
overrides. Exits 77 (skipped) without Optuna (pip install optuna).

Usage: hpo_sweep.py --embc PATH --embrun PATH --examples DIR --work DIR
"""
import json
import os
import re
import shlex
import subprocess
import sys

from e2e_common import tool_args


def main():
    a = tool_args(__doc__.splitlines()[0]).parse_args()
    try:
        import optuna  # noqa: F401
    except ImportError:
        print("skipped: no Optuna (pip install optuna)")
        sys.exit(77)
    sweep = os.path.join(a.examples, "hpo", "sweep.py")
    r = subprocess.run([sys.executable, sweep, "--model", os.path.join(a.examples, "mf_movielens.json"),
                        "--metric", "eval_rmse", "--trials", "3", "--steps", "40",
                        "--eval-every", "20", "--threads", "2", "--embc", a.embc,
                        "--embrun", a.embrun, "--work", a.work],
                       capture_output=True, text=True)
    print(r.stdout, r.stderr)
    if r.returncode != 0:
        sys.exit(f"FAIL: sweep.py exited {r.returncode}")
    trials = re.findall(r"^trial \d+: eval_rmse ([0-9.]+)", r.stdout, re.M)
    best = re.search(r"^best: eval_rmse ([0-9.]+)", r.stdout, re.M)
    command = re.search(r"^compile it: (.*)$", r.stdout, re.M)
    if len(trials) != 3 or not best or not command:
        sys.exit("FAIL: expected 3 trials, a best line and a compile command")
    if float(best.group(1)) != min(float(t) for t in trials):
        sys.exit("FAIL: the best is not the lowest eval_rmse of the trials")
    args = shlex.split(command.group(1))
    plan = os.path.join(a.work, "best.plan")
    args[args.index("-o") + 1] = plan
    subprocess.run(args, check=True, capture_output=True)
    body = subprocess.run(args[:args.index("-o")] + args[args.index("-o") + 2:] +
                          ["--emit=plan-json"], check=True, capture_output=True, text=True).stdout
    overrides = json.loads(body)["overrides"]
    if len(overrides) != 3 or not all(o.startswith("/") for o in overrides):
        sys.exit(f"FAIL: the best plan records {overrides}")
    print("PASS: 3 trials, the best's command compiles a plan recording", overrides)


if __name__ == "__main__":
    main()
