"""Tables placed on disk train exactly as in memory (issue 24's first slice).

Each model is compiled twice, with every table's `placement` `device` (the
default) and `disk` (embc --set /embeddings/I/placement=disk), trained the
same steps with --save, and the two checkpoints must be byte-identical:
the disk placement only moves the tables' pages (rows and optimizer state)
to scratch files read and written through the page cache. The disk run's
tables must really be on disk (embrun's "tables on disk" line), and a
resumed disk run must equal the uninterrupted one.
"""
import json
import os
import sys

from e2e_common import expect, run, tool_args

MODELS = ["dlrm_small.json", "wide_deep.json", "mf_movielens.json", "two_tower.json"]


def main():
    p = tool_args(__doc__)
    p.add_argument("--steps", type=int, default=8)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tables_dir = os.path.join(args.work, "tables")
    os.makedirs(tables_dir, exist_ok=True)
    for name in MODELS:
        model = os.path.join(args.examples, name)
        tables = len(json.load(open(model))["embeddings"])
        sets = []
        for i in range(tables):
            sets += ["--set", f"/embeddings/{i}/placement=disk"]
        checkpoints = {}
        for placement, extra in [("device", []), ("disk", sets)]:
            plan = os.path.join(args.work, f"{name}.{placement}.plan")
            run([args.embc, model, "-o", plan] + extra)
            save = os.path.join(args.work, f"{name}.{placement}")
            r = run([args.embrun, plan, "--steps", str(args.steps), "--threads", "2",
                     "--table-dir", tables_dir, "--save", save])
            if placement == "disk":
                expect("embrun: tables on disk:" in r.stderr,
                       f"{name}: its {tables} tables are placed on disk")
                half = save + ".half"
                common = ["--threads", "2", "--table-dir", tables_dir, "--save", half]
                run([args.embrun, plan, "--steps", str(args.steps // 2)] + common)
                run([args.embrun, plan, "--steps", str(args.steps - args.steps // 2),
                     "--resume", half] + common)
                checkpoints["resumed"] = open(os.path.join(half, "checkpoint.safetensors"),
                                              "rb").read()
            checkpoints[placement] = open(os.path.join(save, "checkpoint.safetensors"),
                                          "rb").read()
        expect(checkpoints["device"] == checkpoints["disk"],
               f"{name}: {args.steps} steps with the tables on disk == in memory "
               "(byte-identical checkpoints)")
        expect(checkpoints["resumed"] == checkpoints["disk"],
               f"{name}: on disk, {args.steps // 2} steps + resume == {args.steps} steps")
    expect(not os.listdir(tables_dir), "no scratch table file is left behind")


if __name__ == "__main__":
    main()
