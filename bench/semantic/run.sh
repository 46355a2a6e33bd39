#!/usr/bin/env bash
# Calibration and speed of the semantic tier (docs/semantic.md, docs/benchmarks.md).
#   bench/semantic/run.sh [DATA_DIR]       DATA_DIR defaults to ../shared/data beside the repo
# Builds into build-bench/, embeds the texts with all-MiniLM-L6-v2 once (bench/out/semantic/*.npy,
# needs bench/semantic/setup_venv.sh), then runs the quality and the speed benchmarks.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${1:-$root/../shared/data}"
out="$root/bench/out/semantic"
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build-bench" -j2 --target bench_semantic >/dev/null
bin="$root/build-bench/bench/semantic/bench_semantic"
mkdir -p "$out"
if [ ! -f "$out/stsb_test_s2.npy" ]; then
  if [ -x "$root/bench/semantic/.venv/bin/python" ]; then
    HF_HUB_OFFLINE=1 "$root/bench/semantic/.venv/bin/python" "$root/bench/semantic/embed_minilm.py" "$data" "$out"
  else
    echo "run.sh: no venv (bench/semantic/setup_venv.sh); lexical embedding only" >&2
  fi
fi
if [ -f "$out/stsb_test_s2.npy" ]; then
  "$bin" quality "$data" "$out"
else
  "$bin" quality "$data"
fi
"$bin" speed 100000 10000 384
