#!/usr/bin/env python3
"""Book passages for text classification: which of the seven novels of
../shared/data/text-gutenberg a passage of N words comes from.

  tools/scripts/text_passages.py [--data DIR] [--out DIR] [--words N | --sentences]

Reads DIR/*.txt.xz (the books, in alphabetical order: the label is the
book's index, 0..6), normalises each as gutenberg7_normalized.txt was made
(Unicode NFKD, accents dropped, lower case, every run of characters outside
a-z one space), cuts it into passages of N consecutive words and writes
OUT/train.txt and OUT/eval.txt, one `label<TAB>passage` line each (the
format of embrun's text lines reader, docs/data.md), the same passages
without their labels in OUT/train_text.txt and OUT/eval_text.txt (for
language models: gpt_mini.json), and OUT/labels.txt (label, book,
passages). Every tenth passage of each book, by a hash of its
book and index, goes to eval.txt. The data is not redistributable: the
files go to OUT (default: embc-passages in the system's temporary folder),
never into the repository.

--sentences cuts each book into its sentences instead (text up to a '.',
'!' or '?', normalised; empty ones dropped): lines of 1 to hundreds of
words, the variable-length data dynamic padding is for (bench/
dynamic_padding.py).
"""
import argparse
import hashlib
import lzma
import os
import re
import sys
import tempfile
import unicodedata


def normalise(text):
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z]+", " ", text).split()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_data = os.path.join(here, "..", "..", "..", "shared", "data", "text-gutenberg")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "embc-passages"))
    ap.add_argument("--words", type=int, default=64)
    ap.add_argument("--sentences", action="store_true",
                    help="one sentence a line instead of passages of --words words")
    args = ap.parse_args()
    books = sorted(f for f in os.listdir(args.data) if f.endswith(".txt.xz")) \
        if os.path.isdir(args.data) else []
    if not books:
        sys.exit(f"text_passages.py: no *.txt.xz books in {args.data}")
    if args.words < 1:
        sys.exit("text_passages.py: --words must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    counts = []
    out = {name: open(os.path.join(args.out, name), "w")
           for name in ("train.txt", "eval.txt", "train_text.txt", "eval_text.txt")}
    with out["train.txt"], out["eval.txt"], out["train_text.txt"], out["eval_text.txt"]:
        for label, book in enumerate(books):
            with lzma.open(os.path.join(args.data, book), "rt", encoding="utf-8-sig") as f:
                raw = f.read()
            if args.sentences:
                units = [w for w in (normalise(t) for t in re.split(r"[.!?]+", raw)) if w]
            else:
                words = normalise(raw)
                units = [words[i * args.words:(i + 1) * args.words]
                         for i in range(len(words) // args.words)]
            passages = len(units)
            for i, unit in enumerate(units):
                text = ' '.join(unit)
                key = hashlib.sha256(f"{book}:{i}".encode()).digest()
                split = "eval" if key[0] % 10 == 0 else "train"
                out[f"{split}.txt"].write(f"{label}\t{text}\n")
                out[f"{split}_text.txt"].write(text + "\n")
            counts.append((label, book[:-len(".txt.xz")], passages))
    with open(os.path.join(args.out, "labels.txt"), "w") as f:
        for label, name, passages in counts:
            f.write(f"{label}\t{name}\t{passages}\n")
    total = sum(p for _, _, p in counts)
    what = "sentences" if args.sentences else f"passages of {args.words} words"
    print(f"{total} {what} from {len(books)} books in {args.out} "
          f"(largest class {max(p for _, _, p in counts) / total:.3f} of them)")


if __name__ == "__main__":
    main()
