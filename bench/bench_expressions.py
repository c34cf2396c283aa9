#!/usr/bin/env python3
"""Cost of building an expression from a string (issue #6) next to building it with the
Python API and to python-blosc2's lazyexpr from a string, on tiny operands (so only the
parsing and graph building is measured, not evaluation).

    python bench/bench_expressions.py
"""

import time

import blosc2
import numpy as np

import b2lazy as bl

EXPRS = [
    ("a + b * 2", lambda a, b: a + b * 2),
    ("sin(a) ** 2 + cos(b) ** 2", lambda a, b: bl.sin(a) ** 2 + bl.cos(b) ** 2),
    ("sum(a, axis=1) + b[0]", lambda a, b: bl.sum(a, axis=1) + b[0]),
    ("matmul(a, b.T) + 1", lambda a, b: bl.matmul(a, b.T) + 1),
]


def per_call(fn, n=2000):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def main():
    x = np.ones((8, 8))
    a, b = bl.asarray(x), bl.asarray(x)
    ba, bb = blosc2.asarray(x), blosc2.asarray(x)
    print("| expression | b2lazy.evaluate µs | Python API µs | blosc2.lazyexpr µs |")
    print("|---|---|---|---|")
    for text, api in EXPRS:
        t_eval = per_call(lambda: bl.evaluate(text, a=a, b=b))
        t_api = per_call(lambda: api(a, b))
        try:
            t_b2 = f"{per_call(lambda: blosc2.lazyexpr(text, operands={'a': ba, 'b': bb})):.0f}"
        except Exception as e:  # noqa: BLE001
            t_b2 = f"error: {type(e).__name__}"
        print(f"| `{text}` | {t_eval:.0f} | {t_api:.0f} | {t_b2} |")


if __name__ == "__main__":
    main()
