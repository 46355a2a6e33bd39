#!/usr/bin/env bash
# Creates bench/peers/.venv (gitignored) with the Python peers of the near-copy benchmark:
# datasketch (MinHash + MinHashLSH) and rensa. Needs network access to PyPI. Not part of CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$here/.venv"
"$here/.venv/bin/pip" install --quiet --upgrade pip
"$here/.venv/bin/pip" install --quiet datasketch rensa
"$here/.venv/bin/python" -c 'import datasketch, rensa, importlib.metadata as m; print("datasketch", m.version("datasketch"), "rensa", m.version("rensa"))'
