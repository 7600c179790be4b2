#!/usr/bin/env python3
"""Writes the seed inputs of a fuzz target into DIR (run-fuzz.sh calls it).

    seeds.py TARGET DIR [ROOT]

plan: the JSON body of docs/plan-format.md's example; checkpoint: small
safetensors files as other tools write them; data: made-up criteo,
movielens and text files (the first byte picks the reader: 0 criteo,
1 movielens, 2 text; +0x80 skips bad lines, +0x40 reads in training order).
Written here rather than checked in, so the seeds follow the formats.
"""
import json
import os
import re
import struct
import sys


def safetensors(tensors, metadata):
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def criteo_line(label, ints, cats):
    return "\t".join([str(label)] + ["" if i is None else str(i) for i in ints] + cats)


def seeds(target, root):
    if target == "plan":
        doc = open(os.path.join(root, "docs", "plan-format.md")).read()
        example = doc[doc.index("## Example"):]
        yield "doc-example.json", re.search(r"```json\n(.*?)```", example, re.S).group(1).encode()
    elif target == "checkpoint":
        f32 = struct.pack("<2f", 1.0, 2.0)
        yield "foreign.safetensors", safetensors(
            {"a": ("F32", [2], f32), "b": ("I64", [1], struct.pack("<q", 3))},
            {"format": "embc.checkpoint/v1", "step": "3"})
        yield "state.safetensors", safetensors(
            {"table/t": ("F32", [2, 2], f32 + f32), "state/t/0": ("F32", [2], f32)},
            {"format": "embc.checkpoint/v1", "embc.checksum": "xxh64:0000000000000000"})
    elif target == "data":
        ints = [1, 5, None, 12, 3401, 22, 7, 0, 98, 1, 2, None, 4]
        cats = ["%08x" % ((i * 2654435761) & 0xFFFFFFFF) for i in range(1, 27)]
        cats[21], cats[3] = "", "ABC"
        lines = [criteo_line(1, ints, cats), criteo_line(0, [None] * 13, [""] * 26),
                 criteo_line(1, ints, cats[:25] + ["zz"])]
        yield "criteo.tsv", b"\x00" + ("\n".join(lines) + "\n").encode()
        yield "criteo-skip.tsv", b"\xc0" + ("\n".join(lines) + "\r\n\n").encode()
        ratings = "196\t242\t3\t881250949\n186\t302\t3.5\t891717742\n22\t377\t1\t878887116\n"
        yield "movielens.tsv", b"\x01" + ratings.encode()
        yield "movielens-colons.dat", b"\x81" + ratings.replace("\t", "::").encode()
        text = "the quick brown fox jumps over the lazy dog\nthe dog sleeps\n\nfox and dog\n"
        yield "text.txt", b"\x02" + text.encode()
        yield "text-train.txt", b"\x42" + text.encode()
    else:
        sys.exit(f"seeds.py: unknown target '{target}'")


def main():
    target, out = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "..")
    for name, content in seeds(target, root):
        with open(os.path.join(out, name), "wb") as f:
            f.write(content)


if __name__ == "__main__":
    main()
