"""Checks that a plan's disk tables own whole pages of the arena.

Every buffer of its own (not a view) of a table or table batch with
"placement": "disk" -- its rows, qparams and optimizer state -- must start
at a multiple of 4096 bytes, end (its bytes times its slots, rounded up to
4096) inside the arena, and share no byte of those pages with any other
buffer of its own. Prints the names of the disk buffers; exits 1 on the
first violation. Used by test/Frontend/placement.test.
"""
import json
import sys

PAGE = 4096


def main(path):
    body = json.loads(open(path, "rb").read()[32:])
    buffers = body["buffers"]
    disk = set()
    for owner in body["tables"] + body["table_batches"]:
        if owner.get("placement") != "disk":
            continue
        for b in [owner["buffer"], owner["qparams"]] + owner["state"]:
            if b >= 0 and buffers[b]["parent"] < 0:
                disk.add(b)

    def extent(i):
        b = buffers[i]
        return b["bytes"] * b["slots"]

    for i in sorted(disk):
        b = buffers[i]
        start = b["offset"]
        end = start + (extent(i) + PAGE - 1) // PAGE * PAGE
        if start % PAGE:
            sys.exit(f"{b['name']}: offset {start} is not a multiple of {PAGE}")
        if end > body["arena_bytes"]:
            sys.exit(f"{b['name']}: pages [{start}, {end}) end past the arena")
        for j, other in enumerate(buffers):
            if j == i or other["parent"] >= 0 or extent(j) == 0:
                continue
            if other["offset"] < end and start < other["offset"] + extent(j):
                sys.exit(f"{b['name']}: pages [{start}, {end}) meet {other['name']}")
    names = sorted(buffers[i]["name"] for i in disk)
    print(f"{len(names)} disk buffers on whole pages: {' '.join(names)}")


if __name__ == "__main__":
    main(sys.argv[1])
