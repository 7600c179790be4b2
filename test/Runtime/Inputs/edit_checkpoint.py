#!/usr/bin/env python3
"""Rewrites a safetensors file's header the way a careless tool would.

    edit_checkpoint.py IN OUT [--drop KEY] [--set KEY=VALUE] [--swap A B]

--drop and --set edit __metadata__; --swap exchanges the data_offsets of
tensors A and B (same byte size: every data byte stays where it was). The
header is written back compact and padded, with its new length; no
checksum is recomputed.
"""
import argparse
import json
import struct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--drop", action="append", default=[])
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--swap", nargs=2)
    args = parser.parse_args()
    data = open(args.src, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header.setdefault("__metadata__", {})
    for key in args.drop:
        del meta[key]
    for item in args.set:
        key, value = item.split("=", 1)
        meta[key] = value
    if args.swap:
        a, b = (header[name] for name in args.swap)
        a["data_offsets"], b["data_offsets"] = b["data_offsets"], a["data_offsets"]
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    open(args.dst, "wb").write(struct.pack("<Q", len(text)) + text + data[8 + n:])


if __name__ == "__main__":
    main()
