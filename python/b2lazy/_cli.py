"""What the b2lazy command (cli/, C++) hands to Python: `b2lazy eval ... --scheduler ADDR`
(dask.distributed is Python) and `b2lazy info SAVED.b2lazy` (a saved expression is Python
namespace calls); the arguments and output lines are the command's."""

from __future__ import annotations

import argparse
import os
import sys
import time


def _shape(text):
    return tuple(int(v) for v in text.split(","))


def _bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().rstrip("IB") if text[-1:].upper() == "B" else text.strip().upper()
    return int(float(t[:-1]) * units[t[-1]]) if t[-1:] in units else int(float(t))


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} TiB"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["info"]:
        return info(argv[1:])
    return eval_main(argv)


def _operands(saved):
    """(what, shape, dtype) of each leaf of a saved expression's JSON: stored operands by
    URL, inline ones and constructors by their call."""
    out = []
    for node in saved.get("nodes", []):
        call = saved["calls"][node["call"]]
        if _refers_to_arrays(call):
            continue
        fn = call["fn"]
        if fn == "open":
            what = str(call["args"][0])
        elif fn in (".cframe", "asarray") or fn.startswith("."):
            what = "(inline, in the saved file)"
        else:
            what = f"({fn}(...), computed)"
        out.append((what, tuple(node["shape"]), node["dtype"]))
    for call in saved.get("calls", []):  # NumPy arrays given as arguments travel inline
        todo = [*call.get("args", []), *call.get("kwargs", {}).values()]
        while todo:
            v = todo.pop()
            if isinstance(v, list):
                todo.extend(v)
            elif isinstance(v, dict) and "ndarray" in v:
                out.append(("(inline NumPy array, in the saved file)", *_npy_header(v["ndarray"])))
            elif isinstance(v, dict) and "array" not in v:
                todo.extend(v.values())
    return out


def _npy_header(text):
    """(shape, dtype name) of a base64 .npy payload, from its header alone."""
    import base64
    import io

    import numpy as np

    f = io.BytesIO(base64.b64decode(text[:1024]))  # (the header is within its first bytes)
    major, _ = np.lib.format.read_magic(f)
    read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
    shape, _, dtype = read(f)
    return tuple(shape), np.dtype(dtype).name


def _refers_to_arrays(call):
    todo = [*call.get("args", []), *call.get("kwargs", {}).values()]
    while todo:
        v = todo.pop()
        if isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, dict):
            if "array" in v:
                return True
            todo.extend(v.values())
    return False


def info(argv):
    """`b2lazy info SAVED`: a saved expression's operands, shape, dtype and plan summary."""
    import json

    import b2lazy as bl

    if len(argv) != 1:
        print("b2lazy: error: info takes one path: b2lazy info PATH", file=sys.stderr)
        return 2
    path = argv[0]
    x = bl.open(path)  # checks the file and its operands (shapes, dtypes) first
    with open(path, "rb") as f:
        saved = json.loads(f.read().decode("utf-8"))
    p = x.plan()
    ops = _operands(saved)
    print(f"path      {os.path.abspath(path)} (saved lazy expression)")
    print(f"operands  {len(ops)}")
    for what, shape, dtype in ops:
        print(f"  {what}: shape {_fmt_shape(shape)}, {dtype}")
    print(f"shape     {_fmt_shape(x.shape)}")
    print(f"dtype     {x.dtype}")
    print(f"size      {_human(x.nbytes)} uncompressed")
    print(
        f"plan      chunks {_fmt_shape(p.chunks)}, {p.nchunks} chunks in {p.ntasks} tasks, "
        f"{len(p.stages)} stage{'' if len(p.stages) == 1 else 's'} computed once"
    )
    print(
        f"          reads {_human(sum(p.source_bytes.values()))} of sources, projected peak {_human(p.projected_peak)}"
    )
    return 0


def storage_options(items):
    """--storage-option KEY=VALUE items as storage_options (dotted keys nest, as the C++
    command reads them: cli/args.cpp), or None."""
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise SystemExit(f"b2lazy eval: --storage-option takes KEY=VALUE, got '{key}'")
        d = out
        *outer, last = key.split(".")
        for part in outer:
            d = d.setdefault(part, {})
        d[last] = {"true": True, "false": False, "True": True, "False": False}.get(value, value)
    return out or None


def eval_main(argv):
    import b2lazy as bl

    p = argparse.ArgumentParser(prog="b2lazy eval")
    p.add_argument("cmd", choices=["eval"])
    p.add_argument("expr")
    p.add_argument("operands", nargs="*")
    p.add_argument("-o", "--output", required=True)
    for opt in ("--chunks", "--blocks", "--shards"):
        p.add_argument(opt, type=_shape)
    p.add_argument("--codec")
    p.add_argument("--clevel", type=int)
    p.add_argument("--filter")
    p.add_argument("--compressor")
    p.add_argument("--threads", type=int)  # the workers' own: threads_per_worker
    p.add_argument("--max-memory", type=_bytes)
    p.add_argument("--scheduler", required=True)
    p.add_argument("--progress", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--storage-option", action="append", default=[])
    a = p.parse_args(argv)
    so = storage_options(a.storage_option)
    ops = {}
    for item in a.operands:
        name, _, path = item.partition("=")
        ops[name] = bl.open(path, storage_options=so)
    cparams = {
        k: v
        for k, v in (("codec", a.codec), ("clevel", a.clevel), ("filter", a.filter), ("compressor", a.compressor))
        if v is not None
    }
    x = bl.evaluate(a.expr, ops)
    show = a.progress or (not a.no_progress and sys.stderr.isatty())
    t0 = time.perf_counter()
    r = x.compute(
        urlpath=a.output,
        chunks=a.chunks,
        blocks=a.blocks,
        shards=a.shards,
        cparams=cparams or None,
        max_memory=a.max_memory,
        progress=True if show else None,
        scheduler=a.scheduler,
        storage_options=so,
    )
    secs = time.perf_counter() - t0
    nbytes = r.size * r.dtype.itemsize
    cbytes = r.stats.get("bytes_written", 0)
    print(
        f"wrote {a.output}: shape {_fmt_shape(r.shape)}, {r.dtype}, {_human(cbytes)} in {secs:.2f} s "
        f"(ratio {nbytes / cbytes if cbytes else 0:.2f}x) on {a.scheduler}"
    )
    return 0


def _fmt_shape(s):
    return "(" + ", ".join(str(v) for v in s) + ("," if len(s) == 1 else "") + ")"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - the command's form: one line, status 1
        print(f"b2lazy: error: {e}", file=sys.stderr)
        sys.exit(1)
