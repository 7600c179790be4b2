#!/usr/bin/env python3
"""Loads an embedding export written by CheckpointTest with the reference
`safetensors` package and checks names, dtypes, shapes, values and metadata.
Exit 0: loaded and matched; 1: mismatch; 77: the package is missing (skip)."""

import struct
import sys

try:
    import safetensors
except ImportError:
    sys.exit(77)


def main(path):
    with open(path, "rb") as f:
        content = f.read()
    # deserialize() needs no numpy/torch: raw bytes per tensor.
    tensors = dict(safetensors.deserialize(content))
    expected = {
        "t_user": ("F32", [3, 2], struct.pack("<6f", 0, 1, 2, 3, 4, 5)),
        "t_item": ("F64", [2, 1], struct.pack("<2d", -1.5, 2.5)),
    }
    ok = sorted(tensors) == sorted(expected)
    for name, (dtype, shape, data) in expected.items():
        got = tensors.get(name, {})
        if (got.get("dtype", "").upper() != dtype or list(got.get("shape", [])) != shape
                or bytes(got.get("data", b"")) != data):
            print(f"{name}: got {got}, expected {dtype} {shape}", file=sys.stderr)
            ok = False
    with safetensors.safe_open(path, framework="numpy") as f:
        metadata = f.metadata() or {}
    if metadata.get("model") != "mf" or len(metadata.get("embc.xxh64", "")) != 16:
        print(f"metadata: got {metadata}", file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
