"""Coverage feedback for the atheris fuzzers of b2lazy.

The C++ extension is not built with libFuzzer's instrumentation, so a fuzzer makes its own
coverage signal: what an input led to (an error message or a line of a plan, its variable
parts blanked) is hashed to one of 1024 leaves of a generated, atheris-instrumented decision
tree, so that an input reaching a new outcome is kept in the corpus.
"""

from __future__ import annotations

import re
import zlib

import atheris


def _make_feedback(depth=10):
    """A function of an int whose path through nested ifs is its low `depth` bits: a
    distinct coverage edge per value, for libFuzzer (atheris instruments it)."""
    lines = ["def feedback(h):"]

    def tree(level, indent):
        if level == depth:
            lines.append(" " * indent + "return " + str(level))
            return
        lines.append(" " * indent + f"if h & {1 << level}:")
        tree(level + 1, indent + 1)
        lines.append(" " * indent + "else:")
        tree(level + 1, indent + 1)

    tree(0, 1)
    scope = {}
    exec(compile("\n".join(lines), "<feedback>", "exec"), scope)  # noqa: S102 (generated code, no input)
    return atheris.instrument_func(scope["feedback"])


_feedback_tree = _make_feedback()
_VARIABLE = re.compile(r"'[^']*'|\"[^\"]*\"|0x[0-9a-fA-F]+|\d+(\.\d+)?(e[-+]?\d+)?")


def feedback(outcome):
    """Coverage for an outcome (an error message or an explain() line), numbers and quoted
    parts blanked."""
    _feedback_tree(zlib.crc32(_VARIABLE.sub("_", outcome).encode()))


def fuzz(test_one_input, work, write_seeds, write_dictionary, max_len, custom_mutator=None):
    """Runs atheris on sys.argv's flags. Without inputs to replay it starts from a fresh
    corpus (write_seeds(dir)) and dictionary (write_dictionary(path)) in `work`, with
    b2lazy's default flags; flags given on the command line win over the defaults. A
    `custom_mutator` (data, max_size, seed) -> bytes makes the mutations structure-aware."""
    import os
    import sys

    args = sys.argv[1:]
    if not [a for a in args if not a.startswith("-")]:
        corpus = os.path.join(work, "corpus")
        os.makedirs(corpus)
        write_seeds(corpus)
        dict_path = os.path.join(work, "fuzz.dict")
        write_dictionary(dict_path)
        defaults = {
            "-max_total_time": "60",
            "-timeout": "20",
            "-rss_limit_mb": "3072",
            "-max_len": str(max_len),
            "-seed": "1",
            "-dict": dict_path,
            "-artifact_prefix": work + "/",
            "-print_final_stats": "1",
        }
        given = {a.split("=", 1)[0] for a in args}
        args = [f"{k}={v}" for k, v in defaults.items() if k not in given] + args + [corpus]
    atheris.Setup([sys.argv[0]] + args, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


# What reading a damaged file may raise (documented, naming the file); anything else is a finding.
FILE_ERRORS = (OSError, TypeError, ValueError)


def file_error(err, path, what="file"):
    """Feedback for a documented error while reading `path`: an OSError must name it."""
    msg = str(err)
    if isinstance(err, OSError):
        assert path in msg, f"an OSError that does not name the {what}: {msg!r}"
    feedback(type(err).__name__ + ": " + msg.replace(path, "PATH"))


def read_every_way(a, max_items):
    """`a + 1` evaluated into memory and compressed (the two must agree; a big array on a
    corner), and a part of `a` read."""
    if a.size > max_items:
        a = a[(slice(0, 2),) * a.ndim]
    e = a + 1
    out = e.to_numpy()
    assert out.shape == e.shape and out.dtype == e.dtype, (out.shape, e.shape, out.dtype, e.dtype)
    stored = e.compute().to_numpy()
    assert stored.tobytes() == out.tobytes(), "compute() and to_numpy() read different values"
    if a.ndim:
        a[(slice(1, 3),) * a.ndim].to_numpy()
