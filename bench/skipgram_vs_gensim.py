#!/usr/bin/env python3
"""embc's skip-gram (examples/skipgram.json) against gensim's Word2Vec.

Both train on ../shared/data/text-gutenberg/gutenberg7_normalized.txt (relative
to the repository; skipped cleanly when absent) with the model file's
settings: sg=1, vector_size = the tables' dim, window 5 (embc's text reader
and gensim both shrink it to a random b in [1, 5] per centre word), negative
= the negatives' count, ns_exponent = their power, the same frequent-word
subsampling (--sample, default 1e-3, word2vec's; embc --text-sample) and
min_count (--min-count, default 5; embc --text-min-count); when the corpus
has more distinct words than the features' vocab cap, gensim gets
max_final_vocab = the cap. The same epochs, workers = threads.

embc runs in each of --updates (default: batch,hogwild):
  batch    examples/skipgram.json as it is: Adagrad (lr 0.2) on the batch's
           mean gradient, the default deterministic training;
  per_example / hogwild
           the same model with training.embedding_updates set, trained as
           gensim is: SGD at 0.025 per example decaying linearly to 0 over
           the run (gensim: alpha 0.025 -> min_alpha 0.0001), the text read
           in file order (--no-shuffle), as gensim reads it.

Reported: words/s for each, counted the same way: corpus words (in the
vocabulary) x epochs / training time. For embc the training time is that of
its summary record (examples / samples_per_s; reading the file and building
the vocabulary excluded); for gensim the wall time of model.train() (the
vocabulary scan excluded). Then the analogy accuracy on
../shared/data/word2vec-analogy/questions-words.txt: gensim's own
evaluate_word_analogies, and 3CosAdd (argmax over the vocabulary of
cos(d, b - a + c) with unit vectors, a, b and c excluded) computed here for
both, on the questions whose four words are in both vocabularies.

embc's embeddings come from `embrun --export-embeddings` (table in_vectors);
row i is the word of frequency rank i, ties broken by first appearance
(runtime/lib/data/TextReader.cpp), which this script recomputes from the
corpus: words are runs of bytes other than space, \\t, \\n, \\r, \\v, \\f.

Usage: python3 bench/skipgram_vs_gensim.py [--epochs E] [--threads T]
           [--updates batch,hogwild] [--sample S] [--min-count N] [--quick] [--build DIR]
"""
import argparse
import collections
import importlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
CORPUS = os.path.join(DATA, "text-gutenberg", "gutenberg7_normalized.txt")
QUESTIONS = os.path.join(DATA, "word2vec-analogy", "questions-words.txt")
QUICK_WORDS = 300000
# gensim trains on at most 10000 words of a sentence (the rest is dropped);
# the corpus is one line, so gensim gets it in pieces of this many words.
# embc's windows never cross a line end, gensim's never a piece's end: the
# difference is a few pairs every 10000 words.
GENSIM_PIECE = 10000


def require(module, pip_name):
    try:
        return importlib.import_module(module)
    except ImportError:
        pass
    print(f"installing {pip_name} with pip ...", flush=True)
    base = [sys.executable, "-m", "pip", "install", "--quiet", "--root-user-action=ignore"]
    for extra in ([], ["--break-system-packages"]):  # Debian's managed Python
        if subprocess.run(base + extra + [pip_name]).returncode == 0:
            importlib.invalidate_caches()
            return importlib.import_module(module)
    sys.exit(f"error: could not install {pip_name} with pip")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout[-2000:]}")
    return r.stdout


def read_safetensors(path, np):
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, info in header.items():
        if name != "__metadata__":
            a, b = info["data_offsets"]
            out[name] = np.frombuffer(blob[8 + n + a:8 + n + b], "<f4").reshape(info["shape"])
    return out


def embc_vocabulary(corpus, cap, min_count):
    """The words in embc's id order: by descending count, ties by first
    appearance (Counter keeps first-appearance order; sorted() is stable),
    the first `cap` of them, less those seen fewer than min_count times.
    Also the number of in-vocabulary words (before subsampling)."""
    with open(corpus, "rb") as f:
        counts = collections.Counter(f.read().split())  # bytes.split(): ASCII whitespace
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    if cap:
        ranked = ranked[:cap]
    ranked = [(w, c) for w, c in ranked if c >= min_count]
    return [w.decode("utf-8", "replace") for w, _ in ranked], sum(c for _, c in ranked), len(counts)


def read_questions(path):
    """(section, [a, b, c, d]) in lower case (the corpus is lower-cased)."""
    out, section = [], ""
    with open(path) as f:
        for line in f:
            if line.startswith(":"):
                section = line[1:].strip()
            elif line.strip():
                out.append((section, line.lower().split()))
    return out


def cos_add_accuracy(np, vectors, index, questions):
    """3CosAdd over the rows of `vectors` (unit-normalised here): the answer
    is argmax cos(x, b - a + c) over all rows except a, b and c."""
    v = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    q = np.array([[index[w] for w in words] for _, words in questions])
    correct = 0
    for s in range(0, len(q), 512):
        part = q[s:s + 512]
        target = v[part[:, 1]] - v[part[:, 0]] + v[part[:, 2]]
        scores = target @ v.T
        rows = np.arange(len(part))
        for k in range(3):
            scores[rows, part[:, k]] = -np.inf
        correct += int((scores.argmax(1) == part[:, 3]).sum())
    return correct / max(len(q), 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--embrun", help="embrun to use (default: BUILD/bin/embrun)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeats", type=int, default=3,
                   help="interleaved runs of each side; medians are reported")
    p.add_argument("--updates", default="batch,hogwild",
                   help="embc modes: batch, per_example, hogwild (comma-separated)")
    p.add_argument("--sample", type=float, default=1e-3,
                   help="frequent-word subsampling threshold for both (0: off)")
    p.add_argument("--min-count", type=int, default=5,
                   help="words seen fewer times leave both vocabularies")
    p.add_argument("--quick", action="store_true",
                   help=f"train on the first {QUICK_WORDS} words of the corpus only")
    args = p.parse_args()
    if not os.path.exists(CORPUS) or not os.path.exists(QUESTIONS):
        print(f"skipped: {os.path.normpath(CORPUS)} or {os.path.normpath(QUESTIONS)} "
              "is missing")
        return
    np = require("numpy", "numpy")
    gensim = require("gensim", "gensim")
    from gensim.models import Word2Vec

    embc_bin = os.path.join(args.build, "bin", "embc")
    embrun_bin = args.embrun or os.path.join(args.build, "bin", "embrun")
    model_path = os.path.join(ROOT, "examples", "skipgram.json")
    with open(model_path) as f:
        model = json.load(f)
    feats = {f["name"]: f for f in model["features"]}
    dim = next(e["dim"] for e in model["embeddings"] if e["name"] == feats["center"]["table"])
    negatives = feats["negatives"]
    cap = min(f["vocab"] for f in model["features"] if f.get("vocab"))
    window = 5  # embc's text reader: StreamOptions::textWindow

    with tempfile.TemporaryDirectory(prefix="embc-sg-") as tmp:
        corpus = CORPUS
        if args.quick:
            # The first QUICK_WORDS words, keeping the line ends among them.
            corpus = os.path.join(tmp, "corpus.txt")
            left = QUICK_WORDS
            with open(CORPUS, "rb") as src, open(corpus, "wb") as dst:
                for line in src:
                    words = line.split()[:left]
                    dst.write(b" ".join(words) + b"\n")
                    left -= len(words)
                    if left == 0:
                        break
        vocab, words, distinct = embc_vocabulary(corpus, cap, args.min_count)
        quick = f" (first {QUICK_WORDS} words)" if args.quick else ""
        print(f"corpus {os.path.basename(CORPUS)}{quick}: "
              f"{words:,} in-vocabulary words, {distinct:,} distinct, vocabulary {len(vocab):,} "
              f"(min count {args.min_count}); dim {dim}, window {window}, negatives "
              f"{negatives['count']} (power {negatives['power']}), sample {args.sample}, "
              f"epochs {args.epochs}, threads {args.threads}", flush=True)
        batch = model["training"]["batch_size"]

        def run_embc(mode, rep):
            variant = json.loads(json.dumps(model))
            if mode != "batch":
                # gensim's schedule: SGD at 0.025 per example, linear decay.
                pairs = words * args.epochs * 6  # an upper bound: 2 * mean window 3
                variant["training"].update({"embedding_updates": mode, "lr_schedule": "linear",
                                            "decay_steps": max(1, pairs // batch)})
                variant["optimizer"]["embedding"] = {"type": "sgd", "lr": 0.025}
            model_file = os.path.join(tmp, f"skipgram_{mode}.json")
            with open(model_file, "w") as f:
                json.dump(variant, f)
            plan = os.path.join(tmp, f"skipgram_{mode}.plan")
            run([embc_bin, model_file, "-o", plan])
            log = os.path.join(tmp, f"sg_{mode}.jsonl")
            emb = os.path.join(tmp, f"sg_{mode}.safetensors")
            run([embrun_bin, plan, "--data", f"text:{corpus}", "--epochs", str(args.epochs),
                 "--threads", str(args.threads), "--log", log, "--export-embeddings", emb,
                 "--text-sample", str(args.sample), "--text-min-count", str(args.min_count)]
                + ([] if mode == "batch" else ["--no-shuffle"]))
            # No --profile: it keeps the team at --threads, and the default
            # (the team size embrun measures to be fastest) is what is timed.
            with open(log) as f:
                records = [json.loads(line) for line in f]
            summary = next(r for r in records if r["event"] == "summary")
            host = next((r for r in records if r["event"] == "host"), {})
            seconds = summary["step"] * batch / summary["samples_per_s"]
            wps = words * args.epochs / seconds
            print(f"embc {mode} (run {rep + 1}): {summary['step']} steps of {batch} pairs, "
                  f"{seconds:.1f} s training, {summary['samples_per_s']:,.0f} pairs/s, "
                  f"{wps:,.0f} words/s, final loss {summary['loss']:.4f}; team of "
                  f"{summary['cpu_threads']:.0f}, waiting for data "
                  f"{host.get('host_data_ms_per_step', 0):.3f} ms/step", flush=True)
            return wps, read_safetensors(emb, np)[feats["center"]["table"]][:len(vocab)]

        with open(corpus, encoding="utf-8", errors="replace") as f:
            sentences = [words[i:i + GENSIM_PIECE] for words in (line.split() for line in f)
                         for i in range(0, len(words), GENSIM_PIECE)]

        def run_gensim(rep):
            w2v = Word2Vec(vector_size=dim, window=window, negative=negatives["count"],
                           ns_exponent=negatives["power"], sg=1, hs=0, sample=args.sample,
                           min_count=args.min_count,
                           max_final_vocab=cap if distinct > cap else None,
                           workers=args.threads, seed=1)
            w2v.build_vocab(sentences)
            t0 = time.perf_counter()
            w2v.train(sentences, total_examples=w2v.corpus_count, epochs=args.epochs)
            gseconds = time.perf_counter() - t0
            gwords = sum(w2v.wv.get_vecattr(w, "count") for w in w2v.wv.index_to_key)
            wps = gwords * args.epochs / gseconds
            print(f"gensim {gensim.__version__} (run {rep + 1}): {gseconds:.1f} s training, "
                  f"{wps:,.0f} words/s", flush=True)
            return wps, w2v

        modes = [m for m in args.updates.split(",") if m]
        for mode in modes:
            if mode not in ("batch", "per_example", "hogwild"):
                sys.exit(f"error: unknown --updates mode '{mode}'")
        rates = {mode: [] for mode in modes + ["gensim"]}
        embc_runs = {}
        for rep in range(max(1, args.repeats)):  # interleaved: each side sees the same noise
            for mode in modes:
                wps, vectors = run_embc(mode, rep)
                rates[mode].append(wps)
                embc_runs[mode] = (wps, vectors)
            gensim_wps, w2v = run_gensim(rep)
            rates["gensim"].append(gensim_wps)
        median = lambda v: sorted(v)[len(v) // 2]
        for mode in modes:
            print(f"words/s embc {mode}/gensim (medians of {len(rates[mode])}): "
                  f"{median(rates[mode]):,.0f} / {median(rates['gensim']):,.0f} = "
                  f"{median(rates[mode]) / median(rates['gensim']):.3f}", flush=True)

        # Analogies
        score, _ = w2v.wv.evaluate_word_analogies(QUESTIONS)
        shared = set(vocab) & set(w2v.wv.key_to_index)
        questions = [q for q in read_questions(QUESTIONS)
                     if len(q[1]) == 4 and all(w in shared for w in q[1])]
        # Candidates: the shared vocabulary, in embc's order, for every model.
        cand = [w for w in vocab if w in shared]
        index = {w: i for i, w in enumerate(cand)}
        embc_row = {w: i for i, w in enumerate(vocab)}
        g_acc = cos_add_accuracy(np, w2v.wv[cand], index, questions)
        total = sum(1 for _ in read_questions(QUESTIONS))
        accs = ", ".join(
            f"embc {mode} {cos_add_accuracy(np, v[[embc_row[w] for w in cand]], index, questions):.1%}"
            for mode, (_, v) in embc_runs.items())
        print(f"analogies (3CosAdd over the {len(cand):,} shared words, {len(questions):,} of "
              f"{total:,} questions in vocabulary): {accs}, gensim {g_acc:.1%} "
              f"(gensim's evaluate_word_analogies: {score:.1%})")


if __name__ == "__main__":
    main()
