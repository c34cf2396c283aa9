#!/usr/bin/env python3
"""The layering test (CTest `layering`): each folder of src/ includes only the folders
below it, and no node-level folder sees the Array API.

    core < runtime < storage < io | ops < plan < exec < graph < expr < cli, python

core: element types and shape helpers; runtime: what nodes use while they run; storage:
b2nd and Blosc; io: the other formats and byte stores; ops: the nodes; plan: the planner;
exec: the executor; graph: the Array API's builders; expr: the expression language.
Public headers (include/b2lazy) include only each other. Files in core, runtime, storage,
io and ops may not include b2lazy/array.hpp, directly or through a public header that
includes it (they use b2lazy/vocabulary.hpp). Prints every violation; exit status 1 if any.

    python scripts/check_layers.py [ROOT]
"""

import os
import re
import sys

BELOW = {
    "core": [],
    "runtime": ["core"],
    "storage": ["core", "runtime"],
    "io": ["core", "runtime", "storage"],
    "ops": ["core", "runtime", "storage"],
    "plan": ["core", "runtime", "storage", "io", "ops"],
    "exec": ["core", "runtime", "storage", "io", "ops", "plan"],
    "graph": ["core", "runtime", "storage", "io", "ops", "plan", "exec"],
    "expr": ["core", "runtime", "storage", "io", "ops", "plan", "exec", "graph"],
}
NO_ARRAY = {"core", "runtime", "storage", "io", "ops"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def public_with_array(root):
    """Public headers that include b2lazy/array.hpp, directly or through each other."""
    inc = os.path.join(root, "include", "b2lazy")
    direct = {f"b2lazy/{h}": includes(os.path.join(inc, h)) for h in os.listdir(inc) if h.endswith(".hpp")}
    found = {"b2lazy/array.hpp"}
    grew = True
    while grew:
        grew = False
        for h, incs in direct.items():
            if h not in found and any(i in found for i in incs):
                found.add(h)
                grew = True
    return found, direct


def main(root):
    problems = []
    with_array, public = public_with_array(root)
    for h, incs in sorted(public.items()):
        for i in incs:
            if not i.startswith("b2lazy/"):
                problems.append(f'include/{h}: includes "{i}" (public headers include only b2lazy/)')
    src = os.path.join(root, "src")
    for layer in sorted(os.listdir(src)):
        if layer not in BELOW:
            problems.append(f"src/{layer}: a folder the layering does not know (add it to scripts/check_layers.py)")
            continue
        allowed = set(BELOW[layer]) | {layer}
        for dirpath, _, files in os.walk(os.path.join(src, layer)):
            for f in sorted(files):
                if not f.endswith((".hpp", ".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                for i in includes(path):
                    top = i.split("/")[0]
                    if top in BELOW and top not in allowed:
                        problems.append(f'{rel}: includes "{i}" ({layer} may include {", ".join(sorted(allowed))})')
                    if layer in NO_ARRAY and i in with_array:
                        via = "" if i == "b2lazy/array.hpp" else " (which includes b2lazy/array.hpp)"
                        problems.append(
                            f'{rel}: includes "{i}"{via}: {layer} uses b2lazy/vocabulary.hpp, not the Array API'
                        )
    for p in problems:
        print(p)
    print(f"layering: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
