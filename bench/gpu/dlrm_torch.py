#!/usr/bin/env python3
"""The benchmark DLRM (bench/gpu/dlrm_mlperf_gpu.json) in plain PyTorch on
one GPU, the baseline of bench/gpu/run.sh; and a device-to-device copy, the
bandwidth yardstick.

The model is the JSON's: one sum-pooled bag per categorical feature (one id
each) over fp16 tables, the bottom MLP on the dense features, the pairwise
dot interaction of [bottom, bags...] (i < j) after the bottom output, the top
MLP to one logit, BCE with logits. Dense compute in bf16 under autocast with
f32 master weights (embc's training.precision bf16), SGD on the dense
weights, and row-wise Adagrad on the tables written by hand as a PyTorch user
would (PyTorch has none): per touched row r, duplicates summed, a_r +=
mean(g_r^2), w_r -= lr g_r / (sqrt(a_r) + eps), state f32, tables fp16.

--tables concat (default) keeps all tables in one fp16 tensor, rows offset
per table, so the lookup is one embedding_bag and the update one sparse
gradient (the stronger baseline); --tables separate has one per table.
--mode compile runs the dense part (MLPs, interaction, loss) through
torch.compile; the embedding bags stay eager (sparse gradients).

Batches: a pool of pre-generated batches on the GPU (dense N(0, 1),
labels 0/1); generating them is not timed. --ids synthetic (default) draws
each feature's ids as embrun's synthetic data does (runtime/lib/data/
Synthetic.cpp: one of 16 topics, then a Zipf-like rank r within the
topic's ids with P(r) ~ log((r + 2) / (r + 1)), id = 16 r + topic), so both
update the same number of rows with the same hot rows; --ids uniform draws
them uniformly (fewer repeats: the easier update).

Usage:
  dlrm_torch.py --model M.json [--mode eager|compile] [--tables concat|separate]
                [--ids synthetic|uniform] [--steps N] [--warmup W]   prints one JSON line
  dlrm_torch.py --copy [--bytes B]              device-to-device copy GB/s
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Dlrm(nn.Module):
    def __init__(self, model, tables_mode, device):
        super().__init__()
        layers = {l["name"]: l for l in model["layers"]}
        feats = {f["name"]: f for f in model["features"]}
        tables = {t["name"]: t for t in model["embeddings"]}
        bottom, inter, top = layers["bottom"], layers["interaction"], layers["top"]
        self.sparse = inter["inputs"][1:]
        self.rows = [tables[feats[s]["table"]]["rows"] for s in self.sparse]
        self.vocab = [feats[s].get("vocab", r) for s, r in zip(self.sparse, self.rows)]
        self.dim = tables[feats[self.sparse[0]]["table"]]["dim"]
        self.dense_dim = feats[bottom["input"]]["dim"]
        self.bottom = self.mlp(self.dense_dim, bottom["sizes"],
                               bottom.get("final_activation", "relu") == "relu")
        f = len(inter["inputs"])
        self.top = self.mlp(bottom["sizes"][-1] + f * (f - 1) // 2, top["sizes"],
                            top.get("final_activation", "relu") == "relu")
        self.register_buffer("pairs", torch.triu_indices(f, f, offset=1))
        self.tables_mode = tables_mode
        scale = lambda rows: 1.0 / max(rows, 1) ** 0.5
        if tables_mode == "concat":
            self.base = torch.tensor([0] + self.rows[:-1], device=device).cumsum(0)
            weight = torch.empty(sum(self.rows), self.dim, dtype=torch.float16, device=device)
            for b, r in zip(self.base.tolist(), self.rows):
                weight[b:b + r].uniform_(-scale(r), scale(r))
            self.weights = nn.ParameterList([nn.Parameter(weight)])
        else:
            self.weights = nn.ParameterList(
                nn.Parameter(torch.empty(r, self.dim, dtype=torch.float16, device=device)
                             .uniform_(-scale(r), scale(r))) for r in self.rows)

    @staticmethod
    def mlp(width, sizes, final_relu):
        layers = []
        for i, size in enumerate(sizes):
            layers.append(nn.Linear(width, size))
            if i + 1 < len(sizes) or final_relu:
                layers.append(nn.ReLU())
            width = size
        return nn.Sequential(*layers)

    def bags(self, ids):
        """ids: (B, features) int64 -> (B, features, dim) fp16 sums."""
        b, f = ids.shape
        if self.tables_mode == "concat":
            flat = (ids + self.base).reshape(-1)
            offsets = torch.arange(b * f, device=ids.device)
            return F.embedding_bag(flat, self.weights[0], offsets, mode="sum",
                                   sparse=True).view(b, f, self.dim)
        offsets = torch.arange(b, device=ids.device)
        return torch.stack([F.embedding_bag(ids[:, i], w, offsets, mode="sum", sparse=True)
                            for i, w in enumerate(self.weights)], dim=1)


def dense_part(net, dense, emb, label):
    """Everything after the lookups: bf16 autocast, f32 loss."""
    with torch.autocast("cuda", dtype=torch.bfloat16):
        x = net.bottom(dense)
        t = torch.cat([x.unsqueeze(1), emb.to(x.dtype)], dim=1)
        z = torch.bmm(t, t.transpose(1, 2))[:, net.pairs[0], net.pairs[1]]
        logit = net.top(torch.cat([x, z], dim=1)).squeeze(1)
    return F.binary_cross_entropy_with_logits(logit.float(), label)


class RowwiseAdagrad:
    def __init__(self, weights, lr, eps=1e-8):
        self.weights, self.lr, self.eps = list(weights), lr, eps
        self.state = [torch.zeros(w.shape[0], dtype=torch.float32, device=w.device)
                      for w in self.weights]

    def zero_grad(self):
        for w in self.weights:
            w.grad = None

    @torch.no_grad()
    def step(self):
        for w, acc in zip(self.weights, self.state):
            g = w.grad.coalesce()
            rows, values = g.indices()[0], g.values().float()
            acc.index_add_(0, rows, values.pow(2).mean(dim=1))
            scale = self.lr / (acc[rows].sqrt() + self.eps)
            w.index_add_(0, rows, (-scale.unsqueeze(1) * values).to(w.dtype))


SYNTHETIC_TOPICS = 16  # SyntheticGenerator::kTopics


def synthetic_ids(vocab, rows, batch, device, gen):
    """`batch` ids of a feature with `vocab` ids in a table of `rows`, drawn
    by embrun's synthetic law (SyntheticGenerator::sparseBag): a topic t,
    then r = floor(exp(u log(n_t + 1))) - 1 among the topic's n_t ids."""
    topics = min(SYNTHETIC_TOPICS, vocab)
    t = torch.randint(0, topics, (batch,), device=device, generator=gen)
    n = (vocab - t + topics - 1) // topics
    u = torch.rand(batch, device=device, generator=gen, dtype=torch.float64)
    r = torch.exp(u * torch.log(n.double() + 1.0)).floor().long() - 1
    r = torch.minimum(r.clamp(min=0), n - 1)
    return (r * topics + t) % rows


def batches(net, batch, count, device, gen, law):
    pool = []
    for _ in range(count):
        dense = torch.randn(batch, net.dense_dim, device=device, generator=gen)
        if law == "synthetic":
            ids = torch.stack([synthetic_ids(v, r, batch, device, gen)
                               for v, r in zip(net.vocab, net.rows)], dim=1)
        else:
            ids = torch.stack([torch.randint(0, r, (batch,), device=device, generator=gen)
                               for r in net.rows], dim=1)
        label = torch.randint(0, 2, (batch,), device=device, generator=gen).float()
        pool.append((dense, ids, label))
    return pool


def train(args):
    model = json.load(open(args.model))
    device = torch.device("cuda")
    torch.manual_seed(0)
    net = Dlrm(model, args.tables, device).to(device)
    batch = args.batch or model["training"]["batch_size"]
    opt = model["optimizer"]
    assert opt["dense"]["type"] == "sgd" and opt["embedding"]["type"] == "rowwise_adagrad"
    dense_params = list(net.bottom.parameters()) + list(net.top.parameters())
    try:
        sgd = torch.optim.SGD(dense_params, lr=opt["dense"]["lr"], fused=True)
    except (RuntimeError, TypeError):
        sgd = torch.optim.SGD(dense_params, lr=opt["dense"]["lr"], foreach=True)
    adagrad = RowwiseAdagrad(net.weights, opt["embedding"]["lr"])
    dense_fn = dense_part
    if args.mode == "compile":
        dense_fn = torch.compile(dense_part)
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    pool = batches(net, batch, 4, device, gen, args.ids)

    def step(i):
        dense, ids, label = pool[i % len(pool)]
        sgd.zero_grad(set_to_none=True)
        adagrad.zero_grad()
        loss = dense_fn(net, dense, net.bags(ids), label)
        loss.backward()
        sgd.step()
        adagrad.step()
        return loss

    t_compile = time.perf_counter()
    for i in range(args.warmup):
        step(i)
    torch.cuda.synchronize()
    warm_s = time.perf_counter() - t_compile
    start = time.perf_counter()
    for i in range(args.steps):
        loss = step(i)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    result = {"mode": args.mode, "tables": args.tables, "ids": args.ids, "batch": batch,
              "steps": args.steps,
              "step_ms": 1e3 * seconds / args.steps,
              "samples_per_s": batch * args.steps / seconds,
              "warmup_s": warm_s, "final_loss": float(loss),
              "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30,
              "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
    print(json.dumps(result), flush=True)


def copy_bandwidth(args):
    """GB/s of a device-to-device copy, counting bytes read plus written
    (the convention of embrun --profile's GB/s: bytes moved)."""
    n = args.bytes
    x = torch.empty(n, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    x.fill_(1)
    for _ in range(3):
        y.copy_(x)
    reps = 20
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(reps):
        y.copy_(x)
    end.record()
    end.synchronize()
    seconds = begin.elapsed_time(end) / 1e3
    print(json.dumps({"copy_bytes": n, "copy_gb_per_s": 2 * n * reps / seconds / 1e9,
                      "gpu": torch.cuda.get_device_name()}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model")
    ap.add_argument("--mode", choices=["eager", "compile"], default="eager")
    ap.add_argument("--tables", choices=["concat", "separate"], default="concat")
    ap.add_argument("--ids", choices=["synthetic", "uniform"], default="synthetic")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=0, help="overrides the model's batch size")
    ap.add_argument("--copy", action="store_true")
    ap.add_argument("--bytes", type=int, default=2 << 30)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("dlrm_torch.py: no CUDA device visible to PyTorch")
    if args.copy:
        copy_bandwidth(args)
    elif args.model:
        train(args)
    else:
        sys.exit("dlrm_torch.py: --model M.json or --copy")


if __name__ == "__main__":
    main()
