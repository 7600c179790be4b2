"""What the CPU benchmark scripts share: installing what they need, running
embc and embrun, reading embrun's logs and checkpoints.

Kept apart from the scripts so that cpu_vs_pytorch.py and cpu_threads.py
measure embrun the same way (one definition of "samples/s, warm-up
excluded").
"""
import argparse
import contextlib
import importlib
import json
import os
import struct
import subprocess
import sys

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
    """Imports `module`, installing it with pip first when it is missing
    (each entry of pip_args is one way to install it, tried in order)."""
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


# --- The machine ----------------------------------------------------------------

def load_note():
    """The 1-minute load average before a run, with a warning when the
    machine is visibly busy: the figures assume nothing else runs (on a
    2-core machine one busy neighbour halves them, or worse)."""
    load = os.getloadavg()[0]
    note = f"load average {load:.2f}"
    if load >= 0.5:
        note += " (WARNING: something else is running; the figures will be low and noisy)"
    return note


@contextlib.contextmanager
def busy_competitor(on):
    """One competing busy process (a Python spin loop) while the block runs,
    when `on`: the figures must also hold on a machine others use."""
    if not on:
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


# --- embc and embrun ----------------------------------------------------------

def bench_args(description, steps_help, repeats_help):
    """An argument parser with the options the CPU benchmarks share: --build,
    --embrun, --steps (no default: each picks its own) and --repeats (3)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="build directory with bin/embc and bin/embrun")
    p.add_argument("--embrun", help="embrun to use (default: BUILD/bin/embrun)")
    p.add_argument("--steps", type=int, help=steps_help)
    p.add_argument("--repeats", type=int, default=3, help=repeats_help)
    return p


def binaries(build, embrun_override=None):
    """(embc, embrun) of a build directory; --embrun may name another embrun."""
    return (os.path.join(build, "bin", "embc"),
            embrun_override or os.path.join(build, "bin", "embrun"))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout[-2000:]}")
    return r.stdout


def embc_flags(embc):
    """The embc options this build has (--no-pack / --no-fuse arrive later)."""
    text = subprocess.run([embc, "--help-hidden"], capture_output=True, text=True).stdout
    return {f for f in ("--no-pack", "--no-fuse") if f in text}


def load_model(name):
    """(path, parsed JSON) of examples/NAME.json."""
    path = os.path.join(ROOT, "examples", name + ".json")
    with open(path) as f:
        return path, json.load(f)


def compile_plan(embc, model, out, flags=()):
    """Compiles `model` to the plan file `out`; returns the plan as JSON."""
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
    """Throughput between the first train record at or after step `warm`
    and the summary record. samples_per_s is cumulative (examples since the
    start over training time so far, evaluation excluded), so the training
    time up to step s is s * batch / samples_per_s, and the difference of
    two leaves out warm-up."""
    first = next(r for r in records if r["event"] == "train" and r["step"] >= warm)
    last = next(r for r in records if r["event"] == "summary")
    t0 = first["step"] * batch / first["samples_per_s"]
    t1 = last["step"] * batch / last["samples_per_s"]
    return (last["step"] - first["step"]) * batch / (t1 - t0)


def tuned_at(records):
    """The step at which embrun's CPU backend first chose its team size
    (its "cpu_team" record), 0 when it never did (one thread, a GPU, or
    EMBC_CPU_TUNE=0)."""
    return next((r["step"] for r in records if r["event"] == "cpu_team"), 0)


# Steps between train records: the finer, the closer the timed window
# starts to the end of the warm-up and of the team-size trial.
REPORT_STEPS = 10


# The shortest timed window worth reporting: tiny models (matrix
# factorisation, 90 us a step) need thousands of steps for it.
MIN_TIMED_SECONDS = 1.0


def embrun_rate(embrun_bin, plan, batch, warm, steps, threads, workdir, tag):
    """embrun's training samples/s on its synthetic data in the steady state:
    at least `steps` steps and MIN_TIMED_SECONDS timed, after `warm` warm-up
    steps (first steps touch the arena, start threads) and after the CPU
    backend has chosen its team size (TeamTuner: a few dozen steps at each
    candidate size, which a long run amortises and a short benchmark must
    leave out). Runs again, longer, when the first run left too little."""
    total = warm + steps
    for _ in range(3):
        records = embrun(embrun_bin, plan, total, threads, workdir, tag,
                         ["--report-every", str(REPORT_STEPS)])
        start = max(warm, tuned_at(records))
        start = -(-start // REPORT_STEPS) * REPORT_STEPS  # the next train record
        timed = total - start
        if timed > 0:
            rate = embc_samples_per_s(records, start, batch)
            seconds = timed * batch / rate
            if timed >= steps and seconds >= MIN_TIMED_SECONDS:
                return rate
            timed = max(steps, int(timed * MIN_TIMED_SECONDS / seconds * 1.2) + 1)
        else:
            timed = steps
        total = start + timed
    return embc_samples_per_s(records, start, batch)


def initial_checkpoint(embrun_bin, plan, directory, np):
    """embrun's initial weights (`--steps 0 --save DIR`) as {name: array}:
    what the PyTorch twin loads so both start from the same point."""
    run([embrun_bin, plan, "--steps", "0", "--save", directory])
    return read_safetensors(os.path.join(directory, "checkpoint.safetensors"), np)


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
