#!/usr/bin/env python3
"""-emb-auto fits a model into plan.memory_budget (issue 5):

  mlperf   the MLPerf-shape DLRM into a quarter of its naive fp32 footprint
           (compile only: its tables need ~100 GiB): for the CPU the tables
           go to disk, for a GPU (--target=cuda, no disk tables) they are
           quantised;
  small    the small DLRM into a quarter of its naive footprint, both ways,
           and it still learns: eval AUC within 0.02 of the unconstrained
           plan (disk placement is exact: within 1e-3), with the memory
           embrun needs (the arena but for disk tables' file-backed pages)
           within the budget;
  too_small a budget below every candidate is refused with the smallest budget
           that fits, and that budget then compiles.

The naive footprint is the arena of the plan without any of embc's memory
passes: `embc --no-pack --no-fuse --no-plan-memory` (fp32 tables, one
micro-batch, no remat, no buffer reuse).

Usage: auto_plan.py --embc PATH --embrun PATH --examples DIR --work DIR [case...]
"""
import json
import os
import re
import shutil
import subprocess
import sys

from e2e_common import expect, tool_args


def run(cmd, ok=True):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if ok and r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def plan_json(args, model_path, flags=()):
    r = run([args.embc, model_path, "--emit=plan-json", *flags])
    return json.loads(r.stdout)


def with_budget(args, name, budget):
    model = json.load(open(os.path.join(args.examples, name)))
    model.setdefault("plan", {})["memory_budget"] = int(budget)
    path = os.path.join(args.work, f"{os.path.splitext(name)[0]}_budget_{budget}.json")
    json.dump(model, open(path, "w"), indent=1)
    return path


def naive_footprint(args, name):
    plan = plan_json(args, os.path.join(args.examples, name),
                     ["--no-pack", "--no-fuse", "--no-plan-memory"])
    return plan["arena_bytes"]


def resident_bytes(plan):
    """What the plan needs in memory: the peak -emb-auto's choice note gives
    (the arena but for disk tables' file-backed pages)."""
    for n in plan["notes"]:
        m = re.search(r"chose .*: peak [0-9.]+ [KMG]?i?B \((\d+) bytes", n)
        if m:
            return int(m.group(1))
    sys.exit("FAIL: no -emb-auto choice among the notes:\n" + "\n".join(plan["notes"]))


def fits_quarter(args, name, target):
    naive = naive_footprint(args, name)
    budget = naive // 4
    path = with_budget(args, name, budget)
    plan = plan_json(args, path, [f"--target={target}"])
    for n in plan["notes"]:
        print("   note:", n)
    resident = resident_bytes(plan)
    expect(resident <= budget,
           f"{name} ({target}): auto plan needs {resident / 2**20:.1f} MiB <= budget "
           f"{budget / 2**20:.1f} MiB (naive {naive / 2**20:.1f} MiB)")
    placed = [t["name"] for t in plan["tables"] if t.get("placement") == "disk"]
    quantised = [t["name"] for t in plan["tables"] if t["storage"] != "f32"]
    if target == "cpu":
        expect(placed and not quantised,
               f"{name} (cpu): tables go to disk ({len(placed)}), none is quantised")
    else:
        expect(quantised and not placed,
               f"{name} (cuda): tables are quantised ({len(quantised)}), none on disk")
    return path, plan


def final_auc(args, plan_path, tag, steps):
    log = os.path.join(args.work, f"{tag}.jsonl")
    run([args.embrun, plan_path, "--steps", str(steps), "--report-every", str(steps),
         "--threads", "2", "--log", log])
    summary = [r for r in map(json.loads, open(log)) if r.get("event") == "summary"]
    expect(len(summary) == 1, f"{tag}: one summary record")
    return summary[0]["eval_auc"], summary[0]


def case_mlperf(args):
    for target in ("cpu", "cuda"):
        fits_quarter(args, "dlrm_mlperf.json", target)


def case_small(args):
    base_plan = os.path.join(args.work, "small_base.plan")
    run([args.embc, os.path.join(args.examples, "dlrm_small.json"), "-o", base_plan])
    steps = args.steps
    base_auc, _ = final_auc(args, base_plan, "small_base", steps)
    for target, tolerance in (("cpu", 1e-3), ("cuda", 0.02)):
        path, plan = fits_quarter(args, "dlrm_small.json", target)
        auto_plan = os.path.join(args.work, f"small_auto_{target}.plan")
        run([args.embc, path, f"--target={target}", "-o", auto_plan])
        auto_auc, summary = final_auc(args, auto_plan, f"small_auto_{target}", steps)
        expect(auto_auc >= 0.75,
               f"auto-planned small DLRM ({target}) learns: eval AUC {auto_auc:.4f} >= 0.75")
        expect(abs(auto_auc - base_auc) <= tolerance,
               f"eval AUC {auto_auc:.4f} within {tolerance} of the unconstrained plan's "
               f"{base_auc:.4f}")
        arena = summary.get("arena_bytes")
        expect(arena is not None and arena == plan["arena_bytes"],
               f"embrun allocates the planned arena ({arena} == {plan['arena_bytes']} bytes)")


def case_too_small(args):
    path = with_budget(args, "dlrm_small.json", 1 << 20)
    r = run([args.embc, path, "-o", os.path.join(args.work, "never.plan")], ok=False)
    match = re.search(r"smallest plan found needs [0-9.]+ [KMG]iB \((\d+) bytes\)", r.stderr)
    expect(r.returncode == 1 and match is not None,
           f"a 1 MiB budget is refused with the smallest budget that fits: {r.stderr.strip()}")
    smallest = int(match.group(1))
    plan = plan_json(args, with_budget(args, "dlrm_small.json", smallest))
    expect(resident_bytes(plan) <= smallest,
           f"the budget the error names ({smallest} bytes) compiles and fits")


CASES = {"mlperf": case_mlperf, "small": case_small, "too_small": case_too_small}


def main():
    p = tool_args()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("cases", nargs="*", default=list(CASES))
    args = p.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    for c in args.cases:
        CASES[c](args)


if __name__ == "__main__":
    main()
