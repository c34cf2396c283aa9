#!/usr/bin/env bash
# Rewrites the sources in the project's style: the C++ by .clang-format (clang-format-14,
# as Debian 12 packages it), the Python by pyproject.toml's [tool.ruff.format].
# scripts/test.sh checks both without rewriting.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
find cli examples include python/src src tests \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print0 |
  xargs -0 clang-format-14 -i
$PY -m ruff format --quiet .
