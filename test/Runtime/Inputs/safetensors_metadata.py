#!/usr/bin/env python3
"""Prints one __metadata__ value of a safetensors file, parsed as JSON and
printed again (json.dumps's spacing), so a test can FileCheck it.

    safetensors_metadata.py FILE KEY
"""
import json
import struct
import sys


def main():
    path, key = sys.argv[1], sys.argv[2]
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    meta = json.loads(data[8:8 + n]).get("__metadata__", {})
    if key not in meta:
        sys.exit(f"{path}: no metadata '{key}'")
    print(json.dumps(json.loads(meta[key])))


if __name__ == "__main__":
    main()
