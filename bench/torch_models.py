"""PyTorch eager twins of the example models, their optimizers and batches.

The baseline of issue 18 is what a PyTorch user writes for the same model:
stock modules and optimizers where PyTorch has them (nn.Linear,
F.embedding_bag with sparse gradients, torch.optim.Adam / Adagrad / SGD), the
update by hand where it has none (row-wise Adagrad, lazily decayed sparse
SGD). To be a fair comparison it must also compute what embc computes, so
each twin

- reads its structure from the model file (layer inputs in the file's order,
  pooling, hotness, activations) and asserts the parts it does not model;
- registers every tensor under embc's checkpoint name (`table/T`,
  `param/LAYER_w<i>` stored in x out, `param/LAYER_b<i>`) and loads embrun's
  initial weights (`embrun --steps 0 --save DIR`); load() fails unless the
  names and shapes match exactly;
- uses the model's optimizers with embc's formulas (docs/training.md).

cpu_vs_pytorch.py checks each twin against embrun (two training steps on the
same data, same losses) and times both; cpu_threads.py times them at every
thread count. Batches are dicts {feature: dense tensor | (ids, offsets)} plus
a label tensor.
"""
import functools
import json
import math
import operator
import os
import struct
import time
import warnings

import harness

np = harness.require("numpy", [["numpy"]])
torch = harness.require("torch", harness.TORCH_PIP)
nn, F = torch.nn, torch.nn.functional
# Adagrad's sparse update warns once about disabled invariant checks.
warnings.filterwarnings("ignore", message="Sparse invariant checks")

ACTIVATIONS = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh, "none": None}


# --- The twins ----------------------------------------------------------------

class Twin(nn.Module):
    """What every twin shares: one f32 weight per embc table (pooled with
    F.embedding_bag as each feature asks), dense layers registered under
    embc's parameter names, loading, the optimizers and the loss."""

    def __init__(self, model):
        super().__init__()
        training = model["training"]
        for key, plain in (("precision", "fp32"), ("grad_accumulation", 1),
                           ("grad_clip_norm", 0), ("warmup_steps", 0),
                           ("lr_schedule", "constant")):
            assert training.get(key, plain) == plain, f"the twins do not model training.{key}"
        self.model = model
        self.features = {f["name"]: f for f in model["features"]}
        self.layers = {l["name"]: l for l in model["layers"]}
        self.table_specs = {t["name"]: t for t in model["embeddings"]}
        self.tables = {n: nn.Parameter(torch.zeros(t["rows"], t["dim"]))
                       for n, t in self.table_specs.items()}
        for n, p in self.tables.items():  # a ParameterDict would refuse a table named "items"
            self.register_parameter("table_" + n, p)
        # checkpoint name -> (tensor, stored transposed in the checkpoint[,
        # the rows of the tensor it is: a slice])
        self.ckpt = {f"table/{n}": (p, False) for n, p in self.tables.items()}

    # Building blocks.

    def layer(self, name, kind, **expect):
        """The model file's layer `name`, checked to be a `kind` with the
        given field values (defaults as in docs/model-format.md)."""
        layer = self.layers[name]
        assert layer["type"] == kind, f"layer {name} is {layer['type']}, the twin expects {kind}"
        for key, (value, default) in expect.items():
            assert layer.get(key, default) == value, f"layer {name}: {key} is not {value}"
        return layer

    def width(self, name):
        f = self.features[name]
        return f["dim"] if f["type"] == "dense" else self.table_specs[f["table"]]["dim"]

    def linear(self, name, i, n_in, n_out, bias=True):
        """nn.Linear holding embc's NAME_w<i> (n_in x n_out: y = x w + b) and NAME_b<i>."""
        lin = nn.Linear(n_in, n_out, bias=bias)
        self.ckpt[f"param/{name}_w{i}"] = (lin.weight, True)
        if bias:
            self.ckpt[f"param/{name}_b{i}"] = (lin.bias, False)
        return lin

    def mlp(self, name, n_in):
        """An `mlp` layer: Linear + activation per size, `final_activation`
        after the last (default: `activation`, itself default relu)."""
        layer = self.layer(name, "mlp")
        act = layer.get("activation", "relu")
        final = layer.get("final_activation", act)
        mods = []
        for i, size in enumerate(layer["sizes"]):
            mods.append(self.linear(name, i, n_in, size, layer.get("bias", True)))
            a = ACTIVATIONS[act if i + 1 < len(layer["sizes"]) else final]
            if a:
                mods.append(a())
            n_in = size
        return nn.Sequential(*mods)

    def dense(self, name, n_in):
        """A `dense` layer (default activation none)."""
        layer = self.layer(name, "dense")
        mods = [self.linear(name, 0, n_in, layer["size"], layer.get("bias", True))]
        a = ACTIVATIONS[layer.get("activation", "none")]
        return nn.Sequential(*mods, *([a()] if a else []))

    def add_bias(self, name, width):
        """The learnable bias of an `add` layer with "bias": true (NAME_b0)."""
        self.layer(name, "add", bias=(True, False))
        p = nn.Parameter(torch.zeros(width))
        self.ckpt[f"param/{name}_b0"] = (p, False)
        return p

    def pool(self, x, name):
        """Sparse feature `name` pooled over its bags: sum, mean (an empty bag
        gives zeros, as embc's lookup) or max."""
        f = self.features[name]
        assert not f.get("weighted", False), "the twins do not model weighted features"
        ids, offsets = x[name]
        return F.embedding_bag(ids, self.tables[f["table"]], offsets,
                               mode=f.get("pooling", "sum"), sparse=True)

    def inputs(self, x, names):
        """The values of features `names` in order: dense as given, sparse pooled."""
        return [x[n] if self.features[n]["type"] == "dense" else self.pool(x, n) for n in names]

    # Weights, optimizers, loss.

    def load(self, ckpt):
        """Copies embrun's tensors in; every `param/` and `table/` tensor of
        the checkpoint must have exactly one twin tensor of the same shape."""
        names = {n for n in ckpt if n.startswith(("param/", "table/"))}
        if names != set(self.ckpt):
            raise ValueError("checkpoint and twin differ: only in the checkpoint "
                             f"{sorted(names - set(self.ckpt))}, only in the twin "
                             f"{sorted(set(self.ckpt) - names)}")
        with torch.no_grad():
            for name, (p, transposed, *rows) in self.ckpt.items():
                src = torch.from_numpy(ckpt[name])
                src = src.t() if transposed else src
                dst = p[rows[0]] if rows else p  # a block of rows of a fused tensor
                assert dst.shape == src.shape, f"{name}: twin {tuple(dst.shape)}, checkpoint {tuple(src.shape)}"
                dst.copy_(src)

    def optimizers(self):
        """The model's dense optimizer over every non-table tensor, and one
        sparse optimizer per distinct table optimizer (a table's own
        `optimizer` overrides `optimizer.embedding`)."""
        opt = self.model["optimizer"]
        tables = {id(p) for p in self.tables.values()}
        dense = [p for p in self.parameters() if id(p) not in tables]
        opts = [dense_optimizer(opt["dense"], dense)] if dense else []
        groups = {}
        for name, t in self.table_specs.items():
            spec = t.get("optimizer", opt["embedding"])
            groups.setdefault(json.dumps(spec, sort_keys=True), (spec, []))[1].append(self.tables[name])
        return opts + [table_optimizer(spec, params) for spec, params in groups.values()]

    def loss(self, pred, label):
        """embc's losses are means over the batch."""
        kind = self.model["loss"]["type"]
        if kind == "bce_with_logits":
            return F.binary_cross_entropy_with_logits(pred, label)
        if kind == "mse":
            return F.mse_loss(pred, label)
        if kind == "softmax_ce":
            return F.cross_entropy(pred, label.long())
        raise NotImplementedError(f"loss {kind}")


class DLRM(Twin):
    """examples/dlrm_small.json: bottom MLP on the dense features, one bag per
    sparse feature, pairwise dots of [bottom, bags...] (i < j, row-major: the
    CPU kernel's order) after the bottom output, then the top MLP to one logit."""

    def __init__(self, model):
        super().__init__(model)
        inter = self.layer("interaction", "dot_interaction", keep_first=(True, True),
                           self_interaction=(False, False))
        bottom = self.layer("bottom", "mlp")
        assert inter["inputs"][0] == "bottom" and self.layer("top", "mlp")["input"] == "interaction"
        self.dense_in, self.sparse = bottom["input"], inter["inputs"][1:]
        self.bottom = self.mlp("bottom", self.width(self.dense_in))
        d, f = bottom["sizes"][-1], len(inter["inputs"])
        self.top = self.mlp("top", d + f * (f - 1) // 2)
        self.register_buffer("pairs", torch.triu_indices(f, f, offset=1))

    def forward(self, x):
        b = self.bottom(x[self.dense_in])
        t = torch.stack([b] + self.inputs(x, self.sparse), dim=1)
        z = torch.bmm(t, t.transpose(1, 2))[:, self.pairs[0], self.pairs[1]]
        return self.top(torch.cat([b, z], dim=1)).squeeze(1)


class DCN(Twin):
    """examples/dcn.json, DCN-v2 parallel: x0 = concat of the `x0` inputs in
    the file's order (dense first); cross layer l: x_{l+1} = x0 * (x_l W_l +
    b_l) + x_l, full-rank W (embc's emb.cross); the deep MLP on x0 (relu after
    every layer); logit = dense(concat(cross, deep))."""

    def __init__(self, model):
        super().__init__(model)
        self.x0 = self.layer("x0", "concat")["inputs"]
        cross = self.layer("cross", "cross")
        deep = self.layer("deep", "mlp")
        assert cross["input"] == "x0" and deep["input"] == "x0"
        assert self.layer("stack", "concat")["inputs"] == ["cross", "deep"]
        assert self.layer("logit", "dense")["input"] == "stack"
        width = sum(self.width(n) for n in self.x0)
        self.cross = nn.ModuleList(self.linear("cross", i, width, width)
                                   for i in range(cross.get("num_layers", 1)))
        self.deep = self.mlp("deep", width)
        self.logit = self.dense("logit", width + deep["sizes"][-1])

    def forward(self, x):
        x0 = torch.cat(self.inputs(x, self.x0), dim=1)
        xl = x0
        for lin in self.cross:
            xl = x0 * lin(xl) + xl
        return self.logit(torch.cat([xl, self.deep(x0)], dim=1)).squeeze(1)


class WideDeep(Twin):
    """examples/wide_deep.json: wide = the sum of the W bags (dim-1 tables,
    their own SGD); deep = MLP on concat(dense, C bags); logit = wide + deep +
    a global bias (the `add` layer's bias), added in that order."""

    def __init__(self, model):
        super().__init__(model)
        self.wide = self.layer("wide", "add", bias=(False, False))["inputs"]
        self.deep_in = self.layer("deep_in", "concat")["inputs"]
        assert self.layer("deep", "mlp")["input"] == "deep_in"
        assert self.layer("logit", "add")["inputs"] == ["wide", "deep"]
        self.deep = self.mlp("deep", sum(self.width(n) for n in self.deep_in))
        self.bias = self.add_bias("logit", 1)

    def forward(self, x):
        wide = functools.reduce(operator.add, self.inputs(x, self.wide))
        deep = self.deep(torch.cat(self.inputs(x, self.deep_in), dim=1))
        return (wide + deep + self.bias).squeeze(1)


class TwoTower(Twin):
    """examples/two_tower.json: each tower is an MLP on the concat of its
    features (user: user_id sum + user_hist mean; item: item_id sum +
    item_genre mean; items is one table for user_hist and item_id); the
    logit is the dot product of the two towers."""

    def __init__(self, model):
        super().__init__(model)
        assert self.layer("score", "dot")["inputs"] == ["user_tower", "item_tower"]
        self.concats, towers = {}, {}
        for side in ("user", "item"):
            assert self.layer(f"{side}_tower", "mlp")["input"] == f"{side}_in"
            self.concats[side] = self.layer(f"{side}_in", "concat")["inputs"]
            towers[side] = self.mlp(f"{side}_tower", sum(self.width(n) for n in self.concats[side]))
        self.towers = nn.ModuleDict(towers)

    def tower(self, x, side):
        return self.towers[side](torch.cat(self.inputs(x, self.concats[side]), dim=1))

    def forward(self, x):
        return (self.tower(x, "user") * self.tower(x, "item")).sum(1)


class MF(Twin):
    """examples/mf_movielens.json: <user, item> + user_bias + item_bias + a
    global bias, MSE; tables by lazily decayed SGD, the bias by SGD."""

    def __init__(self, model):
        super().__init__(model)
        self.dot = self.layer("affinity", "dot")["inputs"]
        pred = self.layer("prediction", "add")["inputs"]
        assert pred[0] == "affinity"
        self.biases = pred[1:]
        self.bias = self.add_bias("prediction", 1)

    def forward(self, x):
        u, i = self.inputs(x, self.dot)
        out = (u * i).sum(1)
        for b in self.inputs(x, self.biases):
            out = out + b.squeeze(1)
        return out + self.bias


def gelu_tanh(x):
    """embc's gelu: the tanh approximation."""
    return F.gelu(x, approximate="tanh")


class Encoder(Twin):
    """examples/transformer_layer.json: a sequence feature's word vectors
    plus its learned positions (zeros past each sequence's length, as embc's
    lookup), `encoder` layers as nn.TransformerEncoderLayer (pre- or
    post-norm, GELU's tanh approximation, padding masked, the layer's
    dropout on the attention weights, the residual branches and the FFN, as
    embc's) and,
    for pre-norm, a final nn.LayerNorm; a masked mean over each sequence's
    positions; a dense layer of class logits. embc's Q, K, V weights are the
    blocks of in_proj_weight; its key projection has no bias, so the twin's
    key bias stays at zero (its gradient is zero: the softmax cancels it)."""

    def __init__(self, model):
        super().__init__(model)
        enc = next(l for l in model["layers"] if l["type"] == "encoder")
        # A tied head scores the rows of the word table itself (F.linear by
        # the table): no weights of its own.
        spec = next(l for l in model["layers"] if l["name"] == model["loss"]["input"])
        self.tied = spec["type"] == "tied"
        head = spec if self.tied else self.layer(model["loss"]["input"], "dense",
                                                 activation=("none", "none"))
        # A token loss (gpt_mini, bert_mini_mlm) reads the encoder's positions
        # through the head; a sequence classifier pools them first.
        self.objective = model["loss"]["type"]
        self.token = self.objective in ("next_token", "masked_token")
        if self.token:
            assert head["input"] == enc["name"]
            assert enc.get("causal", False) == (self.objective == "next_token")
        else:
            pool = next(l for l in model["layers"] if l["type"] == "sequence_pool")
            assert pool["input"] == enc["name"] and head["input"] == pool["name"]
            assert pool.get("mode", "mean") == "mean", "the twin pools by mean"
            assert not enc.get("causal", False)
        self.causal = enc.get("causal", False)
        self.feature = self.features[enc["input"]]
        assert self.feature["type"] == "sequence"
        d = self.table_specs[self.feature["table"]]["dim"]
        heads, ffn = enc.get("heads", 1), enc.get("ffn", 4 * d)
        pre = enc.get("norm", "pre") == "pre"
        self.pos = None
        if self.feature.get("positions", "none") == "learned":
            self.pos = nn.Parameter(torch.zeros(self.feature["max_len"], d))
            self.ckpt[f"param/{self.feature['name']}_positions"] = (self.pos, False)
        self.blocks = nn.ModuleList()
        for i in range(enc.get("layers", 1)):
            blk = nn.TransformerEncoderLayer(d, heads, ffn, dropout=enc.get("dropout", 0.0),
                                             activation=gelu_tanh, batch_first=True,
                                             norm_first=pre, layer_norm_eps=enc.get("eps", 1e-5))
            with torch.no_grad():
                blk.self_attn.in_proj_bias.zero_()
            at = f"param/{enc['name']}_l{i}_"
            attn = blk.self_attn
            for j, part in enumerate("qkv"):
                self.ckpt[at + "w" + part] = (attn.in_proj_weight, True, slice(j * d, (j + 1) * d))
                if part != "k":
                    self.ckpt[at + "b" + part] = (attn.in_proj_bias, False, slice(j * d, (j + 1) * d))
            for part, lin in (("o", attn.out_proj), ("ffn1", blk.linear1), ("ffn2", blk.linear2)):
                self.ckpt[at + "w" + part] = (lin.weight, True)
                self.ckpt[at + "b" + part] = (lin.bias, False)
            for part, norm in (("ln1", blk.norm1), ("ln2", blk.norm2)):
                self.ckpt[at + part + "_gamma"] = (norm.weight, False)
                self.ckpt[at + part + "_beta"] = (norm.bias, False)
            self.blocks.append(blk)
        self.final = None
        if pre:
            self.final = nn.LayerNorm(d, eps=enc.get("eps", 1e-5))
            self.ckpt[f"param/{enc['name']}_final_gamma"] = (self.final.weight, False)
            self.ckpt[f"param/{enc['name']}_final_beta"] = (self.final.bias, False)
        if self.tied:
            assert head["table"] == self.feature["table"]
            self.head = lambda h: F.linear(h, self.tables[head["table"]])
        else:
            self.head = self.dense(head["name"], d)

    def forward(self, x):
        ids, lengths = x[self.feature["name"]]  # padded B x L, lengths B
        L = ids.shape[1]
        valid = torch.arange(L)[None, :] < lengths[:, None]
        # A tied table also gets the head's dense gradient: no sparse one.
        h = F.embedding(ids, self.tables[self.feature["table"]], sparse=not self.tied)
        if self.pos is not None:
            h = h + self.pos[:L]
        h = h * valid.unsqueeze(2)
        # Boolean, as the padding mask (mixed mask types take a slow path).
        causal = torch.triu(torch.ones(L, L, dtype=torch.bool), 1) if self.causal else None
        for blk in self.blocks:
            h = blk(h, src_mask=causal, src_key_padding_mask=~valid, is_causal=self.causal)
        if self.final is not None:
            h = self.final(h)
        if not self.token:
            pooled = (h * valid.unsqueeze(2)).sum(1) / lengths.unsqueeze(1)
            return self.head(pooled)
        if self.objective == "next_token":
            # Every position but each sequence's last predicts the next id.
            targets = torch.full_like(ids, -1)
            targets[:, :-1] = torch.where(valid[:, 1:], ids[:, 1:], -1)
            return self.head(h), targets
        # Masked tokens: the batch carries the targets (x["targets"]); the
        # head runs at the masked positions only, as embc's
        # -emb-select-targets does (a PyTorch user gathers them the same way).
        targets = x["targets"]
        chosen = targets >= 0
        return self.head(h[chosen]), targets[chosen], chosen.nonzero()[:, 0], targets.shape[0]

    def loss(self, pred, label):
        """Token losses: each sequence's mean cross-entropy over its
        targets, averaged over the batch (docs/model-format.md)."""
        if not self.token:
            return super().loss(pred, label)
        if self.objective == "next_token":
            logits, targets = pred
            rows = targets >= 0
            ce = F.cross_entropy(logits[rows], targets[rows], reduction="none")
            sequence = rows.nonzero()[:, 0]
            batch = targets.shape[0]
        else:
            logits, chosen, sequence, batch = pred
            ce = F.cross_entropy(logits, chosen, reduction="none")
        sums = torch.zeros(batch).index_add_(0, sequence, ce)
        counts = torch.zeros(batch).index_add_(0, sequence, torch.ones_like(ce))
        return (sums / counts.clamp(min=1)).sum() / batch


# Twins by example file name (examples/NAME.json).
MODELS = {"dlrm_small": DLRM, "dcn": DCN, "wide_deep": WideDeep, "two_tower": TwoTower,
          "mf_movielens": MF, "transformer_layer": Encoder, "gpt_mini": Encoder,
          "bert_mini_mlm": Encoder}


def twin(name, model, ckpt):
    """The twin of examples/NAME.json with embrun's weights `ckpt` loaded,
    and its optimizers."""
    net = MODELS[name](model)
    net.load(ckpt)
    return net, net.optimizers()


# --- Optimizers ---------------------------------------------------------------

def dense_optimizer(spec, params):
    """embc's dense optimizers that torch.optim has with embc's formula:
    adam (embc's coupled weight decay is torch's weight_decay; torch divides
    by sqrt(v)/sqrt(1-b2^t) + eps, the same as sqrt(vh) + eps) and sgd."""
    kind, lr, wd = spec["type"], spec["lr"], spec.get("weight_decay", 0.0)
    if kind == "adam":
        return torch.optim.Adam(params, lr=lr, betas=(spec.get("beta1", 0.9), spec.get("beta2", 0.999)),
                                eps=spec.get("eps", 1e-8), weight_decay=wd)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=spec.get("momentum", 0.0), weight_decay=wd)
    raise NotImplementedError(f"dense optimizer {kind}")


def table_optimizer(spec, params):
    """A sparse-gradient optimizer for tables with embc's update_table formula
    on the touched rows (duplicates summed first, as coalesce_rows does):
    sgd (torch.optim.SGD; LazySgd with lazy weight decay, which torch refuses
    on sparse gradients), adagrad (torch.optim.Adagrad: a starts at
    initial_accumulator, a += g^2, w -= lr g / (sqrt(a) + eps)) and
    rowwise_adagrad (RowwiseAdagrad)."""
    kind, lr = spec["type"], spec["lr"]
    wd = spec.get("weight_decay", 0.0)
    eps, acc0 = spec.get("eps", 1e-8), spec.get("initial_accumulator", 0.0)
    assert not wd or spec.get("weight_decay_mode") == "lazy", "the twins model lazy table decay only"
    if kind == "sgd" and spec.get("momentum", 0.0) == 0:
        return LazySgd(params, lr, wd) if wd else torch.optim.SGD(params, lr=lr)
    if kind == "adagrad" and not wd:
        return torch.optim.Adagrad(params, lr=lr, eps=eps, initial_accumulator_value=acc0)
    if kind == "rowwise_adagrad" and not wd:
        return RowwiseAdagrad(params, lr, eps, acc0)
    raise NotImplementedError(f"table optimizer {spec}")


class SparseRowOptimizer:
    """Base of the hand-written table updates: per table, the touched rows
    and their summed gradient rows."""

    def __init__(self, params):
        self.params = list(params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for k, p in enumerate(self.params):
            if p.grad.is_sparse:
                g = p.grad.coalesce()
                self.update(k, p, g.indices()[0], g.values())
            else:  # a tied table: every row has a gradient
                self.update(k, p, torch.arange(p.shape[0]), p.grad)


class LazySgd(SparseRowOptimizer):
    """SGD with lazy weight decay, as embc's update_table: for the touched
    rows only, g += wd w; w -= lr g. torch.optim.SGD refuses weight decay on
    sparse gradients, so this is the update a PyTorch user writes by hand."""

    def __init__(self, params, lr, wd):
        super().__init__(params)
        self.lr, self.wd = lr, wd

    def update(self, k, w, rows, values):
        w.index_add_(0, rows, -self.lr * (values + self.wd * w[rows]))


class RowwiseAdagrad(SparseRowOptimizer):
    """Row-wise Adagrad, as embc's (and FBGEMM's) rowwise_adagrad: per touched
    row r a_r += mean(g_r^2); w_r -= lr g_r / (sqrt(a_r) + eps), a starting
    at initial_accumulator. PyTorch has no built-in one, so this is the update
    a PyTorch user writes by hand."""

    def __init__(self, params, lr, eps, initial_accumulator=0.0):
        super().__init__(params)
        self.lr, self.eps = lr, eps
        self.state = [torch.full((p.shape[0],), float(initial_accumulator)) for p in self.params]

    def update(self, k, w, rows, values):
        acc = self.state[k]
        acc.index_add_(0, rows, values.pow(2).mean(dim=1))
        scale = self.lr / (acc[rows].sqrt() + self.eps)
        w.index_add_(0, rows, -scale.unsqueeze(1) * values)


# --- Training -----------------------------------------------------------------

def train_step(net, opts, batch):
    """One optimizer step on `batch`; returns the loss before the update."""
    x, label = batch
    for o in opts:
        o.zero_grad()
    loss = net.loss(net(x), label)
    loss.backward()
    for o in opts:
        o.step()
    return float(loss.detach())


def batch_rows(batch):
    """The examples of a batch: its labels, or its first feature's rows."""
    x, label = batch
    if label is not None:
        return len(label)
    first = next(iter(x.values()))
    return len(first[1]) if isinstance(first, tuple) else len(first)


def samples_per_s(net, opts, pool, warm, steps):
    """Training samples/s of `steps` steps over the batch pool (cycled) after
    `warm` warm-up steps; the batches exist already, so only training is timed."""
    for i in range(warm):
        train_step(net, opts, pool[i % len(pool)])
    t0 = time.perf_counter()
    for i in range(steps):
        train_step(net, opts, pool[i % len(pool)])
    return steps * batch_rows(pool[0]) / (time.perf_counter() - t0)


# --- Masked tokens -------------------------------------------------------------

# mix64 and hash_of (CounterRandom.h) are the synthetic data's, below.
MASK_TAG = 0x4D41534B5EED0002   # runtime/include/embc/runtime/cpu/MaskKernels.h
MASK_BELOW, RANDOM_BELOW = 13421773, 15099494


def hash32(x):
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    return x ^ (x >> 16)


def mask_word(key, index):
    """DropoutKernels.h dropout::word of global element `index`."""
    k = mix64((key + (index >> 32)) & M64)
    return hash32(hash32((index & 0xFFFFFFFF) ^ (k & 0xFFFFFFFF)) ^ (k >> 32))


def mask_count(n, rate):
    return 0 if n <= 0 else min(max(int(math.floor(n * rate + 0.5)), 1), n)


def embc_masks(ids, lengths, max_len, rate, mask_id, vocab, seed, step):
    """embrun's masks of a batch at training step `step` (MaskKernels.h):
    (masked ids, targets), both B x (padded length), targets -1 where none."""
    key = hash_of(seed, MASK_TAG, 0, step)
    choose, replace, random = key, mix64(key ^ 1), mix64(key ^ 2)
    masked, targets = ids.clone(), torch.full_like(ids, -1)
    for b, n in enumerate(lengths.tolist()):
        first = b * max_len
        ranked = sorted(range(n), key=lambda l: (mask_word(choose, first + l), l))
        for l in ranked[:mask_count(n, rate)]:
            targets[b, l] = ids[b, l]
            r = mask_word(replace, first + l) >> 8
            if r < MASK_BELOW:
                masked[b, l] = mask_id
            elif r < RANDOM_BELOW:
                masked[b, l] = (mask_word(random, first + l) * vocab) >> 32
    return masked, targets


def torch_masks(ids, lengths, rate, mask_id, vocab, gen):
    """BERT's masking with torch's generator (the timed batches: which
    positions does not change the cost)."""
    masked, targets = ids.clone(), torch.full_like(ids, -1)
    for b, n in enumerate(lengths.tolist()):
        chosen = torch.randperm(n, generator=gen)[:mask_count(n, rate)]
        targets[b, chosen] = ids[b, chosen]
        r = torch.rand(len(chosen), generator=gen)
        masked[b, chosen] = torch.where(
            r < 0.8, torch.full_like(chosen, mask_id),
            torch.where(r < 0.9, torch.randint(0, vocab, (len(chosen),), generator=gen),
                        ids[b, chosen]))
    return masked, targets


def with_masks(model, batch, masks):
    """A masked-token model's batch: its sequence's ids replaced by the
    masked ones and x["targets"]; other models' batches unchanged.
    masks(ids, lengths, rate, mask_id, vocab) gives (masked, targets)."""
    if model["loss"]["type"] != "masked_token":
        return batch
    x, label = batch
    name = model["loss"]["sequence"]
    f = next(f for f in model["features"] if f["name"] == name)
    ids, lengths = x[name]
    masked, targets = masks(ids, lengths, model["loss"].get("mask_rate", 0.15), f["vocab"],
                            f["vocab"])
    return {**x, name: (masked, lengths), "targets": targets}, label


# --- Batches --------------------------------------------------------------------

def column_of(feature):
    """The data column a feature reads (docs/model-format.md, `source`)."""
    return feature.get("source", feature["name"])


def columns_of(model):
    """{column: [features reading it]}, in feature order."""
    out = {}
    for f in model["features"]:
        out.setdefault(column_of(f), []).append(f)
    return out


def to_batch(model, columns, hash_ids):
    """A batch ({feature: tensor | (ids, offsets)}, label) from data columns
    (dense B x width, sparse (ids, offsets), label B). With hash_ids, hashed
    features get embc's emb.hash of their raw ids: XXH64 of the id's 8
    little-endian bytes, seed 0, mod the table's rows."""
    rows = {t["name"]: t["rows"] for t in model["embeddings"]}
    x, label = {}, None
    for f in model["features"]:
        col = columns[column_of(f)]
        if f["type"] == "label":
            label = col
        elif f["type"] == "sparse" and hash_ids and f.get("hash", False):
            ids, offsets = col
            x[f["name"]] = (hash_buckets(ids, rows[f["table"]]), offsets)
        elif f["type"] in ("dense", "sparse"):
            x[f["name"]] = col
        elif f["type"] == "sequence":
            x[f["name"]] = padded(*col)
        else:
            raise NotImplementedError(f"{f['type']} features")
    return x, label


def padded(ids, offsets):
    """Jagged sequences (ids, EmbeddingBag offsets) as a B x (longest) id
    matrix, zeros after each sequence, and the lengths: what a PyTorch user
    feeds an encoder (padding per batch, outside the timed step)."""
    ends = torch.cat([offsets[1:], torch.tensor([len(ids)])])
    lengths = ends - offsets
    out = torch.zeros(len(offsets), int(lengths.max()), dtype=torch.int64)
    for b, (start, n) in enumerate(zip(offsets.tolist(), lengths.tolist())):
        out[b, :n] = ids[start:start + n]
    return out, lengths


def classes_of(model):
    """The class count of a softmax_ce model: its logits layer's width."""
    layer = next(l for l in model["layers"] if l["name"] == model["loss"]["input"])
    return layer["size"] if layer["type"] == "dense" else layer["sizes"][-1]


def hash_buckets(ids, rows):
    xxhash = harness.require("xxhash", [["xxhash"]])
    return torch.tensor([xxhash.xxh64_intdigest(struct.pack("<q", int(i)), seed=0) % rows
                         for i in ids.tolist()], dtype=torch.int64)


def bag_offsets(lengths):
    """EmbeddingBag offsets (the start of each bag) of bag lengths."""
    return torch.cumsum(lengths, 0) - lengths


def random_batches(model, batch, count, gen):
    """`count` timing batches with the shapes embrun's synthetic data has:
    per data column dense N(0, 1); bags of 1..hotness ids (uniform lengths,
    as embrun's synthetic bags), ids uniform in the rows of the tables read
    through the column (hashed features: the bucket itself, which embc gets
    by hashing in the step); labels 0/1 (binary) or N(3, 1) (real)."""
    tables = {t["name"]: t["rows"] for t in model["embeddings"]}
    out = []
    for _ in range(count):
        columns = {}
        for col, feats in columns_of(model).items():
            f = feats[0]
            if f["type"] == "dense":
                columns[col] = torch.randn(batch, f["dim"], generator=gen)
            elif f["type"] == "sparse":
                lengths = torch.randint(1, f.get("hotness", 1) + 1, (batch,), generator=gen)
                rows = min(tables[g["table"]] for g in feats)
                ids = torch.randint(0, rows, (int(lengths.sum()),), generator=gen)
                columns[col] = (ids, bag_offsets(lengths))
            elif f["type"] == "sequence":
                lengths = torch.randint(1, f["max_len"] + 1, (batch,), generator=gen)
                ids = torch.randint(1, min(tables[f["table"]], f["vocab"]), (int(lengths.sum()),),
                                    generator=gen)
                columns[col] = (ids, bag_offsets(lengths))
            elif f["type"] == "label" and f.get("kind") == "class":
                columns[col] = torch.randint(0, classes_of(model), (batch,), generator=gen).float()
            elif f["type"] == "label" and f.get("kind", "binary") == "binary":
                columns[col] = torch.randint(0, 2, (batch,), generator=gen).float()
            elif f["type"] == "label" and f["kind"] == "real":
                columns[col] = 3 + torch.randn(batch, generator=gen)
            else:
                raise NotImplementedError(f"{f['type']} column {col}")
        out.append(with_masks(model, to_batch(model, columns, hash_ids=False),
                              lambda i, n, r, m, v: torch_masks(i, n, r, m, v, gen)))
    return out


# --- The equivalence check's data ----------------------------------------------

READERS = {
    "criteo": {"label", "dense"} | {f"I{i}" for i in range(1, 14)} | {f"C{i}" for i in range(1, 27)},
    "movielens": {"user", "item", "rating", "timestamp"},
}
READER_LABEL = {"criteo": ("label", "binary"), "movielens": ("rating", "real")}


def check_data(model, plan, batch, workdir, seed):
    """The data of the equivalence check: (embrun's --data arguments, [batch of
    step 1, batch of step 2], what it is).

    When a file reader has every column the model reads (docs/training.md),
    one batch is written as that file: both steps train on it (embrun in its
    epoch order, which a mean loss does not see). Otherwise the check runs on
    embrun's own synthetic batches 0 and 1, regenerated here
    (synthetic_columns), and says which columns no reader has."""
    rng = np.random.default_rng(seed)
    if any(f["type"] == "sequence" for f in model["features"]):
        path = os.path.join(workdir, model["name"] + "-check.txt")
        b = to_batch(model, write_text_lines(model, batch, path, rng), hash_ids=False)
        if model["loss"]["type"] == "masked_token":
            # Steps 1 and 2 mask the batch as embrun does (MaskKernels.h).
            seq = next(f for f in model["features"] if f["name"] == model["loss"]["sequence"])
            seed = plan["config"].get("seed", 0)
            steps = [with_masks(model, b, lambda i, n, r, m, v, s=s: embc_masks(
                i, n, seq["max_len"], r, m, v, seed, s)) for s in (1, 2)]
            # In file order: the masks are keyed by each example's place in the batch.
            return ["--data", f"text:{path}", "--no-shuffle"], steps, \
                "one batch of text lines in file order, 2 steps, embrun's masks recomputed in Python"
        kind = "label<TAB>text" if b[1] is not None else "text"
        return ["--data", f"text:{path}"], [b, b], f"one batch of {kind} lines, 2 steps"
    columns = set(columns_of(model))
    label = next(f for f in model["features"] if f["type"] == "label")
    missing = {}
    for reader, offered in READERS.items():
        missing[reader] = sorted(columns - offered)
        if READER_LABEL[reader] != (column_of(label), label.get("kind", "binary")):
            missing[reader].append(f"a {label.get('kind', 'binary')} label '{column_of(label)}'")
        if not missing[reader]:
            path = os.path.join(workdir, model["name"] + "-check." + reader)
            cols = {"criteo": write_criteo, "movielens": write_movielens}[reader](model, batch, path, rng)
            b = to_batch(model, cols, hash_ids=True)
            return ["--data", f"{reader}:{path}"], [b, b], f"one batch of {reader} data, 2 steps"
    why = "; ".join(f"{r} has no {', '.join(m[:4])}" + (f" (+{len(m) - 4} more)" if len(m) > 4 else "")
                    for r, m in missing.items())
    batches = [to_batch(model, synthetic_columns(plan, k * batch, batch), hash_ids=True)
               for k in range(2)]
    return [], batches, f"synthetic batches 0-1 regenerated in Python, no file reader fits: {why}"


def raw_id_bounds(model):
    """{column: exclusive bound of the raw ids written}: the smallest vocab
    of the features reading the column (readers refuse larger ids)."""
    bounds = {}
    for f in model["features"]:
        if f["type"] == "sparse":
            bounds[column_of(f)] = min(bounds.get(column_of(f), 2**32), f["vocab"])
    return bounds


def write_criteo(model, batch, path, rng):
    """One batch as Criteo TSV (label, I1..I13, C1..C26 as hex); returns its
    columns as embrun's criteo reader gives them: I as log(1 + x), ids raw."""
    bounds = raw_id_bounds(model)
    label = rng.integers(0, 2, batch)
    ints = rng.integers(0, 50, (batch, 13))
    ids = [rng.integers(0, bounds.get(f"C{c}", 2**32), batch) for c in range(1, 27)]
    with open(path, "w") as f:
        for b in range(batch):
            f.write("\t".join([str(label[b])] + [str(v) for v in ints[b]]
                              + [format(int(c[b]), "x") for c in ids]) + "\n")
    dense = torch.from_numpy(np.log1p(ints).astype(np.float32))
    offsets = torch.arange(batch)
    columns = {"label": torch.from_numpy(label.astype(np.float32)), "dense": dense}
    columns.update({f"I{i + 1}": dense[:, i:i + 1] for i in range(13)})
    columns.update({f"C{c + 1}": (torch.from_numpy(ids[c]), offsets) for c in range(26)})
    return columns


def write_text_lines(model, batch, path, rng):
    """One batch as `label<TAB>text` lines of 1..max_len words; returns the
    columns embrun's line reader gives: the words as ids of its vocabulary
    (by descending count, ties by first appearance, from 1; 0 is <unk>)."""
    seq = next(f for f in model["features"] if f["type"] == "sequence")
    labelled = any(f["type"] == "label" for f in model["features"])
    label = rng.integers(0, classes_of(model), batch) if labelled else None
    lines = [[f"w{int(w)}" for w in rng.zipf(1.3, rng.integers(1, seq["max_len"] + 1)) %
              min(5000, seq["vocab"] - 1)] for _ in range(batch)]
    with open(path, "w") as f:
        for b, words in enumerate(lines):
            f.write((f"{label[b]}\t" if labelled else "") + " ".join(words) + "\n")
    counts, first = {}, {}
    for w in (w for words in lines for w in words):
        first.setdefault(w, len(first))
        counts[w] = counts.get(w, 0) + 1
    ranked = sorted(counts, key=lambda w: (-counts[w], first[w]))
    assert len(ranked) < seq["vocab"], "the check's words must fit the vocabulary"
    ids = {w: i + 1 for i, w in enumerate(ranked)}
    flat = torch.tensor([ids[w] for words in lines for w in words], dtype=torch.int64)
    lengths = torch.tensor([len(words) for words in lines], dtype=torch.int64)
    columns = {column_of(seq): (flat, bag_offsets(lengths))}
    if labelled:
        label_column = column_of(next(f for f in model["features"] if f["type"] == "label"))
        columns[label_column] = torch.from_numpy(label.astype(np.float32))
    return columns


def write_movielens(model, batch, path, rng):
    """One batch as MovieLens TSV (user item rating timestamp); returns its
    columns as embrun's movielens reader gives them."""
    bounds = raw_id_bounds(model)
    user = rng.integers(0, bounds.get("user", 2**31), batch)
    item = rng.integers(0, bounds.get("item", 2**31), batch)
    rating = rng.integers(1, 6, batch)
    with open(path, "w") as f:
        for u, i, r in zip(user, item, rating):
            f.write(f"{u}\t{i}\t{r}\t881250949\n")
    offsets = torch.arange(batch)
    return {"user": (torch.from_numpy(user), offsets), "item": (torch.from_numpy(item), offsets),
            "rating": torch.from_numpy(rating.astype(np.float32)),
            "timestamp": torch.full((batch, 1), 881250949.0)}


# embrun's synthetic generator (runtime/lib/data/Synthetic.cpp and
# runtime/include/embc/runtime/data/CounterRandom.h), line for line, for the
# models no file reader can feed. Python floats are IEEE doubles and math
# calls the same libm, so the values come out bit for bit; when that file
# changes, this must follow (the check then reports a mismatch).
M64 = (1 << 64) - 1
TOPIC_TAG, DENSE_TAG, WEIGHT_TAG, BAG_TAG, ID_TAG, LATENT_TAG, _, LABEL_TAG, NOISE_TAG = range(1, 10)
SYNTH_TOPICS, SYNTH_VOCAB, SYNTH_SAME_TOPIC, SYNTH_LOGIT_SCALE, SYNTH_REAL_NOISE = 16, 10000, 0.75, 4.0, 0.1


def mix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def hash_of(seed, *words):
    h = mix64(seed ^ 0x2545F4914F6CDD1D)
    for w in words:
        h = mix64(h ^ mix64((w + 0x632BE59BD9B4E019) & M64))
    return h


def hash_name(name):
    h = 0xCBF29CE484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001B3) & M64
    return mix64(h)


def uniform01(h):
    return (h >> 11) * 2.0**-53


def standard_normal(h):
    u1 = ((mix64(h ^ 0x6A09E667F3BCC909) >> 11) + 1) * 2.0**-53
    u2 = uniform01(mix64(h ^ 0xBB67AE8584CAA73B))
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


def synthetic_columns(plan, first, count):
    """Examples first .. first+count-1 of embrun's synthetic training stream
    (batch n holds examples n*B ..) as data columns, for the plan's features
    (in the plan's input order, as embrun binds them)."""
    seed = plan["config"]["seed"] & M64
    specs = {}
    for inp in plan["inputs"]:
        s = specs.setdefault(inp["feature"], {"column": inp["source"] or inp["feature"]})
        if inp["role"] in ("dense", "ids", "label", "negatives"):
            s.update(role=inp["role"], width=inp["width"], vocab=inp["vocab"],
                     hotness=inp["hotness"], label_kind=inp["label_kind"])
        elif inp["role"] == "weights":
            raise NotImplementedError("weighted features")
    signal = 0
    for s in specs.values():
        assert s["role"] != "negatives", "the twins do not model negatives"
        s["key"] = hash_name(s["column"])
        s["vocab"] = s["vocab"] or SYNTH_VOCAB
        s["topics"] = min(SYNTH_TOPICS, s["vocab"])
        if s["role"] == "dense":
            w = [standard_normal(hash_of(seed, WEIGHT_TAG, s["key"], j)) for j in range(s["width"])]
            norm = 0.0
            for v in w:
                norm += v * v
            s["weights"] = [v / math.sqrt(norm) for v in w]
        if s["role"] == "ids":
            s["ids_of_topic"] = [(s["vocab"] - t + s["topics"] - 1) // s["topics"]
                                 for t in range(s["topics"])]
            s["log_range"] = [math.log(n + 1.0) for n in s["ids_of_topic"]]
        signal += s["role"] in ("dense", "ids")
    norm = 1.0 / math.sqrt(signal) if signal else 0.0

    values = {f: [] for f in specs}
    lengths = {f: [] for f in specs}
    for index in range(first, first + count):
        topic = hash_of(seed, TOPIC_TAG, index) % SYNTH_TOPICS
        total = 0.0
        for f, s in specs.items():
            if s["role"] == "dense":
                xs = [standard_normal(hash_of(seed, DENSE_TAG, s["key"], index, j))
                      for j in range(s["width"])]
                contribution = 0.0
                for w, v in zip(s["weights"], xs):
                    contribution += w * v
                values[f].append(xs)
                total += contribution
            elif s["role"] == "ids":
                bag = 1 + hash_of(seed, BAG_TAG, s["key"], index) % s["hotness"]
                latent = 0.0
                for k in range(bag):
                    h = hash_of(seed, ID_TAG, s["key"], index, k)
                    t = (topic % s["topics"] if uniform01(mix64(h ^ 1)) < SYNTH_SAME_TOPIC
                         else mix64(h ^ 2) % s["topics"])
                    x = math.exp(uniform01(mix64(h ^ 3)) * s["log_range"][t])
                    r = min(max(int(x) - 1, 0), s["ids_of_topic"][t] - 1)
                    i = r * s["topics"] + t
                    latent += standard_normal(hash_of(seed, LATENT_TAG, s["key"], i))
                    values[f].append(i)
                lengths[f].append(bag)
                total += latent / bag
        score = total * norm
        for f, s in specs.items():
            if s["role"] != "label":
                continue
            if s["label_kind"] == "real":
                values[f].append(score + SYNTH_REAL_NOISE * standard_normal(
                    hash_of(seed, NOISE_TAG, s["key"], index)))
            else:
                p = 1.0 / (1.0 + math.exp(-SYNTH_LOGIT_SCALE * score))
                values[f].append(1.0 if uniform01(hash_of(seed, LABEL_TAG, s["key"], index)) < p else 0.0)

    columns = {}
    for f, s in specs.items():
        if s["role"] == "ids":
            columns[s["column"]] = (torch.tensor(values[f], dtype=torch.int64),
                                    bag_offsets(torch.tensor(lengths[f], dtype=torch.int64)))
        else:
            columns[s["column"]] = torch.tensor(values[f], dtype=torch.float32)
    return columns
