#!/usr/bin/env python3
"""Converts a Parquet file (or a directory of them) into one .npy file a
column, which embrun reads through an npy data schema, and prints that
schema.

No packaged C++ Parquet reader is available where embc is built (Debian
ships no Apache Arrow), so Parquet data goes through this converter
(docs/training.md, "Your own data"). It reads row group by row group and
writes each column's .npy as it goes, so memory stays with one row group.

    pip install pyarrow numpy xxhash        # xxhash only for string columns
    python3 tools/scripts/parquet_to_npy.py clicks.parquet clicks_npy --label clicked
    embrun model.plan --data clicks_npy     # with the printed schema as the model's "data"

Columns become:
  integer, boolean      an int64 (or the column's own width) array: categorical ids
  float                 a float32 array: a dense column
  string, binary        int64 ids: xxHash64 of the value's UTF-8 bytes, top bit
                        cleared, as the schema's "encoding": "hash" makes them (read
                        by "hash": true features); null is -1 (an empty bag)
  list of integers      a 2-D int64 array padded with -1 (negative ids are padding):
  or strings            a multi-hot categorical column
  --label NAME          a float32 array read as the label (binary by default,
                        --label-kind real or class)
Nulls in float columns become NaN unless --missing gives a value.
"""
import argparse
import importlib
import json
import os
import sys


def need(module, why):
    try:
        return importlib.import_module(module)
    except ImportError:
        sys.exit(f"parquet_to_npy.py: needs {module} ({why}): pip install {module}")


def npy_header(dtype, shape):
    """The bytes of a version 1.0 .npy header for a C-order array."""
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (dtype.str, shape_text)
    pad = 64 - (10 + len(text) + 1) % 64
    text += " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1")


class ColumnWriter:
    """One column's .npy, written a row group at a time."""

    def __init__(self, path, dtype, rows, width):
        self.dtype, self.width, self.written = dtype, width, 0
        self.file = open(path, "wb")
        self.file.write(npy_header(dtype, (rows, width) if width else (rows,)))

    def write(self, values):
        self.file.write(values.astype(self.dtype, copy=False).tobytes(order="C"))
        self.written += len(values)

    def close(self):
        self.file.close()


def hash_strings(values, np):
    xxhash = need("xxhash", "string columns are hashed as embc's hash encoding hashes them")
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if v is None:
            out[i] = -1
        else:
            b = v if isinstance(v, bytes) else str(v).encode("utf-8")
            out[i] = xxhash.xxh64_intdigest(b, 0) >> 1
    return out


def kind_of(field, pa):
    t = field.type
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        v = t.value_type
        if pa.types.is_integer(v) or pa.types.is_string(v) or pa.types.is_binary(v) \
                or pa.types.is_large_string(v):
            return "multi"
    elif pa.types.is_integer(t) or pa.types.is_boolean(t):
        return "int"
    elif pa.types.is_floating(t):
        return "float"
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t):
        return "string"
    sys.exit(f"parquet_to_npy.py: column '{field.name}' has type {t}, which has no .npy form here")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("parquet", help="a .parquet file or a directory of them (one data set)")
    p.add_argument("out", help="the directory to write one .npy a column into")
    p.add_argument("--label", help="the column that is the label")
    p.add_argument("--label-kind", default="binary", choices=["binary", "real", "class"])
    p.add_argument("--columns", help="comma-separated columns to convert (default: all)")
    p.add_argument("--missing", type=float, help="the value of a null float")
    args = p.parse_args()
    pa = need("pyarrow", "it reads Parquet")
    pq = need("pyarrow.parquet", "it reads Parquet")
    pc = need("pyarrow.compute", "it reads Parquet")
    np = need("numpy", "it writes .npy")

    files = ([os.path.join(args.parquet, f) for f in sorted(os.listdir(args.parquet))
              if f.endswith(".parquet")] if os.path.isdir(args.parquet) else [args.parquet])
    if not files:
        sys.exit(f"parquet_to_npy.py: no .parquet file in {args.parquet}")
    readers = [pq.ParquetFile(f) for f in files]
    schema = readers[0].schema_arrow
    names = args.columns.split(",") if args.columns else schema.names
    for name in names + ([args.label] if args.label else []):
        if name not in schema.names:
            sys.exit(f"parquet_to_npy.py: no column '{name}' (columns: {', '.join(schema.names)})")
    kinds = {n: kind_of(schema.field(n), pa) for n in names}
    rows = sum(r.metadata.num_rows for r in readers)

    # Multi-hot columns need their widest row first: one pass over them.
    widths = {}
    for n in names:
        if kinds[n] == "multi":
            widest = 0
            for r in readers:
                for g in range(r.num_row_groups):
                    lengths = pc.list_value_length(r.read_row_group(g, [n]).column(0))
                    widest = max(widest, pc.max(lengths).as_py() or 0)
            widths[n] = max(widest, 1)

    os.makedirs(args.out, exist_ok=True)
    writers, columns = {}, []
    for n in names:
        label = n == args.label
        dtype = np.dtype("<f4") if label or kinds[n] == "float" else np.dtype("<i8")
        writers[n] = ColumnWriter(os.path.join(args.out, n + ".npy"), dtype, rows,
                                  widths.get(n, 0))
        if label:
            columns.append({"name": n, "type": "label", "file": n + ".npy",
                            "kind": args.label_kind})
        elif kinds[n] == "float":
            columns.append({"name": n, "type": "dense", "file": n + ".npy"})
        else:
            columns.append({"name": n, "type": "categorical", "file": n + ".npy"})

    for r in readers:
        for g in range(r.num_row_groups):
            table = r.read_row_group(g, names)
            for n in names:
                col = table.column(n)
                if n == args.label:
                    values = col.to_numpy(zero_copy_only=False).astype(np.float32)
                elif kinds[n] == "float":
                    fill = np.nan if args.missing is None else args.missing
                    values = col.fill_null(fill).to_numpy(zero_copy_only=False)
                elif kinds[n] == "int":
                    values = col.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
                elif kinds[n] == "string":
                    values = hash_strings(col.to_pylist(), np)
                else:
                    values = np.full((len(col), widths[n]), -1, dtype=np.int64)
                    for i, bag in enumerate(col.to_pylist()):
                        if not bag:
                            continue
                        ids = [x for x in bag if x is not None]
                        if ids and not isinstance(ids[0], int):
                            ids = hash_strings(ids, np)
                        values[i, :len(ids)] = ids
                writers[n].write(values)
    for w in writers.values():
        w.close()
    print(json.dumps({"format": "npy", "columns": columns}, indent=2))
    print(f"parquet_to_npy.py: {rows} rows of {len(names)} columns from {len(files)} "
          f"file(s) into {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
