"""tools/scripts/parquet_to_npy.py: a Parquet file converted to .npy columns
trains exactly as the same values written as CSV (skipped without pyarrow,
numpy and xxhash).

The Parquet file has an integer, a float with nulls, a string with nulls, a
list of integers and a label; the CSV has the same values (the string read
with "encoding": "hash", the list as "3|5|8"). The same model with either
schema, trained 40 steps in file order, writes byte-identical checkpoints.
"""
import json
import os
import random
import subprocess
import sys

from e2e_common import expect, run, tool_args

SKIP = 77


def model(data):
    return {
        "format": "embc.model/v1", "name": "converted", "data": data,
        "features": [
            {"name": "clicked", "type": "label"},
            {"name": "price", "type": "dense", "dim": 1},
            {"name": "item", "type": "sparse", "table": "t_item", "vocab": 50},
            {"name": "city", "type": "sparse", "table": "t_city", "vocab": 1000, "hash": True},
            {"name": "tags", "type": "sparse", "table": "t_tags", "vocab": 30, "hotness": 4}],
        "embeddings": [{"name": "t_item", "rows": 50, "dim": 4},
                       {"name": "t_city", "rows": 32, "dim": 4},
                       {"name": "t_tags", "rows": 30, "dim": 4}],
        "layers": [{"name": "x", "type": "concat", "inputs": ["price", "item", "city", "tags"]},
                   {"name": "logit", "type": "mlp", "input": "x", "sizes": [8, 1],
                    "final_activation": "none"}],
        "loss": {"type": "bce_with_logits", "input": "logit", "label": "clicked"},
        "optimizer": {"dense": {"type": "adam", "lr": 0.01},
                      "embedding": {"type": "adagrad", "lr": 0.05}},
        "training": {"batch_size": 32, "seed": 3},
    }


def main():
    p = tool_args(__doc__)
    args = p.parse_args()
    try:
        import numpy  # noqa: F401
        import pyarrow
        import pyarrow.parquet as pq
        import xxhash  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {e}")
        sys.exit(SKIP)
    os.makedirs(args.work, exist_ok=True)
    rng = random.Random(9)
    n = 1000
    clicked = [rng.randint(0, 1) for _ in range(n)]
    item = [rng.randint(0, 49) for _ in range(n)]
    price = [None if rng.random() < 0.1 else round(rng.uniform(0, 9), 3) for _ in range(n)]
    city = [None if rng.random() < 0.1 else rng.choice(["Oslo", "Lima", "Kyiv, UA"])
            for _ in range(n)]
    tags = [[rng.randint(0, 29) for _ in range(rng.randint(0, 4))] for _ in range(n)]
    table = pyarrow.table({"clicked": clicked, "item": item, "price": price, "city": city,
                           "tags": tags})
    parquet = os.path.join(args.work, "clicks.parquet")
    pq.write_table(table, parquet, row_group_size=300)
    out = os.path.join(args.work, "npy")
    script = os.path.join(args.examples, "..", "tools", "scripts", "parquet_to_npy.py")
    r = run([sys.executable, script, parquet, out, "--label", "clicked", "--missing", "0"])
    npy_schema = json.loads(r.stdout)
    csv = os.path.join(args.work, "clicks.csv")
    with open(csv, "w") as f:
        for i in range(n):
            f.write(f"{clicked[i]},{item[i]},{'' if price[i] is None else price[i]},"
                    f"\"{city[i] or ''}\",{'|'.join(map(str, tags[i]))}\n")
    csv_schema = {"format": "csv", "columns": [
        {"name": "clicked", "type": "label", "field": 0},
        {"name": "item", "type": "categorical", "field": 1},
        {"name": "price", "type": "dense", "field": 2},
        {"name": "city", "type": "categorical", "field": 3, "encoding": "hash"},
        {"name": "tags", "type": "categorical", "field": 4, "separator": "|"}]}
    checkpoints = []
    for name, schema, data in [("npy", npy_schema, out), ("csv", csv_schema, csv)]:
        path = os.path.join(args.work, f"{name}.json")
        json.dump(model(schema), open(path, "w"))
        plan = os.path.join(args.work, f"{name}.plan")
        run([args.embc, path, "-o", plan])
        save = os.path.join(args.work, f"{name}.ckpt")
        run([args.embrun, plan, "--data", data, "--steps", "40", "--shuffle", "none",
             "--threads", "2", "--save", save])
        checkpoints.append(open(os.path.join(save, "checkpoint.safetensors"), "rb").read())
    expect(checkpoints[0] == checkpoints[1],
           "Parquet -> .npy trains as the same values in CSV (byte-identical checkpoints)")


if __name__ == "__main__":
    main()
