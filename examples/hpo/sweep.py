#!/usr/bin/env python3
"""A hyper-parameter search over an embc model with Optuna.

Each trial compiles the model with `embc --set` overrides (the learning
rates and the batch size Optuna proposes; the plan records them) and trains
it with `embrun --log`, evaluating every --eval-every steps with
`--patience` early stopping; the trial's value is the best evaluation of the
metric the run logged (the summary record's best_<metric>). Nothing in the
model file changes.

  python3 examples/hpo/sweep.py --model examples/dlrm_small.json --trials 20
  python3 examples/hpo/sweep.py --model examples/mf_movielens.json \\
      --metric eval_rmse --data movielens:u1.base --eval movielens:u1.test

It prints each trial, then the best parameters and the embc command that
compiles them. Needs `pip install optuna` (docs/training.md, "A tuner").

Usage: sweep.py [--model M.json] [--trials N] [--steps S] [--eval-every E]
                [--patience P] [--metric eval_auc|eval_loss|eval_rmse|...]
                [--data SRC --eval SRC] [--embc PATH] [--embrun PATH]
                [--work DIR] [--seed N] [--threads T]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HIGHER_IS_BETTER = ("auc", "accuracy", "recall", "precision", "ndcg", "hit")


def search_space(trial, model):
    """The overrides of one trial: JSON pointer -> value. Only what the model
    has: a learning rate per optimizer, and the batch size."""
    overrides = {}
    optimizer = model.get("optimizer", {})
    if "dense" in optimizer:
        overrides["/optimizer/dense/lr"] = trial.suggest_float("dense_lr", 1e-3, 0.3, log=True)
    if "embedding" in optimizer:
        overrides["/optimizer/embedding/lr"] = trial.suggest_float("embedding_lr", 1e-3, 3.0,
                                                                   log=True)
    batch = model["training"]["batch_size"]
    overrides["/training/batch_size"] = trial.suggest_categorical(
        "batch_size", sorted({max(1, batch // 2), batch, batch * 2}))
    return overrides


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}")
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=os.path.join(ROOT, "examples", "dlrm_small.json"))
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--metric", default="eval_auc")
    p.add_argument("--data", default="synthetic")
    p.add_argument("--eval", default="synthetic")
    p.add_argument("--embc", default=os.path.join(ROOT, "build", "bin", "embc"))
    p.add_argument("--embrun", default=os.path.join(ROOT, "build", "bin", "embrun"))
    p.add_argument("--work", default="")
    p.add_argument("--seed", type=int, default=0, help="the sampler's seed")
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()
    try:
        import optuna
    except ImportError:
        sys.exit("sweep.py needs Optuna: pip install optuna")
    model = json.load(open(a.model))
    work = a.work or tempfile.mkdtemp(prefix="embc-sweep-")
    os.makedirs(work, exist_ok=True)
    higher = any(word in a.metric for word in HIGHER_IS_BETTER)

    def objective(trial):
        overrides = search_space(trial, model)
        sets = [arg for pointer, value in overrides.items()
                for arg in ("--set", f"{pointer}={json.dumps(value)}")]
        plan = os.path.join(work, f"trial{trial.number}.plan")
        log = os.path.join(work, f"trial{trial.number}.jsonl")
        run([a.embc, a.model, "-o", plan] + sets)
        run([a.embrun, plan, "--steps", str(a.steps), "--data", a.data, "--eval", a.eval,
             "--eval-every", str(a.eval_every), "--patience", str(a.patience),
             "--monitor", a.metric, "--threads", str(a.threads), "--log", log])
        records = [json.loads(line) for line in open(log) if line.strip()]
        for r in records:
            if r["event"] == "eval" and r.get(a.metric) is not None:
                trial.report(r[a.metric], r["step"])
        summary = next(r for r in records if r["event"] == "summary")
        value = summary.get("best_" + a.metric)
        if value is None:
            raise RuntimeError(f"trial {trial.number}: the run logged no {a.metric} "
                               f"(its evaluations have {sorted(k for k in summary if k.startswith('eval_'))})")
        trial.set_user_attr("embc_sets", sets)
        trial.set_user_attr("best_step", summary.get("best_step"))
        return value

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize" if higher else "minimize",
                                sampler=optuna.samplers.TPESampler(seed=a.seed))
    study.optimize(objective, n_trials=a.trials,
                   callbacks=[lambda s, t: print(
                       f"trial {t.number}: {a.metric} {t.value:.5g} at step "
                       f"{t.user_attrs.get('best_step'):.0f} with {t.params}", flush=True)])
    best = study.best_trial
    print(f"\nbest: {a.metric} {best.value:.5g} (trial {best.number}) with {best.params}")
    print("compile it: " + shlex.join([a.embc, a.model, "-o", "best.plan"] +
                                      best.user_attrs["embc_sets"]))
    print(f"plans and logs: {work}")


if __name__ == "__main__":
    main()
