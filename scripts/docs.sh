#!/usr/bin/env bash
# Builds the documentation site (docs/, Sphinx) into docs/_build/html, warnings as errors.
# Its pages' code cells and the gallery (examples/gallery) run during the build, against the
# installed b2lazy and the b2lazy command beside $PY (scripts/install.sh installs both, and
# the tools of requirements-docs.txt); the API reference is generated from the package, the
# command's --help and include/b2lazy/, and the build fails when a public name has no page.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# The pages run `b2lazy ...` in shell cells: the command pip installed beside $PY comes first.
PATH="$($PY -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
export PATH
rm -rf docs/_build/html docs/reference/api docs/reference/cli docs/reference/cpp docs/auto_examples
$PY -m sphinx -W --keep-going -q -b html -d docs/_build/doctrees docs docs/_build/html
echo "the site: docs/_build/html/index.html"
