#!/usr/bin/env python3
"""embc's CPU backend against PyTorch eager on the CPU, same machine and threads.

For examples/dlrm_small.json and examples/mf_movielens.json:

1. compile the model with embc and write its initial weights with
   `embrun --steps 0 --save DIR`; build the same model in PyTorch
   (nn.EmbeddingBag(mode="sum") per table, nn.Linear layers, the DLRM pairwise
   dot interaction with the bottom output first; MF dot + biases + global
   bias) and load those weights into it;
2. check that both compute the same thing: write one batch as a data file
   (MovieLens TSV for MF, Criteo TSV for DLRM), train 2 steps on it with
   embrun and with PyTorch, and compare the losses of both steps;
3. time training: embrun on its synthetic data, PyTorch on a pool of
   pre-generated synthetic batches of the same shapes (ids uniform in range;
   generating them is not timed), both after a warm-up, same batch size,
   optimizers and hyper-parameters; report samples/s and embc / PyTorch;
4. from embc alone (`embrun --profile`): update time packed vs unpacked and
   step time fused vs unfused (`embc --no-pack` / `--no-fuse`; while embc has
   no such flag the variant is the default plan and says so), and the
   fraction of the hardware limit: the kernels' achieved GB/s against a
   measured STREAM-like triad, and the dense layers' GEMM FLOP/s against a
   large sgemm.

Usage: python3 bench/cpu_vs_pytorch.py [--steps N] [--threads T] [--quick]
                                       [--build DIR]
Installs numpy, torch (CPU wheel) and xxhash with pip when they are missing.
"""
import argparse
import importlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- Dependencies -------------------------------------------------------------

def pip_install(args):
    """pip install ARGS; retries with --break-system-packages (Debian's
    externally-managed Python). Returns True on success."""
    base = [sys.executable, "-m", "pip", "install", "--quiet",
            "--root-user-action=ignore"]
    for extra in ([], ["--break-system-packages"]):
        if subprocess.run(base + extra + args).returncode == 0:
            return True
    return False


def require(module, pip_args):
    try:
        return importlib.import_module(module)
    except ImportError:
        pass
    print(f"installing {module} with pip ...", flush=True)
    for args in pip_args:
        if pip_install(args):
            importlib.invalidate_caches()
            return importlib.import_module(module)
    sys.exit(f"error: could not install {module} (tried: pip install "
             + " | ".join(" ".join(a) for a in pip_args) + ")")


# The CPU wheel is much smaller; fall back to PyPI's default wheel when the
# PyTorch index cannot be reached.
TORCH_PIP = [["torch", "--index-url", "https://download.pytorch.org/whl/cpu"],
             ["torch"]]


# --- embc and embrun ----------------------------------------------------------

def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout[-2000:]}")
    return r.stdout


def embc_flags(embc):
    """The embc options this build has (--no-pack / --no-fuse arrive later)."""
    text = subprocess.run([embc, "--help-hidden"], capture_output=True, text=True).stdout
    return {f for f in ("--no-pack", "--no-fuse") if f in text}


def compile_plan(embc, model, out, flags=()):
    run([embc, model, "-o", out, *flags])
    return json.loads(run([embc, model, "--emit=plan-json", *flags]))


def embrun(embrun_bin, plan, steps, threads, workdir, tag, extra=()):
    """Runs embrun; returns the records of its JSON-lines log."""
    log = os.path.join(workdir, tag + ".jsonl")
    run([embrun_bin, plan, "--steps", str(steps), "--threads", str(threads),
         "--log", log, *extra])
    with open(log) as f:
        return [json.loads(line) for line in f if line.strip()]


def embc_samples_per_s(records, warm, batch):
    """Throughput between the record at step `warm` and the last train
    record. A record's samples_per_s is cumulative (examples since the start
    over training time so far), so the training time up to step s is
    s * batch / samples_per_s, and the difference of two leaves out warm-up."""
    train = [r for r in records if r["event"] == "train"]
    first = next(r for r in train if r["step"] >= warm)
    last = train[-1]
    t0 = first["step"] * batch / first["samples_per_s"]
    t1 = last["step"] * batch / last["samples_per_s"]
    return (last["step"] - first["step"]) * batch / (t1 - t0)


def read_safetensors(path, np):
    """{name: array} of a safetensors file (format: docs/training.md)."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    dtypes = {"F32": "<f4", "F64": "<f8", "I64": "<i8"}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(blob[8 + n + a:8 + n + b],
                                  dtype=dtypes[info["dtype"]]).reshape(info["shape"]).copy()
    return out


# --- The PyTorch models --------------------------------------------------------

def build_models(torch):
    nn = torch.nn

    def mlp(sizes_in, sizes, final_relu):
        layers, width = [], sizes_in
        for i, size in enumerate(sizes):
            layers.append(nn.Linear(width, size))
            if i + 1 < len(sizes) or final_relu:
                layers.append(nn.ReLU())
            width = size
        return nn.Sequential(*layers)

    class DLRM(nn.Module):
        """examples/dlrm_small.json: bottom MLP on the dense features, one
        sum-pooled bag per sparse feature, pairwise dots of [bottom, bags...]
        (i < j, row-major: the CPU kernel's order) after the bottom output,
        then the top MLP to one logit."""

        def __init__(self, model):
            super().__init__()
            layers = {l["name"]: l for l in model["layers"]}
            feats = {f["name"]: f for f in model["features"]}
            tables = {t["name"]: t for t in model["embeddings"]}
            bottom, inter, top = layers["bottom"], layers["interaction"], layers["top"]
            assert inter.get("keep_first", True) and not inter.get("self_interaction", False)
            self.sparse = inter["inputs"][1:]
            self.table_names = [feats[s]["table"] for s in self.sparse]
            self.bottom = mlp(feats[bottom["input"]]["dim"], bottom["sizes"],
                              bottom.get("final_activation", "relu") == "relu")
            self.tables = nn.ModuleList(
                nn.EmbeddingBag(tables[t]["rows"], tables[t]["dim"], mode="sum", sparse=True)
                for t in self.table_names)
            d, f = bottom["sizes"][-1], len(inter["inputs"])
            self.top = mlp(d + f * (f - 1) // 2, top["sizes"],
                           top.get("final_activation", "relu") == "relu")
            self.register_buffer("pairs", torch.triu_indices(f, f, offset=1))
            self.bottom_name, self.top_name = bottom["name"], top["name"]

        def forward(self, dense, ids, offsets):
            x = self.bottom(dense)
            t = torch.stack([x] + [emb(i, offsets) for emb, i in zip(self.tables, ids)], dim=1)
            z = torch.bmm(t, t.transpose(1, 2))[:, self.pairs[0], self.pairs[1]]
            return self.top(torch.cat([x, z], dim=1)).squeeze(1)

        def load(self, ckpt):
            def linears(seq, name):
                for i, lin in enumerate(m for m in seq if isinstance(m, nn.Linear)):
                    lin.weight.data.copy_(torch.from_numpy(ckpt[f"param/{name}_w{i}"]).t())
                    lin.bias.data.copy_(torch.from_numpy(ckpt[f"param/{name}_b{i}"]))
            linears(self.bottom, self.bottom_name)
            linears(self.top, self.top_name)
            for emb, t in zip(self.tables, self.table_names):
                emb.weight.data.copy_(torch.from_numpy(ckpt[f"table/{t}"]))

        def optimizers(self, model):
            dense, emb = model["optimizer"]["dense"], model["optimizer"]["embedding"]
            assert dense["type"] == "adam" and emb["type"] == "rowwise_adagrad"
            dense_params = list(self.bottom.parameters()) + list(self.top.parameters())
            return [torch.optim.Adam(dense_params, lr=dense["lr"], eps=1e-8),
                    RowwiseAdagrad(self.tables.parameters(), lr=emb["lr"], eps=1e-8)]

        @staticmethod
        def loss(pred, label):
            return nn.functional.binary_cross_entropy_with_logits(pred, label)

    class MF(nn.Module):
        """examples/mf_movielens.json: <user, item> + user_bias + item_bias +
        a global bias, MSE."""

        def __init__(self, model):
            super().__init__()
            t = {e["name"]: e for e in model["embeddings"]}
            bag = lambda n: nn.EmbeddingBag(t[n]["rows"], t[n]["dim"], mode="sum", sparse=True)
            self.users, self.items = bag("users"), bag("items")
            self.user_bias, self.item_bias = bag("user_bias"), bag("item_bias")
            self.bias = nn.Parameter(torch.zeros(1))
            emb = model["optimizer"]["embedding"]
            assert emb["type"] == "sgd" and emb.get("weight_decay_mode") == "lazy"
            self.table_lr, self.table_wd = emb["lr"], emb.get("weight_decay", 0.0)
            self.dense_lr = model["optimizer"]["dense"]["lr"]

        def forward(self, user, item, offsets):
            u, i = self.users(user, offsets), self.items(item, offsets)
            return ((u * i).sum(1) + self.user_bias(user, offsets).squeeze(1)
                    + self.item_bias(item, offsets).squeeze(1) + self.bias)

        def load(self, ckpt):
            for name in ("users", "items", "user_bias", "item_bias"):
                getattr(self, name).weight.data.copy_(torch.from_numpy(ckpt[f"table/{name}"]))
            self.bias.data.copy_(torch.from_numpy(ckpt["param/prediction_b0"]))

        def optimizers(self, model):
            return [torch.optim.SGD([self.bias], lr=self.dense_lr), LazySgd(self)]

        @staticmethod
        def loss(pred, label):
            return nn.functional.mse_loss(pred, label)

    class LazySgd:
        """SGD with lazy weight decay on the sparse tables, as embc's
        update_table does: for the touched rows only (duplicates summed),
        g += wd w; w -= lr g. torch.optim.SGD refuses weight decay on sparse
        gradients, so this is the update a PyTorch user writes by hand."""

        def __init__(self, mf):
            self.tables = [mf.users, mf.items, mf.user_bias, mf.item_bias]
            self.lr, self.wd = mf.table_lr, mf.table_wd

        def zero_grad(self):
            for t in self.tables:
                t.weight.grad = None

        @torch.no_grad()
        def step(self):
            for t in self.tables:
                g = t.weight.grad.coalesce()
                rows, values = g.indices()[0], g.values()
                w = t.weight
                w.index_add_(0, rows, -self.lr * (values + self.wd * w[rows]))

    class RowwiseAdagrad:
        """Row-wise Adagrad on sparse table gradients, as embc's (and FBGEMM's)
        rowwise_adagrad: per touched row r (duplicates summed) a_r +=
        mean(g_r^2); w_r -= lr g_r / (sqrt(a_r) + eps). PyTorch has no
        built-in one, so this is the update a PyTorch user writes by hand."""

        def __init__(self, params, lr, eps):
            self.params = list(params)
            self.lr, self.eps = lr, eps
            self.state = [torch.zeros(p.shape[0]) for p in self.params]

        def zero_grad(self):
            for p in self.params:
                p.grad = None

        @torch.no_grad()
        def step(self):
            for p, acc in zip(self.params, self.state):
                g = p.grad.coalesce()
                rows, values = g.indices()[0], g.values()
                acc.index_add_(0, rows, values.pow(2).mean(dim=1))
                scale = self.lr / (acc[rows].sqrt() + self.eps)
                p.index_add_(0, rows, -scale.unsqueeze(1) * values)

    return {"dlrm_small": DLRM, "mf_movielens": MF}


def train_step(torch, net, opts, batch):
    *inputs, label = batch
    for o in opts:
        o.zero_grad()
    loss = net.loss(net(*inputs), label)
    loss.backward()
    for o in opts:
        o.step()
    return float(loss.detach())


# --- Batches ------------------------------------------------------------------

def synthetic_batches(torch, name, model, batch, count, gen):
    """`count` batches of the model's input shapes: ids uniform in each
    table's rows (dlrm_small hashes its ids into the table; the PyTorch side
    draws the bucket directly), dense N(0, 1), labels 0/1 or N(3, 1)."""
    offsets = torch.arange(batch)
    tables = {t["name"]: t["rows"] for t in model["embeddings"]}
    feats = {f["name"]: f for f in model["features"]}
    out = []
    for _ in range(count):
        if name == "dlrm_small":
            sparse = [f for f in model["features"] if f["type"] == "sparse"]
            ids = [torch.randint(0, tables[f["table"]], (batch,), generator=gen) for f in sparse]
            dense = torch.randn(batch, feats["dense"]["dim"], generator=gen)
            label = torch.randint(0, 2, (batch,), generator=gen).float()
            out.append((dense, ids, offsets, label))
        else:
            user = torch.randint(0, tables["users"], (batch,), generator=gen)
            item = torch.randint(0, tables["items"], (batch,), generator=gen)
            out.append((user, item, offsets, 3 + torch.randn(batch, generator=gen)))
    return out


def check_batch_file(torch, np, name, model, batch, path, gen):
    """Writes one batch of real-format data for embrun and returns it as
    PyTorch tensors: MovieLens TSV for MF, Criteo TSV for DLRM (whose ids are
    hashed into the tables by embc with XXH64 of the id's 8 little-endian
    bytes, seed 0, mod rows; the PyTorch side gets the hashed ids)."""
    rng = np.random.default_rng(int(torch.randint(0, 2**31, (1,), generator=gen)))
    offsets = torch.arange(batch)
    if name == "mf_movielens":
        t = {e["name"]: e["rows"] for e in model["embeddings"]}
        user = rng.integers(0, t["users"], batch)
        item = rng.integers(0, t["items"], batch)
        rating = rng.integers(1, 6, batch)
        with open(path, "w") as f:
            for u, i, r in zip(user, item, rating):
                f.write(f"{u}\t{i}\t{r}\t881250949\n")
        return "movielens", (torch.from_numpy(user), torch.from_numpy(item), offsets,
                             torch.from_numpy(rating.astype(np.float32)))
    xxhash = require("xxhash", [["xxhash"]])
    sparse = [f for f in model["features"] if f["type"] == "sparse"]
    rows = {t["name"]: t["rows"] for t in model["embeddings"]}
    dense_raw = rng.integers(0, 50, (batch, 13))
    raw_ids = rng.integers(0, min(f["vocab"] for f in sparse), (batch, len(sparse)))
    label = rng.integers(0, 2, batch)
    with open(path, "w") as f:
        for b in range(batch):
            f.write("\t".join([str(label[b])] + [str(x) for x in dense_raw[b]]
                              + [format(int(x), "x") for x in raw_ids[b]]) + "\n")
    ids = [torch.tensor([xxhash.xxh64_intdigest(struct.pack("<q", int(x)), seed=0) % rows[f["table"]]
                         for x in raw_ids[:, k]]) for k, f in enumerate(sparse)]
    dense = torch.from_numpy(np.log1p(dense_raw).astype(np.float32))
    return "criteo", (dense, ids, offsets, torch.from_numpy(label.astype(np.float32)))


# --- Hardware limits ----------------------------------------------------------

def measure_hardware(torch, np, threads, quick):
    """Memory bandwidth (best of a few STREAM triads a = b + s c over three
    arrays far larger than the caches, torch on `threads` threads: 2 reads +
    1 write counted; and a single-threaded numpy copy, read + write) and
    the sgemm rate (best of a few 2048^3 torch.mm)."""
    n = (16 if quick else 32) * 2**20
    a, b, c = (torch.ones(n) for _ in range(3))
    best = float("inf")
    for _ in range(6):
        t0 = time.perf_counter()
        torch.add(b, c, alpha=3.0, out=a)
        best = min(best, time.perf_counter() - t0)
    triad = 3 * 4 * n / best / 1e9
    x, y = np.ones(n, np.float32), np.empty(n, np.float32)
    best = float("inf")
    for _ in range(6):
        t0 = time.perf_counter()
        np.copyto(y, x)
        best = min(best, time.perf_counter() - t0)
    copy = 2 * 4 * n / best / 1e9
    del a, b, c, x, y
    m = 2048
    p, q = torch.randn(m, m), torch.randn(m, m)
    torch.mm(p, q)
    best = float("inf")
    for _ in range(3 if quick else 5):
        t0 = time.perf_counter()
        torch.mm(p, q)
        best = min(best, time.perf_counter() - t0)
    return {"triad_gbs": triad, "copy_gbs": copy, "sgemm_gflops": 2 * m**3 / best / 1e9}


def gemm_flops_per_step(plan):
    """FLOPs per step of the dense-layer GEMMs, by op, from the plan's buffer
    shapes (docs/plan-format.md): dense and dense_act y = x w (x: B x K,
    w: K x N), dense_grad_input dx = dy w^T, dense_grad_weight dw = x^T dy,
    2 B K N each; dense_act_grad (fused) does dw and, with input_grad, dx."""
    shape = lambda buf: plan["buffers"][buf]["shape"]
    flops = {}
    for k in plan["step"]:
        op, ins = k["op"], k["inputs"]
        if op in ("dense", "dense_act"):
            (bsz, n_in), n_out = shape(ins[0]), shape(ins[1])[1]
            gemms = 1
        elif op == "dense_grad_input":
            (bsz, n_out), n_in = shape(ins[0]), shape(ins[1])[0]
            gemms = 1
        elif op == "dense_grad_weight":
            (bsz, n_in), n_out = shape(ins[0]), shape(ins[1])[1]
            gemms = 1
        elif op == "dense_act_grad":
            bsz = shape(ins[0])[0]
            n_in, n_out = shape(ins[-1])
            gemms = 2 if k["attrs"].get("input_grad", True) else 1
        else:
            continue
        flops[op] = flops.get(op, 0) + 2 * bsz * n_in * n_out * gemms
    return flops


def profile_of(records):
    return next(r for r in records if r.get("type") == "profile")


# --- Main -----------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="build directory with bin/embc and bin/embrun")
    p.add_argument("--embrun", help="embrun to use (default: BUILD/bin/embrun)")
    p.add_argument("--steps", type=int, help="timed steps per run (default 200; --quick 30)")
    p.add_argument("--threads", type=int, default=os.cpu_count(),
                   help="threads for embrun and PyTorch (default: all cores)")
    p.add_argument("--quick", action="store_true", help="fewer steps, smaller arrays")
    p.add_argument("--models", default="dlrm_small,mf_movielens")
    args = p.parse_args()
    steps = args.steps or (30 if args.quick else 200)
    warm = 5 if args.quick else 20
    threads = args.threads

    # Adagrad's sparse update warns once about disabled invariant checks.
    warnings.filterwarnings("ignore", message="Sparse invariant checks")
    np = require("numpy", [["numpy"]])
    torch = require("torch", TORCH_PIP)
    torch.set_num_threads(threads)
    embc_bin = os.path.join(args.build, "bin", "embc")
    embrun_bin = args.embrun or os.path.join(args.build, "bin", "embrun")
    flags = embc_flags(embc_bin)
    models = build_models(torch)

    print(f"machine: {os.cpu_count()} cores; threads {threads}; torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); warm-up {warm} steps, timed {steps} steps",
          flush=True)
    hw = measure_hardware(torch, np, threads, args.quick)
    print(f"hardware: triad {hw['triad_gbs']:.1f} GB/s ({threads} threads), numpy copy "
          f"{hw['copy_gbs']:.1f} GB/s (1 thread), sgemm {hw['sgemm_gflops']:.1f} GFLOP/s "
          f"(2048^3, {threads} threads)\n", flush=True)

    rows = []
    with tempfile.TemporaryDirectory(prefix="embc-bench-") as tmp:
        for name in args.models.split(","):
            model_path = os.path.join(ROOT, "examples", name + ".json")
            with open(model_path) as f:
                model = json.load(f)
            plan_path = os.path.join(tmp, name + ".plan")
            plan = compile_plan(embc_bin, model_path, plan_path)
            batch = plan["config"]["batch_size"]
            print(f"== {name} (batch {batch}) ==", flush=True)

            # Same initial weights: embrun writes them, PyTorch loads them.
            init = os.path.join(tmp, name + "-init")
            run([embrun_bin, plan_path, "--steps", "0", "--save", init])
            ckpt = read_safetensors(os.path.join(init, "checkpoint.safetensors"), np)
            gen = torch.Generator().manual_seed(1)

            # Equivalence: 2 steps on one batch written as a data file. The
            # whole file is one batch, so both steps see the same examples
            # (in another order, which a mean loss does not see).
            kind, check = check_batch_file(torch, np, name, model, batch,
                                           os.path.join(tmp, name + ".tsv"), gen)
            recs = embrun(embrun_bin, plan_path, 2, threads, tmp, name + "-check",
                          ["--data", f"{kind}:{os.path.join(tmp, name + '.tsv')}",
                           "--report-every", "1"])
            embc_losses = [r["loss"] for r in recs if r["event"] == "train"]
            net = models[name](model)
            net.load(ckpt)
            opts = net.optimizers(model)
            torch_losses = [train_step(torch, net, opts, check) for _ in range(2)]
            diff = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(embc_losses, torch_losses))
            print(f"check: losses of 2 steps on one batch: embc {embc_losses[0]:.6f} "
                  f"{embc_losses[1]:.6f}, PyTorch {torch_losses[0]:.6f} {torch_losses[1]:.6f} "
                  f"(max rel diff {diff:.1e}{'' if diff < 1e-3 else ': MISMATCH'})", flush=True)

            # Throughput: embrun on synthetic data (its batches are made by
            # --threads prefetch workers during training, on the same cores).
            recs = embrun(embrun_bin, plan_path, warm + steps, threads, tmp, name,
                          ["--report-every", str(warm)])
            embc_rate = embc_samples_per_s(recs, warm, batch)

            net = models[name](model)
            net.load(ckpt)
            opts = net.optimizers(model)
            pool = synthetic_batches(torch, name, model, batch, 8, gen)
            for i in range(warm):
                train_step(torch, net, opts, pool[i % len(pool)])
            t0 = time.perf_counter()
            for i in range(steps):
                train_step(torch, net, opts, pool[i % len(pool)])
            torch_rate = steps * batch / (time.perf_counter() - t0)
            print(f"samples/s: embc {embc_rate:,.0f}, PyTorch {torch_rate:,.0f}, "
                  f"embc/PyTorch {embc_rate / torch_rate:.2f}", flush=True)

            # embc alone: packed vs unpacked, fused vs unfused, with --profile.
            prof_steps = max(10, steps // 2)
            variants = {"default": []}
            for flag in ("--no-pack", "--no-fuse"):
                if flag in flags:
                    variants[flag] = [flag]
            profiles, plans = {}, {"default": plan}
            for tag, vflags in variants.items():
                path = plan_path
                if vflags:
                    path = os.path.join(tmp, f"{name}{vflags[0]}.plan")
                    plans[tag] = compile_plan(embc_bin, model_path, path, vflags)
                profiles[tag] = profile_of(embrun(embrun_bin, path, prof_steps + 1, threads, tmp,
                                                  f"{name}-prof{tag}", ["--profile"]))
            d = profiles["default"]
            for flag, what, key, done in (
                    ("--no-pack", "update (optimizer step)", "update_ms", "packed"),
                    ("--no-fuse", "forward+backward", None, "fused")):
                ms = lambda pr: pr[key] if key else pr["forward_ms"] + pr["backward_ms"]
                if flag in profiles:
                    print(f"{what}: default {ms(d):.4g} ms/step, {flag} "
                          f"{ms(profiles[flag]):.4g} ms/step, speed-up "
                          f"{ms(profiles[flag]) / ms(d):.2f}x", flush=True)
                else:
                    print(f"{what}: {ms(d):.4g} ms/step; embc has no {flag} yet, so the "
                          f"{done} and un{done} plans are the same plan", flush=True)
            fused_update = {tag: sum(o["ms_per_step"] for o in pr["ops"]
                                     if o["op"] == "embedding_update")
                            for tag, pr in profiles.items()}
            if any(fused_update.values()):
                # Fused plans update the tables inside the backward pass.
                print("  tables are updated in the step by embedding_update: " + ", ".join(
                    f"{tag} {v:.4g} ms/step" for tag, v in fused_update.items()))
            print(f"step in kernels: {d['step_ms']:.4g} ms (forward {d['forward_ms']:.4g}, "
                  f"backward {d['backward_ms']:.4g}, update {d['update_ms']:.4g})")

            # Fraction of the hardware limit.
            known = [o for o in d["ops"] if o["gb_per_s"] > 0]
            if known:
                moved = sum(o["bytes_per_step"] for o in known)
                ms = sum(o["ms_per_step"] for o in known)
                gbs = moved / (ms / 1e3) / 1e9
                print(f"memory: kernels with a byte estimate move {moved / 1e6:.1f} MB/step at "
                      f"{gbs:.2f} GB/s = {gbs / hw['triad_gbs']:.1%} of the triad "
                      f"bandwidth; per op:")
                for o in sorted(known, key=lambda o: -o["ms_per_step"]):
                    print(f"  {o['phase']:6} {o['op']:24} {o['gb_per_s']:8.2f} GB/s "
                          f"{o['gb_per_s'] / hw['triad_gbs']:7.1%}")
            else:
                print("memory: the plan has no byte estimates (Kernel::bytes is 0), so no "
                      "achieved GB/s")
            for tag, pr in profiles.items():
                flops = gemm_flops_per_step(plans[tag])
                gemm_ms = sum(o["ms_per_step"] for o in pr["ops"] if o["op"] in flops)
                if not flops or gemm_ms <= 0:
                    print(f"GEMM ({tag} plan): no dense layers")
                    continue
                gf = sum(flops.values()) / (gemm_ms / 1e3) / 1e9
                print(f"GEMM ({tag} plan): {sum(flops.values()) / 1e9:.3f} GFLOP/step in "
                      f"{', '.join(sorted(flops))}, {gemm_ms:.3f} ms/step = {gf:.1f} GFLOP/s "
                      f"= {gf / hw['sgemm_gflops']:.1%} of sgemm", flush=True)
            print(flush=True)
            rows.append((name, batch, embc_rate, torch_rate))

    print("| model | batch | threads | embc samples/s | PyTorch samples/s | embc/PyTorch |")
    print("|---|---|---|---|---|---|")
    for name, batch, e, t in rows:
        print(f"| {name} | {batch} | {threads} | {e:,.0f} | {t:,.0f} | {e / t:.2f} |")


if __name__ == "__main__":
    main()
