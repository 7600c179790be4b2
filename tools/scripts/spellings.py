#!/usr/bin/env python3
"""Where each plan word is spelled: issue 19 asks that every kernel name and
enum word be written, as a string literal, in at most 2 non-test source files
(its declaration, and the dialect's where the IR has it too); the rest read
it from the declaration (runtime/include/embc/runtime/plan/Enums.h,
KernelCatalogue.def, EmbEnums.td).

  tools/scripts/spellings.py [--all] [--limit N]

Lists the words whose literal "word" appears in more than N (default 2)
C++/TableGen files under dialect/ passes/ runtime/ frontend/ tools/, with the
files. A generic word (none, sum, rows, f32, ...) often also appears as a JSON
key or as another set's word: read the files before acting. Reports only;
exits 0.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def words():
    """{word: where it is declared}: plan enums, dialect enums, kernels."""
    found = {}
    enums = open(os.path.join(ROOT, "runtime/include/embc/runtime/plan/Enums.h")).read()
    for m in re.finditer(r"EMBC_PLAN_ENUM\((\w+),\s*\w+,\s*\"[^\"]*\",([^;]*)\);", enums, re.S):
        for w in re.findall(r"\"([^\"]+)\"", m.group(2)):
            found.setdefault(w, set()).add("plan enum " + m.group(1))
    td = open(os.path.join(ROOT, "dialect/include/embc/dialect/EmbEnums.td")).read()
    for m in re.finditer(r"I32EnumAttrCase<\"(\w+)\", \d+(?:, \"(\w+)\")?>", td):
        found.setdefault(m.group(2) or m.group(1), set()).add("dialect enum")
    catalogue = open(os.path.join(ROOT, "runtime/include/embc/runtime/plan/KernelCatalogue.def")).read()
    for m in re.finditer(r"EMBC_KERNEL\((\w+), \"(\w+)\"", catalogue):
        found.setdefault(m.group(2), set()).add("kernel")
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=2)
    ap.add_argument("--all", action="store_true", help="every word, with its count")
    args = ap.parse_args()
    files = subprocess.check_output(["git", "ls-files", "dialect", "passes", "runtime", "frontend",
                                     "tools"], cwd=ROOT, text=True).split()
    texts = {f: open(os.path.join(ROOT, f), errors="ignore").read()
             for f in files if re.search(r"\.(cpp|h|td|def)$", f)}
    rows = []
    for word, where in words().items():
        hits = sorted(f for f, t in texts.items() if f'"{word}"' in t)
        rows.append((len(hits), word, where, hits))
    over = 0
    for n, word, where, hits in sorted(rows, key=lambda r: (-r[0], r[1])):
        if n > args.limit or args.all:
            over += n > args.limit
            print(f"{n:3d} {word} ({', '.join(sorted(where))}): {' '.join(hits)}")
    print(f"{over} of {len(rows)} words in more than {args.limit} files", file=sys.stderr)


if __name__ == "__main__":
    main()
