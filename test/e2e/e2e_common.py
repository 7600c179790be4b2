"""Helpers the end-to-end scripts share: running a tool, reporting a check,
and reading a safetensors checkpoint without numpy."""
import json
import struct
import subprocess
import sys


def run(cmd):
    """Runs `cmd`; exits with a FAIL line and its output when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def expect(cond, message):
    print(("PASS: " if cond else "FAIL: ") + message, flush=True)
    if not cond:
        sys.exit(1)


def read_safetensors(path):
    """name -> (dtype, shape, raw bytes) of a safetensors file."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], data[begin:end])
    return tensors


def floats(raw, dtype):
    """The values of a tensor's raw bytes (F32, F64, F16 or I64)."""
    code = {"F32": "f", "F64": "d", "I64": "q", "F16": "e"}[dtype]
    return struct.unpack(f"<{len(raw) // struct.calcsize(code)}{code}", raw)
