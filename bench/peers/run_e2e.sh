#!/usr/bin/env bash
# End to end, on the same generated files: leakaudit audit --embed none against rensa and
# datasketch (JSONL in, dev x test pairs out, each pinned to one CPU), precision and recall against
# the planted pairs, time ratios, and leakaudit at --threads 2 against --threads 1.
#   bench/peers/run_e2e.sh BUILD_DIR [DEV_ROWS TEST_ROWS]
# Needs bench/peers/setup.sh first and taskset. LA_BENCH_CPU picks the one-thread CPU (default 0),
# LA_BENCH_REPS the rounds (default 2; every tool once a round; best wall and the ratios within each
# round reported), LA_DATASKETCH_FRACTION runs datasketch on the first part of each file only, its
# times scaled. Not part of CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: run_e2e.sh BUILD_DIR [DEV_ROWS TEST_ROWS]}"
ndev="${2:-50000}"
ntest="${3:-5000}"
command -v taskset >/dev/null || { echo "run_e2e.sh: taskset not found (util-linux)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# the machine, and the code the hot loops take on it: runs on two machines compare only with that
{ "$build/leakaudit" doctor | sed -n '/^CPU:/,/^$/p' | sed '/^$/d'; } || true
"$build/bench/near/near_bench" --dev "$ndev" --test "$ntest" --write "$out" > "$out/near_bench.txt"
"$here/.venv/bin/python" "$here/e2e.py" run "$out" --build "$build" \
  --cpu "${LA_BENCH_CPU:-0}" --reps "${LA_BENCH_REPS:-2}" \
  --datasketch-fraction "${LA_DATASKETCH_FRACTION:-1}"
